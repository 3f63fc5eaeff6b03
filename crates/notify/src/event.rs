//! Events: what changed in a team's books. The store records each one in the transaction
//! of the change that raises it ([`crate::raise`] says which), with the resource as the API
//! shows it at that moment, so that an event exists if and only if its change committed.
//! A job pass then hands every event to the webhook endpoints and the agent subscribed to
//! it.

use std::fmt;

use accounts::{Permission, TeamId, UserId};
use billing::banking::BankTransaction;
use billing::credit::CreditNote;
use billing::quote::Quote;
use billing::{Client, Invoice, LedgerEntry};
use chrono::{DateTime, Utc};
use kernel::{Id, define_id, uuid::Uuid, words};
use tracking::{RunningTimer, TimeEntry};

use crate::mail::Message;

define_id!(
    /// An event. It is also the `webhook-id` of every delivery of it: the same on each
    /// attempt and each endpoint, so that a receiver dedupes by it.
    EventId
);

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    InvoiceCreated,
    InvoiceUpdated,
    InvoiceDeleted,
    InvoiceSent,
    InvoicePaid,
    InvoiceOverdue,
    InvoiceReminderSent,
    InvoiceWrittenOff,
    /// Money for the invoice beyond what it owed, kept as its client's credit.
    InvoiceOverpaid,
    PaymentCreated,
    PaymentRefunded,
    PaymentVoided,
    CreditNoteCreated,
    /// A quote numbered and put before its client.
    QuoteSent,
    QuoteAccepted,
    QuoteDeclined,
    /// A sent quote past its date, undecided.
    QuoteExpired,
    /// A quote's full or final invoice made.
    QuoteConverted,
    /// Money in that an import left for a person: nothing booked, or only suggested.
    BankTransactionUnmatched,
    MessageFailed,
    ClientCreated,
    ClientUpdated,
    ClientDeleted,
    TimeEntryCreated,
    TimeEntryUpdated,
    TimeEntryDeleted,
    TimerStarted,
    TimerStopped,
    /// What an endpoint's test sends; no subscription takes it.
    WebhookTest,
}

words!(EventType {
    InvoiceCreated => "invoice.created",
    InvoiceUpdated => "invoice.updated",
    InvoiceDeleted => "invoice.deleted",
    InvoiceSent => "invoice.sent",
    InvoicePaid => "invoice.paid",
    InvoiceOverdue => "invoice.overdue",
    InvoiceReminderSent => "invoice.reminder_sent",
    InvoiceWrittenOff => "invoice.written_off",
    InvoiceOverpaid => "invoice.overpaid",
    PaymentCreated => "payment.created",
    PaymentRefunded => "payment.refunded",
    PaymentVoided => "payment.voided",
    CreditNoteCreated => "credit_note.created",
    QuoteSent => "quote.sent",
    QuoteAccepted => "quote.accepted",
    QuoteDeclined => "quote.declined",
    QuoteExpired => "quote.expired",
    QuoteConverted => "quote.converted",
    BankTransactionUnmatched => "bank_transaction.unmatched",
    MessageFailed => "message.failed",
    ClientCreated => "client.created",
    ClientUpdated => "client.updated",
    ClientDeleted => "client.deleted",
    TimeEntryCreated => "time_entry.created",
    TimeEntryUpdated => "time_entry.updated",
    TimeEntryDeleted => "time_entry.deleted",
    TimerStarted => "timer.started",
    TimerStopped => "timer.stopped",
    WebhookTest => "webhook.test",
});

impl EventType {
    /// The types a subscription may name: every one but [`EventType::WebhookTest`].
    pub fn subscribable() -> impl Iterator<Item = Self> {
        <Self as kernel::Words>::ALL.iter().copied().filter(|kind| *kind != Self::WebhookTest)
    }

    /// Whether its data is one user's own: a time entry's or a timer's, which only that
    /// user and the team's owners and admins may read (members see their own time).
    pub fn is_personal(self) -> bool {
        self.family().is_personal()
    }

