//! Times the e-invoice exports of a one-page invoice beside its plain PDF, measured in the
//! same run: the XRechnung UBL and CII XML, and the Factur-X PDF (PDF/A-3b, the XML
//! embedded, the XMP rewritten):
//! `cargo run --release -p einvoice --example einvoice_bench [-- --runs N]`.
//!
//! Prints one line per figure, `plain PDF: median 1.23 ms, p99 1.80 ms (n=500)`, then the
//! Factur-X PDF's median as a multiple of the plain PDF's (the target: under 2×).

#![expect(clippy::print_stdout, reason = "printing the figures is the point")]

use std::time::Instant;

use billing::VatCategory;
use billing::einvoice::Format;
use billing::einvoice::{
    Contact, DocumentKind, EInvoice, Line, Party, PayeeAccount, Profile, Totals, VatBreakdown,
};
use einvoice::write;
use renderer::{page_count, render_pdf, sample_document};
use rust_decimal::Decimal;

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
    let plain = sample_document(5, false);
    anyhow::ensure!(page_count(&plain)? == 1, "the 5-item invoice should fill one page");
    let xrechnung = e_invoice(Profile::XRechnung, 5);
    let mut facturx = plain.clone();
    facturx.facturx_xml = Some(write(Format::FacturX, &e_invoice(Profile::En16931, 5)));

    let ubl =
        median_of("XRechnung UBL XML", runs * 10, || Ok(write(Format::XRechnungUbl, &xrechnung).len()))?;
    let cii =
        median_of("XRechnung CII XML", runs * 10, || Ok(write(Format::XRechnungCii, &xrechnung).len()))?;
    let plain_ms = median_of("plain PDF", runs, || Ok(render_pdf(&plain)?.len()))?;
    let facturx_ms = median_of("Factur-X PDF", runs, || Ok(render_pdf(&facturx)?.len()))?;
    eprintln!("  XML: UBL {ubl:.3} ms, CII {cii:.3} ms");
    println!("Factur-X PDF / plain PDF: {:.2}x (target: under 2x)", facturx_ms / plain_ms);
    Ok(())
}

/// Runs `make` `n` times after a warm-up; prints and returns the median in milliseconds.
fn median_of(name: &str, n: usize, mut make: impl FnMut() -> anyhow::Result<usize>) -> anyhow::Result<f64> {
    let bytes = make()?;
    for _ in 0..n / 10 + 5 {
        std::hint::black_box(make()?);
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        std::hint::black_box(make()?);
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let (median, p99) = (times[times.len() / 2], times[(times.len() * 99).div_ceil(100) - 1]);
    println!("{name}: median {median:.3} ms, p99 {p99:.3} ms (n={n}, {} KiB)", bytes / 1024);
    Ok(median)
}

fn party(name: &str, city: &str, country: &'static str) -> Party {
    Party {
        name: name.to_owned(),
        street: Some("Hauptstraße 1".to_owned()),
        additional_street: None,
        address_line: None,
        city: Some(city.to_owned()),
        postal_code: Some("10115".to_owned()),
        country,
        vat_id: Some("DE123456789".to_owned()),
        electronic_address: Some("billing@example.com".to_owned()),
    }
}

/// A standard-rated invoice of `lines` lines of 120.00 at 19 %.
fn e_invoice(profile: Profile, lines: u32) -> EInvoice {
    let amount = Decimal::new(12_000, 2);
    let subtotal = amount * Decimal::from(lines);
    let tax = (subtotal * Decimal::new(19, 2)).round_dp(2);
    EInvoice {
        profile,
        kind: DocumentKind::Invoice,
        number: "INV-0001".to_owned(),
        issue_date: chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap_or_default(),
        due_date: chrono::NaiveDate::from_ymd_opt(2026, 12, 2),
        payment_terms: None,
        currency: "EUR",
        tax_currency: None,
        note: Some("Services of October 2026".to_owned()),
        buyer_reference: Some("04011000-12345-34".to_owned()),
        purchase_order: None,
        invoice_period: None,
        preceding_invoice: None,
        seller: party("Muster GmbH", "Berlin", "DE"),
        seller_contact: Some(Contact {
            name: Some("Erika Mustermann".to_owned()),
            phone: Some("+49 30 1234567".to_owned()),
            email: Some("erika@muster.example".to_owned()),
        }),
        buyer: party("Bundesamt für Beispiele", "Bonn", "DE"),
        payee_account: Some(PayeeAccount { iban: "DE02120300000000202051".to_owned(), bic: None }),
        delivery: None,
        vat: vec![VatBreakdown {
            category: VatCategory::Standard,
            rate: Some(Decimal::from(19)),
            taxable: subtotal,
            tax,
            exemption_reason: None,
        }],
        lines: (1..=lines)
            .map(|id| Line {
                id,
                name: format!("Consulting, week {id}"),
                quantity: Decimal::ONE,
                unit_code: "HUR".to_owned(),
                net_price: amount,
                amount,
                category: VatCategory::Standard,
                rate: Some(Decimal::from(19)),
            })
            .collect(),
        totals: Totals {
            lines: subtotal,
            tax_exclusive: subtotal,
            tax,
            tax_inclusive: subtotal + tax,
            prepaid: Decimal::ZERO,
            payable: subtotal + tax,
        },
    }
}
