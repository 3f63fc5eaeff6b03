//! What an invoice PDF shows, and the port that renders it.
//!
//! [`InvoiceDocument`] is the invoice already put into words: dates as dates, money
//! formatted for its currency, addresses as lines. Renderers only lay it out, so the
//! built-in renderer and a renderer service (which receives it as JSON) print the same.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use locale::{Language, Term};

use crate::money::{format_money, format_price};
use crate::sender::{Logo, LogoFormat};
use crate::{Client, Invoice, InvoiceStatus, SenderAddress};

/// A sender or recipient as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Party {
    pub name: String,
    /// Address lines and postal code, empty ones left out.
    pub address: Vec<String>,
    pub email: Option<String>,
    pub vat_number: Option<String>,
}

/// One row of the line-item table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentLine {
    /// With its discount, if any, on a line of its own (`Discount (10%): −2.00 EUR`).
    pub description: String,
    pub quantity: String,
    pub unit_price: String,
    /// After the line's discount: what the subtotal sums.
    pub amount: String,
    /// The line's VAT rate (`7%`), printed in a column of its own where the lines are taxed
    /// at more than one rate. Left out of the JSON when absent, so a renderer service of an
    /// earlier release reads documents of one rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vat_rate: Option<String>,
}

/// A row of the VAT breakdown table: one VAT group of the document (EN 16931 BG-23).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VatRow {
    /// `7%`, or `0% reverse charge` for a category other than the standard rate.
    pub rate: String,
    pub taxable_amount: String,
    pub tax: String,
}

/// A figure printed under the total: what was paid, credited or written off, and what is
/// due.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettledLine {
    pub label: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvoiceDocument {
    /// What the document is, printed as its title: `Credit note`; an invoice when left out
    /// (of the JSON too, so a renderer service of an earlier release reads invoices).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A quote: its date and its client are labelled as a quote's, not an invoice's. Left
    /// out of the JSON when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quote: bool,
    /// The serial of the invoice this document corrects (a credit note's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrects: Option<String>,
    pub serial: String,
    /// The status reported when the document was made (overdue included), in its
    /// language: `Open`, `Paid`, `Overdue`.
    pub status: String,
    /// Whether to print the PAID mark.
    pub paid: bool,
    /// `YYYY-MM-DD`, UTC.
    pub issue_date: String,
    pub due_date: Option<String>,
    /// What the invoice states of its supply, worded, printed under the dates: the service
    /// date or period (or that the service date is the issue date), the purchase order, the
    /// client's payment terms.
    /// Left out of the JSON when empty, as `settlement` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supply: Vec<SettledLine>,
    pub description: Option<String>,
    pub sender: Party,
    pub client: Party,
    pub lines: Vec<DocumentLine>,
    /// Σ the lines' amounts after their discounts.
    pub subtotal: String,
    /// Printed between the subtotal and the tax: the document's own discount and the
    /// taxable amount it leaves. Left out of the JSON when empty, as `settlement` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discounts: Vec<SettledLine>,
    /// `Tax (19%)`; `Tax` for a flat amount or a document of several rates.
    pub tax_label: String,
    pub tax: String,
    /// The VAT groups, where the lines are taxed at more than one rate or category: a table
    /// under the totals (rate, taxable amount, VAT), whose one tax row is their sum. Left
    /// out of the JSON when empty, as `settlement` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vat_breakdown: Vec<VatRow>,
    pub total: String,
    /// Printed under the total whenever what is due differs from it: what was paid,
    /// credited and written off, then the amount due (last). Left out of the JSON when
    /// empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settlement: Vec<SettledLine>,
    /// How to pay the sender (bank, IBAN, BIC, terms), one item per line; printed under
    /// the totals. Left out of the JSON when the sender has none, so a renderer service of
    /// an earlier release reads the documents of senders without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_details: Option<String>,
    /// The sender's logo, printed at the top of the first page. Left out of the JSON when
    /// the sender has none, as `payment_details` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<DocumentLogo>,
    /// The document's Factur-X XML (EN 16931 profile): when given, the PDF is a Factur-X
    /// PDF/A-3b that embeds it as `factur-x.xml`. Left out of the JSON when absent, as
    /// `logo` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facturx_xml: Option<String>,
    /// The language of its labels (`de`), which the renderer prints its own labels in;
    /// English when left out (of the JSON too, so a renderer service of an earlier release
    /// reads English documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The payment QR code printed on it (an EPC code beside the payment details, or the
    /// Swiss QR-bill at the foot of a page). Left out of the JSON when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_qr: Option<DocumentQr>,
}

