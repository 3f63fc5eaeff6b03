//! `/v1/invoices`: invoices with their line items, and the public PDF link.
#![expect(
    clippy::large_stack_arrays,
    reason = "utoipa's ToSchema derive builds InvoiceBody's schema, forty-odd fields, in one array: once, when the description is made"
)]

use accounts::Principal;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use billing::client::{KeptPostalCode, OptionalText, RequiredText};
use billing::invoice::{Description, InvoiceRule};
use billing::issue::DocumentRef;
use billing::money::{
    AMOUNT, Decimal, EXCHANGE_RATE, MAX_LINE_ITEMS, QUANTITY, TAX_PERCENTAGE, UNIT_PRICE, round_to_minor,
};
use billing::service::{self, BillingError, InvoiceChanges, InvoiceDraft};
use billing::store::BillTo;
use billing::{
    Client, ClientDetails, Invoice, InvoiceFilter, InvoiceId, InvoicePosition, InvoiceStatus, LineInput,
    LineItem, PurchaseOrder, ServicePeriod, ServiceTime, Supply,
};
use kernel::{Email, FieldError, Id, parse_instant};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite};
use crate::rest::csv;
use crate::rest::openapi::{
    Binary, InstantInput, InvoiceStatus as InvoiceStatusSchema, VatCategory as VatCategorySchema,
};
use crate::rest::paging::{self, Page};
use crate::rest::routes::discounts::{DiscountBody, DiscountInput};
use crate::rest::routes::numbers::{Exact, number};
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, body_id, created, midnight, no_such,
    not_found, path_id, pdf, query_day, query_id, query_search, refusals,
};
use crate::rest::state::ApiState;

/// A line item of an invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LineItemBody {
    id: Uuid,
    description: String,
    /// As given (may be finer than the currency's minor unit).
    unit_price: Exact,
    quantity: Exact,
    /// `unitPrice × quantity`, rounded to the currency's minor unit half away from zero.
    amount: Exact,
    /// The line's discount as given; null for none.
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    /// `amount` less what its discount takes (a percentage of it rounded to the minor
    /// unit, or the amount given): what the line adds to its VAT group.
    net_amount: Exact,
    /// 0-based index in the request's `lineItems` array.
    position: u32,
    /// What `quantity` counts (UN/ECE Recommendation 20): `HUR` (hours) on lines billed
    /// from time, `C62` (one) unless given.
    #[schema(example = "C62")]
    unit_code: String,
    /// The line's VAT category: the one it states, else the invoice's.
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    /// The line's rate: the one it states, else the invoice's where its category is the
    /// invoice's, else 0.
    tax_percentage: Exact,
    /// Why the line carries no VAT; null for `S` and `Z`.
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
    invoice_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// A group of the VAT breakdown: the lines of one category, rate and exemption reason.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct VatGroupBody {
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    tax_percentage: Exact,
    /// Σ the group's line net amounts, less its share of the document's discount.
    taxable_amount: Exact,
    /// `taxableAmount × taxPercentage / 100`, rounded once to the minor unit (or, on an
    /// invoice whose lines all take its own rate, its flat tax).
    tax_amount: Exact,
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
}

impl VatGroupBody {
    /// The breakdown `groups` of a document in `currency`.
    pub(crate) fn all(groups: Vec<billing::VatGroup>, currency: billing::money::Currency) -> Vec<Self> {
        groups
            .into_iter()
            .map(|group| Self {
                vat_category: group.rate.category.as_str(),
                tax_percentage: Exact(group.rate.percentage.normalize()),
                taxable_amount: Exact(round_to_minor(group.taxable_amount, currency)),
                tax_amount: Exact(round_to_minor(group.tax_amount, currency)),
                vat_exemption_reason: group.rate.exemption_reason.map(kernel::Text::into_string),
            })
            .collect()
    }
}

/// A line's VAT as answered: its rate on a document of `vat` and `rule`.
pub(crate) fn line_rate(
    item: &LineItem,
    vat: &billing::Vat,
    rule: billing::TaxRule,
) -> (&'static str, Exact, Option<String>) {
    let rate = item.vat.resolve(vat, rule.percentage());
    (rate.category.as_str(), Exact(rate.percentage), rate.exemption_reason.map(kernel::Text::into_string))
}

/// An invoice with its line items. Money is exact: JSON numbers with the currency's
/// minor-unit decimals (2 for EUR and USD, 0 for JPY, 3 for KWD).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InvoiceBody {
    pub(crate) id: Uuid,
    /// Per team, gapless: `INV-0001`, `INV-0002`, …
    #[schema(example = "INV-0001")]
    serial: String,
    /// What the client quotes with a bank transfer (EN 16931 BT-83), made from `serial`
    /// when the invoice was made and never changed: an ISO 11649 creditor reference
    /// (`RF97INV0042`), or, when the team's sender was paid to a Swiss QR-IBAN, a 27-digit
    /// QR reference. In its electronic form, without spaces.
    #[schema(example = "RF97INV0042")]
    payment_reference: String,
    #[schema(required = true)]
    description: Option<String>,
    issue_date: Timestamp,
    #[schema(required = true)]
    due_date: Option<Timestamp>,
    #[schema(value_type = InvoiceStatusSchema)]
    status: &'static str,
    /// The invoice's ISO 4217 currency: its client's when it was made (the team's unless
    /// the client has one), never changed.
    #[schema(example = "EUR")]
    currency: &'static str,
    /// Units of the team's currency per unit of the invoice's; null for an invoice in the
    /// team's currency.
    #[schema(required = true)]
    exchange_rate: Option<Exact>,
    /// `total × exchangeRate` in the team's currency, rounded to its minor unit (the
    /// `total` itself for an invoice in the team's currency).
    total_in_team_currency: Exact,
    /// `tax × exchangeRate` in the team's currency, rounded to its minor unit.
    tax_in_team_currency: Exact,
    /// The team's ISO 4217 currency, which `totalInTeamCurrency` is in.
    #[schema(example = "EUR")]
    team_currency: &'static str,
    /// Σ `lineItems[].amount`: before any discount.
    subtotal: Exact,
    /// The discount of the whole invoice as given; null for none. It is allocated to the
    /// VAT groups in proportion to their net amounts (a percentage takes its share of
    /// each group).
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    /// What the lines' discounts and the invoice's take off the subtotal.
    discount_total: Exact,
    /// `subtotal − discountTotal`: what the tax is computed on (Σ
    /// `vatBreakdown[].taxableAmount`).
    taxable_amount: Exact,
    /// When greater than 0, the rate of the lines that state none: each VAT group's tax is
    /// its taxable amount × its rate / 100, rounded once.
    tax_percentage: Exact,
    /// Σ `vatBreakdown[].taxAmount`; with `taxPercentage` 0 and no line rate of its own,
    /// the flat tax given.
    tax: Exact,
    /// `subtotal − discountTotal + tax`.
    total: Exact,
    /// Payments less refunds.
    amount_paid: Exact,
    /// What the invoice's credit notes took off what is due.
    amount_credited: Exact,
    amount_written_off: Exact,
    /// `total − depositsDeducted − amountPaid − amountCredited − amountWrittenOff`; never
    /// below 0.
    amount_due: Exact,
    /// The quote it was made from; null for an invoice made otherwise.
    #[schema(required = true)]
    quote_id: Option<Uuid>,
    /// How it bills its quote: `deposit`, `final` (the rest after the deposits) or `full`;
    /// null for an invoice not made from a quote.
    #[schema(required = true, example = "final")]
    quote_conversion: Option<&'static str>,
    /// On a final invoice, its quote's deposit invoices, whose totals it deducts.
    deposit_invoice_ids: Vec<Uuid>,
    /// What it deducts for those deposit invoices (EN 16931 BT-113, the prepaid amount);
    /// 0 on other invoices.
    deposits_deducted: Exact,
    /// When `amountDue` reached 0 with money paid: the day of the payment that settled it
    /// (00:00 UTC); null otherwise.
    #[schema(required = true)]
    paid_at: Option<Timestamp>,
    client_id: Uuid,
    senders_address_id: Uuid,
    team_id: Uuid,
    line_items: Vec<LineItemBody>,
    /// When the invoice was first e-mailed (`POST /v1/invoices/{id}/send`); null until then.
    #[schema(required = true)]
    sent_at: Option<Timestamp>,
    /// When the team's reminder policy sends the next reminder (it goes out at the first
    /// job pass at or after it); null when none will: the policy is off or has no step
    /// left, the invoice has no due date or nothing due, or the client takes no reminders.
    #[schema(required = true)]
    next_reminder_at: Option<Timestamp>,
    /// Reminders of the invoice sent so far.
    reminders_sent: u32,
    /// The recurring invoice that made it; null for an invoice made by hand.
    #[schema(required = true)]
    recurring_invoice_id: Option<Uuid>,
    /// Its place among that recurring invoice's invoices: 1, 2, 3 … with no gap.
    #[schema(required = true)]
    recurring_sequence: Option<u32>,
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    /// Why no VAT is charged; null for `S` and `Z`.
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
    /// The tax per VAT category, rate and reason of its lines (EN 16931 BG-23): `tax` is
    /// the sum of their `taxAmount`s, `taxableAmount` of their `taxableAmount`s.
    vat_breakdown: Vec<VatGroupBody>,
    /// The day the service was rendered (EN 16931 BT-72); null when a period, or nothing,
    /// is stated.
    #[schema(required = true, value_type = Option<String>, format = Date)]
    service_date: Option<String>,
    /// The days over which it was rendered (BG-14); null when a day, or nothing, is stated.
    /// With neither, the service date is the issue date, and the PDF says so.
    #[schema(required = true)]
    service_period: Option<ServicePeriodBody>,
    /// The buyer's purchase order number (BT-13); null for none.
    #[schema(required = true)]
    purchase_order: Option<String>,
    /// Its PDF, relative to the server's address: `/v1/invoices/pdf?id=…`, which needs no
    /// key (the id is the secret); add `&download=true` for a download.
    #[schema(example = "/v1/invoices/pdf?id=0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e")]
    pdf_url: String,
    /// Its page for the client, relative to the server's address: `/invoices/{id}`, which
    /// needs no key (the id is the secret): what is due, how to pay it, the lines and the
    /// downloads, in the client's language.
    #[schema(example = "/invoices/0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e")]
    hosted_url: String,
    created_at: Timestamp,
    updated_at: Timestamp,
}

