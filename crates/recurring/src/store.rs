//! The port recurring invoices are kept through.

use accounts::TeamId;
use async_trait::async_trait;
use billing::Invoice;
use billing::store::{CreateInvoiceError, NewInvoice};
use chrono::{DateTime, NaiveDate, Utc};
use kernel::{Replaced, StoreError};

use crate::recurring_invoice::{RecurringInvoice, RecurringInvoiceId, Run};

/// Why a recurring invoice could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum CreateRecurringError {
    #[error("no such client in the team")]
    UnknownClient,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a job pass did with one recurring invoice, written in one transaction.
#[derive(Debug, Clone)]
pub struct PassRecord {
    /// The recurring invoice after the pass (its next period, count and status).
    pub recurring: RecurringInvoice,
    /// When the recurring invoice the pass started from was last changed: the record is
    /// written only if it is still so, which makes one pass of all that race win.
    pub read_at: DateTime<Utc>,
    /// The runs of the periods it went through: skipped ones, then the one it generated
    /// (or failed, or skipped for having nothing to bill).
    pub runs: Vec<Run>,
    /// The invoice of the generated run, made in the same transaction (its serial too),
    /// with the run's `invoice_id` its id.
    pub invoice: Option<NewInvoice>,
}

/// How recording a pass ended.
#[derive(Debug)]
pub enum PassRecorded {
    /// Written, with the invoice made.
    Written(Option<Box<Invoice>>),
    /// The recurring invoice changed (another pass, a pause, an edit) or went since it was
    /// read: nothing written.
    Stale,
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

    /// Records `record` in one transaction, only if the recurring invoice is unchanged
    /// since `record.read_at`: the runs, the invoice (refused as creating it is, and then
    /// nothing is written), and the recurring invoice's new state. No period has two runs,
    /// nor a sequence two invoices, however many passes race.
    async fn record_pass(&self, record: &PassRecord) -> Result<PassRecorded, CreateInvoiceError>;

    /// The runs of the team's recurring invoice, the latest period first, those before
    /// `before` when given, at most `limit`.
    async fn list_runs(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
        before: Option<NaiveDate>,
        limit: u32,
    ) -> Result<Vec<Run>, StoreError>;
}
