//! A year of a team's bank statements through the real server: twelve monthly camt.053
//! files (each valid against the ISO 20022 schema) pay 200 invoices in full by serial or
//! by payment reference, in two parts, twice, or with a mistyped serial, among strangers'
//! transfers and the team's own spending. They settle exactly the invoices they pay, and
//! importing every statement again changes nothing.

use std::collections::BTreeMap;

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{Value, json};

use super::banking::{camt053_of, entry_on, import, valid_camt053};
use super::pages;

const INVOICES: usize = 200;
const CLIENTS: usize = 20;

/// How invoice `i` is paid during the year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Paid {
    /// In full, its serial in the remittance text.
    BySerial,
    /// In full, with its payment reference as the structured creditor reference.
    ByReference,
    /// Half in its month, the rest the month after.
    InParts,
    /// In full, and in full once more a month later.
    Twice,
    /// In full, from its client, with an O for a 0 in the serial.
    Mistyped,
    /// Not at all.
    Never,
}

fn how(i: usize) -> Paid {
    [Paid::BySerial, Paid::ByReference, Paid::InParts, Paid::Twice, Paid::Mistyped, Paid::Never][i % 6]
}

fn money(amount: Decimal) -> String {
    format!("{amount:.2}")
}

/// Every invoice's total is its own: no amount is due on two invoices.
fn total(i: usize) -> Decimal {
    Decimal::from(100) + Decimal::new(317, 2) * Decimal::from(i)
}

struct Month {
    entries: Vec<(u32, String)>,
    sum: Decimal,
}

/// Twelve monthly camt.053 files paying `invoices` as [`how`] says, among strangers'
/// transfers and the team's spending, each with its number of entries.
fn year_of_statements(clients: &[Value], invoices: &[Value]) -> Vec<(String, usize)> {
    let mut months: Vec<Month> = (0..12).map(|_| Month { entries: Vec::new(), sum: Decimal::ZERO }).collect();
    let mut book =
        |month: usize, day: u32, amount: Decimal, name: &str, reference: Option<&str>, text: &str| {
            let bank_reference = format!("B-{:02}-{:05}", month + 1, months[month].entries.len());
            let date = format!("2026-{:02}-{day:02}", month + 1);
            let entry = entry_on(&date, &money(amount), name, reference, text, &bank_reference);
            months[month].entries.push((day, entry));
            months[month].sum += amount;
        };
    for (i, invoice) in invoices.iter().enumerate() {
        let (month, later) = (i % 12, (i % 12 + 1).min(11));
        let client = clients[i % CLIENTS]["name"].as_str().unwrap();
        let serial = invoice["serial"].as_str().unwrap();
        let total = total(i);
        match how(i) {
            Paid::BySerial => book(month, 10, total, client, None, &format!("Rechnung {serial}")),
            Paid::ByReference => {
                book(month, 11, total, client, Some(invoice["paymentReference"].as_str().unwrap()), "");
            }
            Paid::InParts => {
                let half = (total / Decimal::TWO).round_dp_with_strategy(2, RoundingStrategy::ToZero);
                book(month, 5, half, client, None, &format!("{serial} Teil 1"));
                book(later, 20, total - half, client, None, &format!("{serial} Rest"));
            }
            Paid::Twice => {
                book(month, 12, total, client, None, &format!("Zahlung {serial}"));
                book(later, 25, total, client, None, &format!("Zahlung {serial}"));
            }
            Paid::Mistyped => {
                book(month, 14, total, client, None, &format!("Rechnung {}", serial.replacen('0', "O", 1)));
            }
            Paid::Never => {}
        }
    }
    for month in 0..12 {
        let stranger = Decimal::new(1337, 2) + Decimal::from(month);
        book(month, 3, stranger, "Fremde Firma AG", None, "Spende");
        book(month, 17, stranger + Decimal::ONE, "Fremde Firma AG", None, "Rechnung 2026-77");
        book(month, 1, Decimal::from(-1250), "Immobilien Schmidt KG", None, "Miete");
        book(month, 15, Decimal::new(-2850, 2), "Hosting AG", None, "Server");
        book(month, 28, Decimal::new(-990, 2), "Sparkasse", None, "Entgelt");
    }

    let mut balance = Decimal::from(5000);
    let mut files = Vec::new();
    for (number, month) in months.iter_mut().enumerate() {
        month.entries.sort_by_key(|(day, _)| *day);
        let entries: Vec<String> = month.entries.iter().map(|(_, entry)| entry.clone()).collect();
        let days = (format!("2026-{:02}-01", number + 1), format!("2026-{:02}-28", number + 1));
        let closing = balance + month.sum;
        files.push((
            camt053_of((&days.0, &days.1), &money(balance), &money(closing), &entries),
            entries.len(),
        ));
        balance = closing;
    }
    files
}

