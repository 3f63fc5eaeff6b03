//! The client's page of an invoice through the real server: public by its unguessable
//! address, in the client's language, with what is due, the bank details, the payment
//! reference and the payment QR code inline; one HTML document that loads nothing and runs
//! no script, under a Content-Security-Policy that allows nothing else. Chromium and
//! axe-core look at it in scripts/page-check.sh (`make test`).

use acceptance::TestApp;
use reqwest::Method;
use serde_json::json;

use super::einvoices::{client, e_invoicing_team, post};

async fn page(app: &TestApp, path: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let response = app.http.get(app.url(path)).send().await.unwrap();
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

#[tokio::test]
async fn a_german_clients_page_shows_what_is_due_and_how_to_pay_it_and_loads_nothing() {
    let app = acceptance::spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Müller GmbH", "line1": "Hauptstraße 5", "postalCode": "10115",
                                             "city": "Berlin", "countryCode": "DE", "language": "de"}),
    )
    .await;
    let invoice = post(&app, &key, "/v1/invoices", &super::payment_qr::invoice_body(&buyer)).await;
    let hosted = invoice["hostedUrl"].as_str().unwrap();
    assert_eq!(hosted, format!("/invoices/{}", invoice["id"].as_str().unwrap()));
    let (status, headers, html) = page(&app, hosted).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(policy.starts_with("default-src 'none'; style-src 'sha256-"), "{policy}");
    assert!(!policy.contains("unsafe"), "{policy}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    for shown in [
        "<html lang=\"de\">",
        "Rechnung INV-0001",
        "1.439,90\u{a0}€",
        "Offener Betrag",
        "27. Dezember 2026",
        "DE02 1203 0000 0000 2020 51",
        "RF40 INV0 001",
        "<svg",
        "Scannen Sie den Code mit Ihrer Banking-App",
        "7 Std.",
        "/v1/invoices/pdf?id=",
    ] {
        assert!(html.contains(shown), "{shown:?} in\n{html}");
    }
    // Nothing from anywhere: no script, no external address, no inline handler.
    for absent in ["<script", "http://", "https://", "onclick", "<link", "<img", "<iframe"] {
        let outside_svg_namespace = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!outside_svg_namespace.contains(absent), "{absent:?} in the page");
    }

    // Paid: nothing due, no bank details, no code.
    let paid = json!({"amount": 1439.90, "method": "bank_transfer", "paidOn": "2026-11-27"});
    post(&app, &key, &format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap()), &paid).await;
    let (_, _, html) = page(&app, hosted).await;
    assert!(html.contains("state-paid") && html.contains("0,00\u{a0}€"), "{html}");
    assert!(!html.contains("<svg") && !html.contains("DE02 1203"), "{html}");

    // Two rates: a row per VAT group, worded as the PDF's breakdown words it.
    let mut two_rates = super::payment_qr::invoice_body(&buyer);
    two_rates["lineItems"][1]["taxPercentage"] = json!(7);
    let two_rates = post(&app, &key, "/v1/invoices", &two_rates).await;
    let (_, _, html) = page(&app, two_rates["hostedUrl"].as_str().unwrap()).await;
    for row in ["USt. 7\u{a0}% · 210,00\u{a0}€", "USt. 19\u{a0}% · 1.000,00\u{a0}€", "14,70\u{a0}€"] {
        assert!(html.contains(row), "{row:?} in\n{html}");
    }

    for unknown in ["/invoices/not-an-id", "/invoices/0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e"] {
        assert_eq!(page(&app, unknown).await.0, 404, "{unknown}");
    }
    let response = app.request(Method::GET, hosted, &key).send().await.unwrap();
    assert_eq!(response.status(), 200, "a key changes nothing");
}
