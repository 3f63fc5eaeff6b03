//! The worker of the repository trigger's durable queue: it runs accepted deliveries
//! through the agent, one at a time per conversation in arrival order, concurrently across
//! conversations, retries failed runs with backoff, and on start resumes what a stopped
//! process left queued or running.

use std::sync::Arc;
use std::time::Duration;

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::{Clock, StoreError};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use triggers::github::delivery::{before, ready_to_run};
use triggers::{
    Agent, AttemptResult, ClaimedDelivery, DeliveryQueue, DeliveryState, RetryPolicy, RunOutcome, RunRequest,
    TriggerKind,
};

/// How often the queue is looked at when nothing wakes the worker (another process may
/// share the database; a retry may come due).
const IDLE_POLL: Duration = Duration::from_secs(5);
/// The oldest pending deliveries planned with at a time: enough to keep every run slot
/// busy, few enough that a large backlog costs each look at the queue little. Newer
/// deliveries wait for the oldest to clear, which keeps arrival order anyway.
const PLANNING_WINDOW: u32 = 256;
/// How often old dedupe records and log entries are pruned.
const PRUNE_EVERY: Duration = Duration::from_hours(1);
/// Finished log entries are kept at least this long.
const LOG_RETENTION: Duration = Duration::from_hours(30 * 24);

/// What the worker needs besides its ports.
#[derive(Debug, Clone, Copy)]
pub struct WorkerSettings {
    /// Runs started at once at most (the runtime's `limits.max_concurrent_runs`).
    pub max_running: usize,
    pub retry: RetryPolicy,
    /// The longest dedupe window of the repository triggers.
    pub dedupe_window: Duration,
}

/// Runs the queue of one team. Cheap to clone.
#[derive(Clone)]
pub struct DeliveryWorker {
    inner: Arc<Inner>,
}

struct Inner {
    team: TeamId,
    queue: Arc<dyn DeliveryQueue>,
    agent: Arc<dyn Agent>,
    clock: Arc<dyn Clock>,
    settings: WorkerSettings,
    wake: Notify,
}

impl std::fmt::Debug for DeliveryWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeliveryWorker")
            .field("team", &self.inner.team)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl DeliveryWorker {
    pub fn new(
        team: TeamId,
        queue: Arc<dyn DeliveryQueue>,
        agent: Arc<dyn Agent>,
        clock: Arc<dyn Clock>,
        settings: WorkerSettings,
    ) -> Self {
        Self { inner: Arc::new(Inner { team, queue, agent, clock, settings, wake: Notify::new() }) }
    }

    /// Tells the worker a delivery was accepted; it looks at the queue at once.
    pub fn wake(&self) {
        self.inner.wake.notify_one();
    }

    /// Resumes what a stopped process left, then runs the queue until the process stops
    /// or the task is aborted (which aborts the runs it started, as a crash would).
    pub fn spawn(&self) -> tokio::task::JoinHandle<()> {
        let worker = self.clone();
        tokio::spawn(async move { worker.run().await })
    }

    async fn run(self) {
        match self.inner.queue.requeue_interrupted(self.inner.team).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "resuming deliveries a stopped process was running"),
            Err(error) => tracing::error!(error = ?error, "cannot resume interrupted deliveries"),
        }
        let mut next_prune = tokio::time::Instant::now();
        let mut attempts = JoinSet::new();
        loop {
            if tokio::time::Instant::now() >= next_prune {
                self.prune().await;
                next_prune += PRUNE_EVERY;
            }
            let wait = match self.start_ready(&mut attempts).await {
                Ok(Some(due)) => (due - self.inner.clock.now()).to_std().unwrap_or_default().min(IDLE_POLL),
                Ok(None) => IDLE_POLL,
                Err(error) => {
                    tracing::error!(error = ?error, "cannot read the delivery queue");
                    Duration::from_secs(1)
                }
            };
            // A finished attempt may let its conversation's next delivery go.
            tokio::select! {
                _ = tokio::time::timeout(wait, self.inner.wake.notified()) => {}
                Some(_) = attempts.join_next() => {}
            }
        }
    }

    /// Starts every delivery that may run now; returns when the next queued one comes due.
    async fn start_ready(&self, attempts: &mut JoinSet<()>) -> Result<Option<DateTime<Utc>>, StoreError> {
        let inner = &self.inner;
        let pending = inner.queue.pending_deliveries(inner.team, PLANNING_WINDOW).await?;
        let now = inner.clock.now();
        for id in ready_to_run(&pending, now, inner.settings.max_running) {
            if let Some(claimed) = inner.queue.claim_delivery(inner.team, id).await? {
                let worker = self.clone();
                attempts.spawn(async move { worker.attempt(claimed).await });
            }
        }
        Ok(pending
            .iter()
            .filter(|d| d.state == DeliveryState::Queued && d.next_attempt_at > now)
            .map(|d| d.next_attempt_at)
            .min())
    }

    async fn attempt(&self, claimed: ClaimedDelivery) {
        let inner = &self.inner;
        let retry = inner.settings.retry;
        let result = if claimed.attempts > retry.max_attempts {
            // Every earlier attempt was cut short by a stopped process.
            AttemptResult::Failed {
                run: None,
                error: format!("gave up after {} interrupted attempts", retry.max_attempts),
            }
        } else {
            let request = RunRequest { input: claimed.input, conversation: claimed.conversation };
            let outcome = inner.agent.run(TriggerKind::Github, request).await;
            let failed = |run, error| retry.after_failure(claimed.attempts, run, error, inner.clock.now());
            match outcome {
                RunOutcome::Replied { run, .. } => AttemptResult::Done { run: Some(run) },
                RunOutcome::Failed { run, error } => failed(Some(run), error),
                RunOutcome::TimedOut { run } => {
                    failed(Some(run), "the run took longer than limits.run_timeout".into())
                }
                RunOutcome::Rejected { .. } => failed(None, "the conversation's queue was full".into()),
            }
        };
        match &result {
            AttemptResult::Done { .. } => tracing::info!(delivery = %claimed.delivery, "delivery ran"),
            AttemptResult::Retry { error, at, .. } => {
                tracing::warn!(delivery = %claimed.delivery, %error, retry_at = %at, "delivery failed; will retry");
            }
            AttemptResult::Failed { error, .. } => {
                tracing::error!(delivery = %claimed.delivery, %error, attempts = claimed.attempts, "delivery failed for good");
            }
        }
        // The row stays `running` until this lands, holding its conversation: insist.
        for wait in [0, 1, 2, 4, 8] {
            tokio::time::sleep(Duration::from_secs(wait)).await;
            match inner.queue.finish_attempt(inner.team, claimed.id, &result, inner.clock.now()).await {
                Ok(()) => return,
                Err(error) => {
                    tracing::error!(delivery = %claimed.delivery, error = ?error, "cannot record the attempt");
                }
            }
        }
    }

    async fn prune(&self) {
        let inner = &self.inner;
        let now = inner.clock.now();
        let ago = |span| before(now, span);
        let log_before = ago(LOG_RETENTION.max(inner.settings.dedupe_window));
        match inner.queue.prune_deliveries(inner.team, ago(inner.settings.dedupe_window), log_before).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "pruned old delivery records"),
            Err(error) => tracing::warn!(error = ?error, "cannot prune delivery records"),
        }
    }
}
