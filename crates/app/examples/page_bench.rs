//! Times the client's page beside the PDF of the same invoice: the multilingual sample
//! (5 items, logo) with its payment QR code, an EPC code and then a Swiss QR-bill, put into
//! HTML by `pages` and into a PDF by the built-in renderer, in one process and one run:
//! `cargo run --release -p app --example page_bench [-- --runs N]`.
//!
//! Prints per QR format `page epc: median 0.05 ms, p99 0.07 ms (n=500)`, the PDF's line
//! likewise, and `ratio page/pdf epc: 0.02 (target < 0.20: met)`.

#![expect(clippy::print_stdout, reason = "printing the figures is the point")]

use std::time::Instant;

use billing::document::{BankDetails, DocumentQr, InvoicePage};
use billing::{InvoiceDocument, PageRenderer as _};
use renderer::{multilingual_document, render_pdf, sample_epc_code, sample_swiss_bill};

/// The target: the page in under a fifth of the PDF's time.
const TARGET: f64 = 0.2;

fn main() -> anyhow::Result<()> {
    let mut runs = 500;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => {
                runs = args.next().ok_or_else(|| anyhow::anyhow!("--runs needs a number"))?.parse()?;
            }
            other => anyhow::bail!("unknown argument {other:?}; use [--runs N]"),
        }
    }
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; the figures mean something only with --release");
    }
    for (format, qr) in [("epc", sample_epc_code()), ("swiss", sample_swiss_bill())] {
        let page = page_of(document_with(qr));
        let html = pages::Pages.invoice_page(&page);
        anyhow::ensure!(html.contains("<svg"), "the {format} page should draw its QR code");
        let page_ms = timed(&format!("page {format}"), runs, || {
            std::hint::black_box(pages::Pages.invoice_page(std::hint::black_box(&page)));
            Ok(())
        })?;
        let pdf_ms = timed(&format!("pdf {format}"), runs, || {
            std::hint::black_box(render_pdf(std::hint::black_box(&page.document))?);
            Ok(())
        })?;
        let ratio = page_ms / pdf_ms;
        let met = if ratio < TARGET { "met" } else { "not met" };
        println!("ratio page/pdf {format}: {ratio:.3} (target < {TARGET:.2}: {met})");
        eprintln!("  {format}: page {} KiB of HTML", html.len() / 1024);
    }
    Ok(())
}

fn document_with(qr: DocumentQr) -> InvoiceDocument {
    let mut document = multilingual_document(5, false);
    document.payment_qr = Some(qr);
    document
}

/// The page as the server makes it for an open invoice of a team that takes cards.
fn page_of(document: InvoiceDocument) -> InvoicePage {
    InvoicePage {
        state: "open",
        amount_due: document.total.clone(),
        settled: false,
        bank: Some(BankDetails {
            holder: "Billable Studio GmbH".to_owned(),
            iban: "DE02 1203 0000 0000 2020 51".to_owned(),
            bic: Some("BYLADEM1001".to_owned()),
            reference: "RF40 INV0 001".to_owned(),
        }),
        pdf_url: "/v1/invoices/pdf?id=sample".to_owned(),
        facturx_url: "/v1/invoices/pdf?id=sample&format=facturx".to_owned(),
        pay_by_card: Some("/invoices/sample/pay".to_owned()),
        notice: None,
        document,
    }
}

/// Runs `work` `runs` times after a warm-up, prints its median and p99 as `name`, and
/// answers the median in milliseconds.
fn timed(name: &str, runs: usize, mut work: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    for _ in 0..runs / 10 + 5 {
        work()?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        work()?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let p99 = times[(times.len() * 99).div_ceil(100) - 1];
    println!("{name}: median {median:.3} ms, p99 {p99:.3} ms (n={runs})");
    Ok(median)
}
