//! `Idempotency-Key` on the writes of `/v1`, through the real server: a retry gets the
//! first answer and writes nothing, on any instance; misuse is refused for what it is.

use acceptance::{TestApp, create_key, create_team, create_user, spawn_app};
use accounts::{Claimed, IdempotencyKey, KeyClaim, Role, Scope};
use chrono::TimeDelta;
use http_api::rest::idempotency::fingerprint;
use kernel::{Clock, SystemClock};
use reqwest::{Method, Response};
use serde_json::{Value, json};

use super::error_of;

const INVOICES: &str = "/v1/invoices";
const CLIENTS: &str = "/v1/invoices/clients";

fn keyed(
    app: &TestApp,
    address: &str,
    method: Method,
    path: &str,
    key: &str,
    body: Option<&str>,
) -> reqwest::RequestBuilder {
    let request = app.http.request(method, format!("{address}{path}")).header("X-API-Key", &app.key);
    let request = request.header("Idempotency-Key", key);
    match body {
        Some(body) => request.header("content-type", "application/json").body(body.to_owned()),
        None => request,
    }
}

async fn listed(app: &TestApp, path: &str) -> Vec<Value> {
    let response = app.request(Method::GET, path, &app.key).send().await.unwrap();
    response.json::<Vec<Value>>().await.unwrap()
}

fn replayed(response: &Response) -> bool {
    response.headers().get("idempotent-replayed").is_some_and(|v| v == "true")
}

#[tokio::test]
async fn a_retried_invoice_is_made_once_on_any_instance() {
    let app = spawn_app().await;
    let other = app.another_instance();
    let client = app.create_client(&app.key, "Globex").await;
    let body = json!({"clientId": client["id"], "lineItems": [{"description": "Design", "unitPrice": 120, "quantity": 3}]})
        .to_string();

    let first =
        keyed(&app, &app.address, Method::POST, INVOICES, "order-42", Some(&body)).send().await.unwrap();
    assert_eq!(first.status(), 201);
    assert!(!replayed(&first));
    let location = first.headers()["location"].clone();
    let invoice: Value = first.json().await.unwrap();

    for address in [app.address.as_str(), other.as_str()] {
        let retry =
            keyed(&app, address, Method::POST, INVOICES, "order-42", Some(&body)).send().await.unwrap();
        assert_eq!(retry.status(), 201, "the retry on {address}");
        assert!(replayed(&retry));
        assert_eq!(retry.headers()["location"], location);
        assert!(
            retry.headers().contains_key("x-request-id")
                && retry.headers().contains_key("ratelimit-remaining")
        );
        assert_eq!(retry.json::<Value>().await.unwrap(), invoice, "the same invoice, serial and all");
    }
    assert_eq!(listed(&app, INVOICES).await.len(), 1, "billed once");

    // The key names that one request: any other use of it is refused, and writes nothing.
    let other_body = body.replace("120", "130");
    let other_path = format!("{INVOICES}?x=1");
    for (path, body) in [(INVOICES, other_body.as_str()), (other_path.as_str(), body.as_str())] {
        let response =
            keyed(&app, &app.address, Method::POST, path, "order-42", Some(body)).send().await.unwrap();
        assert_eq!(response.status(), 422);
        assert_eq!(
            error_of(response).await,
            "Idempotency-Key: was used for a different request (another method, path, body or API key)"
        );
    }
    let (_, colleague) = create_key(&app.store, app.team, app.owner, Scope::Write, None).await;
    let response = app
        .request(Method::POST, INVOICES, &colleague)
        .header("Idempotency-Key", "order-42")
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422, "another key of the team is not given this key's answer");
    assert_eq!(listed(&app, INVOICES).await.len(), 1);

    // Keys are per team: another team's same key is its own.
    let globex = create_team(&app.store, "Initech").await;
    let owner = create_user(&app.store, globex, Role::Owner).await;
    let (_, theirs) = create_key(&app.store, globex, owner, Scope::Write, None).await;
    let client_body =
        json!({"name": "Umbrella", "email": "a@example.com", "line1": "1 Road", "postalCode": "1"});
    let response =
        app.request(Method::POST, CLIENTS, &theirs).header("Idempotency-Key", "order-42").json(&client_body);
    assert_eq!(response.send().await.unwrap().status(), 201);
}

