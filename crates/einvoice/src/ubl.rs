//! OASIS UBL 2.1: an `Invoice`, or a `CreditNote` for type 381, in the element order the
//! schema fixes.

use billing::VatCategory;
use billing::einvoice::{
    Allowance, Contact, DISCOUNT_REASON, DocumentKind, EInvoice, Line, Party, PayeeAccount,
};
use rust_decimal::Decimal;

use crate::xml::{Element, element, text};

const INVOICE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2";
const CREDIT_NOTE_NS: &str = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2";
const CAC: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2";
const CBC: &str = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2";

/// `invoice` as a UBL 2.1 document.
pub(crate) fn write(invoice: &EInvoice) -> String {
    let credit = invoice.kind == DocumentKind::CreditNote;
    let (root, namespace) = if credit { ("CreditNote", CREDIT_NOTE_NS) } else { ("Invoice", INVOICE_NS) };
    let money = |name: &'static str, amount: Decimal| amount_element(name, amount, invoice.currency);
    let root = element(root)
        .attribute("xmlns", namespace)
        .attribute("xmlns:cac", CAC)
        .attribute("xmlns:cbc", CBC)
        .children([
            Some(text("cbc:CustomizationID", invoice.profile.specification())),
            invoice.profile.business_process().map(|process| text("cbc:ProfileID", process)),
            Some(text("cbc:ID", &invoice.number)),
            Some(date("cbc:IssueDate", invoice.issue_date)),
            invoice.due_date.filter(|_| !credit).map(|due| date("cbc:DueDate", due)),
            Some(text(
                if credit { "cbc:CreditNoteTypeCode" } else { "cbc:InvoiceTypeCode" },
                invoice.kind.type_code(),
            )),
            invoice.note.as_ref().map(|note| text("cbc:Note", note)),
            Some(text("cbc:DocumentCurrencyCode", invoice.currency)),
            invoice.tax_currency.map(|(currency, _)| text("cbc:TaxCurrencyCode", currency)),
            invoice.buyer_reference.as_ref().map(|reference| text("cbc:BuyerReference", reference)),
            invoice.invoice_period.map(|(start, end)| {
                element("cac:InvoicePeriod")
                    .child(date("cbc:StartDate", start))
                    .child(date("cbc:EndDate", end))
            }),
            invoice
                .purchase_order
                .as_ref()
                .map(|order| element("cac:OrderReference").child(text("cbc:ID", order))),
            invoice.preceding_invoice.as_ref().map(|(number, issued)| {
                element("cac:BillingReference").child(
                    element("cac:InvoiceDocumentReference")
                        .child(text("cbc:ID", number))
                        .child(date("cbc:IssueDate", *issued)),
                )
            }),
            Some(
                element("cac:AccountingSupplierParty")
                    .child(party(&invoice.seller, invoice.seller_contact.as_ref())),
            ),
            Some(element("cac:AccountingCustomerParty").child(party(&invoice.buyer, None))),
            invoice.delivery.as_ref().map(|delivery| {
                element("cac:Delivery").child(date("cbc:ActualDeliveryDate", delivery.date)).children([
                    delivery.to.as_ref().map(|to| {
                        element("cac:DeliveryLocation").child(element("cac:Address").children([
                            to.city.as_ref().map(|city| text("cbc:CityName", city)),
                            to.postal_code.as_ref().map(|code| text("cbc:PostalZone", code)),
                            Some(country_element(to.country)),
                        ]))
                    }),
                ])
            }),
            invoice
                .payee_account
                .as_ref()
                .map(|account| payment_means(account, invoice.payment_reference.as_deref())),
            invoice
                .payment_terms
                .as_ref()
                .map(|terms| element("cac:PaymentTerms").child(text("cbc:Note", terms))),
        ])
        .children(invoice.allowances.iter().map(|allowance| {
            Some(allowance_charge(&allowance.allowance, invoice.currency).child(tax_category(
                "cac:TaxCategory",
                allowance.category,
                allowance.rate,
                None,
            )))
        }))
        .children([
            Some(tax_total(invoice)),
            invoice.tax_currency.map(|(currency, tax)| {
                element("cac:TaxTotal").child(amount_element("cbc:TaxAmount", tax, currency))
            }),
            Some(
                element("cac:LegalMonetaryTotal").children([
                    Some(money("cbc:LineExtensionAmount", invoice.totals.lines)),
                    Some(money("cbc:TaxExclusiveAmount", invoice.totals.tax_exclusive)),
                    Some(money("cbc:TaxInclusiveAmount", invoice.totals.tax_inclusive)),
                    invoice.totals.allowances.map(|total| money("cbc:AllowanceTotalAmount", total)),
                    (!invoice.totals.prepaid.is_zero())
                        .then(|| money("cbc:PrepaidAmount", invoice.totals.prepaid)),
                    Some(money("cbc:PayableAmount", invoice.totals.payable)),
                ]),
            ),
        ]);
    invoice
        .lines
        .iter()
        .fold(root, |root, line| root.child(invoice_line(invoice, line, credit)))
        .into_document()
}

fn amount_element(name: &'static str, amount: Decimal, currency: &str) -> Element {
    text(name, amount.to_string()).attribute("currencyID", currency)
}

fn date(name: &'static str, day: chrono::NaiveDate) -> Element {
    text(name, day.format("%Y-%m-%d").to_string())
}

