use acceptance::spawn_app;
use reqwest::Method;
use serde_json::Value;

use super::error_of;

#[tokio::test]
async fn request_ids_are_echoed_or_made() {
    let app = spawn_app().await;
    let response =
        app.http.get(app.url("/healthz")).header("x-request-id", "trace-123").send().await.unwrap();
    assert_eq!(response.headers()["x-request-id"], "trace-123");
    let response = app.http.get(app.url("/healthz")).send().await.unwrap();
    let made = response.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(made.len(), 36, "a fresh UUID: {made}");
    let response = app.request(Method::GET, "/v1/invoices/clients", "bk_wrong").send().await.unwrap();
    assert!(response.headers().contains_key("x-request-id"), "errors carry it too");
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_json() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/nope")).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(error_of(response).await, "no such route");
    // A path one step from a route points to it.
    let response = app.request(Method::GET, "/v1/clients", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(error_of(response).await, "no such route; did you mean /v1/invoices/clients?");
    let id = "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e";
    let response =
        app.request(Method::GET, &format!("/v1/invoices/{id}/pdf"), &app.key).send().await.unwrap();
    assert_eq!(error_of(response).await, format!("no such route; did you mean /v1/invoices/pdf?id={id}?"));
    let response = app.request(Method::PUT, "/v1/invoices/clients", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET, POST, HEAD");
    assert_eq!(error_of(response).await, "method PUT not allowed here");
    let response = app.http.post(app.url("/healthz")).send().await.unwrap();
    assert_eq!(response.status(), 405);
}

#[tokio::test]
async fn health_readiness_and_metrics() {
    let app = spawn_app().await;
    let live: Value = app.http.get(app.url("/healthz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(live["status"], "ok");
    let ready: Value = app.http.get(app.url("/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["status"], "ready");
    app.request(Method::GET, "/v1/invoices/clients", &app.key).send().await.unwrap();
    let metrics = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(r#"http_requests_total{method="GET",route="/v1/invoices/clients",status="200"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains("http_request_duration_seconds_bucket"));
    assert!(metrics.contains(r#"db_pool_connections{state="max"}"#));
}

#[tokio::test]
async fn the_reference_is_served_from_the_binary() {
    let app = spawn_app().await;
    let response = app.http.get(app.url("/")).send().await.unwrap();
    assert_eq!(response.status(), 302);
    assert_eq!(response.headers()["location"], "/reference/");
    let page = app.http.get(app.url("/reference/")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("swagger-ui"), "{page}");
    let script = app.http.get(app.url("/reference/swagger-ui-bundle.js")).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert!(script.bytes().await.unwrap().len() > 100_000, "the bundle itself, not a link to a CDN");
    let config = app
        .http
        .get(app.url("/reference/swagger-initializer.js"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(config.contains("/openapi.json"), "{config}");
}

/// With every connection busy, a request waits `BILLABLE_DB_WAIT_TIMEOUT` and then gets a
/// 503 with `Retry-After`, instead of hanging.
#[tokio::test]
async fn an_exhausted_pool_answers_503() {
    let db = acceptance::TestDb::new(acceptance::Backend::Postgres).await;
    let config = acceptance::serve_config();
    let store =
        app::Store::open(&db.config_with_pool(1, std::time::Duration::from_millis(300)), config.runtimes())
            .await
            .unwrap();
    let app = acceptance::start(config, db, store).await;
    // An outside session locks the clients table, so the one pooled connection blocks on it.
    let schema = app.db.schema().unwrap().to_owned();
    let admin = acceptance::admin_session().await;
    admin
        .batch_execute(&format!("BEGIN; LOCK TABLE \"{schema}\".clients IN ACCESS EXCLUSIVE MODE"))
        .await
        .unwrap();
    let blocked = tokio::spawn(app.request(Method::GET, "/v1/invoices/clients", &app.key).send());
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    let response = app.request(Method::GET, "/v1/invoices/clients", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(error_of(response).await, "service temporarily unavailable, retry later");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "answered after the wait timeout, not a hang"
    );
    admin.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(blocked.await.unwrap().unwrap().status(), 200, "the blocked request completes once released");
}

/// Pooled connections go back out without a test query; one whose server session ended
/// while it sat in the pool is replaced, not handed to the next request.
#[tokio::test]
async fn a_pooled_connection_whose_session_ended_is_replaced() {
    let (db, database, application) = pool_with_named_sessions(1).await;
    let config = acceptance::serve_config();
    let store = app::Store::open(&database, config.runtimes()).await.unwrap();
    let app = acceptance::start(config, db, store).await;
    let list = || app.request(Method::GET, "/v1/invoices/clients", &app.key).send();
    assert_eq!(list().await.unwrap().status(), 200);

    let admin = acceptance::admin_session().await;
    let sessions = async |expected: i64| sessions_named(&admin, &application, expected).await;
    assert_eq!(sessions(1).await, 1, "the pool's one connection");
    let end = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1";
    admin.execute(end, &[&application]).await.unwrap();
    assert_eq!(sessions(0).await, 0, "the session ended");
    // The session's end reaches the pooled connection's reader as the socket closes.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;

    assert_eq!(list().await.unwrap().status(), 200, "served on a new connection");
    assert_eq!(sessions(1).await, 1, "the ended connection was replaced");
}

/// A PostgreSQL test database, the configuration of a pool of `size` on it whose
/// sessions carry an application name of their own, and that name.
async fn pool_with_named_sessions(size: usize) -> (acceptance::TestDb, app::config::DatabaseConfig, String) {
    let db = acceptance::TestDb::new(acceptance::Backend::Postgres).await;
    let application = format!("billable_pool_test_{}", uuid::Uuid::new_v4().simple());
    let mut config = db.config_with_pool(size, std::time::Duration::from_secs(5));
    config.database_url = format!("{}&application_name={application}", config.database_url);
    (db, config, application)
}

/// The number of server sessions named `application`, once it settles at `expected` (the
/// migrations' own connection, for one, takes a moment to go), or as it is after 2 s.
async fn sessions_named(admin: &tokio_postgres::Client, application: &str, expected: i64) -> i64 {
    let count = "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1";
    let mut found = -1;
    for _ in 0..100 {
        found = admin.query_one(count, &[&application]).await.unwrap().get(0);
        if found == expected {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    found
}

/// On PostgreSQL the pool is split between the runtimes (here the test's and two HTTP
/// workers'), each worker using its own part: concurrent requests on both workers are
/// all served, and the parts together open no more connections than the pool's size.
#[tokio::test]
async fn the_pool_split_between_workers_keeps_its_size() {
    let (db, database, application) = pool_with_named_sessions(3).await;
    let mut config = acceptance::serve_config();
    config.workers = Some(2);
    let store = app::Store::open(&database, config.runtimes()).await.unwrap();
    let app = acceptance::start(config, db, store).await;

    // Each request on a connection of its own: 32 at once reach both workers.
    let requests: Vec<_> = (0..32)
        .map(|_| tokio::spawn(app.request(Method::GET, "/v1/invoices/clients", &app.key).send()))
        .collect();
    for request in requests {
        assert_eq!(request.await.unwrap().unwrap().status(), 200);
    }

    let admin = acceptance::admin_session().await;
    let open = sessions_named(&admin, &application, 3).await;
    assert!((1..=3).contains(&open), "{open} sessions for a pool of 3");
    let metrics = app.http.get(app.url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains(r#"db_pool_connections{state="max"} 3"#), "{metrics}");
}

/// A misspelt filter would widen a listing to everything: every query parameter an
/// operation does not take is a 400 naming it, and the one likely meant.
#[tokio::test]
async fn unknown_query_parameters_are_refused_with_the_name_meant() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let id = client["id"].as_str().unwrap();
    for (path, message) in [
        ("/v1/track/time?date=2026-11-20&projectID=x", "projectID: not accepted; did you mean projectId?"),
        ("/v1/track/time?date=2026-11-20&project_id=x", "project_id: not accepted; did you mean projectId?"),
        ("/v1/invoices/clients?query=Buy", "query: not accepted; accepted: q, limit, cursor"),
        ("/v1/invoices/clients?limt=1", "limt: not accepted; did you mean limit?"),
        ("/v1/invoices?client_id=x", "client_id: not accepted; did you mean clientId?"),
        ("/v1/invoices?statuses=PAID", "statuses: not accepted; did you mean status?"),
        ("/v1/track/projects?state=ACTIVE", "state: not accepted; did you mean status?"),
        ("/v1/track/sections?project=x", "project: not accepted; did you mean projectId?"),
        ("/v1/track/tags?q=x", "q: not accepted; accepted: limit, cursor"),
        (
            "/v1/track/reports?from=2026-11-01&to=2026-11-30&group_by=day",
            "group_by: not accepted; did you mean groupBy?",
        ),
        ("/v1/agent/runs?limits=2", "limits: not accepted; did you mean limit?"),
        ("/v1/agent/deliveries?verdicts=accepted", "verdicts: not accepted; did you mean verdict?"),
    ] {
        let response = app.request(Method::GET, path, &app.key).send().await.unwrap();
        assert_eq!(response.status(), 400, "{path}");
        assert_eq!(error_of(response).await, message, "{path}");
    }
    let by_id = format!("/v1/invoices/clients/{id}?fields=name");
    let response = app.request(Method::GET, &by_id, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "fields: not accepted; this operation takes no query parameters");
    let response = app.http.get(app.url("/v1/invoices/pdf?id=x&dowload=true")).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "dowload: not accepted; did you mean download?");
    // Known parameters pass, and the permission is checked before the query (403 first).
    let listed =
        app.request(Method::GET, "/v1/invoices/clients?q=Buy&limit=5", &app.key).send().await.unwrap();
    assert_eq!(listed.status(), 200);
    let scope =
        accounts::Scope::Restricted(std::collections::BTreeSet::from([accounts::Permission::TrackRead]));
    let (_, track_only) = acceptance::create_key(&app.store, app.team, app.owner, scope, None).await;
    let response =
        app.request(Method::GET, "/v1/invoices/clients?query=x", &track_only).send().await.unwrap();
    assert_eq!(response.status(), 403);
}

/// Errors say what to do: where a refused field's value comes from, or how the body is
/// meant to be shaped; a tag may be given by its id alone; a whole number may be written
/// `15.0`; an empty cursor is the first page.
#[tokio::test]
async fn errors_say_what_to_do_and_the_description_is_taken_at_its_word() {
    let app = spawn_app().await;
    let send = |method: Method, path: &str, body: Value| {
        let request = app.request(method, path, &app.key).json(&body);
        async move { request.send().await.unwrap() }
    };
    let client = app.create_client(&app.key, "Buyer").await;
    let invoice = serde_json::json!({"clientId": client["id"], "currency": "EUR",
                                     "lineItems": [{"description": "x", "unitPrice": 1, "quantity": 1}]});
    let response = send(Method::POST, "/v1/invoices", invoice).await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_of(response).await,
        "currency: not accepted; an invoice is in its client's currency: the client's currency, or the team's for a client that states none (PATCH /v1/invoices/clients/{id}, PATCH /v1/team)"
    );
    let project = send(Method::POST, "/v1/track/projects", serde_json::json!({"title": "Site"})).await;
    let project: Value = project.json().await.unwrap();
    let path = format!("/v1/track/projects/{}", project["id"].as_str().unwrap());
    let response = send(Method::PUT, &path, serde_json::json!({"title": "Website"})).await;
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_of(response).await,
        r#"title: not accepted; send the changes inside data: {"id": "<the id in the path>", "data": {"title": …}}"#
    );

    // Tags by id alone, or as entries show them.
    let tag: Value = send(Method::POST, "/v1/track/tags", serde_json::json!({"title": "urgent"}))
        .await
        .json()
        .await
        .unwrap();
    let entry = serde_json::json!({"durationSeconds": 60, "taskName": "Call", "date": "2026-11-20", "tags": [tag["id"]]});
    let logged = send(Method::POST, "/v1/track/time", entry).await;
    assert_eq!(logged.status(), 201);
    let logged: Value = logged.json().await.unwrap();
    assert_eq!(logged["tags"], serde_json::json!([{"id": tag["id"], "title": "urgent"}]));
    for (tags, message) in [
        (serde_json::json!(["nope"]), "tags[0].id: no such tag in the team"),
        (serde_json::json!([{"id": "nope", "title": "x"}]), "tags[0].id: no such tag in the team"),
        (
            serde_json::json!([5]),
            "tags[0]: invalid type: integer `5`, expected a tag id, or an object {\"id\", \"title\"}",
        ),
        (serde_json::json!("urgent"), "tags: invalid type: string \"urgent\", expected an array"),
    ] {
        let entry = serde_json::json!({"durationSeconds": 60, "taskName": "Call", "date": "2026-11-20", "tags": tags});
        let response = send(Method::POST, "/v1/track/time", entry).await;
        assert_eq!(response.status(), 400, "{tags}");
        assert_eq!(error_of(response).await, message, "{tags}");
    }

    // `rounding.minutes` is an integer by JSON Schema, which `15.0` is too.
    let rated = serde_json::json!({"title": "Rated", "rate": 60});
    let rated: Value = send(Method::POST, "/v1/track/projects", rated).await.json().await.unwrap();
    let entry = serde_json::json!({"durationSeconds": 60, "taskName": "Call", "date": "2026-11-21", "projectId": rated["id"]});
    assert_eq!(send(Method::POST, "/v1/track/time", entry).await.status(), 201);
    let bill = |minutes: Value| {
        serde_json::json!({"clientId": client["id"], "from": "2026-11-21", "to": "2026-11-21", "preview": true,
                           "projectIds": [rated["id"]], "rounding": {"minutes": minutes, "mode": "up"}})
    };
    let preview = send(Method::POST, "/v1/invoices/from-time", bill(serde_json::json!(15.0))).await;
    assert_eq!(preview.status(), 200);
    assert_eq!(preview.json::<Value>().await.unwrap()["lineItems"][0]["quantity"].to_string(), "0.25");
    let response = send(Method::POST, "/v1/invoices/from-time", bill(serde_json::json!(15.5))).await;
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "rounding.minutes: must be a whole number of minutes from 1 to 60");

    // An empty cursor is the first page, on every listing.
    for listing in [
        "/v1/invoices/clients?cursor=",
        "/v1/invoices?cursor=",
        "/v1/track/time?date=2026-11-20&cursor=",
        "/v1/track/tags?cursor=",
        "/v1/track/projects?cursor=",
        &format!("/v1/track/sections?projectId={}&cursor=", project["id"].as_str().unwrap()),
    ] {
        let response = app.request(Method::GET, listing, &app.key).send().await.unwrap();
        assert_eq!(response.status(), 200, "{listing}");
    }
}
