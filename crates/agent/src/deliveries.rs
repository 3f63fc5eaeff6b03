//! The worker of the repository trigger's durable queue: it runs accepted deliveries
//! through the agent, one at a time per conversation in arrival order, concurrently across
//! conversations, retries failed runs with backoff. Several processes may run one team's
//! queue: a running delivery is leased to the process running it, which renews the lease
//! while the run goes on, and any process queues again a delivery whose lease ended (its
//! process stopped, or lost touch with the database), so the others take over its work.

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
    ToolChoice, TriggerKind,
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
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Runs started at once at most (the runtime's `limits.max_concurrent_runs`).
    pub max_running: usize,
    pub retry: RetryPolicy,
    /// The longest dedupe window of the repository triggers.
    pub dedupe_window: Duration,
    /// How long a claimed delivery stays leased without a renewal: how soon other
    /// processes take over the deliveries of one that died. Renewed every third of it.
    pub lease: Duration,
    /// The agent's tools the repository triggers' runs may call.
    pub tools: ToolChoice,
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

    /// Runs the queue until the process stops or the task is aborted (which aborts the runs
    /// it started, as a crash would), resuming deliveries whose lease ended on the way.
    pub fn spawn(&self) -> tokio::task::JoinHandle<()> {
        let worker = self.clone();
        tokio::spawn(async move { worker.run().await })
    }

    async fn run(self) {
        let mut next_prune = tokio::time::Instant::now();
        let mut next_requeue = tokio::time::Instant::now();
        let mut attempts = JoinSet::new();
        loop {
            if tokio::time::Instant::now() >= next_prune {
                self.prune().await;
                next_prune += PRUNE_EVERY;
            }
            if tokio::time::Instant::now() >= next_requeue {
                self.requeue_expired().await;
                next_requeue = tokio::time::Instant::now() + self.inner.settings.lease / 3;
            }
            let wait = match self.start_ready(&mut attempts).await {
                Ok(Some(due)) => {
                    (due - self.inner.clock.now()).to_std().unwrap_or_default().min(self.idle_poll())
                }
                Ok(None) => self.idle_poll(),
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

    /// How long the worker sleeps when nothing wakes it: so that it looks for deliveries
    /// whose lease ended at least as often as leases are renewed.
    fn idle_poll(&self) -> Duration {
        IDLE_POLL.min(self.inner.settings.lease / 3)
    }

    /// Queues again the deliveries whose process stopped renewing their lease.
    async fn requeue_expired(&self) {
        let inner = &self.inner;
        match inner.queue.requeue_expired(inner.team, inner.clock.now()).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "resuming deliveries whose process stopped running them"),
            Err(error) => tracing::error!(error = ?error, "cannot resume interrupted deliveries"),
        }
    }

    /// The end of a lease taken or renewed now.
    fn lease_until(&self) -> DateTime<Utc> {
        let now = self.inner.clock.now();
        chrono::TimeDelta::from_std(self.inner.settings.lease)
            .ok()
            .and_then(|lease| now.checked_add_signed(lease))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// Renews the lease of `claimed` every third of the lease; returns when it is lost, or
    /// may have been: when the last lease it could renew has ended.
    async fn keep_lease(&self, claimed: &ClaimedDelivery) {
        let inner = &self.inner;
        let mut held_until = self.lease_until();
        loop {
            tokio::time::sleep(inner.settings.lease / 3).await;
            let until = self.lease_until();
            match inner.queue.renew_lease(inner.team, claimed.id, claimed.attempts, until).await {
                Ok(true) => held_until = until,
                Ok(false) => return,
                Err(error) if inner.clock.now() >= held_until => {
                    tracing::warn!(delivery = %claimed.delivery, error = ?error, "cannot renew the lease, which has ended");
                    return;
                }
                // Tried again at the next renewal, while the lease lasts.
                Err(error) => {
                    tracing::warn!(delivery = %claimed.delivery, error = ?error, "cannot renew the lease");
                }
            }
        }
    }

    /// Starts every delivery that may run now; returns when the next queued one comes due.
    async fn start_ready(&self, attempts: &mut JoinSet<()>) -> Result<Option<DateTime<Utc>>, StoreError> {
        let inner = &self.inner;
        let pending = inner.queue.pending_deliveries(inner.team, PLANNING_WINDOW).await?;
        let now = inner.clock.now();
        for id in ready_to_run(&pending, now, inner.settings.max_running) {
            if let Some(claimed) = inner.queue.claim_delivery(inner.team, id, self.lease_until()).await? {
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
            let request = RunRequest {
                input: claimed.input.clone(),
                conversation: claimed.conversation.clone(),
                tools: inner.settings.tools.clone(),
                summary: Some(claimed.summary.clone()),
            };
            let outcome = tokio::select! {
                outcome = inner.agent.run(TriggerKind::Github, request) => outcome,
                () = self.keep_lease(&claimed) => {
                    // Queued again by another process, which runs it now: stop here.
                    tracing::warn!(delivery = %claimed.delivery, "lost the delivery's lease; stopped its run, leaving it to the process that took it");
                    return;
                }
            };
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
            let at = inner.clock.now();
            match inner.queue.finish_attempt(inner.team, claimed.id, claimed.attempts, &result, at).await {
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