/// A payment QR code as a document carries it: what the code encodes, and the words
/// printed with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentQr {
    /// `epc` or `swiss`.
    pub format: String,
    /// The bytes the code encodes, base64 (standard alphabet, padded): an EPC payload may
    /// be ISO 8859-1.
    pub payload: String,
    /// Printed under an EPC code: what to do with it.
    pub caption: String,
    /// The Swiss QR-bill's receipt and payment part, worded; none for an EPC code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slip: Option<SwissSlipText>,
}

impl DocumentQr {
    /// The bytes the code encodes; `None` when `payload` is not base64.
    pub fn decoded(&self) -> Option<Vec<u8>> {
        BASE64.decode(&self.payload).ok()
    }
}

/// The Swiss QR-bill's receipt and payment part as printed (SIX IG 2.3, section 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwissSlipText {
    pub labels: SlipLabels,
    /// The account (the IBAN in groups of four), then the creditor's name and address.
    pub account: Vec<String>,
    /// The reference in groups (`21 00000 00003 …`, `RF18 5390 …`).
    pub reference: Option<String>,
    /// The unstructured message: the invoice's number.
    pub information: String,
    /// The debtor's name and address; empty for a box the payer writes them in.
    pub debtor: Vec<String>,
    pub currency: String,
    /// `1 949.75`, as SIX writes amounts; none for a box.
    pub amount: Option<String>,
}

/// The QR-bill's fixed headings, in the document's language (SIX's wording; English for a
/// language SIX has none in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlipLabels {
    pub receipt: String,
    pub payment_part: String,
    pub account_payable_to: String,
    pub reference: String,
    pub additional_information: String,
    pub payable_by: String,
    pub payable_by_name_address: String,
    pub currency: String,
    pub amount: String,
    pub acceptance_point: String,
    pub separate: String,
}

impl SlipLabels {
    fn of(words: Language) -> Self {
        Self {
            receipt: words.term(Term::QrReceipt),
            payment_part: words.term(Term::QrPaymentPart),
            account_payable_to: words.term(Term::QrAccountPayableTo),
            reference: words.term(Term::QrReference),
            additional_information: words.term(Term::QrAdditionalInformation),
            payable_by: words.term(Term::QrPayableBy),
            payable_by_name_address: words.term(Term::QrPayableByNameAddress),
            currency: words.term(Term::QrCurrency),
            amount: words.term(Term::QrAmount),
            acceptance_point: words.term(Term::QrAcceptancePoint),
            separate: words.term(Term::QrSeparateBeforePaying),
        }
    }
}

/// `1949.75` as the QR-bill prints it: `1 949.75`, a space between thousands.
fn slip_amount(amount: rust_decimal::Decimal) -> String {
    let fixed = format!("{amount:.2}");
    let (whole, cents) = fixed.split_once('.').unwrap_or((&fixed, "00"));
    let mut grouped = String::with_capacity(fixed.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    format!("{grouped}.{cents}")
}

/// An address on the QR-bill: the name, the street, the postal code and town (after the
/// country's code, abroad).
fn slip_address(address: &crate::payment_qr::QrAddress) -> Vec<String> {
    let town = if matches!(address.country.as_str(), "CH" | "LI") {
        format!("{} {}", address.postal_code, address.city)
    } else {
        format!("{}-{} {}", address.country, address.postal_code, address.city)
    };
    [address.name.clone(), address.street.clone(), town].into_iter().filter(|line| !line.is_empty()).collect()
}

impl DocumentQr {
    /// `qr` as `words` print it.
    pub fn of(
        words: Language,
        qr: &crate::payment_qr::PaymentQr,
        slip: Option<&crate::payment_qr::SwissSlip>,
    ) -> Self {
        let slip = slip.map(|slip| {
            let iban: Vec<String> = slip
                .iban
                .as_bytes()
                .chunks(4)
                .map(|chunk| String::from_utf8_lossy(chunk).into_owned())
                .collect();
            SwissSlipText {
                labels: SlipLabels::of(words),
                account: std::iter::once(iban.join(" ")).chain(slip_address(&slip.creditor)).collect(),
                reference: Some(slip.reference.printed()),
                information: slip.additional_information.clone(),
                debtor: slip.debtor.as_ref().map(slip_address).unwrap_or_default(),
                currency: slip.currency.as_str().to_owned(),
                amount: Some(slip_amount(slip.amount)),
            }
        });
        Self {
            format: qr.format.as_str().to_owned(),
            payload: BASE64.encode(&qr.payload),
            caption: words.term(Term::PageScanToPay),
            slip,
        }
    }
}

/// A logo as a document carries it: its format and its bytes in base64, so that the
/// document stays JSON for a renderer service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentLogo {
    pub format: LogoFormat,
    /// The image's bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl DocumentLogo {
    pub fn of(logo: &Logo) -> Self {
        Self { format: logo.format(), data: BASE64.encode(logo.bytes()) }
    }

    /// The image's bytes; `None` when `data` is not base64.
    pub fn decoded(&self) -> Option<Vec<u8>> {
        BASE64.decode(&self.data).ok()
    }
}

