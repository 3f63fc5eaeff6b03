//! Opening the SQL store on a database of a test's own, as the contract suite takes it.

#![expect(clippy::unwrap_used, reason = "a failed setup fails the test")]

use std::sync::Arc;
use std::time::Duration;

use store_contract::{Database, Ports};
use store_sql::{Backend, PoolSettings, SqlStore, SqliteSync};
use triggers::ConversationTurns;

/// The store on `database`, migrated, and its ports: the conversation lines are shared
/// through PostgreSQL, and in the process on SQLite (which serves one process).
pub(crate) async fn open(database: Database) -> (Arc<SqlStore>, Ports) {
    let (store, ports) = open_url(&database.url).await;
    (store, ports.keeping(database))
}

/// The store on the database at `url`, migrated, and its ports; the caller keeps the
/// database.
pub(crate) async fn open_url(url: &str) -> (Arc<SqlStore>, Ports) {
    let backend = Backend::from_url(url).unwrap();
    let shared_lines = matches!(backend, Backend::Postgres(_));
    let settings = PoolSettings {
        max_size: 4,
        wait_timeout: Duration::from_secs(5),
        statement_timeout: Duration::from_secs(30),
        runtimes: 2,
        sqlite_sync: SqliteSync::Full,
    };
    let store = Arc::new(SqlStore::connect(backend, settings).unwrap());
    store.migrate().await.unwrap();
    let lines = store.clone();
    let turns = move |lease| -> Arc<dyn ConversationTurns> {
        if shared_lines {
            store_sql::SharedTurns::start(lines.clone(), lease).unwrap()
        } else {
            Arc::new(agent::LocalTurns::new(lines.clone()))
        }
    };
    (store.clone(), Ports::of(store, Arc::new(turns)))
}
