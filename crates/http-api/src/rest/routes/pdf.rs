//! What the public PDF links share (an invoice's, a credit note's): the per-IP limit, the
//! query (`id`, `download`), and the rendered answer.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use billing::einvoice::Format;
use billing::issue::{self, DocumentRef, Reader};
use billing::payment_qr::QrChoice;
use kernel::FieldError;
use serde::Deserialize;

use crate::conventions::client::client_ip;
use crate::conventions::error::ApiError;
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::openapi::PdfFormat;
use crate::rest::routes::not_found;
use crate::rest::routes::refusals::{file_refused, noun};
use crate::rest::state::ApiState;

/// The query of a PDF link, as the description shows it ([`PdfParams`] reads it).
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(dead_code, reason = "only its OpenAPI description is read")]
pub(crate) struct PdfQuery {
    /// The document's id: the invoice's, or the credit note's.
    #[param(required = true, format = Uuid)]
    id: Option<String>,
    /// `true` serves the PDF as a download (`attachment`); default `false` (`inline`).
    #[param(value_type = Option<bool>, required = false, default = false)]
    download: Option<String>,
    /// `facturx` makes the PDF a Factur-X / ZUGFeRD invoice (EN 16931 profile): PDF/A-3b
    /// with the document's XML embedded as `factur-x.xml`. Left out, a plain PDF.
    #[param(required = false, value_type = Option<PdfFormat>, example = "facturx")]
    format: Option<String>,
    /// The payment QR code to print on an invoice: `auto` (the Swiss QR-bill to a Swiss
    /// account, else the EPC QR code where the invoice has what it needs, else none),
    /// `epc`, `swiss` or `none`. Left out: the team's choice (`sender.paymentQr`), which
    /// prints what each invoice allows; an explicit `epc` or `swiss` the invoice lacks data
    /// for is a 422 naming it. A paid invoice carries none.
    #[param(required = false, value_type = Option<String>, pattern = "^(auto|epc|swiss|none)$", example = "epc")]
    qr: Option<String>,
}

/// The query of a PDF link, as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PdfParams {
    id: Option<String>,
    download: Option<String>,
    format: Option<String>,
    qr: Option<String>,
}

/// What a PDF link asks for: the document's id as given, whether to download it, and how
/// the PDF is made.
#[derive(Debug)]
pub(crate) struct PdfAsked {
    pub(crate) id: String,
    download: bool,
    format: issue::PdfFormat,
    qr: Option<QrChoice>,
}

/// Limits the caller per IP, then reads the query: so a 429 comes before a 400.
pub(crate) async fn asked(req: &HttpRequest, state: &ApiState) -> Result<PdfAsked, ApiError> {
    if let Some(ip) = client_ip(req, state.settings.trust_forwarded) {
        state.limits.check_ip(ip).await.map_err(too_many_requests)?;
    }
    let query = web::Query::<PdfParams>::from_query(req.query_string())
        .map_err(crate::conventions::body::query_refusal)?
        .into_inner();
    let id = query.id.ok_or_else(|| FieldError::new("id", "is required"))?;
    let download = match query.download.as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(FieldError::new("download", "must be true or false").into()),
    };
    let format = match query.format.as_deref() {
        None => issue::PdfFormat::Plain,
        Some(word) if word == Format::FacturX.as_str() => issue::PdfFormat::FacturX,
        Some(_) => {
            let facturx = Format::FacturX.as_str();
            return Err(FieldError::new(
                "format",
                format!("must be {facturx}, or be left out for a plain PDF"),
            )
            .into());
        }
    };
    let qr = query
        .qr
        .as_deref()
        .map(<QrChoice as kernel::Words>::parse_word)
        .transpose()
        .map_err(|error| error.at("qr"))?;
    Ok(PdfAsked { id, download, format, qr })
}

/// The PDF of `document` as asked: inline or as a download named after its serial. No such
/// document is a 404, an e-invoice it cannot make a 422, a renderer's failure a 500 that
/// says only so, its cause logged.
pub(crate) async fn answer(
    state: &ApiState,
    asked: &PdfAsked,
    document: DocumentRef,
) -> Result<HttpResponse, ApiError> {
    let issued = issue::load(&*state.stores.billing, document, Reader::ByLink).await?;
    let issued = issued.ok_or_else(|| not_found(noun(document.kind())))?;
    let pdf =
        state.printer.pdf(&issued, asked.format, asked.qr, state.clock.now()).await.map_err(file_refused)?;
    let disposition = if asked.download { "attachment" } else { "inline" };
    Ok(HttpResponse::Ok()
        .content_type(pdf.media_type.as_str())
        .insert_header((header::CONTENT_DISPOSITION, format!("{disposition}; filename=\"{}\"", pdf.name)))
        .body(pdf.bytes))
}