/// An invoice's supply as printed: its service time, or, as German practice has it, that
/// the service date is the issue date; then the purchase order and the client's payment
/// terms, if any.
fn supply_lines(
    words: Language,
    supply: &crate::Supply,
    terms: Option<crate::client::PaymentTerms>,
) -> Vec<SettledLine> {
    let line = |term: Term, value: String| SettledLine { label: words.term(term), value };
    let service = match supply.service {
        Some(crate::ServiceTime::Date(day)) => line(Term::ServiceDate, words.day(day)),
        Some(crate::ServiceTime::Period(period)) => line(
            Term::ServicePeriod,
            words.phrase(
                Term::DaySpan,
                &[("from", &words.day(period.from())), ("to", &words.day(period.to()))],
            ),
        ),
        None => line(Term::ServiceDate, words.term(Term::ServiceDateIsIssueDate)),
    };
    let order =
        supply.purchase_order.as_ref().map(|order| line(Term::PurchaseOrder, order.as_str().to_owned()));
    let terms = terms.map(|terms| {
        line(Term::PaymentTerms, words.phrase(Term::DaysToPay, &[("days", &terms.days().to_string())]))
    });
    std::iter::once(service).chain(order).chain(terms).collect()
}

fn non_empty(parts: impl IntoIterator<Item = String>) -> Vec<String> {
    parts.into_iter().filter(|part| !part.trim().is_empty()).collect()
}

fn optional(text: &str) -> Option<String> {
    (!text.trim().is_empty()).then(|| text.to_owned())
}

/// The settled figures of `balance` as printed: the deposits a final invoice deducts, each
/// settled figure that is not 0, then what is due; none while what is due is the whole
/// total.
fn settlement(
    words: Language,
    balance: &crate::Balance,
    deducted: rust_decimal::Decimal,
    currency: crate::money::Currency,
) -> Vec<SettledLine> {
    if balance.due() == balance.total && deducted.is_zero() {
        return Vec::new();
    }
    let line = |label: Term, value| SettledLine {
        label: words.term(label),
        value: format_money(words, value, currency),
    };
    let mut lines: Vec<SettledLine> = [
        (Term::DepositsDeducted, deducted),
        (Term::Paid, balance.paid),
        (Term::Credited, balance.credited),
        (Term::WrittenOff, balance.written_off),
    ]
    .into_iter()
    .filter(|(_, value)| !value.is_zero())
    .map(|(label, value)| line(label, value))
    .collect();
    lines.push(line(Term::AmountDue, balance.due()));
    lines
}

fn party(name: String, lines: [String; 5], email: Option<String>, vat_number: &str) -> Party {
    Party { name, address: non_empty(lines), email, vat_number: optional(vat_number) }
}

/// The last lines of an address: the postal code and city on one, then the country.
fn city_lines(postal_code: &str, city: &str, country: Option<crate::party::CountryCode>) -> [String; 2] {
    let town = format!("{} {}", postal_code.trim(), city.trim()).trim().to_owned();
    [town, country.map(crate::party::CountryCode::address_name).unwrap_or_default()]
}

