//! `/v1/quotes`: quotes, their numbering, the client's decision and their conversion into
//! invoices.

use accounts::Principal;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use billing::LineItem;
use billing::invoice::Description;
use billing::money::{AMOUNT, Decimal, EXCHANGE_RATE, TAX_PERCENTAGE, round_to_minor};
use billing::quote::{
    ConversionMode, DecisionSource, DeclineReason, DepositSize, Quote, QuoteId, QuoteNotes, QuoteRule,
    QuoteStatus, SignerName, Verdict,
};
use billing::quoting::{self, QuoteChanges, QuoteDraft, QuoteError, QuoteFilter, QuotePosition};
use kernel::{FieldError, Id, parse_instant};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, QuotesRead, QuotesWrite};
use crate::rest::csv;
use crate::rest::openapi::{
    InstantInput, QuoteStatus as QuoteStatusSchema, VatCategory as VatCategorySchema,
};
use crate::rest::paging::{self, Page};
use crate::rest::routes::discounts::{DiscountBody, DiscountInput};
use crate::rest::routes::invoices::{
    InvoiceBody, LineItemInput, VatGroupBody, invoice_rule, line_rate, lines, vat,
};
use crate::rest::routes::numbers::{Exact, number};
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, body_id, created, no_such, not_found,
    path_id, query_id,
};
use crate::rest::state::ApiState;

/// A line of a quote.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuoteLineBody {
    id: Uuid,
    description: String,
    unit_price: Exact,
    quantity: Exact,
    /// `unitPrice × quantity`, rounded to the currency's minor unit.
    amount: Exact,
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    /// `amount` less what its discount takes.
    net_amount: Exact,
    position: u32,
    #[schema(example = "C62")]
    unit_code: String,
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    tax_percentage: Exact,
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
}

/// The client's decision on a quote: final once recorded.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DecisionBody {
    /// `accepted` or `declined`.
    #[schema(example = "accepted")]
    verdict: &'static str,
    /// The name the client typed to accept it; null on a decline.
    #[schema(required = true)]
    signer_name: Option<String>,
    /// Why the client declined, as it wrote it; null on an acceptance or without one.
    #[schema(required = true)]
    reason: Option<String>,
    /// `page`: on the quote's page, by its client; `team`: recorded by the team, which got
    /// it another way.
    #[schema(example = "page")]
    source: &'static str,
    /// The address the page's request came from (evidence, not identity); null when the
    /// team recorded it.
    #[schema(required = true)]
    ip_address: Option<String>,
    /// The browser's `User-Agent`, as it was sent; null when the team recorded it.
    #[schema(required = true)]
    user_agent: Option<String>,
    decided_at: Timestamp,
}

/// An invoice made of a quote.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuoteInvoiceBody {
    invoice_id: Uuid,
    #[schema(example = "INV-0042")]
    serial: String,
    /// `deposit`, `final` (the rest after deposits) or `full` (the whole quote at once).
    #[schema(example = "deposit")]
    kind: &'static str,
    /// Its amount before VAT.
    taxable_amount: Exact,
    total: Exact,
}

