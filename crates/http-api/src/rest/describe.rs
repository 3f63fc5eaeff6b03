//! The resources of events, worded as the API's `GET`s answer them: the [`notify::Describe`]
//! a store records events with, so that a webhook's `data` and the agent's view of an event
//! are the very bodies a client reads.

use chrono::{DateTime, Utc};
use notify::{Describe, Resource};
use serde::Serialize;

use crate::rest::listings::InvoiceIds;
use crate::rest::routes::clients::ClientBody;
use crate::rest::routes::credit_notes::CreditNoteBody;
use crate::rest::routes::invoices::InvoiceBody;
use crate::rest::routes::messages::MessageBody;
use crate::rest::routes::payments::PaymentBody;
use crate::rest::routes::quotes::QuoteBody;
use crate::rest::routes::track::time::TimeEntryBody;
use crate::rest::routes::track::timer::TimerBody;

/// Describes resources with the REST API's bodies. A time entry is shown as a key without
/// `invoices:read` sees it (`billed`, no `invoiceId`): events about time reach subscribers
/// who may read time, not invoices.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiBodies;

impl Describe for ApiBodies {
    fn describe(&self, resource: &Resource<'_>, at: DateTime<Utc>) -> String {
        match resource {
            Resource::Invoice(invoice) => json(&InvoiceBody::new((*invoice).clone(), at)),
            Resource::Client(client) => json(&ClientBody::from((*client).clone())),
            Resource::Payment(entry) => json(&PaymentBody::from((*entry).clone())),
            Resource::CreditNote(note) => json(&CreditNoteBody::from((*note).clone())),
            Resource::Quote(quote) => json(&QuoteBody::new((*quote).clone(), at)),
            Resource::BankTransaction(transaction) => {
                json(&crate::rest::routes::banking::BankTransactionBody::from((*transaction).clone()))
            }
            Resource::TimeEntry(entry) => json(&TimeEntryBody::shown((*entry).clone(), InvoiceIds::Withheld)),
            Resource::Timer(timer) => json(&TimerBody::of((*timer).clone(), at)),
            Resource::Message(message) => json(&MessageBody::from((*message).clone())),
        }
    }
}

fn json(body: &impl Serialize) -> String {
    // The bodies are plain data: serializing them cannot fail.
    serde_json::to_string(body).unwrap_or_else(|_| "{}".to_owned())
}