fn sender_party(sender: &SenderAddress) -> Party {
    let s = &sender.details;
    let [town, country] = city_lines(s.postal_code.as_str(), s.city.as_str(), s.country_code);
    party(
        s.name.to_string(),
        [s.line1.to_string(), s.line2.to_string(), s.line3.to_string(), town, country],
        s.email.as_ref().map(|e| e.as_str().to_owned()),
        s.vat_number.as_str(),
    )
}

fn client_party(client: &Client) -> Party {
    let c = &client.details;
    let [town, country] = city_lines(c.postal_code.as_str(), c.city.as_str(), c.country_code);
    party(
        c.name.to_string(),
        [c.line1.to_string(), c.line2.to_string(), c.line3.to_string(), town, country],
        Some(c.email.as_str().to_owned()),
        c.vat_number.as_str(),
    )
}

/// What an invoice states for paying it, under its supply: the client's reference, the
/// exchange rate and the VAT in the team's currency (for an invoice in another), and the
/// payment reference.
fn payment_lines(words: Language, invoice: &Invoice, client: &Client) -> Vec<SettledLine> {
    let line = |term: Term, value: String| SettledLine { label: words.term(term), value };
    let reference = optional(client.details.buyer_reference.as_str()).map(|r| line(Term::BuyerReference, r));
    let exchange = invoice.exchange.rate.map(|rate| {
        let team = invoice.exchange.team_currency;
        let vat = invoice.exchange.in_team_currency(invoice.totals.tax).unwrap_or_default();
        [
            line(
                Term::ExchangeRate,
                words.phrase(
                    Term::ExchangeRateValue,
                    &[
                        ("from", invoice.currency.as_str()),
                        ("rate", &words.decimal(&rate.normalize().to_string())),
                        ("to", team.as_str()),
                    ],
                ),
            ),
            SettledLine {
                label: words.phrase(Term::VatInCurrency, &[("currency", team.as_str())]),
                value: format_money(words, vat, team),
            },
        ]
    });
    let payment = line(Term::PaymentReference, invoice.payment_reference.printed());
    reference.into_iter().chain(exchange.into_iter().flatten()).chain([payment]).collect()
}

/// A line's quantity with its unit, as people write it: `7 h`, `2 d`, `3` for pieces,
/// the UN/ECE code otherwise (`12 KGM`).
fn quantity(words: Language, item: &crate::LineItem) -> String {
    let number = words.decimal(&item.quantity.normalize().to_string());
    match item.unit_code.as_str() {
        "C62" => number,
        "HUR" => format!("{number} {}", words.term(Term::UnitHour)),
        "DAY" => format!("{number} {}", words.term(Term::UnitDay)),
        code => format!("{number} {code}"),
    }
}

/// An invoice's status as its reader's language says it.
fn status_word(words: Language, status: InvoiceStatus) -> String {
    words.term(match status {
        InvoiceStatus::Pending => Term::PageStatusOpen,
        InvoiceStatus::Paid => Term::PageStatusPaid,
        InvoiceStatus::PaidPartial => Term::PageStatusPartiallyPaid,
        InvoiceStatus::Overdue => Term::PageStatusOverdue,
        InvoiceStatus::Expired => Term::PageStatusVoid,
    })
}

/// What a document's figures print as: its lines, its subtotal, its discount rows, its tax
/// row's label and its VAT breakdown.
struct Figures {
    lines: Vec<DocumentLine>,
    subtotal: String,
    discounts: Vec<SettledLine>,
    tax_label: String,
    vat_breakdown: Vec<VatRow>,
}

