//! Sending and chasing in memory: the event log, the job queue, messages, reminders and
//! webhooks, held to the same contract as the SQL adapter. Every operation holds the one
//! lock, so each is a transaction; the job queue's leases still matter (a process may
//! abandon a job it claimed).

use std::collections::{HashMap, HashSet};

use accounts::TeamId;
use async_trait::async_trait;
use billing::{Invoice, InvoiceId, InvoiceStatus};
use chrono::{DateTime, Utc};
use kernel::Replaced;
use kernel::{Id, StoreError};
use notify::jobs::{Claim, NewJob};
use notify::mail::{Concerning, QueueMessageError, RetryMessageError};
use notify::reminders::{ComposeReminder, ReminderStep, ReminderStore};
use notify::store::EventStore;
use notify::webhooks::{AttemptReport, DeliveryFilter, Disabled, OutgoingDelivery, RedeliverError, is_for};
use notify::{
    Attachment, ClaimedJob, DeliveryStatus, Event, EventFilter, EventId, Finish, Job, JobFilter, JobKind,
    JobQueue, JobState, Message, MessageFilter, MessageId, MessageKind, MessageStatus, MessageStore,
    NewEvent, NewMessage, OutgoingMail, ReminderPolicy, Schedule, WebhookDelivery, WebhookDeliveryId,
    WebhookEndpoint, WebhookEndpointId, WebhookStore,
};

use crate::{MemoryStore, State};

/// What sending and chasing keep in memory.
#[derive(Debug, Default)]
pub(crate) struct Chasing {
    events: Vec<Event>,
    next_seq: i64,
    agent_subscriptions: HashMap<TeamId, EventFilter>,
    jobs: Vec<Job>,
    messages: Vec<(Message, Vec<Attachment>)>,
    policies: HashMap<TeamId, ReminderPolicy>,
    /// (invoice, step) of every reminder step handled.
    reminder_steps: HashSet<(InvoiceId, i32)>,
    /// The invoices announced overdue, with the due date that had passed.
    overdue: HashMap<InvoiceId, Option<DateTime<Utc>>>,
    endpoints: Vec<WebhookEndpoint>,
    deliveries: Vec<WebhookDelivery>,
}

impl State {
    /// Records `events` in the log, in order.
    pub(crate) fn record(&mut self, events: Vec<NewEvent>) {
        for event in events {
            self.chasing.next_seq += 1;
            self.chasing.events.push(Event {
                seq: self.chasing.next_seq,
                id: event.id,
                team_id: event.team_id,
                kind: event.kind,
                subject: event.subject,
                thread: event.thread,
                data: event.data,
                owner: event.owner,
                occurred_at: event.occurred_at,
                dispatched: false,
            });
        }
    }

    /// `user` of `team` as the team has them now, or `None` when no longer in it.
    pub(crate) fn actor(&self, team: TeamId, user: accounts::UserId) -> Option<tracking::Actor> {
        let user = self.users.iter().find(|u| u.team_id == team && u.id == user)?;
        Some(tracking::Actor { user_id: user.id, role: user.role })
    }

    fn queue_job(&mut self, job: NewJob) {
        let (thread, seq) = job.order.map_or((None, None), |(thread, seq)| (Some(thread), Some(seq)));
        self.chasing.jobs.push(Job {
            id: job.id,
            team_id: job.team_id,
            kind: job.kind,
            subject: job.subject,
            thread,
            seq,
            state: JobState::Queued,
            attempts: 0,
            run_at: job.run_at,
            lease_until: None,
            last_error: None,
            created_at: job.run_at,
            finished_at: None,
        });
    }

    fn policy(&self, team: TeamId) -> ReminderPolicy {
        self.chasing.policies.get(&team).cloned().unwrap_or_default()
    }

    /// The team's reminder policy.
    pub(crate) fn chasing_policy(&self, team: TeamId) -> ReminderPolicy {
        self.policy(team)
    }

    /// Forgets that the invoice was announced overdue (its due date changed).
    pub(crate) fn forget_overdue(&mut self, invoice: InvoiceId) {
        self.chasing.overdue.remove(&invoice);
    }

