//! Times the built-in renderer on the multilingual sample (Latin, Greek, Cyrillic, Hebrew,
//! Arabic and Persian items, billed to a Japanese client, and on ten pages also Devanagari,
//! Thai, Chinese and Korean), as a 1-page invoice (5 items) and a 10-page one:
//! `cargo run --release -p renderer --example render_bench [-- --runs N] [--html DIR]`.
//!
//! Prints one line per document, `render 1-page: median 1.23 ms, p99 1.80 ms (n=500)`.
//! With `--html DIR`, also writes the same two invoices as simple HTML pages
//! (`DIR/invoice-1-page.html`, `DIR/invoice-10-page.html`), so that `scripts/bench-pdf.sh`
//! can time a headless browser printing them.

#![expect(clippy::print_stdout, reason = "printing the figures is the point")]

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use billing::InvoiceDocument;
use renderer::{multilingual_document, page_count, render_pdf};

fn main() -> anyhow::Result<()> {
    let mut runs = 500;
    let mut html_dir: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                runs = args.next().ok_or_else(|| anyhow::anyhow!("--runs needs a number"))?.parse()?;
            }
            "--html" => {
                html_dir =
                    Some(args.next().ok_or_else(|| anyhow::anyhow!("--html needs a directory"))?.into());
            }
            other => anyhow::bail!("unknown argument {other:?}; use [--runs N] [--html DIR]"),
        }
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; the figures mean something only with --release");
    }

    let one_page = multilingual_document(5, false);
    anyhow::ensure!(page_count(&one_page)? == 1, "the 5-item invoice should fill one page");
    let ten_pages = document_of_pages(10)?;

    if let Some(dir) = &html_dir {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("invoice-1-page.html"), html(&one_page))?;
        std::fs::write(dir.join("invoice-10-page.html"), html(&ten_pages))?;
        eprintln!("wrote {0}/invoice-1-page.html and {0}/invoice-10-page.html", dir.display());
    }

    for (name, document, n) in [("1-page", &one_page, runs), ("10-page", &ten_pages, (runs / 5).max(20))] {
        let bytes = render_pdf(document)?.len();
        for _ in 0..n / 10 + 5 {
            std::hint::black_box(render_pdf(std::hint::black_box(document))?);
        }
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let started = Instant::now();
            std::hint::black_box(render_pdf(std::hint::black_box(document))?);
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let p99 = times[(times.len() * 99).div_ceil(100) - 1];
        println!("render {name}: median {median:.2} ms, p99 {p99:.2} ms (n={n})");
        eprintln!("  {name}: {} line items, {} KiB", document.lines.len(), bytes / 1024);
    }
    Ok(())
}

/// The sample invoice with just enough line items to fill `pages` pages.
fn document_of_pages(pages: usize) -> anyhow::Result<InvoiceDocument> {
    // Pages grow with items: find the fewest items that make `pages`.
    let (mut low, mut high) = (1, 1000);
    while low < high {
        let middle = usize::midpoint(low, high);
        if page_count(&multilingual_document(middle, false))? >= pages {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    let document = multilingual_document(low, false);
    let made = page_count(&document)?;
    anyhow::ensure!(made == pages, "{low} items make {made} pages, not {pages}");
    Ok(document)
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

fn party_html(label: &str, party: &billing::document::Party) -> String {
    let mut out = format!("<div class=\"party\"><h3>{label}</h3><strong>{}</strong>", escape(&party.name));
    for line in party.address.iter().chain(&party.email) {
        let _ = write!(out, "<br>{}", escape(line));
    }
    if let Some(vat) = &party.vat_number {
        let _ = write!(out, "<br>VAT: {}", escape(vat));
    }
    out.push_str("</div>");
    out
}

/// The invoice as one HTML page with print CSS, showing what the PDF shows, the way an
/// HTML-to-PDF invoicing product would template it.
fn html(document: &InvoiceDocument) -> String {
    let mut rows = String::new();
    for line in &document.lines {
        let _ = write!(
            rows,
            "<tr><td dir=\"auto\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&line.description),
            escape(&line.quantity),
            escape(&line.unit_price),
            escape(&line.amount)
        );
    }
    let due =
        document.due_date.as_deref().map(|due| format!("<tr><th>Due date</th><td>{}</td></tr>", escape(due)));
    let stamp = if document.paid { "<div class=\"stamp\">PAID</div>" } else { "" };
    let description =
        document.description.as_deref().map(|d| format!("<p>{}</p>", escape(d))).unwrap_or_default();
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice {serial}</title>
<style>
@page {{ size: A4; margin: 18mm 18mm 20mm; @bottom-right {{ content: "Page " counter(page) " of " counter(pages); }} }}
body {{ font-family: "DejaVu Sans", sans-serif; font-size: 9.5pt; color: #212529; margin: 0; }}
header {{ display: flex; justify-content: space-between; border-bottom: 1px solid #dee2e6; padding-bottom: 10pt; }}
h1 {{ font-size: 26pt; margin: 0; }}
.facts {{ text-align: right; }} .facts th {{ color: #6c757d; font-weight: normal; padding-right: 12pt; }}
.parties {{ display: flex; margin: 16pt 0; }} .party {{ width: 50%; line-height: 1.4; }}
.party h3 {{ font-size: 8pt; color: #6c757d; margin: 0 0 4pt; }}
table.items {{ width: 100%; border-collapse: collapse; }}
table.items thead th {{ background: #f1f3f5; font-size: 8.5pt; text-align: left; padding: 7pt 8pt; }}
table.items td {{ border-bottom: 0.5pt solid #dee2e6; padding: 6pt 8pt; vertical-align: top; }}
table.items .n {{ text-align: right; white-space: nowrap; }}
table.totals {{ margin-left: auto; margin-top: 12pt; }} table.totals td {{ text-align: right; padding: 2pt 8pt; }}
table.totals tr.total td {{ font-weight: bold; font-size: 12pt; border-top: 1pt solid #212529; }}
.stamp {{ position: absolute; top: 10pt; left: 40%; transform: rotate(-12deg); border: 3pt solid #198754;
  color: #198754; font-weight: bold; font-size: 28pt; padding: 2pt 14pt; opacity: 0.85; }}
</style></head><body>
{stamp}
<header><h1>Invoice</h1><div class="facts"><strong style="font-size:14pt">{serial}</strong>
<table><tr><th>Issue date</th><td>{issue}</td></tr>{due}<tr><th>Status</th><td>{status}</td></tr></table></div></header>
<div class="parties">{from}{to}</div>
{description}
<table class="items"><thead><tr><th>Description</th><th class="n">Quantity</th><th class="n">Unit price</th><th class="n">Amount</th></tr></thead>
<tbody>{rows}</tbody></table>
<table class="totals"><tr><td>Subtotal</td><td>{subtotal}</td></tr><tr><td>{tax_label}</td><td>{tax}</td></tr>
<tr class="total"><td>Total</td><td>{total}</td></tr></table>
</body></html>
"#,
        serial = escape(&document.serial),
        issue = escape(&document.issue_date),
        due = due.unwrap_or_default(),
        status = escape(&document.status),
        from = party_html("FROM", &document.sender),
        to = party_html("BILL TO", &document.client),
        subtotal = escape(&document.subtotal),
        tax_label = escape(&document.tax_label),
        tax = escape(&document.tax),
        total = escape(&document.total),
    )
}
