//! The event log's port, and the store the sending and chasing use cases need as a whole.
//!
//! A store that implements these ports records the events of [`crate::raise`] in the
//! transaction of every write that raises them (billing's, tracking's and its own), worded
//! by the [`crate::Describe`] it was given, and keeps each invoice's next reminder
//! ([`crate::reminders::Schedule`]) with every write that changes it: its due date, its
//! client, its books, the team's policy, the client's consent, a reminder queued.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::event::{Event, EventFilter, EventId};
use crate::jobs::JobQueue;
use crate::mail::MessageStore;
use crate::reminders::ReminderStore;
use crate::webhooks::WebhookStore;

/// The event log.
#[async_trait]
pub trait EventStore: Send + Sync {
    /// Hands up to `limit` events not yet dispatched to their subscribers, oldest first: a
    /// delivery with its job, due at `at`, for each enabled endpoint of the event's team whose
    /// filter takes it, and a job for the agent when the team's agent subscription takes it
    /// (ordered by the event's thread and place); then marks them dispatched, in one
    /// transaction. Concurrent passes MUST NOT hand an event out twice. Returns how many
    /// events were dispatched.
    async fn dispatch_events(&self, limit: u32, at: DateTime<Utc>) -> Result<u32, StoreError>;

    async fn get_event(&self, id: EventId) -> Result<Option<Event>, StoreError>;

    /// The team's last `limit` events, newest first.
    async fn list_events(&self, team: TeamId, limit: u32) -> Result<Vec<Event>, StoreError>;

    /// Sets the events the team's agent is woken by (`None`: none).
    async fn subscribe_agent(&self, team: TeamId, events: Option<&EventFilter>) -> Result<(), StoreError>;
}

/// Everything sending and chasing store.
pub trait NotifyStore: EventStore + JobQueue + MessageStore + ReminderStore + WebhookStore {}

impl<T: EventStore + JobQueue + MessageStore + ReminderStore + WebhookStore> NotifyStore for T {}
