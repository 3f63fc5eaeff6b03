//! Outbound webhooks, arrived by a server that verifies every delivery with the official
//! Standard Webhooks library: subscriptions and their secrets, what a delivery carries,
//! retries on the standard's schedule (429's Retry-After honoured, 410 disabling), secret
//! rotation, tests and redeliveries, permissions, and what another team never sees.

use acceptance::outside::WebhookReceiver;
use acceptance::{TestApp, create_key, create_user, serve_config, spawn_app, spawn_app_with};
use accounts::Permission;
use chrono::{TimeDelta, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error_of;
use super::sending::post;

/// Subscribes `url` to `events`; the endpoint and its secret.
async fn subscribe(app: &TestApp, url: &str, events: Value) -> (Value, String) {
    let (status, endpoint) = post(app, "/v1/webhooks", json!({"url": url, "events": events})).await;
    assert_eq!(status, StatusCode::CREATED, "{endpoint}");
    let secret = endpoint["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"));
    (endpoint, secret)
}

async fn deliveries(app: &TestApp, endpoint: &Value) -> Vec<Value> {
    let path = format!("/v1/webhooks/{}/deliveries", endpoint["id"].as_str().unwrap());
    app.get_json(&path).await.as_array().unwrap().clone()
}

#[tokio::test]
async fn endpoints_are_subscribed_listed_changed_and_deleted() {
    let app = spawn_app().await;
    let types = app.get_json("/v1/webhooks/event-types").await;
    let names: Vec<&str> = types.as_array().unwrap().iter().map(|t| t["type"].as_str().unwrap()).collect();
    for expected in [
        "invoice.created",
        "invoice.overdue",
        "payment.refunded",
        "credit_note.created",
        "message.failed",
        "client.deleted",
        "time_entry.updated",
        "timer.stopped",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    assert_eq!(names.len(), 28);
    assert!(!names.contains(&"webhook.test"));

    let (endpoint, _) =
        subscribe(&app, "https://93.184.216.34/hooks", json!(["invoice.paid", "payment.*"])).await;
    let id = endpoint["id"].as_str().unwrap();
    assert_eq!(endpoint["events"], json!(["invoice.paid", "payment.*"]));
    assert_eq!(endpoint["enabled"], true);
    let read = app.get_json(&format!("/v1/webhooks/{id}")).await;
    assert!(read.get("secret").is_none(), "the secret is shown once");
    assert_eq!(app.get_json("/v1/webhooks").await, json!([read]));
    let changed = app
        .request(Method::PATCH, &format!("/v1/webhooks/{id}"), &app.key)
        .json(&json!({"events": ["*"], "description": "everything"}))
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
    let changed: Value = changed.json().await.unwrap();
    assert_eq!((&changed["events"], changed["description"].as_str()), (&json!(["*"]), Some("everything")));
    for (body, error) in [
        (
            json!({"url": "https://93.184.216.34/x", "events": ["invoice.payed"]}),
            "events[0]: \"invoice.payed\" names no event type",
        ),
        (json!({"url": "https://93.184.216.34/x", "events": []}), "events: "),
        (
            json!({"url": "ftp://93.184.216.34/x", "events": ["*"]}),
            "url: must be an absolute http or https URL",
        ),
        (
            json!({"url": "https://user:pw@93.184.216.34/x", "events": ["*"]}),
            "url: must not carry a user name or password",
        ),
        (
            json!({"url": "https://93.184.216.34/x", "events": ["*"], "secret": "mine"}),
            "secret: not accepted",
        ),
    ] {
        let response = app.request(Method::POST, "/v1/webhooks", &app.key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let message = error_of(response).await;
        assert!(message.starts_with(error), "{body}: {message}");
    }
    // Twenty endpoints at most: each event is one delivery per endpoint.
    for _ in 1..20 {
        subscribe(&app, "https://93.184.216.34/more", json!(["*"])).await;
    }
    let (status, refused) =
        post(&app, "/v1/webhooks", json!({"url": "https://93.184.216.34/x", "events": ["*"]})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(refused["error"], "the team has 20 webhook endpoints, the most it may have; delete one first");
    let deleted = app.request(Method::DELETE, &format!("/v1/webhooks/{id}"), &app.key).send().await.unwrap();
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(app.get_json("/v1/webhooks").await.as_array().unwrap().len(), 19);
    assert!(!app.get_json("/v1/webhooks").await.to_string().contains(id));
    let gone = app.request(Method::GET, &format!("/v1/webhooks/{id}"), &app.key).send().await.unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let mut config = serve_config();
    config.sending.webhook_allow_private = false;
    let app = spawn_app_with(config).await;
    for url in [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://10.0.0.8/",
        "http://169.254.169.254/latest",
        "http://[::1]/",
        "http://[::ffff:192.168.0.1]/",
        // What the special-purpose registries do not mark globally reachable, and the
        // forms that carry an IPv4 address a relay or translator would reach.
        "http://[2002:7f00:1::1]/",
        "http://[::ffff:0:7f00:1]/",
        "http://[2001:0:4136:e378::1]/",
        "http://[fec0::1]/",
        "http://[100::1]/",
        "http://192.88.99.1/",
        "http://[64:ff9b::a00:1]/",
        "http://192.0.0.9/",
    ] {
        let response = app
            .request(Method::POST, "/v1/webhooks", &app.key)
            .json(&json!({"url": url, "events": ["*"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{url}");
        let message = error_of(response).await;
        assert!(
            message.starts_with("url: ")
                && message.contains("public addresses only")
                && message.contains("BILLABLE_WEBHOOK_ALLOW_PRIVATE=true"),
            "{url}: {message}"
        );
    }
    let unresolved = json!({"url": "https://nowhere.invalid/hook", "events": ["*"]});
    let response =
        app.request(Method::POST, "/v1/webhooks", &app.key).json(&unresolved).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(error_of(response).await.contains("does not resolve"));
    let (status, _) =
        post(&app, "/v1/webhooks", json!({"url": "https://93.184.216.34/hook", "events": ["*"]})).await;
    assert_eq!(status, StatusCode::CREATED);
}

#[tokio::test]
async fn every_delivery_is_signed_and_verified_by_the_official_library() {
    let receiver = WebhookReceiver::start();
    let app = spawn_app().await;
    let (endpoint, secret) =
        subscribe(&app, &receiver.url("/billable"), json!(["client.*", "invoice.*", "payment.*"])).await;
    receiver.verify_with(&[&secret]).await;
    let client = app.create_client(&app.key, "Ärzte GmbH").await;
    let (_, invoice) = post(
        &app,
        "/v1/invoices",
        json!({"clientId": client["id"], "lineItems": [{"description": "Design", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    let (_, payment) = post(
        &app,
        &format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap()),
        json!({"amount": 100}),
    )
    .await;
    // Time is not of this subscription.
    post(&app, "/v1/track/time", json!({"durationSeconds": 60, "taskName": "x", "date": "2026-11-20"})).await;
    let report = app.run_jobs().await;
    assert_eq!(report.done, 4, "{report:?}");

    let arrived = receiver.deliveries();
    let type_of = |d: &Value| {
        serde_json::from_str::<Value>(d["body"].as_str().unwrap()).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Deliveries run side by side: they may arrive in any order (Standard Webhooks promises none).
    let mut types: Vec<String> = arrived.iter().map(type_of).collect();
    types.sort();
    assert_eq!(types, ["client.created", "invoice.created", "invoice.paid", "payment.created"]);
    for delivery in &arrived {
        assert_eq!(delivery["verified"][&secret], true, "{delivery}");
        assert_eq!(delivery["content_type"], "application/json");
        let signature = delivery["webhook_signature"].as_str().unwrap();
        assert!(signature.starts_with("v1,") && !signature.contains(' '), "one secret, one signature");
        let timestamp: i64 = delivery["webhook_timestamp"].as_str().unwrap().parse().unwrap();
        assert!((Utc::now().timestamp() - timestamp).abs() < 60, "the time of the attempt");
    }
    let body = |kind: &str| {
        let delivery = arrived.iter().find(|d| type_of(d) == kind).unwrap();
        serde_json::from_str::<Value>(delivery["body"].as_str().unwrap()).unwrap()
    };
    assert_eq!(body("client.created")["data"], client, "data is the resource as GET shows it");
    assert_eq!(body("payment.created")["data"], payment);
    assert_eq!(body("invoice.paid")["data"]["status"], "PAID");
    assert_eq!(body("invoice.created")["data"]["status"], "PENDING", "as it was when it happened");
    assert!(body("invoice.created")["timestamp"].as_str().unwrap().ends_with('Z'));
    // The log names each delivery by its webhook-id.
    let logged = deliveries(&app, &endpoint).await;
    assert_eq!(logged.len(), 4);
    for delivery in &logged {
        assert_eq!(delivery["status"], "succeeded");
        assert_eq!(
            (delivery["attempts"].as_u64(), delivery["responseStatus"].as_u64()),
            (Some(1), Some(204))
        );
        assert!(arrived.iter().any(|r| r["webhook_id"] == delivery["eventId"]));
    }
    // A test goes to this endpoint only.
    let (status, test) =
        post(&app, &format!("/v1/webhooks/{}/test", endpoint["id"].as_str().unwrap()), json!(null)).await;
    assert_eq!((status, test["eventType"].as_str()), (StatusCode::ACCEPTED, Some("webhook.test")));
    app.run_jobs().await;
    let last = receiver.deliveries().pop().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(last["body"].as_str().unwrap()).unwrap()["type"],
        "webhook.test"
    );
    assert_eq!(last["verified"][&secret], true);
}

#[tokio::test]
async fn failures_follow_the_standard_schedule_and_410_disables() {
    let receiver = WebhookReceiver::start();
    let app = spawn_app().await;
    let (endpoint, secret) = subscribe(&app, &receiver.url("/hook"), json!(["client.created"])).await;
    receiver.verify_with(&[&secret]).await;
    receiver.respond(json!([500, "429:600", 204])).await;
    app.create_client(&app.key, "Acme").await;
    let at = Utc::now();
    assert_eq!(app.run_jobs_at(at).await.retried, 1);
    let first = deliveries(&app, &endpoint).await.pop().unwrap();
    assert_eq!((first["status"].as_str(), first["responseStatus"].as_u64()), (Some("pending"), Some(500)));
    assert!(first["error"].as_str().unwrap().contains("500"));
    assert_eq!(app.run_jobs_at(at + TimeDelta::seconds(4)).await.retried, 0, "5 s later, not sooner");
    assert_eq!(app.run_jobs_at(at + TimeDelta::seconds(5)).await.retried, 1);
    let throttled = deliveries(&app, &endpoint).await.pop().unwrap();
    assert_eq!(throttled["responseStatus"], 429);
    // Retry-After: 600 is later than the schedule's next wait (5 minutes): it is honoured.
    let next: chrono::DateTime<Utc> = throttled["nextAttemptAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(next.timestamp_millis(), (at + TimeDelta::seconds(5 + 600)).timestamp_millis());
    assert_eq!(app.run_jobs_at(at + TimeDelta::seconds(306)).await.done, 0);
    assert_eq!(app.run_jobs_at(at + TimeDelta::seconds(605)).await.done, 1);
    let arrived = receiver.deliveries();
    assert_eq!(arrived.len(), 3);
    assert!(
        arrived.iter().all(|d| d["webhook_id"] == arrived[0]["webhook_id"]),
        "one webhook-id for every attempt"
    );
    assert!(arrived.iter().all(|d| d["verified"][&secret] == true));
    let done = deliveries(&app, &endpoint).await.pop().unwrap();
    assert_eq!((done["status"].as_str(), done["attempts"].as_u64()), (Some("succeeded"), Some(3)));

    // 410 Gone: failed at once, the endpoint disabled, nothing more sent to it.
    receiver.respond(json!([410])).await;
    app.create_client(&app.key, "Globex").await;
    assert_eq!(app.run_jobs().await.failed, 1);
    let id = endpoint["id"].as_str().unwrap();
    let disabled = app.get_json(&format!("/v1/webhooks/{id}")).await;
    assert_eq!(disabled["enabled"], false);
    assert!(disabled["disabledReason"].as_str().unwrap().contains("410"));
    app.create_client(&app.key, "Initech").await;
    app.run_jobs().await;
    assert_eq!(receiver.deliveries().len(), 4, "a disabled endpoint gets nothing");
    let gone = deliveries(&app, &endpoint).await.into_iter().find(|d| d["responseStatus"] == 410).unwrap();
    let path = format!("/v1/webhooks/{id}/deliveries/{}/redeliver", gone["id"].as_str().unwrap());
    let refused = app.request(Method::POST, &path, &app.key).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let enable =
        app.request(Method::PATCH, &format!("/v1/webhooks/{id}"), &app.key).json(&json!({"enabled": true}));
    assert_eq!(enable.send().await.unwrap().status(), StatusCode::OK);
    let again = app.request(Method::POST, &path, &app.key).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::ACCEPTED);
    app.run_jobs().await;
    let redelivered = receiver.deliveries().pop().unwrap();
    assert_eq!(redelivered["webhook_id"], gone["eventId"], "the same webhook-id: a receiver dedupes by it");
    assert_eq!(redelivered["verified"][&secret], true);
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_old_one_while_they_overlap() {
    let receiver = WebhookReceiver::start();
    let app = spawn_app().await;
    let (endpoint, old) = subscribe(&app, &receiver.url("/hook"), json!(["client.*"])).await;
    let id = endpoint["id"].as_str().unwrap();
    let rotate = app
        .request(Method::POST, &format!("/v1/webhooks/{id}/rotate-secret"), &app.key)
        // JSON Schema's integers include 3600.0.
        .json(&json!({"overlapSeconds": 3600.0}))
        .send()
        .await
        .unwrap();
    assert_eq!(rotate.status(), StatusCode::OK);
    let rotated: Value = rotate.json().await.unwrap();
    let new = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);
    assert!(rotated["previousSecretExpiresAt"].is_string());
    receiver.verify_with(&[&old, &new]).await;
    app.create_client(&app.key, "Acme").await;
    app.run_jobs().await;
    let during = receiver.deliveries().pop().unwrap();
    assert_eq!(during["webhook_signature"].as_str().unwrap().split(' ').count(), 2);
    assert_eq!((&during["verified"][&old], &during["verified"][&new]), (&json!(true), &json!(true)));
    app.create_client(&app.key, "Globex").await;
    app.run_jobs_at(Utc::now() + TimeDelta::hours(2)).await;
    let after = receiver.deliveries().pop().unwrap();
    assert_eq!(after["verified"][&new], true);
    assert_ne!(after["verified"][&old], true, "the old secret no longer signs");
    let too_long = app
        .request(Method::POST, &format!("/v1/webhooks/{id}/rotate-secret"), &app.key)
        .json(&json!({"overlapSeconds": 604_801}))
        .send()
        .await
        .unwrap();
    assert_eq!(too_long.status(), StatusCode::BAD_REQUEST);
    assert_eq!(error_of(too_long).await, "overlapSeconds: must be a whole number from 0 to 604800");
    // A second rotation while the first one's overlap runs would cut the oldest secret off
    // before the time it was promised: refused, unless it asks for no overlap at all.
    let rotate = |body: Value| {
        app.request(Method::POST, &format!("/v1/webhooks/{id}/rotate-secret"), &app.key).json(&body).send()
    };
    let again = rotate(json!({})).await.unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert!(error_of(again).await.starts_with("the previous secret still signs until "));
    let at_once = rotate(json!({"overlapSeconds": 0})).await.unwrap();
    assert_eq!(at_once.status(), StatusCode::OK);
    let at_once: Value = at_once.json().await.unwrap();
    assert_eq!(at_once["previousSecretExpiresAt"], Value::Null);
    assert_ne!(at_once["secret"].as_str().unwrap(), new);
}

#[tokio::test]
async fn webhooks_need_their_permissions_and_stay_in_their_team() {
    let receiver = WebhookReceiver::start();
    let app = spawn_app().await;
    let restricted = |permissions: &[&str]| {
        accounts::Scope::Restricted(
            permissions.iter().map(|p| accounts::Permission::parse(p).unwrap()).collect(),
        )
    };
    let (_, hooks_only) =
        acceptance::create_key(&app.store, app.team, app.owner, restricted(&["webhooks:write"]), None).await;
    let (_, hooks_and_time) = acceptance::create_key(
        &app.store,
        app.team,
        app.owner,
        restricted(&["webhooks:write", "track:read"]),
        None,
    )
    .await;
    let (_, reader) =
        acceptance::create_key(&app.store, app.team, app.owner, accounts::Scope::ReadOnly, None).await;
    let (_, clients_only) =
        acceptance::create_key(&app.store, app.team, app.owner, restricted(&["clients:read"]), None).await;
    let create = |key: &str, events: Value| {
        app.request(Method::POST, "/v1/webhooks", key)
            .json(&json!({"url": receiver.url("/x"), "events": events}))
            .send()
    };
    let refused = create(&hooks_only, json!(["invoice.*"])).await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(error_of(refused).await.contains("invoices:read"));
    assert_eq!(
        create(&hooks_and_time, json!(["time_entry.*", "timer.*"])).await.unwrap().status(),
        StatusCode::CREATED
    );
    assert_eq!(create(&hooks_and_time, json!(["*"])).await.unwrap().status(), StatusCode::FORBIDDEN);
    assert_eq!(create(&reader, json!(["*"])).await.unwrap().status(), StatusCode::FORBIDDEN, "read-only");
    let listed = app.request(Method::GET, "/v1/webhooks", &reader).send().await.unwrap();
    assert_eq!(listed.status(), StatusCode::OK, "reading is part of read-only");
    let not_hooks = app.request(Method::GET, "/v1/webhooks", &clients_only).send().await.unwrap();
    assert_eq!(not_hooks.status(), StatusCode::FORBIDDEN);

    // Another team's events never reach this team's endpoints, nor its endpoints this one.
    let (endpoint, secret) = subscribe(&app, &receiver.url("/mine"), json!(["*"])).await;
    receiver.verify_with(&[&secret]).await;
    let other = acceptance::create_team(&app.store, "Other").await;
    let owner = acceptance::create_user(&app.store, other, accounts::Role::Owner).await;
    let (_, theirs) = acceptance::create_key(&app.store, other, owner, accounts::Scope::Write, None).await;
    app.create_client(&theirs, "Theirs").await;
    app.create_client(&app.key, "Ours").await;
    app.run_jobs().await;
    let mine: Vec<Value> = receiver.deliveries().into_iter().filter(|d| d["path"] == "/mine").collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert!(mine[0]["body"].as_str().unwrap().contains("\"Ours\""));
    let path = format!("/v1/webhooks/{}", endpoint["id"].as_str().unwrap());
    assert_eq!(
        app.request(Method::GET, &path, &theirs).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let delete = app.request(Method::DELETE, &path, &theirs).send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::NOT_FOUND);

    // A key that may write webhooks but not read what this endpoint receives can neither
    // point it elsewhere nor take a secret that verifies its deliveries.
    let moved = app
        .request(Method::PATCH, &path, &hooks_only)
        .json(&json!({"url": receiver.url("/stolen")}))
        .send()
        .await
        .unwrap();
    assert_eq!(moved.status(), StatusCode::FORBIDDEN);
    assert!(error_of(moved).await.starts_with("this API key lacks the "));
    let rotated =
        app.request(Method::POST, &format!("{path}/rotate-secret"), &hooks_only).send().await.unwrap();
    assert_eq!(rotated.status(), StatusCode::FORBIDDEN);
    let described = app
        .request(Method::PATCH, &path, &hooks_only)
        .json(&json!({"description": "renamed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(described.status(), StatusCode::OK, "a description sends nothing anywhere");
    let kept = app.request(Method::GET, &path, &app.key).send().await.unwrap().json::<Value>().await.unwrap();
    assert_eq!(kept["url"], receiver.url("/mine"));
    let listed = app.request(Method::GET, "/v1/webhooks", &theirs).send().await.unwrap();
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([]));
}

/// A member's endpoint gets the member's own time, never a colleague's, as `GET
/// /v1/track/time` shows a member; the owner's gets the team's. It acts for the user, not
/// the key: revoking the key that made it leaves it working, and the user's role as the team
/// has it when each event is dispatched and delivered decides what it gets.
#[tokio::test]
async fn endpoints_get_only_the_time_their_maker_may_read() {
    let receiver = WebhookReceiver::start();
    let app = spawn_app().await;
    let (member, member_key) = member_of(&app, &[Permission::WebhooksWrite, Permission::TrackWrite]).await;
    let (_, colleague_key) = member_of(&app, &[Permission::TrackWrite]).await;
    let subscribe_as = async |key: &str, path: &str| {
        let body = json!({"url": receiver.url(path), "events": ["time_entry.*", "timer.*"]});
        let response = app.request(Method::POST, "/v1/webhooks", key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        response.json::<Value>().await.unwrap()
    };
    let by_member = subscribe_as(&member_key, "/member").await;
    assert_eq!(by_member["createdBy"], member.to_string());
    let by_owner = subscribe_as(&app.key, "/owner").await;
    assert_eq!(by_owner["createdBy"], app.owner.to_string());
    receiver
        .verify_with(&[by_member["secret"].as_str().unwrap(), by_owner["secret"].as_str().unwrap()])
        .await;
    let log = async |key: &str, task: &str| {
        let body = json!({"durationSeconds": 60, "taskName": task, "date": "2026-11-20"});
        let response = app.request(Method::POST, "/v1/track/time", key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
    };
    log(&member_key, "mine").await;
    log(&colleague_key, "theirs").await;
    app.run_jobs().await;
    // Revoking the key that made the member's endpoint does not silence it.
    let key_id = app.store.accounts().list_api_keys(app.team).await.unwrap();
    let member_key_id = key_id.iter().find(|k| k.user_id == member).unwrap().id;
    app.store.accounts().revoke_api_key(member_key_id, Utc::now()).await.unwrap();
    let (_, new_member_key) = create_key(&app.store, app.team, member, accounts::Scope::Write, None).await;
    log(&new_member_key, "mine again").await;
    app.run_jobs().await;
    let tasks_at = |path: &str| {
        let mut tasks: Vec<String> = receiver
            .deliveries()
            .iter()
            .filter(|d| d["path"] == path)
            .map(|d| {
                let body: Value = serde_json::from_str(d["body"].as_str().unwrap()).unwrap();
                body["data"]["taskName"].as_str().unwrap().to_owned()
            })
            .collect();
        tasks.sort();
        tasks
    };
    assert_eq!(tasks_at("/member"), ["mine", "mine again"], "a member's endpoint gets their own time");
    assert_eq!(tasks_at("/owner"), ["mine", "mine again", "theirs"], "an owner's gets the team's");
    assert_eq!(deliveries(&app, &by_member).await.len(), 2, "others' time is not even logged");

    if app.db.schema().is_none() && !app.db.url.starts_with("sqlite://") {
        return; // Roles change only in the database; the in-memory store has none to change.
    }
    // The maker's role as the team has it at delivery: a member made admin gets the team's
    // time from then on; once gone from the team, nothing.
    app.db.execute(&format!("UPDATE users SET role = 'admin' WHERE id = '{member}'")).await;
    log(&colleague_key, "theirs, now readable").await;
    app.run_jobs().await;
    assert_eq!(tasks_at("/member"), ["mine", "mine again", "theirs, now readable"]);
    log(&colleague_key, "queued while an admin").await;
    app.store.notify().dispatch_events(100, Utc::now()).await.unwrap();
    app.db.execute(&format!("UPDATE users SET role = 'member' WHERE id = '{member}'")).await;
    app.run_jobs().await;
    assert_eq!(tasks_at("/member").len(), 3, "demoted before delivery: withheld");
    let failed = deliveries(&app, &by_member).await;
    let withheld = failed.iter().find(|d| d["status"] == "failed").unwrap();
    assert_eq!(
        withheld["error"],
        "the event is another user's time, which the member who made the endpoint may not read"
    );
}

/// A member of the app's team whose key is restricted to `permissions`: its id and key.
async fn member_of(app: &TestApp, permissions: &[accounts::Permission]) -> (accounts::UserId, String) {
    let member = create_user(&app.store, app.team, accounts::Role::Member).await;
    let scope = accounts::Scope::Restricted(permissions.iter().copied().collect());
    (member, create_key(&app.store, app.team, member, scope, None).await.1)
}