/// Days a service was rendered over, both included (`YYYY-MM-DD`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServicePeriodBody {
    #[schema(value_type = String, format = Date)]
    from: String,
    /// Not before `from`.
    #[schema(value_type = String, format = Date)]
    to: String,
}

impl ServicePeriodBody {
    fn of(period: ServicePeriod) -> Self {
        Self { from: period.from().to_string(), to: period.to().to_string() }
    }

    /// The period given in the field `field`.
    fn parse(self, field: &str) -> Result<ServicePeriod, FieldError> {
        let from = query_day(&self.from, &format!("{field}.from"))?;
        let to = query_day(&self.to, &format!("{field}.to"))?;
        ServicePeriod::new(from, to)
            .map_err(|_| FieldError::new(format!("{field}.to"), format!("must not be before {field}.from")))
    }
}

/// The service time of `serviceDate` and `servicePeriod`, at most one of them given.
fn service_time(
    date: Option<String>,
    period: Option<ServicePeriodBody>,
) -> Result<Option<ServiceTime>, FieldError> {
    match (date, period) {
        (Some(_), Some(_)) => {
            Err(FieldError::new("serviceDate", "give either serviceDate or servicePeriod, not both"))
        }
        (Some(date), None) => Ok(Some(ServiceTime::Date(query_day(&date, "serviceDate")?))),
        (None, Some(period)) => Ok(Some(ServiceTime::Period(period.parse("servicePeriod")?))),
        (None, None) => Ok(None),
    }
}

fn purchase_order(text: String) -> Result<PurchaseOrder, FieldError> {
    PurchaseOrder::parse(text).map_err(|e| e.at("purchaseOrder"))
}

impl InvoiceBody {
    pub(crate) fn new(invoice: Invoice, now: chrono::DateTime<chrono::Utc>) -> Self {
        let status = invoice.status_at(now).as_str();
        let deposits_deducted = Exact(round_to_minor(invoice.deposits_deducted(), invoice.currency));
        let invoice_id = invoice.id.as_uuid();
        let vat_breakdown = VatGroupBody::all(invoice.vat_breakdown(), invoice.currency);
        let (vat, rule) = (invoice.vat.clone(), invoice.tax_rule);
        let line = |item: LineItem| {
            let (vat_category, tax_percentage, vat_exemption_reason) = line_rate(&item, &vat, rule);
            let net_amount = Exact(round_to_minor(item.net_amount(), invoice.currency));
            LineItemBody {
                id: item.id.as_uuid(),
                description: item.description.into_string(),
                unit_price: Exact(item.unit_price.normalize()),
                quantity: Exact(item.quantity.normalize()),
                amount: Exact(round_to_minor(item.amount, invoice.currency)),
                discount: item.discount.map(|d| DiscountBody::of_line(d, invoice.currency)),
                net_amount,
                position: item.position,
                unit_code: item.unit_code.as_str().to_owned(),
                vat_category,
                tax_percentage,
                vat_exemption_reason,
                invoice_id,
                created_at: Timestamp(item.created_at),
                updated_at: Timestamp(item.updated_at),
            }
        };
        Self {
            id: invoice_id,
            serial: invoice.number.to_string(),
            payment_reference: invoice.payment_reference.to_string(),
            description: invoice.description.map(Description::into_string),
            issue_date: Timestamp(invoice.issue_date),
            due_date: invoice.due_date.map(Timestamp),
            status,
            currency: invoice.currency.as_str(),
            exchange_rate: invoice.exchange.rate.map(|rate| Exact(rate.normalize())),
            // Within bounds: a create or change refuses a total whose product is not.
            total_in_team_currency: Exact(
                invoice.exchange.in_team_currency(invoice.totals.total).unwrap_or_default(),
            ),
            tax_in_team_currency: Exact(
                invoice.exchange.in_team_currency(invoice.totals.tax).unwrap_or_default(),
            ),
            team_currency: invoice.exchange.team_currency.as_str(),
            // Rounded again on the way out: a store may read `0.00` back as `0`.
            subtotal: Exact(round_to_minor(invoice.totals.subtotal, invoice.currency)),
            discount: invoice.discount.map(|d| DiscountBody::of(d, invoice.currency)),
            discount_total: Exact(round_to_minor(invoice.totals.discount_total, invoice.currency)),
            taxable_amount: Exact(round_to_minor(invoice.totals.taxable_amount(), invoice.currency)),
            tax_percentage: Exact(invoice.tax_rule.percentage().normalize()),
            tax: Exact(round_to_minor(invoice.totals.tax, invoice.currency)),
            total: Exact(round_to_minor(invoice.totals.total, invoice.currency)),
            amount_paid: Exact(round_to_minor(invoice.balance.paid, invoice.currency)),
            amount_credited: Exact(round_to_minor(invoice.balance.credited, invoice.currency)),
            amount_written_off: Exact(round_to_minor(invoice.balance.written_off, invoice.currency)),
            amount_due: Exact(round_to_minor(invoice.balance.due(), invoice.currency)),
            quote_id: invoice.from_quote.as_ref().map(|link| link.quote_id.as_uuid()),
            quote_conversion: invoice.from_quote.as_ref().map(|link| link.kind.as_str()),
            deposit_invoice_ids: invoice
                .from_quote
                .as_ref()
                .map(|link| link.deposit_invoices.iter().map(kernel::Id::as_uuid).collect())
                .unwrap_or_default(),
            deposits_deducted,
            paid_at: invoice.balance.paid_on.map(|day| Timestamp(midnight(day))),
            client_id: invoice.client_id.as_uuid(),
            senders_address_id: invoice.sender_id.as_uuid(),
            team_id: invoice.team_id.as_uuid(),
            line_items: invoice.line_items.into_iter().map(line).collect(),
            sent_at: invoice.chasing.sent_at.map(Timestamp),
            next_reminder_at: invoice.chasing.next_reminder_at.map(Timestamp),
            reminders_sent: invoice.chasing.reminders_sent,
            recurring_invoice_id: invoice.recurrence.map(|r| r.recurring_invoice_id.as_uuid()),
            recurring_sequence: invoice.recurrence.map(|r| r.sequence),
            vat_category: invoice.vat.category().as_str(),
            vat_exemption_reason: invoice.vat.exemption_reason().map(|r| r.as_str().to_owned()),
            vat_breakdown,
            service_date: match invoice.supply.service {
                Some(ServiceTime::Date(day)) => Some(day.to_string()),
                _ => None,
            },
            service_period: match invoice.supply.service {
                Some(ServiceTime::Period(period)) => Some(ServicePeriodBody::of(period)),
                _ => None,
            },
            purchase_order: invoice.supply.purchase_order.map(PurchaseOrder::into_string),
            pdf_url: notify::service::Links::relative().pdf(DocumentRef::Invoice(invoice.id)),
            hosted_url: notify::service::Links::relative().page(invoice.id),
            created_at: Timestamp(invoice.created_at),
            updated_at: Timestamp(invoice.updated_at),
        }
    }
}

