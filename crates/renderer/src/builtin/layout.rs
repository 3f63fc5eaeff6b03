//! Where everything goes: an [`InvoiceDocument`] becomes pages of positioned drawing
//! operations, before anything is drawn.
//!
//! Coordinates are PDF points (1/72 in) from the page's top-left corner, `y` growing
//! downwards (krilla's convention). Text is placed by its baseline and its measured width,
//! so alignment is decided here and drawing only follows.
//!
//! The line-item table is split in two steps: [`plan`] decides which rows (or, for a row
//! taller than a page, which lines of it) go on which page, keeping the last row with the
//! totals; then [`lay_out`] emits each page, and finally the footers, which need the page
//! count.

use std::borrow::Cow;

use billing::InvoiceDocument;
use billing::document::{DocumentLine, Party};
use locale::{Language, Term};

use super::font::{Fonts, Weight, one_line};
use super::page::{HAIRLINE, HEADER_FILL, INK, MUTED, Modules, Op, PAGE_HEIGHT, PAGE_WIDTH, Pen};
use super::qr::{EPC_SIZE, SLIP_TOP};
use super::shape::TextLine;

const MARGIN: f32 = 50.0;
const RIGHT: f32 = PAGE_WIDTH - MARGIN;
/// No table row or totals line goes below this; under it are the footer and some air.
const CONTENT_BOTTOM: f32 = PAGE_HEIGHT - 70.0;
const FOOTER_BASELINE: f32 = PAGE_HEIGHT - 40.0;

const BODY: f32 = 9.5;
const SMALL: f32 = 8.0;
const LINE: f32 = 13.0;

/// The parties' columns: "From" at the margin, "Bill to" from the middle.
const BILL_TO_LEFT: f32 = PAGE_WIDTH / 2.0 + 10.0;
const PARTY_WIDTH: f32 = RIGHT - BILL_TO_LEFT;

/// The table: a shaded header, then rows separated by hairlines.
const TABLE_HEADER_HEIGHT: f32 = 24.0;
const TABLE_HEADER_SIZE: f32 = 8.5;
const CELL_PADDING: f32 = 8.0;
const COLUMN_GAP: f32 = 16.0;
/// First baseline of a row below its top, and the room under its last baseline.
const ROW_BASELINE: f32 = 16.0;
const ROW_BELOW: f32 = 7.5;
const MIN_DESCRIPTION_WIDTH: f32 = 140.0;
/// Where the table starts on the pages after the first.
const CONTINUED_TABLE_TOP: f32 = 96.0;

/// The title's baseline on a page without a logo.
const TITLE_BASELINE: f32 = 82.0;
/// The logo, at the top left, fits this box; the title goes under it.
const LOGO_TOP: f32 = 40.0;
const LOGO_MAX_WIDTH: f32 = 160.0;
const LOGO_MAX_HEIGHT: f32 = 48.0;
/// From the logo's bottom to the title's baseline: the title's cap height and some air.
const LOGO_TITLE_GAP: f32 = 32.0;

/// The size a logo of `aspect` (width, height) is drawn at: as large as fits the logo's
/// box, never distorted.
fn logo_box((width, height): (f32, f32)) -> (f32, f32) {
    let scale = (LOGO_MAX_WIDTH / width).min(LOGO_MAX_HEIGHT / height);
    (width * scale, height * scale)
}

/// Subtotal, tax, a rule and the total, below the table.
const TOTALS_HEIGHT: f32 = 72.0;
/// From the total's baseline to the payment details' label.
const PAYMENT_LABEL_GAP: f32 = 30.0;
/// From the total's baseline to the first settled figure's.
const SETTLEMENT_GAP: f32 = 8.0;
const TOTAL_SIZE: f32 = 12.0;
/// The VAT breakdown's table: a shaded header, then a row per VAT group.
const BREAKDOWN_HEADER_HEIGHT: f32 = 18.0;
const BREAKDOWN_ROW: f32 = LINE + 4.0;

/// The PAID stamp: a frame around the word, turned a little, as if stamped by hand.
pub(super) const STAMP_WIDTH: f32 = 118.0;
pub(super) const STAMP_HEIGHT: f32 = 42.0;
pub(super) const STAMP_ANGLE: f32 = -12.0;
pub(super) const STAMP_SIZE: f32 = 28.0;

/// The width and height of the box the turned stamp covers.
fn stamp_bounds() -> (f32, f32) {
    let (sin, cos) = STAMP_ANGLE.to_radians().abs().sin_cos();
    (STAMP_WIDTH * cos + STAMP_HEIGHT * sin, STAMP_WIDTH * sin + STAMP_HEIGHT * cos)
}