/// A quote: what the work will cost, priced as an invoice is. A draft has no `serial` and
/// may change; once finalised or sent it is numbered and never changes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QuoteBody {
    id: Uuid,
    /// Per team, gapless, given when it is finalised (`Q-0001`, or the team's pattern);
    /// null on a draft.
    #[schema(required = true, example = "Q-0001")]
    serial: Option<String>,
    /// DRAFT, SENT, ACCEPTED, DECLINED, EXPIRED (sent, undecided and past `validUntil`) or
    /// CONVERTED (its full or final invoice is made).
    #[schema(value_type = QuoteStatusSchema)]
    status: &'static str,
    client_id: Uuid,
    #[schema(required = true)]
    description: Option<String>,
    /// The terms below its lines.
    #[schema(required = true)]
    notes: Option<String>,
    /// The last moment it can be accepted; null for no limit.
    #[schema(required = true)]
    valid_until: Option<Timestamp>,
    /// Its client's currency, as an invoice's.
    #[schema(example = "EUR")]
    currency: &'static str,
    /// Units of the team's currency per unit of the quote's; null in the team's currency.
    #[schema(required = true)]
    exchange_rate: Option<Exact>,
    line_items: Vec<QuoteLineBody>,
    subtotal: Exact,
    #[schema(required = true)]
    discount: Option<DiscountBody>,
    discount_total: Exact,
    taxable_amount: Exact,
    tax_percentage: Exact,
    tax: Exact,
    total: Exact,
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
    vat_breakdown: Vec<VatGroupBody>,
    /// When it was numbered and put before its client; null on a draft.
    #[schema(required = true)]
    sent_at: Option<Timestamp>,
    #[schema(required = true)]
    decision: Option<DecisionBody>,
    /// The quote this one is a new version of; null for a first version.
    #[schema(required = true)]
    supersedes: Option<Uuid>,
    /// The invoices made of it, in order.
    invoice_ids: Vec<Uuid>,
    invoices: Vec<QuoteInvoiceBody>,
    /// Its page for the client, relative to the server's address: `/quotes/{id}`, which
    /// needs no key (the id is the secret), where the client accepts or declines it.
    #[schema(example = "/quotes/0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e")]
    hosted_url: String,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl QuoteBody {
    pub(crate) fn new(quote: Quote, now: chrono::DateTime<chrono::Utc>) -> Self {
        let currency = quote.currency;
        let money = |amount| Exact(round_to_minor(amount, currency));
        let vat_breakdown = VatGroupBody::all(quote.pricing().breakdown().unwrap_or_default(), currency);
        let (vat, rule) = (quote.vat.clone(), quote.tax_rule);
        let line = |item: LineItem| {
            let (vat_category, tax_percentage, vat_exemption_reason) = line_rate(&item, &vat, rule);
            QuoteLineBody {
                id: item.id.as_uuid(),
                net_amount: money(item.net_amount()),
                description: item.description.into_string(),
                unit_price: Exact(item.unit_price.normalize()),
                quantity: Exact(item.quantity.normalize()),
                amount: money(item.amount),
                discount: item.discount.map(|d| DiscountBody::of_line(d, currency)),
                position: item.position,
                unit_code: item.unit_code.as_str().to_owned(),
                vat_category,
                tax_percentage,
                vat_exemption_reason,
            }
        };
        let decision = quote.decision.as_ref().map(|decision| {
            let (verdict, signer_name, reason) = match &decision.verdict {
                Verdict::Accepted { signer } => ("accepted", Some(signer.as_str().to_owned()), None),
                Verdict::Declined { reason } => {
                    ("declined", None, reason.as_ref().map(|r| r.as_str().to_owned()))
                }
            };
            let (source, ip_address, user_agent) = match &decision.source {
                DecisionSource::Page { ip, user_agent } => {
                    ("page", Some(ip.clone()), Some(user_agent.clone()))
                }
                DecisionSource::Team => ("team", None, None),
            };
            DecisionBody {
                verdict,
                signer_name,
                reason,
                source,
                ip_address,
                user_agent,
                decided_at: Timestamp(decision.at),
            }
        });
        Self {
            id: quote.id.as_uuid(),
            serial: quote.number.as_ref().map(ToString::to_string),
            status: quote.status_at(now).as_str(),
            client_id: quote.client_id.as_uuid(),
            description: quote.description.clone().map(Description::into_string),
            notes: quote.notes.clone().map(kernel::Text::into_string),
            valid_until: quote.valid_until.map(Timestamp),
            currency: currency.as_str(),
            exchange_rate: quote.exchange.rate.map(|rate| Exact(rate.normalize())),
            subtotal: money(quote.totals.subtotal),
            discount: quote.discount.map(|d| DiscountBody::of(d, currency)),
            discount_total: money(quote.totals.discount_total),
            taxable_amount: money(quote.totals.taxable_amount()),
            tax_percentage: Exact(quote.tax_rule.percentage().normalize()),
            tax: money(quote.totals.tax),
            total: money(quote.totals.total),
            vat_category: quote.vat.category().as_str(),
            vat_exemption_reason: quote.vat.exemption_reason().map(|r| r.as_str().to_owned()),
            vat_breakdown,
            sent_at: quote.sent_at.map(Timestamp),
            decision,
            supersedes: quote.supersedes.map(|id| id.as_uuid()),
            invoice_ids: quote.invoices.iter().map(|i| i.invoice_id.as_uuid()).collect(),
            invoices: quote
                .invoices
                .iter()
                .map(|i| QuoteInvoiceBody {
                    invoice_id: i.invoice_id.as_uuid(),
                    serial: i.number.to_string(),
                    kind: i.kind.as_str(),
                    taxable_amount: money(i.net),
                    total: money(i.total),
                })
                .collect(),
            hosted_url: format!("/quotes/{}", quote.id),
            created_at: Timestamp(quote.created_at),
            updated_at: Timestamp(quote.updated_at),
            line_items: quote.line_items.into_iter().map(line).collect(),
        }
    }
}

