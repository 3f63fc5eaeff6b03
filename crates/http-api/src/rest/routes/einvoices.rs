//! E-invoices: `GET /v1/invoices/{id}/e-invoice` and `GET /v1/credit-notes/{id}/e-invoice`,
//! an invoice or credit note as XRechnung (UBL or CII) or Factur-X XML.

use accounts::Principal;
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use billing::einvoice::{Datum, EInvoice, LINE_AMOUNT_RULE, Refusal};
use billing::service::{self, EInvoiceError};
use einvoice::Format;
use kernel::FieldError;
use serde::Deserialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead};
use crate::rest::routes::{KeyedErrors, not_found, path_id};
use crate::rest::state::ApiState;

/// An e-invoice format, as the description shows it: [`Format`]'s names.
#[derive(Debug)]
pub(crate) struct EInvoiceFormat;

impl PartialSchema for EInvoiceFormat {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(Format::ALL.map(Format::name)))
            .description(Some(
                "`xrechnung-ubl` (XRechnung 3.0, UBL 2.1), `xrechnung-cii` (XRechnung 3.0, CII D16B) or \
                 `facturx` (Factur-X / ZUGFeRD, EN 16931 profile).",
            ))
            .into()
    }
}

impl ToSchema for EInvoiceFormat {}

/// Which e-invoice to make.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct FormatQuery {
    /// `xrechnung-ubl` (XRechnung 3.0, UBL 2.1), `xrechnung-cii` (XRechnung 3.0, CII D16B) or
    /// `facturx` (Factur-X / ZUGFeRD, EN 16931 profile, the XML a Factur-X PDF embeds).
    #[param(required = true, value_type = EInvoiceFormat)]
    format: Option<String>,
}

impl FormatQuery {
    fn read(req: &HttpRequest) -> Result<Self, ApiError> {
        Ok(web::Query::<Self>::from_query(req.query_string())
            .map_err(crate::conventions::body::query_refusal)?
            .into_inner())
    }

    fn format(self) -> Result<Format, FieldError> {
        let name = self.format.ok_or_else(|| FieldError::new("format", FORMATS))?;
        Format::parse(&name).ok_or_else(|| FieldError::new("format", FORMATS))
    }
}

/// The caller's team's invoice `id` (as a path writes it) as XML of the asked format, and
/// the format: what the endpoint and the `e_invoice` tool answer.
pub(crate) async fn invoice_xml(
    state: &ApiState,
    who: &Principal,
    id: &str,
    query: FormatQuery,
) -> Result<(Format, EInvoice), ApiError> {
    let id = path_id(id, "invoice")?;
    let format = query.format()?;
    let invoice = service::invoice_e_invoice(&*state.stores.billing, who.team_id, id, format.profile())
        .await
        .map_err(|error| refused(error, "invoice"))?;
    Ok((format, invoice))
}

const FORMATS: &str = "must be one of xrechnung-ubl, xrechnung-cii, facturx";

/// The field that fills a missing datum, in the API's words, and where to set it.
fn field_of(datum: Datum) -> (String, &'static str) {
    const CLIENT: &str = "set it on the client";
    let sender = |flag: &'static str| (flag, "set it on the sender address (`billable teams sender`)");
    let (field, advice) = match datum {
        Datum::ClientBuyerReference => ("buyerReference", CLIENT),
        Datum::ClientCity => ("city", CLIENT),
        Datum::ClientPostalCode => ("postalCode", CLIENT),
        Datum::ClientCountryCode => ("countryCode", CLIENT),
        Datum::ClientVatNumber => ("vatNumber", CLIENT),
        Datum::SenderCity => sender("city"),
        Datum::SenderPostalCode => sender("postalCode"),
        Datum::SenderCountryCode => sender("countryCode"),
        Datum::SenderVatNumber => sender("vatNumber"),
        Datum::SenderIban => sender("iban"),
        Datum::SenderContactName => sender("contactName"),
        Datum::SenderContactPhone => sender("contactPhone"),
        Datum::SenderContactEmail => sender("contactEmail"),
        Datum::LineDescription(line) => {
            return (format!("lineItems[{line}].description"), "give the line a description");
        }
        Datum::TaxPercentage => {
            ("taxPercentage", "a standard-rated e-invoice states its VAT rate, not a flat tax")
        }
    };
    (field.to_owned(), advice)
}

/// 422 naming the business term and our field; 404 for another team's document.
pub(crate) fn refused(error: EInvoiceError, what: &str) -> ApiError {
    match error {
        EInvoiceError::NotFound => not_found(what),
        EInvoiceError::Store(error) => error.into(),
        EInvoiceError::Refused(refusal) => {
            let message = match &refusal {
                Refusal::Missing { term, datum, profile } => {
                    let (field, advice) = field_of(*datum);
                    format!("{field} ({term}) is required for {}: {advice}", profile.name())
                }
                Refusal::MinorUnitTooFine(_) => refusal.to_string(),
                Refusal::LineAmountInexact { line, amount, product, slack, profile } => format!(
                    "lineItems[{line}].amount: {amount} is not quantity × unitPrice, {product}, within {slack}, \
                     which {} requires ({LINE_AMOUNT_RULE}): in a currency without that fraction, give a unit \
                     price whose product with the quantity is a whole amount of it",
                    profile.name()
                ),
            };
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
        }
    }
}

/// The XML, named after the document and its format.
fn answer(format: Format, invoice: &EInvoice) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/xml")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("inline; filename=\"{}-{}.xml\"", invoice.number, format.name()),
        ))
        .body(format.write(invoice))
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
    let (format, invoice) = invoice_xml(&state, &auth.principal, &path, FormatQuery::read(&req)?).await?;
    Ok(answer(format, &invoice))
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
    let format = FormatQuery::read(&req)?.format()?;
    let note =
        service::credit_note_e_invoice(&*state.stores.billing, auth.principal.team_id, id, format.profile())
            .await
            .map_err(|error| refused(error, "credit note"))?;
    Ok(answer(format, &note))
}
