//! Sending and chasing: what billable tells the world about a team's books, and how it
//! makes sure it is told.
//!
//! - [`event`]: the events every change records, in the same transaction as the change
//!   ([`EventType`], [`Resource`], the [`Describe`] port that words a resource for them),
//!   and [`raise`]: which events each write raises.
//! - [`jobs`]: one durable queue for everything that happens later, leased to one process
//!   at a time, retried with backoff ([`JobQueue`]).
//! - [`mail`]: e-mail messages of invoices, reminders and credit notes, their templates
//!   and the [`MessageStore`] port.
//! - [`reminders`]: a team's reminder policy and the schedule it gives each invoice.
//! - [`service`]: the use cases: a document e-mailed with its files, a reminder sent by
//!   hand, the policy's reminders worded, the public links they carry.
//! - [`webhooks`]: endpoints subscribed to events, signed per Standard Webhooks, and their
//!   deliveries ([`WebhookStore`]).
//!
//! Pure types, rules and ports: no HTTP, SQL, SMTP or async runtime. The adapters record
//! events inside their own transactions, and an outbound adapter runs the jobs.

pub mod event;
pub mod jobs;
pub mod mail;
pub mod raise;
pub mod reachable;
pub mod reminders;
pub mod service;
pub mod store;
pub mod webhooks;

pub use event::{
    BareIds, Describe, Event, EventFamily, EventFilter, EventId, EventPattern, EventRule, EventType,
    NewEvent, Resource,
};
pub use jobs::{ClaimedJob, DueWork, Finish, Job, JobFilter, JobId, JobKind, JobQueue, JobState, Retries};
pub use mail::{
    Attachment, AttachmentInfo, MailBody, MailSubject, Message, MessageFilter, MessageId, MessageKind,
    MessageStatus, MessageStore, NewMessage, OutgoingMail,
};
pub use reminders::{ReminderPolicy, ReminderStep, Schedule};
pub use store::NotifyStore;
pub use webhooks::{
    DeliveryStatus, SigningSecret, WebhookDelivery, WebhookDeliveryId, WebhookEndpoint, WebhookEndpointId,
    WebhookStore, WebhookUrl,
};