/// A line item on input. `amount` may be left out; given, it must equal
/// `unitPrice × quantity` once both are rounded to the minor unit.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct LineItemInput {
    #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 1000)]
    description: String,
    /// At most 6 decimal places; kept as given.
    #[schema(value_type = f64, minimum = 0, maximum = 1_000_000_000_000_i64)]
    unit_price: Number,
    /// Greater than 0, at most 6 decimal places; kept as given.
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1_000_000_000)]
    quantity: Number,
    /// Rounded to the minor unit before it is compared.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
    amount: Option<Number>,
    /// What `quantity` counts, a UN/ECE Recommendation 20 code such as `HUR` (hours),
    /// `DAY` or `C62` (one, the default).
    #[serde(default)]
    #[schema(pattern = r"^[A-Z0-9]{2,3}$")]
    unit_code: Option<String>,
    /// The line's own VAT category; the invoice's when left out. Stating a category, rate
    /// or reason other than the invoice's taxes the line on its own: the tax is then
    /// computed per category and rate (see `vatBreakdown`), and a flat `tax` is refused.
    #[serde(default)]
    #[schema(value_type = Option<VatCategorySchema>)]
    vat_category: Option<String>,
    /// The line's own rate, 0 to 100, at most 4 decimal places; when left out, the
    /// invoice's where the line's category is the invoice's, else 0. `S` is above 0, every
    /// other category at 0.
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 100)]
    tax_percentage: Option<Number>,
    /// Why the line carries no VAT, which `E`, `AE`, `K`, `G` and `O` need and `S` and `Z`
    /// refuse; the invoice's when left out and the category is the invoice's.
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 1000
    )]
    vat_exemption_reason: Option<String>,
    /// The line's discount (EN 16931 BG-27): `{"percentage": 10}` or `{"amount": 5.00}`, at
    /// most the line's amount. `amount` stays `unitPrice × quantity`; `netAmount` is after
    /// the discount.
    #[serde(default)]
    discount: Option<DiscountInput>,
}

/// The address of an inline client; every line may be left out.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AddressInput {
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    line1: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    line2: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 255,
        default = ""
    )]
    line3: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 32,
        default = ""
    )]
    postal_code: String,
}

/// A client given inline: the team's oldest client with this email (case-insensitive)
/// is used; when there is none, one is made from these details, with empty address
/// fields where `address` leaves them out.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct InlineClientInput {
    #[schema(format = Email, max_length = 254)]
    email: String,
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    name: String,
    #[serde(default)]
    address: Option<AddressInput>,
}

