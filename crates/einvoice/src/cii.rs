//! UN/CEFACT Cross Industry Invoice D16B, as XRechnung and Factur-X carry it, in the
//! element order the schema fixes. A credit note is the same document with type code 381.

use billing::einvoice::{
    Allowance, Contact, DISCOUNT_REASON, EInvoice, Line, Party, PayeeAccount, VatBreakdown,
};
use rust_decimal::Decimal;

use crate::xml::{Element, element, text};

const RSM: &str = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100";
const RAM: &str = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100";
const QDT: &str = "urn:un:unece:uncefact:data:standard:QualifiedDataType:100";
const UDT: &str = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100";

/// `invoice` as a CII D16B document.
pub(crate) fn write(invoice: &EInvoice) -> String {
    let context = element("rsm:ExchangedDocumentContext").children([
        invoice.profile.business_process().map(|process| {
            element("ram:BusinessProcessSpecifiedDocumentContextParameter").child(text("ram:ID", process))
        }),
        Some(
            element("ram:GuidelineSpecifiedDocumentContextParameter")
                .child(text("ram:ID", invoice.profile.specification())),
        ),
    ]);
    let document = element("rsm:ExchangedDocument").children([
        Some(text("ram:ID", &invoice.number)),
        Some(text("ram:TypeCode", invoice.kind.type_code())),
        Some(date_time("ram:IssueDateTime", "udt:DateTimeString", invoice.issue_date)),
        invoice.note.as_ref().map(|note| element("ram:IncludedNote").child(text("ram:Content", note))),
    ]);
    let transaction = invoice
        .lines
        .iter()
        .fold(element("rsm:SupplyChainTradeTransaction"), |transaction, line| {
            transaction.child(line_item(line))
        })
        .child(agreement(invoice))
        .child(delivery(invoice))
        .child(settlement(invoice));
    element("rsm:CrossIndustryInvoice")
        .attribute("xmlns:rsm", RSM)
        .attribute("xmlns:ram", RAM)
        .attribute("xmlns:qdt", QDT)
        .attribute("xmlns:udt", UDT)
        .child(context)
        .child(document)
        .child(transaction)
        .into_document()
}

fn amount(name: &'static str, value: Decimal) -> Element {
    text(name, value.to_string())
}

/// A date as CII writes it: `YYYYMMDD`, format 102.
fn date_time(name: &'static str, inner: &'static str, day: chrono::NaiveDate) -> Element {
    element(name).child(text(inner, day.format("%Y%m%d").to_string()).attribute("format", "102"))
}

/// A group of the breakdown (BG-23) in the header.
fn header_tax(group: &VatBreakdown) -> Element {
    element("ram:ApplicableTradeTax").children([
        Some(amount("ram:CalculatedAmount", group.tax)),
        Some(text("ram:TypeCode", "VAT")),
        group.exemption_reason.as_ref().map(|reason| text("ram:ExemptionReason", reason)),
        Some(amount("ram:BasisAmount", group.taxable)),
        Some(text("ram:CategoryCode", group.category.as_str())),
        group.rate.map(|rate| text("ram:RateApplicablePercent", rate.to_string())),
    ])
}

/// A discount (BG-20, BG-27); a document's names its VAT category after it.
fn allowance_charge(allowance: &Allowance) -> Element {
    let (code, reason) = DISCOUNT_REASON;
    let (base, percentage) = allowance.base_and_percentage.unzip();
    element("ram:SpecifiedTradeAllowanceCharge").children([
        Some(element("ram:ChargeIndicator").child(text("udt:Indicator", "false"))),
        percentage.map(|percentage| text("ram:CalculationPercent", percentage.to_string())),
        base.map(|base| amount("ram:BasisAmount", base)),
        Some(amount("ram:ActualAmount", allowance.amount)),
        Some(text("ram:ReasonCode", code)),
        Some(text("ram:Reason", reason)),
    ])
}

