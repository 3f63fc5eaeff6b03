//! `/v1/team`: the team as its owners and admins keep it: name, currency while it has no
//! books, and the default sender address; every change checked before any is written.

use acceptance::{TestApp, create_key, create_user, spawn_app};
use accounts::{Role, Scope};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error_of;

async fn patch(app: &TestApp, key: &str, body: Value) -> reqwest::Response {
    app.request(Method::PATCH, "/v1/team", key).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn owners_rename_the_team_and_change_its_currency_until_its_books_start() {
    let app = spawn_app().await;
    let team = app.get_json("/v1/team").await;
    assert_eq!(
        (&team["id"], &team["name"], &team["currency"]),
        (&json!(app.team.to_string()), &json!("Acme"), &json!("EUR"))
    );
    assert_eq!(team["sender"]["iban"], Value::Null);

    let changed = patch(
        &app,
        &app.key,
        json!({"name": "Acme GmbH", "currency": "CHF",
        "sender": {"line1": "Bahnhofstrasse 1", "postalCode": "8001", "city": "Zürich", "countryCode": "CH",
                   "iban": "CH93 0076 2011 6238 5295 7"}}),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);
    let changed: Value = changed.json().await.unwrap();
    assert_eq!((&changed["name"], &changed["currency"]), (&json!("Acme GmbH"), &json!("CHF")));
    assert_eq!(changed["sender"]["iban"], "CH9300762011623852957");
    assert_eq!(changed["sender"]["name"], "Acme GmbH", "the sender still named as the team follows it");
    assert_eq!(app.get_json("/v1/team").await, changed);

    // Refused as a whole: the name is not changed beside a bad IBAN.
    for (body, error) in [
        (json!({"name": "Other", "sender": {"iban": "CH00 0000"}}), "sender.iban: must be a valid IBAN"),
        (json!({"currency": "chf"}), "currency: must be an ISO 4217 currency code such as EUR"),
        (json!({"name": ""}), "name: must not be empty"),
        (json!({"sender": {"name": null}}), "sender.name: "),
        (json!({"owner": "me"}), "owner: not accepted"),
    ] {
        let response = patch(&app, &app.key, body.clone()).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let message = error_of(response).await;
        assert!(message.starts_with(error), "{body}: {message}");
    }
    assert_eq!(app.get_json("/v1/team").await, changed, "nothing written");

    // Once it has an invoice, its currency is its books'.
    let client = app.create_client(&app.key, "Käserei").await;
    let made = app
        .request(Method::POST, "/v1/invoices", &app.key)
        .json(&json!({"clientId": client["id"], "lineItems": [{"description": "x", "unitPrice": 1, "quantity": 1}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.json::<Value>().await.unwrap()["currency"], "CHF");
    let refused = patch(&app, &app.key, json!({"currency": "EUR", "name": "Acme AG"})).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert_eq!(
        error_of(refused).await,
        "currency: the team's books are in its currency (invoices: 1, recurring invoices: 0); a client may be billed in another (its currency)"
    );
    assert_eq!(app.get_json("/v1/team").await["name"], "Acme GmbH");
    let same = patch(&app, &app.key, json!({"currency": "CHF", "name": "Acme AG"})).await;
    assert_eq!(same.status(), StatusCode::OK, "its own currency is no change");
}

#[tokio::test]
async fn members_and_keys_without_the_permission_may_not() {
    let app = spawn_app().await;
    let member = create_user(&app.store, app.team, Role::Member).await;
    let (_, member_key) = create_key(&app.store, app.team, member, Scope::Write, None).await;
    for response in [
        app.request(Method::GET, "/v1/team", &member_key).send().await.unwrap(),
        patch(&app, &member_key, json!({"name": "Mine"})).await,
    ] {
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        assert_eq!(error_of(response).await, "only the team's owners and admins may read or change the team");
    }
    let (_, reader) = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await;
    assert_eq!(app.request(Method::GET, "/v1/team", &reader).send().await.unwrap().status(), StatusCode::OK);
    let response = patch(&app, &reader, json!({"name": "Mine"})).await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(app.get_json("/v1/team").await["name"], "Acme");
}

#[tokio::test]
async fn owners_number_each_series_by_a_pattern_from_its_next_number() {
    let clock =
        std::sync::Arc::new(kernel::FixedClock::new(kernel::parse_instant("2026-06-01T09:00:00Z").unwrap()));
    let app = acceptance::spawn_app_on(clock).await;
    assert_eq!(
        app.get_json("/v1/team").await["numbering"],
        json!({"invoices": "INV-{0000}", "creditNotes": "CN-{0000}", "quotes": "Q-{0000}"})
    );
    let client = app.create_client(&app.key, "Käserei").await;
    let invoice = async |issued: &str| -> Value {
        let body = json!({"clientId": client["id"], "issueDate": issued,
                          "lineItems": [{"description": "Beratung", "unitPrice": 100, "quantity": 1}]});
        let made = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
        assert_eq!(made.status(), StatusCode::CREATED);
        made.json().await.unwrap()
    };
    let first = invoice("2026-05-01T00:00:00Z").await;
    assert_eq!(first["serial"], "INV-0001");

    let changed = patch(
        &app,
        &app.key,
        json!({"numbering": {"invoices": "{YYYY}-{0000}", "creditNotes": "GS/{YY}/{000}"}}),
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK);
    let changed: Value = changed.json().await.unwrap();
    assert_eq!(
        changed["numbering"],
        json!({"invoices": "{YYYY}-{0000}", "creditNotes": "GS/{YY}/{000}", "quotes": "Q-{0000}"})
    );
    let mut serials = Vec::new();
    for issued in
        ["2026-05-02T00:00:00Z", "2027-01-10T00:00:00Z", "2026-12-31T23:30:00-02:00", "2026-07-01T00:00:00Z"]
    {
        serials.push(invoice(issued).await["serial"].clone());
    }
    assert_eq!(serials, ["2026-0001", "2027-0001", "2027-0002", "2026-0002"]);
    // The first keeps its number.
    let id = first["id"].as_str().unwrap();
    assert_eq!(app.get_json(&format!("/v1/invoices/{id}")).await["serial"], "INV-0001");

    // A credit note of its own series, its PDF named after it without the slashes.
    let note = app
        .request(Method::POST, &format!("/v1/invoices/{id}/credit-notes"), &app.key)
        .json(&json!({"full": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(note.status(), StatusCode::CREATED);
    let note: Value = note.json().await.unwrap();
    assert_eq!((&note["serial"], &note["invoiceSerial"]), (&json!("GS/26/001"), &json!("INV-0001")));
    let pdf = app
        .http
        .get(app.url(&format!("/v1/credit-notes/pdf?id={}", note["id"].as_str().unwrap())))
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.headers()["content-disposition"], "inline; filename=\"GS-26-001.pdf\"");

    // Searches name a serial with or without its zeros, or by its counter.
    let found = async |q: &str| -> Vec<Value> {
        let listed = app.get_json(&format!("/v1/invoices?q={q}")).await;
        let mut serials: Vec<Value> =
            listed.as_array().unwrap().iter().map(|i| i["serial"].clone()).collect();
        serials.sort_by_key(ToString::to_string);
        serials
    };
    assert_eq!(found("2027-2").await, [json!("2027-0002")]);
    assert_eq!(found("1").await, [json!("2026-0001"), json!("2027-0001"), json!("INV-0001")]);

    // A pattern that repeats a number is refused when the invoice is made, nothing written:
    // the running count's next, 2, makes the 2026-0002 of the yearly count.
    patch(&app, &app.key, json!({"numbering": {"invoices": "2026-{0000}"}})).await;
    let body = json!({"clientId": client["id"], "issueDate": "2026-08-01T00:00:00Z",
                      "lineItems": [{"description": "Beratung", "unitPrice": 100, "quantity": 1}]});
    let refused = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert_eq!(
        error_of(refused).await,
        "numbering: the team's pattern makes 2026-0002, which another document of the series has; nothing was made: choose a pattern that makes new numbers (PATCH /v1/team)"
    );
    assert_eq!(app.get_json("/v1/invoices").await.as_array().unwrap().len(), 5);
    patch(&app, &app.key, json!({"numbering": {"invoices": "INV-{0000}"}})).await;
    assert_eq!(invoice("2026-08-01T00:00:00Z").await["serial"], "INV-0002", "the running count goes on");
}

#[tokio::test]
async fn a_bad_numbering_pattern_is_refused_naming_its_series() {
    let app = spawn_app().await;
    let before = app.get_json("/v1/team").await;
    // Refused as a whole: the name is not changed beside a bad pattern.
    for (body, error) in [
        (
            json!({"numbering": {"invoices": "RE-{MM}{000}"}}),
            "numbering.invoices: unknown placeholder {MM}: use {0000} (the counter, one zero per digit), {YYYY} or {YY}",
        ),
        (
            json!({"numbering": {"creditNotes": "GS-{YYYY}"}}),
            "numbering.creditNotes: needs the counter, such as {0000}",
        ),
        (json!({"numbering": {"quotes": "{00}{000}"}}), "numbering.quotes: has more than one counter"),
        (
            json!({"numbering": {"invoices": "RE {0000}"}}),
            "numbering.invoices: may hold only letters, digits, - _ . / and placeholders, not ' '",
        ),
        (
            json!({"name": "Other", "numbering": {"invoices": "RE-{0000"}}),
            "numbering.invoices: has a { without its }",
        ),
        (json!({"numbering": {"invoices": null}}), "numbering.invoices: "),
    ] {
        let response = patch(&app, &app.key, body.clone()).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let message = error_of(response).await;
        assert!(message.starts_with(error), "{body}: {message}");
    }
    assert_eq!(app.get_json("/v1/team").await, before, "nothing written");
}
