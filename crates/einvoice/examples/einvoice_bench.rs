//! Times the e-invoice exports of a one-page invoice beside its plain PDF, measured in the
//! same run: the XRechnung UBL and CII XML, and the Factur-X PDF (PDF/A-3b, the XML
//! embedded, the XMP rewritten):
//! `cargo run --release -p einvoice --example einvoice_bench [-- --runs N]`.
//!
//! Prints one line per figure, `plain PDF: median 1.23 ms, p99 1.80 ms (n=500)`, then the
//! Factur-X PDF's median as a multiple of the plain PDF's (the target: under 2×). Then an
//! invoice of 1,000 lines priced and exported as UBL, its lines over 5 VAT rates with
//! discounts beside the same lines at one rate without (the target: under 2×).

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

    let one_rate = median_of("1,000 lines at one rate, made and exported", runs, || made_and_exported(1))?;
    let five_rates = median_of("1,000 lines over 5 rates with discounts, made and exported", runs, || {
        made_and_exported(5)
    })?;
    println!("5 rates / 1 rate: {:.2}x (target: under 2x)", five_rates / one_rate);
    Ok(())
}

/// An invoice of 1,000 lines over `rates` VAT rates (with a discount on every other line
/// and one of the whole where there are several) priced as `POST /v1/invoices` prices it,
/// then exported as `GET …/e-invoice?format=xrechnung-ubl` exports it; the XML's length.
fn made_and_exported(rates: usize) -> anyhow::Result<usize> {
    use billing::invoice::{Description, LineInput, LineVat, TaxRule, price_lines};
    use kernel::Id;
    let currency = valid(billing::money::Currency::parse("EUR"))?;
    let now = chrono::Utc::now();
    let percentages = [19, 7, 10, 20, 5].map(Decimal::from);
    let inputs = (0..1000_u32)
        .map(|i| {
            Ok(LineInput {
                description: valid(Description::parse(format!("Leistung {i}")))?,
                unit_price: Decimal::new(12_345, 2),
                quantity: Decimal::new(i64::from(i % 7 + 1), 0),
                amount: None,
                unit_code: None,
                vat: LineVat { percentage: Some(percentages[i as usize % rates]), ..LineVat::default() },
                discount: (rates > 1 && i % 2 == 0)
                    .then_some(billing::Discount::Percentage(Decimal::new(5, 0))),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let line_items = valid(price_lines(inputs, currency, now))?;
    let (vat, tax_rule) = (billing::Vat::default(), TaxRule::Percentage(percentages[0]));
    let discount = (rates > 1).then_some(billing::Discount::Amount(Decimal::new(10_000, 2)));
    let pricing = billing::Pricing { items: &line_items, vat: &vat, rule: tax_rule, discount, currency };
    let totals = valid(pricing.totals(None))?;
    let (client, sender) = parties(now)?;
    let invoice = billing::Invoice {
        payment_reference: billing::PaymentReference::creditor("INV-0001"),
        id: Id::generate(),
        team_id: Id::generate(),
        serial: billing::Serial::FIRST,
        number: billing::Series::Invoices.default_pattern().number(1, now),
        description: None,
        issue_date: now,
        due_date: Some(now),
        status: billing::InvoiceStatus::Pending,
        currency,
        tax_rule,
        discount,
        totals,
        balance: billing::Balance::unpaid(totals.total),
        client_id: client.id,
        sender_id: sender.id,
        line_items,
        chasing: billing::Chasing::default(),
        recurrence: None,
        vat,
        exchange: billing::Exchange::none(currency),
        supply: billing::Supply::default(),
        from_quote: None,
        created_at: now,
        updated_at: now,
    };
    let parties = billing::einvoice::Parties { client: &client, sender: &sender };
    let e_invoice = valid(EInvoice::of_invoice(Profile::XRechnung, &invoice, &parties))?;
    anyhow::ensure!(e_invoice.vat.len() == rates, "{} VAT groups", e_invoice.vat.len());
    Ok(write(Format::XRechnungUbl, &e_invoice).len())
}

/// `result`, its error as text: the domain's refusals are not `std::error::Error`s.
fn valid<T, E: std::fmt::Display>(result: Result<T, E>) -> anyhow::Result<T> {
    result.map_err(|e| anyhow::anyhow!("{e}"))
}

/// A German public buyer and a seller with all an XRechnung needs.
fn parties(now: chrono::DateTime<chrono::Utc>) -> anyhow::Result<(billing::Client, billing::SenderAddress)> {
    use billing::client::{OptionalText, RequiredText};
    use kernel::{Email, Id};
    let text = |value: &str| valid(OptionalText::parse(value));
    let mut details = billing::SenderDetails::named(valid(RequiredText::parse("Muster GmbH"))?);
    details.city = text("Berlin")?;
    details.postal_code = valid(billing::sender::SenderPostalCode::parse("10115"))?;
    details.country_code = Some(valid(billing::CountryCode::parse("DE"))?);
    details.vat_number = text("DE123456789")?;
    details.iban = Some(valid(billing::Iban::parse("DE02120300000000202051"))?);
    details.contact_name = text("Erika Mustermann")?;
    details.contact_phone = text("+49 30 1234567")?;
    details.contact_email = Some(valid(Email::parse("erika@muster.example"))?);
    let team = Id::generate();
    let sender = billing::SenderAddress {
        id: Id::generate(),
        team_id: team,
        details,
        created_at: now,
        updated_at: now,
    };
    let client = billing::ClientDetails {
        language: None,
        name: valid(RequiredText::parse("Bundesamt"))?,
        email: valid(Email::parse("amt@buyer.example"))?,
        phone: text("")?,
        vat_number: text("DE987654321")?,
        line1: text("Amtsweg 2")?,
        line2: text("")?,
        line3: text("")?,
        postal_code: valid(billing::client::KeptPostalCode::parse("53113"))?,
        city: text("Bonn")?,
        country_code: Some(valid(billing::CountryCode::parse("DE"))?),
        buyer_reference: text("04011000-12345-34")?,
        reminders_enabled: true,
        currency: None,
        payment_terms: None,
        peppol_id: None,
    };
    Ok((billing::Client::new(team, client, now), sender))
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
        electronic_address: Some(billing::einvoice::ElectronicAddress {
            scheme: "EM",
            id: "billing@example.com".to_owned(),
        }),
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
        payment_reference: Some("RF97INV0042".to_owned()),
        delivery: None,
        vat: vec![VatBreakdown {
            category: VatCategory::Standard,
            rate: Some(Decimal::from(19)),
            taxable: subtotal,
            tax,
            exemption_reason: None,
        }],
        allowances: Vec::new(),
        lines: (1..=lines)
            .map(|id| Line {
                id,
                name: format!("Consulting, week {id}"),
                quantity: Decimal::ONE,
                unit_code: "HUR".to_owned(),
                net_price: amount,
                amount,
                allowance: None,
                category: VatCategory::Standard,
                rate: Some(Decimal::from(19)),
            })
            .collect(),
        totals: Totals {
            lines: subtotal,
            allowances: None,
            tax_exclusive: subtotal,
            tax,
            tax_inclusive: subtotal + tax,
            prepaid: Decimal::ZERO,
            payable: subtotal + tax,
        },
    }
}
