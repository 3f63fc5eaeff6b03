use std::time::Duration;

use anyhow::Context;
use deadpool::managed::{Manager, Metrics, Object, Pool, PoolError as DeadpoolError, RecycleResult};
use diesel::{Connection, SqliteConnection};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, PoolError, PoolableConnection, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use kernel::{StoreError, StoreHealth, StoreStatus};

use crate::runtime_pool::RuntimePool;
use crate::tls::PgTarget;

const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations/sqlite");

/// The first key of the advisory lock PostgreSQL migrations run under ("bill" in ASCII);
/// the second is the schema's.
const MIGRATION_LOCK: i32 = 0x6269_6c6c;

type SqliteAsync = SyncConnectionWrapper<SqliteConnection>;

pub(crate) enum Pools {
    Postgres(RuntimePool<Recycler<AsyncPgConnection>>),
    Sqlite(Pool<Recycler<SqliteAsync>>),
}

/// A pooled connection idle longer than this is asked `SELECT 1` before it is handed out.
const VERIFY_IDLE_AFTER: Duration = Duration::from_secs(5);

/// Hands pooled connections out again. Diesel's manager drops a connection that is
/// broken, closed by the server or left inside a transaction (a cancelled request); it
/// would also ask every connection `SELECT 1` on every checkout, a round trip as costly
/// as the query the request came for. A connection handed out within the last
/// [`VERIFY_IDLE_AFTER`] is known to work; only one idle longer is asked first, so a
/// connection the network lost while it sat unused is replaced instead of failing a
/// request.
pub(crate) struct Recycler<C: PoolableConnection + 'static> {
    manager: AsyncDieselConnectionManager<C>,
}

impl<C> Recycler<C>
where
    C: PoolableConnection + 'static,
{
    fn new(location: &str, mut config: ManagerConfig<C>) -> Self {
        config.recycling_method = RecyclingMethod::Fast;
        Self { manager: AsyncDieselConnectionManager::new_with_config(location, config) }
    }
}

impl<C> Manager for Recycler<C>
where
    C: PoolableConnection + SimpleAsyncConnection + Send + 'static,
    AsyncDieselConnectionManager<C>: Manager<Type = C, Error = PoolError>,
{
    type Type = C;
    type Error = PoolError;

    async fn create(&self) -> Result<C, PoolError> {
        self.manager.create().await
    }

    async fn recycle(&self, conn: &mut C, metrics: &Metrics) -> RecycleResult<PoolError> {
        self.manager.recycle(conn, metrics).await?;
        if metrics.last_used() > VERIFY_IDLE_AFTER {
            conn.batch_execute("SELECT 1").await.map_err(PoolError::QueryError)?;
        }
        Ok(())
    }
}

/// Which database a URL selects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// `postgres://…` or `postgresql://…`; `sslmode` and `sslrootcert` set TLS up
    /// ([`PgTarget`](crate::PgTarget)), the rest goes to the driver as is.
    Postgres(String),
    /// `sqlite://PATH`, `sqlite:PATH` or `sqlite::memory:`; holds the file path.
    Sqlite(String),
}

impl Backend {
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(Self::Postgres(url.to_owned()));
        }
        // Only the scheme is quoted: the rest may hold a password.
        let scheme = url.split_once(':').map_or("no scheme", |(scheme, _)| scheme);
        let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")).with_context(|| {
            format!(
                "DATABASE_URL must start with postgres://, postgresql://, sqlite:// or sqlite:, or be memory:; \
                 its scheme is {scheme:?}"
            )
        })?;
        anyhow::ensure!(!path.is_empty(), "DATABASE_URL names no SQLite file");
        Ok(Self::Sqlite(path.to_owned()))
    }

    fn is_sqlite_memory(&self) -> bool {
        matches!(self, Self::Sqlite(path) if path == ":memory:")
    }
}

/// Pool sizes and timeouts.
#[derive(Debug, Clone, Copy)]
pub struct PoolSettings {
    /// Most connections open at once. SQLite allows one writer at a time, so its pool
    /// is best kept small.
    pub max_size: usize,
    /// How long a request waits for a connection before the store reports itself
    /// unavailable (HTTP 503). Also SQLite's busy timeout.
    pub wait_timeout: Duration,
    /// PostgreSQL `statement_timeout`.
    pub statement_timeout: Duration,
    /// How many tokio runtimes use the store: a server has its main runtime and one per
    /// HTTP worker. PostgreSQL's pool is split into one part per runtime (at most one per
    /// connection), so that each runtime drives the connections it uses; see
    /// `runtime_pool`. SQLite connections have no driver task and stay in one pool.
    pub runtimes: usize,
    /// When SQLite's commits reach the disk.
    pub sqlite_sync: SqliteSync,
}

