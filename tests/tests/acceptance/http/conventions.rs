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