fn country_element(country: &str) -> Element {
    element("cac:Country").child(text("cbc:IdentificationCode", country))
}

fn party(party: &Party, contact: Option<&Contact>) -> Element {
    let address = element("cac:PostalAddress").children([
        party.street.as_ref().map(|street| text("cbc:StreetName", street)),
        party.additional_street.as_ref().map(|street| text("cbc:AdditionalStreetName", street)),
        party.city.as_ref().map(|city| text("cbc:CityName", city)),
        party.postal_code.as_ref().map(|code| text("cbc:PostalZone", code)),
        party.address_line.as_ref().map(|line| element("cac:AddressLine").child(text("cbc:Line", line))),
        Some(country_element(party.country)),
    ]);
    element("cac:Party").children([
        party
            .electronic_address
            .as_ref()
            .map(|address| text("cbc:EndpointID", &address.id).attribute("schemeID", address.scheme)),
        Some(address),
        party.vat_id.as_ref().map(|id| {
            element("cac:PartyTaxScheme")
                .child(text("cbc:CompanyID", id))
                .child(element("cac:TaxScheme").child(text("cbc:ID", "VAT")))
        }),
        Some(element("cac:PartyLegalEntity").child(text("cbc:RegistrationName", &party.name))),
        contact.map(|contact| {
            element("cac:Contact").children([
                contact.name.as_ref().map(|name| text("cbc:Name", name)),
                contact.phone.as_ref().map(|phone| text("cbc:Telephone", phone)),
                contact.email.as_ref().map(|email| text("cbc:ElectronicMail", email)),
            ])
        }),
    ])
}

/// A SEPA credit transfer to `account` (BG-16), with the payment reference (BT-83).
fn payment_means(account: &PayeeAccount, reference: Option<&str>) -> Element {
    element("cac:PaymentMeans")
        .child(text("cbc:PaymentMeansCode", "58"))
        .children([reference.map(|reference| text("cbc:PaymentID", reference))])
        .child(
            element("cac:PayeeFinancialAccount").children([
                Some(text("cbc:ID", &account.iban)),
                account
                    .bic
                    .as_ref()
                    .map(|bic| element("cac:FinancialInstitutionBranch").child(text("cbc:ID", bic))),
            ]),
        )
}

/// A VAT category (BG-23's BT-118 to BT-121, a line's BT-151 and BT-152): the reason only
/// in the breakdown.
fn tax_category(
    name: &'static str,
    category: VatCategory,
    rate: Option<Decimal>,
    reason: Option<&String>,
) -> Element {
    element(name).children([
        Some(text("cbc:ID", category.as_str())),
        rate.map(|rate| text("cbc:Percent", rate.to_string())),
        reason.map(|reason| text("cbc:TaxExemptionReason", reason)),
        Some(element("cac:TaxScheme").child(text("cbc:ID", "VAT"))),
    ])
}

/// A discount (BG-20, BG-27), its VAT category left to the caller (a document's has one).
fn allowance_charge(allowance: &Allowance, currency: &str) -> Element {
    let (code, reason) = DISCOUNT_REASON;
    let (base, percentage) = allowance.base_and_percentage.unzip();
    element("cac:AllowanceCharge").children([
        Some(text("cbc:ChargeIndicator", "false")),
        Some(text("cbc:AllowanceChargeReasonCode", code)),
        Some(text("cbc:AllowanceChargeReason", reason)),
        percentage.map(|percentage| text("cbc:MultiplierFactorNumeric", percentage.to_string())),
        Some(amount_element("cbc:Amount", allowance.amount, currency)),
        base.map(|base| amount_element("cbc:BaseAmount", base, currency)),
    ])
}

/// The tax total and a subtotal per group of the breakdown.
fn tax_total(invoice: &EInvoice) -> Element {
    invoice.vat.iter().fold(
        element("cac:TaxTotal").child(amount_element("cbc:TaxAmount", invoice.totals.tax, invoice.currency)),
        |total, group| {
            total.child(
                element("cac:TaxSubtotal")
                    .child(amount_element("cbc:TaxableAmount", group.taxable, invoice.currency))
                    .child(amount_element("cbc:TaxAmount", group.tax, invoice.currency))
                    .child(tax_category(
                        "cac:TaxCategory",
                        group.category,
                        group.rate,
                        group.exemption_reason.as_ref(),
                    )),
            )
        },
    )
}

fn invoice_line(invoice: &EInvoice, line: &Line, credit: bool) -> Element {
    let (name, quantity) = if credit {
        ("cac:CreditNoteLine", "cbc:CreditedQuantity")
    } else {
        ("cac:InvoiceLine", "cbc:InvoicedQuantity")
    };
    element(name)
        .child(text("cbc:ID", line.id.to_string()))
        .child(text(quantity, line.quantity.to_string()).attribute("unitCode", &line.unit_code))
        .child(amount_element("cbc:LineExtensionAmount", line.amount, invoice.currency))
        .children([line.allowance.as_ref().map(|allowance| allowance_charge(allowance, invoice.currency))])
        .child(element("cac:Item").child(text("cbc:Name", &line.name)).child(tax_category(
            "cac:ClassifiedTaxCategory",
            line.category,
            line.rate,
            None,
        )))
        .child(element("cac:Price").child(amount_element(
            "cbc:PriceAmount",
            line.net_price,
            invoice.currency,
        )))
}
