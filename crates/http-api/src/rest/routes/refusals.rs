//! How the API words the domain's refusals that several routes meet: the books' rules, a
//! status that follows from others, what an e-invoice lacks, a PDF not made.

use actix_web::http::StatusCode;
use billing::einvoice::{Datum, LINE_AMOUNT_RULE, Refusal};
use billing::issue::{DocumentKind, FileError};
use billing::ledger::LedgerRule;
use billing::payment_qr::{AddressPart, QrFormat, QrRefusal};
use billing::{InvoiceStatus, RenderError};
use kernel::FieldError;

use crate::conventions::error::ApiError;

/// A rule of the books in the REST API's words: the field, the rule, the figure.
pub(crate) fn books_refusal(rule: &LedgerRule) -> ApiError {
    match rule {
        LedgerRule::ExceedsDue { due } => ApiError::conflict(format!("amount: exceeds amountDue {due}")),
        LedgerRule::ExceedsPaid { paid } => ApiError::conflict(format!("amount: exceeds amountPaid {paid}")),
        LedgerRule::CreditShort { available } => ApiError::conflict(format!(
            "amount: exceeds the client's creditBalance in the invoice's currency, {available}"
        )),
        LedgerRule::NothingDue => {
            ApiError::conflict("status: nothing is due on this invoice (amountDue is 0)")
        }
        LedgerRule::CreditExceedsTotal { credited, total } => ApiError::conflict(format!(
            "lineItems: the invoice's credit notes would come to {credited}, more than its total {total}"
        )),
        LedgerRule::TotalBelowRecorded { total, recorded } => ApiError::conflict(format!(
            "total: {total} would be below what was paid, credited and written off ({recorded})"
        )),
        LedgerRule::VoidBreaks(rule) => {
            let later = books_refusal(rule);
            ApiError::conflict(format!(
                "id: voiding it would leave a later entry unbacked ({})",
                later.message()
            ))
        }
        LedgerRule::AlreadyVoided => ApiError::conflict("id: the entry is voided already"),
        LedgerRule::MoneyRecorded => ApiError::conflict(
            "status: PENDING cannot be set once money was recorded; void the payments or refund them instead",
        ),
        LedgerRule::FinerThanCurrency { currency, places } => {
            FieldError::new("amount", format!("must have at most {places} decimal places in {currency}"))
                .into()
        }
    }
}

/// Whether `status`, given on create or update, is one that follows from the books.
pub(crate) fn status_refusal(status: InvoiceStatus) -> ApiError {
    match status {
        InvoiceStatus::PaidPartial => FieldError::new(
            "status",
            "PAID_PARTIAL follows from payments and cannot be set; record a payment (POST /v1/invoices/{id}/payments)",
        )
        .into(),
        _ => FieldError::new("status", "OVERDUE follows from dueDate and cannot be set; set dueDate instead").into(),
    }
}

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
        Datum::ClientPeppolId => ("peppolId", CLIENT),
        Datum::SenderPeppolId => sender("peppolId"),
        Datum::BuyerReferenceOrPurchaseOrder => {
            ("buyerReference", "set it on the client, or give the invoice a purchaseOrder")
        }
        Datum::LineDescription(line) => {
            return (format!("lineItems[{line}].description"), "give the line a description");
        }
        Datum::TaxPercentage => {
            ("taxPercentage", "a standard-rated e-invoice states its VAT rate, not a flat tax")
        }
    };
    (field.to_owned(), advice)
}

/// 422 naming the business term and our field.
pub(crate) fn einvoice_refusal(refusal: &Refusal) -> ApiError {
    let message = match refusal {
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

/// How the API names a kind of document in its messages.
pub(crate) fn noun(kind: DocumentKind) -> &'static str {
    match kind {
        DocumentKind::Invoice => "invoice",
        DocumentKind::CreditNote => "credit note",
    }
}

/// A file not made: 422 naming what the e-invoice lacks, or the renderer's 500.
pub(crate) fn file_refused(error: FileError) -> ApiError {
    match error {
        FileError::Refused(refusal) => einvoice_refusal(&refusal),
        FileError::Render(error) => render_failed(&error),
        FileError::Qr(refusal) => qr_refusal(&refusal),
    }
}

/// 422 naming what a payment QR code needs and the invoice lacks.
pub(crate) fn qr_refusal(refusal: &QrRefusal) -> ApiError {
    let sender_field = |part: AddressPart| match part {
        AddressPart::Name => "sender.name",
        AddressPart::Street => "sender.line1",
        AddressPart::PostalCode => "sender.postalCode",
        AddressPart::City => "sender.city",
        AddressPart::Country => "sender.countryCode",
    };
    let message = match refusal {
        QrRefusal::NothingDue => {
            "nothing is due on this invoice: a paid invoice carries no payment QR code".to_owned()
        }
        QrRefusal::Currency { format, currency } => {
            let takes = match format {
                QrFormat::Epc => "EUR",
                QrFormat::Swiss => "CHF or EUR",
            };
            format!("currency: {} takes {takes}; the invoice is in {currency}", format.name())
        }
        QrRefusal::NoAccount { format } => {
            format!("sender.iban is required for {}: set it with PATCH /v1/team", format.name())
        }
        QrRefusal::AccountCountry { format: QrFormat::Swiss, country } => format!(
            "sender.iban must be a Swiss or Liechtenstein account (CH, LI) for a Swiss QR-bill; it is a {country} account"
        ),
        QrRefusal::AccountCountry { format: QrFormat::Epc, country } => format!(
            "sender.iban must be an account in a SEPA country for an EPC QR code; it is a {country} account"
        ),
        QrRefusal::SenderMissing { format, part } => {
            format!("{} is required for {}: set it with PATCH /v1/team", sender_field(*part), format.name())
        }
        QrRefusal::SenderTooLong { format, part, max } => {
            format!("{} is longer than the {max} characters {} takes", sender_field(*part), format.name())
        }
        QrRefusal::SenderUnwritable { format, part } => format!(
            "{} holds characters {} cannot carry: it takes Latin letters only",
            sender_field(*part),
            format.name()
        ),
    };
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
}

/// The 500 of a renderer's failure, which says only so; its cause is logged.
pub(crate) fn render_failed(error: &RenderError) -> ApiError {
    tracing::error!(error = format!("{:#}", error.0), "PDF rendering failed");
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "failed to generate PDF")
}
