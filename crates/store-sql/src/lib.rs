//! Diesel adapter of every storage port, on PostgreSQL and on SQLite.
//!
//! **One query body, two backends.** `db_run!` expands a query body once per backend,
//! each time with that backend's `schema` module in scope (`schema::pg`,
//! `schema::sqlite`): the tables and columns share names, their SQL types differ
//! (`uuid`/`TEXT`, `timestamptz`/`TEXT`), and `types::DbUuid` maps one Rust type onto
//! both. Diesel type-checks each expansion against its own backend, so a query that does
//! not fit one of them fails to compile.
//!
//! Diesel's errors never cross the ports: unique and foreign-key violations become the
//! domain's errors, an exhausted pool becomes [`StoreError::Unavailable`](kernel::StoreError::Unavailable).

// `db_run!` brings each backend's tables into scope for a body that may use none of them:
// an expectation could not hold in every expansion, so there it allows `unused_imports`.
#![expect(clippy::allow_attributes, reason = "db_run! allows unused_imports; see above")]

mod accounts;
mod agent;
pub mod backup;
mod banking;
mod cards;
mod chasing;
mod clients;
mod deliveries;
mod errors;
mod idempotency;
mod invoice_rows;
mod invoices;
mod ledger;
mod numbering;
mod plans;
mod pool;
mod quotes;
mod recurring_invoices;
mod runtime_pool;
mod schema;
mod time_tracking;
mod tls;
mod turns;
mod types;

pub use pool::{Backend, PoolSettings, SqlStore, SqliteSync};
pub use time_tracking::report::{Dialect, report_sql};
pub use tls::{PgTarget, SslMode};
pub use turns::SharedTurns;

pub(crate) use errors::{OrStoreError, TxError, corrupt, store_error, violation};

/// Runs `$body` with `$conn` bound to a pooled connection of whichever backend the store
/// uses, and that backend's tables in scope. The second form takes one body per backend,
/// for the statements where each backend has its own best way.
macro_rules! db_run {
    ($store:expr, |$conn:ident| $body:expr) => {
        $crate::db_run!($store, postgres: |$conn| $body, sqlite: |$conn| $body)
    };
    ($store:expr, postgres: |$pg:ident| $pg_body:expr, sqlite: |$lite:ident| $lite_body:expr) => {{
        match &$store.pools {
            $crate::pool::Pools::Postgres(pool) => {
                #[allow(unused_imports, reason = "one expansion of the macro uses the schema, another not")]
                use $crate::schema::pg::*;
                let mut pooled = $crate::pool::checkout(pool.get()).await?;
                let $pg = &mut *pooled;
                $pg_body
            }
            $crate::pool::Pools::Sqlite(pool) => {
                #[allow(unused_imports, reason = "one expansion of the macro uses the schema, another not")]
                use $crate::schema::sqlite::*;
                let mut pooled = $crate::pool::checkout(pool.get()).await?;
                let $lite = &mut *pooled;
                $lite_body
            }
        }
    }};
}
pub(crate) use db_run;

/// Writes `$values` to the row `$row` (a filter of `$table`, whose columns `id` and
/// `updated_at` it names) if that row was last changed at `$read_at`, in one transaction;
/// evaluates to the `kernel::Replaced` outcome. What a read-change-write of a resource uses
/// so that a change made meanwhile is never undone unseen.
macro_rules! replace_if_unchanged {
    ($store:expr, $table:ident, $row:expr, $read_at:expr, $values:expr) => {
        $crate::db_run!($store, |conn| conn
            .transaction(async |conn| {
                let updated = diesel::update($row.filter($table::updated_at.eq($read_at)))
                    .set($values)
                    .execute(conn)
                    .await?;
                if updated == 1 {
                    return Ok::<_, diesel::result::Error>(kernel::Replaced::Written);
                }
                let exists: Option<$crate::types::DbUuid> =
                    $row.select($table::id).first(conn).await.optional()?;
                Ok(if exists.is_some() { kernel::Replaced::Stale } else { kernel::Replaced::Missing })
            })
            .await
            .or_store()?)
    };
}
pub(crate) use replace_if_unchanged;
