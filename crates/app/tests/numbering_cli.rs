//! `billable teams update --invoice-numbering … --credit-note-numbering … --quote-numbering …`:
//! an operator numbers a team's series by patterns, which the API then issues by.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use chrono::Datelike;
use serde_json::{Value, json};
use support::{Scratch, billable, cli, serve_rest, team_and_key};

#[tokio::test]
async fn an_operator_numbers_a_teams_series_and_the_api_issues_by_them() {
    let scratch = Scratch::new("numbering-cli");
    let url = scratch.sqlite_url();
    let key = team_and_key(&url);
    let team = cli(&url, &["teams", "update", "--team", "Acme", "--invoice-numbering", "RE{YY}{000}"]);
    cli(&url, &["teams", "update", "--team", &team, "--credit-note-numbering", "GS/{YYYY}/{00}"]);
    let refused = billable(&url)
        .args(["teams", "update", "--team", "Acme", "--quote-numbering", "Q-{NN}", "--name", "Other"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("--quote-numbering: unknown placeholder {NN}: use {0000}"), "{stderr}");

    let (mut server, port) = serve_rest(&url, &[]);
    let http = reqwest::Client::new();
    let call = async |method: reqwest::Method, path: &str, body: Option<Value>| -> Value {
        let mut request =
            http.request(method, format!("http://127.0.0.1:{port}{path}")).header("x-api-key", &key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        response.json().await.unwrap()
    };
    let the_team = call(reqwest::Method::GET, "/v1/team", None).await;
    assert_eq!(the_team["name"], "Acme", "a refused update changes nothing");
    assert_eq!(
        the_team["numbering"],
        json!({"invoices": "RE{YY}{000}", "creditNotes": "GS/{YYYY}/{00}", "quotes": "Q-{0000}"})
    );
    let invoice = json!({
        "client": {"name": "Käserei", "email": "k@example.com"},
        "issueDate": "2026-03-01T00:00:00Z",
        "lineItems": [{"description": "Beratung", "unitPrice": 100, "quantity": 1}],
    });
    let made = call(reqwest::Method::POST, "/v1/invoices", Some(invoice)).await;
    assert_eq!(made["serial"], "RE26001");
    let id = made["id"].as_str().unwrap();
    // A credit note is issued now, in the server's year.
    let before = chrono::Utc::now().year();
    let note =
        call(reqwest::Method::POST, &format!("/v1/invoices/{id}/credit-notes"), Some(json!({"full": true})))
            .await;
    let years = [before, chrono::Utc::now().year()];
    let numbers = years.map(|year| json!(format!("GS/{year}/01")));
    assert!(numbers.contains(&note["serial"]), "{note}");
    assert_eq!(note["invoiceSerial"], "RE26001");
    server.kill().unwrap();
    server.wait().unwrap();
}
