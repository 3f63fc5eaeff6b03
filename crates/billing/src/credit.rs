//! Credit notes: the document that corrects an issued invoice, in a numbered series of its
//! own (`CN-0001`), never changed or deleted. What a note does to its invoice's balance is
//! the ledger's rule ([`crate::ledger::Ledger::credit`]).

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::{Id, define_id};
use rust_decimal::Decimal;

use crate::invoice::{
    Discount, Invoice, InvoiceId, InvoiceRule, LineInput, LineItem, Pricing, TaxRule, Totals, price_lines,
};
use crate::ledger::{CreditApplication, Notes};
use crate::money::Currency;
use crate::numbering::DocumentNumber;

define_id!(
    /// Identifies a credit note. Unguessable: it is all its public PDF link carries.
    CreditNoteId
);

crate::invoice::serial!(
    /// The team's running count of its credit notes, from 1: a series of its own, beside
    /// the invoices'.
    CreditSerial
);

/// What a credit note credits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditLines {
    /// The whole invoice: its lines, its discount and its tax.
    Full,
    /// These lines, taxed at the invoice's tax percentage (none when its tax is flat), less
    /// the note's own discount, if any.
    Lines(Vec<LineInput>),
    /// These lines, with a discount of the whole note.
    Discounted(Vec<LineInput>, Discount),
}

/// A credit note to issue against an invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCreditNote {
    pub id: CreditNoteId,
    pub lines: CreditLines,
    pub reason: Option<Notes>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreditNote {
    pub id: CreditNoteId,
    pub team_id: TeamId,
    pub serial: CreditSerial,
    /// Its number as issued (`CN-0001`, or the team's pattern then).
    pub number: DocumentNumber,
    pub invoice_id: InvoiceId,
    /// The number of the invoice it corrects.
    pub invoice_number: DocumentNumber,
    pub issue_date: DateTime<Utc>,
    pub currency: Currency,
    pub tax_rule: TaxRule,
    /// Its invoice's VAT category and reason, which its lines that state none take.
    pub vat: crate::Vat,
    /// In position order.
    pub line_items: Vec<LineItem>,
    /// Its own discount, beside its lines' (its invoice's, when it credits all of it).
    pub discount: Option<Discount>,
    pub totals: Totals,
    pub reason: Option<Notes>,
    /// What it did to the invoice's balance when it was issued.
    pub application: CreditApplication,
    /// Where it stands in its invoice's books, among the ledger's entries.
    pub position: crate::ledger::Position,
    pub created_at: DateTime<Utc>,
}

/// What a credit note of `lines` against `invoice` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricedCredit {
    pub items: Vec<LineItem>,
    pub tax_rule: TaxRule,
    pub discount: Option<Discount>,
    pub totals: Totals,
}

/// The lines, tax rule, discount and totals of a credit note of `lines` against `invoice`.
pub fn price_credit(
    invoice: &Invoice,
    lines: &CreditLines,
    now: DateTime<Utc>,
) -> Result<PricedCredit, InvoiceRule> {
    let (inputs, discount) = match lines {
        CreditLines::Full => {
            let items = invoice
                .line_items
                .iter()
                .map(|item| LineItem {
                    id: crate::LineItemId::generate(),
                    created_at: now,
                    updated_at: now,
                    ..item.clone()
                })
                .collect();
            return Ok(PricedCredit {
                items,
                tax_rule: invoice.tax_rule,
                discount: invoice.discount,
                totals: invoice.totals,
            });
        }
        CreditLines::Lines(inputs) => (inputs, None),
        CreditLines::Discounted(inputs, discount) => (inputs, Some(*discount)),
    };
    let items = price_lines(inputs.clone(), invoice.currency, now)?;
    let tax_rule = match invoice.tax_rule {
        TaxRule::Percentage(percentage) => TaxRule::Percentage(percentage),
        TaxRule::Flat(_) => TaxRule::Flat(Decimal::ZERO),
    };
    let totals =
        Pricing { items: &items, vat: &invoice.vat, rule: tax_rule, discount, currency: invoice.currency }
            .totals(None)?;
    Ok(PricedCredit { items, tax_rule, discount, totals })
}

impl CreditNote {
    /// Its VAT breakdown: one group per category, percentage and reason of its lines.
    pub fn vat_breakdown(&self) -> Vec<crate::VatGroup> {
        // Its totals were computed from the same breakdown when it was issued.
        self.pricing().breakdown().unwrap_or_default()
    }

    /// What its figures come from.
    pub fn pricing(&self) -> Pricing<'_> {
        Pricing {
            items: &self.line_items,
            vat: &self.vat,
            rule: self.tax_rule,
            discount: self.discount,
            currency: self.currency,
        }
    }
}

/// Which listing a credit note is in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CreditNoteFilter {
    pub invoice: Option<InvoiceId>,
    /// Only notes after this serial in listing order (newest serial first).
    pub before_serial: Option<CreditSerial>,
    /// Only notes issued at or after this instant.
    pub issued_from: Option<DateTime<Utc>>,
    /// Only notes issued before this instant.
    pub issued_before: Option<DateTime<Utc>>,
    pub limit: Option<u32>,
}

impl CreditNoteFilter {
    /// Whether `note` is one the listing shows (before `limit`).
    pub fn matches(&self, note: &CreditNote) -> bool {
        self.invoice.is_none_or(|invoice| note.invoice_id == invoice)
            && self.before_serial.is_none_or(|before| note.serial < before)
            && self.issued_from.is_none_or(|from| note.issue_date >= from)
            && self.issued_before.is_none_or(|before| note.issue_date < before)
    }
}
