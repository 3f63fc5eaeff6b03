//! What the public PDF links share (an invoice's, a credit note's): the per-IP limit, the
//! query (`id`, `download`), and the rendered answer.

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, web};
use billing::InvoiceDocument;
use kernel::FieldError;
use serde::Deserialize;

use crate::conventions::client::client_ip;
use crate::conventions::error::ApiError;
use crate::conventions::ratelimit::too_many_requests;
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
    #[param(required = false, value_type = Option<PdfFormat>)]
    format: Option<String>,
}

/// The one format a PDF link takes besides the plain PDF.
#[derive(Debug)]
pub(crate) struct PdfFormat;

impl utoipa::PartialSchema for PdfFormat {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(["facturx"]))
            .into()
    }
}

impl utoipa::ToSchema for PdfFormat {}

/// The query of a PDF link, as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PdfParams {
    id: Option<String>,
    download: Option<String>,
    format: Option<String>,
}

/// What a PDF link asks for: the document's id as given, and whether to download it.
#[derive(Debug)]
pub(crate) struct PdfAsked {
    pub(crate) id: String,
    download: bool,
    /// Whether to make a Factur-X PDF.
    pub(crate) facturx: bool,
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
    let facturx = match query.format.as_deref() {
        None => false,
        Some("facturx") => true,
        Some(_) => {
            return Err(FieldError::new("format", "must be facturx, or be left out for a plain PDF").into());
        }
    };
    Ok(PdfAsked { id, download, facturx })
}

/// `document` with the Factur-X XML of `e_invoice` to embed, or the refusal of an e-invoice
/// (a 422 naming what is missing, or a 404 as for a plain PDF).
pub(crate) fn with_facturx(
    made: Result<(InvoiceDocument, billing::einvoice::EInvoice), billing::service::EInvoiceError>,
    what: &str,
) -> Result<InvoiceDocument, ApiError> {
    let (mut document, e_invoice) = made.map_err(|error| super::einvoices::refused(error, what))?;
    document.facturx_xml = Some(einvoice::Format::FacturX.write(&e_invoice));
    Ok(document)
}

/// `document` rendered as asked: inline or as a download named after its serial; a
/// renderer's failure is a 500 that says only so, its cause logged.
pub(crate) async fn answer(
    state: &ApiState,
    asked: &PdfAsked,
    document: &InvoiceDocument,
) -> Result<HttpResponse, ApiError> {
    let pdf = state.renderer.render(document).await.map_err(|error| {
        tracing::error!(error = format!("{error:#}"), document = %document.serial, "PDF rendering failed");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "failed to generate PDF")
    })?;
    let disposition = if asked.download { "attachment" } else { "inline" };
    Ok(HttpResponse::Ok()
        .content_type("application/pdf")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("{disposition}; filename=\"{}.pdf\"", document.serial),
        ))
        .body(pdf))
}
