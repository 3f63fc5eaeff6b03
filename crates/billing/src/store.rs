//! The invoice storage port, and the store the billing use cases need as a whole.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Email, StoreError};

use crate::invoice::Description;
use crate::{
    Client, ClientId, ClientRepository, Invoice, InvoiceFilter, InvoiceId, InvoiceStatus, LineItem,
    SenderAddress, SenderAddressId, SenderRepository, Serial, TaxRule, Totals, money::Currency,
};

/// Who a new invoice is billed to.
#[derive(Debug, Clone)]
pub enum BillTo {
    /// A client of the team.
    Existing(ClientId),
    /// The team's oldest client with this email (compared case-insensitively), or else
    /// `new_client`, created in the invoice's transaction.
    Inline { email: Email, new_client: Box<Client> },
}

/// Whose sender address a new invoice carries.
#[derive(Debug, Clone)]
pub enum SenderChoice {
    /// One of the team's sender addresses.
    Given(SenderAddressId),
    /// The team's default sender address, or else `fallback`, made the team's default in
    /// the invoice's transaction (teams made before invoices existed have none).
    TeamDefault { fallback: Box<SenderAddress> },
}

/// An invoice ready to store but for its serial and, for an inline client, its client.
#[derive(Debug, Clone)]
pub struct NewInvoice {
    pub id: InvoiceId,
    pub team_id: TeamId,
    pub bill_to: BillTo,
    pub sender: SenderChoice,
    pub description: Option<Description>,
    pub issue_date: DateTime<Utc>,
    pub due_date: Option<DateTime<Utc>>,
    pub status: InvoiceStatus,
    pub currency: Currency,
    pub tax_rule: TaxRule,
    pub totals: Totals,
    pub line_items: Vec<LineItem>,
    pub created_at: DateTime<Utc>,
    /// The team's time entries the invoice bills, as they were read. The store marks each
    /// billed by this invoice in the invoice's own transaction, only if it is still
    /// billable, unbilled and unchanged since, or makes nothing at all
    /// ([`CreateInvoiceError::TimeTaken`]).
    pub time_entries: Vec<TimeToBill>,
}

/// A time entry to bill, by id, as of its last change: the lines were made from that
/// version, so a later change (hours, day, project, user) must not be billed unseen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeToBill {
    pub id: kernel::uuid::Uuid,
    pub updated_at: DateTime<Utc>,
}

impl NewInvoice {
    /// [`NewInvoice::time_entries`] without repeats, in order of id.
    pub fn distinct_time_entries(&self) -> Vec<TimeToBill> {
        let mut entries = self.time_entries.clone();
        entries.sort_unstable();
        entries.dedup_by_key(|entry| entry.id);
        entries
    }

    /// The invoice once storage has given it `serial` and settled its client and sender.
    pub fn into_invoice(self, serial: Serial, client_id: ClientId, sender_id: SenderAddressId) -> Invoice {
        Invoice {
            id: self.id,
            team_id: self.team_id,
            serial,
            description: self.description,
            issue_date: self.issue_date,
            due_date: self.due_date,
            status: self.status,
            currency: self.currency,
            tax_rule: self.tax_rule,
            totals: self.totals,
            client_id,
            sender_id,
            line_items: self.line_items,
            created_at: self.created_at,
            updated_at: self.created_at,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CreateInvoiceError {
    #[error("no such client in the team")]
    UnknownClient,
    #[error("no such sender address in the team")]
    UnknownSender,
    /// A time entry to bill is gone, changed, not billable, or billed already; nothing was
    /// made.
    #[error("time to bill was billed, changed or deleted meanwhile")]
    TimeTaken,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum SaveInvoiceError {
    #[error("invoice not found")]
    NotFound,
    #[error("no such client in the team")]
    UnknownClient,
    #[error("no such sender address in the team")]
    UnknownSender,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum DeleteInvoiceError {
    #[error("invoice not found")]
    NotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of invoices with their line items. Scoped to a team, but for
/// [`InvoiceRepository::find_invoice`]: the public PDF link carries only the id.
#[async_trait]
pub trait InvoiceRepository: Send + Sync {
    /// The team's invoices that `filter` shows, in [`crate::invoice::sort_for_listing`]
    /// order, at most its `limit` of them, items in position order.
    async fn list_invoices(&self, team: TeamId, filter: &InvoiceFilter) -> Result<Vec<Invoice>, StoreError>;

    async fn get_invoice(&self, team: TeamId, id: InvoiceId) -> Result<Option<Invoice>, StoreError>;

    /// The invoice with this id, whatever its team.
    async fn find_invoice(&self, id: InvoiceId) -> Result<Option<Invoice>, StoreError>;

    /// Stores a new invoice, all or nothing, in one transaction: the team's next serial
    /// (the last one given plus one, never reused, gapless under concurrency because a
    /// failed create gives its serial back), the inline client when one is to be made,
    /// the team's default sender when it has none and the invoice asks for it, the
    /// invoice and its items. MUST check that the client and the sender address are the
    /// team's.
    async fn create_invoice(&self, invoice: NewInvoice) -> Result<Invoice, CreateInvoiceError>;

    /// Does all that [`InvoiceRepository::create_invoice`] would, checks included, and keeps
    /// none of it (a transaction rolled back): the answer is the invoice a create would
    /// store now, with the serial it would take. Nothing is reserved.
    async fn preview_invoice(&self, invoice: NewInvoice) -> Result<Invoice, CreateInvoiceError>;

    /// Writes every field of `invoice` but its identity, serial, currency and creation
    /// time; with `lines_changed`, replaces all its items. All or nothing. MUST check
    /// that the client and the sender address are the team's.
    async fn replace_invoice(&self, invoice: &Invoice, lines_changed: bool) -> Result<(), SaveInvoiceError>;

    /// Deletes the invoice and its items for good.
    async fn delete_invoice(&self, team: TeamId, id: InvoiceId) -> Result<(), DeleteInvoiceError>;
}

/// Everything the billing use cases store.
pub trait BillingStore: ClientRepository + InvoiceRepository + SenderRepository {}

impl<T: ClientRepository + InvoiceRepository + SenderRepository> BillingStore for T {}