    /// The family a type belongs to, the resource it is about: its word before the dot.
    pub fn family(self) -> EventFamily {
        match self {
            Self::InvoiceCreated
            | Self::InvoiceUpdated
            | Self::InvoiceDeleted
            | Self::InvoiceSent
            | Self::InvoicePaid
            | Self::InvoiceOverdue
            | Self::InvoiceReminderSent
            | Self::InvoiceWrittenOff
            | Self::InvoiceOverpaid => EventFamily::Invoice,
            Self::PaymentCreated | Self::PaymentRefunded | Self::PaymentVoided => EventFamily::Payment,
            Self::CreditNoteCreated => EventFamily::CreditNote,
            Self::QuoteSent
            | Self::QuoteAccepted
            | Self::QuoteDeclined
            | Self::QuoteExpired
            | Self::QuoteConverted => EventFamily::Quote,
            Self::BankTransactionUnmatched => EventFamily::BankTransaction,
            Self::MessageFailed => EventFamily::Message,
            Self::ClientCreated | Self::ClientUpdated | Self::ClientDeleted => EventFamily::Client,
            Self::TimeEntryCreated | Self::TimeEntryUpdated | Self::TimeEntryDeleted => {
                EventFamily::TimeEntry
            }
            Self::TimerStarted | Self::TimerStopped => EventFamily::Timer,
            Self::WebhookTest => EventFamily::Webhook,
        }
    }
}

/// The families of event types: the resource their events are about, each with the
/// permission it takes to read what they carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventFamily {
    Invoice,
    Payment,
    CreditNote,
    Quote,
    BankTransaction,
    Message,
    Client,
    TimeEntry,
    Timer,
    Webhook,
}

words!(EventFamily {
    Invoice => "invoice",
    Payment => "payment",
    CreditNote => "credit_note",
    Quote => "quote",
    BankTransaction => "bank_transaction",
    Message => "message",
    Client => "client",
    TimeEntry => "time_entry",
    Timer => "timer",
    Webhook => "webhook",
});

impl EventFamily {
    /// The permission to read what its events carry, which subscribing to them takes.
    pub fn read_permission(self) -> Permission {
        match self {
            Self::Client => Permission::ClientsRead,
            Self::TimeEntry | Self::Timer => Permission::TrackRead,
            Self::Quote => Permission::QuotesRead,
            Self::BankTransaction => Permission::BankingRead,
            Self::Invoice | Self::Payment | Self::CreditNote | Self::Message | Self::Webhook => {
                Permission::InvoicesRead
            }
        }
    }

    /// Whether its events carry one user's own data (time), which members read only of
    /// themselves.
    pub fn is_personal(self) -> bool {
        matches!(self, Self::TimeEntry | Self::Timer)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a list of event patterns was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventRule {
    #[error("at least one event type or pattern is needed")]
    Empty,
    #[error("at most {MAX_PATTERNS} patterns")]
    TooMany,
    /// The pattern at `index` names no event type.
    #[error("{pattern:?} names no event type")]
    Unknown { index: usize, pattern: String },
}

/// The most patterns one subscription lists.
pub const MAX_PATTERNS: usize = 64;

/// Which event types a subscription takes: every one (`*`), a family (`payment.*`), or one
/// type (`invoice.paid`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventPattern {
    Any,
    Family(EventFamily),
    Exactly(EventType),
}

impl EventPattern {
    /// `*`, `<family>.*` for a family that has subscribable types, or a subscribable type.
    pub fn parse(text: &str) -> Option<Self> {
        if text == "*" {
            return Some(Self::Any);
        }
        if let Some(family) = text.strip_suffix(".*") {
            return EventType::subscribable()
                .map(EventType::family)
                .find(|subscribable| subscribable.as_str() == family)
                .map(Self::Family);
        }
        EventType::subscribable().find(|kind| kind.as_str() == text).map(Self::Exactly)
    }

    pub fn matches(self, kind: EventType) -> bool {
        kind != EventType::WebhookTest
            && match self {
                Self::Any => true,
                Self::Family(family) => kind.family() == family,
                Self::Exactly(only) => kind == only,
            }
    }
}

impl fmt::Display for EventPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Any => f.write_str("*"),
            Self::Family(family) => write!(f, "{}.*", family.as_str()),
            Self::Exactly(kind) => f.write_str(kind.as_str()),
        }
    }
}

/// The patterns of one subscription: 1 to [`MAX_PATTERNS`], without repeats, in the order
/// given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter(Vec<EventPattern>);