/// Declares a request body that makes an invoice: the fields given, then the fields of
/// every new invoice (client, dates, description, sender, tax), which its `head` takes
/// out. The caller imports what the fields name (`InlineClientInput`, `InstantInput`,
/// `Number`, `InvoiceHead`).
macro_rules! invoice_body {
    ($(#[$meta:meta])* pub(crate) struct $name:ident { $($fields:tt)* }) => {
        #[derive(Debug, Deserialize, ToSchema)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        $(#[$meta])*
        pub(crate) struct $name {
            $($fields)*
            #[serde(default)]
            #[schema(format = Uuid)]
            client_id: Option<String>,
            #[serde(default)]
            client: Option<InlineClientInput>,
            /// Default: now.
            #[serde(default)]
            #[schema(value_type = Option<InstantInput>)]
            issue_date: Option<String>,
            /// Not before `issueDate`. Default: none.
            #[serde(default)]
            #[schema(value_type = Option<InstantInput>)]
            due_date: Option<String>,
            #[serde(default)]
            #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 1000, nullable)]
            description: Option<String>,
            /// One of the team's sender addresses. Default: the team's default sender.
            #[serde(default)]
            #[schema(format = Uuid)]
            senders_address_id: Option<String>,
            /// 0 to 100, at most 4 decimal places. When greater than 0 the tax is computed
            /// from it.
            #[serde(default)]
            #[schema(value_type = f64, minimum = 0, maximum = 100, default = 0)]
            tax_percentage: Option<Number>,
            /// Left out, it is computed from `taxPercentage` when that is above 0, and is 0
            /// otherwise: no constant default, so that a client filling in defaults does not
            /// send a tax that contradicts its percentage. Given with a `taxPercentage` above
            /// 0, it must equal the computed tax; with `taxPercentage` 0 it is a flat tax,
            /// rounded to the minor unit.
            #[serde(default)]
            #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
            tax: Option<Number>,
            /// The VAT category (EN 16931 BT-151): `S` standard (the default), `Z` zero
            /// rated, `E` exempt, `AE` reverse charge, `K` intra-community, `G` export, `O`
            /// outside the scope of VAT. Any but `S` charges no VAT: the tax must be 0.
            #[serde(default)]
            #[schema(value_type = VatCategorySchema)]
            vat_category: Option<String>,
            /// Why no VAT is charged (BT-120): required for `E`, `AE`, `K`, `G` and `O`,
            /// refused for `S` and `Z`; 1 to 1000 characters.
            #[serde(default)]
            #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 1000)]
            vat_exemption_reason: Option<String>,
            /// Units of the team's currency per unit of the invoice's (`1.0523`): required
            /// when the client is billed in another currency than the team's, refused
            /// otherwise; greater than 0, at most 10 decimal places. No rate is fetched
            /// from anywhere.
            #[serde(default)]
            #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1e9)]
            exchange_rate: Option<Number>,
            /// The day the service was rendered (BT-72), `YYYY-MM-DD`. Not with
            /// `servicePeriod`.
            #[serde(default)]
            #[schema(value_type = Option<String>, format = Date)]
            service_date: Option<String>,
            /// The days over which the service was rendered (BG-14). Not with
            /// `serviceDate`. Without either, the service date is the issue date.
            #[serde(default)]
            service_period: Option<ServicePeriodBody>,
            /// The buyer's purchase order number (BT-13), 1 to 200 characters.
            #[serde(default)]
            #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 200)]
            purchase_order: Option<String>,
            /// A discount of the whole invoice (EN 16931 BG-20), after the lines' own:
            /// `{"percentage": 10}` or `{"amount": 50.00}`, at most what the lines come to.
            /// It is allocated to the VAT groups in proportion to their net amounts.
            #[serde(default)]
            discount: Option<$crate::rest::routes::discounts::DiscountInput>,
        }

        impl $name {
            /// The invoice's own fields, taken out of the body.
            fn head(&mut self) -> InvoiceHead {
                InvoiceHead {
                    client_id: self.client_id.take(),
                    client: self.client.take(),
                    issue_date: self.issue_date.take(),
                    due_date: self.due_date.take(),
                    description: self.description.take(),
                    senders_address_id: self.senders_address_id.take(),
                    tax_percentage: self.tax_percentage.take(),
                    tax: self.tax.take(),
                    vat_category: self.vat_category.take(),
                    vat_exemption_reason: self.vat_exemption_reason.take(),
                    exchange_rate: self.exchange_rate.take(),
                    service_date: self.service_date.take(),
                    service_period: self.service_period.take(),
                    purchase_order: self.purchase_order.take(),
                    discount: self.discount.take(),
                }
            }
        }
    };
}
pub(crate) use invoice_body;

invoice_body! {
    /// A new invoice. Exactly one of `clientId` and `client`. `subtotal` and `total` are
    /// computed, not accepted.
    #[schema(example = json!({
        "client": {"email": "zoe@example.com", "name": "Zoë Łukasiewicz",
                   "address": {"line1": "Οδός Ερμού 1", "postalCode": "105 63"}},
        "description": "Website redesign", "issueDate": "2026-11-20", "dueDate": "2026-12-20",
        "taxPercentage": 19,
        "lineItems": [{"description": "Design", "unitPrice": 100, "quantity": 1},
                      {"description": "Hosting", "unitPrice": 0.5, "quantity": 3}]}))]
    pub(crate) struct InvoiceInput {
        /// `position` follows this order.
        #[schema(min_items = 1, max_items = 1000)]
        line_items: Vec<LineItemInput>,
        /// Default `PENDING`. `PAID` records a payment of the total, `EXPIRED` writes it
        /// off; `PAID_PARTIAL` and `OVERDUE` follow from the books and are refused.
        #[serde(default)]
        #[schema(value_type = Option<InvoiceStatusSchema>)]
        status: Option<String>,
    }
}

/// A partial update: only the fields given change. `lineItems` replaces every item;
/// the totals are recomputed. `subtotal` and `total` are not accepted.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"description": "Website redesign, November", "taxPercentage": 19,
    "lineItems": [{"description": "Design", "unitPrice": 120, "quantity": 1}]}))]
pub(crate) struct InvoicePatch {
    #[serde(default)]
    #[schema(value_type = String, format = Uuid)]
    client_id: Patch<String>,
    #[serde(default)]
    #[schema(value_type = InstantInput)]
    issue_date: Patch<String>,
    /// `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<InstantInput>)]
    due_date: Patch<String>,
    /// `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$")]
    description: Patch<String>,
    /// `PAID` records a payment of what is due, `EXPIRED` writes it off, `PENDING` is
    /// refused once money was recorded; `PAID_PARTIAL` and `OVERDUE` follow from the books
    /// and are refused.
    #[serde(default)]
    #[schema(value_type = InvoiceStatusSchema)]
    status: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, format = Uuid)]
    senders_address_id: Patch<String>,
    /// 0 to 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 100)]
    tax_percentage: Patch<Number>,
    /// Rounded to the minor unit.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
    tax: Patch<Number>,
    /// Replaces every item.
    #[serde(default)]
    #[schema(value_type = Vec<LineItemInput>, min_items = 1, max_items = 1000)]
    line_items: Patch<Vec<LineItemInput>>,
    /// Replaces the VAT category; with it, `vatExemptionReason` where the category needs
    /// one (see the create).
    #[serde(default)]
    #[schema(value_type = VatCategorySchema)]
    vat_category: Patch<String>,
    /// Only with `vatCategory`.
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 1000)]
    vat_exemption_reason: Patch<String>,
    /// A new rate for an invoice in another currency than the team's, greater than 0, at
    /// most 10 decimal places: only while nothing was paid, credited, written off or sent
    /// (409 after). An invoice's `currency` never changes.
    #[serde(default)]
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1e9)]
    exchange_rate: Patch<Number>,
    /// Replaces the service time with a day; `null` removes the service time. Not with
    /// `servicePeriod`.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date)]
    service_date: Patch<String>,
    /// Replaces the service time with a period; `null` removes the service time.
    #[serde(default)]
    #[schema(value_type = Option<ServicePeriodBody>)]
    service_period: Patch<ServicePeriodBody>,
    /// `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 200)]
    purchase_order: Patch<String>,
    /// Replaces the discount of the whole invoice; `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<DiscountInput>)]
    discount: Patch<DiscountInput>,
}

pub(crate) fn lines(inputs: Vec<LineItemInput>) -> Result<Vec<LineInput>, FieldError> {
    inputs
        .into_iter()
        .enumerate()
        .map(|(i, input)| {
            let at = |name: &str| format!("lineItems[{i}].{name}");
            let unit_price = number(&input.unit_price, &at("unitPrice"), UNIT_PRICE)?;
            let quantity = number(&input.quantity, &at("quantity"), QUANTITY)?;
            let amount =
                input.amount.as_ref().map(|amount| number(amount, &at("amount"), AMOUNT)).transpose()?;
            Ok(LineInput {
                discount: input.discount.map(|d| d.parse(&at("discount"))).transpose()?,
                description: Description::parse(input.description).map_err(|e| e.at(at("description")))?,
                unit_price,
                quantity,
                amount,
                unit_code: input
                    .unit_code
                    .as_deref()
                    .map(|code| billing::UnitCode::parse(code).map_err(|e| e.at(at("unitCode"))))
                    .transpose()?,
                vat: billing::LineVat {
                    category: input
                        .vat_category
                        .as_deref()
                        .map(|word| {
                            <billing::VatCategory as kernel::Words>::parse_word(word)
                                .map_err(|e| e.at(at("vatCategory")))
                        })
                        .transpose()?,
                    percentage: input
                        .tax_percentage
                        .as_ref()
                        .map(|number| {
                            self::number(number, &at("taxPercentage"), billing::money::TAX_PERCENTAGE)
                        })
                        .transpose()?,
                    exemption_reason: input
                        .vat_exemption_reason
                        .map(|text| {
                            billing::invoice::ExemptionReason::parse(text)
                                .map_err(|e| e.at(at("vatExemptionReason")))
                        })
                        .transpose()?,
                },
            })
        })
        .collect()
}

