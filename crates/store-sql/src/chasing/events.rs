//! The event log over diesel, and the pass that hands events to their subscribers.
//!
//! One dispatcher at a time: on PostgreSQL a transaction-scoped advisory lock (a replica
//! that finds it taken leaves the work to the one that has it), on SQLite the write lock.
//! So the jobs of one thread are queued in the order of their events, whose `seq` the
//! thread's row lock ordered.

use std::collections::HashMap;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Id, StoreError};
use notify::jobs::NewJob;
use notify::store::EventStore;
use notify::webhooks::{WebhookDeliveryId, is_for};
use notify::{Event, EventFilter, EventId, JobKind};
use tracking::Actor;

use super::{event_type, insert_job};
use crate::accounts::load_makers;
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

/// Takes the dispatcher's advisory lock of this schema until the transaction ends, or
/// answers `false` at once when another session holds it ("even" in ASCII: a key of ours).
const TRY_DISPATCH_LOCK: &str =
    "SELECT pg_try_advisory_xact_lock(1702258030, hashtext(current_schema())) AS locked";

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    locked: bool,
}

#[derive(Queryable)]
pub(crate) struct EventRow {
    seq: i64,
    team_id: DbUuid,
    id: DbUuid,
    kind: String,
    subject_id: DbUuid,
    thread: String,
    data: String,
    occurred_at: DateTime<Utc>,
    dispatched_at: Option<DateTime<Utc>>,
    owner_id: Option<DbUuid>,
}

impl TryFrom<EventRow> for Event {
    type Error = StoreError;
    fn try_from(row: EventRow) -> Result<Self, StoreError> {
        Ok(Event {
            seq: row.seq,
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            kind: event_type(&row.kind)?,
            subject: row.subject_id.0,
            thread: row.thread,
            data: row.data,
            owner: row.owner_id.map(DbUuid::into_id),
            occurred_at: row.occurred_at,
            dispatched: row.dispatched_at.is_some(),
        })
    }
}

/// The patterns a column holds (space-separated), parsed.
pub(crate) fn filter_from(text: &str) -> Result<EventFilter, StoreError> {
    let patterns: Vec<&str> = text.split(' ').filter(|p| !p.is_empty()).collect();
    EventFilter::parse(&patterns).map_err(|e| corrupt("event patterns", e))
}

/// A filter as its column holds it.
pub(crate) fn filter_column(filter: &EventFilter) -> String {
    filter.words().join(" ")
}

/// An event waiting for its dispatch: seq, team, id, type, thread, owner.
type Waiting = (i64, DbUuid, DbUuid, String, String, Option<DbUuid>);