/// SQLite's `synchronous` setting, in WAL mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SqliteSync {
    /// Every commit is on disk before it returns: an acknowledged write survives a power
    /// cut. The default.
    #[default]
    Full,
    /// Commits reach the disk at checkpoints: a crash of the process loses nothing, a
    /// power cut may lose the last commits. Faster writes.
    Normal,
}

impl SqliteSync {
    fn pragma(self) -> &'static str {
        match self {
            Self::Full => "FULL",
            Self::Normal => "NORMAL",
        }
    }
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_size: 16,
            wait_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(30),
            runtimes: 1,
            sqlite_sync: SqliteSync::Full,
        }
    }
}

/// The diesel store: implements every storage port over one pool.
pub struct SqlStore {
    pub(crate) pools: Pools,
    backend: Backend,
    /// How to reach PostgreSQL (TLS included); `None` on SQLite.
    pub(crate) postgres: Option<PgTarget>,
    max_size: usize,
    /// Words the resources of the events writes record.
    pub(crate) describe: std::sync::Arc<dyn notify::Describe>,
    /// Rung after each commit that records an event or queues a job, so that a job runner
    /// in this process looks at once.
    pub(crate) signal: std::sync::Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.backend {
            Backend::Postgres(_) => "postgres",
            Backend::Sqlite(_) => "sqlite",
        };
        f.debug_struct("SqlStore")
            .field("backend", &kind)
            .field("max_size", &self.max_size)
            .finish_non_exhaustive()
    }
}

impl SqlStore {
    /// Builds the pool. Connections open lazily; call [`SqlStore::migrate`] first to
    /// bring the schema up to date (and to learn early that the database is reachable).
    pub fn connect(backend: Backend, settings: PoolSettings) -> anyhow::Result<Self> {
        // `:memory:` is one database per connection: a pool of one keeps it one database.
        let max_size = if backend.is_sqlite_memory() { 1 } else { settings.max_size.max(1) };
        let mut postgres = None;
        let pools = match &backend {
            Backend::Postgres(url) => {
                let timeout_ms = settings.statement_timeout.as_millis();
                let target = PgTarget::from_url(url)?;
                postgres = Some(target.clone());
                Pools::Postgres(RuntimePool::new(max_size, settings.runtimes, |size| {
                    let mut config = ManagerConfig::<AsyncPgConnection>::default();
                    let target = target.clone();
                    config.custom_setup = Box::new(move |_| {
                        let target = target.clone();
                        Box::pin(async move {
                            let mut conn = target.connect().await?;
                            conn.batch_execute(&format!("SET statement_timeout = {timeout_ms}"))
                                .await
                                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                            Ok(conn)
                        })
                    });
                    build_pool(Recycler::new(url, config), size, settings.wait_timeout)
                })?)
            }
            Backend::Sqlite(path) => {
                let busy_ms = settings.wait_timeout.as_millis();
                let sync = settings.sqlite_sync;
                let mut config = ManagerConfig::<SqliteAsync>::default();
                config.custom_setup = Box::new(move |path| {
                    let path = path.to_owned();
                    Box::pin(async move {
                        let mut conn = SqliteAsync::establish(&path).await?;
                        conn.batch_execute(&sqlite_pragmas(busy_ms, sync))
                            .await
                            .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                        Ok(conn)
                    })
                });
                Pools::Sqlite(build_pool(Recycler::new(path, config), max_size, settings.wait_timeout)?)
            }
        };
        Ok(Self {
            pools,
            backend,
            postgres,
            max_size,
            describe: std::sync::Arc::new(notify::BareIds),
            signal: std::sync::Arc::default(),
        })
    }

    /// The same store, recording events with the resources worded by `describe` (the REST
    /// adapter's bodies); by default an event's data is only its resource's id.
    #[must_use]
    pub fn describing(self, describe: std::sync::Arc<dyn notify::Describe>) -> Self {
        Self { describe, ..self }
    }

    /// Rung after each commit that recorded an event or queued a job.
    pub fn job_signal(&self) -> std::sync::Arc<tokio::sync::Notify> {
        self.signal.clone()
    }

