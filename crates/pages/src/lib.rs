//! The client's pages: an invoice as one server-rendered HTML document, from a template
//! askama checks and compiles with the code. The page works without JavaScript and loads
//! nothing: its style is inline (allowed by its hash in the Content-Security-Policy), its
//! payment QR code an inline SVG. Its words come from `locale`, in the invoice's language.

use std::fmt::Write as _;

use askama::Template;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use billing::document::{DocumentQr, InvoiceDocument, InvoicePage, QuotePage};
use locale::{Language, Term};
use sha2::{Digest as _, Sha256};

/// The page's style: one column on a phone, two where there is room; AA contrast.
const STYLE: &str = include_str!("../templates/page.css");

/// The built-in page renderer.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pages;

/// A page askama rendered; were it to fail (a compiled template renders to a String
/// without fail), the page says so rather than answering half a document.
fn rendered(page: &impl Template) -> String {
    page.render().unwrap_or_else(|error| format!("<!doctype html><title>error</title><p>{error}</p>"))
}

impl billing::PageRenderer for Pages {
    fn invoice_page(&self, page: &InvoicePage) -> String {
        rendered(&InvoiceHtml::of(page))
    }

    fn quote_page(&self, page: &QuotePage) -> String {
        rendered(&QuoteHtml::of(page))
    }

    /// Nothing loads, no script runs, the inline style applies only as written (by its
    /// hash), no form posts elsewhere, no frame embeds the page.
    fn content_security_policy(&self) -> String {
        let hash = BASE64.encode(Sha256::digest(STYLE.as_bytes()));
        format!(
            "default-src 'none'; style-src 'sha256-{hash}'; img-src 'self' data:; base-uri 'none'; \
             form-action 'self' https://checkout.stripe.com; frame-ancestors 'none'"
        )
    }
}

/// A party as the page shows it.
struct PartyBlock {
    label: String,
    name: String,
    lines: Vec<String>,
}

/// A line of the invoice as the page shows it.
struct LineRow {
    description: Vec<String>,
    rate: String,
    quantity: String,
    unit_price: String,
    amount: String,
}

/// The page's fixed words.
struct Labels {
    amount_due: String,
    due_date: String,
    settled: String,
    pay_by_transfer: String,
    holder: String,
    iban: String,
    bic: String,
    reference: String,
    amount: String,
    scan_to_pay: String,
    lines: String,
    description: String,
    vat: String,
    quantity: String,
    unit_price: String,
    total: String,
    downloads: String,
    download_pdf: String,
    download_facturx: String,
    pay_by_card: String,
}

impl Labels {
    fn of(words: Language) -> Self {
        Self {
            amount_due: words.term(Term::AmountDue),
            due_date: words.term(Term::DueDate),
            settled: words.term(Term::PagePaidThanks),
            pay_by_transfer: words.term(Term::PagePayByTransfer),
            holder: words.term(Term::PageAccountHolder),
            iban: words.term(Term::PageIban),
            bic: words.term(Term::PageBic),
            reference: words.term(Term::PaymentReference),
            amount: words.term(Term::Amount),
            scan_to_pay: words.term(Term::PageScanToPay),
            lines: words.term(Term::PageLines),
            description: words.term(Term::Description),
            vat: words.term(Term::VatColumn),
            quantity: words.term(Term::Quantity),
            unit_price: words.term(Term::UnitPrice),
            total: words.term(Term::Total),
            downloads: words.term(Term::PageDownloads),
            download_pdf: words.term(Term::PageDownloadPdf),
            download_facturx: words.phrase(Term::PageDownloadEinvoice, &[("format", "Factur-X (PDF)")]),
            pay_by_card: words.term(Term::PagePayByCard),
        }
    }
}

#[derive(Template)]
#[template(path = "invoice.html")]
struct InvoiceHtml<'a> {
    lang: &'a str,
    title: String,
    style: &'static str,
    sender: &'a str,
    heading: String,
    state: &'static str,
    status: &'a str,
    amount_due: &'a str,
    due_date: Option<&'a str>,
    settled: bool,
    bank: Option<&'a billing::document::BankDetails>,
    code: Option<String>,
    facts: Vec<(String, String)>,
    parties: Vec<PartyBlock>,
    description: Option<&'a str>,
    rates: bool,
    lines: Vec<LineRow>,
    totals: Vec<(String, String)>,
    total: &'a str,
    settlement: Vec<(String, String)>,
    pdf_url: &'a str,
    facturx_url: &'a str,
    pay_by_card: Option<&'a str>,
    notice: Option<String>,
    labels: Labels,
}

