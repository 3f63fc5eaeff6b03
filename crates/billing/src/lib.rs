//! Billing: clients, invoices with exact money, sender addresses, and the port that
//! renders invoices as PDF. Pure types and rules plus the repository ports that adapters
//! implement; this crate knows nothing of HTTP, SQL or PDF libraries.

pub mod banking;
pub mod cards;
pub mod client;
pub mod credit;
pub mod discount;
pub mod document;
pub mod einvoice;
pub mod invoice;
pub mod issue;
pub mod ledger;
pub mod money;
pub mod numbering;
pub mod party;
pub mod payment_qr;
pub mod peppol;
pub mod qr_choice;
pub mod quote;
pub mod quoting;
pub mod receivables;
pub mod reconciling;
pub mod reference;
pub mod sender;
pub mod service;
pub mod store;
pub mod supply;
pub mod vat;
pub mod vat_return;

pub use client::{
    Client, ClientDetails, ClientId, ClientRepository, DeleteClientError, ReplaceClientError,
    sort_for_listing,
};
pub use document::{InvoiceDocument, InvoicePage, InvoiceRenderer, PageRenderer, RenderError};
pub use invoice::{
    Allowance, Chasing, Discount, Exchange, Invoice, InvoiceFilter, InvoiceId, InvoicePosition, InvoiceRule,
    InvoiceStatus, LineInput, LineItem, LineItemId, Pricing, Recurrence, RecurringInvoiceId, Serial, TaxRule,
    Totals, Vat, VatCategory,
};
pub use ledger::{
    Balance, EntryAmount, EntryKind, LedgerEntry, LedgerEntryId, LedgerRule, NewEntry, PaymentMethod,
};
pub use numbering::{DocumentNumber, Numbering, NumberingPattern, Series};
pub use party::{Bic, CountryCode, Iban, UnitCode};
pub use reference::PaymentReference;
pub use sender::{SenderAddress, SenderAddressId, SenderDetails, SenderRepository};
pub use store::{BillingStore, CardRepository, InvoiceRepository, LedgerRepository, NumberingRepository};
pub use supply::{PurchaseOrder, ServicePeriod, ServiceTime, Supply};
pub use vat::{LineVat, VatGroup, VatRate};
