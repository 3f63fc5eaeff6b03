//! The built-in renderer's PDFs read back with poppler (`pdftotext`, `pdfinfo`) and checked
//! with `qpdf`; the renderer service and the proxy over real sockets.
//!
//! The tools are required: without poppler-utils and qpdf these tests fail, they never
//! skip.

#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "tests")]

mod support;

use std::time::{Duration, Instant};

use billing::InvoiceRenderer;
use billing::document::DocumentLine;
use renderer::{BuiltinRenderer, ProxyRenderer, page_count, render_pdf, sample_document};
use support::{assert_valid, cells, folded_text, layout_text, page_text, pages_of, run};

const CLIENT: &str = "Zoë Łukasiewicz — Ёлка ΑΒΓ";

#[test]
fn every_part_of_the_invoice_is_text_in_its_place() {
    let document = sample_document(8, false);
    assert_eq!(document.client.name, CLIENT);
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    assert_eq!(pages_of(&pdf), 1);
    let text = layout_text(&pdf);

    let mut expected = vec![
        "Invoice",
        &document.serial,
        &document.issue_date,
        document.due_date.as_deref().unwrap(),
        &document.status,
        "FROM",
        "BILL TO",
        CLIENT,
        &document.sender.name,
        "VAT: DE312456789",
        "VAT: EL094259216",
        "Subtotal",
        &document.subtotal,
        &document.tax_label,
        &document.tax,
        "Total",
        &document.total,
        "PAYMENT DETAILS",
        "Berliner Sparkasse · IBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX",
        "Payable within 14 days of the issue date; please quote INV-0042.",
        "Page 1 of 1",
    ];
    for party in [&document.sender, &document.client] {
        expected.extend(party.address.iter().map(String::as_str));
        expected.push(party.email.as_deref().unwrap());
    }
    for needle in expected {
        assert!(text.contains(needle), "{needle:?} is missing from:\n{text}");
    }

    // Each line item: its description (maybe wrapped), and on its first line the
    // quantity, unit price and amount, in that order, as the last three cells.
    let folded = folded_text(&pdf);
    for line in &document.lines {
        assert!(folded.contains(&line.description), "{:?} is missing from:\n{folded}", line.description);
        let numbers = [line.quantity.as_str(), line.unit_price.as_str(), line.amount.as_str()];
        let row = text.lines().map(cells).find(|cells| {
            cells.len() >= 4
                && cells[cells.len() - 3..] == numbers
                && line.description.starts_with(cells[cells.len() - 4].trim_end_matches('-'))
        });
        assert!(row.is_some(), "no row reads {:?} … {numbers:?} in:\n{text}", line.description);
    }
    // The header row of the table.
    assert!(
        text.lines().map(cells).any(|cells| cells == ["Description", "Quantity", "Unit price", "Amount"])
    );
}

#[test]
fn only_a_paid_invoice_carries_the_mark() {
    let paid = layout_text(&render_pdf(&sample_document(3, true)).unwrap());
    let unpaid = layout_text(&render_pdf(&sample_document(3, false)).unwrap());
    // The status says PAID too: the stamp is a second one.
    assert_eq!(paid.matches("PAID").count(), 2, "{paid}");
    assert!(!unpaid.contains("PAID"), "{unpaid}");
}

#[test]
fn the_same_document_gives_the_same_bytes() {
    let document = sample_document(8, true);
    assert_eq!(render_pdf(&document).unwrap(), render_pdf(&document).unwrap());
}

/// 120 items with descriptions none of which contains another.
fn long_document() -> billing::InvoiceDocument {
    let mut document = sample_document(120, false);
    for (i, line) in document.lines.iter_mut().enumerate() {
        line.description = format!("Item {:03}: {}", i + 1, line.description);
    }
    document
}