impl Figures {
    fn of(
        words: Language,
        pricing: &crate::Pricing<'_>,
        totals: &crate::Totals,
        rule: crate::TaxRule,
    ) -> Self {
        let currency = pricing.currency;
        let money = |amount| format_money(words, amount, currency);
        let breakdown = pricing.breakdown().unwrap_or_default();
        let several_rates = breakdown.len() > 1;
        let percent = |rate: rust_decimal::Decimal| {
            words.phrase(Term::Percent, &[("rate", &words.decimal(&rate.normalize().to_string()))])
        };
        let discount_label = |percentage: Option<rust_decimal::Decimal>| match percentage {
            Some(rate) => {
                words.phrase(Term::DiscountRate, &[("rate", &words.decimal(&rate.normalize().to_string()))])
            }
            None => words.term(Term::Discount),
        };
        let lines = pricing
            .items
            .iter()
            .map(|item| {
                let mut description = item.description.to_string();
                if let Some(discount) = item.discount {
                    description.push('\n');
                    description.push_str(&words.phrase(
                        Term::Less,
                        &[
                            ("label", &discount_label(discount.percentage)),
                            ("amount", &money(discount.amount)),
                        ],
                    ));
                }
                DocumentLine {
                    description,
                    quantity: quantity(words, item),
                    unit_price: format_price(words, item.unit_price, currency),
                    amount: money(item.net_amount()),
                    vat_rate: several_rates.then(|| {
                        percent(item.vat.resolve(pricing.vat, pricing.rule.percentage()).percentage)
                    }),
                }
            })
            .collect();
        let document_discount: rust_decimal::Decimal = breakdown.iter().map(|group| group.discount).sum();
        let discounts = match pricing.discount {
            Some(discount) if !document_discount.is_zero() => {
                let percentage = match discount {
                    crate::Discount::Percentage(p) => Some(p),
                    crate::Discount::Amount(_) => None,
                };
                vec![
                    SettledLine {
                        label: discount_label(percentage),
                        value: format!("−{}", money(document_discount)),
                    },
                    SettledLine {
                        label: words.term(Term::TaxableAmount),
                        value: money(totals.taxable_amount()),
                    },
                ]
            }
            _ => Vec::new(),
        };
        let vat_breakdown = if several_rates {
            breakdown
                .iter()
                .map(|group| VatRow {
                    rate: rate_label(words, &group.rate),
                    taxable_amount: money(group.taxable_amount),
                    tax: money(group.tax_amount),
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            lines,
            subtotal: money(totals.taxable_amount() + document_discount),
            discounts,
            tax_label: if several_rates { words.term(Term::Tax) } else { tax_label(words, rule) },
            vat_breakdown,
        }
    }
}

/// A VAT group's rate as its row of the breakdown names it: `7%`, or with its category
/// where that is not the standard rate (`0% reverse charge`).
fn rate_label(words: Language, rate: &crate::VatRate) -> String {
    let percentage = words.decimal(&rate.percentage.normalize().to_string());
    let category = match rate.category {
        crate::VatCategory::Standard => {
            return words.phrase(Term::Percent, &[("rate", &percentage)]);
        }
        crate::VatCategory::ZeroRated => Term::CategoryZeroRated,
        crate::VatCategory::Exempt => Term::CategoryExempt,
        crate::VatCategory::ReverseCharge => Term::CategoryReverseCharge,
        crate::VatCategory::IntraCommunity => Term::CategoryIntraCommunity,
        crate::VatCategory::Export => Term::CategoryExport,
        crate::VatCategory::OutOfScope => Term::CategoryOutOfScope,
    };
    words.phrase(Term::RateOfCategory, &[("rate", &percentage), ("category", &words.term(category))])
}

fn tax_label(words: Language, rule: crate::TaxRule) -> String {
    let percentage = rule.percentage();
    if percentage.is_zero() {
        words.term(Term::Tax)
    } else {
        words.phrase(Term::TaxRate, &[("rate", &percentage.normalize().to_string())])
    }
}

/// Its language's code for the document, none for English (the default).
fn language_code(words: Language) -> Option<String> {
    (words != Language::default()).then(|| words.code().to_owned())
}

impl InvoiceDocument {
    /// The code of the language of its labels: `en` unless it says otherwise.
    pub fn language(&self) -> &str {
        self.language.as_deref().unwrap_or("en")
    }

    /// A credit note as printed in `words`: titled so, naming the invoice it corrects,
    /// from the invoice's sender to its client.
    pub fn credit_note(
        words: Language,
        note: &crate::credit::CreditNote,
        client: &Client,
        sender: &SenderAddress,
    ) -> Self {
        let currency = note.currency;
        let figures = Figures::of(words, &note.pricing(), &note.totals, note.tax_rule);
        Self {
            title: Some(words.term(Term::CreditNoteTitle)),
            quote: false,
            corrects: Some(note.invoice_number.to_string()),
            serial: note.number.to_string(),
            status: String::new(),
            paid: false,
            issue_date: words.day(note.issue_date.date_naive()),
            due_date: None,
            supply: Vec::new(),
            description: note.reason.as_ref().and_then(|r| optional(r.as_str())),
            sender: sender_party(sender),
            client: client_party(client),
            lines: figures.lines,
            subtotal: figures.subtotal,
            discounts: figures.discounts,
            tax_label: figures.tax_label,
            tax: format_money(words, note.totals.tax, currency),
            vat_breakdown: figures.vat_breakdown,
            total: format_money(words, note.totals.total, currency),
            settlement: Vec::new(),
            payment_details: None,
            logo: sender.details.logo.as_ref().map(DocumentLogo::of),
            facturx_xml: None,
            language: language_code(words),
            payment_qr: None,
        }
    }

    /// A quote as printed in `words`, its status as of `now`: titled so, with the date it
    /// was sent (or made), how long it is valid, and its terms; no payment details, as it
    /// asks for no payment.
    pub fn quote(
        words: Language,
        quote: &crate::quote::Quote,
        client: &Client,
        sender: &SenderAddress,
        now: DateTime<Utc>,
    ) -> Self {
        use crate::quote::QuoteStatus;
        let currency = quote.currency;
        let figures = Figures::of(words, &quote.pricing(), &quote.totals, quote.tax_rule);
        let status = words.term(match quote.status_at(now) {
            QuoteStatus::Draft => Term::QuoteStatusDraft,
            QuoteStatus::Sent => Term::QuoteStatusSent,
            QuoteStatus::Accepted => Term::QuoteStatusAccepted,
            QuoteStatus::Declined => Term::QuoteStatusDeclined,
            QuoteStatus::Expired => Term::QuoteStatusExpired,
            QuoteStatus::Converted => Term::QuoteStatusConverted,
        });
        let line = |label: Term, value: String| SettledLine { label: words.term(label), value };
        let supply = quote
            .valid_until
            .map(|until| line(Term::ValidUntil, words.day(until.date_naive())))
            .into_iter()
            .collect();
        Self {
            title: Some(words.term(Term::QuoteTitle)),
            quote: true,
            corrects: None,
            serial: quote.number.as_ref().map(ToString::to_string).unwrap_or_default(),
            status,
            paid: false,
            issue_date: words.day(quote.sent_at.unwrap_or(quote.created_at).date_naive()),
            due_date: None,
            supply,
            description: quote.description.as_ref().and_then(|d| optional(d.as_str())),
            sender: sender_party(sender),
            client: client_party(client),
            lines: figures.lines,
            subtotal: figures.subtotal,
            discounts: figures.discounts,
            tax_label: figures.tax_label,
            tax: format_money(words, quote.totals.tax, currency),
            vat_breakdown: figures.vat_breakdown,
            total: format_money(words, quote.totals.total, currency),
            settlement: Vec::new(),
            payment_details: quote.notes.as_ref().and_then(|notes| optional(notes.as_str())),
            logo: sender.details.logo.as_ref().map(DocumentLogo::of),
            facturx_xml: None,
            language: language_code(words),
            payment_qr: None,
        }
    }

    /// An invoice as printed in `words`, its status as of `now`.
    pub fn new(
        words: Language,
        invoice: &Invoice,
        client: &Client,
        sender: &SenderAddress,
        now: DateTime<Utc>,
    ) -> Self {
        let currency = invoice.currency;
        let status = invoice.status_at(now);
        let s = &sender.details;
        let figures = Figures::of(words, &invoice.pricing(), &invoice.totals, invoice.tax_rule);
        Self {
            title: None,
            quote: false,
            corrects: None,
            serial: invoice.number.to_string(),
            status: status_word(words, status),
            paid: status == InvoiceStatus::Paid,
            issue_date: words.day(invoice.issue_date.date_naive()),
            due_date: invoice.due_date.map(|due| words.day(due.date_naive())),
            supply: supply_lines(words, &invoice.supply, client.details.payment_terms)
                .into_iter()
                .chain(payment_lines(words, invoice, client))
                .collect(),
            description: invoice.description.as_ref().and_then(|d| optional(d.as_str())),
            sender: sender_party(sender),
            client: client_party(client),
            lines: figures.lines,
            subtotal: figures.subtotal,
            discounts: figures.discounts,
            tax_label: figures.tax_label,
            tax: format_money(words, invoice.totals.tax, currency),
            vat_breakdown: figures.vat_breakdown,
            total: format_money(words, invoice.totals.total, currency),
            settlement: settlement(words, &invoice.balance, invoice.deposits_deducted(), currency),
            payment_details: optional(s.payment_details.as_str()),
            logo: s.logo.as_ref().map(DocumentLogo::of),
            facturx_xml: None,
            language: language_code(words),
            payment_qr: None,
        }
    }
}

/// An invoice's page for its client, in words: the document as printed, and what the page
/// adds (what is due, how to pay, where to download it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvoicePage {
    /// The invoice put into words, its payment QR code included.
    pub document: InvoiceDocument,
    /// How the status reads to the eye: `open`, `partially-paid`, `paid`, `overdue`,
    /// `void`.
    pub state: &'static str,
    /// What is due now, as the client's language writes money.
    pub amount_due: String,
    /// Nothing is due.
    pub settled: bool,
    /// How to pay by transfer; none when nothing is due or the sender has no IBAN.
    pub bank: Option<BankDetails>,
    /// The PDF and the Factur-X PDF, relative to the server's address.
    pub pdf_url: String,
    pub facturx_url: String,
    /// Where the "Pay by card" button posts, when the team takes cards and something is due.
    pub pay_by_card: Option<String>,
    /// What the page tells a client back from the card processor's page.
    pub notice: Option<PageNotice>,
}

/// How a client came back from the card processor's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardReturn {
    /// It paid there.
    Paid,
    /// It gave up there.
    Cancelled,
    /// The processor could not make a checkout.
    Failed,
}

