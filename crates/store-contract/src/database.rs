//! A database of its own for one test: a PostgreSQL schema on the server
//! `TEST_DATABASE_URL` names (default `postgres://postgres@127.0.0.1:5432/postgres`), or a
//! SQLite file in the temporary directory; removed when dropped. Schemas that crashed runs
//! left behind are swept once per process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// The PostgreSQL server tests make their schemas on.
pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

static SEQUENCE: AtomicU32 = AtomicU32::new(0);
static SWEPT: std::sync::Once = std::sync::Once::new();

/// A database of its own for one test, removed when dropped.
#[derive(Debug)]
pub struct Database {
    /// What `DATABASE_URL` would say to reach it.
    pub url: String,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    Nothing,
    File(PathBuf),
    Schema(String),
}

/// An administrative PostgreSQL session, for tests that need to interfere from outside.
pub async fn admin_session() -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

async fn admin_execute(sql: &str) -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await?;
    drop(client);
    let _ = driver.await;
    Ok(())
}

/// Drops the schemas that crashed runs left behind (their process is gone).
async fn sweep_leftover_schemas() -> anyhow::Result<()> {
    let (client, connection) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls).await?;
    let driver = tokio::spawn(connection);
    let rows = client
        .query("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'billable\\_test\\_%'", &[])
        .await?;
    for row in rows {
        let name: String = row.get(0);
        let pid = name.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| pid != std::process::id() && !PathBuf::from(format!("/proc/{pid}")).exists())
        {
            client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE")).await?;
        }
    }
    drop(client);
    let _ = driver.await;
    Ok(())
}

/// A name no other test's database has: the process, a sequence, and a random part.
fn fresh_tag() -> String {
    let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    format!("{}_{n}_{}", std::process::id(), &uuid::Uuid::new_v4().simple().to_string()[..8])
}

impl Database {
    /// Nothing to make: the in-process store (`memory:`).
    pub fn memory() -> Self {
        Self { url: "memory:".to_owned(), cleanup: Cleanup::Nothing }
    }

    /// A SQLite file of its own in the temporary directory.
    pub fn sqlite() -> Self {
        Self::sqlite_at(std::env::temp_dir().join(format!("billable_test_{}.db", fresh_tag())))
    }

    /// A SQLite database at `path`, its files removed when dropped.
    pub fn sqlite_at(path: PathBuf) -> Self {
        Self { url: format!("sqlite://{}", path.display()), cleanup: Cleanup::File(path) }
    }

    /// A schema of its own on the test PostgreSQL, which the URL makes its search path.
    pub async fn postgres() -> Self {
        if !SWEPT.is_completed() {
            let _ = sweep_leftover_schemas().await;
            SWEPT.call_once(|| ());
        }
        let schema = format!("billable_test_{}", fresh_tag());
        admin_execute(&format!("CREATE SCHEMA \"{schema}\""))
            .await
            .unwrap_or_else(|e| panic!("PostgreSQL at {} is needed: {e:#}", admin_url()));
        let base = admin_url();
        let join = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{join}options=-c%20search_path%3D{schema}");
        Self { url, cleanup: Cleanup::Schema(schema) }
    }

    /// The PostgreSQL schema holding this database's tables, if it is one.
    pub fn schema(&self) -> Option<&str> {
        match &self.cleanup {
            Cleanup::Schema(schema) => Some(schema),
            _ => None,
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        match &self.cleanup {
            Cleanup::Nothing => {}
            Cleanup::File(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
                }
            }
            Cleanup::Schema(schema) => {
                // Drop cannot await; a short-lived runtime on its own thread can.
                let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
                let _ = std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
                    if let Ok(runtime) = runtime {
                        let _ = runtime.block_on(admin_execute(&sql));
                    }
                })
                .join();
            }
        }
    }
}
