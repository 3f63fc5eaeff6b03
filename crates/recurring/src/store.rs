//! The port recurring invoices are kept through.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::{Replaced, StoreError};

use crate::recurring_invoice::{RecurringInvoice, RecurringInvoiceId};

/// Why a recurring invoice could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum CreateRecurringError {
    #[error("no such client in the team")]
    UnknownClient,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The team's recurring invoices.
#[async_trait]
pub trait RecurringStore: Send + Sync {
    /// Stores a new recurring invoice of a client of its team ([`CreateRecurringError::UnknownClient`]
    /// otherwise).
    async fn create_recurring(&self, recurring: &RecurringInvoice) -> Result<(), CreateRecurringError>;

    async fn get_recurring(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
    ) -> Result<Option<RecurringInvoice>, StoreError>;

    /// In the order they were made (by id), after `after` (the last of the page before), at
    /// most `limit`.
    async fn list_recurring(
        &self,
        team: TeamId,
        after: Option<RecurringInvoiceId>,
        limit: u32,
    ) -> Result<Vec<RecurringInvoice>, StoreError>;

    /// Writes every part of `recurring` but its identity and creation time, if the stored
    /// one was last changed at `read_at`: a change made since (a pause, a pass) is never
    /// undone unseen.
    async fn replace_recurring(
        &self,
        recurring: &RecurringInvoice,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError>;

    /// Ends it: `false` when the team has no such recurring invoice. Its invoices stay.
    async fn delete_recurring(&self, team: TeamId, id: RecurringInvoiceId) -> Result<bool, StoreError>;

    /// The active recurring invoices of every team whose next period is on or before
    /// `today`, the earliest first (then by id), at most `limit`: what a job pass generates.
    async fn due_recurring(&self, today: NaiveDate, limit: u32) -> Result<Vec<RecurringInvoice>, StoreError>;
}
