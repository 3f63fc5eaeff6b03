//! Payment reminders: a team's policy (on which days around the due date to remind, and
//! what to say), and the schedule it gives each invoice.
//!
//! Each invoice keeps its place in the policy's steps: the last step handled. A job pass
//! sends the latest step that has come due and counts every earlier one as handled, so a
//! pass after a long pause sends one reminder, not a flood. A step is sent at most once per
//! invoice. Reminders stop when nothing is due any more, when the invoice is written off,
//! and for clients that turned them off.

use accounts::TeamId;
use async_trait::async_trait;
use billing::{Invoice, InvoiceStatus};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::StoreError;

use crate::mail::{MailRule, MessageKind, Template};

/// Most steps in one policy.
pub const MAX_STEPS: usize = 10;
/// The furthest a step may lie from the due date, in days, either way.
pub const MAX_DAYS: i32 = 365;

/// One reminder: so many days after the due date (before it, when negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReminderStep(i32);

impl ReminderStep {
    pub fn new(days_after_due: i32) -> Option<Self> {
        (-MAX_DAYS..=MAX_DAYS).contains(&days_after_due).then_some(Self(days_after_due))
    }

    pub fn days_after_due(self) -> i32 {
        self.0
    }

    /// When this step comes for an invoice due at `due`.
    pub fn when(self, due: DateTime<Utc>) -> DateTime<Utc> {
        due.checked_add_signed(TimeDelta::days(i64::from(self.0))).unwrap_or(due)
    }
}

/// Why a policy was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyRule {
    #[error("step {index} is more than {MAX_DAYS} days from the due date")]
    StepOutOfRange { index: usize },
    #[error("step {index} repeats an earlier one")]
    RepeatedStep { index: usize },
    #[error("at most {MAX_STEPS} steps")]
    TooManySteps,
    #[error("an enabled policy needs at least one step")]
    NoSteps,
    #[error("subject: {0}")]
    Subject(MailRule),
    #[error("body: {0}")]
    Body(MailRule),
}

/// A team's reminder policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReminderPolicy {
    pub enabled: bool,
    /// In order, without repeats.
    steps: Vec<ReminderStep>,
    pub subject: Template,
    pub body: Template,
}

impl Default for ReminderPolicy {
    /// Off, with no steps and the default wording: what a team has until it sets one.
    fn default() -> Self {
        let (subject, body) = MessageKind::Reminder.default_templates(locale::Language::default());
        Self { enabled: false, steps: Vec::new(), subject, body }
    }
}

impl ReminderPolicy {
    /// A policy of `steps` (days after the due date, in any order), checked.
    pub fn new(enabled: bool, steps: &[i32], subject: Template, body: Template) -> Result<Self, PolicyRule> {
        if steps.len() > MAX_STEPS {
            return Err(PolicyRule::TooManySteps);
        }
        if enabled && steps.is_empty() {
            return Err(PolicyRule::NoSteps);
        }
        let mut parsed = Vec::with_capacity(steps.len());
        for (index, days) in steps.iter().enumerate() {
            let step = ReminderStep::new(*days).ok_or(PolicyRule::StepOutOfRange { index })?;
            if parsed.contains(&step) {
                return Err(PolicyRule::RepeatedStep { index });
            }
            parsed.push(step);
        }
        parsed.sort_unstable();
        Ok(Self { enabled, steps: parsed, subject, body })
    }

    /// In order.
    pub fn steps(&self) -> &[ReminderStep] {
        &self.steps
    }

    /// The steps still ahead of an invoice whose last handled step is `done`.
    fn ahead(&self, done: Option<ReminderStep>) -> impl Iterator<Item = ReminderStep> + '_ {
        self.steps.iter().copied().filter(move |step| done.is_none_or(|done| *step > done))
    }
}

/// What the schedule of one invoice depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub due: Option<DateTime<Utc>>,
    /// Whether the client has it: e-mailed (`sent_at`), or marked sent by the team. No one
    /// is reminded of an invoice they never got.
    pub sent: bool,
    /// Whether anything is due and the invoice is not written off.
    pub open: bool,
    /// Whether its client takes reminders.
    pub client_takes_reminders: bool,
    /// The last step handled (sent, or passed over by a later one).
    pub done: Option<ReminderStep>,
}

impl Schedule {
    /// The schedule of `invoice` (as its books leave it) for a client that does or does not
    /// take reminders, its last handled step `done`.
    pub fn of(invoice: &Invoice, client_takes_reminders: bool, done: Option<ReminderStep>) -> Self {
        Self {
            due: invoice.due_date,
            sent: invoice.chasing.sent_at.is_some(),
            open: is_open(invoice.balance.due().is_zero(), invoice.status),
            client_takes_reminders,
            done,
        }
    }