#[test]
fn long_invoices_flow_onto_numbered_pages_with_the_header_repeated() {
    let document = long_document();
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    let pages = pages_of(&pdf);
    assert!(pages > 1, "120 items on {pages} page(s)");
    assert_eq!(page_count(&document).unwrap(), pages);

    let text = layout_text(&pdf);
    let footers: Vec<&str> = text
        .lines()
        .filter_map(|line| cells(line).last().copied())
        .filter(|c| c.starts_with("Page "))
        .collect();
    let expected: Vec<String> = (1..=pages).map(|page| format!("Page {page} of {pages}")).collect();
    assert_eq!(footers, expected);

    for page in 1..=pages {
        let text = page_text(&pdf, page);
        let header = text
            .lines()
            .map(cells)
            .filter(|cells| cells == &["Description", "Quantity", "Unit price", "Amount"]);
        assert_eq!(header.count(), 1, "page {page} has no table header:\n{text}");
        assert!(text.contains(&format!("Page {page} of {pages}")));
    }

    let folded = folded_text(&pdf);
    for line in &document.lines {
        assert_eq!(folded.matches(&line.description).count(), 1, "{:?}", line.description);
    }
    let last = page_text(&pdf, pages);
    assert!(last.contains(&document.total) && last.contains("Subtotal"));
}

#[test]
fn a_description_longer_than_a_page_is_printed_whole() {
    let mut document = sample_document(2, false);
    let words: Vec<String> = (0..1500).map(|i| format!("w{i:04}")).collect();
    document.lines[0] = DocumentLine {
        description: words.join(" "),
        quantity: "1".to_owned(),
        unit_price: "10.00 EUR".to_owned(),
        amount: "10.00 EUR".to_owned(),
        vat_rate: None,
    };
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    assert!(pages_of(&pdf) >= 2);
    let folded = folded_text(&pdf);
    for word in &words {
        assert_eq!(folded.matches(word.as_str()).count(), 1, "{word}");
    }
}

fn start_service() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(renderer::service::run(listener).unwrap());
    format!("http://{address}")
}

/// A server that answers every request with `status` and `body`.
fn start_impostor(status: u16, body: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let server = actix_web::HttpServer::new(move || {
        actix_web::App::new().default_service(actix_web::web::to(move || async move {
            actix_web::HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap()).body(body)
        }))
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    format!("http://{address}")
}

#[actix_web::test]
async fn the_service_renders_a_document_sent_as_json() {
    let base = start_service();
    let http = reqwest::Client::new();
    let document = sample_document(8, true);
    let response = http.post(format!("{base}/render")).json(&document).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    let pdf = response.bytes().await.unwrap();
    assert_eq!(pdf, render_pdf(&document).unwrap());

    let health = http.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.json::<serde_json::Value>().await.unwrap(), serde_json::json!({ "status": "ok" }));
}

#[actix_web::test]
async fn the_service_refuses_what_is_not_a_document() {
    let base = start_service();
    let http = reqwest::Client::new();
    let post = |body: Vec<u8>, content_type: &'static str| {
        http.post(format!("{base}/render")).header("content-type", content_type).body(body).send()
    };
    let mut unknown = serde_json::to_value(sample_document(1, false)).unwrap();
    unknown["colour"] = "green".into();
    let cases = [
        (post(b"{not json".to_vec(), "application/json").await.unwrap(), 400),
        (post(b"{}".to_vec(), "application/json").await.unwrap(), 400),
        (post(serde_json::to_vec(&unknown).unwrap(), "application/json").await.unwrap(), 400),
        (post(serde_json::to_vec(&sample_document(1, false)).unwrap(), "text/plain").await.unwrap(), 415),
        (post(vec![b' '; 5 * 1024 * 1024], "application/json").await.unwrap(), 413),
        (http.get(format!("{base}/render")).send().await.unwrap(), 405),
        (http.get(format!("{base}/nowhere")).send().await.unwrap(), 404),
    ];
    for (response, status) in cases {
        assert_eq!(response.status(), status);
        let body: serde_json::Value = response.json().await.unwrap();
        assert!(body["error"].is_string(), "{status}: {body}");
    }
    let body: serde_json::Value =
        post(b"{}".to_vec(), "application/json").await.unwrap().json().await.unwrap();
    assert!(body["error"].as_str().unwrap().contains("missing field"), "{body}");
}

#[actix_web::test]
async fn the_proxy_renders_through_the_service() {
    let base = start_service();
    let proxy = ProxyRenderer::new(&base, Duration::from_secs(10)).unwrap();
    let document = sample_document(8, true);
    let pdf = proxy.render(&document).await.unwrap();
    assert_valid(&pdf);
    assert!(layout_text(&pdf).contains(CLIENT));
    assert_eq!(pdf, BuiltinRenderer.render(&document).await.unwrap());
    // A trailing slash and a long invoice (rendered on the blocking pool) work too.
    let proxy = ProxyRenderer::new(&format!("{base}/"), Duration::from_secs(10)).unwrap();
    let long = long_document();
    assert_eq!(proxy.render(&long).await.unwrap(), BuiltinRenderer.render(&long).await.unwrap());
}

