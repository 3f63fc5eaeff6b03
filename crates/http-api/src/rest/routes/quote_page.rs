//! `/quotes/{id}`: a sent quote's page for its client, where it accepts or declines it, and
//! its PDF. Public like an invoice's page: the unguessable id is the only credential, and
//! requests are limited per IP. A draft has no page.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use billing::einvoice::Parties;
use billing::quote::{DecisionSource, DeclineReason, Quote, QuoteId, SignerName, Verdict};
use billing::{Client, SenderAddress};

use crate::conventions::client::client_ip;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::openapi::Binary;
use crate::rest::routes::{not_found, path_id};
use crate::rest::state::ApiState;

/// The sent quote `id` (as written in a path), with its client and the team's sender, once
/// the request is within its IP's limit.
async fn sent_quote(
    req: &HttpRequest,
    state: &ApiState,
    id: &str,
) -> Result<(Quote, Client, SenderAddress), ApiError> {
    if let Some(ip) = client_ip(req, state.settings.trust_forwarded) {
        state.limits.check_ip(ip).await.map_err(too_many_requests)?;
    }
    let id: QuoteId = path_id(id, "quote")?;
    let stores = &state.stores;
    let quote = stores.billing.find_quote(id).await?.filter(|quote| quote.number.is_some());
    let quote = quote.ok_or_else(|| not_found("quote"))?;
    let client =
        stores.billing.get(quote.team_id, quote.client_id).await?.ok_or_else(|| not_found("quote"))?;
    let sender = billing::service::sender_as_it_stands(
        &*stores.billing,
        &*stores.accounts,
        quote.team_id,
        state.clock.now(),
    )
    .await?;
    Ok((quote, client, sender))
}

/// The page as HTML, with the headers every client page carries.
fn page(state: &ApiState, status: actix_web::http::StatusCode, html: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, state.printer.page_policy()))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Robots-Tag", "noindex"))
        .body(html)
}

/// Get a quote's page
///
/// The sent quote as a web page for its client, in the client's language (or the team's):
/// its lines, totals, terms and PDF, and, while it may decide, the forms that accept it (a
/// name typed, a box ticked) or decline it (a reason, if it likes). Server-rendered HTML
/// that needs no script and loads nothing from anywhere. Public: needs no key, and is
/// limited per client IP; a draft, or an unknown or malformed id, is a 404.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "The page", content_type = "text/html", body = String),
        (status = 404, description = "No such sent quote", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
    )
)]
#[get("/{id}")]
pub(crate) async fn quote_page(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (quote, client, sender) = sent_quote(&req, &state, &path).await?;
    let parties = Parties { client: &client, sender: &sender };
    let html = state.printer.quote_page(&quote, &parties, state.clock.now(), false);
    Ok(page(&state, actix_web::http::StatusCode::OK, html))
}

/// Get a quote as a PDF
///
/// The sent quote as a PDF, in its client's language. Public, as its page is.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "The PDF", content_type = "application/pdf", body = inline(Binary),
            headers(("Content-Disposition" = String, description = "`inline; filename=\"Q-0001.pdf\"`"))),
        (status = 404, description = "No such sent quote", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
        (status = 500, description = "`failed to generate PDF`", body = ErrorBody),
    )
)]
#[get("/{id}/pdf")]
pub(crate) async fn quote_pdf(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (quote, client, sender) = sent_quote(&req, &state, &path).await?;
    let parties = Parties { client: &client, sender: &sender };
    let file = state
        .printer
        .quote_pdf(&quote, &parties, state.clock.now())
        .await
        .map_err(|error| crate::rest::routes::refusals::render_failed(&error))?;
    Ok(HttpResponse::Ok()
        .content_type(file.media_type.as_str())
        .insert_header((header::CONTENT_DISPOSITION, format!("inline; filename=\"{}\"", file.name)))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .body(file.bytes))
}

/// What the acceptance form sends.
#[derive(Debug, utoipa::ToSchema)]
#[expect(dead_code, reason = "describes the form, which the handler reads field by field")]
pub(crate) struct AcceptForm {
    /// The name the client types, 1 to 200 characters.
    #[schema(example = "Dr. Erika Beispiel", max_length = 200)]
    signer: Option<String>,
    /// `yes`: the box agreeing to the quote and its terms is ticked.
    #[schema(example = "yes")]
    agree: Option<String>,
}

