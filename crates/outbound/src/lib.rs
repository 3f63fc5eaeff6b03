//! What reaches out of billable: the runner of the durable job queue, which sends e-mail
//! over SMTP ([`mail`]), delivers signed webhooks ([`webhook`]) and runs the agent on
//! events of the books; and, on each pass, the schedules that feed the queue (invoices
//! found overdue, reminders come due, events handed to their subscribers).
//!
//! A pass uses two clocks. Business time (the runner's [`Clock`]) decides what is due and
//! stamps what happens; `billable jobs run --at` sets it. Leases are real time, so a pass
//! run for a day in the future never takes a job that a live process holds.

pub mod mail;
pub mod webhook;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel::{Clock, Id, StoreError};
use notify::jobs::{Claim, later};
use notify::reminders::ComposeReminder;
use notify::webhooks::{Answer, answer};
use notify::{ClaimedJob, EventId, Finish, JobKind, NotifyStore, Retries};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use triggers::{Agent, ConversationKey, RunOutcome, RunRequest, ToolChoice, TriggerKind};

pub use mail::{Mailer, SendFailure, SmtpSettings, SmtpTls};
pub use webhook::WebhookSender;

/// How the runner works.
#[derive(Debug, Clone)]
pub struct RunnerSettings {
    /// How long a claimed job stays leased without a renewal: how soon another process
    /// takes over the jobs of one that died. Renewed every third of it.
    pub lease: Duration,
    /// Jobs run at once, at most.
    pub concurrency: usize,
    /// How often the queue is looked at when nothing wakes the runner (another replica may
    /// have queued a job, a retry may have come due), and the schedules are read.
    pub poll: Duration,
    /// Finished jobs and dispatched events are kept this long.
    pub retention: Duration,
}

impl Default for RunnerSettings {
    fn default() -> Self {
        Self {
            lease: Duration::from_mins(1),
            concurrency: 16,
            poll: Duration::from_secs(1),
            retention: Duration::from_hours(30 * 24),
        }
    }
}

/// The agent the runner wakes with events, and the tools its runs may call.
#[derive(Clone)]
pub struct AgentJobs {
    pub agent: Arc<dyn Agent>,
    pub tools: ToolChoice,
}

impl std::fmt::Debug for AgentJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentJobs").finish_non_exhaustive()
    }
}

/// E-mail: the mailer, and the wording of the reminders the policy sends.
#[derive(Clone)]
pub struct MailJobs {
    pub mailer: Mailer,
    pub reminders: Arc<dyn ComposeReminder>,
}

impl std::fmt::Debug for MailJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MailJobs").field("mailer", &self.mailer).finish_non_exhaustive()
    }
}

/// Work of the books a pass does at the business clock's instant, beside the queue's own
/// schedules: the invoices recurring invoices make (and the mail of those to be sent). The
/// app wires it; this crate only calls it.
#[async_trait::async_trait]
pub trait BookWork: Send + Sync {
    /// Does what is due at `now`; how many invoices it made.
    async fn run_due(&self, now: DateTime<Utc>) -> Result<u32, StoreError>;
}

/// What passes did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Invoices made by recurring invoices.
    pub generated: u32,
    /// Invoices announced overdue.
    pub overdue: u32,
    /// Reminders queued by the policy.
    pub reminders: u32,
    /// Events handed to their subscribers.
    pub dispatched: u32,
    /// Jobs done.
    pub done: u32,
    /// Jobs that failed and will be tried again.
    pub retried: u32,
    /// Jobs that failed for good.
    pub failed: u32,
}

impl PassReport {
    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Done => self.done += 1,
            Outcome::Retried => self.retried += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Lost => {}
        }
    }

    /// Whether the pass found anything to do.
    fn did_something(&self) -> bool {
        *self != Self::default()
    }
}

/// How one job's attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Done,
    Retried,
    Failed,
    /// Its lease ended and another process took it.
    Lost,
}