fn instant(text: &str, field: &str) -> Result<chrono::DateTime<chrono::Utc>, FieldError> {
    parse_instant(text).map_err(|e| e.at(field))
}

fn status(text: &str) -> Result<InvoiceStatus, FieldError> {
    InvoiceStatus::parse(text).map_err(|e| e.at("status"))
}

fn description(text: String) -> Result<Description, FieldError> {
    Description::parse(text).map_err(|e| e.at("description"))
}

fn sender(text: &str) -> Result<billing::SenderAddressId, FieldError> {
    body_id(text, "sendersAddressId", "sender address")
}

fn client(text: &str) -> Result<billing::ClientId, FieldError> {
    body_id(text, "clientId", "client")
}

impl InlineClientInput {
    fn bill_to(
        self,
        team: accounts::TeamId,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<BillTo, FieldError> {
        let email = Email::parse(self.email).map_err(|e| e.at("client.email"))?;
        let name = RequiredText::parse(self.name).map_err(|e| e.at("client.name"))?;
        // The address is optional: a client made without one has empty address fields.
        let address = self.address.unwrap_or_default();
        let details = ClientDetails {
            language: None,
            peppol_id: None,
            name,
            email: email.clone(),
            phone: OptionalText::empty(),
            vat_number: OptionalText::empty(),
            line1: OptionalText::parse(address.line1).map_err(|e| e.at("client.address.line1"))?,
            line2: OptionalText::parse(address.line2).map_err(|e| e.at("client.address.line2"))?,
            line3: OptionalText::parse(address.line3).map_err(|e| e.at("client.address.line3"))?,
            postal_code: KeptPostalCode::parse(address.postal_code)
                .map_err(|e| e.at("client.address.postalCode"))?,
            city: OptionalText::empty(),
            country_code: None,
            buyer_reference: OptionalText::empty(),
            reminders_enabled: true,
            currency: None,
            payment_terms: None,
        };
        // Used only when no client of the team has this email; the store decides that.
        let new_client = Box::new(Client::new(team, details, now));
        Ok(BillTo::Inline { email, new_client })
    }
}

/// The fields of a new invoice besides its lines and status, as given.
pub(crate) struct InvoiceHead {
    pub(crate) client_id: Option<String>,
    pub(crate) client: Option<InlineClientInput>,
    pub(crate) issue_date: Option<String>,
    pub(crate) due_date: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) senders_address_id: Option<String>,
    pub(crate) tax_percentage: Option<Number>,
    pub(crate) tax: Option<Number>,
    pub(crate) vat_category: Option<String>,
    pub(crate) vat_exemption_reason: Option<String>,
    pub(crate) exchange_rate: Option<Number>,
    pub(crate) service_date: Option<String>,
    pub(crate) service_period: Option<ServicePeriodBody>,
    pub(crate) purchase_order: Option<String>,
    pub(crate) discount: Option<DiscountInput>,
}

/// The VAT of a body: `vatCategory` (standard when `None`) and its exemption reason.
pub(crate) fn vat(
    category: Option<&str>,
    reason: Option<String>,
) -> Result<Option<billing::Vat>, FieldError> {
    let reason = reason
        .map(|r| billing::invoice::ExemptionReason::parse(r).map_err(|e| e.at("vatExemptionReason")))
        .transpose()?;
    let Some(category) = category else {
        return match reason {
            Some(_) => Err(FieldError::new("vatExemptionReason", "give it with vatCategory")),
            None => Ok(None),
        };
    };
    let category =
        <billing::VatCategory as kernel::Words>::parse_word(category).map_err(|e| e.at("vatCategory"))?;
    billing::Vat::new(category, reason)
        .map(Some)
        .map_err(|rule| invoice_rule(&InvoiceRule::of_invoice_vat(rule)))
}