/// What the decline form sends.
#[derive(Debug, utoipa::ToSchema)]
#[expect(dead_code, reason = "describes the form, which the handler reads field by field")]
pub(crate) struct DeclineForm {
    /// Why, up to 1,000 characters; may be empty.
    #[schema(example = "Over budget", max_length = 1000)]
    reason: Option<String>,
}

/// The value of the form field `name` in a urlencoded `body` (its first), if given: a form
/// a person sends is read as leniently as a browser writes it.
fn field(body: &[u8], name: &str) -> Option<String> {
    url::form_urlencoded::parse(body).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}

/// Where a decision came from: the request's address and browser, as they were sent.
fn source(req: &HttpRequest, state: &ApiState) -> DecisionSource {
    let ip = client_ip(req, state.settings.trust_forwarded).map(|ip| ip.to_string()).unwrap_or_default();
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|agent| agent.to_str().ok())
        .map(|agent| agent.chars().take(500).collect())
        .unwrap_or_default();
    DecisionSource::Page { ip, user_agent }
}

/// Back to the page, which shows what became of the decision.
fn back_to(quote: &Quote) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, format!("/quotes/{}", quote.id))).finish()
}

/// Records `verdict` from the page, or, when the quote takes none any more (decided,
/// expired), leaves it: the page says what it is.
async fn decide(
    state: &ApiState,
    req: &HttpRequest,
    quote: &Quote,
    verdict: Verdict,
) -> Result<HttpResponse, ApiError> {
    let done = billing::quoting::decide_quote(
        &*state.stores.billing,
        quote.team_id,
        quote.id,
        verdict,
        source(req, state),
        state.clock.now(),
    )
    .await;
    match done {
        Ok(_) | Err(billing::quoting::QuoteError::Rule(_)) => Ok(back_to(quote)),
        Err(error) => Err(error.into()),
    }
}

/// Accept a quote on its page
///
/// The page's acceptance form: the name typed and the box ticked record the acceptance,
/// with the time, the address the request came from and its `User-Agent`, and answer 303
/// back to the page. Without both, the page answers again (200) asking for them. A quote
/// that takes no decision any more is left as it is (303 to its page). Public, as the page.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body(content = AcceptForm, content_type = "application/x-www-form-urlencoded"),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 303, description = "Back to the page", headers(("Location" = String, description = "The quote's page"))),
        (status = 200, description = "The page again, asking for the name and the box", content_type = "text/html", body = String),
        (status = 404, description = "No such sent quote", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
    )
)]
#[post("/{id}/accept")]
pub(crate) async fn accept_on_page(
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (quote, client, sender) = sent_quote(&req, &state, &path).await?;
    let signer = field(&body, "signer").and_then(|name| SignerName::parse(name.trim()).ok());
    if let (Some(signer), Some("yes")) = (signer, field(&body, "agree").as_deref()) {
        return decide(&state, &req, &quote, Verdict::Accepted { signer }).await;
    }
    let parties = Parties { client: &client, sender: &sender };
    let html = state.printer.quote_page(&quote, &parties, state.clock.now(), true);
    // A page for people, answered as a page (the API's JSON errors are not theirs).
    Ok(page(&state, actix_web::http::StatusCode::OK, html))
}

/// Decline a quote on its page
///
/// The page's decline form: records the refusal, with the reason given (if any), the time,
/// the address and the `User-Agent`, and answers 303 back to the page. Public, as the page.
#[utoipa::path(
    tag = "Quotes",
    params(("id" = Uuid, Path, description = "Quote id")),
    request_body(content = DeclineForm, content_type = "application/x-www-form-urlencoded"),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 303, description = "Back to the page", headers(("Location" = String, description = "The quote's page"))),
        (status = 404, description = "No such sent quote", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
    )
)]
#[post("/{id}/decline")]
pub(crate) async fn decline_on_page(
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (quote, _, _) = sent_quote(&req, &state, &path).await?;
    let reason = field(&body, "reason").map(|reason| reason.trim().chars().take(1000).collect::<String>());
    let reason =
        reason.filter(|reason| !reason.is_empty()).and_then(|reason| DeclineReason::parse(reason).ok());
    decide(&state, &req, &quote, Verdict::Declined { reason }).await
}
