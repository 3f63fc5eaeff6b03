//! The job queue over diesel.
//!
//! A claim reads the oldest due jobs and takes those that may run: on PostgreSQL with
//! `FOR UPDATE SKIP LOCKED`, so that replicas claiming at once take different jobs and
//! none waits for another; on SQLite under the write lock, taken first. A job of a thread
//! is taken only while it heads its thread (no queued or running job of the thread has a
//! smaller `seq`).

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{StoreError, Words};
use notify::jobs::Claim;
use notify::{ClaimedJob, DeliveryStatus, Finish, Job, JobFilter, JobKind, JobQueue, JobState};

use super::finish_job_row;
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

#[derive(Queryable)]
struct JobRow {
    team_id: DbUuid,
    id: DbUuid,
    kind: String,
    subject_id: DbUuid,
    thread: Option<String>,
    seq: Option<i64>,
    state: String,
    attempts: i32,
    run_at: DateTime<Utc>,
    lease_until: Option<DateTime<Utc>>,
    last_error: Option<String>,
    created_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
}

pub(crate) fn job_kind(text: &str) -> Result<JobKind, StoreError> {
    JobKind::from_word(text).ok_or_else(|| corrupt("job kind", text))
}

fn attempts(count: i32) -> Result<u32, StoreError> {
    u32::try_from(count).map_err(|e| corrupt("job attempts", e))
}

impl TryFrom<JobRow> for Job {
    type Error = StoreError;
    fn try_from(row: JobRow) -> Result<Self, StoreError> {
        Ok(Job {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            kind: job_kind(&row.kind)?,
            subject: row.subject_id.0,
            thread: row.thread,
            seq: row.seq,
            state: JobState::from_word(&row.state).ok_or_else(|| corrupt("job state", &row.state))?,
            attempts: attempts(row.attempts)?,
            run_at: row.run_at,
            lease_until: row.lease_until,
            last_error: row.last_error,
            created_at: row.created_at,
            finished_at: row.finished_at,
        })
    }
}

/// A job that may be claimed: team, id, kind, subject, thread, seq, state, attempts.
type Candidate = (DbUuid, DbUuid, String, DbUuid, Option<String>, Option<i64>, String, i32);

/// The jobs of `$claim` in `$state` that `$ready` (on `jobs`) lets it take, in `$order`, as a
/// query of `jobs`: two of them, so that each walks its own partial index (`jobs_due` in
/// order, `jobs_leased`) and stops at the limit, however long the queue.
macro_rules! claimable {
    ($claim:expr, $state:expr, $ready:expr, $order:expr, $limit:expr) => {{
        let claim: &Claim = $claim;
        let kinds: Vec<&str> = claim.kinds.iter().map(|kind| kind.as_str()).collect();
        jobs::table
            .filter(jobs::state.eq($state.as_str()))
            .filter($ready)
            .filter(jobs::kind.eq_any(kinds))
            .order($order)
            .limit($limit)
            .select((
                jobs::team_id,
                jobs::id,
                jobs::kind,
                jobs::subject_id,
                jobs::thread,
                jobs::seq,
                jobs::state,
                jobs::attempts,
            ))
    }};
}

/// The settings of a claim's transaction on PostgreSQL. It walks the queue's partial
/// indexes in order: a queue grows by thousands between two `ANALYZE`s, and on the
/// statistics of a smaller one the planner reads and sorts every due job (a bitmap scan) to
/// take a few, so that a claim costs as much as the queue is long. It commits without
/// waiting for the disk: a claim a crash of PostgreSQL loses leaves its jobs queued, to be
/// claimed again, which at-least-once delivery allows.
const CLAIM_SETTINGS: &str = "SELECT set_config('enable_bitmapscan', 'off', true), \
     set_config('enable_sort', 'off', true), set_config('synchronous_commit', 'off', true)";

/// The jobs `$claim` may take, at most its limit, locked with `$lock` (`for_update().
/// skip_locked()` on PostgreSQL, nothing on SQLite): those whose lease ended (their
/// process died) first, then the queued ones due, oldest first.
macro_rules! candidates {
    ($conn:ident, $claim:expr, |$query:ident| $lock:expr) => {{
        let claim: &Claim = $claim;
        let limit = i64::from(claim.limit);
        let $query =
            claimable!(claim, JobState::Running, jobs::lease_until.lt(claim.now), jobs::lease_until, limit);
        let mut candidates: Vec<Candidate> = $lock.load($conn).await?;
        let left = limit - i64::try_from(candidates.len()).unwrap_or(limit);
        if left > 0 {
            let $query = claimable!(
                claim,
                JobState::Queued,
                jobs::run_at.le(claim.due),
                (jobs::run_at, jobs::id),
                left
            );
            candidates.extend($lock.load::<Candidate>($conn).await?);
        }
        candidates
    }};
}