    /// Drops the messages of a deleted invoice.
    pub(crate) fn drop_messages_of(&mut self, invoice: InvoiceId) {
        self.chasing.messages.retain(|(m, _)| m.about.invoice() != Some(invoice));
    }

    /// Sets the next reminder of the team's invoices that `pick` picks, as the policy, their
    /// books, their due dates and their clients' consent say.
    pub(crate) fn refresh_reminders(&mut self, team: TeamId, pick: impl Fn(&Invoice) -> bool) {
        let policy = self.policy(team);
        let consent: HashMap<billing::ClientId, bool> = self
            .clients
            .iter()
            .filter(|c| c.team_id == team)
            .map(|c| (c.id, c.details.reminders_enabled))
            .collect();
        for invoice in self.invoices.iter_mut().filter(|i| i.team_id == team && pick(i)) {
            let done = invoice.chasing.reminder_step.and_then(ReminderStep::new);
            let takes = consent.get(&invoice.client_id).copied().unwrap_or(false);
            invoice.chasing.next_reminder_at = Schedule::of(invoice, takes, done).next_at(&policy);
        }
    }

    /// The team's invoice `id` as stored.
    pub(crate) fn invoice(&self, team: TeamId, id: InvoiceId) -> Option<&Invoice> {
        self.invoices.iter().find(|i| i.team_id == team && i.id == id)
    }

    fn message_mut(&mut self, team: TeamId, id: MessageId) -> Option<&mut (Message, Vec<Attachment>)> {
        self.chasing.messages.iter_mut().find(|(m, _)| m.team_id == team && m.id == id)
    }

    fn insert_message(&mut self, new: &NewMessage) {
        let message = Message { status: MessageStatus::Queued, attempts: 0, ..new.message.clone() };
        let job = NewJob::new(message.team_id, JobKind::Mail, message.id.as_uuid(), message.queued_at);
        self.chasing.messages.push((message, new.attachments.clone()));
        self.queue_job(job);
    }

    /// The job of `claimed`'s attempt, while that attempt holds it.
    fn held_job(&mut self, claimed: &ClaimedJob) -> Option<&mut Job> {
        self.chasing.jobs.iter_mut().find(|job| {
            job.team_id == claimed.team_id
                && job.id == claimed.id
                && job.state == JobState::Running
                && job.attempts == claimed.attempt
        })
    }

    fn finish_job(&mut self, claimed: &ClaimedJob, finish: &Finish, at: DateTime<Utc>) -> bool {
        let Some(job) = self.held_job(claimed) else { return false };
        job.lease_until = None;
        match finish {
            Finish::Done => {
                job.state = JobState::Done;
                job.finished_at = Some(at);
            }
            Finish::Retry { at: retry_at, error } => {
                job.state = JobState::Queued;
                job.run_at = *retry_at;
                job.last_error = Some(error.clone());
            }
            Finish::Failed { error } => {
                job.state = JobState::Failed;
                job.last_error = Some(error.clone());
                job.finished_at = Some(at);
            }
        }
        true
    }
}

impl MemoryStore {
    /// Runs `change` on the state under the lock, then rings the job signal.
    fn signalled<T>(&self, change: impl FnOnce(&mut State) -> T) -> T {
        let answer = change(&mut self.state());
        self.signal.notify_one();
        answer
    }
}