#[tokio::test]
async fn a_year_of_statements_settles_exactly_the_invoices_it_pays_and_comes_once() {
    let app = spawn_app().await;
    let mut clients = Vec::new();
    for c in 0..CLIENTS {
        clients.push(app.create_client(&app.key, &format!("Kunde {c:02} GmbH")).await);
    }
    let mut invoices = Vec::new();
    for i in 0..INVOICES {
        let body = json!({"clientId": clients[i % CLIENTS]["id"], "issueDate": "2025-12-01", "dueDate": "2026-01-31",
            "lineItems": [{"description": "Work", "unitPrice": serde_json::from_str::<Value>(&money(total(i))).unwrap(), "quantity": 1}]});
        let response = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), 201);
        invoices.push(response.json::<Value>().await.unwrap());
    }

    let files = year_of_statements(&clients, &invoices);
    valid_camt053(&files[0].0).unwrap();
    valid_camt053(&files[11].0).unwrap();

    let mut matched = 0;
    for (file, entries) in &files {
        let response = import(&app, &app.key, "camt.053", "application/xml", file).await;
        assert_eq!(response.status(), 201);
        let imported: Value = response.json().await.unwrap();
        assert_eq!(
            [&imported["entries"], &imported["duplicates"]],
            [&json!(entries), &json!(0)],
            "{imported}"
        );
        matched += imported["matched"].as_u64().unwrap();
    }
    let count = |paid: Paid| (0..INVOICES).filter(|&i| how(i) == paid).count();
    let parts = count(Paid::InParts);
    let expected_matched = count(Paid::BySerial) + count(Paid::ByReference) + 2 * parts + count(Paid::Twice);
    assert_eq!(usize::try_from(matched).unwrap(), expected_matched);

    let books = settled(&app).await;
    for (i, invoice) in invoices.iter().enumerate() {
        let (status, due) = &books[invoice["id"].as_str().unwrap()];
        match how(i) {
            Paid::Mistyped | Paid::Never => {
                assert!(matches!(status.as_str(), "PENDING" | "OVERDUE"), "{i} {status}");
                assert_eq!(*due, total(i), "{i}");
            }
            _ => assert_eq!((status.as_str(), *due), ("PAID", Decimal::ZERO), "{i}"),
        }
    }
    let by_status = transactions(&app).await;
    let listed = |status: &str| by_status.get(status).cloned().unwrap_or_default();
    assert_eq!(listed("ignored").len(), 36, "the team's spending");
    // The second of each double payment, and the strangers' money, wait for a person.
    assert_eq!(listed("unmatched").len(), count(Paid::Twice) + 24);
    let suggested: Vec<Value> = listed("suggested").iter().map(|t| t["suggestedInvoiceId"].clone()).collect();
    let mistyped: Vec<Value> =
        (0..INVOICES).filter(|&i| how(i) == Paid::Mistyped).map(|i| invoices[i]["id"].clone()).collect();
    let mut suggested_sorted = suggested.clone();
    suggested_sorted.sort_by_key(Value::to_string);
    let mut mistyped_sorted = mistyped;
    mistyped_sorted.sort_by_key(Value::to_string);
    assert_eq!(suggested_sorted, mistyped_sorted, "a mistyped serial from its client is a suggestion");

    // The year again: every transaction a duplicate, nothing booked or suggested twice.
    for (file, entries) in &files {
        let again: Value =
            import(&app, &app.key, "camt.053", "application/xml", file).await.json().await.unwrap();
        assert_eq!(
            [&again["duplicates"], &again["matched"], &again["suggested"]],
            [&json!(entries), &json!(0), &json!(0)],
            "{again}"
        );
    }
    assert_eq!(settled(&app).await, books);
    let after = transactions(&app).await;
    let sizes = |map: &BTreeMap<String, Vec<Value>>| {
        map.iter().map(|(k, v)| (k.clone(), v.len())).collect::<Vec<_>>()
    };
    assert_eq!(sizes(&after), sizes(&by_status));
}

/// Every invoice's status and what is due on it, by id.
async fn settled(app: &TestApp) -> BTreeMap<String, (String, Decimal)> {
    let mut books = BTreeMap::new();
    for listed in
        pages(app, "/v1/invoices?limit=100").await.iter().flat_map(|page| page.as_array().unwrap().clone())
    {
        let id = listed["id"].as_str().unwrap();
        let invoice = app.get_json(&format!("/v1/invoices/{id}")).await;
        let due = invoice["amountDue"].to_string().parse().unwrap_or_else(|_| panic!("{invoice}"));
        books.insert(id.to_owned(), (invoice["status"].as_str().unwrap().to_owned(), due));
    }
    books
}

/// The team's transactions by status.
async fn transactions(app: &TestApp) -> BTreeMap<String, Vec<Value>> {
    let mut by_status: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for transaction in pages(app, "/v1/bank-transactions?limit=100")
        .await
        .iter()
        .flat_map(|page| page.as_array().unwrap().clone())
    {
        by_status.entry(transaction["status"].as_str().unwrap().to_owned()).or_default().push(transaction);
    }
    by_status
}