/// The pages of `document`, each a list of operations in drawing order. `logo`: the
/// aspect (width, height) of the sender's logo, if it has one.
pub(super) fn lay_out(
    document: &InvoiceDocument,
    fonts: &'static Fonts,
    logo: Option<(f32, f32)>,
) -> Vec<Vec<Op>> {
    let columns = Columns::measure(document, fonts);
    let rows: Vec<Vec<TextLine>> = document
        .lines
        .iter()
        .map(|line| fonts.regular.wrap(&line.description, BODY, columns.description_width))
        .collect();
    let code = document.payment_qr.as_ref().and_then(|qr| Some((qr, Modules::of(qr)?)));
    let epc = code.as_ref().filter(|(qr, _)| qr.slip.is_none());
    // Beside an EPC code the payment details take what is left of the width.
    let details_width = if epc.is_some() { RIGHT - MARGIN - EPC_SIZE - 20.0 } else { RIGHT - MARGIN };
    let payment = payment_lines(document, fonts, details_width);
    let mut pen = Pen::new(fonts, logo.map(logo_box));
    let table_top = pen.first_page_header(document);
    let payment_room = if epc.is_some() {
        payment_height(&payment).max(PAYMENT_LABEL_GAP + EPC_SIZE + 14.0)
    } else {
        payment_height(&payment)
    };
    let closing = TOTALS_HEIGHT + breakdown_height(document) + settlement_height(document) + payment_room;
    let plan = plan(&rows, table_top, closing);

    let last = plan.len() - 1;
    let mut pages = Vec::with_capacity(plan.len());
    for (index, fragments) in plan.iter().enumerate() {
        if index > 0 {
            pen.continued_header(document);
        }
        let mut y = if index == 0 { table_top } else { CONTINUED_TABLE_TOP };
        if index == 0 || !fragments.is_empty() {
            y = pen.table_header(&columns, language(document), y);
        }
        for fragment in fragments {
            y = pen.row(&columns, &document.lines[fragment.row], &rows[fragment.row], fragment, y);
        }
        if index == last {
            let total = pen.totals(document, &columns, y);
            let above = pen.vat_breakdown(document, &columns, total);
            pen.payment_details(&language(document).term(Term::PaymentDetails), &payment, above);
            if let Some((qr, modules)) = epc {
                pen.epc_code(modules.clone(), &qr.caption, RIGHT, above + PAYMENT_LABEL_GAP - 8.0);
            }
        }
        if index == 0
            && let Some((x, y)) = pen.stamp_at
        {
            let text = language(document).term(Term::PaidStamp);
            pen.ops.push(Op::Stamp { x, y, text });
        }
        pages.push(std::mem::take(&mut pen.ops));
    }

    // The Swiss QR-bill at the foot of the last page, or of a page of its own where the
    // last has no room for it.
    let mut slip_page = None;
    if let Some((qr, modules)) = &code
        && let Some(slip) = &qr.slip
    {
        let bottom = pages.last().map_or(0.0, |ops| lowest_text(ops));
        if bottom + 24.0 > SLIP_TOP {
            pen.continued_header(document);
            pages.push(std::mem::take(&mut pen.ops));
        }
        pen.swiss_slip(slip, modules.clone());
        let last = pages.len() - 1;
        pages[last].append(&mut pen.ops);
        slip_page = Some(last);
    }

    let count = pages.len();
    for (index, ops) in pages.iter_mut().enumerate() {
        // Above the QR-bill on its page, which takes the page's foot.
        let baseline = if slip_page == Some(index) { SLIP_TOP - 16.0 } else { FOOTER_BASELINE };
        pen.footer(document, index + 1, count, baseline);
        ops.append(&mut pen.ops);
    }
    pages
}

/// The lowest baseline of the text on a page.
fn lowest_text(ops: &[Op]) -> f32 {
    ops.iter()
        .filter_map(|op| match op {
            Op::Text { y, .. } => Some(*y),
            _ => None,
        })
        .fold(0.0, f32::max)
}

/// The language the document's labels are in.
pub(super) fn language(document: &InvoiceDocument) -> Language {
    Language::from_code(document.language()).unwrap_or_default()
}

/// The document's title: an invoice's unless it says otherwise.
pub(super) fn document_title(document: &InvoiceDocument) -> Cow<'_, str> {
    match &document.title {
        Some(title) => Cow::Borrowed(title),
        None => Cow::Owned(language(document).term(Term::InvoiceTitle)),
    }
}

/// The sender's payment details, each of its lines wrapped to `width`.
fn payment_lines(document: &InvoiceDocument, fonts: &'static Fonts, width: f32) -> Vec<TextLine> {
    let details = document.payment_details.as_deref().unwrap_or_default();
    details.lines().flat_map(|line| fonts.regular.wrap(line, BODY, width)).collect()
}

/// Room the VAT breakdown takes under the totals: its label, its header and its rows.
fn breakdown_height(document: &InvoiceDocument) -> f32 {
    if document.vat_breakdown.is_empty() {
        0.0
    } else {
        PAYMENT_LABEL_GAP
            + BREAKDOWN_HEADER_HEIGHT
            + 6.0
            + count(document.vat_breakdown.len()) * BREAKDOWN_ROW
    }
}

/// Room the settled figures take under the total: a row each, and a gap above them.
fn settlement_height(document: &InvoiceDocument) -> f32 {
    if document.settlement.is_empty() {
        0.0
    } else {
        SETTLEMENT_GAP + count(document.settlement.len()) * (LINE + 2.0)
    }
}

/// Room the payment details take under the totals' last line: their label, then their lines.
fn payment_height(lines: &[TextLine]) -> f32 {
    if lines.is_empty() { 0.0 } else { PAYMENT_LABEL_GAP + count(lines.len()) * LINE + 4.0 }
}

/// Some lines of one row: all of them, except for a row taller than a page.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fragment {
    row: usize,
    lines: std::ops::Range<usize>,
}

fn lines_height(lines: usize) -> f32 {
    ROW_BASELINE + ROW_BELOW + LINE * (count(lines) - 1.0)
}

fn count(n: usize) -> f32 {
    u16::try_from(n).map_or(f32::from(u16::MAX), f32::from)
}