/// A new quote: priced as an invoice for its client would be, in the client's currency.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({
    "clientId": "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e", "description": "Website redesign",
    "validUntil": "2026-12-31T23:59:59Z", "taxPercentage": 19, "notes": "50 % on order, the rest on delivery.",
    "lineItems": [{"description": "Design", "unitPrice": 800, "quantity": 5, "unitCode": "DAY"},
                  {"description": "Style guide (book)", "unitPrice": 40, "quantity": 2, "taxPercentage": 7}]}))]
pub(crate) struct QuoteInput {
    #[schema(format = Uuid)]
    client_id: String,
    /// `position` follows this order; each line as on invoices, with its own rate and
    /// discount if any.
    #[schema(min_items = 1, max_items = 1000)]
    line_items: Vec<LineItemInput>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    description: Option<String>,
    /// The terms stated below the lines, up to 5,000 characters.
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 5000,
        nullable
    )]
    notes: Option<String>,
    /// The last moment it can be accepted. Default: no limit.
    #[serde(default)]
    #[schema(value_type = Option<InstantInput>)]
    valid_until: Option<String>,
    /// As on invoices: 0 to 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 100, default = 0)]
    tax_percentage: Option<Number>,
    /// As on invoices: with `taxPercentage` 0, a flat tax.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
    tax: Option<Number>,
    #[serde(default)]
    #[schema(value_type = VatCategorySchema)]
    vat_category: Option<String>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 1000
    )]
    vat_exemption_reason: Option<String>,
    /// As on invoices: required when the client is billed in another currency than the
    /// team's, refused otherwise. Its invoices are made at this rate.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1e9)]
    exchange_rate: Option<Number>,
    #[serde(default)]
    discount: Option<DiscountInput>,
    /// The team's quote this one is a new version of; that one stays as it is.
    #[serde(default)]
    #[schema(format = Uuid)]
    supersedes: Option<String>,
}

/// A change of a draft: only the fields given change; `lineItems` replaces every line.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"validUntil": "2027-01-31T23:59:59Z",
    "lineItems": [{"description": "Design", "unitPrice": 800, "quantity": 4, "unitCode": "DAY"}]}))]
pub(crate) struct QuotePatch {
    #[serde(default)]
    #[schema(value_type = String, format = Uuid)]
    client_id: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<LineItemInput>, min_items = 1, max_items = 1000)]
    line_items: Patch<Vec<LineItemInput>>,
    /// `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$")]
    description: Patch<String>,
    /// `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 5000, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$")]
    notes: Patch<String>,
    /// `null` removes the limit.
    #[serde(default)]
    #[schema(value_type = Option<InstantInput>)]
    valid_until: Patch<String>,
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 100)]
    tax_percentage: Patch<Number>,
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
    tax: Patch<Number>,
    #[serde(default)]
    #[schema(value_type = VatCategorySchema)]
    vat_category: Patch<String>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 1000)]
    vat_exemption_reason: Patch<String>,
    #[serde(default)]
    #[schema(value_type = f64, exclusive_minimum = 0, maximum = 1e9)]
    exchange_rate: Patch<Number>,
    /// `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<DiscountInput>)]
    discount: Patch<DiscountInput>,
}

fn instant(text: &str, field: &str) -> Result<chrono::DateTime<chrono::Utc>, FieldError> {
    parse_instant(text).map_err(|e| e.at(field))
}

fn notes(text: String) -> Result<QuoteNotes, FieldError> {
    QuoteNotes::parse(text).map_err(|e| e.at("notes"))
}

fn client(text: &str) -> Result<billing::ClientId, FieldError> {
    body_id(text, "clientId", "client")
}

