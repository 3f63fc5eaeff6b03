//! The repository trigger's delivery log and durable queue over diesel.
//!
//! An accepted delivery is one log row that also holds the run's input and progress, plus
//! a dedupe record, written in one transaction. The dedupe table's unique keys (delivery
//! id, body hash) settle a race between two copies of a delivery: the second to insert
//! inserts nothing, and finds itself a duplicate.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Id, StoreError};
use triggers::{
    Acceptance, AttemptResult, ClaimedDelivery, ConversationKey, DeliveryEntry, DeliveryEntryId,
    DeliveryFilter, DeliveryId, DeliveryProgress, DeliveryQueue, DeliveryState, NewDelivery, PendingDelivery,
    Verdict,
};

use crate::pool::{Pools, checkout};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

#[derive(Queryable)]
struct EntryRow {
    team_id: DbUuid,
    id: DbUuid,
    delivery_id: String,
    event: String,
    action: Option<String>,
    repository: Option<String>,
    conversation_key: Option<String>,
    verdict: String,
    note: Option<String>,
    body_sha256: String,
    received_at: DateTime<Utc>,
    summary: String,
    state: Option<String>,
    attempts: i32,
    run_id: Option<DbUuid>,
    error: Option<String>,
    finished_at: Option<DateTime<Utc>>,
}

fn conversation(key: Option<String>) -> Result<Option<ConversationKey>, StoreError> {
    key.map(|key| ConversationKey::parse(&key).map_err(|e| corrupt("conversation key", e))).transpose()
}

fn state(text: &str) -> Result<DeliveryState, StoreError> {
    DeliveryState::parse(text).ok_or_else(|| corrupt("delivery state", text))
}

fn attempts(count: i32) -> Result<u32, StoreError> {
    u32::try_from(count).map_err(|e| corrupt("delivery attempts", e))
}

impl TryFrom<EntryRow> for DeliveryEntry {
    type Error = StoreError;
    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        let progress = match row.state {
            Some(text) => Some(DeliveryProgress {
                state: state(&text)?,
                attempts: attempts(row.attempts)?,
                run: row.run_id.map(DbUuid::into_id),
                error: row.error,
                finished_at: row.finished_at,
            }),
            None => None,
        };
        Ok(DeliveryEntry {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            delivery: DeliveryId::parse(&row.delivery_id).map_err(|e| corrupt("delivery id", e))?,
            event: row.event,
            action: row.action,
            repository: row.repository,
            conversation: conversation(row.conversation_key)?,
            summary: row.summary,
            verdict: Verdict::parse(&row.verdict).ok_or_else(|| corrupt("delivery verdict", &row.verdict))?,
            note: row.note,
            body_sha256: row.body_sha256,
            received_at: row.received_at,
            progress,
        })
    }
}

/// The columns of a log row every verdict has.
macro_rules! entry_values {
    ($entry:expr, $verdict:expr, $note:expr) => {
        (
            agent_deliveries::team_id.eq(DbUuid::of($entry.team_id)),
            agent_deliveries::id.eq(DbUuid::of($entry.id)),
            agent_deliveries::delivery_id.eq($entry.delivery.as_str()),
            agent_deliveries::event.eq(&$entry.event),
            agent_deliveries::action.eq($entry.action.as_deref()),
            agent_deliveries::repository.eq($entry.repository.as_deref()),
            agent_deliveries::conversation_key.eq($entry.conversation.as_ref().map(ConversationKey::as_str)),
            agent_deliveries::verdict.eq($verdict.as_str()),
            agent_deliveries::note.eq($note),
            agent_deliveries::body_sha256.eq(&$entry.body_sha256),
            agent_deliveries::received_at.eq($entry.received_at),
            agent_deliveries::summary.eq(&$entry.summary),
        )
    };
}

