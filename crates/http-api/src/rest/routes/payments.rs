//! The books of invoices: payments, refunds, write-offs and voids
//! (`/v1/invoices/{id}/payments`, `…/refunds`, `…/write-off`, `/v1/payments`), and what each
//! client owes (`/v1/invoices/receivables`).

use accounts::{Permission, Principal};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use billing::ledger::{
    ENTRY_AMOUNT, EntryAmount, EntryFilter, EntryKind, EntryPosition, NewEntry, Notes, PaymentMethod,
    Reference,
};
use billing::money::round_to_minor;
use billing::receivables::Age;
use billing::service::{self, BillingError};
use billing::{InvoiceId, LedgerEntry, LedgerEntryId};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::Json;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite, PaymentsWrite, require};
use crate::rest::csv;
use crate::rest::openapi::{EntryKind as EntryKindSchema, PaymentMethod as PaymentMethodSchema};
use crate::rest::paging::{self, Page};
use crate::rest::routes::invoices::InvoiceBody;
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::refusals::books_refusal;
use crate::rest::routes::{
    BodyErrors, KeyedErrors, NotFound, QueryErrors, Timestamp, created, not_found, path_id, query_day,
    query_id,
};
use crate::rest::state::ApiState;

/// A ledger entry of an invoice: a payment, a refund (its amount shown positive) or a
/// write-off. Entries are never changed or deleted; a voided one stays listed with
/// `voidedAt` and no longer counts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaymentBody {
    id: Uuid,
    invoice_id: Uuid,
    #[schema(value_type = EntryKindSchema)]
    kind: &'static str,
    /// Positive, in the invoice's currency at its minor unit.
    amount: Exact,
    /// The day the money moved (or the debt was written off), `YYYY-MM-DD`.
    #[schema(value_type = String, format = Date, example = "2026-11-25")]
    paid_on: String,
    #[schema(value_type = PaymentMethodSchema)]
    method: &'static str,
    #[schema(required = true)]
    reference: Option<String>,
    /// For a refund or a write-off, its reason.
    #[schema(required = true)]
    notes: Option<String>,
    #[schema(required = true)]
    voided_at: Option<Timestamp>,
    #[schema(required = true)]
    void_reason: Option<String>,
    created_at: Timestamp,
}

impl From<LedgerEntry> for PaymentBody {
    fn from(entry: LedgerEntry) -> Self {
        Self {
            id: entry.id.as_uuid(),
            invoice_id: entry.invoice_id.as_uuid(),
            kind: entry.kind.as_str(),
            amount: Exact(entry.amount),
            paid_on: entry.on.format("%Y-%m-%d").to_string(),
            method: entry.method.as_str(),
            reference: entry.reference.map(|r| r.as_str().to_owned()),
            notes: entry.notes.map(|n| n.as_str().to_owned()),
            voided_at: entry.voided_at.map(Timestamp),
            void_reason: entry.void_reason.map(|n| n.as_str().to_owned()),
            created_at: Timestamp(entry.created_at),
        }
    }
}

/// A payment received. `amount` may not exceed what is due.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"amount": 29.21, "paidOn": "2026-11-25", "method": "bank_transfer", "reference": "RF18 5390 0754 7034"}))]
pub(crate) struct PaymentInput {
    /// Greater than 0, with no more decimal places than the invoice's currency has (2 for
    /// EUR; never more than 4).
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1e24)]
    amount: Number,
    /// `YYYY-MM-DD`, not in the future. Default: today (UTC).
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date)]
    paid_on: Option<String>,
    /// Default `other`.
    #[serde(default)]
    #[schema(value_type = Option<PaymentMethodSchema>)]
    method: Option<String>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 200,
        nullable
    )]
    reference: Option<String>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    notes: Option<String>,
}

