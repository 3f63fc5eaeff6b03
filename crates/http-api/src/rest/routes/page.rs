//! `GET /invoices/{id}`: an invoice's page for its client, in the client's language. Public
//! like the PDF: the unguessable id is the only credential, and requests are limited per IP.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use billing::InvoiceId;
use billing::document::CardReturn;
use billing::issue::{self, DocumentRef, Reader};

use crate::conventions::client::client_ip;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::routes::{not_found, path_id};
use crate::rest::state::ApiState;

/// What the page's address may carry.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct PageQuery {
    payment: Option<String>,
}

/// Get an invoice's page
///
/// The invoice as a web page for its client, in the client's language (or the team's):
/// what is due, how to pay it (the bank details, the payment reference and the payment QR
/// code the team chose, and "Pay by card" when the team connected Stripe), the lines and
/// totals, and links to the PDF and the Factur-X PDF.
/// Server-rendered HTML that needs no script and loads nothing from anywhere, under a
/// Content-Security-Policy that allows nothing else. Public: needs no key, and is limited
/// per client IP; an unknown or malformed id is a 404, as for the PDF.
#[utoipa::path(
    tag = "Invoices",
    params(
        ("id" = Uuid, Path, description = "Invoice id"),
        ("payment" = Option<String>, Query, description = "How the client came back from Stripe's Checkout: `paid`, `cancelled`, or `failed` (no checkout could be made); the page says so", example = "paid"),
    ),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "The page", content_type = "text/html", body = String,
            headers(("Content-Security-Policy" = String, description = "`default-src 'none'; style-src 'sha256-…'; …`"))),
        (status = 404, description = "No such invoice", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
    )
)]
#[get("/{id}")]
pub(crate) async fn invoice_page(
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if let Some(ip) = client_ip(&req, state.settings.trust_forwarded) {
        state.limits.check_ip(ip).await.map_err(too_many_requests)?;
    }
    let id: InvoiceId = path_id(&path, "invoice")?;
    let issued = issue::load(&*state.stores.billing, DocumentRef::Invoice(id), Reader::ByLink).await?;
    let issued = issued.ok_or_else(|| not_found("invoice"))?;
    let takes_cards = crate::rest::routes::cards::takes_cards(&state, issued.invoice.team_id).await?;
    // Any other word is as none: the page is for people, and says nothing of it.
    let returned = match query.payment.as_deref() {
        Some("paid") => Some(CardReturn::Paid),
        Some("cancelled") => Some(CardReturn::Cancelled),
        Some("failed") => Some(CardReturn::Failed),
        _ => None,
    };
    let html = state
        .printer
        .page(&issued, state.clock.now(), takes_cards, returned)
        .ok_or_else(|| not_found("invoice"))?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, state.printer.page_policy()))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header(("X-Robots-Tag", "noindex"))
        .body(html))
}
