//! One durable queue for everything that happens later: e-mails to send, webhook
//! deliveries, the agent's runs of events. A job is written in the transaction of the
//! change that causes it, leased to one process at a time while it runs (a process that
//! dies leaves its lease to end, and another takes the job over), retried with backoff,
//! and kept, finished, for people to read.
//!
//! Two clocks meet here. Whether a job is *due* is business time: the clock of the pass
//! (`billable jobs run --at` sets it). Whether a lease has *ended* is the processes' real
//! time, so that a pass run for a day in the future never takes a job a live process holds.

use std::time::Duration;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use kernel::{StoreError, define_id, uuid::Uuid, words};

define_id!(
    /// A job of the queue.
    JobId
);

/// What a job does; each kind is run by the process that can (a process without an SMTP
/// server leaves mail alone, one without an agent leaves the agent's runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// Send the message its subject names.
    Mail,
    /// Deliver the webhook delivery its subject names.
    Webhook,
    /// Run the agent on the event its subject names.
    Agent,
}

words!(JobKind { Mail => "mail", Webhook => "webhook", Agent => "agent" });

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobState {
    /// Waiting until it is due (its first attempt, or a retry).
    Queued,
    /// Leased to a process that runs it now.
    Running,
    Done,
    /// Every attempt failed, or it failed for good.
    Failed,
}

words!(JobState { Queued => "queued", Running => "running", Done => "done", Failed => "failed" });

/// A job as the queue keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    pub team_id: TeamId,
    pub kind: JobKind,
    /// The message, delivery or event it is about.
    pub subject: Uuid,
    /// Jobs of one thread run one at a time, in the order of their `seq`.
    pub thread: Option<String>,
    pub seq: Option<i64>,
    pub state: JobState,
    /// Attempts started, the running one included.
    pub attempts: u32,
    /// When it is due (its next attempt).
    pub run_at: DateTime<Utc>,
    /// While running: until when the process running it holds it.
    pub lease_until: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// A job to queue, with the change that causes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewJob {
    pub id: JobId,
    pub team_id: TeamId,
    pub kind: JobKind,
    pub subject: Uuid,
    /// `(thread, seq)`: run after every job of the thread with a smaller `seq`.
    pub order: Option<(String, i64)>,
    pub run_at: DateTime<Utc>,
}

impl NewJob {
    /// A job of `kind` about `subject`, due at `at`.
    pub fn new(team_id: TeamId, kind: JobKind, subject: Uuid, at: DateTime<Utc>) -> Self {
        use kernel::Id;
        Self { id: JobId::generate(), team_id, kind, subject, order: None, run_at: at }
    }
}

/// A job a process has claimed: it holds it until its lease ends, and only this attempt
/// may finish it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedJob {
    pub id: JobId,
    pub team_id: TeamId,
    pub kind: JobKind,
    pub subject: Uuid,
    /// This attempt's number, from 1: the fence that a finish must show.
    pub attempt: u32,
}

/// What to claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// Only these kinds.
    pub kinds: Vec<JobKind>,
    /// Business time: queued jobs due at or before it are taken.
    pub due: DateTime<Utc>,
    /// Real time: running jobs whose lease ended before it are taken over.
    pub now: DateTime<Utc>,
    /// Real time: the lease of each job taken.
    pub lease_until: DateTime<Utc>,
    pub limit: u32,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finish {
    Done,
    /// Failed; queued again for `at`.
    Retry {
        at: DateTime<Utc>,
        error: String,
    },
    /// Failed for good.
    Failed {
        error: String,
    },
}

/// Which jobs to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobFilter {
    /// Every team's when `None` (operators).
    pub team: Option<TeamId>,
    pub state: Option<JobState>,
    pub kind: Option<JobKind>,
    pub limit: u32,
}