#[async_trait]
impl EventStore for MemoryStore {
    async fn dispatch_events(&self, limit: u32, at: DateTime<Utc>) -> Result<u32, StoreError> {
        let dispatched = self.signalled(|state| {
            let waiting: Vec<Event> =
                state.chasing.events.iter().filter(|e| !e.dispatched).take(limit as usize).cloned().collect();
            for event in &waiting {
                // Only what the endpoint's maker may read (`is_for`).
                let endpoints: Vec<WebhookEndpointId> = state
                    .chasing
                    .endpoints
                    .iter()
                    .filter(|e| {
                        let reader = state.actor(e.team_id, e.created_by);
                        e.team_id == event.team_id
                            && e.disabled.is_none()
                            && e.events.matches(event.kind)
                            && is_for(reader.as_ref(), event.kind, event.owner)
                    })
                    .map(|e| e.id)
                    .collect();
                for endpoint in endpoints {
                    let delivery =
                        WebhookDelivery::pending(event.team_id, endpoint, event.id, event.kind, at);
                    state.queue_job(NewJob::new(event.team_id, JobKind::Webhook, delivery.id.as_uuid(), at));
                    state.chasing.deliveries.push(delivery);
                }
                if state
                    .chasing
                    .agent_subscriptions
                    .get(&event.team_id)
                    .is_some_and(|f| f.matches(event.kind))
                {
                    let job = NewJob {
                        order: Some((event.thread.clone(), event.seq)),
                        ..NewJob::new(event.team_id, JobKind::Agent, event.id.as_uuid(), at)
                    };
                    state.queue_job(job);
                }
            }
            let seqs: HashSet<i64> = waiting.iter().map(|e| e.seq).collect();
            for event in state.chasing.events.iter_mut().filter(|e| seqs.contains(&e.seq)) {
                event.dispatched = true;
            }
            u32::try_from(waiting.len()).unwrap_or(u32::MAX)
        });
        Ok(dispatched)
    }

    async fn get_event(&self, id: EventId) -> Result<Option<Event>, StoreError> {
        Ok(self.state().chasing.events.iter().find(|e| e.id == id).cloned())
    }