impl QuoteInput {
    fn parse(self) -> Result<QuoteDraft, FieldError> {
        Ok(QuoteDraft {
            client_id: client(&self.client_id)?,
            line_items: lines(self.line_items)?,
            description: self
                .description
                .map(|d| Description::parse(d).map_err(|e| e.at("description")))
                .transpose()?,
            notes: self.notes.map(notes).transpose()?,
            valid_until: self.valid_until.as_deref().map(|d| instant(d, "validUntil")).transpose()?,
            tax_percentage: self
                .tax_percentage
                .map(|n| number(&n, "taxPercentage", TAX_PERCENTAGE))
                .transpose()?,
            tax: self.tax.map(|n| number(&n, "tax", AMOUNT)).transpose()?,
            vat: vat(self.vat_category.as_deref(), self.vat_exemption_reason)?,
            exchange_rate: self
                .exchange_rate
                .map(|n| number(&n, "exchangeRate", EXCHANGE_RATE))
                .transpose()?,
            discount: self.discount.map(|d| d.parse("discount")).transpose()?,
            supersedes: self
                .supersedes
                .as_deref()
                .map(|id| body_id(id, "supersedes", "quote"))
                .transpose()?,
        })
    }
}

impl QuotePatch {
    fn parse(self) -> Result<QuoteChanges, FieldError> {
        Ok(QuoteChanges {
            client_id: self.client_id.required("clientId")?.as_deref().map(client).transpose()?,
            line_items: self.line_items.required("lineItems")?.map(lines).transpose()?,
            description: self
                .description
                .nullable()
                .map(|d| d.map(|d| Description::parse(d).map_err(|e| e.at("description"))).transpose())
                .transpose()?,
            notes: self.notes.nullable().map(|n| n.map(notes).transpose()).transpose()?,
            valid_until: self
                .valid_until
                .nullable()
                .map(|d| d.map(|d| instant(&d, "validUntil")).transpose())
                .transpose()?,
            tax_percentage: self
                .tax_percentage
                .required("taxPercentage")?
                .map(|n| number(&n, "taxPercentage", TAX_PERCENTAGE))
                .transpose()?,
            tax: self.tax.required("tax")?.map(|n| number(&n, "tax", AMOUNT)).transpose()?,
            vat: vat(
                self.vat_category.required("vatCategory")?.as_deref(),
                self.vat_exemption_reason.required("vatExemptionReason")?,
            )?,
            exchange_rate: self
                .exchange_rate
                .required("exchangeRate")?
                .map(|n| number(&n, "exchangeRate", EXCHANGE_RATE))
                .transpose()?,
            discount: self
                .discount
                .nullable()
                .map(|d| d.map(|d| d.parse("discount")).transpose())
                .transpose()?,
        })
    }
}

/// A rule of quotes in the REST API's words.
pub(crate) fn quote_refusal(rule: &QuoteRule) -> ApiError {
    match rule {
        QuoteRule::NotADraft { status } => ApiError::conflict(format!(
            "status: the quote is {}, and only a draft changes; make a new version (POST /v1/quotes with supersedes)",
            status.as_str()
        )),
        QuoteRule::NotSent => {
            ApiError::conflict("status: the quote is a draft; finalise or send it before its client decides")
        }
        QuoteRule::AlreadyDecided => {
            ApiError::conflict("decision: the client has decided on this quote already")
        }
        QuoteRule::Expired { valid_until } => ApiError::conflict(format!(
            "validUntil: the quote expired at {}; make a new version to quote again",
            Timestamp(*valid_until).text()
        )),
        QuoteRule::NotAccepted { status } => ApiError::conflict(format!(
            "status: the quote is {}, and only an accepted quote becomes invoices",
            status.as_str()
        )),
        QuoteRule::AlreadyConverted { invoice } => {
            ApiError::conflict(format!("status: the quote was invoiced in full as {invoice}"))
        }
        QuoteRule::EmptyDeposit => {
            FieldError::new("depositPercent", "must take more than nothing of the quote").into()
        }
        QuoteRule::DepositTooLarge { net, remaining } => ApiError::conflict(format!(
            "depositAmount: the deposits would reach the quote's taxable amount {net}; {remaining} remains, which mode full invoices as the final invoice"
        )),
        QuoteRule::FlatTaxDeposit => ApiError::conflict(
            "mode: a deposit cannot split the quote's flat tax; give the quote a taxPercentage, or convert it in full",
        ),
        QuoteRule::UnknownSuperseded => no_such("supersedes", "quote").into(),
        QuoteRule::Invoice(rule) => invoice_rule(rule).into(),
    }
}

