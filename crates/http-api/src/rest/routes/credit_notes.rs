//! Credit notes: `POST /v1/invoices/{id}/credit-notes`, `/v1/credit-notes`, and the public
//! PDF link.

use accounts::Principal;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use billing::credit::{CreditLines, CreditNote, CreditNoteFilter, CreditNoteId, CreditSerial, NewCreditNote};
use billing::issue::DocumentRef;
use billing::ledger::Notes;
use billing::money::round_to_minor;
use billing::service::{self, BillingError};
use billing::{InvoiceId, LineItem};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::Json;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite};
use crate::rest::openapi::{Binary, VatCategory as VatCategorySchema};
use crate::rest::paging::{self, Page};
use crate::rest::routes::discounts::{DiscountBody, DiscountInput};
use crate::rest::routes::invoices::{LineItemInput, VatGroupBody, line_rate, lines};
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::refusals::books_refusal;
use crate::rest::routes::{
    BodyErrors, KeyedErrors, NotFound, QueryErrors, Timestamp, created, not_found, path_id, pdf, query_id,
};
use crate::rest::state::ApiState;

/// A line of a credit note.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreditLineBody {
    id: Uuid,
    description: String,
    unit_price: Exact,
    quantity: Exact,
    /// `unitPrice × quantity`, rounded to the currency's minor unit.
    amount: Exact,
    /// The line's discount as given; null for none.
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    /// `amount` less what its discount takes.
    net_amount: Exact,
    position: u32,
    /// What `quantity` counts (UN/ECE Recommendation 20), as on the invoice's lines.
    #[schema(example = "C62")]
    unit_code: String,
    /// The line's VAT category: the one it states, else the invoice's.
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    /// The line's rate: the one it states, else the note's where its category is the
    /// invoice's, else 0.
    tax_percentage: Exact,
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
}

/// A credit note: a correction of an issued invoice, in a numbered series of its own
/// (`CN-0001`), never changed or deleted. It lowers what the invoice has due by
/// `appliedToInvoice`; the rest is `refundable`, owed back to the client.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreditNoteBody {
    id: Uuid,
    #[schema(example = "CN-0001")]
    serial: String,
    invoice_id: Uuid,
    #[schema(example = "INV-0001")]
    invoice_serial: String,
    issue_date: Timestamp,
    #[schema(example = "EUR")]
    currency: &'static str,
    line_items: Vec<CreditLineBody>,
    /// Σ `lineItems[].amount`: before any discount.
    subtotal: Exact,
    /// The discount of the whole note as given (the invoice's, for a full note); null for
    /// none.
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    /// What the lines' discounts and the note's take off the subtotal.
    discount_total: Exact,
    /// `subtotal − discountTotal`.
    taxable_amount: Exact,
    /// The invoice's.
    tax_percentage: Exact,
    tax: Exact,
    /// `subtotal − discountTotal + tax`.
    total: Exact,
    /// The tax per VAT category, rate and reason of its lines, as on invoices.
    vat_breakdown: Vec<VatGroupBody>,
    #[schema(required = true)]
    reason: Option<String>,
    /// The smaller of `total` and what the invoice had due when the note was issued.
    applied_to_invoice: Exact,
    /// `total − appliedToInvoice`: owed back to the client; the next refunds pay it out.
    refundable: Exact,
    /// Its PDF, relative to the server's address: `/v1/credit-notes/pdf?id=…`, which needs
    /// no key (the id is the secret).
    #[schema(example = "/v1/credit-notes/pdf?id=0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e")]
    pdf_url: String,
    created_at: Timestamp,
}