/// What every page shows of its document: the facts under the title, the parties, the
/// lines and the totals.
struct Body {
    facts: Vec<(String, String)>,
    parties: Vec<PartyBlock>,
    rates: bool,
    lines: Vec<LineRow>,
    totals: Vec<(String, String)>,
}

impl Body {
    fn of(document: &InvoiceDocument, words: Language) -> Self {
        let pair = |label: &str, value: &str| (label.to_owned(), value.to_owned());
        let (dated, billed) =
            if document.quote { (Term::QuoteDate, Term::QuoteFor) } else { (Term::IssueDate, Term::BillTo) };
        let mut facts = vec![pair(&words.term(dated), &document.issue_date)];
        facts.extend(document.supply.iter().map(|line| pair(&line.label, &line.value)));
        let party = |label: Term, party: &billing::document::Party| PartyBlock {
            label: words.term(label),
            name: party.name.clone(),
            lines: party
                .address
                .iter()
                .cloned()
                .chain(party.vat_number.iter().map(|vat| words.phrase(Term::VatNumber, &[("number", vat)])))
                .collect(),
        };
        let mut totals = vec![pair(&words.term(Term::Subtotal), &document.subtotal)];
        totals.extend(document.discounts.iter().map(|row| pair(&row.label, &row.value)));
        totals.push(pair(&document.tax_label, &document.tax));
        // A VAT group's row: its rate as the PDF's breakdown words it (`7%`, `0% reverse
        // charge`), and the amount it is on.
        let vat = words.term(Term::VatColumn);
        totals.extend(
            document
                .vat_breakdown
                .iter()
                .map(|row| (format!("{vat} {} · {}", row.rate, row.taxable_amount), row.tax.clone())),
        );
        Self {
            facts,
            parties: vec![party(Term::From, &document.sender), party(billed, &document.client)],
            rates: document.lines.iter().any(|line| line.vat_rate.is_some()),
            lines: document
                .lines
                .iter()
                .map(|line| LineRow {
                    description: line.description.lines().map(str::to_owned).collect(),
                    rate: line.vat_rate.clone().unwrap_or_default(),
                    quantity: line.quantity.clone(),
                    unit_price: line.unit_price.clone(),
                    amount: line.amount.clone(),
                })
                .collect(),
            totals,
        }
    }
}

impl<'a> InvoiceHtml<'a> {
    fn of(page: &'a InvoicePage) -> Self {
        let document = &page.document;
        let words = Language::from_code(document.language()).unwrap_or_default();
        let title_word = document.title.clone().unwrap_or_else(|| words.term(Term::InvoiceTitle));
        let pair = |label: &str, value: &str| (label.to_owned(), value.to_owned());
        let body = Body::of(document, words);
        Self {
            lang: words.code(),
            title: words
                .phrase(Term::PageTitle, &[("serial", &document.serial), ("sender", &document.sender.name)]),
            style: STYLE,
            sender: &document.sender.name,
            heading: format!("{title_word} {}", document.serial),
            state: page.state,
            status: &document.status,
            amount_due: &page.amount_due,
            due_date: document.due_date.as_deref(),
            settled: page.settled,
            bank: page.bank.as_ref(),
            code: document.payment_qr.as_ref().and_then(|qr| svg(qr, &words.term(Term::PageScanToPay))),
            facts: body.facts,
            parties: body.parties,
            description: document.description.as_deref(),
            rates: body.rates,
            lines: body.lines,
            totals: body.totals,
            total: &document.total,
            settlement: document.settlement.iter().map(|row| pair(&row.label, &row.value)).collect(),
            pdf_url: &page.pdf_url,
            facturx_url: &page.facturx_url,
            pay_by_card: page.pay_by_card.as_deref(),
            notice: page.notice.map(|notice| words.term(notice.term())),
            labels: Labels::of(words),
        }
    }
}

/// A quote page's fixed words.
struct QuoteLabels {
    lines: String,
    description: String,
    vat: String,
    quantity: String,
    unit_price: String,
    amount: String,
    total: String,
    terms: String,
    decide: String,
    signer: String,
    agree: String,
    accept: String,
    reason: String,
    decline: String,
    incomplete: String,
    downloads: String,
    download_pdf: String,
}

#[derive(Template)]
#[template(path = "quote.html")]
struct QuoteHtml<'a> {
    lang: &'a str,
    title: String,
    style: &'static str,
    sender: &'a str,
    heading: String,
    state: &'static str,
    status: &'a str,
    decision: Option<&'a str>,
    decide: Option<&'a billing::document::QuoteForms>,
    incomplete: bool,
    facts: Vec<(String, String)>,
    parties: Vec<PartyBlock>,
    description: Option<&'a str>,
    rates: bool,
    lines: Vec<LineRow>,
    totals: Vec<(String, String)>,
    total: &'a str,
    terms: Vec<String>,
    pdf_url: &'a str,
    labels: QuoteLabels,
}