impl InvoiceHead {
    /// The draft of a PENDING invoice with no lines yet, or the first field that is wrong.
    pub(crate) fn parse(
        self,
        team: accounts::TeamId,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<InvoiceDraft, FieldError> {
        let bill_to = match (self.client_id, self.client) {
            (Some(_), Some(_)) => {
                return Err(FieldError::new("client", "give either clientId or client, not both"));
            }
            (Some(id), None) => BillTo::Existing(client(&id)?),
            (None, Some(inline)) => inline.bill_to(team, now)?,
            (None, None) => return Err(FieldError::new("clientId", "is required when client is not given")),
        };
        Ok(InvoiceDraft {
            discount: self.discount.map(|d| d.parse("discount")).transpose()?,
            bill_to,
            issue_date: self.issue_date.as_deref().map(|d| instant(d, "issueDate")).transpose()?,
            due_date: self.due_date.as_deref().map(|d| instant(d, "dueDate")).transpose()?,
            description: self.description.map(description).transpose()?,
            status: None,
            sender_id: self.senders_address_id.as_deref().map(sender).transpose()?,
            tax_percentage: self
                .tax_percentage
                .map(|n| number(&n, "taxPercentage", TAX_PERCENTAGE))
                .transpose()?,
            tax: self.tax.map(|n| number(&n, "tax", AMOUNT)).transpose()?,
            line_items: Vec::new(),
            time_entries: Vec::new(),
            vat: vat(self.vat_category.as_deref(), self.vat_exemption_reason)?,
            exchange_rate: self
                .exchange_rate
                .map(|n| number(&n, "exchangeRate", EXCHANGE_RATE))
                .transpose()?,
            supply: Supply {
                service: service_time(self.service_date, self.service_period)?,
                purchase_order: self.purchase_order.map(purchase_order).transpose()?,
            },
        })
    }
}

impl InvoiceInput {
    fn parse(
        mut self,
        team: accounts::TeamId,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<InvoiceDraft, FieldError> {
        let draft = self.head().parse(team, now)?;
        Ok(InvoiceDraft {
            status: self.status.as_deref().map(status).transpose()?,
            line_items: lines(self.line_items)?,
            ..draft
        })
    }
}

impl InvoicePatch {
    fn parse(self) -> Result<InvoiceChanges, FieldError> {
        Ok(InvoiceChanges {
            discount: self
                .discount
                .nullable()
                .map(|d| d.map(|d| d.parse("discount")).transpose())
                .transpose()?,
            client_id: self.client_id.required("clientId")?.as_deref().map(client).transpose()?,
            issue_date: self
                .issue_date
                .required("issueDate")?
                .map(|d| instant(&d, "issueDate"))
                .transpose()?,
            due_date: self
                .due_date
                .nullable()
                .map(|d| d.map(|d| instant(&d, "dueDate")).transpose())
                .transpose()?,
            description: self.description.nullable().map(|d| d.map(description).transpose()).transpose()?,
            status: self.status.required("status")?.as_deref().map(status).transpose()?,
            sender_id: self
                .senders_address_id
                .required("sendersAddressId")?
                .as_deref()
                .map(sender)
                .transpose()?,
            tax_percentage: self
                .tax_percentage
                .required("taxPercentage")?
                .map(|n| number(&n, "taxPercentage", TAX_PERCENTAGE))
                .transpose()?,
            tax: self.tax.required("tax")?.map(|n| number(&n, "tax", AMOUNT)).transpose()?,
            line_items: self.line_items.required("lineItems")?.map(lines).transpose()?,
            vat: vat(
                self.vat_category.required("vatCategory")?.as_deref(),
                self.vat_exemption_reason.required("vatExemptionReason")?,
            )?,
            exchange_rate: self
                .exchange_rate
                .required("exchangeRate")?
                .map(|n| number(&n, "exchangeRate", EXCHANGE_RATE))
                .transpose()?,
            service: match (self.service_date.nullable(), self.service_period.nullable()) {
                (Some(_), Some(_)) => {
                    return Err(FieldError::new(
                        "serviceDate",
                        "give either serviceDate or servicePeriod, not both",
                    ));
                }
                (Some(date), None) => {
                    Some(date.map(|d| query_day(&d, "serviceDate").map(ServiceTime::Date)).transpose()?)
                }
                (None, Some(period)) => {
                    Some(period.map(|p| p.parse("servicePeriod").map(ServiceTime::Period)).transpose()?)
                }
                (None, None) => None,
            },
            purchase_order: self
                .purchase_order
                .nullable()
                .map(|p| p.map(purchase_order).transpose())
                .transpose()?,
        })
    }
}

impl From<BillingError> for ApiError {
    fn from(error: BillingError) -> Self {
        match error {
            BillingError::Rule(rule) => invoice_rule(&rule).into(),
            BillingError::NotFound => invoice_not_found(),
            BillingError::TimeTaken => ApiError::conflict(BillingError::TimeTaken.to_string()),
            BillingError::RecurrenceTaken => ApiError::conflict(BillingError::RecurrenceTaken.to_string()),
            BillingError::StatusNotSettable(status) => refusals::status_refusal(status),
            BillingError::Books(rule) => refusals::books_refusal(&rule),
            BillingError::RateLocked => ApiError::conflict(
                "exchangeRate: the invoice was paid, credited, written off or sent, so its rate stays",
            ),
            BillingError::HasMoney => ApiError::conflict(
                "invoice: it has payments, write-offs or credit notes, which the books keep; it cannot be deleted",
            ),
            BillingError::Deducted { by } => ApiError::conflict(format!(
                "invoice: the final invoice {by} of its quote deducts this deposit; delete {by} first, or keep both"
            )),
            BillingError::TeamCurrencyChanged => ApiError::conflict(
                "currency: the team's currency changed while the invoice was made; nothing was made, send it again",
            ),
            BillingError::NumberTaken(taken) => ApiError::conflict(format!(
                "numbering: the team's pattern makes {}, which another document of the series has; nothing was made: choose a pattern that makes new numbers (PATCH /v1/team)",
                taken.number
            )),
            BillingError::Store(error) => error.into(),
        }
    }
}

/// A rule of a line's own VAT in the REST API's words, naming the line's field.
fn line_vat_rule(line: u32, rule: billing::invoice::VatRule) -> FieldError {
    use billing::invoice::VatRule;
    let at = |name: &str| format!("lineItems[{line}].{name}");
    match rule {
        VatRule::ReasonNeeded(category) => FieldError::new(
            at("vatExemptionReason"),
            format!("is required with vatCategory {}: say why no VAT is charged", category.as_str()),
        ),
        VatRule::ReasonNotTaken(category) => FieldError::new(
            at("vatExemptionReason"),
            format!(
                "is not taken with vatCategory {}, which has no exemption; leave it out",
                category.as_str()
            ),
        ),
        VatRule::StandardRateZero => FieldError::new(
            at("taxPercentage"),
            "must be greater than 0 with vatCategory S; a line without VAT is Z (zero-rated) or E (exempt)",
        ),
        VatRule::RateOutsideStandard(category) => FieldError::new(
            at("taxPercentage"),
            format!("must be 0 with vatCategory {}, which charges no VAT", category.as_str()),
        ),
        VatRule::OutOfScopeMixed => FieldError::new(
            at("vatCategory"),
            "O (outside the scope of VAT) cannot share an invoice with other categories; bill those lines on another invoice",
        ),
        VatRule::BuyerVatNumberNeeded(category) => FieldError::new(
            at("vatCategory"),
            format!("{} names the buyer's VAT number: set the client's vatNumber first", category.as_str()),
        ),
        VatRule::SellerVatNumberNeeded => FieldError::new(
            at("vatCategory"),
            "K names the seller's VAT number: set the sender address's vatNumber first",
        ),
        VatRule::DeliveryCountryNeeded => FieldError::new(
            at("vatCategory"),
            "K states the country delivered to, the client's: set the client's countryCode first",
        ),
    }
}

/// An invoice rule in the REST API's words: the JSON field, then what it must be.
pub(crate) fn invoice_rule(rule: &InvoiceRule) -> FieldError {
    match rule {
        InvoiceRule::NoLineItems => FieldError::new("lineItems", "must have at least 1 item"),
        InvoiceRule::TooManyLineItems => {
            FieldError::new("lineItems", format!("must have at most {MAX_LINE_ITEMS} items"))
        }
        InvoiceRule::LineTooLarge { line } => {
            FieldError::new(format!("lineItems[{line}].quantity"), "unitPrice × quantity is too large")
        }
        InvoiceRule::LineAmountMismatch { line, expected } => FieldError::new(
            format!("lineItems[{line}].amount"),
            format!("must equal unitPrice × quantity = {expected}"),
        ),
        InvoiceRule::TaxTooLarge => FieldError::new("taxPercentage", "subtotal × taxPercentage is too large"),
        InvoiceRule::TaxMismatch { expected } => FieldError::new(
            "tax",
            format!("must equal subtotal × taxPercentage / 100 = {expected}, or be left out"),
        ),
        InvoiceRule::TaxMismatchPerRate { expected } => FieldError::new(
            "tax",
            format!("must equal the sum of each rate's tax (see vatBreakdown) = {expected}, or be left out"),
        ),
        InvoiceRule::FlatTaxWithLineRates => FieldError::new(
            "tax",
            "a line states its own VAT rate, so the tax is computed per rate: leave tax out, or give taxPercentage",
        ),
        InvoiceRule::LineDiscountTooLarge { line, amount } => FieldError::new(
            format!("lineItems[{line}].discount"),
            format!("must take at most the line's amount, {amount}"),
        ),
        InvoiceRule::DiscountTooLarge { net } => FieldError::new(
            "discount",
            format!("must take at most what the lines come to after their own discounts, {net}"),
        ),
        InvoiceRule::LineVat { line, rule } => line_vat_rule(*line, *rule),
        InvoiceRule::DueBeforeIssue => FieldError::new("dueDate", "must not be before issueDate"),
        InvoiceRule::UnknownClient => no_such("clientId", "client"),
        InvoiceRule::UnknownSender => no_such("sendersAddressId", "sender address"),
        InvoiceRule::ExemptionReasonNeeded(category) => FieldError::new(
            "vatExemptionReason",
            format!("is required with vatCategory {}: say why no VAT is charged", category.as_str()),
        ),
        InvoiceRule::ExemptionReasonNotTaken(category) => FieldError::new(
            "vatExemptionReason",
            format!(
                "is not taken with vatCategory {}, which has no exemption; leave it out",
                category.as_str()
            ),
        ),
        InvoiceRule::TaxOutsideStandard(category) => FieldError::new(
            "taxPercentage",
            format!(
                "vatCategory {} charges no VAT: the tax must be 0 (taxPercentage 0 and no tax)",
                category.as_str()
            ),
        ),
        InvoiceRule::ExchangeRateNeeded { invoice, team } => FieldError::new(
            "exchangeRate",
            format!("is required: the client is billed in {invoice}; give the {team} per 1 {invoice}"),
        ),
        InvoiceRule::ExchangeRateNotTaken(currency) => FieldError::new(
            "exchangeRate",
            format!("is not taken: the invoice is in the team's currency, {currency}; leave it out"),
        ),
        InvoiceRule::TeamTotalTooLarge => {
            FieldError::new("exchangeRate", "total × exchangeRate is too large")
        }
        InvoiceRule::BelowDeposits { deducted } => FieldError::new(
            "lineItems",
            format!("the total may not fall below the deposits the invoice deducts, {deducted}"),
        ),
        InvoiceRule::ClientCurrencyDiffers { client, invoice } => FieldError::new(
            "clientId",
            format!(
                "the client is billed in {client} and the invoice is in {invoice}; bill a client in {invoice}"
            ),
        ),
    }
}

fn invoice_id(path: &str) -> Result<InvoiceId, ApiError> {
    path_id(path, "invoice")
}

fn invoice_not_found() -> ApiError {
    not_found("invoice")
}

/// The invoice listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct InvoiceQuery {
    /// Only invoices of this status; repeat the parameter for several
    /// (`status=PENDING&status=OVERDUE`). OVERDUE is a PENDING invoice past its `dueDate`.
    #[param(value_type = Option<Vec<InvoiceStatusSchema>>, style = Form, explode, example = json!("PENDING"))]
    status: Option<paging::OneOrMany>,
    /// Only invoices billed to this client.
    #[param(format = Uuid)]
    client_id: Option<String>,
    /// Only invoices issued on or after this UTC day, `YYYY-MM-DD`.
    #[param(value_type = Option<String>, format = Date)]
    issued_from: Option<String>,
    /// Only invoices issued on or before this UTC day, `YYYY-MM-DD`.
    #[param(value_type = Option<String>, format = Date)]
    issued_to: Option<String>,
    /// Only invoices whose serial this names (`INV-0042`, `42`), or whose description or
    /// client's name holds it in any case of its letters (1 to 100 characters).
    #[param(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        example = "INV-0001"
    )]
    q: Option<String>,
}

