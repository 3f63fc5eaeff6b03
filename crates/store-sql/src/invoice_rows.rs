//! The rows of invoices and their lines, and the invoice they make again: what the invoice,
//! ledger and chasing modules read and write alike. A leaf among the table modules.

use std::collections::HashMap;

use accounts::Currency;
use billing::invoice::Description;
use billing::ledger::Position;
use billing::{Balance, Invoice, InvoiceStatus, LineItem, Serial, TaxRule, Totals};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use kernel::StoreError;

use crate::corrupt;
use crate::types::{DbDecimal, DbUuid};

#[derive(Queryable)]
pub(crate) struct InvoiceRow {
    team_id: DbUuid,
    pub(crate) id: DbUuid,
    serial: i32,
    number: String,
    number_counter: i32,
    // Read with the row; searches compare it in SQL.
    _number_key: String,
    description: Option<String>,
    issue_date: DateTime<Utc>,
    due_date: Option<DateTime<Utc>>,
    status: String,
    currency: String,
    tax_percentage: DbDecimal,
    tax: DbDecimal,
    subtotal: DbDecimal,
    total: DbDecimal,
    client_id: DbUuid,
    sender_id: DbUuid,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    amount_paid: DbDecimal,
    amount_credited: DbDecimal,
    amount_written_off: DbDecimal,
    credit_refundable: DbDecimal,
    paid_on: Option<NaiveDate>,
    ledger_events: i32,
    sent_at: Option<DateTime<Utc>>,
    reminders_sent: i32,
    reminder_step: Option<i32>,
    next_reminder_at: Option<DateTime<Utc>>,
    #[expect(dead_code, reason = "selected with the whole row; only the overdue pass reads it")]
    overdue_at: Option<DateTime<Utc>>,
    recurring_invoice_id: Option<DbUuid>,
    recurring_sequence: Option<i32>,
    vat_category: String,
    vat_exemption_reason: Option<String>,
    exchange: Option<String>,
    service_from: Option<NaiveDate>,
    service_to: Option<NaiveDate>,
    service_is_period: bool,
    purchase_order: Option<String>,
    discount_percentage: Option<DbDecimal>,
    discount_amount: Option<DbDecimal>,
    /// NULL for an invoice made before references were kept: its number's creditor
    /// reference.
    payment_reference: Option<String>,
    quote_id: Option<DbUuid>,
    quote_kind: Option<String>,
    /// Space-separated.
    deposit_invoice_ids: Option<String>,
    deposits_deducted: DbDecimal,
    payable: DbDecimal,
}

/// A row of `line_items`, or of `credit_note_lines`, whose columns are the same.
#[derive(Queryable)]
pub(crate) struct LineRow {
    #[expect(dead_code, reason = "selected with the whole row; the invoice carries the team")]
    team_id: DbUuid,
    /// The invoice's id, or the credit note's.
    pub(crate) parent_id: DbUuid,
    id: DbUuid,
    position: i32,
    description: String,
    unit_price: DbDecimal,
    quantity: DbDecimal,
    amount: DbDecimal,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    unit_code: String,
    vat_category: Option<String>,
    tax_percentage: Option<DbDecimal>,
    vat_exemption_reason: Option<String>,
    discount_percentage: Option<DbDecimal>,
    discount_amount: Option<DbDecimal>,
}

