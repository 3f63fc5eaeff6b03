//! A corpus of generated invoices and credit notes through the real server: lines at 19 %,
//! 7 %, zero-rated and exempt, discounts of lines and of the whole (percentages and
//! amounts), service days and periods, purchase orders, and credit notes of their own lines
//! and discounts. Every document is exported in every format and held to the official
//! rules (`tests/einvoice/check.py`); an independent CII reader (drafthorse) reads the same
//! VAT groups and totals back from the CII and from the Factur-X PDF's embedded XML (through
//! the factur-x library).
//!
//! `BILLABLE_CORPUS` invoices: 150 by default, with their credit notes 225 documents in 4
//! formats each (`make test-full` makes 1,000).

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{Draws, client, e_invoicing_team, facturx_pdf, post, run_checker_with};

/// The formats of every document; Peppol's too, once the sender has its address.
const FORMATS: [&str; 4] = ["xrechnung-ubl", "xrechnung-cii", "facturx", "peppol-bis"];

/// How many invoices the run makes.
fn size() -> u64 {
    std::env::var("BILLABLE_CORPUS").ok().and_then(|n| n.parse().ok()).unwrap_or(150)
}

/// A discount of `draws`' choosing, or none: a percentage up to 50 % with up to two decimals,
/// or an amount up to a quarter of `base` (in cents).
fn discount(draws: &mut Draws, base_cents: u64) -> Value {
    match draws.below(3) {
        0 => Value::Null,
        1 => json!({"percentage": serde_json::from_str::<Value>(&draws.decimal(50, 2)).unwrap()}),
        _ => {
            let cents = draws.below(base_cents / 4 + 1) + 1;
            json!({"amount": serde_json::from_str::<Value>(&format!("{}.{:02}", cents / 100, cents % 100)).unwrap()})
        }
    }
}

/// A line of the corpus: its price and quantity, one of four VAT rates, and its discount.
fn line(draws: &mut Draws, i: u64) -> Value {
    let (price, quantity) = (draws.below(500_000) + 1000, draws.below(20) + 1);
    let mut line = json!({"description": format!("Leistung {i}"),
                          "unitPrice": serde_json::from_str::<Value>(&format!("{}.{:02}", price / 100, price % 100)).unwrap(),
                          "quantity": quantity});
    let fields = line.as_object_mut().unwrap();
    match draws.below(4) {
        0 => {}
        1 => {
            fields.insert("taxPercentage".into(), json!(7));
        }
        2 => {
            fields.insert("vatCategory".into(), json!("Z"));
            fields.insert("taxPercentage".into(), json!(0));
        }
        _ => {
            fields.insert("vatCategory".into(), json!("E"));
            fields.insert("taxPercentage".into(), json!(0));
            fields.insert("vatExemptionReason".into(), json!("Steuerfrei nach § 4 Nr. 21 UStG"));
        }
    }
    let discount = discount(draws, price * quantity);
    if !discount.is_null() {
        fields.insert("discount".into(), discount);
    }
    line
}

/// The `n`th invoice of the corpus.
fn invoice(draws: &mut Draws, client: &str, n: u64) -> Value {
    let lines: Vec<Value> = (0..=draws.below(4)).map(|i| line(draws, i)).collect();
    let mut body = json!({"clientId": client, "issueDate": "2026-11-02", "dueDate": "2026-12-02",
                          "taxPercentage": 19, "description": format!("Korpus {n}"), "lineItems": lines});
    let fields = body.as_object_mut().unwrap();
    // A discount of the whole at most the smallest line could carry, so it never takes more
    // than the lines' net amounts.
    match draws.below(4) {
        0 | 1 => fields.insert("discount".into(), json!({"percentage": 3})),
        2 => fields.insert("discount".into(), json!({"amount": 0.5})),
        _ => None,
    };
    match draws.below(3) {
        0 => fields.insert("serviceDate".into(), json!("2026-10-15")),
        1 => fields.insert("servicePeriod".into(), json!({"from": "2026-10-01", "to": "2026-10-31"})),
        _ => None,
    };
    if draws.below(2) == 0 {
        fields.insert("purchaseOrder".into(), json!(format!("PO-{n}")));
    }
    body
}

/// What drafthorse reads of a CII document or a Factur-X PDF: its VAT groups and totals.
fn read_back(files: &[std::path::PathBuf]) -> Vec<Value> {
    let reader = format!("{}/einvoice/read_back.py", env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new("python3").arg(reader).args(files).output().expect("python3");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The figures drafthorse must read: the document's groups and totals as the API answers
/// them, written as decimals without trailing zeros.
fn expected(document: &Value) -> Value {
    let plain = |value: &Value| -> String {
        let text = value.to_string();
        rust_decimal::Decimal::from_str_exact(&text).unwrap().normalize().to_string()
    };
    let groups: Vec<Value> = document["vatBreakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            json!([
                g["vatCategory"],
                plain(&g["taxPercentage"]),
                plain(&g["taxableAmount"]),
                plain(&g["taxAmount"])
            ])
        })
        .collect();
    json!({"groups": groups, "taxBasisTotal": plain(&document["taxableAmount"]), "grandTotal": plain(&document["total"])})
}