/// Dedupe records of the same delivery: its id, or its body.
macro_rules! same_delivery {
    ($entry:expr) => {
        agent_delivery_dedupe::team_id.eq(DbUuid::of($entry.team_id)).and(
            agent_delivery_dedupe::delivery_id
                .eq($entry.delivery.as_str())
                .or(agent_delivery_dedupe::body_sha256.eq(&$entry.body_sha256)),
        )
    };
}

/// Inserts the dedupe record of `$entry` unless its id or body hash is taken; the count of
/// rows inserted.
macro_rules! insert_dedupe {
    ($conn:expr, $entry:expr) => {
        diesel::insert_into(agent_delivery_dedupe::table)
            .values((
                agent_delivery_dedupe::team_id.eq(DbUuid::of($entry.team_id)),
                agent_delivery_dedupe::delivery_id.eq($entry.delivery.as_str()),
                agent_delivery_dedupe::body_sha256.eq(&$entry.body_sha256),
                agent_delivery_dedupe::accepted_at.eq($entry.received_at),
            ))
            .on_conflict_do_nothing()
            .execute($conn)
    };
}

/// Log rows of a team's pending deliveries.
macro_rules! pending_of {
    ($team:expr) => {
        agent_deliveries::table.filter(agent_deliveries::team_id.eq(DbUuid::of($team))).filter(
            agent_deliveries::state.eq_any([DeliveryState::Queued.as_str(), DeliveryState::Running.as_str()]),
        )
    };
}

/// Stores a new delivery as accepted, with its dedupe record, unless its id or body hash
/// is taken: one statement, so both rows or neither. A query type of its own, not
/// `sql_query`, so that each connection keeps it prepared: diesel prepares `sql_query`
/// text anew on every call, a round trip and a parse more than the statement itself.
/// Its columns are those of `insert_dedupe!` and of the accepted row the transaction in
/// `accept` writes (`entry_values!` with the input, state and next attempt): change them
/// together.
struct AcceptNewOnPostgres<'a> {
    team_id: uuid::Uuid,
    id: uuid::Uuid,
    entry: &'a DeliveryEntry,
    conversation: Option<&'a str>,
    input: &'a str,
}

impl<'a> AcceptNewOnPostgres<'a> {
    fn new(delivery: &'a NewDelivery) -> Self {
        let entry = &delivery.entry;
        Self {
            team_id: entry.team_id.as_uuid(),
            id: entry.id.as_uuid(),
            entry,
            conversation: entry.conversation.as_ref().map(ConversationKey::as_str),
            input: &delivery.input,
        }
    }
}

impl diesel::query_builder::QueryId for AcceptNewOnPostgres<'_> {
    type QueryId = AcceptNewOnPostgres<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl diesel::query_builder::QueryFragment<diesel::pg::Pg> for AcceptNewOnPostgres<'_> {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, diesel::pg::Pg>,
    ) -> QueryResult<()> {
        use diesel::sql_types::{Nullable, Text, Timestamptz, Uuid};
        /// Pushes each value as a bind parameter of its SQL type, separated by commas.
        macro_rules! binds {
            ($out:ident, $first_type:ty: $first:expr $(, $type:ty: $value:expr)* $(,)?) => {
                $out.push_bind_param::<$first_type, _>($first)?;
                $($out.push_sql(", "); $out.push_bind_param::<$type, _>($value)?;)*
            };
        }
        let entry = self.entry;
        // The dedupe record's values are bound again for the log row: a bind parameter
        // cannot be named twice here.
        out.push_sql(
            "WITH recorded AS (INSERT INTO agent_delivery_dedupe \
             (team_id, delivery_id, body_sha256, accepted_at) VALUES (",
        );
        binds!(out, Uuid: &self.team_id, Text: entry.delivery.as_str(), Text: &entry.body_sha256,
            Timestamptz: &entry.received_at);
        out.push_sql(
            ") ON CONFLICT DO NOTHING RETURNING 1) \
             INSERT INTO agent_deliveries (team_id, id, delivery_id, event, action, repository, \
             conversation_key, verdict, note, body_sha256, received_at, summary, input, state, next_attempt_at) \
             SELECT ",
        );
        binds!(out,
            Uuid: &self.team_id,
            Uuid: &self.id,
            Text: entry.delivery.as_str(),
            Text: &entry.event,
            Nullable<Text>: &entry.action,
            Nullable<Text>: &entry.repository,
            Nullable<Text>: &self.conversation,
            Text: Verdict::Accepted.as_str(),
            Nullable<Text>: &entry.note,
            Text: &entry.body_sha256,
            Timestamptz: &entry.received_at,
            Text: &entry.summary,
            Text: self.input,
            Text: DeliveryState::Queued.as_str(),
            Timestamptz: &entry.received_at,
        );
        out.push_sql(" FROM recorded");
        Ok(())
    }
}