/// Which lines of which rows go on each page. Every page but a totals-only one starts with
/// the table header; the totals follow the last row, which moves to a new page with them
/// when they do not fit under it.
/// `closing`: the height of what follows the last row (the totals, the payment details).
fn plan(rows: &[Vec<TextLine>], first_table_top: f32, closing: f32) -> Vec<Vec<Fragment>> {
    let top_of_rows =
        |page: usize| if page == 0 { first_table_top } else { CONTINUED_TABLE_TOP } + TABLE_HEADER_HEIGHT;
    let fresh_room = CONTENT_BOTTOM - top_of_rows(1);
    let mut pages: Vec<Vec<Fragment>> = vec![Vec::new()];
    let mut y = top_of_rows(0);
    for (row, lines) in rows.iter().enumerate() {
        let mut start = 0;
        while start < lines.len() {
            let page = pages.len() - 1;
            let remaining = lines.len() - start;
            if y + lines_height(remaining) <= CONTENT_BOTTOM {
                pages[page].push(Fragment { row, lines: start..lines.len() });
                y += lines_height(remaining);
                break;
            }
            let on_fresh_page = lines_height(remaining) <= fresh_room;
            if on_fresh_page && !pages[page].is_empty() {
                pages.push(Vec::new());
                y = top_of_rows(page + 1);
                continue;
            }
            // Taller than a page: as many lines as fit here, the rest on the next pages.
            let mut fit = 0;
            while fit < remaining && y + lines_height(fit + 1) <= CONTENT_BOTTOM {
                fit += 1;
            }
            if fit == 0 && !pages[page].is_empty() {
                pages.push(Vec::new());
                y = top_of_rows(page + 1);
                continue;
            }
            let fit = fit.max(1);
            pages[page].push(Fragment { row, lines: start..start + fit });
            start += fit;
            pages.push(Vec::new());
            y = top_of_rows(page + 1);
        }
    }
    // A row split to its last line can leave an empty page behind it.
    if pages.len() > 1 && pages.last().is_some_and(Vec::is_empty) {
        pages.pop();
        let page = pages.len() - 1;
        y = top_of_rows(page) + pages[page].iter().map(|f| lines_height(f.lines.len())).sum::<f32>();
    }
    if y + closing > CONTENT_BOTTOM {
        let page = pages.len() - 1;
        let last_fits_with_totals = pages[page]
            .last()
            .is_some_and(|f| top_of_rows(page + 1) + lines_height(f.lines.len()) + closing <= CONTENT_BOTTOM);
        if pages[page].len() > 1 && last_fits_with_totals {
            let moved = pages[page].pop().into_iter().collect();
            pages.push(moved);
        } else {
            pages.push(Vec::new());
        }
    }
    pages
}

/// The table's columns: the number columns as wide as their widest cell, the description
/// taking the rest.
struct Columns {
    description_left: f32,
    description_width: f32,
    /// The lines' VAT rates, where they are taxed at more than one.
    rate_right: Option<f32>,
    quantity_right: f32,
    price_right: f32,
    amount_right: f32,
}

impl Columns {
    fn measure(document: &InvoiceDocument, fonts: &'static Fonts) -> Self {
        let words = language(document);
        let widest = |header: Term, cell: fn(&DocumentLine) -> &str| {
            document
                .lines
                .iter()
                .map(|line| fonts.regular.width(cell(line), BODY))
                .fold(fonts.bold.width(&words.term(header), TABLE_HEADER_SIZE), f32::max)
        };
        let amount = widest(Term::Amount, |l| &l.amount).max(70.0);
        let price = widest(Term::UnitPrice, |l| &l.unit_price).max(70.0);
        let quantity = widest(Term::Quantity, |l| &l.quantity);
        let amount_right = RIGHT - CELL_PADDING;
        let price_right = amount_right - amount - COLUMN_GAP;
        let quantity_right = price_right - price - COLUMN_GAP;
        let rates = document.lines.iter().any(|line| line.vat_rate.is_some());
        let (rate_right, left_of_numbers) = if rates {
            let rate = widest(Term::VatColumn, |l| l.vat_rate.as_deref().unwrap_or_default());
            let rate_right = quantity_right - quantity - COLUMN_GAP;
            (Some(rate_right), rate_right - rate)
        } else {
            (None, quantity_right - quantity)
        };
        let description_left = MARGIN + CELL_PADDING;
        let description_width = (left_of_numbers - COLUMN_GAP - description_left).max(MIN_DESCRIPTION_WIDTH);
        Self { description_left, description_width, rate_right, quantity_right, price_right, amount_right }
    }
}

impl Pen {
    /// The title's baseline: under the logo when there is one.
    fn title_baseline(&self) -> f32 {
        self.logo.map_or(TITLE_BASELINE, |(_, height)| LOGO_TOP + height + LOGO_TITLE_GAP)
    }

    /// Title, serial, dates and status, both parties and the description. Returns where
    /// the table starts.
    fn first_page_header(&mut self, document: &InvoiceDocument) -> f32 {
        if let Some((width, height)) = self.logo {
            self.ops.push(Op::Logo { x: MARGIN, y: LOGO_TOP, width, height });
        }
        let title = self.title_baseline();
        self.text(MARGIN, title, &document_title(document), Weight::Bold, 26.0, INK);
        let serial = self.fonts.bold.truncate(&one_line(&document.serial), 14.0, 220.0);
        self.right(RIGHT, 72.0, &serial, Weight::Bold, 14.0, INK);

        let words = language(document);
        let (dated, billed) =
            if document.quote { (Term::QuoteDate, Term::QuoteFor) } else { (Term::IssueDate, Term::BillTo) };
        let mut facts = vec![(words.term(dated), document.issue_date.as_str())];
        if let Some(due) = &document.due_date {
            facts.push((words.term(Term::DueDate), due.as_str()));
        }
        if let Some(corrected) = &document.corrects {
            facts.push((words.term(Term::Corrects), corrected.as_str()));
        }
        for line in &document.supply {
            facts.push((line.label.clone(), line.value.as_str()));
        }
        if !document.status.is_empty() {
            facts.push((words.term(Term::Status), document.status.as_str()));
        }
        let values = facts.iter().map(|(_, value)| self.fonts.regular.width(value, BODY)).fold(0.0, f32::max);
        let labels = facts.iter().map(|(label, _)| self.fonts.regular.width(label, BODY)).fold(0.0, f32::max);
        // Beside the title, or under it where a long title and long facts would meet.
        let title_end = MARGIN + self.fonts.bold.width(&document_title(document), 26.0);
        let beside = title_end + 12.0 <= RIGHT - values - 14.0 - labels;
        let mut y = if beside { 92.0 } else { title + 24.0 };
        let mut facts_left = RIGHT - values;
        for (label, value) in facts {
            facts_left =
                facts_left.min(self.right(RIGHT - values - 14.0, y, &label, Weight::Regular, BODY, MUTED));
            self.right(RIGHT, y, value, Weight::Regular, BODY, INK);
            y += LINE;
        }
        let mut rule = y.max(128.0).max(title + 16.0) + 12.0;
        if document.paid {
            let stamp = self.place_stamp(document, facts_left);
            rule = rule.max(stamp + 10.0);
        }
        self.rule(rule, MARGIN, RIGHT, 0.8, HAIRLINE);

        let top = rule + 22.0;
        let from = self.party(MARGIN, top, &words.term(Term::From), words, &document.sender);
        let bill_to = self.party(BILL_TO_LEFT, top, &words.term(billed), words, &document.client);
        let mut y = from.max(bill_to) + 14.0;

        if let Some(description) = &document.description {
            y += 4.0;
            for line in self.fonts.regular.wrap(description, BODY + 0.5, RIGHT - MARGIN) {
                y += LINE + 0.5;
                self.line(MARGIN, RIGHT - MARGIN, y, &line, Weight::Regular, BODY + 0.5, INK);
            }
            y += 18.0;
        }
        y
    }