    /// `result`, ringing the job signal when it is a success.
    pub(crate) fn signalling<T, E>(&self, result: Result<T, E>) -> Result<T, E> {
        if result.is_ok() {
            self.signal.notify_one();
        }
        result
    }

    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// Runs the embedded migrations that have not run yet.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pools {
            Pools::Postgres(_) => {
                let Some(target) = &self.postgres else { unreachable!() };
                let conn = target.connect().await.context("connecting to PostgreSQL")?;
                // The migration harness is synchronous; the wrapper drives the async
                // connection from a blocking thread.
                tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
                    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
                    // Replicas starting together: one migrates, the others wait here and
                    // then find nothing left to run. The lock is the schema's, so that
                    // databases in other schemas migrate side by side.
                    let lock = |verb: &str| {
                        format!("SELECT pg_advisory_{verb}({MIGRATION_LOCK}, hashtext(current_schema()))")
                    };
                    diesel::connection::SimpleConnection::batch_execute(&mut conn, &lock("lock"))
                        .context("waiting for the migration lock")?;
                    let migrated = conn
                        .run_pending_migrations(POSTGRES_MIGRATIONS)
                        .map(|applied| log_applied(&applied))
                        .map_err(|e| anyhow::anyhow!(e))
                        .context("running PostgreSQL migrations");
                    // Ending the session releases the lock too, should this fail.
                    if let Err(error) = diesel::connection::SimpleConnection::batch_execute(&mut conn, &lock("unlock")) {
                        tracing::warn!(%error, "releasing the migration lock; closing its session releases it");
                    }
                    migrated
                })
                .await?
            }
            Pools::Sqlite(pool) if self.backend.is_sqlite_memory() => {
                // The pool's single connection is the database: migrate through it.
                let mut pooled = checkout(pool.get()).await?;
                pooled
                    .spawn_blocking(|conn| {
                        conn.run_pending_migrations(SQLITE_MIGRATIONS)
                            .map(|applied| log_applied(&applied))
                            .map_err(diesel::result::Error::QueryBuilderError)
                    })
                    .await
                    .context("running SQLite migrations")
            }
            Pools::Sqlite(_) => {
                let Backend::Sqlite(path) = self.backend.clone() else { unreachable!() };
                tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
                    let mut conn = SqliteConnection::establish(&path)
                        .with_context(|| format!("opening SQLite database {path}"))?;
                    diesel::connection::SimpleConnection::batch_execute(
                        &mut conn,
                        &sqlite_pragmas(5000, SqliteSync::Full),
                    )?;
                    let applied = conn
                        .run_pending_migrations(SQLITE_MIGRATIONS)
                        .map_err(|e| anyhow::anyhow!(e))
                        .context("running SQLite migrations")?;
                    log_applied(&applied);
                    Ok(())
                })
                .await?
            }
        }
    }
}