impl TryFrom<LineRow> for LineItem {
    type Error = StoreError;
    fn try_from(row: LineRow) -> Result<Self, StoreError> {
        Ok(LineItem {
            id: row.id.into_id(),
            description: Description::from_stored(row.description)
                .map_err(|e| corrupt("line item description", e))?,
            unit_price: row.unit_price.0,
            quantity: row.quantity.0,
            amount: row.amount.0,
            position: u32::try_from(row.position).map_err(|e| corrupt("line item position", e))?,
            unit_code: billing::UnitCode::parse(&row.unit_code)
                .map_err(|e| corrupt("line item unit code", e))?,
            vat: line_vat(row.vat_category.as_deref(), row.tax_percentage, row.vat_exemption_reason)?,
            discount: match (row.discount_percentage, row.discount_amount) {
                (percentage, Some(amount)) => {
                    Some(billing::Allowance { percentage: percentage.map(|p| p.0), amount: amount.0 })
                }
                (None, None) => None,
                (Some(_), None) => return Err(corrupt("line discount", "a percentage without its amount")),
            },
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// What a line states of its VAT, from its columns (each NULL where it states none).
fn line_vat(
    category: Option<&str>,
    percentage: Option<DbDecimal>,
    reason: Option<String>,
) -> Result<billing::LineVat, StoreError> {
    Ok(billing::LineVat {
        category: category
            .map(|word| {
                <billing::VatCategory as kernel::Words>::from_word(word)
                    .ok_or_else(|| corrupt("line VAT category", word))
            })
            .transpose()?,
        percentage: percentage.map(|percentage| percentage.0),
        exemption_reason: reason
            .map(billing::invoice::ExemptionReason::from_stored)
            .transpose()
            .map_err(|e| corrupt("line VAT exemption reason", e))?,
    })
}

/// An invoice's exchange as stored: `EUR 1.0523` (the team's currency and the rate), or
/// `NULL` for an invoice in the team's currency.
pub(crate) fn exchange_text(exchange: &billing::Exchange) -> Option<String> {
    exchange.rate.map(|rate| format!("{} {}", exchange.team_currency, rate.normalize()))
}

/// The exchange of an invoice in `currency` from its stored text, checked again.
pub(crate) fn exchange_of(stored: Option<&str>, currency: &str) -> Result<billing::Exchange, StoreError> {
    let currency = Currency::parse(currency).map_err(|e| corrupt("currency", e))?;
    let Some(text) = stored else {
        return Ok(billing::Exchange::none(currency));
    };
    let (team, rate) = text.split_once(' ').ok_or_else(|| corrupt("exchange", text))?;
    let team = Currency::parse(team).map_err(|e| corrupt("exchange currency", e))?;
    let rate = billing::money::EXCHANGE_RATE.parse(rate).map_err(|e| corrupt("exchange rate", e))?;
    billing::Exchange::new(currency, team, Some(rate)).map_err(|e| corrupt("exchange", e))
}

/// A document's stored number and counter, checked again.
pub(crate) fn number_of(text: String, counter: i32) -> Result<billing::DocumentNumber, StoreError> {
    let counter =
        u32::try_from(counter).ok().filter(|c| *c > 0).ok_or_else(|| corrupt("number counter", counter))?;
    if text.is_empty() {
        return Err(corrupt("number", "empty"));
    }
    Ok(billing::DocumentNumber::stored(text, counter))
}

/// A client's stored currency, checked again.
pub(crate) fn client_currency(stored: Option<&str>) -> Result<Option<Currency>, StoreError> {
    stored.map(Currency::parse).transpose().map_err(|e| corrupt("client currency", e))
}

pub(crate) fn invoice_from(row: InvoiceRow, line_items: Vec<LineItem>) -> Result<Invoice, StoreError> {
    let serial =
        u32::try_from(row.serial).ok().and_then(Serial::new).ok_or_else(|| corrupt("serial", row.serial))?;
    let number = number_of(row.number, row.number_counter)?;
    Ok(Invoice {
        id: row.id.into_id(),
        team_id: row.team_id.into_id(),
        serial,
        payment_reference: match row.payment_reference {
            Some(stored) => {
                billing::PaymentReference::parse(&stored).map_err(|e| corrupt("payment reference", e))?
            }
            None => billing::PaymentReference::creditor(number.as_str()),
        },
        number,
        description: row
            .description
            .map(Description::from_stored)
            .transpose()
            .map_err(|e| corrupt("description", e))?,
        issue_date: row.issue_date,
        due_date: row.due_date,
        status: InvoiceStatus::parse(&row.status).map_err(|e| corrupt("status", e))?,
        currency: Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?,
        tax_rule: TaxRule::from_stored(row.tax_percentage.0, row.tax.0),
        discount: discount_of(row.discount_percentage, row.discount_amount)?,
        totals: totals_of(&row.subtotal, &row.tax, &row.total),
        from_quote: from_quote_of(
            row.quote_id,
            row.quote_kind,
            row.deposit_invoice_ids.as_deref(),
            &row.deposits_deducted,
        )?,
        balance: Balance {
            total: row.payable.0,
            paid: row.amount_paid.0,
            credited: row.amount_credited.0,
            written_off: row.amount_written_off.0,
            refundable: row.credit_refundable.0,
            paid_on: row.paid_on,
            events: position_from(row.ledger_events)?,
        },
        client_id: row.client_id.into_id(),
        sender_id: row.sender_id.into_id(),
        line_items,
        chasing: billing::Chasing {
            sent_at: row.sent_at,
            reminders_sent: u32::try_from(row.reminders_sent).map_err(|e| corrupt("reminders sent", e))?,
            reminder_step: row.reminder_step,
            next_reminder_at: row.next_reminder_at,
        },
        recurrence: match (row.recurring_invoice_id, row.recurring_sequence) {
            (Some(id), Some(sequence)) => Some(billing::Recurrence {
                recurring_invoice_id: id.into_id(),
                sequence: u32::try_from(sequence).map_err(|e| corrupt("recurring sequence", e))?,
            }),
            _ => None,
        },
        vat: vat_of(&row.vat_category, row.vat_exemption_reason)?,
        exchange: exchange_of(row.exchange.as_deref(), &row.currency)?,
        supply: supply_of(row.service_from, row.service_to, row.service_is_period, row.purchase_order)?,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The quote an invoice was made from, from its columns, checked again.
fn from_quote_of(
    quote: Option<DbUuid>,
    kind: Option<String>,
    deposits: Option<&str>,
    deducted: &DbDecimal,
) -> Result<Option<billing::quote::FromQuote>, StoreError> {
    let (Some(quote), Some(kind)) = (quote, kind) else { return Ok(None) };
    let kind = <billing::quote::ConversionKind as kernel::Words>::from_word(&kind)
        .ok_or_else(|| corrupt("quote conversion kind", &kind))?;
    let deposit_invoices = deposits
        .unwrap_or_default()
        .split_whitespace()
        .map(|id| {
            id.parse::<kernel::uuid::Uuid>()
                .map(<billing::InvoiceId as kernel::Id>::from_uuid)
                .map_err(|e| corrupt("deposit invoice id", e))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(billing::quote::FromQuote {
        quote_id: quote.into_id(),
        kind,
        deposit_invoices,
        deducted: deducted.0,
    }))
}

/// The quote columns of an invoice: the quote, the kind, the deposits and what they come to.
pub(crate) fn from_quote_columns(
    link: Option<&billing::quote::FromQuote>,
) -> (Option<DbUuid>, Option<&'static str>, Option<String>, DbDecimal) {
    match link {
        Some(link) => (
            Some(DbUuid::of(link.quote_id)),
            Some(link.kind.as_str()),
            Some(link.deposit_invoices.iter().map(ToString::to_string).collect::<Vec<_>>().join(" "))
                .filter(|ids| !ids.is_empty()),
            DbDecimal(link.deducted),
        ),
        None => (None, None, None, DbDecimal(billing::money::Decimal::ZERO)),
    }
}

/// An invoice's stored supply, checked again: a service day is stored as a period of one
/// day that is not marked a period.
fn supply_of(
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    is_period: bool,
    purchase_order: Option<String>,
) -> Result<billing::Supply, StoreError> {
    let service = match (from, to) {
        (Some(from), Some(to)) if is_period => Some(billing::ServiceTime::Period(
            billing::ServicePeriod::new(from, to).map_err(|e| corrupt("service period", e))?,
        )),
        (Some(day), Some(to)) if day == to => Some(billing::ServiceTime::Date(day)),
        (None, None) => None,
        (from, to) => return Err(corrupt("service time", format!("{from:?} to {to:?}"))),
    };
    let purchase_order = purchase_order
        .map(billing::PurchaseOrder::from_stored)
        .transpose()
        .map_err(|e| corrupt("purchase order", e))?;
    Ok(billing::Supply { service, purchase_order })
}

/// The columns of an invoice's supply: first and last day, whether a period, the order.
pub(crate) fn supply_columns(
    supply: &billing::Supply,
) -> (Option<NaiveDate>, Option<NaiveDate>, bool, Option<&str>) {
    let days = supply.service.map(billing::ServiceTime::days);
    let is_period = matches!(supply.service, Some(billing::ServiceTime::Period(_)));
    let order = supply.purchase_order.as_ref().map(kernel::Text::as_str);
    (days.map(|d| d.0), days.map(|d| d.1), is_period, order)
}

/// A document's totals from its columns: what its discounts come to is what its subtotal
/// and tax come to beyond its total.
pub(crate) fn totals_of(subtotal: &DbDecimal, tax: &DbDecimal, total: &DbDecimal) -> Totals {
    let (subtotal, tax, total) = (subtotal.0, tax.0, total.0);
    Totals { subtotal, discount_total: subtotal + tax - total, tax, total }
}

/// A document's own discount from its columns, checked again.
pub(crate) fn discount_of(
    percentage: Option<DbDecimal>,
    amount: Option<DbDecimal>,
) -> Result<Option<billing::Discount>, StoreError> {
    match (percentage, amount) {
        (None, None) => Ok(None),
        (Some(p), None) => billing::Discount::percentage(p.0).map(Some).map_err(|e| corrupt("discount", e)),
        (None, Some(a)) => billing::Discount::amount(a.0).map(Some).map_err(|e| corrupt("discount", e)),
        (Some(_), Some(_)) => Err(corrupt("discount", "both a percentage and an amount")),
    }
}

/// A document's own discount as its columns hold it: a percentage or an amount.
pub(crate) fn discount_columns(
    discount: Option<billing::Discount>,
) -> (Option<DbDecimal>, Option<DbDecimal>) {
    match discount {
        Some(billing::Discount::Percentage(p)) => (Some(DbDecimal(p)), None),
        Some(billing::Discount::Amount(a)) => (None, Some(DbDecimal(a))),
        None => (None, None),
    }
}

/// Invoices from their rows and all their items' rows (items in position order).
/// An invoice's stored VAT category and exemption reason, checked again.
pub(crate) fn vat_of(category: &str, reason: Option<String>) -> Result<billing::Vat, StoreError> {
    let category = <billing::VatCategory as kernel::Words>::from_word(category)
        .ok_or_else(|| corrupt("VAT category", category))?;
    let reason = reason
        .map(billing::invoice::ExemptionReason::from_stored)
        .transpose()
        .map_err(|e| corrupt("VAT exemption reason", e))?;
    billing::Vat::new(category, reason).map_err(|e| corrupt("VAT category", e))
}

pub(crate) fn assemble(rows: Vec<InvoiceRow>, lines: Vec<LineRow>) -> Result<Vec<Invoice>, StoreError> {
    let mut items: HashMap<DbUuid, Vec<LineItem>> = HashMap::new();
    for line in lines {
        items.entry(line.parent_id).or_default().push(line.try_into()?);
    }
    rows.into_iter()
        .map(|row| {
            let line_items = items.remove(&row.id).unwrap_or_default();
            invoice_from(row, line_items)
        })
        .collect()
}

/// A position in an invoice's books as its column holds it.
pub(crate) fn position_column(position: Position) -> i32 {
    // An invoice's books would need two billion writes to pass what the column holds.
    i32::try_from(position).unwrap_or(i32::MAX)
}

pub(crate) fn position_from(column: i32) -> Result<Position, StoreError> {
    Position::try_from(column).map_err(|_| corrupt("ledger position", column))
}

/// Inserts every item of `$document` (an invoice or a credit note) into `$table` under
/// its `$parent` column, one statement each (SQLite's async wrapper cannot batch them).
macro_rules! insert_lines {
    ($conn:ident, $document:expr) => {
        $crate::invoice_rows::insert_lines!($conn, $document, line_items, invoice_id)
    };
    ($conn:ident, $document:expr, $table:ident, $parent:ident) => {
        for item in &$document.line_items {
            diesel::insert_into($table::table)
                .values((
                    $table::team_id.eq(DbUuid::of($document.team_id)),
                    $table::$parent.eq(DbUuid::of($document.id)),
                    $table::id.eq(DbUuid::of(item.id)),
                    $table::position.eq(i32::try_from(item.position).unwrap_or(i32::MAX)),
                    $table::description.eq(item.description.as_str()),
                    $table::unit_price.eq(DbDecimal(item.unit_price)),
                    $table::quantity.eq(DbDecimal(item.quantity)),
                    $table::amount.eq(DbDecimal(item.amount)),
                    $table::created_at.eq(item.created_at),
                    $table::updated_at.eq(item.updated_at),
                    $table::unit_code.eq(item.unit_code.as_str()),
                    $table::vat_category.eq(item.vat.category.map(billing::VatCategory::as_str)),
                    $table::tax_percentage.eq(item.vat.percentage.map(DbDecimal)),
                    $table::vat_exemption_reason.eq(item
                        .vat
                        .exemption_reason
                        .as_ref()
                        .map(kernel::Text::as_str)),
                    $table::discount_percentage.eq(item.discount.and_then(|d| d.percentage).map(DbDecimal)),
                    $table::discount_amount.eq(item.discount.map(|d| DbDecimal(d.amount))),
                ))
                .execute($conn)
                .await?;
        }
    };
}
pub(crate) use insert_lines;
