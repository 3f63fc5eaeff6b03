//! E-invoices: `GET /v1/invoices/{id}/e-invoice` and `GET /v1/credit-notes/{id}/e-invoice`,
//! an invoice or credit note as XRechnung (UBL or CII) or Factur-X XML.

use accounts::Principal;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use billing::einvoice::Format;
use billing::issue::{self, DocumentFile, DocumentRef, Reader};
use kernel::{FieldError, Words};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead};
use crate::rest::openapi::EInvoiceFormat;
use crate::rest::routes::refusals::{einvoice_refusal, noun};
use crate::rest::routes::{KeyedErrors, not_found, path_id};
use crate::rest::state::ApiState;

/// Which e-invoice to make.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct FormatQuery {
    /// `xrechnung-ubl` (XRechnung 3.0, UBL 2.1), `xrechnung-cii` (XRechnung 3.0, CII D16B) or
    /// `facturx` (Factur-X / ZUGFeRD, EN 16931 profile, the XML a Factur-X PDF embeds).
    #[param(required = true, value_type = EInvoiceFormat, example = "xrechnung-ubl")]
    format: Option<String>,
}

impl FormatQuery {
    fn read(req: &HttpRequest) -> Result<Self, ApiError> {
        Ok(web::Query::<Self>::from_query(req.query_string())
            .map_err(crate::conventions::body::query_refusal)?
            .into_inner())
    }

    fn format(self) -> Result<Format, FieldError> {
        let name = self.format.ok_or_else(|| FieldError::new("format", formats()))?;
        Format::parse_word(&name).map_err(|e| e.at("format"))
    }
}

/// What `format` must be: `must be one of xrechnung-ubl, xrechnung-cii, facturx, peppol-bis`.
fn formats() -> String {
    let words: Vec<&str> = Format::ALL.iter().map(|format| format.as_str()).collect();
    format!("must be one of {}", words.join(", "))
}

/// The caller's team's `document` as XML of the format `query` asks: what the endpoints
/// and the `e_invoice` tool answer.
pub(crate) async fn xml(
    state: &ApiState,
    who: &Principal,
    document: DocumentRef,
    query: FormatQuery,
) -> Result<DocumentFile, ApiError> {
    let format = query.format()?;
    let issued = issue::load(&*state.stores.billing, document, Reader::Team(who.team_id)).await?;
    let issued = issued.ok_or_else(|| not_found(noun(document.kind())))?;
    state.printer.xml(&issued, format).map_err(|refused| einvoice_refusal(&refused))
}

/// The caller's team's invoice `id` (as a path writes it) as XML of the asked format.
pub(crate) async fn invoice_xml(
    state: &ApiState,
    who: &Principal,
    id: &str,
    query: FormatQuery,
) -> Result<DocumentFile, ApiError> {
    let id = path_id(id, "invoice")?;
    xml(state, who, DocumentRef::Invoice(id), query).await
}

/// The XML, named after the document and its format.
fn answer(file: DocumentFile) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(file.media_type.as_str())
        .insert_header((header::CONTENT_DISPOSITION, format!("inline; filename=\"{}\"", file.name)))
        .body(file.bytes)
}

/// Get an invoice as an e-invoice
///
/// The invoice as structured XML: XRechnung 3.0 in UBL 2.1 or CII D16B, or the CII of
/// Factur-X's EN 16931 profile. Its totals are the invoice's: BT-106 `subtotal`, BT-109
/// `subtotal`, BT-110 `tax`, BT-112 `total`, and BT-115 `amountDue` (payments, credit notes
/// and write-offs are BT-113). Data the format cannot do without is a 422 naming the
/// business term and the field to set. Needs `invoices:read`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id"), FormatQuery),
    responses(
        (status = 200, description = "The e-invoice", content_type = "application/xml", body = String,
            headers(("Content-Disposition" = String, description = "`inline; filename=\"INV-0001-xrechnung-ubl.xml\"`")),
            example = json!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\" …>…</Invoice>")),
        (status = 400, description = "`format` missing or not one of the formats", body = ErrorBody),
        (status = 404, description = "No such invoice in the key's team", body = ErrorBody),
        (status = 422, description = "The format needs data the invoice lacks, e.g. `buyerReference (BT-10) is required for XRechnung: set it on the client`", body = ErrorBody),
        KeyedErrors,
    )
)]
#[get("/{id}/e-invoice")]
pub(crate) async fn invoice_e_invoice(
    auth: Auth<InvoicesRead>,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    Ok(answer(invoice_xml(&state, &auth.principal, &path, FormatQuery::read(&req)?).await?))
}

/// Get a credit note as an e-invoice
///
/// The credit note as structured XML (a UBL `CreditNote`, or CII with type code 381) that
/// refers to its invoice (BT-25), in the formats and with the refusals of an invoice's
/// e-invoice. Needs `invoices:read`.
#[utoipa::path(
    tag = "Credit notes",
    params(("id" = Uuid, Path, description = "Credit note id"), FormatQuery),
    responses(
        (status = 200, description = "The e-invoice", content_type = "application/xml", body = String,
            headers(("Content-Disposition" = String, description = "`inline; filename=\"CN-0001-xrechnung-ubl.xml\"`")),
            example = json!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CreditNote xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2\" …>…</CreditNote>")),
        (status = 400, description = "`format` missing or not one of the formats", body = ErrorBody),
        (status = 404, description = "No such credit note in the key's team", body = ErrorBody),
        (status = 422, description = "The format needs data the credit note lacks", body = ErrorBody),
        KeyedErrors,
    )
)]
#[get("/{id}/e-invoice")]
pub(crate) async fn credit_note_e_invoice(
    auth: Auth<InvoicesRead>,
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id = path_id(&path, "credit note")?;
    let document = DocumentRef::CreditNote(id);
    Ok(answer(xml(&state, &auth.principal, document, FormatQuery::read(&req)?).await?))
}