    /// When the next reminder is due under `policy`; `None` when none will be.
    pub fn next_at(&self, policy: &ReminderPolicy) -> Option<DateTime<Utc>> {
        if !(policy.enabled && self.sent && self.open && self.client_takes_reminders) {
            return None;
        }
        let due = self.due?;
        policy.ahead(self.done).next().map(|step| step.when(due))
    }

    /// The step to send at `now`: the latest one that has come; the ones before it are
    /// passed over. `None` when none has come.
    pub fn step_due(&self, policy: &ReminderPolicy, now: DateTime<Utc>) -> Option<ReminderStep> {
        self.next_at(policy)?;
        let due = self.due?;
        policy.ahead(self.done).take_while(|step| step.when(due) <= now).last()
    }
}

/// Why a reminder queued earlier is not to be sent any more, as its invoice and client stand
/// when it would be: `None` while it still applies.
pub fn moot(nothing_due: bool, status: InvoiceStatus, client_takes_reminders: bool) -> Option<&'static str> {
    if status == InvoiceStatus::Expired {
        Some("the invoice was written off")
    } else if nothing_due {
        Some("nothing is due on the invoice any more")
    } else if !client_takes_reminders {
        Some("the client takes no reminders any more")
    } else {
        None
    }
}

/// Whether an invoice is still to be chased: something is due and it is not written off.
pub fn is_open(nothing_due: bool, status: InvoiceStatus) -> bool {
    !nothing_due && status != InvoiceStatus::Expired
}

/// Why a reminder could not be queued by hand.
#[derive(Debug, thiserror::Error)]
pub enum RemindError {
    #[error("not found")]
    NotFound,
    /// Nothing is due, or the invoice was written off.
    #[error("nothing is due on the invoice")]
    NothingDue,
    /// Its client turned reminders off.
    #[error("the client takes no reminders")]
    ClientOptedOut,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The reminder policies and the passes that chase invoices.
#[async_trait]
pub trait ReminderStore: Send + Sync {
    /// The team's policy, or the default (off) when it never set one.
    async fn reminder_policy(&self, team: TeamId) -> Result<ReminderPolicy, StoreError>;

    /// Sets the team's policy and, in the same transaction, the next reminder of each of
    /// its open invoices.
    async fn set_reminder_policy(
        &self,
        team: TeamId,
        policy: &ReminderPolicy,
        at: DateTime<Utc>,
    ) -> Result<ReminderPolicy, StoreError>;

    /// For up to `limit` invoices whose next reminder is due at `now`: queues the reminder
    /// of the step due ([`Schedule::step_due`]), worded by `compose`, with its mail job,
    /// and moves the invoice to its next step, one transaction per invoice. A step MUST be
    /// sent at most once per invoice, however many passes race. Returns how many were
    /// queued.
    async fn queue_due_reminders(
        &self,
        now: DateTime<Utc>,
        compose: &dyn ComposeReminder,
        limit: u32,
    ) -> Result<u32, StoreError>;

