//! The REST API through the real server (bound to a free port) on the backend that
//! `TEST_BACKEND` names.

mod auth;
mod bank_files;
mod bank_year;
mod banking;
mod billed_time;
mod card_payments;
mod clients;
mod conventions;
mod dates;
mod discounts;
mod einvoice_corpus;
mod einvoices;
mod idempotency;
mod invoice_page;
mod invoices;
mod languages;
mod ledger_property;
mod mcp;
mod money;
mod openapi;
mod payment_qr;
mod payments;
mod peppol;
mod quotes;
mod recurring;
mod reminders;
mod reports;
mod sending;
mod team;
mod track;
mod vat_rates;
mod vat_report;
mod webhooks;

use acceptance::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// The `error` member of an error body.
async fn error_of(response: reqwest::Response) -> String {
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(content_type.as_deref(), Some("application/json"), "error bodies are JSON");
    let body: Value = response.json().await.unwrap();
    body["error"].as_str().unwrap_or_else(|| panic!("no error member in {body}")).to_owned()
}

/// The pages of a listing, followed through each `Link: <…>; rel="next"`.
pub(super) async fn pages(app: &TestApp, first: &str) -> Vec<Value> {
    let mut pages = Vec::new();
    let mut next = Some(first.to_owned());
    while let Some(path) = next.take() {
        let response = app.request(Method::GET, &path, &app.key).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        if let Some(link) = response.headers().get("link") {
            let link = link.to_str().unwrap();
            let url = link.strip_prefix('<').and_then(|l| l.strip_suffix(">; rel=\"next\"")).unwrap();
            next = Some(url.to_owned());
        }
        pages.push(response.json().await.unwrap());
        assert!(pages.len() < 20, "the pages end");
    }
    pages
}