/// What the page says above everything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageNotice {
    /// Paid, and the payment booked: the receipt.
    PaymentReceived,
    /// Paid, and the processor's report not in yet.
    PaymentPending,
    PaymentCancelled,
    CardUnavailable,
}

impl PageNotice {
    /// What the page says of `returned` on an invoice that is (or is not) settled.
    pub fn of(returned: CardReturn, settled: bool) -> Self {
        match returned {
            CardReturn::Paid if settled => Self::PaymentReceived,
            CardReturn::Paid => Self::PaymentPending,
            CardReturn::Cancelled => Self::PaymentCancelled,
            CardReturn::Failed => Self::CardUnavailable,
        }
    }

    /// The words of the notice.
    pub fn term(self) -> locale::Term {
        match self {
            Self::PaymentReceived => locale::Term::PagePaymentReceived,
            Self::PaymentPending => locale::Term::PagePaymentPending,
            Self::PaymentCancelled => locale::Term::PagePaymentCancelled,
            Self::CardUnavailable => locale::Term::PageCardUnavailable,
        }
    }
}

/// What a bank transfer to the sender needs, as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankDetails {
    pub holder: String,
    /// In groups of four.
    pub iban: String,
    pub bic: Option<String>,
    /// The payment reference, in groups.
    pub reference: String,
}

