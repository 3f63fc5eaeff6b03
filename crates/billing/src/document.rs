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
    /// The serial of the invoice this document corrects (a credit note's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corrects: Option<String>,
    pub serial: String,
    /// The status reported when the document was made (`OVERDUE` included).
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
    /// `Tax (19%)`, or `Tax` for a flat amount.
    pub tax_label: String,
    pub tax: String,
    /// The tax of each rate, where the lines are taxed at more than one (`Tax (7%) on
    /// 20.04 €`), printed instead of the one tax row. Left out of the JSON when empty, as
    /// `settlement` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tax_rows: Vec<SettledLine>,
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

/// The settled figures of `balance` as printed: each that is not 0, then what is due; none
/// while what is due is the whole total.
fn settlement(
    words: Language,
    balance: &crate::Balance,
    currency: crate::money::Currency,
) -> Vec<SettledLine> {
    if balance.due() == balance.total {
        return Vec::new();
    }
    let line = |label: Term, value| SettledLine {
        label: words.term(label),
        value: format_money(words, value, currency),
    };
    let mut lines: Vec<SettledLine> = [
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

fn party(name: String, lines: [String; 4], email: Option<String>, vat_number: &str) -> Party {
    Party { name, address: non_empty(lines), email, vat_number: optional(vat_number) }
}

fn sender_party(sender: &SenderAddress) -> Party {
    let s = &sender.details;
    party(
        s.name.to_string(),
        [s.line1.to_string(), s.line2.to_string(), s.line3.to_string(), s.postal_code.to_string()],
        s.email.as_ref().map(|e| e.as_str().to_owned()),
        s.vat_number.as_str(),
    )
}

fn client_party(client: &Client) -> Party {
    let c = &client.details;
    party(
        c.name.to_string(),
        [c.line1.to_string(), c.line2.to_string(), c.line3.to_string(), c.postal_code.to_string()],
        Some(c.email.as_str().to_owned()),
        c.vat_number.as_str(),
    )
}

/// What a document's figures print as: its lines, its subtotal, its discount rows and its
/// tax rows.
struct Figures {
    lines: Vec<DocumentLine>,
    subtotal: String,
    discounts: Vec<SettledLine>,
    tax_rows: Vec<SettledLine>,
}

impl Figures {
    fn of(words: Language, pricing: &crate::Pricing<'_>, totals: &crate::Totals) -> Self {
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
                    quantity: item.quantity.normalize().to_string(),
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
        Self {
            lines,
            subtotal: money(totals.taxable_amount() + document_discount),
            discounts,
            tax_rows: tax_rows(words, &breakdown, currency),
        }
    }
}

/// A row per group of `breakdown`, where it has more than one.
fn tax_rows(
    words: Language,
    breakdown: &[crate::VatGroup],
    currency: crate::money::Currency,
) -> Vec<SettledLine> {
    if breakdown.len() < 2 {
        return Vec::new();
    }
    breakdown
        .iter()
        .map(|group| SettledLine {
            label: words.phrase(
                Term::TaxRateOn,
                &[
                    ("rate", &words.decimal(&group.rate.percentage.normalize().to_string())),
                    ("base", &format_money(words, group.taxable_amount, currency)),
                ],
            ),
            value: format_money(words, group.tax_amount, currency),
        })
        .collect()
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
        let figures = Figures::of(words, &note.pricing(), &note.totals);
        Self {
            title: Some(words.term(Term::CreditNoteTitle)),
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
            tax_label: tax_label(words, note.tax_rule),
            tax: format_money(words, note.totals.tax, currency),
            tax_rows: figures.tax_rows,
            total: format_money(words, note.totals.total, currency),
            settlement: Vec::new(),
            payment_details: None,
            logo: sender.details.logo.as_ref().map(DocumentLogo::of),
            facturx_xml: None,
            language: language_code(words),
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
        let figures = Figures::of(words, &invoice.pricing(), &invoice.totals);
        Self {
            title: None,
            corrects: None,
            serial: invoice.number.to_string(),
            status: status.as_str().to_owned(),
            paid: status == InvoiceStatus::Paid,
            issue_date: words.day(invoice.issue_date.date_naive()),
            due_date: invoice.due_date.map(|due| words.day(due.date_naive())),
            supply: supply_lines(words, &invoice.supply, client.details.payment_terms),
            description: invoice.description.as_ref().and_then(|d| optional(d.as_str())),
            sender: sender_party(sender),
            client: client_party(client),
            lines: figures.lines,
            subtotal: figures.subtotal,
            discounts: figures.discounts,
            tax_label: tax_label(words, invoice.tax_rule),
            tax: format_money(words, invoice.totals.tax, currency),
            tax_rows: figures.tax_rows,
            total: format_money(words, invoice.totals.total, currency),
            settlement: settlement(words, &invoice.balance, currency),
            payment_details: optional(s.payment_details.as_str()),
            logo: s.logo.as_ref().map(DocumentLogo::of),
            facturx_xml: None,
            language: language_code(words),
        }
    }
}

/// Why a PDF could not be made. The HTTP adapter answers 500 "failed to generate PDF"
/// whatever the cause, and logs the cause.
#[derive(Debug, thiserror::Error)]
#[error("failed to generate PDF: {0:#}")]
pub struct RenderError(pub anyhow::Error);

/// Turns an invoice document into PDF bytes.
#[async_trait]
pub trait InvoiceRenderer: Send + Sync + std::fmt::Debug {
    async fn render(&self, document: &InvoiceDocument) -> Result<Vec<u8>, RenderError>;
}