/// The durable queue.
#[async_trait]
pub trait JobQueue: Send + Sync {
    /// Takes up to `claim.limit` jobs of `claim.kinds`: queued ones due at `claim.due`,
    /// and running ones whose lease ended before `claim.now` (their process stopped);
    /// each becomes running, leased until `claim.lease_until`, with its attempt counted.
    /// Oldest due first. A job with a thread is taken only when no job of its thread with
    /// a smaller `seq` is queued or running. Concurrent claims MUST NOT take one job twice.
    async fn claim_jobs(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError>;

    /// Extends the lease of `job`'s attempt; `false` when that attempt no longer holds it.
    async fn renew_job(&self, job: &ClaimedJob, lease_until: DateTime<Utc>) -> Result<bool, StoreError>;

    /// Records how `job`'s attempt ended; `false`, and nothing written, when that attempt
    /// no longer holds it (its lease ended and another process took the job).
    async fn finish_job(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Jobs `filter` shows, newest first.
    async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError>;

    /// Forgets jobs finished before `before`, and the events dispatched before it; returns
    /// how many rows went.
    async fn prune_jobs(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;

    /// What a pass at `at` finds waiting, of every team, read without doing any of it (a
    /// dry run, and the check that a runner can do what is due).
    async fn due_work(&self, at: DateTime<Utc>) -> Result<DueWork, StoreError>;
}

/// What is waiting for a job pass at an instant: the first things it would do, before
/// what they make due in turn (an event dispatched makes its deliveries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DueWork {
    /// Open invoices past their due date not announced overdue yet (each raises
    /// `invoice.overdue` if something is still due on it).
    pub overdue: u64,
    /// Invoices whose next reminder has come.
    pub reminders: u64,
    /// Events not handed to their subscribers yet.
    pub events: u64,
    /// Queued jobs due, by kind.
    pub mail: u64,
    pub webhooks: u64,
    pub agent: u64,
}

/// When each retry of a kind of job comes: the waits after the first, second, …
/// failures. After the last wait's attempt, a failure is final.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retries {
    waits: Vec<Duration>,
}

impl Retries {
    pub fn new(waits: Vec<Duration>) -> Self {
        Self { waits }
    }

    /// Attempts in all, the first included.
    pub fn max_attempts(&self) -> u32 {
        u32::try_from(self.waits.len()).unwrap_or(u32::MAX).saturating_add(1)
    }

    /// What becomes of attempt number `attempt` (from 1), which failed at `now` with
    /// `error`; a retry waits at least `at_least` (a receiver's `Retry-After`).
    pub fn after_failure(
        &self,
        attempt: u32,
        error: String,
        now: DateTime<Utc>,
        at_least: Option<Duration>,
    ) -> Finish {
        let index = usize::try_from(attempt.saturating_sub(1)).unwrap_or(usize::MAX);
        match self.waits.get(index) {
            Some(wait) => Finish::Retry { at: later(now, (*wait).max(at_least.unwrap_or_default())), error },
            None => Finish::Failed { error },
        }
    }

    /// The e-mail schedule: a minute, 5 minutes, 30 minutes, 2, 6 and 12 hours (seven
    /// attempts over about 21 hours), for a server that is down or a mailbox that is full.
    pub fn mail() -> Self {
        Self::new([60, 300, 1_800, 7_200, 21_600, 43_200].map(Duration::from_secs).to_vec())
    }

    /// Standard Webhooks' schedule: at once, then after 5 seconds, 5 minutes, 30 minutes,
    /// 2 hours, 5 hours, 10 hours and 10 hours (eight attempts over about 27 hours).
    pub fn webhooks() -> Self {
        Self::new([5, 300, 1_800, 7_200, 18_000, 36_000, 36_000].map(Duration::from_secs).to_vec())
    }

    /// The agent's runs of events, as the repository trigger retries its deliveries: 10
    /// seconds, doubling to at most 10 minutes, five attempts in all.
    pub fn agent() -> Self {
        Self::new([10, 20, 40, 80].map(Duration::from_secs).to_vec())
    }
}

/// `now` plus `wait`, or the latest instant representable.
pub fn later(now: DateTime<Utc>, wait: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(wait)
        .ok()
        .and_then(|wait| now.checked_add_signed(wait))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn webhooks_follow_the_standard_schedule_then_give_up() {
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
        let retries = Retries::webhooks();
        assert_eq!(retries.max_attempts(), 8);
        let waits: Vec<i64> = (1..=7)
            .map(|attempt| match retries.after_failure(attempt, "500".into(), now, None) {
                Finish::Retry { at, .. } => (at - now).num_seconds(),
                other => panic!("attempt {attempt}: {other:?}"),
            })
            .collect();
        assert_eq!(waits, [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000]);
        assert_eq!(retries.after_failure(8, "500".into(), now, None), Finish::Failed { error: "500".into() });
    }

    #[test]
    fn a_receivers_retry_after_is_honoured_when_longer() {
        let now = Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap();
        let retries = Retries::webhooks();
        let at = |wait| match retries.after_failure(1, "429".into(), now, Some(Duration::from_secs(wait))) {
            Finish::Retry { at, .. } => (at - now).num_seconds(),
            other => panic!("{other:?}"),
        };
        assert_eq!(at(120), 120);
        assert_eq!(at(1), 5, "never sooner than the schedule");
    }
}