/// Takes the `$candidates` that head their thread: running each, leased, its attempt
/// counted. Evaluates to the jobs taken (team, id, kind, subject, attempt).
macro_rules! take {
    ($conn:ident, $claim:expr, $candidates:expr) => {{
        let claim: &Claim = $claim;
        let candidates: Vec<Candidate> = $candidates;
        let threads: Vec<&str> = candidates.iter().filter_map(|c| c.4.as_deref()).collect();
        let heads: HashMap<String, i64> = if threads.is_empty() {
            HashMap::new()
        } else {
            let rows: Vec<(Option<String>, Option<i64>)> = jobs::table
                .filter(jobs::thread.eq_any(&threads))
                .filter(jobs::state.eq_any([JobState::Queued.as_str(), JobState::Running.as_str()]))
                .group_by(jobs::thread)
                .select((jobs::thread, diesel::dsl::min(jobs::seq)))
                .load($conn)
                .await?;
            rows.into_iter().filter_map(|(thread, seq)| Some((thread?, seq?))).collect()
        };
        let heading: Vec<(DbUuid, DbUuid)> = candidates
            .into_iter()
            .filter(|(_, _, _, _, thread, seq, _, _)| match (thread, seq) {
                (Some(thread), Some(seq)) => heads.get(thread).is_none_or(|head| head == seq),
                _ => true,
            })
            .map(|(team, id, ..)| (team, id))
            .collect();
        if heading.is_empty() {
            Vec::new()
        } else {
            // One statement for all: the rows are this transaction's (locked on PostgreSQL,
            // under SQLite's write lock), so none changed since they were read.
            let teams: Vec<DbUuid> = heading.iter().map(|(team, _)| *team).collect();
            let ids: Vec<DbUuid> = heading.iter().map(|(_, id)| *id).collect();
            diesel::update(jobs::table.filter(jobs::team_id.eq_any(teams)).filter(jobs::id.eq_any(ids)))
                .set((
                    jobs::state.eq(JobState::Running.as_str()),
                    jobs::attempts.eq(jobs::attempts + 1),
                    jobs::lease_until.eq(Some(claim.lease_until)),
                ))
                .returning((jobs::team_id, jobs::id, jobs::kind, jobs::subject_id, jobs::attempts))
                .get_results::<(DbUuid, DbUuid, String, DbUuid, i32)>($conn)
                .await?
        }
    }};
}

