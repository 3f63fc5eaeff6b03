//! Which events each write raises: the one place that decides it, which every store calls
//! inside the write's own transaction (an event exists if and only if its change does).
//!
//! Billing time changes the entries it bills (their `invoiceId`) without raising
//! `time_entry.updated`: `invoice.created` tells of it, once, rather than an event per entry.

use billing::credit::CreditNote;
use billing::quote::{Quote, Verdict};
use billing::{Client, EntryKind, Invoice, InvoiceStatus, LedgerEntry};
use chrono::{DateTime, Utc};
use tracking::{RunningTimer, TimeEntry};

use crate::event::{Describe, EventType, NewEvent, Resource};
use crate::mail::{Message, MessageKind, MessageStatus};

/// The events a write raises, in the order they happened.
#[derive(Debug, Default)]
pub struct Raised<'a>(Vec<(EventType, Resource<'a>)>);

impl<'a> Raised<'a> {
    fn with(mut self, kind: EventType, resource: Resource<'a>) -> Self {
        self.0.push((kind, resource));
        self
    }

    fn with_if(self, yes: bool, kind: EventType, resource: Resource<'a>) -> Self {
        if yes { self.with(kind, resource) } else { self }
    }

    /// The events to record, worded by `describe`, at `at`.
    pub fn events(&self, describe: &dyn Describe, at: DateTime<Utc>) -> Vec<NewEvent> {
        self.0.iter().map(|(kind, resource)| NewEvent::of(*kind, resource, describe, at)).collect()
    }

    pub fn kinds(&self) -> Vec<EventType> {
        self.0.iter().map(|(kind, _)| *kind).collect()
    }
}

/// A quote numbered and put before its client.
pub fn quote_sent(quote: &Quote) -> Raised<'_> {
    Raised::default().with(EventType::QuoteSent, Resource::Quote(quote))
}

/// A client's decision on a quote.
pub fn quote_decided(quote: &Quote) -> Raised<'_> {
    let accepted = matches!(quote.decision.as_ref().map(|d| &d.verdict), Some(Verdict::Accepted { .. }));
    let kind = if accepted { EventType::QuoteAccepted } else { EventType::QuoteDeclined };
    Raised::default().with(kind, Resource::Quote(quote))
}

/// A quote's full or final invoice made (the invoice raises its own events).
pub fn quote_converted(quote: &Quote) -> Raised<'_> {
    Raised::default().with(EventType::QuoteConverted, Resource::Quote(quote))
}

/// Money in that an import left for a person.
pub fn bank_transaction_unmatched(transaction: &billing::banking::BankTransaction) -> Raised<'_> {
    Raised::default().with(EventType::BankTransactionUnmatched, Resource::BankTransaction(transaction))
}

/// A sent quote found past its date, undecided.
pub fn quote_expired(quote: &Quote) -> Raised<'_> {
    Raised::default().with(EventType::QuoteExpired, Resource::Quote(quote))
}

/// What the ledger entry `entry` raises on `invoice`, whose status was `before`: a payment
/// or a refund of its own, a write-off on the invoice, and `invoice.paid` when the entry
/// paid what was due.
fn entry_events<'a>(
    raised: Raised<'a>,
    entry: &'a LedgerEntry,
    before: InvoiceStatus,
    invoice: &'a Invoice,
) -> Raised<'a> {
    let raised = match entry.kind {
        EntryKind::Payment => raised.with(EventType::PaymentCreated, Resource::Payment(entry)),
        EntryKind::Refund => raised.with(EventType::PaymentRefunded, Resource::Payment(entry)),
        EntryKind::WriteOff => raised.with(EventType::InvoiceWrittenOff, Resource::Invoice(invoice)),
    };
    let paid = invoice.status == InvoiceStatus::Paid && before != InvoiceStatus::Paid;
    raised.with_if(paid, EventType::InvoicePaid, Resource::Invoice(invoice))
}

/// A new invoice: its client first when it made one, then the invoice, then what a create
/// with `status` PAID or EXPIRED recorded.
pub fn invoice_created<'a>(
    invoice: &'a Invoice,
    new_client: Option<&'a Client>,
    opening: Option<&'a LedgerEntry>,
) -> Raised<'a> {
    let raised = match new_client {
        Some(client) => Raised::default().with(EventType::ClientCreated, Resource::Client(client)),
        None => Raised::default(),
    }
    .with(EventType::InvoiceCreated, Resource::Invoice(invoice));
    match opening {
        Some(entry) => entry_events(raised, entry, InvoiceStatus::Pending, invoice),
        None => raised,
    }
}