/// Money given back to the client. `amount` may not exceed what was paid.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"amount": 10, "reason": "Hosting cancelled"}))]
pub(crate) struct RefundInput {
    /// Greater than 0, with no more decimal places than the invoice's currency has (2 for
    /// EUR; never more than 4).
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1e24)]
    amount: Number,
    /// `YYYY-MM-DD`, not in the future. Default: today (UTC).
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date)]
    refunded_on: Option<String>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    reason: Option<String>,
}

/// What to take from the client's credit.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"amount": 25.5}))]
pub(crate) struct CreditInput {
    /// Greater than 0, at most the client's `creditBalance` in the invoice's currency and
    /// at most `amountDue`.
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1e24)]
    amount: Number,
}

/// Why: kept with the write-off or the void.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"reason": "Entered twice"}))]
pub(crate) struct ReasonInput {
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    reason: Option<String>,
}

/// A day given in a body: `YYYY-MM-DD`, not after `today`; `today` when left out.
fn day_given(
    text: Option<&str>,
    field: &str,
    today: chrono::NaiveDate,
) -> Result<chrono::NaiveDate, FieldError> {
    let Some(text) = text else { return Ok(today) };
    let day = query_day(text, field)?;
    if day > today {
        return Err(FieldError::new(field, format!("must not be in the future (today is {today})")));
    }
    Ok(day)
}

fn amount(value: &Number) -> Result<billing::money::Decimal, FieldError> {
    ENTRY_AMOUNT.parse(&value.to_string()).map_err(|e| e.at("amount"))
}

fn notes(text: Option<String>, field: &str) -> Result<Option<Notes>, FieldError> {
    text.map(|text| Notes::parse(text).map_err(|e| e.at(field))).transpose()
}

fn entry_id(path: &str) -> Result<LedgerEntryId, ApiError> {
    path_id(path, "payment")
}

impl PaymentInput {
    fn parse(self, now: chrono::DateTime<chrono::Utc>) -> Result<NewEntry, FieldError> {
        Ok(NewEntry {
            id: LedgerEntryId::generate(),
            kind: EntryKind::Payment,
            amount: EntryAmount::Exactly(amount(&self.amount)?),
            on: day_given(self.paid_on.as_deref(), "paidOn", now.date_naive())?,
            method: self
                .method
                .as_deref()
                .map(PaymentMethod::parse)
                .transpose()
                .map_err(|e| e.at("method"))?
                .unwrap_or_default(),
            reference: self.reference.map(Reference::parse).transpose().map_err(|e| e.at("reference"))?,
            notes: notes(self.notes, "notes")?,
            created_at: now,
        })
    }
}

impl RefundInput {
    fn parse(self, now: chrono::DateTime<chrono::Utc>) -> Result<NewEntry, FieldError> {
        Ok(NewEntry {
            id: LedgerEntryId::generate(),
            kind: EntryKind::Refund,
            amount: EntryAmount::Exactly(amount(&self.amount)?),
            on: day_given(self.refunded_on.as_deref(), "refundedOn", now.date_naive())?,
            method: PaymentMethod::Other,
            reference: None,
            notes: notes(self.reason, "reason")?,
            created_at: now,
        })
    }
}

/// A refused write of the books, in the REST API's words.
fn refused(error: BillingError, what: &str) -> ApiError {
    match error {
        BillingError::NotFound => not_found(what),
        BillingError::Books(rule) => books_refusal(&rule),
        other => other.into(),
    }
}

/// Writes `entry` in the books of the caller's team's invoice `id`: the entry as written,
/// and the invoice as it now stands.
async fn record(
    state: &ApiState,
    who: &Principal,
    id: &str,
    entry: NewEntry,
) -> Result<(LedgerEntry, billing::Invoice), ApiError> {
    let invoice: InvoiceId = path_id(id, "invoice")?;
    service::record_entry(&*state.stores.billing, who.team_id, invoice, entry)
        .await
        .map_err(|error| refused(error, "invoice"))
}