/// List invoices
///
/// Lists the team's invoices with their line items: newest `issueDate` first, then `serial`
/// descending. A PENDING invoice whose `dueDate` has passed reads OVERDUE. Every filter
/// given narrows the listing. With `limit`, a page: a `Link` header with `rel="next"`
/// names the next one while there is more. Needs `invoices:read`.
#[utoipa::path(
    tag = "Invoices",
    params(InvoiceQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's invoices; with `Accept: text/csv`, all of them as CSV, one row per invoice", content((Vec<InvoiceBody> = "application/json"), (String = "text/csv")),
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_invoices(
    auth: Auth<InvoicesRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if csv::wanted(&request) {
        let (store, team, now) = (state.stores.billing.clone(), auth.principal.team_id, state.clock.now());
        return csv::listing("invoices.csv", listing.parameters.clone(), |query| {
            Ok(InvoicesCsv { store, team, filter: filter_of(query, now)? })
        })
        .await;
    }
    Ok(csv::varying(listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)?))
}

/// A team's invoices as CSV, read a page at a time: one row per invoice.
#[derive(Clone)]
struct InvoicesCsv {
    store: std::sync::Arc<dyn billing::BillingStore>,
    team: accounts::TeamId,
    filter: InvoiceFilter,
}

impl csv::PagedListing for InvoicesCsv {
    type Item = Invoice;
    type Position = InvoicePosition;

    async fn read(&self, after: Option<InvoicePosition>, limit: u32) -> Result<Vec<Invoice>, ApiError> {
        let filter = InvoiceFilter { after, limit: Some(limit), ..self.filter.clone() };
        Ok(self.store.list_invoices(self.team, &filter).await?)
    }

    fn position(invoice: &Invoice) -> InvoicePosition {
        InvoicePosition::of(invoice)
    }

    fn header() -> &'static [&'static str] {
        &[
            "id",
            "serial",
            "status",
            "issueDate",
            "dueDate",
            "clientId",
            "currency",
            "subtotal",
            "taxPercentage",
            "tax",
            "total",
            "description",
            "lineItems",
            "sendersAddressId",
            "createdAt",
            "updatedAt",
            // Last, so that a spreadsheet made before them reads its columns where it did.
            "exchangeRate",
            "teamCurrency",
            "totalInTeamCurrency",
            "taxInTeamCurrency",
            "discountTotal",
            "taxableAmount",
            "vatBreakdown",
        ]
    }

    fn cells(&self, invoice: &Invoice) -> Vec<String> {
        let money = |value: Decimal| round_to_minor(value, invoice.currency).to_string();
        vec![
            invoice.id.to_string(),
            invoice.number.to_string(),
            invoice.status_at(self.filter.now).as_str().to_owned(),
            Timestamp(invoice.issue_date).text(),
            invoice.due_date.map(|due| Timestamp(due).text()).unwrap_or_default(),
            invoice.client_id.to_string(),
            invoice.currency.as_str().to_owned(),
            money(invoice.totals.subtotal),
            invoice.tax_rule.percentage().normalize().to_string(),
            money(invoice.totals.tax),
            money(invoice.totals.total),
            invoice.description.as_ref().map(|d| d.as_str().to_owned()).unwrap_or_default(),
            invoice.line_items.len().to_string(),
            invoice.sender_id.to_string(),
            Timestamp(invoice.created_at).text(),
            Timestamp(invoice.updated_at).text(),
            invoice.exchange.rate.map(|rate| rate.normalize().to_string()).unwrap_or_default(),
            invoice.exchange.team_currency.as_str().to_owned(),
            invoice.exchange.in_team_currency(invoice.totals.total).unwrap_or_default().to_string(),
            invoice.exchange.in_team_currency(invoice.totals.tax).unwrap_or_default().to_string(),
            money(invoice.totals.discount_total),
            money(invoice.totals.taxable_amount()),
            // `S 7% 34.18 2.39; S 19% 1045.00 198.55`: category, rate, taxable amount, tax.
            invoice
                .vat_breakdown()
                .iter()
                .map(|group| {
                    let (rate, taxable, tax) = (
                        group.rate.percentage.normalize(),
                        money(group.taxable_amount),
                        money(group.tax_amount),
                    );
                    format!("{} {rate}% {taxable} {tax}", group.rate.category.as_str())
                })
                .collect::<Vec<_>>()
                .join("; "),
        ]
    }
}

/// The team's invoices that the parameters in `query` ask for, newest first.
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<InvoiceBody>, ApiError> {
    let (query, page) = paging::read_listing::<InvoiceQuery>(query)?;
    let now = state.clock.now();
    let filter = filter_of(query, now)?;
    let page = paging::page_from_store(
        &page,
        position,
        |i| cursor_of(InvoicePosition::of(i)),
        |after, limit| async move {
            Ok(state
                .stores
                .billing
                .list_invoices(who.team_id, &InvoiceFilter { after, limit, ..filter })
                .await?)
        },
    )
    .await?;
    Ok(page.map(|invoice| InvoiceBody::new(invoice, now)))
}

