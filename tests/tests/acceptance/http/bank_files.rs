//! Banks' own dialects through the real server: the files in `tests/banking/fixtures/`
//! (MT940 of a Sparkasse, Commerzbank, ING and a UK bank; camt.053.001.08, camt.054.001.02
//! and camt.054.001.08) are read as other readers read them and settle exactly the
//! invoices they pay, once.
//!
//! The other readers: Debian's `AqBanking` (`aqbanking-cli`, through
//! `tests/banking/aqbanking.py`) for MT940 and camt.053; the Python package index's
//! `mt-940` for MT940; and, for every ISO 20022 file, the schema itself
//! (`tests/banking/camt.py` validates it against the vendored schema and decodes it with
//! the package index's `xmlschema`).

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::banking::{import, invoice, mt940_oracle};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/banking/fixtures");
const READERS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/banking");

/// A fixture, the invoices `INV-0001` onwards it is imported against (their totals, in
/// order), and what it should leave of each.
struct Fixture {
    file: &'static str,
    format: &'static str,
    currency: &'static str,
    statements: usize,
    entries: u64,
    /// Each invoice's total, and its status once the file is in.
    invoices: &'static [(&'static str, &'static str)],
}

/// What an outside reader prints: one JSON array per transaction.
fn outside(script: &str, args: &[&str]) -> Vec<Vec<Value>> {
    let output = std::process::Command::new("python3")
        .arg(format!("{READERS}/{script}"))
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("python3 {script}: {error}"));
    assert!(output.status.success(), "{script} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A transaction's day and amount, as every reader gives them.
fn dated(day: &Value, amount: &Value) -> (String, Decimal) {
    let amount = match amount {
        Value::String(text) => text.parse().unwrap(),
        number => number.to_string().parse().unwrap(),
    };
    (day.as_str().unwrap().to_owned(), amount)
}

/// Text compared as the readers agree on it: without white space, which `AqBanking` puts
/// between a German purpose's subfields and ING's 65-character lines, and mt-940 does not.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `AqBanking`'s purpose without the supplementary line of `:61:` it puts first (ING's
/// `/TRCD/00100/`), which is no remittance text.
fn aqbanking_purpose(purpose: &str) -> String {
    let purpose = purpose.trim_start();
    match purpose.strip_prefix("/TRCD/").and_then(|rest| rest.split_once('/')) {
        Some((code, rest)) if code.chars().all(|c| c.is_ascii_digit()) => squeezed(rest),
        _ => squeezed(purpose),
    }
}

async fn statuses(app: &TestApp, invoices: &[Value]) -> Vec<String> {
    let mut statuses = Vec::new();
    for invoice in invoices {
        let now = app.get_json(&format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await;
        // Due on 2026-12-01: pending or overdue depending on today, unpaid either way.
        let status = match now["status"].as_str().unwrap() {
            "PENDING" | "OVERDUE" => "UNPAID",
            paid => paid,
        };
        statuses.push(status.to_owned());
    }
    statuses
}

async fn check(fixture: Fixture) {
    let path = format!("{FIXTURES}/{}", fixture.file);
    let file = std::fs::read_to_string(&path).unwrap();
    let app = spawn_app().await;
    if fixture.currency != "EUR" {
        let team = json!({"currency": fixture.currency});
        let response = app.request(Method::PATCH, "/v1/team", &app.key).json(&team).send().await.unwrap();
        assert_eq!(response.status(), 200);
    }
    let client = app.create_client(&app.key, "Beispielkunde").await;
    let mut invoices = Vec::new();
    for (number, (total, _)) in fixture.invoices.iter().enumerate() {
        let made = invoice(&app, client["id"].as_str().unwrap(), total).await;
        assert_eq!(made["serial"], format!("INV-{:04}", number + 1));
        invoices.push(made);
    }

    let media = if fixture.format == "mt940" { "text/plain" } else { "application/xml" };
    let response = import(&app, &app.key, fixture.format, media, &file).await;
    assert_eq!(response.status(), 201, "{}", fixture.file);
    let imported: Value = response.json().await.unwrap();
    let statements = imported["statements"].as_array().unwrap();
    assert_eq!(statements.len(), fixture.statements, "{imported}");
    let entries: u64 = statements.iter().map(|s| s["entries"].as_u64().unwrap()).sum();
    assert_eq!(entries, fixture.entries, "{imported}");

    let mut ours = Vec::new();
    for statement in statements {
        let listed = app
            .get_json(&format!("/v1/bank-statements/{}/transactions", statement["id"].as_str().unwrap()))
            .await;
        // Newest booking first; the readers give the file's order.
        let mut listed = listed.as_array().unwrap().clone();
        listed.reverse();
        ours.extend(listed);
    }
    let key = |t: &Value| dated(&t["date"], &t["amount"]);
    ours.sort_by_key(key);

    let sorted = |mut rows: Vec<Vec<Value>>| {
        rows.sort_by_key(|row| dated(&row[0], &row[1]));
        rows
    };
    if fixture.format == "mt940" {
        let aqbanking = sorted(outside("aqbanking.py", &["mt940", &path]));
        let mt940 = mt940_oracle(&file);
        assert_eq!(ours.len(), aqbanking.len());
        assert_eq!(ours.len(), mt940.len());
        for (ours, theirs) in ours.iter().zip(&aqbanking) {
            assert_eq!(key(ours), dated(&theirs[0], &theirs[1]), "AqBanking: {theirs:?}");
            let purpose = aqbanking_purpose(theirs[2].as_str().unwrap());
            assert_eq!(squeezed(ours["text"].as_str().unwrap()), purpose, "AqBanking: {theirs:?}");
        }
        let mut mt940: Vec<_> =
            mt940.into_iter().map(|(day, amount, _)| dated(&json!(day), &json!(amount))).collect();
        mt940.sort();
        assert_eq!(ours.iter().map(key).collect::<Vec<_>>(), mt940, "mt-940");
    } else {
        let decoded = sorted(outside("camt.py", &[&path]));
        let got: Vec<Vec<Value>> = ours
            .iter()
            .map(|t| {
                let (day, amount) = key(t);
                let texts =
                    ["text", "reference", "counterpartyName", "counterpartyIban"].map(|k| t[k].clone());
                [vec![json!(day), json!(amount.to_string())], texts.to_vec()].concat()
            })
            .collect();
        let decoded: Vec<Vec<Value>> = decoded
            .into_iter()
            .map(|row| {
                let (day, amount) = dated(&row[0], &row[1]);
                [vec![json!(day), json!(amount.to_string())], row[2..].to_vec()].concat()
            })
            .collect();
        assert_eq!(got, decoded, "the schema's decoding");
        if fixture.format == "camt.053" {
            let aqbanking = sorted(outside("aqbanking.py", &["camt.053", &path]));
            let theirs: Vec<_> = aqbanking.iter().map(|row| dated(&row[0], &row[1])).collect();
            assert_eq!(ours.iter().map(key).collect::<Vec<_>>(), theirs, "AqBanking");
        }
    }

    let expected: Vec<&str> = fixture.invoices.iter().map(|(_, status)| *status).collect();
    assert_eq!(statuses(&app, &invoices).await, expected, "{}", fixture.file);
    let paid = expected.iter().filter(|status| status.starts_with("PAID")).count();
    let matched: u64 = statements.iter().map(|s| s["matched"].as_u64().unwrap()).sum();
    assert_eq!(usize::try_from(matched).unwrap(), paid, "{imported}");

    // Again: every transaction a duplicate, nothing booked twice.
    let again: Value = import(&app, &app.key, fixture.format, media, &file).await.json().await.unwrap();
    let counted = |field: &str| {
        again["statements"].as_array().unwrap().iter().map(|s| s[field].as_u64().unwrap()).sum::<u64>()
    };
    assert_eq!([counted("duplicates"), counted("matched")], [fixture.entries, 0], "{again}");
    assert_eq!(statuses(&app, &invoices).await, expected);
}

const ANY: (&str, &str) = ("10.00", "UNPAID");

#[tokio::test]
async fn a_sparkasse_mt940_pays_by_its_sepa_purpose_and_leaves_a_mistyped_serial() {
    check(Fixture {
        file: "mt940-sparkasse.sta",
        format: "mt940",
        currency: "EUR",
        statements: 1,
        entries: 7,
        invoices: &[("1190.00", "PAID"), ("238.00", "PAID"), ("595.00", "UNPAID")],
    })
    .await;
}

#[tokio::test]
async fn a_commerzbank_mt940_over_the_year_end_pays_a_serial_glued_to_the_next_subfield() {
    check(Fixture {
        file: "mt940-commerzbank.sta",
        format: "mt940",
        currency: "EUR",
        statements: 1,
        entries: 5,
        invoices: &[ANY, ANY, ANY, ("1439.90", "PAID"), ("297.50", "PAID"), ("178.50", "PAID_PARTIAL")],
    })
    .await;
}

#[tokio::test]
async fn an_ing_mt940_pays_by_the_serial_in_its_remittance_field() {
    check(Fixture {
        file: "mt940-ing-nl.sta",
        format: "mt940",
        currency: "EUR",
        statements: 1,
        entries: 5,
        invoices: &[
            ANY,
            ANY,
            ANY,
            ANY,
            ANY,
            ANY,
            ("1249.50", "PAID"),
            ("416.50", "PAID"),
            ("2380.00", "PAID"),
        ],
    })
    .await;
}

#[tokio::test]
async fn a_uk_banks_file_of_two_mt940_statements_pays_in_pounds() {
    check(Fixture {
        file: "mt940-swift-uk-two-statements.sta",
        format: "mt940",
        currency: "GBP",
        statements: 2,
        entries: 6,
        invoices: &[("780.25", "PAID"), ("960.00", "PAID"), ANY, ANY, ANY, ("1500.00", "PAID")],
    })
    .await;
}

#[tokio::test]
async fn a_camt053_of_version_08_pays_by_serial_and_by_creditor_reference() {
    check(Fixture {
        file: "camt053-v08-volksbank.xml",
        format: "camt.053",
        currency: "EUR",
        statements: 1,
        entries: 6,
        invoices: &[
            ("1190.00", "PAID"),
            ANY,
            ANY,
            ANY,
            ANY,
            ANY,
            ("476.00", "PAID"),
            ("833.30", "PAID"),
            ("99.99", "PAID"),
        ],
    })
    .await;
}

#[tokio::test]
async fn a_camt054_of_version_02_pays_without_balances() {
    check(Fixture {
        file: "camt054-v02-abnamro.xml",
        format: "camt.054",
        currency: "EUR",
        statements: 1,
        entries: 4,
        invoices: &[ANY, ("238.00", "PAID"), ("595.00", "PAID"), ANY, ("1428.57", "PAID")],
    })
    .await;
}

#[tokio::test]
async fn a_camt054_of_version_08_pays_by_serial_and_by_creditor_reference() {
    check(Fixture {
        file: "camt054-v08-postfinance.xml",
        format: "camt.054",
        currency: "EUR",
        statements: 1,
        entries: 4,
        invoices: &[ANY, ANY, ANY, ("1439.90", "PAID"), ("297.50", "PAID"), ("178.50", "PAID_PARTIAL")],
    })
    .await;
}
