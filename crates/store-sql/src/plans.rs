//! The plans PostgreSQL picks for the listings' queries, as `EXPLAIN` prints them, on
//! fresh statistics: for operators checking that a filter is served by an index, and for
//! the test that keeps each filter so.

use accounts::TeamId;
use billing::{InvoiceFilter, InvoiceStatus};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;
use tracking::EntryFilter;

use crate::invoices::{PendingTaken, anywhere, filtered_invoices, lower, status_terms};
use crate::pool::Pools;
use crate::time_tracking::{filtered_entries, listed_entries};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore};

/// `EXPLAIN (COSTS OFF)` of a query, with the query's own bind parameters.
struct Explain<Q>(Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Explain<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("EXPLAIN (COSTS OFF) ");
        self.0.walk_ast(out.reborrow())
    }
}

impl<Q> QueryId for Explain<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q> Query for Explain<Q> {
    type SqlType = diesel::sql_types::Text;
}

/// Sequential scans priced out, as on a table too large to read whole: the plan then
/// shows which index the query can use. Only for the plan's transaction.
const AS_IF_LARGE: &str = "SET LOCAL enable_seqscan = off";

/// Runs `EXPLAIN` of `$query` on PostgreSQL, after `$analyze` brings the statistics of
/// the tables it reads up to date, inside a transaction that prices sequential scans out;
/// `None` on SQLite.
macro_rules! plan {
    ($store:expr, $analyze:expr, |$conn:ident| $query:expr) => {{
        #[allow(unused_imports, reason = "one expansion of the macro uses the schema, another not")]
        use crate::schema::pg::*;
        let Pools::Postgres(pool) = &$store.pools else { return Ok(None) };
        let mut pooled = crate::pool::checkout(pool.get()).await?;
        let $conn = &mut *pooled;
        let lines: Vec<String> = $conn
            .transaction(async |$conn| {
                diesel::sql_query($analyze).execute($conn).await?;
                diesel::sql_query(AS_IF_LARGE).execute($conn).await?;
                Explain($query).load($conn).await
            })
            .await
            .or_store()?;
        Ok(Some(lines.join("\n")))
    }};
}

impl SqlStore {
    /// PostgreSQL's plan for the invoice listing of `filter`; `None` on SQLite.
    pub async fn invoice_listing_plan(
        &self,
        team: TeamId,
        filter: &InvoiceFilter,
    ) -> Result<Option<String>, StoreError> {
        plan!(self, "ANALYZE invoices, clients", |conn| filtered_invoices!(team, filter))
    }

    /// PostgreSQL's plan for the time-entry listing of `filter`; `None` on SQLite.
    pub async fn entry_listing_plan(
        &self,
        team: TeamId,
        filter: &EntryFilter,
    ) -> Result<Option<String>, StoreError> {
        plan!(self, "ANALYZE time_entries, time_entry_tags", |conn| listed_entries!(team, filter))
    }
}