    /// A party's block under its label, wrapped to its column; returns the last baseline.
    fn party(&mut self, x: f32, top: f32, label: &str, words: Language, party: &Party) -> f32 {
        self.text(x, top, label, Weight::Bold, SMALL, MUTED);
        let width = if x < BILL_TO_LEFT { BILL_TO_LEFT - MARGIN - 24.0 } else { PARTY_WIDTH };
        let mut y = top + 2.0;
        for line in self.fonts.bold.wrap(&party.name, 10.5, width) {
            y += LINE + 1.5;
            self.line(x, width, y, &line, Weight::Bold, 10.5, INK);
        }
        y += 1.0;
        let details =
            party.address.iter().cloned().chain(party.email.clone()).chain(
                party.vat_number.as_ref().map(|vat| words.phrase(Term::VatNumber, &[("number", vat)])),
            );
        for detail in details {
            for line in self.fonts.regular.wrap(&detail, BODY, width) {
                y += LINE;
                self.line(x, width, y, &line, Weight::Regular, BODY, INK);
            }
        }
        y
    }

    fn continued_header(&mut self, document: &InvoiceDocument) {
        let serial = one_line(&document.serial);
        let title = language(document).phrase(Term::ContinuedTitle, &[("serial", &serial)]);
        let title = self.fonts.bold.truncate(&title, 12.0, (RIGHT - MARGIN) / 2.0);
        self.text(MARGIN, 62.0, &title, Weight::Bold, 12.0, INK);
        let client = self.fonts.regular.truncate(
            &one_line(&document.client.name),
            BODY,
            (RIGHT - MARGIN) / 2.0 - 20.0,
        );
        self.right(RIGHT, 62.0, &client, Weight::Regular, BODY, MUTED);
        self.rule(76.0, MARGIN, RIGHT, 0.8, HAIRLINE);
    }

    fn table_header(&mut self, columns: &Columns, words: Language, top: f32) -> f32 {
        self.ops.push(Op::Rect {
            x: MARGIN,
            y: top,
            width: RIGHT - MARGIN,
            height: TABLE_HEADER_HEIGHT,
            color: HEADER_FILL,
        });
        let y = top + 15.5;
        let size = TABLE_HEADER_SIZE;
        self.text(columns.description_left, y, &words.term(Term::Description), Weight::Bold, size, INK);
        if let Some(rate_right) = columns.rate_right {
            self.right(rate_right, y, &words.term(Term::VatColumn), Weight::Bold, size, INK);
        }
        self.right(columns.quantity_right, y, &words.term(Term::Quantity), Weight::Bold, size, INK);
        self.right(columns.price_right, y, &words.term(Term::UnitPrice), Weight::Bold, size, INK);
        self.right(columns.amount_right, y, &words.term(Term::Amount), Weight::Bold, size, INK);
        top + TABLE_HEADER_HEIGHT
    }

    /// Some lines of a row (the numbers with its first line); returns its bottom.
    fn row(
        &mut self,
        columns: &Columns,
        line: &DocumentLine,
        wrapped: &[TextLine],
        fragment: &Fragment,
        top: f32,
    ) -> f32 {
        let y = top + ROW_BASELINE;
        for (i, text) in wrapped[fragment.lines.clone()].iter().enumerate() {
            let (left, width) = (columns.description_left, columns.description_width);
            self.line(left, width, y + LINE * count(i), text, Weight::Regular, BODY, INK);
        }
        if fragment.lines.start == 0 {
            if let (Some(rate_right), Some(rate)) = (columns.rate_right, &line.vat_rate) {
                self.right(rate_right, y, rate, Weight::Regular, BODY, INK);
            }
            self.right(columns.quantity_right, y, &line.quantity, Weight::Regular, BODY, INK);
            self.right(columns.price_right, y, &line.unit_price, Weight::Regular, BODY, INK);
            self.right(columns.amount_right, y, &line.amount, Weight::Regular, BODY, INK);
        }
        let bottom = top + lines_height(fragment.lines.len());
        self.rule(bottom, MARGIN, RIGHT, 0.5, HAIRLINE);
        bottom
    }

