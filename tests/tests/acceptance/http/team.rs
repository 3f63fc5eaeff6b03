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