impl From<&Finish> for Outcome {
    fn from(finish: &Finish) -> Self {
        match finish {
            Finish::Done => Self::Done,
            Finish::Retry { .. } => Self::Retried,
            Finish::Failed { .. } => Self::Failed,
        }
    }
}

/// Runs the job queue. Cheap to clone.
#[derive(Clone)]
pub struct JobRunner {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    store: Arc<dyn NotifyStore>,
    clock: Arc<dyn Clock>,
    /// Rung by the store after each write that records an event or queues a job.
    signal: Arc<Notify>,
    webhooks: WebhookSender,
    mail: Option<MailJobs>,
    agent: Option<AgentJobs>,
    books: Option<Arc<dyn BookWork>>,
    settings: RunnerSettings,
}

impl std::fmt::Debug for JobRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobRunner")
            .field("settings", &self.inner.settings)
            .field("mail", &self.inner.mail)
            .field("agent", &self.inner.agent.is_some())
            .finish_non_exhaustive()
    }
}

/// The most rows one look at a schedule takes; a pass looks again while it is full.
const BATCH: u32 = 100;

impl JobRunner {
    /// A runner of the queue in `store`, on business time `clock`, woken by `signal`. It
    /// runs webhook deliveries; e-mail and the agent's runs only when given.
    pub fn new(
        store: Arc<dyn NotifyStore>,
        clock: Arc<dyn Clock>,
        signal: Arc<Notify>,
        webhooks: WebhookSender,
        mail: Option<MailJobs>,
        agent: Option<AgentJobs>,
        settings: RunnerSettings,
    ) -> Self {
        Self { inner: Arc::new(Inner { store, clock, signal, webhooks, mail, agent, books: None, settings }) }
    }

    /// The same runner, doing `books` on each full pass too.
    #[must_use]
    pub fn with_books(self, books: Arc<dyn BookWork>) -> Self {
        let inner = (*self.inner).clone();
        Self { inner: Arc::new(Inner { books: Some(books), ..inner }) }
    }

    /// The kinds of job this runner can run.
    fn kinds(&self) -> Vec<JobKind> {
        let inner = &self.inner;
        let mut kinds = vec![JobKind::Webhook];
        if inner.mail.is_some() {
            kinds.push(JobKind::Mail);
        }
        if inner.agent.is_some() {
            kinds.push(JobKind::Agent);
        }
        kinds
    }

    /// Runs everything due at the clock's instant, and what that makes due, until nothing
    /// more is; then returns what it did. What `billable jobs run --at` runs.
    pub async fn run_due(&self) -> Result<PassReport, StoreError> {
        let mut report = PassReport::default();
        loop {
            let mut pass = self.schedules(true).await?;
            let claimed = self.claim(self.inner.settings.concurrency.max(1)).await?;
            let mut running = JoinSet::new();
            for job in claimed {
                let runner = self.clone();
                running.spawn(async move { runner.execute(job).await });
            }
            while let Some(outcome) = running.join_next().await {
                pass.add(outcome.unwrap_or(Outcome::Lost));
            }
            if !pass.did_something() {
                return Ok(report);
            }
            report.generated += pass.generated;
            report.overdue += pass.overdue;
            report.reminders += pass.reminders;
            report.dispatched += pass.dispatched;
            report.done += pass.done;
            report.retried += pass.retried;
            report.failed += pass.failed;
        }
    }

    /// Runs the queue until the task is aborted (which stops the jobs it runs as a crash
    /// would: their leases end, and another process takes them over).
    pub fn spawn(&self) -> tokio::task::JoinHandle<()> {
        self.spawn_until(std::future::pending())
    }

    /// Runs the queue until `stop` completes, then claims no more jobs, lets the ones it
    /// runs finish and ends; or until the task is aborted, as [`Self::spawn`].
    pub fn spawn_until(
        &self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let runner = self.clone();
        tokio::spawn(async move { runner.run(stop).await })
    }