/// A changed invoice (`PATCH`, `mark`), and the entry a status it was asked for recorded.
pub fn invoice_replaced<'a>(
    before: InvoiceStatus,
    invoice: &'a Invoice,
    entry: Option<&'a LedgerEntry>,
) -> Raised<'a> {
    let raised = Raised::default().with(EventType::InvoiceUpdated, Resource::Invoice(invoice));
    match entry {
        Some(entry) => entry_events(raised, entry, before, invoice),
        None => raised,
    }
}

pub fn invoice_deleted(invoice: &Invoice) -> Raised<'_> {
    Raised::default().with(EventType::InvoiceDeleted, Resource::Invoice(invoice))
}

/// A payment, refund or write-off recorded on `invoice`, whose status was `before`.
pub fn entry_recorded<'a>(entry: &'a LedgerEntry, before: InvoiceStatus, invoice: &'a Invoice) -> Raised<'a> {
    entry_events(Raised::default(), entry, before, invoice)
}

/// A card payment booked on `invoice`, whose status was `before`: its entry's events (none
/// when all of it went to credit), then `invoice.overpaid` when some did.
pub fn card_payment_booked<'a>(
    entry: Option<&'a LedgerEntry>,
    overpaid: bool,
    before: InvoiceStatus,
    invoice: &'a Invoice,
) -> Raised<'a> {
    let raised = match entry {
        Some(entry) => entry_events(Raised::default(), entry, before, invoice),
        None => Raised::default(),
    };
    raised.with_if(overpaid, EventType::InvoiceOverpaid, Resource::Invoice(invoice))
}

/// A voided entry.
pub fn entry_voided(entry: &LedgerEntry) -> Raised<'_> {
    Raised::default().with(EventType::PaymentVoided, Resource::Payment(entry))
}

pub fn credit_issued(note: &CreditNote) -> Raised<'_> {
    Raised::default().with(EventType::CreditNoteCreated, Resource::CreditNote(note))
}

pub fn client_created(client: &Client) -> Raised<'_> {
    Raised::default().with(EventType::ClientCreated, Resource::Client(client))
}

pub fn client_updated(client: &Client) -> Raised<'_> {
    Raised::default().with(EventType::ClientUpdated, Resource::Client(client))
}

pub fn client_deleted(client: &Client) -> Raised<'_> {
    Raised::default().with(EventType::ClientDeleted, Resource::Client(client))
}

pub fn time_entry_created(entry: &TimeEntry) -> Raised<'_> {
    Raised::default().with(EventType::TimeEntryCreated, Resource::TimeEntry(entry))
}

pub fn time_entry_updated(entry: &TimeEntry) -> Raised<'_> {
    Raised::default().with(EventType::TimeEntryUpdated, Resource::TimeEntry(entry))
}

pub fn time_entry_deleted(entry: &TimeEntry) -> Raised<'_> {
    Raised::default().with(EventType::TimeEntryDeleted, Resource::TimeEntry(entry))
}

pub fn timer_started(timer: &RunningTimer) -> Raised<'_> {
    Raised::default().with(EventType::TimerStarted, Resource::Timer(timer))
}

/// A stopped timer, and the entry it left.
pub fn timer_stopped<'a>(timer: &'a RunningTimer, entry: &'a TimeEntry) -> Raised<'a> {
    Raised::default()
        .with(EventType::TimerStopped, Resource::Timer(timer))
        .with(EventType::TimeEntryCreated, Resource::TimeEntry(entry))
}

/// A timer stopped without logging its time (discarded).
pub fn timer_stopped_unlogged(timer: &RunningTimer) -> Raised<'_> {
    Raised::default().with(EventType::TimerStopped, Resource::Timer(timer))
}

/// A message that was sent or failed for good: `invoice.sent` or `invoice.reminder_sent`
/// with its invoice as the send left it, or `message.failed`.
pub fn message_finished<'a>(message: &'a Message, invoice: Option<&'a Invoice>) -> Raised<'a> {
    match (message.status, message.kind, invoice) {
        (MessageStatus::Sent, MessageKind::Invoice, Some(invoice)) => {
            Raised::default().with(EventType::InvoiceSent, Resource::Invoice(invoice))
        }
        (MessageStatus::Sent, MessageKind::Reminder, Some(invoice)) => {
            Raised::default().with(EventType::InvoiceReminderSent, Resource::Invoice(invoice))
        }
        (MessageStatus::Failed, _, _) => {
            Raised::default().with(EventType::MessageFailed, Resource::Message(message))
        }
        _ => Raised::default(),
    }
}

/// An invoice the team marked sent, delivered another way than by e-mail.
pub fn invoice_marked_sent(invoice: &Invoice) -> Raised<'_> {
    Raised::default().with(EventType::InvoiceSent, Resource::Invoice(invoice))
}

/// An invoice found past its due date with something due.
pub fn invoice_overdue(invoice: &Invoice) -> Raised<'_> {
    Raised::default().with(EventType::InvoiceOverdue, Resource::Invoice(invoice))
}