#[actix_web::test]
async fn every_proxy_failure_is_a_render_error() {
    let document = sample_document(1, false);
    let timeout = Duration::from_secs(5);

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let error = ProxyRenderer::new(&format!("http://{closed}"), timeout)
        .unwrap()
        .render(&document)
        .await
        .unwrap_err();
    println!("closed port: {error}");

    let failing = start_impostor(500, r#"{"error": "failed to generate PDF"}"#);
    let error = ProxyRenderer::new(&failing, timeout).unwrap().render(&document).await.unwrap_err();
    assert!(error.to_string().contains("500"), "{error}");

    let not_pdf = start_impostor(200, "<html>surprise</html>");
    let error = ProxyRenderer::new(&not_pdf, timeout).unwrap().render(&document).await.unwrap_err();
    assert!(error.to_string().contains("not a PDF"), "{error}");

    // Accepts connections (the kernel does, from the backlog) and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy =
        ProxyRenderer::new(&format!("http://{}", silent.local_addr().unwrap()), Duration::from_millis(200))
            .unwrap();
    let started = Instant::now();
    let error = proxy.render(&document).await.unwrap_err();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(190) && waited < Duration::from_secs(2),
        "gave up after {waited:?}: {error}"
    );
    drop(silent);

    for bad in ["", "renderer:8081", "ftp://renderer", "http://"] {
        assert!(ProxyRenderer::new(bad, timeout).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn a_png_logo_is_embedded_as_an_image_and_an_undrawable_one_is_left_out() {
    let png = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/invoice-sample.png")).unwrap();
    let logo = billing::sender::Logo::parse(png).unwrap();
    let mut document = sample_document(3, false);
    document.logo = Some(billing::document::DocumentLogo::of(&logo));
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    let images = |pdf: &[u8]| run("pdfimages", &["-list"], pdf, &[]).lines().skip(2).count();
    assert_eq!(images(&pdf), 1, "the logo, once");

    // A document from elsewhere (a renderer service's caller) with a logo that is no image
    // still renders, without it.
    let broken = billing::sender::Logo::parse(b"\x89PNG\r\n\x1a\nnot a png".to_vec()).unwrap();
    document.logo = Some(billing::document::DocumentLogo::of(&broken));
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    assert_eq!(images(&pdf), 0);
    assert!(layout_text(&pdf).contains(&document.serial));
}

/// A Factur-X PDF reads as the plain one does, passes qpdf, carries the XML byte for byte
/// as `factur-x.xml` (poppler's `pdfdetach` reads it back), is PDF/A-3b with the Factur-X
/// XMP, and is the same bytes each time.
#[test]
fn a_facturx_pdf_is_the_plain_one_with_its_xml_inside() {
    let plain = sample_document(8, false);
    let mut document = plain.clone();
    let xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rsm:CrossIndustryInvoice xmlns:rsm=\"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\"/>\n";
    document.facturx_xml = Some(xml.to_owned());
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    assert_eq!(layout_text(&pdf), layout_text(&render_pdf(&plain).unwrap()), "the same page");
    assert_eq!(pdf, render_pdf(&document).unwrap(), "deterministic");
    let listed = run("pdfdetach", &["-list"], &pdf, &[]);
    assert!(listed.contains("1 embedded files") && listed.contains("factur-x.xml"), "{listed}");
    let dir = std::env::temp_dir().join(format!("billable-facturx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join("factur-x.xml");
    run("pdfdetach", &["-save", "1", "-o", saved.to_str().unwrap()], &pdf, &[]);
    assert_eq!(std::fs::read_to_string(&saved).unwrap(), xml);
    std::fs::remove_dir_all(&dir).unwrap();
    let info = run("pdfinfo", &["-meta"], &pdf, &[]);
    for expected in [
        "<pdfaid:part>3</pdfaid:part>",
        "<pdfaid:conformance>B</pdfaid:conformance>",
        "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
        "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
        "<pdfaSchema:prefix>fx</pdfaSchema:prefix>",
    ] {
        assert!(info.contains(expected), "{expected} in the XMP:\n{info}");
    }
}