    /// Subtotal, tax and total, right-aligned under the amounts; returns the total's baseline.
    fn totals(&mut self, document: &InvoiceDocument, columns: &Columns, top: f32) -> f32 {
        let (regular, bold) = (&self.fonts.regular, &self.fonts.bold);
        let words = language(document);
        let (subtotal, total) = (words.term(Term::Subtotal), words.term(Term::Total));
        let mut rows = vec![(subtotal.as_str(), document.subtotal.as_str())];
        rows.extend(document.discounts.iter().map(|row| (row.label.as_str(), row.value.as_str())));
        rows.push((document.tax_label.as_str(), document.tax.as_str()));
        let values = rows
            .iter()
            .map(|(_, value)| regular.width(value, BODY))
            .fold(bold.width(&document.total, TOTAL_SIZE), f32::max);
        let labels = rows
            .iter()
            .map(|(label, _)| regular.width(label, BODY))
            .fold(bold.width(&total, TOTAL_SIZE), f32::max);
        let label_right = columns.amount_right - values - 24.0;
        let mut y = top + 22.0;
        for (label, value) in rows {
            self.right(label_right, y, label, Weight::Regular, BODY, MUTED);
            self.right(columns.amount_right, y, value, Weight::Regular, BODY, INK);
            y += LINE + 2.0;
        }
        self.rule(y - 5.0, label_right - labels - 12.0, RIGHT, 1.0, INK);
        y += 14.0;
        self.right(label_right, y, &total, Weight::Bold, TOTAL_SIZE, INK);
        self.right(columns.amount_right, y, &document.total, Weight::Bold, TOTAL_SIZE, INK);
        let last = document.settlement.len().saturating_sub(1);
        y += SETTLEMENT_GAP;
        for (index, line) in document.settlement.iter().enumerate() {
            y += LINE + 2.0;
            // What is due, last, in bold: what the reader is to pay.
            let (weight, color) = if index == last { (Weight::Bold, INK) } else { (Weight::Regular, MUTED) };
            self.right(label_right, y, &line.label, weight, BODY, color);
            self.right(columns.amount_right, y, &line.value, weight, BODY, INK);
        }
        if document.settlement.is_empty() { y - SETTLEMENT_GAP } else { y }
    }

    /// The VAT breakdown's table under the totals (whose last baseline is `above`), its
    /// figures under the table's price and amount columns; returns its last baseline.
    fn vat_breakdown(&mut self, document: &InvoiceDocument, columns: &Columns, above: f32) -> f32 {
        if document.vat_breakdown.is_empty() {
            return above;
        }
        let words = language(document);
        let label = above + PAYMENT_LABEL_GAP;
        self.text(MARGIN, label, &words.term(Term::VatBreakdown), Weight::Bold, SMALL, MUTED);
        let top = label + 6.0;
        self.ops.push(Op::Rect {
            x: MARGIN,
            y: top,
            width: RIGHT - MARGIN,
            height: BREAKDOWN_HEADER_HEIGHT,
            color: HEADER_FILL,
        });
        let (size, header) = (TABLE_HEADER_SIZE, top + 12.5);
        self.text(columns.description_left, header, &words.term(Term::VatRate), Weight::Bold, size, INK);
        self.right(columns.price_right, header, &words.term(Term::TaxableAmount), Weight::Bold, size, INK);
        self.right(columns.amount_right, header, &words.term(Term::VatColumn), Weight::Bold, size, INK);
        let mut bottom = top + BREAKDOWN_HEADER_HEIGHT;
        for row in &document.vat_breakdown {
            let y = bottom + BREAKDOWN_ROW - 5.0;
            self.text(columns.description_left, y, &row.rate, Weight::Regular, BODY, INK);
            self.right(columns.price_right, y, &row.taxable_amount, Weight::Regular, BODY, INK);
            self.right(columns.amount_right, y, &row.tax, Weight::Regular, BODY, INK);
            bottom += BREAKDOWN_ROW;
            self.rule(bottom, MARGIN, RIGHT, 0.5, HAIRLINE);
        }
        bottom - 5.0
    }

    /// The sender's payment details under the totals (whose last baseline is `above`).
    fn payment_details(&mut self, label: &str, lines: &[TextLine], above: f32) {
        if lines.is_empty() {
            return;
        }
        let mut y = above + PAYMENT_LABEL_GAP;
        self.text(MARGIN, y, label, Weight::Bold, SMALL, MUTED);
        for line in lines {
            y += LINE;
            self.line(MARGIN, RIGHT - MARGIN, y, line, Weight::Regular, BODY, INK);
        }
    }

    /// Finds the PAID stamp room: beside the title, between it and the serial and the
    /// facts (which start at `facts_left`), or, where a long title or long facts leave too
    /// little, under the title. Returns the stamp's bottom.
    fn place_stamp(&mut self, document: &InvoiceDocument, facts_left: f32) -> f32 {
        const AIR: f32 = 12.0;
        let (width, height) = stamp_bounds();
        let title = self.title_baseline();
        let title_end = MARGIN + self.fonts.bold.width(&document_title(document), 26.0);
        let serial = self.fonts.bold.truncate(&one_line(&document.serial), 14.0, 220.0);
        let free_end = facts_left.min(RIGHT - self.fonts.bold.width(&serial, 14.0));
        let (x, y) = if free_end - title_end >= width + 2.0 * AIR {
            (f32::midpoint(title_end, free_end), title + 12.0)
        } else {
            (MARGIN + width / 2.0, title + AIR + height / 2.0)
        };
        self.stamp_at = Some((x, y));
        y + height / 2.0
    }

    fn footer(&mut self, document: &InvoiceDocument, page: usize, pages: usize, baseline: f32) {
        self.rule(baseline - 14.0, MARGIN, RIGHT, 0.5, HAIRLINE);
        let (page, pages) = (page.to_string(), pages.to_string());
        let number = language(document).phrase(Term::PageOf, &[("page", &page), ("pages", &pages)]);
        let start = self.right(RIGHT, baseline, &number, Weight::Regular, SMALL, MUTED);
        let left = format!("{} · {}", one_line(&document.serial), one_line(&document.sender.name));
        let left = self.fonts.regular.truncate(&left, SMALL, start - MARGIN - 24.0);
        self.text(MARGIN, baseline, &left, Weight::Regular, SMALL, MUTED);
    }
}

#[cfg(test)]
mod tests {