    async fn run(self, stop: impl Future<Output = ()>) {
        let mut stop = std::pin::pin!(stop);
        let mut stopping = false;
        let settings = self.inner.settings.clone();
        let mut running: JoinSet<Outcome> = JoinSet::new();
        let mut next_schedules = tokio::time::Instant::now();
        let mut next_prune = tokio::time::Instant::now();
        // Whether to look at the events and schedules on this turn: not when a job only
        // finished, whose turn is for claiming the next ones.
        let mut look = true;
        loop {
            if stopping {
                let left = running.len();
                while running.join_next().await.is_some() {}
                tracing::info!(finished = left, "job runner stopped");
                return;
            }
            let now = tokio::time::Instant::now();
            if now >= next_prune {
                self.prune().await;
                next_prune = now + Duration::from_hours(1);
            }
            // The overdue and reminder schedules once per poll; the events at every wake.
            let full = now >= next_schedules;
            if full {
                next_schedules = now + settings.poll;
            }
            if (look || full)
                && let Err(error) = self.schedules(full).await
            {
                tracing::error!(error = format!("{error:#}"), "cannot read the schedules");
            }
            // Every job that finished meanwhile makes room. A claim is a transaction of its
            // own, so a busy runner claims a quarter of its slots at a time, not one per job.
            while running.try_join_next().is_some() {}
            let free = settings.concurrency.saturating_sub(running.len());
            if free > 0 && (look || running.is_empty() || free >= settings.concurrency.div_ceil(4)) {
                match self.claim(free).await {
                    Ok(jobs) => {
                        for job in jobs {
                            let runner = self.clone();
                            running.spawn(async move { runner.execute(job).await });
                        }
                    }
                    Err(error) => tracing::error!(error = format!("{error:#}"), "cannot claim jobs"),
                }
            }
            look = tokio::select! {
                () = &mut stop => {
                    stopping = true;
                    false
                }
                () = self.inner.signal.notified() => true,
                () = tokio::time::sleep_until(next_schedules) => true,
                Some(_) = running.join_next(), if !running.is_empty() => false,
            };
        }
    }

    /// Makes the invoices recurring invoices are due for, announces overdue invoices and
    /// queues due reminders (`full`), and dispatches the events waiting, at the clock's
    /// instant.
    async fn schedules(&self, full: bool) -> Result<PassReport, StoreError> {
        let inner = &self.inner;
        let now = inner.clock.now();
        let mut report = PassReport::default();
        if full {
            // The books' own work fails on its own: the overdue and reminder schedules and
            // the events still run.
            if let Some(books) = &inner.books {
                match books.run_due(now).await {
                    Ok(made) => report.generated += made,
                    Err(error) => {
                        tracing::error!(
                            error = format!("{error:#}"),
                            "cannot make the invoices of recurring invoices"
                        );
                    }
                }
            }
            loop {
                let marked = inner.store.mark_overdue(now, BATCH).await?;
                report.overdue += marked;
                if marked < BATCH {
                    break;
                }
            }
            if let Some(mail) = &inner.mail {
                loop {
                    let queued = inner.store.queue_due_reminders(now, &*mail.reminders, BATCH).await?;
                    report.reminders += queued;
                    if queued < BATCH {
                        break;
                    }
                }
            }
        }
        loop {
            let dispatched = inner.store.dispatch_events(BATCH * 5, now).await?;
            report.dispatched += dispatched;
            if dispatched < BATCH * 5 {
                break;
            }
        }
        Ok(report)
    }

    /// Claims up to `limit` jobs due now, leased from the real time now.
    async fn claim(&self, limit: usize) -> Result<Vec<ClaimedJob>, StoreError> {
        let inner = &self.inner;
        let real = Utc::now();
        let claim = Claim {
            kinds: self.kinds(),
            due: inner.clock.now(),
            now: real,
            lease_until: later(real, inner.settings.lease),
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
        };
        inner.store.claim_jobs(&claim).await
    }

    /// Runs `job`, renewing its lease while it runs; stops it when the lease is lost.
    async fn execute(self, job: ClaimedJob) -> Outcome {
        tokio::select! {
            outcome = self.handle(&job) => outcome,
            () = self.keep_lease(&job) => {
                tracing::warn!(job = %job.id, kind = job.kind.as_str(), "lost the job's lease; left it to the process that took it");
                Outcome::Lost
            }
        }
    }