/// A line's VAT (BG-30).
fn line_tax(line: &Line) -> Element {
    element("ram:ApplicableTradeTax").children([
        Some(text("ram:TypeCode", "VAT")),
        Some(text("ram:CategoryCode", line.category.as_str())),
        line.rate.map(|rate| text("ram:RateApplicablePercent", rate.to_string())),
    ])
}

fn line_item(line: &Line) -> Element {
    element("ram:IncludedSupplyChainTradeLineItem")
        .child(element("ram:AssociatedDocumentLineDocument").child(text("ram:LineID", line.id.to_string())))
        .child(element("ram:SpecifiedTradeProduct").child(text("ram:Name", &line.name)))
        .child(element("ram:SpecifiedLineTradeAgreement").child(
            element("ram:NetPriceProductTradePrice").child(amount("ram:ChargeAmount", line.net_price)),
        ))
        .child(element("ram:SpecifiedLineTradeDelivery").child(
            text("ram:BilledQuantity", line.quantity.to_string()).attribute("unitCode", &line.unit_code),
        ))
        .child(
            element("ram:SpecifiedLineTradeSettlement")
                .child(line_tax(line))
                .children([line.allowance.as_ref().map(allowance_charge)])
                .child(
                    element("ram:SpecifiedTradeSettlementLineMonetarySummation")
                        .child(amount("ram:LineTotalAmount", line.amount)),
                ),
        )
}

fn trade_party(name: &'static str, party: &Party, contact: Option<&Contact>) -> Element {
    let address = element("ram:PostalTradeAddress").children([
        party.postal_code.as_ref().map(|code| text("ram:PostcodeCode", code)),
        party.street.as_ref().map(|street| text("ram:LineOne", street)),
        party.additional_street.as_ref().map(|street| text("ram:LineTwo", street)),
        party.address_line.as_ref().map(|line| text("ram:LineThree", line)),
        party.city.as_ref().map(|city| text("ram:CityName", city)),
        Some(text("ram:CountryID", party.country)),
    ]);
    element(name).children([
        Some(text("ram:Name", &party.name)),
        contact.map(|contact| {
            element("ram:DefinedTradeContact").children([
                contact.name.as_ref().map(|name| text("ram:PersonName", name)),
                contact.phone.as_ref().map(|phone| {
                    element("ram:TelephoneUniversalCommunication").child(text("ram:CompleteNumber", phone))
                }),
                contact.email.as_ref().map(|email| {
                    element("ram:EmailURIUniversalCommunication").child(text("ram:URIID", email))
                }),
            ])
        }),
        Some(address),
        party.electronic_address.as_ref().map(|address| {
            element("ram:URIUniversalCommunication")
                .child(text("ram:URIID", &address.id).attribute("schemeID", address.scheme))
        }),
        party.vat_id.as_ref().map(|id| {
            element("ram:SpecifiedTaxRegistration").child(text("ram:ID", id).attribute("schemeID", "VA"))
        }),
    ])
}

fn agreement(invoice: &EInvoice) -> Element {
    element("ram:ApplicableHeaderTradeAgreement").children([
        invoice.buyer_reference.as_ref().map(|reference| text("ram:BuyerReference", reference)),
        Some(trade_party("ram:SellerTradeParty", &invoice.seller, invoice.seller_contact.as_ref())),
        Some(trade_party("ram:BuyerTradeParty", &invoice.buyer, None)),
        invoice.purchase_order.as_ref().map(|order| {
            element("ram:BuyerOrderReferencedDocument").child(text("ram:IssuerAssignedID", order))
        }),
    ])
}