/// The invoices `query` asks for at `now`, leaving out the page.
fn filter_of(query: InvoiceQuery, now: chrono::DateTime<chrono::Utc>) -> Result<InvoiceFilter, ApiError> {
    let statuses = query.status.map(paging::OneOrMany::into_vec).unwrap_or_default();
    let statuses = statuses.iter().map(|s| InvoiceStatus::parse(s).map_err(|e| e.at("status")));
    let issued_to = query.issued_to.as_deref().map(|to| query_day(to, "issuedTo")).transpose()?;
    let issued_from = query.issued_from.as_deref().map(|from| query_day(from, "issuedFrom")).transpose()?;
    if let (Some(from), Some(to)) = (issued_from, issued_to)
        && to < from
    {
        return Err(FieldError::new("issuedTo", "must not be before issuedFrom").into());
    }
    Ok(InvoiceFilter {
        statuses: statuses.collect::<Result<_, _>>()?,
        now,
        client: query_id(query.client_id.as_deref(), "clientId")?,
        issued_from: issued_from.map(midnight),
        issued_before: issued_to.and_then(|to| to.succ_opt()).map(|after| kernel::span_end(midnight(after))),
        text: query_search(query.q.as_deref())?,
        after: None,
        limit: None,
    })
}

fn cursor_of(position: InvoicePosition) -> String {
    let issued = position.issue_date.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    paging::encode_cursor(&[issued, position.serial.number().to_string()])
}

fn position(cursor: &str) -> Result<InvoicePosition, FieldError> {
    let parts = paging::decode_cursor(cursor)?;
    let [issued, serial] = parts.as_slice() else { return Err(paging::not_a_cursor()) };
    let issue_date = chrono::DateTime::parse_from_rfc3339(issued).map_err(|_| paging::not_a_cursor())?;
    let serial = serial.parse().ok().and_then(billing::Serial::new).ok_or_else(paging::not_a_cursor)?;
    Ok(InvoicePosition { issue_date: issue_date.to_utc(), serial })
}

/// Create an invoice
///
/// Creates an invoice in the team's currency, with the team's next serial. Give exactly one
/// of `clientId` and `client`. Every write (inline client, serial, invoice, items, and the
/// payment or write-off that `status: PAID` or `EXPIRED` records) commits together or not
/// at all. Needs `invoices:write`.
#[utoipa::path(
    tag = "Invoices",
    request_body = InvoiceInput,
    responses(
        (status = 201, description = "Created", body = InvoiceBody, headers(("Location" = String, description = "URL of the new invoice"))),
        (status = 409, description = "A status asked of an invoice with nothing to pay, or a serial the team's numbering pattern repeats", body = ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_invoice(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<InvoiceInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let invoice = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/invoices/{}", invoice.id), invoice))
}

/// Makes an invoice of `input` in the caller's team.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: InvoiceInput,
) -> Result<InvoiceBody, ApiError> {
    let team = who.team_id;
    let now = state.clock.now();
    let draft = input.parse(team, now)?;
    let stores = &state.stores;
    let invoice = service::create_invoice(&*stores.billing, &*stores.accounts, team, draft, now).await?;
    Ok(InvoiceBody::new(invoice, now))
}

/// Get an invoice
///
/// Returns one invoice of the key's team with its line items. A PENDING invoice whose
/// `dueDate` has passed reads OVERDUE. Needs `invoices:read`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "The invoice", body = InvoiceBody),
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}")]
pub(crate) async fn get_invoice(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<InvoiceBody>, ApiError> {
    Ok(web::Json(get(&state, &auth.principal, &path).await?))
}

/// The caller's team's invoice `id` (as written in a path).
pub(crate) async fn get(state: &ApiState, who: &Principal, id: &str) -> Result<InvoiceBody, ApiError> {
    let id = invoice_id(id)?;
    let invoice = state.stores.billing.get_invoice(who.team_id, id).await?.ok_or_else(invoice_not_found)?;
    Ok(InvoiceBody::new(invoice, state.clock.now()))
}

/// Change an invoice
///
/// Only the fields given change; `lineItems` replaces all items and the totals are
/// recomputed, never below what was paid, credited and written off (409). `status` is
/// what it asks of the books: PAID pays what is due, EXPIRED writes it off, PENDING is
/// refused once money was recorded. Needs `invoices:write`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = InvoicePatch,
    responses(
        (status = 200, description = "The changed invoice", body = InvoiceBody),
        (status = 409, description = "The books forbid it: a total below what was recorded, PENDING with money recorded, or nothing due", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[patch("/{id}")]
pub(crate) async fn update_invoice(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<InvoicePatch>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<InvoiceBody>, ApiError> {
    Ok(web::Json(update(&state, &auth.principal, &path, input).await?))
}

/// Changes the caller's team's invoice `id` as `input` says.
pub(crate) async fn update(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: InvoicePatch,
) -> Result<InvoiceBody, ApiError> {
    let changes = input.parse()?;
    let id = invoice_id(id)?;
    let now = state.clock.now();
    let invoice = service::update_invoice(&*state.stores.billing, who.team_id, id, changes, now).await?;
    Ok(InvoiceBody::new(invoice, now))
}

/// Mark an invoice PAID
///
/// Records a payment of what is due (method `other`, today), so the invoice is PAID. No
/// body. An invoice PAID already is answered as it is; one with nothing due otherwise
/// (written off, credited in full) is a 409. Needs `invoices:write`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "The invoice, now PAID", body = InvoiceBody),
        (status = 409, description = "Nothing is due, and the invoice is not PAID", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[patch("/{id}/mark")]
pub(crate) async fn mark_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<InvoiceBody>, ApiError> {
    Ok(web::Json(mark_paid(&state, &auth.principal, &path).await?))
}

/// Marks the caller's team's invoice `id` PAID.
pub(crate) async fn mark_paid(state: &ApiState, who: &Principal, id: &str) -> Result<InvoiceBody, ApiError> {
    let id = invoice_id(id)?;
    let now = state.clock.now();
    let invoice = service::mark_paid(&*state.stores.billing, who.team_id, id, now).await?;
    Ok(InvoiceBody::new(invoice, now))
}

/// Delete an invoice
///
/// Deletes the invoice and its items for good. Its serial is not given again. An invoice
/// with payments, write-offs or credit notes is kept by the books (409). Needs
/// `invoices:write`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The invoice has payments, write-offs or credit notes", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id = invoice_id(&path)?;
    service::delete_invoice(&*state.stores.billing, auth.principal.team_id, id, state.clock.now()).await?;
    Ok(Deleted::new("invoice"))
}

/// Get an invoice as a PDF
///
/// Public: needs no key, and is limited per client IP. The unguessable id is the only
/// credential, so an unknown or malformed id is a 404 like any other. `download=true` serves
/// the PDF as an attachment; by default it is shown inline. `format=facturx` makes it a
/// Factur-X / ZUGFeRD invoice (EN 16931 profile): PDF/A-3b with its XML embedded.
#[utoipa::path(
    tag = "Invoices",
    params(pdf::PdfQuery),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "The PDF", content_type = "application/pdf", body = inline(Binary),
            headers(("Content-Disposition" = String, description = "`inline; filename=\"INV-0001.pdf\"`, or `attachment` with `download=true`"))),
        (status = 400, description = "`id` missing, `download` not a boolean, or `format` not `facturx`", body = ErrorBody),
        (status = 404, description = "No such invoice", body = ErrorBody),
        (status = 422, description = "`format=facturx`, and the e-invoice needs data the invoice lacks, e.g. `countryCode (BT-55) is required for EN 16931: set it on the client`", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
    )
)]
#[get("")]
pub(crate) async fn invoice_pdf(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let asked = pdf::asked(&req, &state).await?;
    let id: InvoiceId = path_id(&asked.id, "invoice")?;
    pdf::answer(&state, &asked, DocumentRef::Invoice(id)).await
}