impl EventFilter {
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<Self, EventRule> {
        if patterns.is_empty() {
            return Err(EventRule::Empty);
        }
        if patterns.len() > MAX_PATTERNS {
            return Err(EventRule::TooMany);
        }
        let mut parsed: Vec<EventPattern> = Vec::with_capacity(patterns.len());
        for (index, text) in patterns.iter().enumerate() {
            let text = text.as_ref();
            let pattern = EventPattern::parse(text)
                .ok_or_else(|| EventRule::Unknown { index, pattern: text.to_owned() })?;
            if !parsed.contains(&pattern) {
                parsed.push(pattern);
            }
        }
        Ok(Self(parsed))
    }

    /// Every subscribable type.
    pub fn everything() -> Self {
        Self(vec![EventPattern::Any])
    }

    pub fn matches(&self, kind: EventType) -> bool {
        self.0.iter().any(|pattern| pattern.matches(kind))
    }

    pub fn patterns(&self) -> &[EventPattern] {
        &self.0
    }

    /// The patterns as words, in order.
    pub fn words(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }
}

/// The resource an event is about, as the store holds it right after the change.
#[derive(Debug, Clone, Copy)]
pub enum Resource<'a> {
    Invoice(&'a Invoice),
    Client(&'a Client),
    /// A payment, a refund or a write-off of an invoice's ledger.
    Payment(&'a LedgerEntry),
    CreditNote(&'a CreditNote),
    Quote(&'a Quote),
    BankTransaction(&'a BankTransaction),
    TimeEntry(&'a TimeEntry),
    Timer(&'a RunningTimer),
    Message(&'a Message),
}

impl Resource<'_> {
    pub fn id(&self) -> Uuid {
        match self {
            Self::Invoice(invoice) => invoice.id.as_uuid(),
            Self::Client(client) => client.id.as_uuid(),
            Self::Payment(entry) => entry.id.as_uuid(),
            Self::CreditNote(note) => note.id.as_uuid(),
            Self::Quote(quote) => quote.id.as_uuid(),
            Self::BankTransaction(transaction) => transaction.id.as_uuid(),
            Self::TimeEntry(entry) => entry.id.as_uuid(),
            Self::Timer(timer) => timer.id.as_uuid(),
            Self::Message(message) => message.id.as_uuid(),
        }
    }

    /// The user whose own data it is: a time entry's or a timer's user.
    pub fn owner(&self) -> Option<UserId> {
        match self {
            Self::TimeEntry(entry) => Some(entry.user_id),
            Self::Timer(timer) => Some(timer.user_id),
            _ => None,
        }
    }

    pub fn team(&self) -> TeamId {
        match self {
            Self::Invoice(invoice) => invoice.team_id,
            Self::Client(client) => client.team_id,
            Self::Payment(entry) => entry.team_id,
            Self::CreditNote(note) => note.team_id,
            Self::Quote(quote) => quote.team_id,
            Self::BankTransaction(transaction) => transaction.team_id,
            Self::TimeEntry(entry) => entry.team_id,
            Self::Timer(timer) => timer.team_id,
            Self::Message(message) => message.team_id,
        }
    }

    /// The thread the event belongs to: what happens to one invoice (its payments, credit
    /// notes and messages too) shares one, which orders the agent's runs of them and is
    /// the conversation they run in.
    pub fn thread(&self) -> String {
        match self {
            Self::Invoice(invoice) => format!("invoice:{}", invoice.id),
            Self::Payment(entry) => format!("invoice:{}", entry.invoice_id),
            Self::CreditNote(note) => format!("invoice:{}", note.invoice_id),
            Self::Message(message) => message.about.thread(),
            Self::Client(client) => format!("client:{}", client.id),
            Self::Quote(quote) => format!("quote:{}", quote.id),
            Self::BankTransaction(transaction) => format!("bank_transaction:{}", transaction.id),
            Self::TimeEntry(entry) => format!("time_entry:{}", entry.id),
            Self::Timer(timer) => format!("timer:{}", timer.id),
        }
    }
}

/// Words a resource as the API shows it (JSON text), for the events about it. The REST
/// adapter implements it with the very bodies its `GET`s answer; a store records events
/// with it.
pub trait Describe: Send + Sync + fmt::Debug {
    /// `resource` as a `GET` of it would answer at `at`.
    fn describe(&self, resource: &Resource<'_>, at: DateTime<Utc>) -> String;
}

/// Describes a resource by its id alone: `{"id": "…"}`. For stores used without the REST
/// adapter (tests, other services of a team).
#[derive(Debug, Clone, Copy, Default)]
pub struct BareIds;

impl Describe for BareIds {
    fn describe(&self, resource: &Resource<'_>, _at: DateTime<Utc>) -> String {
        serde_json::json!({ "id": resource.id() }).to_string()
    }
}

/// An event to record with the change that raises it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    pub id: EventId,
    pub team_id: TeamId,
    pub kind: EventType,
    /// The id of the resource it is about.
    pub subject: Uuid,
    /// See [`Resource::thread`].
    pub thread: String,
    /// The resource as the API showed it right after the change (JSON text).
    pub data: String,
    /// The user whose own data it carries ([`Resource::owner`]).
    pub owner: Option<UserId>,
    pub occurred_at: DateTime<Utc>,
}

impl NewEvent {
    /// The event of `kind` about `resource`, worded by `describe`, at `at`.
    pub fn of(kind: EventType, resource: &Resource<'_>, describe: &dyn Describe, at: DateTime<Utc>) -> Self {
        Self {
            id: EventId::generate(),
            team_id: resource.team(),
            kind,
            subject: resource.id(),
            thread: resource.thread(),
            data: describe.describe(resource, at),
            owner: resource.owner(),
            occurred_at: at,
        }
    }
}

/// A recorded event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its place among every event recorded: later changes of one thread have greater
    /// ones (they are recorded under the thread's lock).
    pub seq: i64,
    pub id: EventId,
    pub team_id: TeamId,
    pub kind: EventType,
    pub subject: Uuid,
    pub thread: String,
    pub data: String,
    /// The user whose own data it carries; `None` for the team's data, and for a personal
    /// event recorded before owners were (which only owners and admins then receive).
    pub owner: Option<UserId>,
    pub occurred_at: DateTime<Utc>,
    /// Whether a job pass handed it to its subscribers yet.
    pub dispatched: bool,
}

#[cfg(test)]
mod tests {
    use kernel::Words;

    use super::*;

    #[test]
    fn every_type_round_trips_and_names_its_family() {
        for kind in EventType::ALL {
            assert_eq!(EventType::from_word(kind.as_str()), Some(*kind));
            assert!(kind.as_str().starts_with(&format!("{}.", kind.family().as_str())), "{kind}");
        }
        assert_eq!(EventType::InvoiceReminderSent.family(), EventFamily::Invoice);
        assert_eq!(EventType::CreditNoteCreated.family(), EventFamily::CreditNote);
        assert_eq!(EventType::subscribable().count(), EventType::ALL.len() - 1);
        for family in EventFamily::ALL {
            assert!(EventType::ALL.iter().any(|kind| kind.family() == *family), "{family:?} has no type");
        }
    }

    #[test]
    fn patterns_take_what_they_name() {
        let filter = EventFilter::parse(&["invoice.paid", "payment.*"]).unwrap();
        assert!(filter.matches(EventType::InvoicePaid));
        assert!(filter.matches(EventType::PaymentRefunded));
        assert!(!filter.matches(EventType::InvoiceCreated));
        let all = EventFilter::parse(&["*"]).unwrap();
        assert!(EventType::subscribable().all(|kind| all.matches(kind)));
        assert!(!all.matches(EventType::WebhookTest), "a test goes only where it is sent");
        assert_eq!(filter.words(), ["invoice.paid", "payment.*"]);
    }

    #[test]
    fn unknown_patterns_are_named_with_their_place() {
        assert_eq!(EventFilter::parse::<&str>(&[]), Err(EventRule::Empty));
        assert_eq!(
            EventFilter::parse(&["invoice.paid", "invoice.payed"]),
            Err(EventRule::Unknown { index: 1, pattern: "invoice.payed".into() })
        );
        for refused in ["invoices.*", "webhook.test", "webhook.*", "invoice.", ".*", "**", ""] {
            assert_eq!(EventPattern::parse(refused), None, "{refused}");
        }
        let repeated = EventFilter::parse(&["*", "*", "invoice.*"]).unwrap();
        assert_eq!(repeated.words(), ["*", "invoice.*"]);
    }
}
