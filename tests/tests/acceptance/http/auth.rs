use std::time::Duration;

use acceptance::{create_key, create_user, serve_config, spawn_app, spawn_app_with};
use accounts::{Role, Scope};
use app::config::parse_rate;
use chrono::TimeDelta;
use reqwest::Method;
use serde_json::json;

use super::error_of;

const CLIENTS: &str = "/v1/invoices/clients";

#[tokio::test]
async fn missing_unknown_and_malformed_keys_are_refused() {
    let app = spawn_app().await;
    let response = app.http.get(app.url(CLIENTS)).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(error_of(response).await, "missing X-API-Key header");
    let unknown = accounts::ApiKeySecret::generate();
    for key in [unknown.expose(), "bk_short", "Bearer something", ""] {
        let response = app.request(Method::GET, CLIENTS, key).send().await.unwrap();
        assert_eq!(response.status(), 401, "{key:?}");
        assert_eq!(error_of(response).await, "invalid API key");
    }
}

#[tokio::test]
async fn expired_and_revoked_keys_are_refused() {
    let mut config = serve_config();
    config.key_cache_ttl = Duration::from_millis(200);
    let app = spawn_app_with(config).await;
    let (_, expired) =
        create_key(&app.store, app.team, app.owner, Scope::Write, Some(TimeDelta::seconds(-1))).await;
    let response = app.request(Method::GET, CLIENTS, &expired).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(error_of(response).await, "API key expired");

    let (id, revoked) = create_key(&app.store, app.team, app.owner, Scope::Write, None).await;
    let response = app.request(Method::GET, CLIENTS, &revoked).send().await.unwrap();
    assert_eq!(response.status(), 200, "works before revocation (and is now cached)");
    app.store.accounts().revoke_api_key(id, chrono::Utc::now()).await.unwrap();
    // Revocation bites once the cached check expires.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let response = app.request(Method::GET, CLIENTS, &revoked).send().await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(error_of(response).await, "API key revoked");
}

