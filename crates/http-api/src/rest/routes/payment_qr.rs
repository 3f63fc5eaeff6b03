//! `GET /v1/invoices/{id}/payment-qr`: what an invoice's payment QR code encodes, for a
//! client that draws the code itself.

use actix_web::{HttpRequest, HttpResponse, get, web};
use billing::issue::{self, DocumentRef, Reader};
use billing::payment_qr::{QrFormat, payment_qr};
use kernel::{FieldError, Words};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead};
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::refusals::qr_refusal;
use crate::rest::routes::{KeyedErrors, not_found, path_id};
use crate::rest::state::ApiState;

/// Which payment QR code.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct QrQuery {
    /// `epc` (the EPC QR code, EPC069-12 version 002: a SEPA credit transfer in EUR) or
    /// `swiss` (the Swiss QR-bill, SIX Implementation Guidelines 2.3: CHF or EUR to a CH or
    /// LI account).
    #[param(required = true, value_type = String, pattern = "^(epc|swiss)$", example = "epc")]
    format: Option<String>,
}

/// What a payment QR code encodes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaymentQrBody {
    #[schema(example = "epc", pattern = "^(epc|swiss)$")]
    format: &'static str,
    /// The code's text, lines separated as the format has them (LF for EPC, CR LF for the
    /// QR-bill). Encode it in `encoding` to get the bytes of the symbol.
    #[schema(
        example = "BCD\n002\n2\nSCT\nBYLADEM1001\nMuster & Söhne GmbH\nDE02120300000000202051\nEUR1439.9\n\nRF40INV0001"
    )]
    payload: String,
    /// `iso-8859-1` for an EPC payload that fits it (character set 2), else `utf-8`.
    #[schema(example = "iso-8859-1", pattern = "^(utf-8|iso-8859-1)$")]
    encoding: &'static str,
    /// What it asks to be paid: the invoice's `amountDue`.
    amount: Exact,
    /// The reference it carries: the invoice's `paymentReference`, or the form the account
    /// takes (a QR reference to a QR-IBAN; a creditor reference in an EPC code).
    #[schema(example = "RF40INV0001")]
    reference: String,
}

/// Get an invoice's payment QR code
///
/// The payload of the invoice's payment QR code in `format`, for what is due now: the EPC
/// QR code (EUR to an account in a SEPA country) or the Swiss QR-bill's (CHF or EUR to a
/// Swiss or Liechtenstein account, with the sender's structured address; the client is the
/// debtor where its address is complete). A paid invoice carries none, and what a format
/// needs that the invoice or the team's sender lacks is a 422 naming it. Needs
/// `invoices:read`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id"), QrQuery),
    responses(
        (status = 200, description = "The payload", body = PaymentQrBody),
        (status = 400, description = "`format` missing or not `epc` or `swiss`", body = ErrorBody),
        (status = 404, description = "No such invoice in the key's team", body = ErrorBody),
        (status = 422, description = "The format needs what the invoice lacks, e.g. `sender.iban is required for an EPC QR code: set it with PATCH /v1/team`", body = ErrorBody),
        KeyedErrors,
    )
)]
#[get("/{id}/payment-qr")]
pub(crate) async fn invoice_payment_qr(
    auth: Auth<InvoicesRead>,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let query = web::Query::<QrQuery>::from_query(req.query_string())
        .map_err(crate::conventions::body::query_refusal)?
        .into_inner();
    let format = query.format.ok_or_else(|| FieldError::new("format", "must be one of epc, swiss"))?;
    let format = QrFormat::parse_word(&format).map_err(|e| e.at("format"))?;
    let id = path_id(&path, "invoice")?;
    let document = DocumentRef::Invoice(id);
    let issued = issue::load(&*state.stores.billing, document, Reader::Team(auth.principal.team_id)).await?;
    let issued = issued.ok_or_else(|| not_found("invoice"))?;
    let code = payment_qr(format, &issued.invoice, &issued.client, &issued.sender)
        .map_err(|refusal| qr_refusal(&refusal))?;
    // An EPC payload of character set 2 is ISO 8859-1: each byte the code point it is.
    let (payload, encoding) = if format == QrFormat::Epc && code.payload.starts_with(b"BCD\n002\n2\n") {
        (code.payload.iter().map(|byte| char::from(*byte)).collect(), "iso-8859-1")
    } else {
        (String::from_utf8_lossy(&code.payload).into_owned(), "utf-8")
    };
    Ok(HttpResponse::Ok().json(PaymentQrBody {
        format: format.as_str(),
        payload,
        encoding,
        amount: Exact(code.amount),
        reference: code.reference.to_string(),
    }))
}