#[async_trait]
impl JobQueue for SqlStore {
    #[tracing::instrument(skip_all, fields(due = %claim.due, limit = claim.limit))]
    async fn claim_jobs(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
        if claim.kinds.is_empty() || claim.limit == 0 {
            return Ok(Vec::new());
        }
        let taken: Vec<(DbUuid, DbUuid, String, DbUuid, i32)> = db_run!(self,
            postgres: |conn| conn
                .transaction(async |conn| {
                    diesel::sql_query(CLAIM_SETTINGS).execute(conn).await?;
                    let candidates = candidates!(conn, claim, |query| query.for_update().skip_locked());
                    Ok::<_, diesel::result::Error>(take!(conn, claim, candidates))
                })
                .await
                .or_store()?,
            sqlite: |conn| conn
                .transaction(async |conn| {
                    diesel::sql_query(super::SQLITE_WRITE_FIRST).execute(conn).await?;
                    let candidates = candidates!(conn, claim, |query| query);
                    Ok::<_, diesel::result::Error>(take!(conn, claim, candidates))
                })
                .await
                .or_store()?
        );
        taken
            .into_iter()
            .map(|(team, id, kind, subject, attempt)| {
                Ok(ClaimedJob {
                    id: id.into_id(),
                    team_id: team.into_id(),
                    kind: job_kind(&kind)?,
                    subject: subject.0,
                    attempt: attempts(attempt)?,
                })
            })
            .collect()
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn renew_job(&self, job: &ClaimedJob, lease_until: DateTime<Utc>) -> Result<bool, StoreError> {
        let renewed = db_run!(self, |conn| diesel::update(
            jobs::table
                .filter(jobs::team_id.eq(DbUuid::of(job.team_id)))
                .filter(jobs::id.eq(DbUuid::of(job.id)))
                .filter(jobs::state.eq(JobState::Running.as_str()))
                .filter(jobs::attempts.eq(i32::try_from(job.attempt).unwrap_or(i32::MAX)))
        )
        .set(jobs::lease_until.eq(Some(lease_until)))
        .execute(conn)
        .await
        .or_store()?);
        Ok(renewed == 1)
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn finish_job(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let held = db_run!(self, |conn| conn
            .transaction(async |conn| Ok::<_, diesel::result::Error>(finish_job_row!(conn, job, finish, at)))
            .await
            .or_store()?);
        if held && matches!(finish, Finish::Retry { .. }) {
            self.signal.notify_one();
        }
        Ok(held)
    }

    #[tracing::instrument(skip(self))]
    async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let rows: Vec<JobRow> = db_run!(self, |conn| {
            let mut query = jobs::table.order((jobs::created_at.desc(), jobs::id.desc())).into_boxed();
            if let Some(team) = filter.team {
                query = query.filter(jobs::team_id.eq(DbUuid::of(team)));
            }
            if let Some(state) = filter.state {
                query = query.filter(jobs::state.eq(state.as_str()));
            }
            if let Some(kind) = filter.kind {
                query = query.filter(jobs::kind.eq(kind.as_str()));
            }
            query.limit(i64::from(filter.limit)).load(conn).await.or_store()?
        });
        rows.into_iter().map(Job::try_from).collect()
    }

    #[tracing::instrument(skip(self))]
    async fn due_work(&self, at: DateTime<Utc>) -> Result<notify::DueWork, StoreError> {
        let open = [billing::InvoiceStatus::Pending.as_str(), billing::InvoiceStatus::PaidPartial.as_str()];
        let (overdue, reminders, events, by_kind): (i64, i64, i64, Vec<(String, i64)>) =
            db_run!(self, |conn| {
                let overdue = invoices::table
                    .filter(invoices::overdue_at.is_null())
                    .filter(invoices::due_date.lt(at))
                    .filter(invoices::status.eq_any(open))
                    .count()
                    .get_result(conn)
                    .await
                    .or_store()?;
                let reminders = invoices::table
                    .filter(invoices::next_reminder_at.le(at))
                    .count()
                    .get_result(conn)
                    .await
                    .or_store()?;
                let events = events::table
                    .filter(events::dispatched_at.is_null())
                    .count()
                    .get_result(conn)
                    .await
                    .or_store()?;
                let by_kind = jobs::table
                    .filter(jobs::state.eq(JobState::Queued.as_str()))
                    .filter(jobs::run_at.le(at))
                    .group_by(jobs::kind)
                    .select((jobs::kind, diesel::dsl::count_star()))
                    .load(conn)
                    .await
                    .or_store()?;
                (overdue, reminders, events, by_kind)
            });
        let count = |n: i64| u64::try_from(n).unwrap_or(0);
        let of =
            |kind: JobKind| count(by_kind.iter().find(|(k, _)| k == kind.as_str()).map_or(0, |(_, n)| *n));
        Ok(notify::DueWork {
            overdue: count(overdue),
            reminders: count(reminders),
            events: count(events),
            mail: of(JobKind::Mail),
            webhooks: of(JobKind::Webhook),
            agent: of(JobKind::Agent),
        })
    }

    #[tracing::instrument(skip(self))]
    async fn prune_jobs(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let pruned = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let finished = [JobState::Done.as_str(), JobState::Failed.as_str()];
                let jobs = diesel::delete(
                    jobs::table
                        .filter(jobs::state.eq_any(finished))
                        .filter(jobs::finished_at.lt(Some(before))),
                )
                .execute(conn)
                .await?;
                // An event's deliveries go with it: one still to run keeps it, as does a job
                // of its own (the agent's run of it).
                let pending = jobs::table
                    .filter(jobs::state.eq_any([JobState::Queued.as_str(), JobState::Running.as_str()]))
                    .select(jobs::subject_id);
                let delivering = webhook_deliveries::table
                    .filter(webhook_deliveries::status.eq(DeliveryStatus::Pending.as_str()))
                    .select(webhook_deliveries::event_id);
                let events = diesel::delete(
                    events::table
                        .filter(events::dispatched_at.lt(Some(before)))
                        .filter(events::id.ne_all(pending))
                        .filter(events::id.ne_all(delivering)),
                )
                .execute(conn)
                .await?;
                Ok::<_, diesel::result::Error>(jobs + events)
            })
            .await
            .or_store()?);
        Ok(u64::try_from(pruned).unwrap_or(u64::MAX))
    }
}