#[tokio::test]
async fn last_use_is_recorded() {
    let app = spawn_app().await;
    let (id, key) = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await;
    let (expired_id, expired) =
        create_key(&app.store, app.team, app.owner, Scope::ReadOnly, Some(TimeDelta::seconds(-1))).await;
    assert_eq!(app.request(Method::GET, CLIENTS, &expired).send().await.unwrap().status(), 401);
    app.request(Method::GET, CLIENTS, &key).send().await.unwrap();
    // Recorded in the background; give it a moment.
    for _ in 0..50 {
        let keys = app.store.accounts().list_api_keys(app.team).await.unwrap();
        if keys.iter().any(|k| k.id == id && k.last_used_at.is_some()) {
            // The refused key was checked first, so its write would have landed by now.
            let refused = keys.iter().find(|k| k.id == expired_id).unwrap();
            assert_eq!(refused.last_used_at, None, "a refused key is not a use");
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("last_used_at was not recorded");
}

#[tokio::test]
async fn scopes_allow_exactly_their_permissions() {
    let app = spawn_app().await;
    let member = create_user(&app.store, app.team, Role::Member).await;
    let existing = app.create_client(&app.key, "Existing").await;
    let one = format!("{CLIENTS}/{}", existing["id"].as_str().unwrap());
    let body = json!({"name": "A", "email": "a@example.com", "line1": "1", "postalCode": "1"});
    // (scope, may read, may write)
    let matrix: [(Scope, bool, bool); 7] = [
        (Scope::ReadOnly, true, false),
        (Scope::Write, true, true),
        (Scope::from_parts("restricted", &["clients:read"]).unwrap(), true, false),
        (Scope::from_parts("restricted", &["clients:write"]).unwrap(), true, true),
        (Scope::from_parts("restricted", &["invoices:write", "track:write"]).unwrap(), false, false),
        (Scope::from_parts("restricted", &["agent:read"]).unwrap(), false, false),
        (Scope::from_parts("restricted", &["invoices:read"]).unwrap(), false, false),
    ];
    for (scope, may_read, may_write) in matrix {
        let (_, key) = create_key(&app.store, app.team, member, scope.clone(), None).await;
        for (method, path, writes) in [
            (Method::GET, CLIENTS.to_owned(), false),
            (Method::GET, one.clone(), false),
            (Method::POST, CLIENTS.to_owned(), true),
            (Method::PATCH, one.clone(), true),
        ] {
            let mut request = app.request(method.clone(), &path, &key);
            if method != Method::GET {
                request = request.json(&body);
            }
            let response = request.send().await.unwrap();
            let allowed = if writes { may_write } else { may_read };
            if allowed {
                assert!(response.status().is_success(), "{scope:?} {method} {path}: {}", response.status());
            } else {
                assert_eq!(response.status(), 403, "{scope:?} {method} {path}");
                let needed = if writes { "clients:write" } else { "clients:read" };
                assert_eq!(error_of(response).await, format!("this API key lacks the {needed} permission"));
            }
        }
    }
    // DELETE last, with a key that may not, then one that may.
    let (_, read_only) = create_key(&app.store, app.team, member, Scope::ReadOnly, None).await;
    assert_eq!(app.request(Method::DELETE, &one, &read_only).send().await.unwrap().status(), 403);
    assert_eq!(app.request(Method::DELETE, &one, &app.key).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn checks_run_in_the_contract_order() {
    let app = spawn_app().await;
    let (_, read_only) = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await;
    let bad_body = json!({"name": ""});
    let missing = format!("{CLIENTS}/0190f0c2-a0f2-7c3d-8e5a-6b7c8d9e0f1a");
    // 401 before 403 and 400.
    let response = app.request(Method::PATCH, &missing, "bk_nope").json(&bad_body).send().await.unwrap();
    assert_eq!(response.status(), 401);
    // 403 before 400.
    let response = app.request(Method::PATCH, &missing, &read_only).json(&bad_body).send().await.unwrap();
    assert_eq!(response.status(), 403);
    // 400 before 404.
    let response = app.request(Method::PATCH, &missing, &app.key).json(&bad_body).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "email: is required");
}

#[tokio::test]
async fn keys_are_rate_limited_with_headers() {
    let mut config = serve_config();
    config.rate_limit = parse_rate("3/60s").unwrap();
    let app = spawn_app_with(config).await;
    for remaining in ["2", "1", "0"] {
        let response = app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["ratelimit-limit"], "3");
        assert_eq!(response.headers()["ratelimit-remaining"], remaining);
        let reset: u64 = response.headers()["ratelimit-reset"].to_str().unwrap().parse().unwrap();
        assert!(reset <= 60);
    }
    let response = app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 429);
    let retry_after: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=20).contains(&retry_after), "one request refills in 20 s: {retry_after}");
    assert_eq!(response.headers()["ratelimit-remaining"], "0");
    assert_eq!(error_of(response).await, "rate limit exceeded");
    // The limit is per key: another key of the same team is unaffected.
    let (_, other) = create_key(&app.store, app.team, app.owner, Scope::Write, None).await;
    assert_eq!(app.request(Method::GET, CLIENTS, &other).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn failed_key_checks_are_limited_per_ip() {
    let mut config = serve_config();
    config.ip_rate_limit = parse_rate("2/60s").unwrap();
    let app = spawn_app_with(config).await;
    for _ in 0..2 {
        assert_eq!(app.request(Method::GET, CLIENTS, "bk_wrong").send().await.unwrap().status(), 401);
    }
    let response = app.request(Method::GET, CLIENTS, "bk_wrong").send().await.unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    // A valid key is not held back by the address's failures.
    assert_eq!(app.request(Method::GET, CLIENTS, &app.key).send().await.unwrap().status(), 200);
    // The public PDF shares the address's allowance, and its limit comes before its query
    // is read: 429, not the 400 of a parameter it does not take.
    let pdf = app.http.get(app.url("/v1/invoices/pdf?id=x&dowload=true")).send().await.unwrap();
    assert_eq!(pdf.status(), 429);
}