/// Renders a client's page as HTML: the port of the `pages` adapter.
pub trait PageRenderer: Send + Sync + std::fmt::Debug {
    /// `page` as a complete HTML document.
    fn invoice_page(&self, page: &InvoicePage) -> String;

    /// `page` as a complete HTML document.
    fn quote_page(&self, page: &QuotePage) -> String;

    /// The Content-Security-Policy its pages are served with.
    fn content_security_policy(&self) -> String;
}

/// A quote's page for its client, in words: the quote as printed, and where its client
/// decides on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotePage {
    /// The quote put into words; its `payment_details` are its terms.
    pub document: InvoiceDocument,
    /// How the status reads to the eye: `open`, `accepted`, `declined`, `expired`,
    /// `converted`.
    pub state: &'static str,
    /// Where the forms post while the client may decide; none once it may not.
    pub decide: Option<QuoteForms>,
    /// What was decided, worded: `Accepted by … on …`.
    pub decision: Option<String>,
    /// The quote's PDF, relative to the server's address.
    pub pdf_url: String,
    /// The page asks again for what an acceptance lacked (a name, the box).
    pub incomplete: bool,
}

/// Where a quote page's forms post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuoteForms {
    pub accept: String,
    pub decline: String,
}

impl QuotePage {
    /// The page of `quote`, whose document as printed is `document`, at `now`.
    pub fn new(document: InvoiceDocument, quote: &crate::quote::Quote, now: DateTime<Utc>) -> Self {
        use crate::quote::{QuoteStatus, Verdict};
        let words = Language::from_code(document.language()).unwrap_or_default();
        let state = match quote.status_at(now) {
            QuoteStatus::Draft | QuoteStatus::Sent => "open",
            QuoteStatus::Accepted => "accepted",
            QuoteStatus::Declined => "declined",
            QuoteStatus::Expired => "expired",
            QuoteStatus::Converted => "converted",
        };
        let decision = quote.decision.as_ref().map(|decision| {
            let date = words.day(decision.at.date_naive());
            match &decision.verdict {
                Verdict::Accepted { signer } => {
                    words.phrase(Term::QuoteAcceptedBy, &[("signer", signer.as_str()), ("date", &date)])
                }
                Verdict::Declined { .. } => words.phrase(Term::QuoteDeclinedOn, &[("date", &date)]),
            }
        });
        let base = format!("/quotes/{}", quote.id);
        Self {
            document,
            state,
            decide: quote
                .check_decidable(now)
                .is_ok()
                .then(|| QuoteForms { accept: format!("{base}/accept"), decline: format!("{base}/decline") }),
            decision,
            pdf_url: format!("{base}/pdf"),
            incomplete: false,
        }
    }
}