    /// Renews `job`'s lease every third of it; returns once it is lost, or may be.
    async fn keep_lease(&self, job: &ClaimedJob) {
        let lease = self.inner.settings.lease;
        let mut held_until = later(Utc::now(), lease);
        loop {
            tokio::time::sleep(lease / 3).await;
            let until = later(Utc::now(), lease);
            match self.inner.store.renew_job(job, until).await {
                Ok(true) => held_until = until,
                Ok(false) => return,
                Err(error) if Utc::now() >= held_until => {
                    tracing::warn!(job = %job.id, error = format!("{error:#}"), "cannot renew the lease, which has ended");
                    return;
                }
                Err(error) => {
                    tracing::warn!(job = %job.id, error = format!("{error:#}"), "cannot renew the lease");
                }
            }
        }
    }

    async fn handle(&self, job: &ClaimedJob) -> Outcome {
        let result = match job.kind {
            JobKind::Mail => self.mail(job).await,
            JobKind::Webhook => self.webhook(job).await,
            JobKind::Agent => self.agent(job).await,
        };
        result.unwrap_or_else(|error| {
            // The job stays running until its lease ends; then it is taken again.
            tracing::error!(job = %job.id, kind = job.kind.as_str(), error = format!("{error:#}"), "a job could not be recorded");
            Outcome::Lost
        })
    }

    /// `finish` as recorded, or `Lost` when the attempt no longer held the job.
    fn recorded(held: bool, finish: &Finish) -> Outcome {
        if held { Outcome::from(finish) } else { Outcome::Lost }
    }

    async fn mail(&self, job: &ClaimedJob) -> Result<Outcome, StoreError> {
        let inner = &self.inner;
        let Some(mail) = &inner.mail else { return Ok(Outcome::Lost) };
        let retries = Retries::mail();
        let Some(outgoing) = inner.store.start_sending(job).await? else {
            // Sent or failed already, or deleted with its invoice.
            let finish = Finish::Done;
            return Ok(Self::recorded(
                inner.store.finish_job(job, &finish, inner.clock.now()).await?,
                &finish,
            ));
        };
        let message = &outgoing.message;
        let finish = if let Some(reason) = outgoing.moot {
            tracing::info!(message = %message.id, reason, "a reminder no longer applies; not sent");
            Finish::Failed { error: format!("not sent: {reason}") }
        } else if job.attempt > retries.max_attempts() {
            Finish::Failed { error: format!("gave up after {} interrupted attempts", job.attempt - 1) }
        } else {
            for attachment in &message.attachments {
                tracing::info!(message = %message.id, file = %attachment.filename, size = attachment.size,
                    sha256 = %attachment.sha256, "sending attachment");
            }
            match mail.mailer.send(&outgoing).await {
                Ok(()) => {
                    tracing::info!(message = %message.id, message_id = %message.message_id, kind = message.kind.as_str(),
                        attempt = job.attempt, "message sent");
                    Finish::Done
                }
                Err(SendFailure::Permanent(reply)) => {
                    tracing::warn!(message = %message.id, %reply, "the SMTP server refused the message for good");
                    Finish::Failed { error: reply }
                }
                Err(SendFailure::Temporary(reason)) => {
                    let finish = retries.after_failure(job.attempt, reason.clone(), inner.clock.now(), None);
                    tracing::warn!(message = %message.id, %reason, attempt = job.attempt, "the message could not be sent");
                    finish
                }
            }
        };
        let held = inner.store.finish_sending(job, &finish, inner.clock.now()).await?;
        Ok(Self::recorded(held, &finish))
    }

