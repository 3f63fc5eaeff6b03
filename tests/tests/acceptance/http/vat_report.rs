//! `GET /v1/reports/vat`: what an accountant files for a period, per currency, VAT
//! category and rate, in JSON and CSV, on the invoices of the period less its credit notes.

use std::sync::Arc;

use acceptance::{TestApp, spawn_app_on};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error_of;

fn exact(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn line(category: &str, percentage: &str, taxable: &str, tax: &str) -> Value {
    json!({"currency": "EUR", "vatCategory": category, "taxPercentage": exact(percentage),
           "taxableAmount": exact(taxable), "taxAmount": exact(tax)})
}

async fn made(app: &TestApp, path: &str, body: Value) -> Value {
    let response = app.request(Method::POST, path, &app.key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CREATED, "{path}: {body}");
    response.json().await.unwrap()
}

async fn report(app: &TestApp, query: &str) -> reqwest::Response {
    app.request(Method::GET, &format!("/v1/reports/vat?{query}"), &app.key).send().await.unwrap()
}

#[tokio::test]
async fn a_period_sums_its_invoices_per_rate_less_its_credit_notes() {
    let clock = Arc::new(kernel::FixedClock::new(kernel::parse_instant("2026-11-20T09:00:00Z").unwrap()));
    let app = spawn_app_on(clock).await;
    let client = app.create_client(&app.key, "Buchhandlung").await;
    let invoice = |issued: &str, lines: Value| json!({"clientId": client["id"], "issueDate": issued, "taxPercentage": 19, "lineItems": lines});
    // A book and its workbook at 7 %, a workshop at 19 %: each group's tax rounded once.
    made(
        &app,
        "/v1/invoices",
        invoice(
            "2026-11-02T00:00:00Z",
            json!([
        {"description": "Fachbuch", "unitPrice": 19.99, "quantity": 2, "taxPercentage": 7},
        {"description": "Workshop", "unitPrice": 1200, "quantity": 1},
        {"description": "Arbeitsheft", "unitPrice": 0.05, "quantity": 3, "taxPercentage": 7}]),
        ),
    )
    .await;
    let second = made(
        &app,
        "/v1/invoices",
        invoice(
            "2026-11-30T23:59:59Z",
            json!([
        {"description": "Beratung", "unitPrice": 100, "quantity": 1},
        {"description": "Zeitschrift", "unitPrice": 25, "quantity": 2, "vatCategory": "Z"}]),
        ),
    )
    .await;
    // The day before the period, in UTC.
    made(
        &app,
        "/v1/invoices",
        invoice(
            "2026-11-01T00:30:00+01:00",
            json!([
        {"description": "Oktober", "unitPrice": 1000, "quantity": 1}]),
        ),
    )
    .await;
    // A credit note counts in the period it is issued in (the clock's 2026-11-20).
    let id = second["id"].as_str().unwrap();
    made(
        &app,
        &format!("/v1/invoices/{id}/credit-notes"),
        json!({"lineItems": [
        {"description": "Beratung, erstattet", "unitPrice": 40, "quantity": 1}]}),
    )
    .await;

    let november = report(&app, "from=2026-11-01&to=2026-11-30").await;
    assert_eq!(november.status(), StatusCode::OK);
    let november: Value = november.json().await.unwrap();
    assert_eq!(
        november,
        json!([
            line("S", "7", "40.13", "2.81"),
            line("S", "19", "1260.00", "239.40"),
            line("Z", "0", "50.00", "0.00")
        ])
    );
    let october: Value = report(&app, "from=2026-10-01&to=2026-10-31").await.json().await.unwrap();
    assert_eq!(october, json!([line("S", "19", "1000.00", "190.00")]));
    let other: Value = report(&app, "from=2026-11-01&to=2026-11-30&currency=CHF").await.json().await.unwrap();
    assert_eq!(other, json!([]));
    let euros: Value = report(&app, "from=2026-11-01&to=2026-11-30&currency=EUR").await.json().await.unwrap();
    assert_eq!(euros, november);

    let csv = app
        .request(Method::GET, "/v1/reports/vat?from=2026-11-01&to=2026-11-30", &app.key)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(csv.headers()["content-disposition"].to_str().unwrap().contains("vat-return.csv"));
    assert_eq!(
        csv.text().await.unwrap().replace("\r\n", "\n"),
        "currency,vatCategory,taxPercentage,taxableAmount,taxAmount\n\
         EUR,S,7,40.13,2.81\nEUR,S,19,1260.00,239.40\nEUR,Z,0,50.00,0.00\n"
    );
}

#[tokio::test]
async fn a_period_is_two_days_at_most_a_year_apart() {
    let clock = Arc::new(kernel::FixedClock::new(kernel::parse_instant("2026-11-20T09:00:00Z").unwrap()));
    let app = spawn_app_on(clock).await;
    for (query, error) in [
        ("to=2026-11-30", "from: is required: the period's first and last day, YYYY-MM-DD"),
        ("from=2026-11-01", "to: is required: the period's first and last day, YYYY-MM-DD"),
        ("from=2026-11-31&to=2026-12-01", "from: must be a date YYYY-MM-DD"),
        ("from=2026-11-02&to=2026-11-01", "to: must not be before from"),
        ("from=2024-01-01&to=2025-01-01", "to: must be at most 366 days after from: ask for a year at most"),
        (
            "from=2026-01-01&to=2026-01-31&currency=eur",
            "currency: must be an ISO 4217 currency code such as EUR",
        ),
    ] {
        let response = report(&app, query).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(error_of(response).await, error, "{query}");
    }
    // A leap year's 366 days are one period.
    assert_eq!(report(&app, "from=2024-01-01&to=2024-12-31").await.status(), StatusCode::OK);
}