impl InvoicePage {
    /// The page of `invoice`, whose document as printed is `document`.
    pub fn new(
        document: InvoiceDocument,
        invoice: &Invoice,
        sender: &SenderAddress,
        now: DateTime<Utc>,
    ) -> Self {
        let words = Language::from_code(document.language()).unwrap_or_default();
        let due = invoice.balance.due();
        let settled = due <= rust_decimal::Decimal::ZERO;
        let state = match invoice.status_at(now) {
            InvoiceStatus::Pending => "open",
            InvoiceStatus::PaidPartial => "partially-paid",
            InvoiceStatus::Paid => "paid",
            InvoiceStatus::Overdue => "overdue",
            InvoiceStatus::Expired => "void",
        };
        let bank = sender.details.iban.as_ref().filter(|_| !settled).map(|iban| BankDetails {
            holder: sender.details.name.to_string(),
            iban: iban
                .as_str()
                .as_bytes()
                .chunks(4)
                .map(|chunk| String::from_utf8_lossy(chunk))
                .collect::<Vec<_>>()
                .join(" "),
            bic: sender.details.bic.as_ref().map(|bic| bic.as_str().to_owned()),
            reference: invoice.payment_reference.printed(),
        });
        let links = format!("/v1/invoices/pdf?id={}", invoice.id);
        Self {
            document,
            state,
            amount_due: format_money(words, due, invoice.currency),
            settled,
            bank,
            facturx_url: format!("{links}&format=facturx"),
            pdf_url: links,
            pay_by_card: None,
            notice: None,
        }
    }

    /// The page of a team that takes card payments: a "Pay by card" button while something
    /// is due, and the notice of how the client came back from the processor's page.
    #[must_use]
    pub fn with_cards(
        self,
        invoice: crate::InvoiceId,
        takes_cards: bool,
        returned: Option<CardReturn>,
    ) -> Self {
        let payable = takes_cards && !self.settled && self.state != "void";
        Self {
            pay_by_card: payable.then(|| format!("/invoices/{invoice}/pay")),
            notice: returned.map(|returned| PageNotice::of(returned, self.settled)),
            ..self
        }
    }
}

/// Why a PDF could not be made. The HTTP adapter answers 500 "failed to generate PDF"
/// whatever the cause, and logs the cause.
#[derive(Debug, thiserror::Error)]
#[error("failed to generate PDF: {0:#}")]
pub struct RenderError(pub anyhow::Error);

impl RenderError {
    /// A failure that `message` explains.
    pub fn saying(message: String) -> Self {
        Self(anyhow::anyhow!(message))
    }
}

/// Turns an invoice document into PDF bytes.
#[async_trait]
pub trait InvoiceRenderer: Send + Sync + std::fmt::Debug {
    async fn render(&self, document: &InvoiceDocument) -> Result<Vec<u8>, RenderError>;
}