    /// Raises `invoice.overdue`, once, for up to `limit` open invoices whose due date
    /// passed before `now`, and `quote.expired`, once, for up to `limit` sent quotes left
    /// undecided past their date; returns how many events it raised.
    async fn mark_overdue(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, StoreError>;
}

/// Words a reminder of a policy's step: the message to queue, from the invoice and its
/// client as the pass reads them, and the language of the invoice's sender (the team's),
/// which a client without one of its own reads.
pub trait ComposeReminder: Send + Sync {
    fn compose(
        &self,
        policy: &ReminderPolicy,
        invoice: &Invoice,
        client: &billing::Client,
        team_language: locale::Language,
        step: ReminderStep,
        now: DateTime<Utc>,
    ) -> Option<crate::mail::NewMessage>;
}

/// The reminder of `invoice` to `client` under `policy` (its wording filled in, with its
/// `links`), from `from`, for the policy's `step` or, `None`, sent by hand, in the client's
/// language or else `team_language`. A subject or body that filling made too long is cut
/// to fit.
#[expect(clippy::too_many_arguments, reason = "each is a fact of the reminder, read by the caller")]
pub fn reminder_message(
    policy: &ReminderPolicy,
    invoice: &Invoice,
    client: &billing::Client,
    team_language: locale::Language,
    step: Option<ReminderStep>,
    from: &kernel::Email,
    links: crate::mail::DocumentLinks,
    now: DateTime<Utc>,
) -> Option<crate::mail::NewMessage> {
    let language = client.details.language.unwrap_or(team_language);
    let facts = crate::mail::Facts::of_invoice(language, invoice, client.details.name.as_str(), links);
    // A policy still worded as billable words it speaks each client's language; a team's
    // own wording is sent as the team wrote it.
    let (default_subject, default_body) =
        MessageKind::Reminder.default_templates(locale::Language::default());
    let (subject, body) = if policy.subject == default_subject && policy.body == default_body {
        MessageKind::Reminder.default_templates(language)
    } else {
        (policy.subject.clone(), policy.body.clone())
    };
    let subject = crate::mail::MailSubject::clipped(&subject.fill(&facts))?;
    let body = crate::mail::clip_body(&body.fill(&facts))?;
    let recipients = crate::mail::Recipients::new(vec![client.details.email.clone()], Vec::new()).ok()?;
    let mut message = crate::mail::Message::queued(
        invoice.team_id,
        crate::mail::Concerning::Invoice(invoice.id),
        MessageKind::Reminder,
        recipients,
        subject,
        body,
        &[],
        from,
        now,
    );
    message.reminder_step = step.map(ReminderStep::days_after_due);
    Some(crate::mail::NewMessage { message, attachments: Vec::new() })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn policy(steps: &[i32]) -> ReminderPolicy {
        let (subject, body) = MessageKind::Reminder.default_templates(locale::Language::English);
        ReminderPolicy::new(true, steps, subject, body).unwrap()
    }

    fn day(d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, d, 0, 0, 0).unwrap()
    }

    fn schedule(done: Option<i32>) -> Schedule {
        Schedule {
            due: Some(day(10)),
            sent: true,
            open: true,
            client_takes_reminders: true,
            done: done.and_then(ReminderStep::new),
        }
    }

    #[test]
    fn the_default_policy_is_off_and_worded() {
        let policy = ReminderPolicy::default();
        assert!(!policy.enabled);
        assert_eq!(schedule(None).next_at(&policy), None);
    }

    #[test]
    fn the_next_reminder_is_the_first_step_not_handled() {
        let policy = policy(&[7, -3, 0]);
        assert_eq!(policy.steps().iter().map(|s| s.days_after_due()).collect::<Vec<_>>(), [-3, 0, 7]);
        assert_eq!(schedule(None).next_at(&policy), Some(day(7)));
        assert_eq!(schedule(Some(-3)).next_at(&policy), Some(day(10)));
        assert_eq!(schedule(Some(7)).next_at(&policy), None);
    }

    #[test]
    fn a_late_pass_sends_the_latest_step_only() {
        let policy = policy(&[-3, 0, 7]);
        assert_eq!(schedule(None).step_due(&policy, day(6)), None);
        assert_eq!(schedule(None).step_due(&policy, day(7)).map(ReminderStep::days_after_due), Some(-3));
        assert_eq!(schedule(None).step_due(&policy, day(20)).map(ReminderStep::days_after_due), Some(7));
        assert_eq!(schedule(Some(0)).step_due(&policy, day(16)), None);
    }

    #[test]
    fn nothing_is_scheduled_for_closed_or_unsent_invoices_or_opted_out_clients() {
        let policy = policy(&[0]);
        for closed in [
            Schedule { open: false, ..schedule(None) },
            Schedule { client_takes_reminders: false, ..schedule(None) },
            Schedule { due: None, ..schedule(None) },
            Schedule { sent: false, ..schedule(None) },
        ] {
            assert_eq!(closed.next_at(&policy), None);
            assert_eq!(closed.step_due(&policy, day(28)), None);
        }
        assert!(!is_open(false, InvoiceStatus::Expired));
        assert!(!is_open(true, InvoiceStatus::Paid));
        assert!(is_open(false, InvoiceStatus::PaidPartial));
    }

    #[test]
    fn policies_are_checked() {
        let (subject, body) = MessageKind::Reminder.default_templates(locale::Language::English);
        let new = |enabled, steps: &[i32]| ReminderPolicy::new(enabled, steps, subject.clone(), body.clone());
        assert_eq!(new(true, &[]), Err(PolicyRule::NoSteps));
        assert!(new(false, &[]).is_ok());
        assert_eq!(new(true, &[0, 366]), Err(PolicyRule::StepOutOfRange { index: 1 }));
        assert_eq!(new(true, &[3, 3]), Err(PolicyRule::RepeatedStep { index: 1 }));
        assert_eq!(new(true, &[0; 11]), Err(PolicyRule::TooManySteps));
    }
}