/// The dispatch itself, in a transaction that holds the dispatcher's lock: evaluates to
/// how many events it handed out.
macro_rules! dispatch {
    ($conn:ident, $limit:expr, $at:expr) => {{
        let at: DateTime<Utc> = $at;
        let waiting: Vec<Waiting> = events::table
            .filter(events::dispatched_at.is_null())
            .order(events::seq)
            .limit(i64::from($limit))
            .select((
                events::seq,
                events::team_id,
                events::id,
                events::kind,
                events::thread,
                events::owner_id,
            ))
            .load($conn)
            .await?;
        if !waiting.is_empty() {
            let teams: Vec<DbUuid> = {
                let mut teams: Vec<DbUuid> = waiting.iter().map(|w| w.1).collect();
                teams.sort_unstable_by_key(|team| team.0);
                teams.dedup();
                teams
            };
            let endpoints: Vec<(DbUuid, DbUuid, String, Option<DbUuid>)> = webhook_endpoints::table
                .filter(webhook_endpoints::team_id.eq_any(&teams))
                .filter(webhook_endpoints::disabled_at.is_null())
                .order(webhook_endpoints::id)
                .select((
                    webhook_endpoints::team_id,
                    webhook_endpoints::id,
                    webhook_endpoints::events,
                    webhook_endpoints::created_by,
                ))
                .load($conn)
                .await?;
            let makers = load_makers!($conn, &teams)?;
            let subscriptions: Vec<(DbUuid, String)> = event_subscriptions::table
                .filter(event_subscriptions::team_id.eq_any(&teams))
                .select((event_subscriptions::team_id, event_subscriptions::events))
                .load($conn)
                .await?;
            let refuse = |e: StoreError| diesel::result::Error::QueryBuilderError(Box::new(e));
            // Each endpoint with its filter and its maker as the team has them now.
            let mut endpoints_of: HashMap<DbUuid, Vec<(DbUuid, EventFilter, Option<Actor>)>> = HashMap::new();
            for (team, id, patterns, created_by) in endpoints {
                let maker = makers.maker(team, created_by).map_err(refuse)?;
                let reader = makers.actor(team, maker);
                endpoints_of.entry(team).or_default().push((
                    id,
                    filter_from(&patterns).map_err(refuse)?,
                    reader,
                ));
            }
            let mut agent_of: HashMap<DbUuid, EventFilter> = HashMap::new();
            for (team, patterns) in subscriptions {
                agent_of.insert(team, filter_from(&patterns).map_err(refuse)?);
            }
            for (seq, team, id, kind, thread, owner) in &waiting {
                let kind = event_type(kind).map_err(refuse)?;
                let team_id: TeamId = team.into_id();
                let owner = owner.map(DbUuid::into_id);
                for (endpoint, filter, reader) in endpoints_of.get(team).into_iter().flatten() {
                    // Only what the endpoint's maker may read (`is_for`).
                    if !filter.matches(kind) || !is_for(reader.as_ref(), kind, owner) {
                        continue;
                    }
                    let delivery = WebhookDeliveryId::generate();
                    diesel::insert_into(webhook_deliveries::table)
                        .values((
                            webhook_deliveries::team_id.eq(*team),
                            webhook_deliveries::id.eq(DbUuid::of(delivery)),
                            webhook_deliveries::endpoint_id.eq(*endpoint),
                            webhook_deliveries::event_id.eq(*id),
                            webhook_deliveries::event_type.eq(kind.as_str()),
                            webhook_deliveries::status.eq(notify::DeliveryStatus::Pending.as_str()),
                            webhook_deliveries::attempts.eq(0),
                            webhook_deliveries::next_attempt_at.eq(Some(at)),
                            webhook_deliveries::created_at.eq(at),
                        ))
                        .execute($conn)
                        .await?;
                    insert_job!($conn, &NewJob::new(team_id, JobKind::Webhook, delivery.as_uuid(), at));
                }
                if agent_of.get(team).is_some_and(|filter| filter.matches(kind)) {
                    let job = NewJob {
                        order: Some((thread.clone(), *seq)),
                        ..NewJob::new(team_id, JobKind::Agent, id.0, at)
                    };
                    insert_job!($conn, &job);
                }
            }
            let seqs: Vec<i64> = waiting.iter().map(|w| w.0).collect();
            diesel::update(events::table.filter(events::seq.eq_any(seqs)))
                .set(events::dispatched_at.eq(Some(at)))
                .execute($conn)
                .await?;
        }
        u32::try_from(waiting.len()).unwrap_or(u32::MAX)
    }};
}

#[async_trait]
impl EventStore for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn dispatch_events(&self, limit: u32, at: DateTime<Utc>) -> Result<u32, StoreError> {
        let dispatched = db_run!(self,
            postgres: |conn| conn
                .transaction(async |conn| {
                    let Locked { locked } = diesel::sql_query(TRY_DISPATCH_LOCK).get_result(conn).await?;
                    if !locked {
                        return Ok(0);
                    }
                    Ok::<_, diesel::result::Error>(dispatch!(conn, limit, at))
                })
                .await
                .or_store()?,
            sqlite: |conn| conn
                .transaction(async |conn| {
                    diesel::sql_query(super::SQLITE_WRITE_FIRST).execute(conn).await?;
                    Ok::<_, diesel::result::Error>(dispatch!(conn, limit, at))
                })
                .await
                .or_store()?
        );
        if dispatched > 0 {
            self.signal.notify_one();
        }
        Ok(dispatched)
    }

    #[tracing::instrument(skip(self))]
    async fn get_event(&self, id: EventId) -> Result<Option<Event>, StoreError> {
        let row: Option<EventRow> = db_run!(self, |conn| events::table
            .filter(events::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(Event::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn list_events(&self, team: TeamId, limit: u32) -> Result<Vec<Event>, StoreError> {
        let rows: Vec<EventRow> = db_run!(self, |conn| events::table
            .filter(events::team_id.eq(DbUuid::of(team)))
            .order(events::seq.desc())
            .limit(i64::from(limit))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter().map(Event::try_from).collect()
    }

    #[tracing::instrument(skip(self, events))]
    async fn subscribe_agent(&self, team: TeamId, events: Option<&EventFilter>) -> Result<(), StoreError> {
        let now = Utc::now();
        db_run!(self, |conn| match events {
            Some(filter) => {
                let patterns = filter_column(filter);
                diesel::insert_into(event_subscriptions::table)
                    .values((
                        event_subscriptions::team_id.eq(DbUuid::of(team)),
                        event_subscriptions::events.eq(&patterns),
                        event_subscriptions::updated_at.eq(now),
                    ))
                    .on_conflict(event_subscriptions::team_id)
                    .do_update()
                    .set((event_subscriptions::events.eq(&patterns), event_subscriptions::updated_at.eq(now)))
                    .execute(conn)
                    .await
                    .or_store()?
            }
            None => diesel::delete(
                event_subscriptions::table.filter(event_subscriptions::team_id.eq(DbUuid::of(team)))
            )
            .execute(conn)
            .await
            .or_store()?,
        });
        Ok(())
    }
}