async fn xml(app: &TestApp, key: &str, path: &str, format: &str) -> Vec<u8> {
    let response = app.request(Method::GET, &format!("{path}?format={format}"), key).send().await.unwrap();
    assert_eq!(
        response.status(),
        200,
        "{path}?format={format}: {}",
        response.text().await.unwrap_or_default()
    );
    response.bytes().await.unwrap().to_vec()
}

/// Exports `document` (at `path`) in every format into `dir`; returns the files to check
/// and the CII ones drafthorse reads, each with the figures it must find.
async fn export(
    app: &TestApp,
    key: &str,
    dir: &std::path::Path,
    (name, path, document): (&str, &str, &Value),
    read: &mut Vec<(std::path::PathBuf, Value)>,
) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for format in FORMATS {
        let bytes = xml(app, key, path, format).await;
        if format.ends_with("cii") || format == "facturx" {
            let file = dir.join(format!("{name}-{format}.xml"));
            std::fs::write(&file, &bytes).unwrap();
            read.push((file, expected(document)));
        }
        files.push((format!("{name}-{format}.xml"), bytes));
    }
    files
}

#[tokio::test]
async fn generated_documents_pass_every_formats_rules_and_read_back_the_same() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let peppol = json!({"sender": {"peppolId": "9930:DE123456789"}});
    let response = app.request(Method::PATCH, "/v1/team", &key).json(&peppol).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Bundesamt für Beispiele", "postalCode": "53113", "city": "Bonn",
        "countryCode": "DE", "vatNumber": "DE987654321", "buyerReference": "04011000-12345-34",
        "peppolId": "9930:DE987654321"}),
    )
    .await;
    let dir = std::env::temp_dir().join(format!("billable-corpus-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut draws = Draws(0x5DEE_CE66_D1CE_4E5B);
    let (mut documents, mut read) = (Vec::new(), Vec::new());
    for n in 0..size() {
        let made = post(&app, &key, "/v1/invoices", &invoice(&mut draws, &buyer, n)).await;
        let id = made["id"].as_str().unwrap().to_owned();
        let path = format!("/v1/invoices/{id}/e-invoice");
        documents.extend(export(&app, &key, &dir, (&format!("invoice-{n}"), &path, &made), &mut read).await);
        if n % 4 == 0 {
            let pdf = facturx_pdf(&app, &format!("/v1/invoices/pdf?id={id}")).await;
            let file = dir.join(format!("invoice-{n}-facturx.pdf"));
            std::fs::write(&file, &pdf).unwrap();
            read.push((file, expected(&made)));
            documents.push((format!("invoice-{n}-facturx.pdf"), pdf));
        }
        if n % 2 == 0 {
            let first = &made["lineItems"][0];
            // A small credit of the first line's rate, each line at least 10.00 before its
            // discount of at most half: within what the invoice has left to credit.
            let mut credited = json!({"description": "Gutschrift", "unitPrice": 1, "quantity": 1,
                                      "discount": {"percentage": 10}});
            for field in ["vatCategory", "taxPercentage", "vatExemptionReason"] {
                credited[field] = first[field].clone();
            }
            let note = post(
                &app,
                &key,
                &format!("/v1/invoices/{id}/credit-notes"),
                &json!({"lineItems": [credited], "discount": {"amount": 0.1}}),
            )
            .await;
            let path = format!("/v1/credit-notes/{}/e-invoice", note["id"].as_str().unwrap());
            documents.extend(
                export(&app, &key, &dir, (&format!("credit-note-{n}"), &path, &note), &mut read).await,
            );
        }
    }
    let (passed, report) = run_checker_with(&[], &documents);
    assert!(passed, "{report}");
    let checked = report.lines().filter(|line| line.starts_with("ok ")).count();
    assert_eq!(checked, documents.len(), "{report}");
    // What the corpus holds: several rates and categories, and discounts of both kinds.
    let held = |part: &str| {
        documents.iter().filter(|(_, bytes)| String::from_utf8_lossy(bytes).contains(part)).count()
    };
    for part in [
        "<ram:CategoryCode>Z</ram:CategoryCode>",
        "<ram:CategoryCode>E</ram:CategoryCode>",
        "<ram:RateApplicablePercent>7</ram:RateApplicablePercent>",
        "<ram:CalculationPercent>",
        "<cbc:AllowanceTotalAmount",
        "<cbc:CreditNoteTypeCode>381",
    ] {
        assert!(held(part) > 0, "the corpus has no {part}");
    }
    let files: Vec<std::path::PathBuf> = read.iter().map(|(file, _)| file.clone()).collect();
    for (found, (file, want)) in read_back(&files).iter().zip(&read) {
        for field in ["groups", "taxBasisTotal", "grandTotal"] {
            assert_eq!(found[field], want[field], "{}: {field}", file.display());
        }
    }
    eprintln!("corpus: {} documents checked, {} read back", documents.len(), read.len());
    std::fs::remove_dir_all(&dir).ok();
}