#[tokio::test]
async fn only_answers_of_requests_carried_out_are_kept() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Globex").await;
    let id = client["id"].as_str().unwrap();
    // A request refused for its form keeps nothing: the corrected one may use the key.
    let bad = json!({"name": "", "email": "a@example.com", "line1": "1 Road", "postalCode": "1"}).to_string();
    let response =
        keyed(&app, &app.address, Method::POST, CLIENTS, "fix-me", Some(&bad)).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let good = bad.replace("\"name\":\"\"", "\"name\":\"Initech\"");
    let response =
        keyed(&app, &app.address, Method::POST, CLIENTS, "fix-me", Some(&good)).send().await.unwrap();
    assert_eq!(response.status(), 201);

    // A delete carried out answers its retry with the same 200; without a key a second
    // delete finds nothing.
    let path = format!("{CLIENTS}/{id}");
    for expect_replay in [false, true] {
        let response =
            keyed(&app, &app.address, Method::DELETE, &path, "drop-globex", None).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(replayed(&response), expect_replay);
    }
    assert_eq!(app.request(Method::DELETE, &path, &app.key).send().await.unwrap().status(), 404);

    // A refusal for the state found (409: a client with invoices) is an answer, and kept.
    let kept = app.create_client(&app.key, "Hooli").await;
    let invoice =
        json!({"clientId": kept["id"], "lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1}]});
    assert_eq!(
        app.request(Method::POST, INVOICES, &app.key).json(&invoice).send().await.unwrap().status(),
        201
    );
    let path = format!("{CLIENTS}/{}", kept["id"].as_str().unwrap());
    for expect_replay in [false, true] {
        let response =
            keyed(&app, &app.address, Method::DELETE, &path, "drop-hooli", None).send().await.unwrap();
        assert_eq!(response.status(), 409);
        assert_eq!(replayed(&response), expect_replay);
    }

    // Reads ignore the header.
    let response = app.request(Method::GET, CLIENTS, &app.key).header("Idempotency-Key", "fix-me");
    assert_eq!(response.send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_retry_while_the_first_request_runs_is_told_to_wait() {
    let app = spawn_app().await;
    let (key_id, secret) = create_key(&app.store, app.team, app.owner, Scope::Write, None).await;
    let body = json!({"name": "Initech", "email": "a@example.com", "line1": "1 Road", "postalCode": "1"})
        .to_string();
    // The first attempt holds the key, as a request still running on some instance does.
    let now = SystemClock.now();
    let running = KeyClaim {
        team: app.team,
        key: IdempotencyKey::parse("slow-1").unwrap(),
        fingerprint: fingerprint(key_id, &actix_web::http::Method::POST, CLIENTS, body.as_bytes()),
        at: now,
        lease_until: now + TimeDelta::minutes(1),
        expires_at: now + TimeDelta::hours(24),
    };
    let keys = app.store.stores().idempotency;
    assert_eq!(keys.claim(&running).await.unwrap(), Claimed::Granted);
    let retry = || {
        app.request(Method::POST, CLIENTS, &secret)
            .header("Idempotency-Key", "slow-1")
            .header("content-type", "application/json")
            .body(body.clone())
    };
    let response = retry().send().await.unwrap();
    assert_eq!(response.status(), 409);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(
        error_of(response).await,
        "Idempotency-Key: a request with this key is still being processed, retry later"
    );
    assert!(listed(&app, CLIENTS).await.is_empty(), "the retry wrote nothing");

    keys.answer(&running, &accounts::KeptResponse { status: 201, headers: vec![], body: b"{}".to_vec() })
        .await
        .unwrap();
    let response = retry().send().await.unwrap();
    assert_eq!((response.status().as_u16(), replayed(&response)), (201, true));

    // Identical requests racing: one is carried out, every other waits or gets its answer.
    let mut racing = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let request = keyed(&app, &app.address, Method::POST, CLIENTS, "race-1", Some(&body));
        racing.spawn(async move { request.send().await.unwrap().status().as_u16() });
    }
    let statuses = racing.join_all().await;
    assert!(statuses.iter().all(|s| [201, 409].contains(s)), "{statuses:?}");
    assert_eq!(listed(&app, CLIENTS).await.len(), 1, "one client for eight racing requests: {statuses:?}");
}

#[tokio::test]
async fn a_malformed_key_is_refused_by_name() {
    let app = spawn_app().await;
    let body = json!({"name": "Initech", "email": "a@example.com", "line1": "1 Road", "postalCode": "1"});
    let long = "k".repeat(256);
    for key in [long.as_str(), "has space", ""] {
        let response =
            app.request(Method::POST, CLIENTS, &app.key).header("Idempotency-Key", key).json(&body);
        let response = response.send().await.unwrap();
        assert_eq!(response.status(), 400, "{key:?}");
        assert_eq!(
            error_of(response).await,
            "Idempotency-Key: must be 1 to 255 visible ASCII characters without spaces"
        );
    }
    let response = app
        .request(Method::POST, CLIENTS, &app.key)
        .header("Idempotency-Key", "a")
        .header("Idempotency-Key", "b")
        .json(&body);
    let response = response.send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "Idempotency-Key: must be sent once");
    // A method no route takes is the router's answer, whatever the key.
    let response =
        app.request(Method::PUT, CLIENTS, &app.key).header("Idempotency-Key", "has space").json(&body);
    assert_eq!(response.send().await.unwrap().status(), 405);
    assert!(listed(&app, CLIENTS).await.is_empty());
}