impl<'a> QuoteHtml<'a> {
    fn of(page: &'a QuotePage) -> Self {
        let document = &page.document;
        let words = Language::from_code(document.language()).unwrap_or_default();
        let body = Body::of(document, words);
        Self {
            lang: words.code(),
            title: words.phrase(
                Term::QuotePageTitle,
                &[("serial", &document.serial), ("sender", &document.sender.name)],
            ),
            style: STYLE,
            sender: &document.sender.name,
            heading: format!("{} {}", words.term(Term::QuoteTitle), document.serial),
            state: page.state,
            status: &document.status,
            decision: page.decision.as_deref(),
            decide: page.decide.as_ref(),
            incomplete: page.incomplete,
            facts: body.facts,
            parties: body.parties,
            description: document.description.as_deref(),
            rates: body.rates,
            lines: body.lines,
            totals: body.totals,
            total: &document.total,
            terms: document
                .payment_details
                .iter()
                .flat_map(|terms| terms.lines().map(str::to_owned))
                .collect(),
            pdf_url: &page.pdf_url,
            labels: QuoteLabels {
                lines: words.term(Term::QuoteLines),
                description: words.term(Term::Description),
                vat: words.term(Term::VatColumn),
                quantity: words.term(Term::Quantity),
                unit_price: words.term(Term::UnitPrice),
                amount: words.term(Term::Amount),
                total: words.term(Term::Total),
                terms: words.term(Term::QuoteNotes),
                decide: words.term(Term::QuoteDecide),
                signer: words.term(Term::QuoteSignerName),
                agree: words.term(Term::QuoteAgree),
                accept: words.term(Term::QuoteAccept),
                reason: words.term(Term::QuoteDeclineReason),
                decline: words.term(Term::QuoteDecline),
                incomplete: words.term(Term::QuoteNeedsName),
                downloads: words.term(Term::PageDownloads),
                download_pdf: words.term(Term::PageDownloadPdf),
            },
        }
    }
}

/// The payment QR code as an inline SVG: one path of its dark modules (each row's runs as
/// one rectangle), with a quiet zone of four modules and, for the Swiss QR-bill, its cross.
fn svg(qr: &DocumentQr, label: &str) -> Option<String> {
    let payload = qr.decoded()?;
    // Level M, which both payment formats require; bytes as they are (an EPC payload may be
    // ISO 8859-1).
    let code =
        fast_qr::QRBuilder::new(payload).ecl(fast_qr::ECL::M).mode(fast_qr::Mode::Byte).build().ok()?;
    let width = code.size;
    let mut path = String::new();
    for (row, line) in code.data[..width * width].chunks(width).enumerate() {
        let mut column = 0;
        while column < line.len() {
            if line[column].value() {
                let start = column;
                while column < line.len() && line[column].value() {
                    column += 1;
                }
                let (x, y, run) = (start + 4, row + 4, column - start);
                // Writing to a String cannot fail.
                let _ = write!(path, "M{x} {y}h{run}v1h-{run}z");
            } else {
                column += 1;
            }
        }
    }
    let side = width + 8;
    let cross = if qr.slip.is_some() {
        // SIX's cross, 7/46 of the code wide, at its centre (in a 20-unit square).
        let scale = f64::from(u32::try_from(width).unwrap_or(0)) * 7.0 / 46.0 / 20.0;
        let origin = f64::from(u32::try_from(side).unwrap_or(0)) / 2.0 - 10.0 * scale;
        format!(
            "<g transform=\"translate({origin} {origin}) scale({scale})\"><rect width=\"20\" height=\"20\" fill=\"#fff\"/>\
             <rect x=\"0.7\" y=\"0.7\" width=\"18.4\" height=\"18.4\"/><rect x=\"8.3\" y=\"4\" width=\"3.3\" height=\"11\" fill=\"#fff\"/>\
             <rect x=\"4\" y=\"8.3\" width=\"11\" height=\"3.3\" fill=\"#fff\"/></g>"
        )
    } else {
        String::new()
    };
    let label = label.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    Some(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {side} {side}\" role=\"img\" aria-label=\"{label}\" \
         shape-rendering=\"crispEdges\"><rect width=\"{side}\" height=\"{side}\" fill=\"#fff\"/><path d=\"{path}\"/>{cross}</svg>"
    ))
}