/// Record a payment
///
/// Records money received against the invoice. It may not exceed `amountDue` (409, naming
/// the figure); the invoice's balance and status follow in the same transaction: paid in
/// part, `PAID_PARTIAL`; nothing left due, `PAID`. Needs `payments:write` (which
/// `invoices:write` implies).
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = PaymentInput,
    responses(
        (status = 201, description = "Recorded", body = PaymentBody, headers(("Location" = String, description = "URL of the new payment"))),
        (status = 409, description = "The amount exceeds what is due", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/payments")]
pub(crate) async fn record_payment(
    auth: Auth<PaymentsWrite>,
    Json(input): Json<PaymentInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let payment = pay(&state, &auth.principal, &path, input).await?;
    Ok(created(format!("/v1/payments/{}", payment.id), payment))
}

/// Records a payment of `input` on the caller's team's invoice `id`.
pub(crate) async fn pay(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: PaymentInput,
) -> Result<PaymentBody, ApiError> {
    let entry = input.parse(state.clock.now())?;
    Ok(record(state, who, id, entry).await?.0.into())
}

/// Record a refund
///
/// Records money given back to the client (a ledger entry of kind `refund`, its amount
/// positive). It may not exceed what was paid (409); what credit notes left refundable is
/// paid out first. Needs `payments:write`.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = RefundInput,
    responses(
        (status = 201, description = "Recorded", body = PaymentBody, headers(("Location" = String, description = "URL of the new refund"))),
        (status = 409, description = "The amount exceeds what was paid", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/refunds")]
pub(crate) async fn record_refund(
    auth: Auth<PaymentsWrite>,
    Json(input): Json<RefundInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let entry = input.parse(state.clock.now())?;
    let refund = PaymentBody::from(record(&state, &auth.principal, &path, entry).await?.0);
    Ok(created(format!("/v1/payments/{}", refund.id), refund))
}

/// Pay an invoice from its client's credit
///
/// Takes `amount` from the client's `creditBalance` in the invoice's currency (what card
/// payments brought beyond what their invoices owed) and records it as a payment of the
/// invoice (method `other`, reference `client-credit`). More than that credit, or more
/// than `amountDue`, is a 409 naming the figure. Needs `payments:write`.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = CreditInput,
    responses(
        (status = 201, description = "Recorded", body = PaymentBody, headers(("Location" = String, description = "URL of the new payment"))),
        (status = 409, description = "The amount exceeds the client's credit or what is due", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/apply-credit")]
pub(crate) async fn apply_credit(
    auth: Auth<PaymentsWrite>,
    Json(input): Json<CreditInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let amount = amount(&input.amount)?;
    let invoice: InvoiceId = path_id(&path, "invoice")?;
    let (entry, _) = service::apply_credit(
        &*state.stores.billing,
        auth.principal.team_id,
        invoice,
        amount,
        state.clock.now(),
    )
    .await
    .map_err(|error| refused(error, "invoice"))?;
    let payment = PaymentBody::from(entry);
    Ok(created(format!("/v1/payments/{}", payment.id), payment))
}

/// Write an invoice off
///
/// Forgives what is due: a ledger entry of kind `write_off` for `amountDue`, and the
/// invoice is EXPIRED. The same as setting `status: EXPIRED`. Nothing due is a 409. Needs
/// `invoices:write`.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Invoice id")),
    request_body = ReasonInput,
    responses(
        (status = 200, description = "The invoice, now EXPIRED", body = InvoiceBody),
        (status = 409, description = "Nothing is due", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/write-off")]
pub(crate) async fn write_off(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<ReasonInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<InvoiceBody>, ApiError> {
    let now = state.clock.now();
    let entry = NewEntry {
        id: LedgerEntryId::generate(),
        kind: EntryKind::WriteOff,
        amount: EntryAmount::AllDue,
        on: now.date_naive(),
        method: PaymentMethod::Other,
        reference: None,
        notes: notes(input.reason, "reason")?,
        created_at: now,
    };
    let (_, invoice) = record(&state, &auth.principal, &path, entry).await?;
    Ok(web::Json(InvoiceBody::new(invoice, now)))
}

/// List an invoice's payments
///
/// Every ledger entry of the invoice (payments, refunds, write-offs, voided ones
/// included), newest day first. Needs `invoices:read`.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "The invoice's ledger", body = [PaymentBody]),
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/payments")]
pub(crate) async fn list_invoice_payments(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<PaymentBody>>, ApiError> {
    let team = auth.principal.team_id;
    let invoice: InvoiceId = path_id(&path, "invoice")?;
    state.stores.billing.get_invoice(team, invoice).await?.ok_or_else(|| not_found("invoice"))?;
    let filter = EntryFilter { invoice: Some(invoice), ..EntryFilter::default() };
    let entries = state.stores.billing.list_entries(team, &filter).await?;
    Ok(web::Json(entries.into_iter().map(PaymentBody::from).collect()))
}

/// Void a payment
///
/// Voids a ledger entry (a payment, a refund or a write-off): it stays listed with
/// `voidedAt` and `voidReason`, and no longer counts. Refused (409) when it is voided
/// already, or when a later entry would be left unbacked (a refund of the payment voided).
/// Needs `payments:write`, and for a write-off also `invoices:write`, which writing it off
/// needs: a key that may not forgive a debt may not bring a forgiven one back either.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Payment id")),
    request_body = ReasonInput,
    responses(
        (status = 200, description = "The entry, voided", body = PaymentBody),
        (status = 409, description = "Voided already, or a later entry needs it", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/void")]
pub(crate) async fn void_payment(
    auth: Auth<PaymentsWrite>,
    Json(input): Json<ReasonInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<PaymentBody>, ApiError> {
    let id = entry_id(&path)?;
    let reason = notes(input.reason, "reason")?;
    let team = auth.principal.team_id;
    let recorded = state.stores.billing.get_entry(team, id).await?.ok_or_else(|| not_found("payment"))?;
    if recorded.kind == EntryKind::WriteOff {
        require(&auth.principal, Permission::InvoicesWrite, "voiding a write-off")?;
    }
    let (entry, _) = service::void_entry(&*state.stores.billing, team, id, reason, state.clock.now())
        .await
        .map_err(|error| refused(error, "payment"))?;
    Ok(web::Json(entry.into()))
}

/// Get a payment
///
/// One ledger entry of the key's team. Needs `invoices:read`.
#[utoipa::path(
    tag = "Payments",
    params(("id" = Uuid, Path, description = "Payment id")),
    responses((status = 200, description = "The entry", body = PaymentBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_payment(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<PaymentBody>, ApiError> {
    let id = entry_id(&path)?;
    let entry = state.stores.billing.get_entry(auth.principal.team_id, id).await?;
    Ok(web::Json(entry.ok_or_else(|| not_found("payment"))?.into()))
}

/// The payment listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct PaymentQuery {
    /// Only the entries of this invoice.
    #[param(format = Uuid)]
    invoice_id: Option<String>,
    /// Only the entries of invoices billed to this client.
    #[param(format = Uuid)]
    client_id: Option<String>,
    /// Only entries of this day or later, `YYYY-MM-DD`.
    #[param(value_type = Option<String>, format = Date)]
    paid_from: Option<String>,
    /// Only entries of this day or earlier, `YYYY-MM-DD`.
    #[param(value_type = Option<String>, format = Date)]
    paid_to: Option<String>,
    /// Only payments made this way.
    #[param(value_type = Option<PaymentMethodSchema>)]
    method: Option<String>,
}

fn entry_filter(query: &PaymentQuery) -> Result<EntryFilter, ApiError> {
    let from = query.paid_from.as_deref().map(|day| query_day(day, "paidFrom")).transpose()?;
    let to = query.paid_to.as_deref().map(|day| query_day(day, "paidTo")).transpose()?;
    if let (Some(from), Some(to)) = (from, to)
        && to < from
    {
        return Err(FieldError::new("paidTo", "must not be before paidFrom").into());
    }
    Ok(EntryFilter {
        invoice: query_id(query.invoice_id.as_deref(), "invoiceId")?,
        client: query_id(query.client_id.as_deref(), "clientId")?,
        from,
        to,
        method: query.method.as_deref().map(PaymentMethod::parse).transpose().map_err(|e| e.at("method"))?,
        after: None,
        limit: None,
    })
}

fn cursor_of(position: EntryPosition) -> String {
    paging::encode_cursor(&[position.on.format("%Y-%m-%d").to_string(), position.id.to_string()])
}

fn position(cursor: &str) -> Result<EntryPosition, FieldError> {
    let parts = paging::decode_cursor(cursor)?;
    let [on, id] = parts.as_slice() else { return Err(paging::not_a_cursor()) };
    let on = chrono::NaiveDate::parse_from_str(on, "%Y-%m-%d").map_err(|_| paging::not_a_cursor())?;
    let id = Uuid::parse_str(id).map_err(|_| paging::not_a_cursor())?;
    Ok(EntryPosition { on, id })
}

/// List payments
///
/// The team's ledger entries (payments, refunds, write-offs), newest day first, then
/// newest id; every filter given narrows it. With `limit`, a page: a `Link` header with
/// `rel="next"` names the next one while there is more. `Accept: text/csv` answers every
/// entry as CSV. Needs `invoices:read`.
#[utoipa::path(
    tag = "Payments",
    params(PaymentQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's ledger entries; with `Accept: text/csv`, all of them as CSV", content((Vec<PaymentBody> = "application/json"), (String = "text/csv")),
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_payments(
    auth: Auth<InvoicesRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if csv::wanted(&request) {
        let (store, team) = (state.stores.billing.clone(), auth.principal.team_id);
        return csv::listing("payments.csv", listing.parameters.clone(), |query: PaymentQuery| {
            Ok(PaymentsCsv { store, team, filter: entry_filter(&query)? })
        })
        .await;
    }
    Ok(csv::varying(listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)?))
}

/// The page of the team's ledger entries the parameters in `query` ask for.
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<PaymentBody>, ApiError> {
    let (query, page) = paging::read_listing::<PaymentQuery>(query)?;
    let filter = entry_filter(&query)?;
    let page = paging::page_from_store(
        &page,
        position,
        |e| cursor_of(EntryPosition::of(e)),
        |after, limit| async move {
            Ok(state
                .stores
                .billing
                .list_entries(who.team_id, &EntryFilter { after, limit, ..filter })
                .await?)
        },
    )
    .await?;
    Ok(page.map(PaymentBody::from))
}

/// The team's ledger entries as CSV, read a page at a time.
#[derive(Clone)]
struct PaymentsCsv {
    store: std::sync::Arc<dyn billing::BillingStore>,
    team: accounts::TeamId,
    filter: EntryFilter,
}

impl csv::PagedListing for PaymentsCsv {
    type Item = LedgerEntry;
    type Position = EntryPosition;

    async fn read(&self, after: Option<EntryPosition>, limit: u32) -> Result<Vec<LedgerEntry>, ApiError> {
        let filter = EntryFilter { after, limit: Some(limit), ..self.filter.clone() };
        Ok(self.store.list_entries(self.team, &filter).await?)
    }

    fn position(entry: &LedgerEntry) -> EntryPosition {
        EntryPosition::of(entry)
    }

    fn header() -> &'static [&'static str] {
        &[
            "id",
            "invoiceId",
            "kind",
            "amount",
            "paidOn",
            "method",
            "reference",
            "notes",
            "voidedAt",
            "createdAt",
        ]
    }

    fn cells(&self, entry: &LedgerEntry) -> Vec<String> {
        vec![
            entry.id.to_string(),
            entry.invoice_id.to_string(),
            entry.kind.as_str().to_owned(),
            entry.amount.to_string(),
            entry.on.format("%Y-%m-%d").to_string(),
            entry.method.as_str().to_owned(),
            entry.reference.as_ref().map(|r| r.as_str().to_owned()).unwrap_or_default(),
            entry.notes.as_ref().map(|n| n.as_str().to_owned()).unwrap_or_default(),
            entry.voided_at.map(|at| Timestamp(at).text()).unwrap_or_default(),
            Timestamp(entry.created_at).text(),
        ]
    }
}

/// What one client owes in one currency, by how long it is past due.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReceivableBody {
    client_id: Uuid,
    name: String,
    #[schema(example = "EUR")]
    currency: &'static str,
    /// Not due yet (or no due date).
    current: Exact,
    #[serde(rename = "days1to30")]
    days1to30: Exact,
    #[serde(rename = "days31to60")]
    days31to60: Exact,
    #[serde(rename = "days61to90")]
    days61to90: Exact,
    over90: Exact,
    total: Exact,
}

/// The receivables report's day.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ReceivablesQuery {
    /// The day ages are counted on, `YYYY-MM-DD` (UTC). Default: today.
    #[param(value_type = Option<String>, format = Date)]
    as_of: Option<String>,
}

/// What each client owes
///
/// Per client (and currency), what is due on its invoices, by days past their due date
/// on `asOf`: not yet due (`current`), 1–30, 31–60, 61–90 and over 90 days. Amounts are what
/// is due now; clients that owe nothing are left out. `Accept: text/csv` answers it as CSV.
/// Needs `invoices:read`.
#[utoipa::path(
    tag = "Payments",
    params(ReceivablesQuery),
    responses(
        (status = 200, description = "What each client owes; with `Accept: text/csv`, as CSV", content((Vec<ReceivableBody> = "application/json"), (String = "text/csv"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn receivables_report(
    auth: Auth<InvoicesRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let rows = receivables(&state, &auth.principal, listing.parameters.clone()).await?;
    if csv::wanted(&request) {
        let mut sheet = csv::Rows::new();
        sheet.row([
            "clientId",
            "name",
            "currency",
            "current",
            "days1to30",
            "days31to60",
            "days61to90",
            "over90",
            "total",
        ])?;
        for row in &rows {
            let money = [row.current, row.days1to30, row.days31to60, row.days61to90, row.over90, row.total]
                .map(|amount| amount.0.to_string());
            let cells = [row.client_id.to_string(), row.name.clone(), row.currency.to_owned()];
            sheet.row(cells.into_iter().chain(money))?;
        }
        return Ok(csv::answer("receivables.csv", sheet.take()?));
    }
    Ok(HttpResponse::Ok().insert_header((header::VARY, csv::VARY)).json(rows))
}

/// What each client of the caller's team owes on the day the parameters in `query` name.
pub(crate) async fn receivables(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Vec<ReceivableBody>, ApiError> {
    let query: ReceivablesQuery = paging::read_query(query)?;
    let today = state.clock.now().date_naive();
    let as_of = query.as_of.as_deref().map(|day| query_day(day, "asOf")).transpose()?.unwrap_or(today);
    let team = who.team_id;
    let owed = state.stores.billing.receivables(team, as_of).await?;
    let clients = state.stores.billing.list(team).await?;
    let name = |id| clients.iter().find(|client| client.id == id).map(|c| c.details.name.as_str().to_owned());
    Ok(owed
        .into_iter()
        .map(|owed| {
            let money = |age| Exact(round_to_minor(owed.of(age), owed.currency));
            ReceivableBody {
                client_id: owed.client_id.as_uuid(),
                name: name(owed.client_id).unwrap_or_default(),
                currency: owed.currency.as_str(),
                current: money(Age::Current),
                days1to30: money(Age::Days1To30),
                days31to60: money(Age::Days31To60),
                days61to90: money(Age::Days61To90),
                over90: money(Age::Over90),
                total: Exact(round_to_minor(owed.total(), owed.currency)),
            }
        })
        .collect())
}
