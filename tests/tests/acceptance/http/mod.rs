//! The REST API through the real server (bound to a free port) on the backend that
//! `TEST_BACKEND` names.

mod auth;
mod clients;
mod conventions;
mod idempotency;
mod invoices;
mod mcp;
mod openapi;
mod track;

use serde_json::Value;

/// The `error` member of an error body.
async fn error_of(response: reqwest::Response) -> String {
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(content_type.as_deref(), Some("application/json"), "error bodies are JSON");
    let body: Value = response.json().await.unwrap();
    body["error"].as_str().unwrap_or_else(|| panic!("no error member in {body}")).to_owned()
}