    use billing::document::SettledLine;

    use super::*;
    use crate::sample::sample_document;

    fn fonts() -> &'static Fonts {
        Fonts::get().unwrap()
    }

    /// A text's box: its width, and from the ascender to the descender of its size.
    fn text_box(op: &Op) -> Option<(f32, f32, f32, f32, &str)> {
        match op {
            Op::Text { x, y, line, size, .. } => {
                let width = line.width(*size);
                Some((*x, y - size * 0.93, x + width, y + size * 0.24, &line.text))
            }
            _ => None,
        }
    }

    fn texts(page: &[Op]) -> Vec<&str> {
        page.iter().filter_map(text_box).map(|b| b.4).collect()
    }

    /// Everything inside the margins, nothing on top of anything else, the table above
    /// the footer.
    fn assert_clean(pages: &[Vec<Op>]) {
        for (number, page) in pages.iter().enumerate() {
            let boxes: Vec<_> = page.iter().filter_map(text_box).collect();
            // A Swiss QR-bill takes the foot of its page, to the paper's edges.
            let slip = page.iter().any(|op| matches!(op, Op::Qr { cross: true, .. }));
            for &(left, top, right, bottom, text) in &boxes {
                if slip && top >= SLIP_TOP - 10.0 {
                    assert!(
                        left >= 0.0 && right <= PAGE_WIDTH && bottom <= PAGE_HEIGHT,
                        "{text:?} leaves the slip"
                    );
                    continue;
                }
                if slip {
                    assert!(bottom <= SLIP_TOP - 2.0, "page {number}: {text:?} runs into the QR-bill");
                }
                assert!(
                    left >= MARGIN - 0.01 && right <= RIGHT + 0.01,
                    "page {number}: {text:?} leaves the margins"
                );
                assert!(
                    top >= 40.0 && bottom <= PAGE_HEIGHT - 30.0,
                    "page {number}: {text:?} leaves the page"
                );
                if !text.starts_with("Page ") && !text.contains(" · ") {
                    assert!(bottom <= CONTENT_BOTTOM + 0.01, "page {number}: {text:?} runs into the footer");
                }
            }
            for (i, a) in boxes.iter().enumerate() {
                for b in &boxes[i + 1..] {
                    let apart = a.2 <= b.0 || b.2 <= a.0 || a.3 <= b.1 || b.3 <= a.1;
                    assert!(apart, "page {number}: {:?} overlaps {:?}", a.4, b.4);
                }
            }
            for (x, y, size) in page.iter().filter_map(|op| match op {
                Op::Qr { x, y, size, .. } => Some((*x, *y, *size)),
                _ => None,
            }) {
                assert!(
                    x >= 0.0 && x + size <= PAGE_WIDTH && y + size <= PAGE_HEIGHT,
                    "the code leaves the page"
                );
                for b in &boxes {
                    let apart = x + size <= b.0 || b.2 <= x || y + size <= b.1 || b.3 <= y;
                    assert!(apart, "page {number}: the QR code covers {:?}", b.4);
                }
            }
            for (x, y) in page.iter().filter_map(|op| match op {
                Op::Stamp { x, y, .. } => Some((*x, *y)),
                _ => None,
            }) {
                let (width, height) = stamp_bounds();
                let (left, top, right, bottom) =
                    (x - width / 2.0, y - height / 2.0, x + width / 2.0, y + height / 2.0);
                assert!(left >= MARGIN - 0.01 && right <= RIGHT + 0.01, "the stamp leaves the margins");
                for b in &boxes {
                    let apart = right <= b.0 || b.2 <= left || bottom <= b.1 || b.3 <= top;
                    assert!(apart, "page {number}: the stamp covers {:?}", b.4);
                }
            }
        }
    }

    #[test]
    fn a_short_invoice_is_one_clean_page() {
        for paid in [false, true] {
            let pages = lay_out(&sample_document(8, paid), fonts(), None);
            assert_eq!(pages.len(), 1);
            assert_clean(&pages);
            assert_eq!(pages[0].iter().any(|op| matches!(op, Op::Stamp { .. })), paid);
            assert!(texts(&pages[0]).contains(&"Page 1 of 1"));
        }
    }

    #[test]
    fn a_logo_fits_its_box_above_the_title_and_overlaps_nothing() {
        for aspect in [(400.0, 100.0), (50.0, 200.0), (1.0, 1.0)] {
            let pages = lay_out(&sample_document(8, true), fonts(), Some(aspect));
            assert_clean(&pages);
            let Some(&Op::Logo { x, y, width, height }) =
                pages[0].iter().find(|op| matches!(op, Op::Logo { .. }))
            else {
                panic!("no logo")
            };
            assert!(width <= LOGO_MAX_WIDTH + 1e-3 && height <= LOGO_MAX_HEIGHT + 1e-3, "{width} x {height}");
            assert!((width / height - aspect.0 / aspect.1).abs() < 1e-3, "not distorted");
            assert!(x >= MARGIN && y >= 30.0);
            for (left, top, right, bottom, text) in pages[0].iter().filter_map(text_box) {
                let apart = right <= x || left >= x + width || bottom <= y || top >= y + height;
                assert!(apart, "{text:?} overlaps the logo");
            }
            let Some(&Op::Stamp { y: stamp, .. }) = pages[0].iter().find(|op| matches!(op, Op::Stamp { .. }))
            else {
                panic!("no stamp")
            };
            assert!(stamp - STAMP_HEIGHT / 2.0 > y + height - 10.0, "the stamp follows the title down");
            assert!(
                pages.iter().skip(1).flatten().all(|op| !matches!(op, Op::Logo { .. })),
                "first page only"
            );
        }
    }

    fn stamp_of(page: &[Op]) -> (f32, f32) {
        page.iter()
            .find_map(|op| match op {
                Op::Stamp { x, y, .. } => Some((*x, *y)),
                _ => None,
            })
            .expect("a stamp")
    }

    #[test]
    fn the_stamp_sits_beside_the_title_or_under_it_where_the_facts_are_long() {
        let mut short = sample_document(1, true);
        short.supply.clear();
        let pages = lay_out(&short, fonts(), None);
        assert_clean(&pages);
        let (x, _) = stamp_of(&pages[0]);
        let title_end = MARGIN + fonts().bold.width("Invoice", 26.0);
        assert!(x - stamp_bounds().0 / 2.0 > title_end, "beside the title");

        // A long title and long facts leave no room beside it: it goes under the title, and
        // the parties move down to make room.
        let mut long = sample_document(1, true);
        long.title = Some("Rechnungskorrektur".to_owned());
        long.supply.push(SettledLine {
            label: "Leistungszeitraum".to_owned(),
            value: "1. November 2026 bis 30. November 2026".to_owned(),
        });
        let pages = lay_out(&long, fonts(), None);
        assert_clean(&pages);
        let (x, y) = stamp_of(&pages[0]);
        assert!(x < MARGIN + stamp_bounds().0, "under the title");
        assert!(y > TITLE_BASELINE, "under the title");
    }

    #[test]
    fn numbers_end_on_their_column_edge() {
        let document = sample_document(8, false);
        let columns = Columns::measure(&document, fonts());
        let pages = lay_out(&document, fonts(), None);
        let ends = |wanted: &str| -> Vec<f32> {
            pages[0]
                .iter()
                .filter_map(|op| match op {
                    Op::Text { x, line, size, .. } if line.text == wanted => Some(x + line.width(*size)),
                    _ => None,
                })
                .collect()
        };
        for line in &document.lines {
            for (text, right) in [
                (&line.quantity, columns.quantity_right),
                (&line.unit_price, columns.price_right),
                (&line.amount, columns.amount_right),
            ] {
                let ends = ends(text);
                assert!(
                    ends.iter().any(|end| (end - right).abs() < 1e-3),
                    "{text:?} ends at {ends:?}, not {right}"
                );
            }
        }
        for total in [&document.subtotal, &document.tax, &document.total] {
            assert!(ends(total).iter().any(|end| (end - columns.amount_right).abs() < 1e-3), "{total:?}");
        }
    }

    #[test]
    fn long_invoices_repeat_the_header_and_number_every_page() {
        let document = sample_document(120, false);
        let pages = lay_out(&document, fonts(), None);
        assert!(pages.len() > 2);
        assert_clean(&pages);
        for (index, page) in pages.iter().enumerate() {
            let texts = texts(page);
            assert!(texts.contains(&"Description"), "page {index} has no table header");
            assert!(texts.contains(&format!("Page {} of {}", index + 1, pages.len()).as_str()));
        }
        let totals_page = pages.iter().position(|page| texts(page).contains(&"Subtotal")).unwrap();
        assert_eq!(totals_page, pages.len() - 1);
    }

    #[test]
    fn the_totals_never_sit_alone_on_a_page() {
        // Grow the invoice a row at a time so that the totals fall at every place of the
        // page break at least once.
        for items in 20..60 {
            let pages = lay_out(&sample_document(items, false), fonts(), None);
            let last = pages.last().unwrap();
            assert!(texts(last).contains(&"Description"), "{items} items: totals alone on a page");
            assert_clean(&pages);
        }
    }

    #[test]
    fn payment_details_follow_the_totals_and_stay_off_the_footer() {
        let one_page = lay_out(&sample_document(3, false), fonts(), None);
        let shown = texts(&one_page[0]);
        let label = shown.iter().position(|t| *t == "PAYMENT DETAILS").expect("the label");
        assert!(label > shown.iter().position(|t| *t == "Total").unwrap(), "under the totals");
        assert!(shown[label + 1].starts_with("Berliner Sparkasse · IBAN"), "{shown:?}");
        assert!(shown[label + 2].starts_with("Payable within 14 days"), "{shown:?}");
        // Long details, with the totals falling at every place of the page break: they move
        // to the next page with the totals, never into the footer.
        for items in 20..60 {
            let mut document = sample_document(items, false);
            document.payment_details = Some("IBAN DE89 3704 0044 0532 0130 00\n".repeat(8));
            let pages = lay_out(&document, fonts(), None);
            let last = texts(pages.last().unwrap());
            assert!(last.contains(&"Total") && last.contains(&"PAYMENT DETAILS"), "{items} items");
            assert_clean(&pages);
        }
        let mut none = sample_document(3, false);
        none.payment_details = None;
        assert!(!texts(&lay_out(&none, fonts(), None)[0]).contains(&"PAYMENT DETAILS"));
    }

    #[test]
    fn the_vat_breakdown_is_a_table_between_the_totals_and_the_payment_details() {
        let with_breakdown = |items| {
            let mut document = sample_document(items, false);
            document.tax_label = "Tax".to_owned();
            document.vat_breakdown = ["7%", "19%", "0% reverse charge"]
                .map(|rate| billing::document::VatRow {
                    rate: rate.to_owned(),
                    taxable_amount: "1,234.56 EUR".to_owned(),
                    tax: "86.42 EUR".to_owned(),
                })
                .to_vec();
            document
        };
        let document = with_breakdown(3);
        let columns = Columns::measure(&document, fonts());
        let page = &lay_out(&document, fonts(), None)[0];
        let shown = texts(page);
        let at = |wanted: &str| shown.iter().position(|t| *t == wanted).unwrap_or_else(|| panic!("{wanted}"));
        assert!(at("Total") < at("VAT breakdown") && at("VAT breakdown") < at("PAYMENT DETAILS"));
        assert_eq!(&shown[at("VAT rate")..at("VAT rate") + 3], ["VAT rate", "Taxable amount", "VAT"]);
        assert_eq!(shown.iter().filter(|t| **t == "86.42 EUR").count(), 3);
        assert!(shown.contains(&"0% reverse charge"));
        let ends: Vec<f32> = page
            .iter()
            .filter_map(|op| match op {
                Op::Text { x, line, size, .. } if line.text == "86.42 EUR" => Some(x + line.width(*size)),
                _ => None,
            })
            .collect();
        assert!(ends.iter().all(|end| (end - columns.amount_right).abs() < 1e-3), "under the amounts");
        // It moves with the totals, and never into the footer.
        for items in 20..60 {
            let pages = lay_out(&with_breakdown(items), fonts(), None);
            let last = texts(pages.last().unwrap());
            assert!(last.contains(&"Total") && last.contains(&"VAT breakdown"), "{items} items");
            assert_clean(&pages);
        }
    }

    fn codes(pages: &[Vec<Op>]) -> Vec<(usize, f32, f32, bool)> {
        pages
            .iter()
            .enumerate()
            .flat_map(|(index, page)| {
                page.iter().filter_map(move |op| match op {
                    Op::Qr { x, y, cross, .. } => Some((index, *x, *y, *cross)),
                    _ => None,
                })
            })
            .collect()
    }

    #[test]
    fn an_epc_code_stands_beside_the_payment_details_on_the_last_page() {
        for items in [3, 20, 30, 40, 50] {
            let mut document = sample_document(items, false);
            document.payment_qr = Some(crate::sample::sample_epc_code());
            let pages = lay_out(&document, fonts(), None);
            assert_clean(&pages);
            let [(page, x, _, cross)] = codes(&pages)[..] else { panic!("one code") };
            assert_eq!((page, cross), (pages.len() - 1, false), "{items} items");
            assert!((x + EPC_SIZE - RIGHT).abs() < 0.01, "at the right edge");
            assert!(texts(&pages[page]).contains(&"Scan with your banking app to pay"));
        }
    }

    #[test]
    fn a_swiss_qr_bill_takes_the_foot_of_the_last_page_or_a_page_of_its_own() {
        let mut fitted = false;
        let mut own_page = false;
        for items in 1..40 {
            let mut document = sample_document(items, false);
            document.payment_qr = Some(crate::sample::sample_swiss_bill());
            let pages = lay_out(&document, fonts(), None);
            assert_clean(&pages);
            let [(page, x, y, cross)] = codes(&pages)[..] else { panic!("one code") };
            assert!(cross && page == pages.len() - 1, "{items} items");
            // SIX: the code 67 mm from the left edge and 17 mm below the slip's top.
            assert!(
                (x - 67.0 * super::super::qr::MM).abs() < 0.01
                    && (y - SLIP_TOP - 17.0 * super::super::qr::MM).abs() < 0.01
            );
            let shown = texts(&pages[page]);
            for label in ["Receipt", "Payment part", "Account / Payable to", "Acceptance point", "16 480.31"]
            {
                assert!(shown.contains(&label), "{label} in {shown:?}");
            }
            // SIX allows only Arial, Frutiger, Helvetica or Liberation Sans on the slip; the
            // invoice above it keeps its own face.
            for op in &pages[page] {
                if let Op::Text { y, line, .. } = op {
                    let on_slip = *y >= SLIP_TOP - 4.0;
                    for run in &line.runs {
                        assert_eq!(run.face.name.starts_with("Liberation Sans"), on_slip, "{:?}", line.text);
                    }
                }
            }
            let totals_here = shown.contains(&"Total");
            fitted |= totals_here;
            own_page |= !totals_here;
        }
        assert!(fitted && own_page, "both placements were tried");
    }

    #[test]
    fn a_row_taller_than_a_page_continues_on_the_next() {
        let mut document = sample_document(3, false);
        document.lines[1].description = "Very long description of the work done. ".repeat(400);
        let pages = lay_out(&document, fonts(), None);
        assert!(pages.len() >= 3, "{} pages", pages.len());
        assert_clean(&pages);
        // The amount is printed once, with the row's first line.
        let amount = &document.lines[1].amount;
        let printed = pages.iter().flat_map(|page| texts(page)).filter(|t| t == amount).count();
        assert!(printed >= 1);
        let words = pages
            .iter()
            .flat_map(|page| texts(page))
            .map(|t| t.matches("description").count())
            .sum::<usize>();
        assert_eq!(words, 400);
    }

    #[test]
    fn long_names_and_addresses_wrap_inside_their_column() {
        let mut document = sample_document(2, true);
        document.sender.name =
            "Billable Studio für Gestaltung und Softwareentwicklung GmbH & Co. KG".to_owned();
        document.client.address =
            vec!["Apartment 12, Building C, Very Long Street Name of the Old Town 1234".to_owned()];
        document.description = Some("A description that goes on. ".repeat(30));
        let pages = lay_out(&document, fonts(), None);
        assert_clean(&pages);
        for page in &pages {
            for op in page {
                if let Some((left, _, right, _, text)) = text_box(op)
                    && left < BILL_TO_LEFT
                    && right > BILL_TO_LEFT
                {
                    // Only full-width content may cross into the "Bill to" column.
                    let full_width = matches!(op, Op::Text { y, .. } if *y < 150.0 || *y > CONTENT_BOTTOM);
                    let party = text.contains("Billable") || text.contains("Studio");
                    assert!(full_width || !party, "{text:?} crosses into the Bill to column");
                }
            }
        }
    }

    #[test]
    fn an_invoice_without_lines_still_shows_its_table_and_totals() {
        let mut document = sample_document(0, false);
        document.description = None;
        document.due_date = None;
        let pages = lay_out(&document, fonts(), None);
        assert_eq!(pages.len(), 1);
        assert_clean(&pages);
        let texts = texts(&pages[0]);
        assert!(texts.contains(&"Description") && texts.contains(&"Total"));
        assert!(!texts.contains(&"Due date"));
    }
}