fn delivery(invoice: &EInvoice) -> Element {
    let delivery = element("ram:ApplicableHeaderTradeDelivery");
    match &invoice.delivery {
        None => delivery,
        Some(delivered) => delivery
            .children([delivered.to.as_ref().map(|to| {
                element("ram:ShipToTradeParty").child(element("ram:PostalTradeAddress").children([
                    to.postal_code.as_ref().map(|code| text("ram:PostcodeCode", code)),
                    to.city.as_ref().map(|city| text("ram:CityName", city)),
                    Some(text("ram:CountryID", to.country)),
                ]))
            })])
            .child(element("ram:ActualDeliverySupplyChainEvent").child(date_time(
                "ram:OccurrenceDateTime",
                "udt:DateTimeString",
                delivered.date,
            ))),
    }
}

fn payment_means(account: &PayeeAccount) -> Element {
    element("ram:SpecifiedTradeSettlementPaymentMeans").children([
        Some(text("ram:TypeCode", "58")),
        Some(element("ram:PayeePartyCreditorFinancialAccount").child(text("ram:IBANID", &account.iban))),
        account.bic.as_ref().map(|bic| {
            element("ram:PayeeSpecifiedCreditorFinancialInstitution").child(text("ram:BICID", bic))
        }),
    ])
}

fn settlement(invoice: &EInvoice) -> Element {
    let totals = &invoice.totals;
    let terms = (invoice.payment_terms.is_some() || invoice.due_date.is_some()).then(|| {
        element("ram:SpecifiedTradePaymentTerms").children([
            invoice.payment_terms.as_ref().map(|terms| text("ram:Description", terms)),
            invoice.due_date.map(|due| date_time("ram:DueDateDateTime", "udt:DateTimeString", due)),
        ])
    });
    let settlement = element("ram:ApplicableHeaderTradeSettlement").children([
        invoice.payment_reference.as_ref().map(|reference| text("ram:PaymentReference", reference)),
        invoice.tax_currency.map(|(currency, _)| text("ram:TaxCurrencyCode", currency)),
        Some(text("ram:InvoiceCurrencyCode", invoice.currency)),
        invoice.payee_account.as_ref().map(payment_means),
    ]);
    let period = invoice.invoice_period.map(|(start, end)| {
        element("ram:BillingSpecifiedPeriod")
            .child(date_time("ram:StartDateTime", "udt:DateTimeString", start))
            .child(date_time("ram:EndDateTime", "udt:DateTimeString", end))
    });
    let allowances = invoice.allowances.iter().map(|allowance| {
        Some(allowance_charge(&allowance.allowance).child(element("ram:CategoryTradeTax").children([
            Some(text("ram:TypeCode", "VAT")),
            Some(text("ram:CategoryCode", allowance.category.as_str())),
            allowance.rate.map(|rate| text("ram:RateApplicablePercent", rate.to_string())),
        ])))
    });
    invoice
        .vat
        .iter()
        .fold(settlement, |settlement, group| settlement.child(header_tax(group)))
        .children([period])
        .children(allowances)
        .children([
            terms,
            Some(element("ram:SpecifiedTradeSettlementHeaderMonetarySummation").children([
                Some(amount("ram:LineTotalAmount", totals.lines)),
                totals.allowances.map(|total| amount("ram:AllowanceTotalAmount", total)),
                Some(amount("ram:TaxBasisTotalAmount", totals.tax_exclusive)),
                Some(amount("ram:TaxTotalAmount", totals.tax).attribute("currencyID", invoice.currency)),
                invoice.tax_currency.map(|(currency, tax)| {
                    amount("ram:TaxTotalAmount", tax).attribute("currencyID", currency)
                }),
                Some(amount("ram:GrandTotalAmount", totals.tax_inclusive)),
                (!totals.prepaid.is_zero()).then(|| amount("ram:TotalPrepaidAmount", totals.prepaid)),
                Some(amount("ram:DuePayableAmount", totals.payable)),
            ])),
            invoice.preceding_invoice.as_ref().map(|(number, issued)| {
                element("ram:InvoiceReferencedDocument")
                    .child(text("ram:IssuerAssignedID", number))
                    .child(date_time("ram:FormattedIssueDateTime", "qdt:DateTimeString", *issued))
            }),
        ])
}