    async fn webhook(&self, job: &ClaimedJob) -> Result<Outcome, StoreError> {
        let inner = &self.inner;
        let now = inner.clock.now();
        let retries = Retries::webhooks();
        let Some(delivery) = inner.store.start_delivery(job).await? else {
            // Deleted with its endpoint.
            let finish = Finish::Done;
            return Ok(Self::recorded(inner.store.finish_job(job, &finish, now).await?, &finish));
        };
        // Disabled, or the event is no longer the endpoint's maker's to read: recorded
        // failed with why, and nothing is sent.
        if let Some(error) = delivery.refusal() {
            let report = notify::webhooks::AttemptReport {
                response_status: None,
                duration_ms: 0,
                error: Some(error.clone()),
            };
            let finish = Finish::Failed { error };
            return Ok(Self::recorded(
                inner.store.finish_delivery(job, &report, &finish, None, now).await?,
                &finish,
            ));
        }
        let attempt = inner.webhooks.attempt(&delivery, now).await;
        let now = inner.clock.now();
        let error = attempt.report.error.clone().unwrap_or_default();
        let (finish, disable) = match answer(attempt.report.response_status, attempt.retry_after) {
            Answer::Delivered => (Finish::Done, None),
            Answer::Gone => (Finish::Failed { error }, Some("the receiver answered 410 Gone")),
            Answer::Retry { at_least } => (retries.after_failure(job.attempt, error, now, at_least), None),
        };
        tracing::info!(delivery = %delivery.delivery.id, event = %delivery.event.id, kind = delivery.event.kind.as_str(),
            status = ?attempt.report.response_status, attempt = job.attempt, outcome = ?Outcome::from(&finish), "webhook attempt");
        let held = inner.store.finish_delivery(job, &attempt.report, &finish, disable, now).await?;
        Ok(Self::recorded(held, &finish))
    }

    async fn agent(&self, job: &ClaimedJob) -> Result<Outcome, StoreError> {
        let inner = &self.inner;
        let Some(agent) = &inner.agent else { return Ok(Outcome::Lost) };
        let retries = Retries::agent();
        let Some(event) = inner.store.get_event(EventId::from_uuid(job.subject)).await? else {
            let finish = Finish::Done;
            return Ok(Self::recorded(
                inner.store.finish_job(job, &finish, inner.clock.now()).await?,
                &finish,
            ));
        };
        let finish = if job.attempt > retries.max_attempts() {
            Finish::Failed { error: format!("gave up after {} interrupted attempts", job.attempt - 1) }
        } else {
            let request = RunRequest {
                input: triggers::books::event_input(event.kind.as_str(), event.occurred_at, &event.data),
                conversation: ConversationKey::parse(&event.thread).ok(),
                tools: agent.tools.clone(),
                summary: Some(format!("{} {}", event.kind, event.subject)),
            };
            let failed = |error: String| retries.after_failure(job.attempt, error, inner.clock.now(), None);
            match agent.agent.run(TriggerKind::Events, request).await {
                RunOutcome::Replied { .. } => Finish::Done,
                RunOutcome::Failed { error, .. } => failed(error),
                RunOutcome::TimedOut { .. } => failed("the run took longer than limits.run_timeout".into()),
                RunOutcome::Rejected { .. } => failed("the conversation's queue was full".into()),
            }
        };
        tracing::info!(event = %event.id, kind = event.kind.as_str(), outcome = ?Outcome::from(&finish), "the agent ran an event");
        let held = inner.store.finish_job(job, &finish, inner.clock.now()).await?;
        Ok(Self::recorded(held, &finish))
    }

    async fn prune(&self) {
        let inner = &self.inner;
        let before = before(inner.clock.now(), inner.settings.retention);
        match inner.store.prune_jobs(before).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "pruned finished jobs and dispatched events"),
            Err(error) => tracing::warn!(error = format!("{error:#}"), "cannot prune jobs"),
        }
    }
}

/// `text`, then what caused `error`, each after a colon: what a failed attempt records.
fn with_causes(mut text: String, error: &dyn std::error::Error) -> String {
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The instant `span` before `now`.
fn before(now: DateTime<Utc>, span: Duration) -> DateTime<Utc> {
    chrono::TimeDelta::from_std(span)
        .ok()
        .and_then(|span| now.checked_sub_signed(span))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}