impl From<QuoteError> for ApiError {
    fn from(error: QuoteError) -> Self {
        match error {
            QuoteError::NotFound => not_found("quote"),
            QuoteError::Rule(rule) => quote_refusal(&rule),
            QuoteError::Billing(error) => error.into(),
            QuoteError::NumberTaken(taken) => ApiError::conflict(format!(
                "numbering: the team's pattern makes {}, which another quote has; nothing was numbered: choose a pattern that makes new numbers (PATCH /v1/team)",
                taken.number
            )),
            QuoteError::Store(error) => error.into(),
        }
    }
}

fn quote_id(path: &str) -> Result<QuoteId, ApiError> {
    path_id(path, "quote")
}

/// Create a quote
///
/// Makes a draft quote for a client of the team, priced as an invoice for it would be (its
/// currency, rate, lines, VAT and discounts). A draft has no serial and may change. Needs
/// `quotes:write` (which `invoices:write` implies).
#[utoipa::path(
    tag = "Quotes",
    request_body = QuoteInput,
    responses(
        (status = 201, description = "Created", body = QuoteBody, headers(("Location" = String, description = "URL of the new quote"))),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_quote(
    auth: Auth<QuotesWrite>,
    Json(input): Json<QuoteInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let quote = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/quotes/{}", quote.id), quote))
}

/// Makes a draft quote of `input` in the caller's team.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: QuoteInput,
) -> Result<QuoteBody, ApiError> {
    let now = state.clock.now();
    let draft = input.parse()?;
    let stores = &state.stores;
    let quote = quoting::create_quote(&*stores.billing, &*stores.accounts, who.team_id, draft, now).await?;
    Ok(QuoteBody::new(quote, now))
}