    async fn list_events(&self, team: TeamId, limit: u32) -> Result<Vec<Event>, StoreError> {
        let state = self.state();
        Ok(state
            .chasing
            .events
            .iter()
            .rev()
            .filter(|e| e.team_id == team)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn subscribe_agent(&self, team: TeamId, events: Option<&EventFilter>) -> Result<(), StoreError> {
        let mut state = self.state();
        match events {
            Some(filter) => state.chasing.agent_subscriptions.insert(team, filter.clone()),
            None => state.chasing.agent_subscriptions.remove(&team),
        };
        Ok(())
    }
}

#[async_trait]
impl JobQueue for MemoryStore {
    async fn claim_jobs(&self, claim: &Claim) -> Result<Vec<ClaimedJob>, StoreError> {
        let mut state = self.state();
        let claimable = |job: &Job| {
            claim.kinds.contains(&job.kind)
                && match job.state {
                    JobState::Queued => job.run_at <= claim.due,
                    JobState::Running => job.lease_until.is_some_and(|until| until < claim.now),
                    JobState::Done | JobState::Failed => false,
                }
        };
        let mut candidates: Vec<(DateTime<Utc>, JobId)> =
            state.chasing.jobs.iter().filter(|job| claimable(job)).map(|job| (job.run_at, job.id)).collect();
        candidates.sort();
        candidates.truncate(claim.limit as usize);
        let mut heads: HashMap<String, i64> = HashMap::new();
        for job in
            state.chasing.jobs.iter().filter(|j| matches!(j.state, JobState::Queued | JobState::Running))
        {
            if let (Some(thread), Some(seq)) = (&job.thread, job.seq) {
                let head = heads.entry(thread.clone()).or_insert(seq);
                *head = (*head).min(seq);
            }
        }
        let mut taken = Vec::new();
        for (_, id) in candidates {
            let Some(job) = state.chasing.jobs.iter_mut().find(|job| job.id == id) else { continue };
            let heads_its_thread = match (&job.thread, job.seq) {
                (Some(thread), Some(seq)) => heads.get(thread).is_none_or(|head| *head == seq),
                _ => true,
            };
            if !heads_its_thread {
                continue;
            }
            job.state = JobState::Running;
            job.attempts += 1;
            job.lease_until = Some(claim.lease_until);
            taken.push(ClaimedJob {
                id: job.id,
                team_id: job.team_id,
                kind: job.kind,
                subject: job.subject,
                attempt: job.attempts,
            });
        }
        Ok(taken)
    }

    async fn renew_job(&self, job: &ClaimedJob, lease_until: DateTime<Utc>) -> Result<bool, StoreError> {
        let mut state = self.state();
        Ok(state.held_job(job).map(|held| held.lease_until = Some(lease_until)).is_some())
    }

    async fn finish_job(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        Ok(self.signalled(|state| state.finish_job(job, finish, at)))
    }

    async fn list_jobs(&self, filter: &JobFilter) -> Result<Vec<Job>, StoreError> {
        let state = self.state();
        let mut jobs: Vec<Job> = state
            .chasing
            .jobs
            .iter()
            .filter(|job| {
                filter.team.is_none_or(|team| job.team_id == team)
                    && filter.state.is_none_or(|state| job.state == state)
                    && filter.kind.is_none_or(|kind| job.kind == kind)
            })
            .cloned()
            .collect();
        jobs.sort_by_key(|job| std::cmp::Reverse((job.created_at, job.id)));
        jobs.truncate(filter.limit as usize);
        Ok(jobs)
    }

    async fn due_work(&self, at: DateTime<Utc>) -> Result<notify::DueWork, StoreError> {
        let state = self.state();
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let announced = &state.chasing.overdue;
        let overdue = state.invoices.iter().filter(|i| {
            matches!(i.status, InvoiceStatus::Pending | InvoiceStatus::PaidPartial)
                && i.due_date.is_some_and(|due| due < at)
                && announced.get(&i.id) != Some(&i.due_date)
        });
        let jobs = |kind: JobKind| {
            let due =
                state.chasing.jobs.iter().filter(|job| job.kind == kind && job.state == JobState::Queued);
            count(due.filter(|job| job.run_at <= at).count())
        };
        Ok(notify::DueWork {
            overdue: count(overdue.count()),
            reminders: count(
                state
                    .invoices
                    .iter()
                    .filter(|i| i.chasing.next_reminder_at.is_some_and(|next| next <= at))
                    .count(),
            ),
            events: count(state.chasing.events.iter().filter(|e| !e.dispatched).count()),
            mail: jobs(JobKind::Mail),
            webhooks: jobs(JobKind::Webhook),
            agent: jobs(JobKind::Agent),
        })
    }

    async fn prune_jobs(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.state();
        let jobs_before = state.chasing.jobs.len();
        state.chasing.jobs.retain(|job| job.finished_at.is_none_or(|finished| finished >= before));
        // An event's deliveries go with it: one still to run keeps it, as does a job of its
        // own (the agent's run of it).
        let pending: HashSet<kernel::uuid::Uuid> = state
            .chasing
            .jobs
            .iter()
            .filter(|job| matches!(job.state, JobState::Queued | JobState::Running))
            .map(|job| job.subject)
            .chain(
                state
                    .chasing
                    .deliveries
                    .iter()
                    .filter(|delivery| delivery.status == DeliveryStatus::Pending)
                    .map(|delivery| delivery.event_id.as_uuid()),
            )
            .collect();
        let events_before = state.chasing.events.len();
        // Dispatched events are stamped with their occurrence here: old enough is gone.
        state.chasing.events.retain(|event| {
            !event.dispatched || event.occurred_at >= before || pending.contains(&event.id.as_uuid())
        });
        let kept: HashSet<EventId> = state.chasing.events.iter().map(|e| e.id).collect();
        state.chasing.deliveries.retain(|delivery| kept.contains(&delivery.event_id));
        let pruned = (jobs_before - state.chasing.jobs.len()) + (events_before - state.chasing.events.len());
        Ok(pruned as u64)
    }
}

type JobId = notify::JobId;

#[async_trait]
impl MessageStore for MemoryStore {
    async fn queue_message(&self, new: &NewMessage) -> Result<Message, QueueMessageError> {
        let mut state = self.state();
        let message = &new.message;
        let team = message.team_id;
        let found = match message.about {
            Concerning::Invoice(invoice) => state.invoice(team, invoice).is_some(),
            Concerning::CreditNote { invoice, note } => {
                state.invoice(team, invoice).is_some()
                    && state.credit_notes.iter().any(|n| n.team_id == team && n.id == note)
            }
            Concerning::Quote(quote) => state.quotes.iter().any(|q| q.team_id == team && q.id == quote),
        };
        if !found {
            return Err(QueueMessageError::NotFound);
        }
        state.insert_message(new);
        drop(state);
        self.signal.notify_one();
        Ok(Message { status: MessageStatus::Queued, attempts: 0, ..message.clone() })
    }

    async fn get_message(&self, team: TeamId, id: MessageId) -> Result<Option<Message>, StoreError> {
        let state = self.state();
        Ok(state
            .chasing
            .messages
            .iter()
            .find(|(m, _)| m.team_id == team && m.id == id)
            .map(|(m, _)| m.clone()))
    }

    async fn list_messages(&self, team: TeamId, filter: &MessageFilter) -> Result<Vec<Message>, StoreError> {
        let state = self.state();
        let mut messages: Vec<Message> = state
            .chasing
            .messages
            .iter()
            .map(|(m, _)| m)
            .filter(|m| {
                m.team_id == team
                    && filter.invoice.is_none_or(|invoice| m.about.invoice() == Some(invoice))
                    && filter.quote.is_none_or(|quote| m.about.quote() == Some(quote))
                    && filter.status.is_none_or(|status| m.status == status)
                    && filter.before.is_none_or(|before| m.id < before)
            })
            .cloned()
            .collect();
        messages.sort_by_key(|m| std::cmp::Reverse(m.id));
        messages.truncate(filter.limit as usize);
        Ok(messages)
    }

    async fn start_sending(&self, job: &ClaimedJob) -> Result<Option<OutgoingMail>, StoreError> {
        let mut state = self.state();
        let Some((message, attachments)) = state.message_mut(job.team_id, MessageId::from_uuid(job.subject))
        else {
            return Ok(None);
        };
        if !matches!(message.status, MessageStatus::Queued | MessageStatus::Sending) {
            return Ok(None);
        }
        message.status = MessageStatus::Sending;
        message.attempts += 1;
        let (message, attachments) = (message.clone(), attachments.clone());
        let moot = if message.kind == MessageKind::Reminder {
            message.about.invoice().and_then(|invoice| state.invoice(message.team_id, invoice)).and_then(
                |invoice| {
                    let consent = state
                        .clients
                        .iter()
                        .find(|c| c.team_id == invoice.team_id && c.id == invoice.client_id)
                        .is_none_or(|client| client.details.reminders_enabled);
                    notify::reminders::moot(invoice.balance.due().is_zero(), invoice.status, consent)
                },
            )
        } else {
            None
        };
        Ok(Some(OutgoingMail { message, attachments, moot }))
    }

    async fn finish_sending(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let describe = self.describe.clone();
        Ok(self.signalled(|state| {
            if !state.finish_job(job, finish, at) {
                return false;
            }
            let team = job.team_id;
            let Some((message, _)) = state.message_mut(team, MessageId::from_uuid(job.subject)) else {
                return true;
            };
            match finish {
                Finish::Done => {
                    message.status = MessageStatus::Sent;
                    message.sent_at = Some(at);
                    message.last_error = None;
                }
                Finish::Retry { error, .. } => {
                    message.status = MessageStatus::Queued;
                    message.last_error = Some(error.clone());
                    return true;
                }
                Finish::Failed { error } => {
                    message.status = MessageStatus::Failed;
                    message.last_error = Some(error.clone());
                }
            }
            let message = message.clone();
            let invoice_id = message.about.invoice();
            if let Some(invoice) =
                state.invoices.iter_mut().find(|i| i.team_id == team && Some(i.id) == invoice_id)
            {
                match (message.status, message.kind) {
                    (MessageStatus::Sent, MessageKind::Invoice) => {
                        invoice.chasing.sent_at.get_or_insert(at);
                    }
                    // A reminder that reached the client counts as sending the invoice.
                    (MessageStatus::Sent, MessageKind::Reminder) => {
                        invoice.chasing.reminders_sent += 1;
                        invoice.chasing.sent_at.get_or_insert(at);
                    }
                    _ => {}
                }
            }
            // Reminders start once the client has the invoice.
            if message.status == MessageStatus::Sent {
                state.refresh_reminders(team, |i| Some(i.id) == invoice_id);
            }
            let invoice = invoice_id.and_then(|invoice| state.invoice(team, invoice)).cloned();
            let events = notify::raise::message_finished(&message, invoice.as_ref()).events(&*describe, at);
            state.record(events);
            true
        }))
    }

    async fn mark_sent(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<Option<Invoice>, StoreError> {
        let describe = self.describe.clone();
        Ok(self.signalled(|state| {
            let stored = state.invoices.iter_mut().find(|i| i.team_id == team && i.id == invoice)?;
            if stored.chasing.sent_at.is_some() {
                return Some(stored.clone());
            }
            stored.chasing.sent_at = Some(at);
            state.refresh_reminders(team, |i| i.id == invoice);
            let marked = state.invoice(team, invoice).cloned()?;
            state.record(notify::raise::invoice_marked_sent(&marked).events(&*describe, at));
            Some(marked)
        }))
    }

    async fn retry_message(
        &self,
        team: TeamId,
        id: MessageId,
        at: DateTime<Utc>,
    ) -> Result<Message, RetryMessageError> {
        let mut state = self.state();
        let (message, _) = state.message_mut(team, id).ok_or(RetryMessageError::NotFound)?;
        if message.status != MessageStatus::Failed {
            return Err(RetryMessageError::NotFailed(message.status));
        }
        message.status = MessageStatus::Queued;
        let message = message.clone();
        state.queue_job(NewJob::new(team, JobKind::Mail, id.as_uuid(), at));
        drop(state);
        self.signal.notify_one();
        Ok(message)
    }
}

#[async_trait]
impl ReminderStore for MemoryStore {
    async fn reminder_policy(&self, team: TeamId) -> Result<ReminderPolicy, StoreError> {
        Ok(self.state().policy(team))
    }

    async fn set_reminder_policy(
        &self,
        team: TeamId,
        policy: &ReminderPolicy,
        _at: DateTime<Utc>,
    ) -> Result<ReminderPolicy, StoreError> {
        Ok(self.signalled(|state| {
            state.chasing.policies.insert(team, policy.clone());
            state.refresh_reminders(team, |i| i.due_date.is_some());
            policy.clone()
        }))
    }

    async fn queue_due_reminders(
        &self,
        now: DateTime<Utc>,
        compose: &dyn ComposeReminder,
        limit: u32,
    ) -> Result<u32, StoreError> {
        let queued = self.signalled(|state| {
            let mut due: Vec<(DateTime<Utc>, TeamId, InvoiceId)> = state
                .invoices
                .iter()
                .filter_map(|i| {
                    i.chasing.next_reminder_at.filter(|at| *at <= now).map(|at| (at, i.team_id, i.id))
                })
                .collect();
            due.sort();
            due.truncate(limit as usize);
            let mut queued = 0;
            for (_, team, id) in due {
                let Some(invoice) = state.invoice(team, id).cloned() else { continue };
                let policy = state.policy(team);
                let client =
                    state.clients.iter().find(|c| c.team_id == team && c.id == invoice.client_id).cloned();
                let done = invoice.chasing.reminder_step.and_then(ReminderStep::new);
                if let Some(client) = client
                    && let Some(step) =
                        Schedule::of(&invoice, client.details.reminders_enabled, done).step_due(&policy, now)
                {
                    let team_language = state
                        .senders
                        .iter()
                        .find(|s| s.team_id == team && s.id == invoice.sender_id)
                        .map(|s| s.details.language)
                        .unwrap_or_default();
                    if state.chasing.reminder_steps.insert((id, step.days_after_due()))
                        && let Some(message) =
                            compose.compose(&policy, &invoice, &client, team_language, step, now)
                    {
                        state.insert_message(&message);
                        queued += 1;
                    }
                    if let Some(stored) = state.invoices.iter_mut().find(|i| i.team_id == team && i.id == id)
                    {
                        stored.chasing.reminder_step = Some(step.days_after_due());
                    }
                }
                state.refresh_reminders(team, |i| i.id == id);
            }
            queued
        });
        Ok(queued)
    }

    async fn mark_overdue(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, StoreError> {
        let describe = self.describe.clone();
        let marked = self.signalled(|state| {
            let announced = &state.chasing.overdue;
            let mut overdue: Vec<Invoice> = state
                .invoices
                .iter()
                .filter(|i| {
                    matches!(i.status, InvoiceStatus::Pending | InvoiceStatus::PaidPartial)
                        && i.due_date.is_some_and(|due| due < now)
                        && announced.get(&i.id) != Some(&i.due_date)
                })
                .cloned()
                .collect();
            overdue.sort_by_key(|i| (i.due_date, i.id));
            overdue.truncate(limit as usize);
            let mut marked = 0;
            for invoice in overdue {
                state.chasing.overdue.insert(invoice.id, invoice.due_date);
                if invoice.balance.due().is_zero() {
                    continue;
                }
                state.record(notify::raise::invoice_overdue(&invoice).events(&*describe, now));
                marked += 1;
            }
            marked + state.mark_expired_quotes(&*describe, now, limit)
        });
        Ok(marked)
    }
}

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<bool, StoreError> {
        let mut state = self.state();
        let endpoints = &mut state.chasing.endpoints;
        if endpoints.iter().filter(|e| e.team_id == endpoint.team_id).count()
            >= notify::webhooks::MAX_ENDPOINTS
        {
            return Ok(false);
        }
        endpoints.push(endpoint.clone());
        Ok(true)
    }

    async fn get_endpoint(
        &self,
        team: TeamId,
        id: WebhookEndpointId,
    ) -> Result<Option<WebhookEndpoint>, StoreError> {
        Ok(self.state().chasing.endpoints.iter().find(|e| e.team_id == team && e.id == id).cloned())
    }

    async fn list_endpoints(&self, team: TeamId) -> Result<Vec<WebhookEndpoint>, StoreError> {
        let mut endpoints: Vec<WebhookEndpoint> =
            self.state().chasing.endpoints.iter().filter(|e| e.team_id == team).cloned().collect();
        endpoints.sort_by_key(|e| (e.created_at, e.id));
        Ok(endpoints)
    }

    async fn replace_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError> {
        let mut state = self.state();
        let stored =
            state.chasing.endpoints.iter_mut().find(|e| e.team_id == endpoint.team_id && e.id == endpoint.id);
        Ok(match stored {
            None => Replaced::Missing,
            Some(stored) if stored.updated_at != read_at => Replaced::Stale,
            Some(stored) => {
                *stored = WebhookEndpoint { created_at: stored.created_at, ..endpoint.clone() };
                Replaced::Written
            }
        })
    }

    async fn delete_endpoint(&self, team: TeamId, id: WebhookEndpointId) -> Result<bool, StoreError> {
        let mut state = self.state();
        let before = state.chasing.endpoints.len();
        state.chasing.endpoints.retain(|e| !(e.team_id == team && e.id == id));
        state.chasing.deliveries.retain(|d| !(d.team_id == team && d.endpoint_id == id));
        Ok(state.chasing.endpoints.len() < before)
    }

    async fn queue_test(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        event: &NewEvent,
    ) -> Result<Option<WebhookDelivery>, StoreError> {
        let mut state = self.state();
        if !state.chasing.endpoints.iter().any(|e| e.team_id == team && e.id == endpoint) {
            return Ok(None);
        }
        state.record(vec![event.clone()]);
        if let Some(recorded) = state.chasing.events.last_mut() {
            recorded.dispatched = true;
        }
        let delivery = WebhookDelivery::pending(team, endpoint, event.id, event.kind, event.occurred_at);
        state.queue_job(NewJob::new(team, JobKind::Webhook, delivery.id.as_uuid(), event.occurred_at));
        state.chasing.deliveries.push(delivery.clone());
        drop(state);
        self.signal.notify_one();
        Ok(Some(delivery))
    }

    async fn list_deliveries(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<WebhookDelivery>, StoreError> {
        let state = self.state();
        let mut deliveries: Vec<WebhookDelivery> = state
            .chasing
            .deliveries
            .iter()
            .filter(|d| {
                d.team_id == team
                    && d.endpoint_id == endpoint
                    && filter.status.is_none_or(|status| d.status == status)
                    && filter.before.is_none_or(|before| d.id < before)
            })
            .cloned()
            .collect();
        deliveries.sort_by_key(|d| std::cmp::Reverse(d.id));
        deliveries.truncate(filter.limit as usize);
        Ok(deliveries)
    }

    async fn redeliver(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        delivery: WebhookDeliveryId,
        at: DateTime<Utc>,
    ) -> Result<WebhookDelivery, RedeliverError> {
        let mut state = self.state();
        let disabled = state
            .chasing
            .endpoints
            .iter()
            .find(|e| e.team_id == team && e.id == endpoint)
            .is_some_and(|e| e.disabled.is_some());
        let found = state
            .chasing
            .deliveries
            .iter_mut()
            .find(|d| d.team_id == team && d.endpoint_id == endpoint && d.id == delivery)
            .ok_or(RedeliverError::NotFound)?;
        if found.status == DeliveryStatus::Pending {
            return Err(RedeliverError::Pending);
        }
        if disabled {
            return Err(RedeliverError::Disabled);
        }
        found.status = DeliveryStatus::Pending;
        found.next_attempt_at = Some(at);
        let answer = found.clone();
        state.queue_job(NewJob::new(team, JobKind::Webhook, delivery.as_uuid(), at));
        drop(state);
        self.signal.notify_one();
        Ok(answer)
    }

    async fn start_delivery(&self, job: &ClaimedJob) -> Result<Option<OutgoingDelivery>, StoreError> {
        let state = self.state();
        let id = WebhookDeliveryId::from_uuid(job.subject);
        let Some(delivery) = state.chasing.deliveries.iter().find(|d| d.team_id == job.team_id && d.id == id)
        else {
            return Ok(None);
        };
        let endpoint =
            state.chasing.endpoints.iter().find(|e| e.team_id == job.team_id && e.id == delivery.endpoint_id);
        let event = state.chasing.events.iter().find(|e| e.id == delivery.event_id);
        Ok(endpoint.zip(event).map(|(endpoint, event)| OutgoingDelivery {
            delivery: delivery.clone(),
            endpoint: endpoint.clone(),
            event: event.clone(),
            reader: state.actor(endpoint.team_id, endpoint.created_by),
        }))
    }

    async fn finish_delivery(
        &self,
        job: &ClaimedJob,
        report: &AttemptReport,
        finish: &Finish,
        disable: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        Ok(self.signalled(|state| {
            if !state.finish_job(job, finish, at) {
                return false;
            }
            let id = WebhookDeliveryId::from_uuid(job.subject);
            let Some(delivery) =
                state.chasing.deliveries.iter_mut().find(|d| d.team_id == job.team_id && d.id == id)
            else {
                return true;
            };
            delivery.attempts += 1;
            delivery.response_status = report.response_status;
            delivery.duration_ms = Some(report.duration_ms);
            delivery.error.clone_from(&report.error);
            delivery.last_attempt_at = Some(at);
            (delivery.status, delivery.next_attempt_at) = match finish {
                Finish::Done => (DeliveryStatus::Succeeded, None),
                Finish::Retry { at, .. } => (DeliveryStatus::Pending, Some(*at)),
                Finish::Failed { .. } => (DeliveryStatus::Failed, None),
            };
            let endpoint = delivery.endpoint_id;
            if let Some(reason) = disable
                && let Some(endpoint) =
                    state.chasing.endpoints.iter_mut().find(|e| e.team_id == job.team_id && e.id == endpoint)
                && endpoint.disabled.is_none()
            {
                endpoint.disabled = Some(Disabled { at, reason: reason.to_owned() });
                endpoint.updated_at = at;
            }
            true
        }))
    }
}