#[async_trait]
impl DeliveryQueue for SqlStore {
    #[tracing::instrument(skip_all, fields(delivery = %delivery.entry.delivery))]
    async fn accept(
        &self,
        delivery: &NewDelivery,
        dedupe_since: DateTime<Utc>,
    ) -> Result<Acceptance, StoreError> {
        let entry = &delivery.entry;
        // The common case, a new delivery, in one statement on PostgreSQL: one round trip
        // instead of four. Anything else (a taken id or body) takes the transaction below.
        if let Pools::Postgres(pool) = &self.pools
            && AcceptNewOnPostgres::new(delivery)
                .execute(&mut *checkout(pool.get()).await?)
                .await
                .or_store()?
                == 1
        {
            return Ok(Acceptance::Accepted);
        }
        db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The dedupe record first (a write, so SQLite takes its write lock at
                // once). A copy racing this one waits on the unique keys, then inserts
                // nothing and finds this one below.
                let mut recorded = insert_dedupe!(conn, entry).await?;
                if recorded == 0 {
                    // Taken: by a record old enough to forget, or by the same delivery.
                    let expired = diesel::delete(
                        agent_delivery_dedupe::table
                            .filter(same_delivery!(entry))
                            .filter(agent_delivery_dedupe::accepted_at.lt(dedupe_since)),
                    )
                    .execute(conn)
                    .await?;
                    if expired > 0 {
                        recorded = insert_dedupe!(conn, entry).await?;
                    }
                }
                if recorded == 0 {
                    let earlier: String = agent_delivery_dedupe::table
                        .filter(same_delivery!(entry))
                        .select(agent_delivery_dedupe::delivery_id)
                        .first(conn)
                        .await?;
                    let note = if earlier == entry.delivery.as_str() {
                        "this delivery id was already accepted".to_owned()
                    } else {
                        format!("the same body was already accepted as delivery {earlier}")
                    };
                    diesel::insert_into(agent_deliveries::table)
                        .values(entry_values!(entry, Verdict::Duplicate, Some(note)))
                        .execute(conn)
                        .await?;
                    return Ok(Acceptance::Duplicate);
                }
                diesel::insert_into(agent_deliveries::table)
                    .values((
                        entry_values!(entry, Verdict::Accepted, entry.note.as_deref()),
                        agent_deliveries::input.eq(&delivery.input),
                        agent_deliveries::state.eq(DeliveryState::Queued.as_str()),
                        agent_deliveries::next_attempt_at.eq(entry.received_at),
                    ))
                    .execute(conn)
                    .await?;
                Ok::<_, diesel::result::Error>(Acceptance::Accepted)
            })
            .await
            .or_store())
    }

    #[tracing::instrument(skip_all, fields(delivery = %entry.delivery))]
    async fn log_delivery(&self, entry: &DeliveryEntry) -> Result<(), StoreError> {
        db_run!(self, |conn| diesel::insert_into(agent_deliveries::table)
            .values(entry_values!(entry, entry.verdict, entry.note.as_deref()))
            .execute(conn)
            .await
            .or_store()?);
        Ok(())
    }

    #[tracing::instrument(skip(self))]
    async fn pending_deliveries(&self, team: TeamId, limit: u32) -> Result<Vec<PendingDelivery>, StoreError> {
        type Row = (DbUuid, Option<String>, Option<String>, Option<DateTime<Utc>>);
        let rows: Vec<Row> = db_run!(self, |conn| pending_of!(team)
            .order(agent_deliveries::id)
            .limit(i64::from(limit))
            .select((
                agent_deliveries::id,
                agent_deliveries::conversation_key,
                agent_deliveries::state,
                agent_deliveries::next_attempt_at,
            ))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter()
            .map(|(id, key, state_text, next_attempt_at)| {
                Ok(PendingDelivery {
                    id: id.into_id(),
                    conversation: conversation(key)?,
                    state: state(state_text.as_deref().unwrap_or_default())?,
                    next_attempt_at: next_attempt_at.ok_or_else(|| corrupt("next attempt", "missing"))?,
                })
            })
            .collect()
    }

    #[tracing::instrument(skip(self))]
    async fn claim_delivery(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<ClaimedDelivery>, StoreError> {
        type Row = (String, Option<String>, Option<String>, String, i32);
        let row: Option<Row> = db_run!(self, |conn| diesel::update(
            agent_deliveries::table
                .filter(agent_deliveries::team_id.eq(DbUuid::of(team)))
                .filter(agent_deliveries::id.eq(DbUuid::of(id)))
                .filter(agent_deliveries::state.eq(DeliveryState::Queued.as_str()))
        )
        .set((
            agent_deliveries::state.eq(DeliveryState::Running.as_str()),
            agent_deliveries::attempts.eq(agent_deliveries::attempts + 1),
            agent_deliveries::lease_until.eq(Some(lease_until)),
        ))
        .returning((
            agent_deliveries::delivery_id,
            agent_deliveries::conversation_key,
            agent_deliveries::input,
            agent_deliveries::summary,
            agent_deliveries::attempts,
        ))
        .get_result(conn)
        .await
        .optional()
        .or_store()?);
        row.map(|(delivery, key, input, summary, count)| {
            Ok(ClaimedDelivery {
                id,
                delivery: DeliveryId::parse(&delivery).map_err(|e| corrupt("delivery id", e))?,
                conversation: conversation(key)?,
                input: input.ok_or_else(|| corrupt("delivery input", "missing"))?,
                summary,
                attempts: attempts(count)?,
            })
        })
        .transpose()
    }

    #[tracing::instrument(skip(self, result))]
    async fn finish_attempt(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        result: &AttemptResult,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let attempt = i32::try_from(attempt).unwrap_or(i32::MAX);
        // A finished delivery keeps `next_attempt_at` at its finish: nothing reads it then.
        let (state, run, error, next_attempt_at, finished_at) = match result {
            AttemptResult::Done { run } => (DeliveryState::Done, *run, None, at, Some(at)),
            AttemptResult::Retry { run, error, at: next } => {
                (DeliveryState::Queued, *run, Some(error), *next, None)
            }
            AttemptResult::Failed { run, error } => (DeliveryState::Failed, *run, Some(error), at, Some(at)),
        };
        db_run!(self, |conn| diesel::update(
            agent_deliveries::table
                .filter(agent_deliveries::team_id.eq(DbUuid::of(team)))
                .filter(agent_deliveries::id.eq(DbUuid::of(id)))
                .filter(agent_deliveries::state.eq(DeliveryState::Running.as_str()))
                .filter(agent_deliveries::attempts.eq(attempt))
        )
        .set((
            agent_deliveries::state.eq(state.as_str()),
            agent_deliveries::run_id.eq(run.map(DbUuid::of)),
            agent_deliveries::error.eq(error),
            agent_deliveries::next_attempt_at.eq(next_attempt_at),
            agent_deliveries::finished_at.eq(finished_at),
        ))
        .execute(conn)
        .await
        .or_store()?);
        Ok(())
    }

    #[tracing::instrument(skip(self))]
    async fn renew_lease(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        lease_until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let attempt = i32::try_from(attempt).unwrap_or(i32::MAX);
        let renewed = db_run!(self, |conn| diesel::update(
            agent_deliveries::table
                .filter(agent_deliveries::team_id.eq(DbUuid::of(team)))
                .filter(agent_deliveries::id.eq(DbUuid::of(id)))
                .filter(agent_deliveries::state.eq(DeliveryState::Running.as_str()))
                .filter(agent_deliveries::attempts.eq(attempt))
        )
        .set(agent_deliveries::lease_until.eq(Some(lease_until)))
        .execute(conn)
        .await
        .or_store()?);
        Ok(renewed > 0)
    }

    #[tracing::instrument(skip(self))]
    async fn requeue_expired(&self, team: TeamId, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let count = db_run!(self, |conn| diesel::update(
            agent_deliveries::table
                .filter(agent_deliveries::team_id.eq(DbUuid::of(team)))
                .filter(agent_deliveries::state.eq(DeliveryState::Running.as_str()))
                .filter(agent_deliveries::lease_until.is_null().or(agent_deliveries::lease_until.lt(now)))
        )
        .set(agent_deliveries::state.eq(DeliveryState::Queued.as_str()))
        .execute(conn)
        .await
        .or_store()?);
        Ok(u64::try_from(count).unwrap_or(u64::MAX))
    }

    #[tracing::instrument(skip(self))]
    async fn prune_deliveries(
        &self,
        team: TeamId,
        dedupe_before: DateTime<Utc>,
        log_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let count = db_run!(self, |conn| {
            let dedupe = diesel::delete(
                agent_delivery_dedupe::table
                    .filter(agent_delivery_dedupe::team_id.eq(DbUuid::of(team)))
                    .filter(agent_delivery_dedupe::accepted_at.lt(dedupe_before)),
            )
            .execute(conn)
            .await
            .or_store()?;
            let finished = [DeliveryState::Queued.as_str(), DeliveryState::Running.as_str()];
            let log = diesel::delete(
                agent_deliveries::table
                    .filter(agent_deliveries::team_id.eq(DbUuid::of(team)))
                    .filter(agent_deliveries::received_at.lt(log_before))
                    .filter(agent_deliveries::state.is_null().or(agent_deliveries::state.ne_all(finished))),
            )
            .execute(conn)
            .await
            .or_store()?;
            dedupe + log
        });
        Ok(u64::try_from(count).unwrap_or(u64::MAX))
    }

    #[tracing::instrument(skip(self))]
    async fn list_deliveries(
        &self,
        team: TeamId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<DeliveryEntry>, StoreError> {
        let rows: Vec<EntryRow> = db_run!(self, |conn| {
            let mut query =
                agent_deliveries::table.filter(agent_deliveries::team_id.eq(DbUuid::of(team))).into_boxed();
            if let Some(verdict) = filter.verdict {
                query = query.filter(agent_deliveries::verdict.eq(verdict.as_str()));
            }
            query
                .order((agent_deliveries::received_at.desc(), agent_deliveries::id.desc()))
                .limit(i64::from(filter.limit))
                .select((
                    agent_deliveries::team_id,
                    agent_deliveries::id,
                    agent_deliveries::delivery_id,
                    agent_deliveries::event,
                    agent_deliveries::action,
                    agent_deliveries::repository,
                    agent_deliveries::conversation_key,
                    agent_deliveries::verdict,
                    agent_deliveries::note,
                    agent_deliveries::body_sha256,
                    agent_deliveries::received_at,
                    agent_deliveries::summary,
                    agent_deliveries::state,
                    agent_deliveries::attempts,
                    agent_deliveries::run_id,
                    agent_deliveries::error,
                    agent_deliveries::finished_at,
                ))
                .load(conn)
                .await
                .or_store()?
        });
        rows.into_iter().map(DeliveryEntry::try_from).collect()
    }
}