/// Get a quote
///
/// One quote of the key's team. Needs `quotes:read` (which `invoices:read` implies).
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    responses((status = 200, description = "The quote", body = QuoteBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_quote(
    auth: Auth<QuotesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<QuoteBody>, ApiError> {
    let quote = quoting::the_quote(&*state.stores.billing, auth.principal.team_id, quote_id(&path)?).await?;
    Ok(web::Json(QuoteBody::new(quote, state.clock.now())))
}

/// Change a draft quote
///
/// Only the fields given change; `lineItems` replaces every line and the figures are
/// priced again. A numbered quote never changes (409): make a new version that
/// supersedes it. Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body = QuotePatch,
    responses(
        (status = 200, description = "The changed quote", body = QuoteBody),
        (status = 409, description = "The quote is no longer a draft", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[patch("/{id}")]
pub(crate) async fn update_quote(
    auth: Auth<QuotesWrite>,
    Json(input): Json<QuotePatch>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<QuoteBody>, ApiError> {
    let id = quote_id(&path)?;
    let changes = input.parse()?;
    let (stores, now) = (&state.stores, state.clock.now());
    let quote =
        quoting::update_quote(&*stores.billing, &*stores.accounts, auth.principal.team_id, id, changes, now)
            .await?;
    Ok(web::Json(QuoteBody::new(quote, now)))
}

/// Delete a draft quote
///
/// Deletes a draft for good; a numbered quote stays (409). Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The quote is no longer a draft", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_quote(
    auth: Auth<QuotesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id = quote_id(&path)?;
    quoting::delete_quote(&*state.stores.billing, auth.principal.team_id, id, state.clock.now()).await?;
    Ok(Deleted::new("quote"))
}

/// Finalise a quote
///
/// Numbers a draft with the team's next quote serial (`Q-0001`, gapless, or the team's
/// pattern) and puts it before its client: its page takes a decision from then on, and
/// `quote.sent` is raised. A numbered quote is answered as it is. Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    responses(
        (status = 200, description = "The numbered quote", body = QuoteBody),
        (status = 409, description = "The team's numbering pattern repeats a serial", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/finalize")]
pub(crate) async fn finalize_quote(
    auth: Auth<QuotesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<QuoteBody>, ApiError> {
    Ok(web::Json(finalize(&state, &auth.principal, &path).await?))
}

/// Numbers the caller's team's quote `id` (as written in a path).
pub(crate) async fn finalize(state: &ApiState, who: &Principal, id: &str) -> Result<QuoteBody, ApiError> {
    let now = state.clock.now();
    let (quote, _) = quoting::finalize_quote(&*state.stores.billing, who.team_id, quote_id(id)?, now).await?;
    Ok(QuoteBody::new(quote, now))
}

/// The team's record of its client's acceptance.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"signerName": "Zoë Łukasiewicz"}))]
pub(crate) struct AcceptInput {
    /// Who accepted it for the client, 1 to 200 characters.
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 200
    )]
    signer_name: String,
}

/// The team's record of its client's refusal.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"reason": "Over budget"}))]
pub(crate) struct DeclineInput {
    /// Why, as the client said it; up to 1,000 characters.
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    reason: Option<String>,
}

/// Record an acceptance
///
/// Records that the client accepted the sent quote, which the team learned another way (a
/// signed copy, a call); the client's own acceptance is on the quote's page. Final: a
/// quote is decided once (409), and an expired one takes no decision (409). Raises
/// `quote.accepted`. Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body = AcceptInput,
    responses(
        (status = 200, description = "The accepted quote", body = QuoteBody),
        (status = 409, description = "The quote is a draft, decided already, or expired", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/accept")]
pub(crate) async fn accept_quote(
    auth: Auth<QuotesWrite>,
    Json(input): Json<AcceptInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<QuoteBody>, ApiError> {
    let signer = SignerName::parse(input.signer_name).map_err(|e| e.at("signerName"))?;
    let verdict = Verdict::Accepted { signer };
    Ok(web::Json(decide(&state, &auth.principal, &path, verdict, DecisionSource::Team).await?))
}

/// Record a refusal
///
/// Records that the client declined the sent quote. Final, as an acceptance is. Raises
/// `quote.declined`. Needs `quotes:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body = DeclineInput,
    responses(
        (status = 200, description = "The declined quote", body = QuoteBody),
        (status = 409, description = "The quote is a draft, decided already, or expired", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/decline")]
pub(crate) async fn decline_quote(
    auth: Auth<QuotesWrite>,
    Json(input): Json<DeclineInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<QuoteBody>, ApiError> {
    let reason = input.reason.map(DeclineReason::parse).transpose().map_err(|e| e.at("reason"))?;
    let verdict = Verdict::Declined { reason };
    Ok(web::Json(decide(&state, &auth.principal, &path, verdict, DecisionSource::Team).await?))
}

/// Records `verdict` on the caller's team's quote `id`.
pub(crate) async fn decide(
    state: &ApiState,
    who: &Principal,
    id: &str,
    verdict: Verdict,
    source: DecisionSource,
) -> Result<QuoteBody, ApiError> {
    let now = state.clock.now();
    let quote =
        quoting::decide_quote(&*state.stores.billing, who.team_id, quote_id(id)?, verdict, source, now)
            .await?;
    Ok(QuoteBody::new(quote, now))
}

/// What converting a quote makes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"mode": "deposit", "depositPercent": 30}))]
pub(crate) struct ConvertInput {
    /// `full`: the whole quote, less the deposits invoiced before (its final invoice);
    /// `deposit`: a share of it, with `depositPercent` or `depositAmount`.
    #[schema(value_type = String, example = "full", pattern = "^(full|deposit)$")]
    mode: String,
    /// A deposit's percentage of each VAT group of the quote, before VAT: above 0, below
    /// 100, at most 4 decimal places.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, exclusive_maximum = 100)]
    deposit_percent: Option<Number>,
    /// A deposit's amount before VAT, split over the quote's VAT groups in proportion to
    /// them; rounded to the minor unit.
    #[serde(default)]
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1e21)]
    deposit_amount: Option<Number>,
}

impl ConvertInput {
    fn parse(self) -> Result<ConversionMode, FieldError> {
        let percent =
            self.deposit_percent.map(|n| number(&n, "depositPercent", TAX_PERCENTAGE)).transpose()?;
        let amount = self.deposit_amount.map(|n| number(&n, "depositAmount", AMOUNT)).transpose()?;
        match (self.mode.as_str(), percent, amount) {
            ("full", None, None) => Ok(ConversionMode::Full),
            ("full", _, _) => {
                Err(FieldError::new("mode", "full takes no depositPercent or depositAmount; leave them out"))
            }
            ("deposit", Some(_), Some(_)) => {
                Err(FieldError::new("depositAmount", "give either depositPercent or depositAmount, not both"))
            }
            ("deposit", Some(percent), None)
                if percent >= Decimal::ONE_HUNDRED || percent <= Decimal::ZERO =>
            {
                Err(FieldError::new("depositPercent", "must be above 0 and below 100"))
            }
            ("deposit", Some(percent), None) => Ok(ConversionMode::Deposit(DepositSize::Percent(percent))),
            ("deposit", None, Some(amount)) if amount <= Decimal::ZERO => {
                Err(FieldError::new("depositAmount", "must be above 0"))
            }
            ("deposit", None, Some(amount)) => Ok(ConversionMode::Deposit(DepositSize::Amount(amount))),
            ("deposit", None, None) => {
                Err(FieldError::new("depositPercent", "is required with mode deposit, or give depositAmount"))
            }
            _ => Err(FieldError::new("mode", "must be one of full, deposit")),
        }
    }
}

/// Convert a quote into an invoice
///
/// Makes an invoice of the accepted quote through the same rules and lock as
/// `POST /v1/invoices` (the next serial, the client's currency at the quote's rate, its
/// VAT): `mode: deposit` bills a share of each VAT group, and may follow another;
/// `mode: full` bills the whole quote once, less the deposits before it (`depositsDeducted`
/// on the invoice, whose `amountDue` is what remains). A second full conversion answers 409
/// naming the invoice's serial, however many race. The quote stays ACCEPTED until its full
/// or final invoice, then reads CONVERTED (`quote.converted`). Needs `quotes:write` and
/// `invoices:write`.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body = ConvertInput,
    responses(
        (status = 201, description = "The invoice made (its `quoteId` names the quote, whose `invoiceIds` now hold it)", body = InvoiceBody, headers(("Location" = String, description = "URL of the new invoice"))),
        (status = 409, description = "The quote is not accepted, was invoiced in full already, or the deposits would reach its amount", body = ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/convert")]
pub(crate) async fn convert_quote(
    auth: Auth<crate::rest::auth::ConvertQuotes>,
    Json(input): Json<ConvertInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let invoice = convert(&state, &auth.principal, &path, input).await?;
    Ok(created(format!("/v1/invoices/{}", invoice.id), invoice))
}

/// Converts the caller's team's quote `id` as `input` asks.
pub(crate) async fn convert(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: ConvertInput,
) -> Result<InvoiceBody, ApiError> {
    let id = quote_id(id)?;
    let mode = input.parse()?;
    let (stores, now) = (&state.stores, state.clock.now());
    let (_, invoice) =
        quoting::convert_quote(&*stores.billing, &*stores.accounts, who.team_id, id, mode, now).await?;
    Ok(InvoiceBody::new(invoice, now))
}

/// The quote listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct QuoteQuery {
    /// Only quotes of this status; repeat the parameter for several. EXPIRED is a SENT
    /// quote past its `validUntil`.
    #[param(value_type = Option<Vec<QuoteStatusSchema>>, style = Form, explode, example = json!("SENT"))]
    status: Option<paging::OneOrMany>,
    /// Only quotes for this client.
    #[param(format = Uuid)]
    client_id: Option<String>,
}

/// List quotes
///
/// The team's quotes with their lines, newest first. With `limit`, a page: a `Link` header
/// with `rel="next"` names the next one while there is more; with `Accept: text/csv`, all
/// of them as CSV. Needs `quotes:read`.
#[utoipa::path(
    tag = "Quotes",
    params(QuoteQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's quotes; with `Accept: text/csv`, all of them as CSV, one row per quote", content((Vec<QuoteBody> = "application/json"), (String = "text/csv")),
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_quotes(
    auth: Auth<QuotesRead>,
    request: HttpRequest,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if csv::wanted(&request) {
        let (store, team, now) = (state.stores.billing.clone(), auth.principal.team_id, state.clock.now());
        return csv::listing("quotes.csv", listing.parameters.clone(), |query| {
            Ok(QuotesCsv { store, team, filter: filter_of(query, now)? })
        })
        .await;
    }
    Ok(csv::varying(listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)?))
}

/// A team's quotes as CSV, a page at a time: one row per quote.
#[derive(Clone)]
struct QuotesCsv {
    store: std::sync::Arc<dyn billing::BillingStore>,
    team: accounts::TeamId,
    filter: QuoteFilter,
}

impl csv::PagedListing for QuotesCsv {
    type Item = Quote;
    type Position = QuotePosition;

    async fn read(&self, after: Option<QuotePosition>, limit: u32) -> Result<Vec<Quote>, ApiError> {
        let filter = QuoteFilter { after, limit: Some(limit), ..self.filter.clone() };
        Ok(self.store.list_quotes(self.team, &filter).await?)
    }

    fn position(quote: &Quote) -> QuotePosition {
        QuotePosition::of(quote)
    }

    fn header() -> &'static [&'static str] {
        &[
            "id",
            "serial",
            "status",
            "clientId",
            "currency",
            "subtotal",
            "discountTotal",
            "tax",
            "total",
            "validUntil",
            "sentAt",
            "decidedAt",
            "description",
            "lineItems",
            "invoiceIds",
            "createdAt",
        ]
    }

    fn cells(&self, quote: &Quote) -> Vec<String> {
        let money = |value: Decimal| round_to_minor(value, quote.currency).to_string();
        let instant =
            |at: Option<chrono::DateTime<chrono::Utc>>| at.map(|at| Timestamp(at).text()).unwrap_or_default();
        vec![
            quote.id.to_string(),
            quote.number.as_ref().map(ToString::to_string).unwrap_or_default(),
            quote.status_at(self.filter.now).as_str().to_owned(),
            quote.client_id.to_string(),
            quote.currency.as_str().to_owned(),
            money(quote.totals.subtotal),
            money(quote.totals.discount_total),
            money(quote.totals.tax),
            money(quote.totals.total),
            instant(quote.valid_until),
            instant(quote.sent_at),
            instant(quote.decision.as_ref().map(|d| d.at)),
            quote.description.as_ref().map(|d| d.as_str().to_owned()).unwrap_or_default(),
            quote.line_items.len().to_string(),
            quote.invoices.iter().map(|i| i.invoice_id.to_string()).collect::<Vec<_>>().join(" "),
            Timestamp(quote.created_at).text(),
        ]
    }
}

/// The quotes `query` asks for at `now`, leaving out the page.
fn filter_of(query: QuoteQuery, now: chrono::DateTime<chrono::Utc>) -> Result<QuoteFilter, ApiError> {
    let statuses = query.status.map(paging::OneOrMany::into_vec).unwrap_or_default();
    let statuses = statuses
        .iter()
        .map(|s| <QuoteStatus as kernel::Words>::parse_word(s).map_err(|e| e.at("status")))
        .collect::<Result<_, _>>()?;
    Ok(QuoteFilter {
        statuses,
        now,
        client: query_id(query.client_id.as_deref(), "clientId")?,
        after: None,
        limit: None,
    })
}

/// The team's quotes that the parameters in `query` ask for, newest first.
pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<QuoteBody>, ApiError> {
    let (query, page) = paging::read_listing::<QuoteQuery>(query)?;
    let now = state.clock.now();
    let filter = filter_of(query, now)?;
    let page = paging::page_from_store(
        &page,
        position,
        |q| cursor_of(QuotePosition::of(q)),
        |after, limit| async move {
            Ok(state.stores.billing.list_quotes(who.team_id, &QuoteFilter { after, limit, ..filter }).await?)
        },
    )
    .await?;
    Ok(page.map(|quote| QuoteBody::new(quote, now)))
}

fn cursor_of(position: QuotePosition) -> String {
    let created = position.created_at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    paging::encode_cursor(&[created, position.id.to_string()])
}

fn position(cursor: &str) -> Result<QuotePosition, FieldError> {
    let parts = paging::decode_cursor(cursor)?;
    let [created, id] = parts.as_slice() else { return Err(paging::not_a_cursor()) };
    let created_at = chrono::DateTime::parse_from_rfc3339(created).map_err(|_| paging::not_a_cursor())?;
    let id = QuoteId::parse(id).ok_or_else(paging::not_a_cursor)?;
    Ok(QuotePosition { created_at: created_at.to_utc(), id })
}