/// Says which migrations a start applied, if any: the versions, oldest first.
fn log_applied(applied: &[diesel::migration::MigrationVersion<'_>]) {
    if let (Some(first), Some(last)) = (applied.first(), applied.last()) {
        tracing::info!(count = applied.len(), first = %first, last = %last, "applied migrations");
    }
}

fn sqlite_pragmas(busy_timeout_ms: u128, sync: SqliteSync) -> String {
    format!(
        "PRAGMA foreign_keys = ON; PRAGMA busy_timeout = {busy_timeout_ms}; \
         PRAGMA journal_mode = WAL; PRAGMA synchronous = {};",
        sync.pragma()
    )
}

fn build_pool<M: Manager>(manager: M, max_size: usize, wait_timeout: Duration) -> anyhow::Result<Pool<M>> {
    Pool::builder(manager)
        .max_size(max_size)
        .wait_timeout(Some(wait_timeout))
        .create_timeout(Some(wait_timeout))
        .runtime(deadpool::Runtime::Tokio1)
        .build()
        .context("building the connection pool")
}

/// The pooled connection `get` hands out, or `Unavailable` when none can be had within
/// the wait timeout.
pub(crate) async fn checkout<M>(
    get: impl Future<Output = Result<Object<M>, DeadpoolError<M::Error>>>,
) -> Result<Object<M>, StoreError>
where
    M: Manager,
    M::Error: std::error::Error + Send + Sync + 'static,
{
    get.await.map_err(|error| StoreError::Unavailable(anyhow::Error::new(error)))
}

#[async_trait::async_trait]
impl StoreHealth for SqlStore {
    async fn ping(&self) -> Result<(), StoreError> {
        use crate::OrStoreError;
        match &self.pools {
            Pools::Postgres(pool) => checkout(pool.get()).await?.batch_execute("SELECT 1").await.or_store(),
            Pools::Sqlite(pool) => checkout(pool.get()).await?.batch_execute("SELECT 1").await.or_store(),
        }
    }

    fn status(&self) -> StoreStatus {
        let status = match &self.pools {
            Pools::Postgres(pool) => pool.status(),
            Pools::Sqlite(pool) => pool.status(),
        };
        StoreStatus {
            max_size: status.max_size,
            size: status.size,
            available: status.available,
            waiting: status.waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use diesel::connection::SimpleConnection;
    use diesel::{Connection, RunQueryDsl, SqliteConnection, sql_query};
    use diesel_migrations::MigrationHarness;

    use super::{SQLITE_MIGRATIONS, SqliteSync, sqlite_pragmas};

    const TEAM: &str = "00000000-0000-7000-8000-000000000001";
    const CLIENT: &str = "00000000-0000-7000-8000-000000000002";

    fn count(conn: &mut SqliteConnection, sql: &str) -> i64 {
        #[derive(diesel::QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        sql_query(sql).get_result::<Count>(conn).unwrap().n
    }

    #[test]
    fn sqlite_connections_sync_every_commit_unless_told_otherwise() {
        #[derive(diesel::QueryableByName)]
        struct Synchronous {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            synchronous: i32,
        }
        let path = std::env::temp_dir().join(format!("billable_sync_{}.db", uuid::Uuid::now_v7()));
        // SQLite's codes: NORMAL is 1, FULL is 2.
        for (sync, code) in [(SqliteSync::Full, 2), (SqliteSync::Normal, 1), (SqliteSync::default(), 2)] {
            let mut conn = SqliteConnection::establish(&path.display().to_string()).unwrap();
            conn.batch_execute(&sqlite_pragmas(5000, sync)).unwrap();
            let read = sql_query("PRAGMA synchronous").get_result::<Synchronous>(&mut conn).unwrap();
            assert_eq!(read.synchronous, code, "{sync:?}");
        }
        for file in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{file}", path.display()));
        }
    }

    /// The rebuild of `clients` (SQLite cannot drop a CHECK) keeps every row and the
    /// invoices that refer to them, both ways, and foreign keys still hold afterwards.
    #[test]
    fn rebuilding_clients_for_empty_addresses_keeps_clients_and_their_invoices() {
        let path = std::env::temp_dir().join(format!("billable_migration_{}.db", uuid::Uuid::now_v7()));
        let mut conn = SqliteConnection::establish(&path.display().to_string()).unwrap();
        conn.batch_execute(&sqlite_pragmas(5000, SqliteSync::Full)).unwrap();
        conn.run_pending_migrations(SQLITE_MIGRATIONS).unwrap();
        // Back to just before the rebuild (diesel writes versions without dashes).
        let rebuild = "20261124000007";
        assert!(conn.applied_migrations().unwrap().iter().any(|v| v.to_string() == rebuild));
        while conn.applied_migrations().unwrap().iter().any(|v| v.to_string() == rebuild) {
            conn.revert_last_migration(SQLITE_MIGRATIONS).unwrap();
        }
        let now = "2026-11-20T09:30:00.000Z";
        conn.batch_execute(&format!(
            "INSERT INTO teams VALUES ('{TEAM}', 'Acme', 'EUR', '{now}');
             INSERT INTO sender_addresses VALUES ('{TEAM}', '{TEAM}', 1, 'Acme', '', '', '', '', NULL, '', '{now}', '{now}');
             INSERT INTO clients VALUES ('{TEAM}', '{CLIENT}', 'Globex', 'ap@globex.example', '', '', '1 Main St',
                 '', '', '1000', '{now}', '{now}', 'ap@globex.example');
             INSERT INTO invoices VALUES ('{TEAM}', '{TEAM}', 1, NULL, '{now}', NULL, 'PENDING', 'EUR', '0', '0',
                 '1', '1', '{CLIENT}', '{TEAM}', '{now}', '{now}');"
        ))
        .unwrap();
        let empty_address = format!(
            "INSERT INTO clients (team_id, id, name, email, phone, vat_number, line1, line2, line3, postal_code,
                 created_at, updated_at, email_key)
             VALUES ('{TEAM}', '00000000-0000-7000-8000-000000000003', 'Bare', 'b@x.example',
                 '', '', '', '', '', '', '{now}', '{now}', 'b@x.example')"
        );
        assert!(conn.batch_execute(&empty_address).is_err(), "before: an empty line1 is refused");

        conn.run_pending_migrations(SQLITE_MIGRATIONS).unwrap();
        conn.batch_execute(&empty_address).unwrap();
        assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM clients"), 2);
        assert_eq!(
            count(&mut conn, "SELECT count(*) AS n FROM invoices i JOIN clients c ON c.id = i.client_id"),
            1
        );
        assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM pragma_foreign_key_check"), 0);
        assert_eq!(count(&mut conn, "SELECT foreign_keys AS n FROM pragma_foreign_keys"), 1);
        let orphaning = format!("DELETE FROM clients WHERE id = '{CLIENT}'");
        assert!(conn.batch_execute(&orphaning).is_err(), "a client with an invoice stays");

        conn.batch_execute("DELETE FROM clients WHERE name = 'Bare'").unwrap();
        while conn.applied_migrations().unwrap().iter().any(|v| v.to_string() == rebuild) {
            conn.revert_last_migration(SQLITE_MIGRATIONS).unwrap();
        }
        assert_eq!(
            count(&mut conn, "SELECT count(*) AS n FROM invoices i JOIN clients c ON c.id = i.client_id"),
            1
        );
        assert_eq!(count(&mut conn, "SELECT count(*) AS n FROM pragma_foreign_key_check"), 0);
        drop(conn);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