impl From<CreditNote> for CreditNoteBody {
    fn from(note: CreditNote) -> Self {
        let currency = note.currency;
        let money = |amount| Exact(round_to_minor(amount, currency));
        let vat_breakdown = VatGroupBody::all(note.vat_breakdown(), currency);
        let line = |item: LineItem| {
            let (vat_category, tax_percentage, vat_exemption_reason) =
                line_rate(&item, &note.vat, note.tax_rule);
            let net_amount = money(item.net_amount());
            CreditLineBody {
                id: item.id.as_uuid(),
                description: item.description.into_string(),
                unit_price: Exact(item.unit_price.normalize()),
                quantity: Exact(item.quantity.normalize()),
                amount: money(item.amount),
                discount: item.discount.map(|d| DiscountBody::of_line(d, currency)),
                net_amount,
                position: item.position,
                unit_code: item.unit_code.as_str().to_owned(),
                vat_category,
                tax_percentage,
                vat_exemption_reason,
            }
        };
        Self {
            id: note.id.as_uuid(),
            serial: note.number.to_string(),
            invoice_id: note.invoice_id.as_uuid(),
            invoice_serial: note.invoice_number.to_string(),
            issue_date: Timestamp(note.issue_date),
            currency: currency.as_str(),
            line_items: note.line_items.into_iter().map(line).collect(),
            subtotal: money(note.totals.subtotal),
            discount: note.discount.map(|d| DiscountBody::of(d, currency)),
            discount_total: money(note.totals.discount_total),
            taxable_amount: money(note.totals.taxable_amount()),
            tax_percentage: Exact(note.tax_rule.percentage().normalize()),
            tax: money(note.totals.tax),
            total: money(note.totals.total),
            vat_breakdown,
            reason: note.reason.map(|r| r.as_str().to_owned()),
            applied_to_invoice: money(note.application.applied),
            refundable: money(note.application.refundable),
            pdf_url: notify::service::Links::relative().pdf(DocumentRef::CreditNote(note.id)),
            created_at: Timestamp(note.created_at),
        }
    }
}

/// A credit note to issue: the whole invoice (`full: true`: its lines, its discount and its
/// tax), or the `lineItems` given, taxed at the invoice's tax percentage (none when its tax
/// is flat), less the note's own `discount`, if any.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"lineItems": [{"description": "Hosting, not delivered", "unitPrice": 0.5, "quantity": 3}], "reason": "Hosting cancelled"}))]
pub(crate) struct CreditNoteInput {
    /// `true` credits the whole invoice. Give it or `lineItems`, not both.
    #[serde(default)]
    full: Option<bool>,
    #[serde(default)]
    #[schema(min_items = 1, max_items = 1000)]
    line_items: Option<Vec<LineItemInput>>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    reason: Option<String>,
    /// A discount of the whole note, after its lines' own, as on invoices; not with
    /// `full: true`, which takes the invoice's.
    #[serde(default)]
    discount: Option<DiscountInput>,
}

impl CreditNoteInput {
    fn parse(self, now: chrono::DateTime<chrono::Utc>) -> Result<NewCreditNote, FieldError> {
        let lines = match (self.full, self.line_items) {
            (Some(true), None) if self.discount.is_some() => {
                return Err(FieldError::new(
                    "discount",
                    "must be left out with full: true, which takes the invoice's",
                ));
            }
            (Some(true), None) => CreditLines::Full,
            (Some(true), Some(_)) => {
                return Err(FieldError::new("lineItems", "must be left out with full: true"));
            }
            (Some(false) | None, Some(items)) => match self.discount {
                None => CreditLines::Lines(lines(items)?),
                Some(discount) => CreditLines::Discounted(lines(items)?, discount.parse("discount")?),
            },
            (Some(false), None) => {
                return Err(FieldError::new("lineItems", "is required when full is false"));
            }
            (None, None) => return Err(FieldError::new("lineItems", "is required, or give full: true")),
        };
        Ok(NewCreditNote {
            id: CreditNoteId::generate(),
            lines,
            reason: self.reason.map(Notes::parse).transpose().map_err(|e| e.at("reason"))?,
            created_at: now,
        })
    }
}

fn refused(error: BillingError) -> ApiError {
    match error {
        BillingError::NotFound => not_found("invoice"),
        BillingError::Books(rule) => books_refusal(&rule),
        other => other.into(),
    }
}

/// Issue a credit note
///
/// Issues a credit note against the invoice, with the team's next credit-note serial
/// (`CN-0001`, gapless and unique). It lowers what the invoice has due by what it can; the
/// rest is refundable. All the credit notes of an invoice together never exceed its total
/// (409). Needs `invoices:write`.
#[utoipa::path(
    tag = "Credit notes",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = CreditNoteInput,
    responses(
        (status = 201, description = "Issued", body = CreditNoteBody, headers(("Location" = String, description = "URL of the new credit note"))),
        (status = 409, description = "The invoice's credit notes would exceed its total, or the team's numbering pattern repeats a serial", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/credit-notes")]
pub(crate) async fn create_credit_note(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<CreditNoteInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let note = issue(&state, &auth.principal, &path, input).await?;
    Ok(created(format!("/v1/credit-notes/{}", note.id), note))
}

/// Issues a credit note of `input` against the caller's team's invoice `id`.
pub(crate) async fn issue(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: CreditNoteInput,
) -> Result<CreditNoteBody, ApiError> {
    let note = input.parse(state.clock.now())?;
    let invoice: InvoiceId = path_id(id, "invoice")?;
    let (note, _) = service::issue_credit_note(&*state.stores.billing, who.team_id, invoice, note)
        .await
        .map_err(refused)?;
    Ok(note.into())
}

/// Get a credit note
///
/// One credit note of the key's team. Needs `invoices:read`.
#[utoipa::path(
    tag = "Credit notes",
    params(("id" = Uuid, Path, description = "Credit note id")),
    responses((status = 200, description = "The credit note", body = CreditNoteBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_credit_note(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<CreditNoteBody>, ApiError> {
    let id: CreditNoteId = path_id(&path, "credit note")?;
    let note = state.stores.billing.get_credit_note(auth.principal.team_id, id).await?;
    Ok(web::Json(note.ok_or_else(|| not_found("credit note"))?.into()))
}

/// The credit-note listing's filter.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct CreditNoteQuery {
    /// Only the credit notes of this invoice.
    #[param(format = Uuid)]
    invoice_id: Option<String>,
}

/// List credit notes
///
/// The team's credit notes, newest serial first. With `limit`, a page: a `Link` header
/// with `rel="next"` names the next one while there is more. Needs `invoices:read`.
#[utoipa::path(
    tag = "Credit notes",
    params(CreditNoteQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's credit notes", body = [CreditNoteBody],
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_credit_notes(
    auth: Auth<InvoicesRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)
}

/// The page of the team's credit notes the parameters in `query` ask for.
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<CreditNoteBody>, ApiError> {
    let (query, page) = paging::read_listing::<CreditNoteQuery>(query)?;
    let invoice = query_id(query.invoice_id.as_deref(), "invoiceId")?;
    let position = |cursor: &str| {
        let parts = paging::decode_cursor(cursor)?;
        let serial = match parts.as_slice() {
            [serial] => serial.parse().ok().and_then(CreditSerial::new),
            _ => None,
        };
        serial.ok_or_else(paging::not_a_cursor)
    };
    let cursor = |note: &CreditNote| paging::encode_cursor(&[note.serial.number().to_string()]);
    let page = paging::page_from_store(&page, position, cursor, |before_serial, limit| async move {
        let filter = CreditNoteFilter { invoice, before_serial, limit, ..CreditNoteFilter::default() };
        Ok(state.stores.billing.list_credit_notes(who.team_id, &filter).await?)
    })
    .await?;
    Ok(page.map(CreditNoteBody::from))
}

/// Get a credit note as a PDF
///
/// Public, like an invoice's: needs no key, is limited per client IP, and its unguessable
/// id is the only credential. It names the invoice it corrects.
#[utoipa::path(
    tag = "Credit notes",
    params(pdf::PdfQuery),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "The PDF", content_type = "application/pdf", body = inline(Binary),
            headers(("Content-Disposition" = String, description = "`inline; filename=\"CN-0001.pdf\"`, or `attachment` with `download=true`"))),
        (status = 400, description = "`id` missing, `download` not a boolean, or `format` not `facturx`", body = ErrorBody),
        (status = 404, description = "No such credit note", body = ErrorBody),
        (status = 422, description = "`format=facturx`, and the e-invoice needs data the credit note lacks (see the e-invoice endpoint)", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
    )
)]
#[get("")]
pub(crate) async fn credit_note_pdf(
    req: HttpRequest,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let asked = pdf::asked(&req, &state).await?;
    let id: CreditNoteId = path_id(&asked.id, "credit note")?;
    pdf::answer(&state, &asked, DocumentRef::CreditNote(id)).await
}
