//! The repository (GitHub) trigger through real sockets: signatures, the ping, filters,
//! acknowledgement before the run, dedupe, order per conversation, retries, the delivery
//! log, and resuming after a restart.

use std::fmt::Write;
use std::time::Duration;

use acceptance::fake_model::{Answer, FakeModel, last_user_message};
use acceptance::{AgentApp, Backend, TestDb, example_as_written, serve_config};
use app::config::parse_rate;
use hmac::{Hmac, KeyInit, Mac};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::Sha256;

const SECRET: &str = "It's a Secret to Everybody";
const ENV: &[(&str, &str)] = &[("GITHUB_WEBHOOK_SECRET", SECRET)];

fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/github/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    digest.iter().fold("sha256=".to_owned(), |mut signature, byte| {
        write!(signature, "{byte:02x}").unwrap();
        signature
    })
}

/// An agent with a github trigger on port 0; `trigger` adds settings to the entry.
fn agent(model: Option<&FakeModel>, extra: &str, trigger: &str) -> String {
    let model = match model {
        Some(model) => {
            format!("  provider: openai\n  base_url: {}\n  model: fake-1\n  max_retries: 0", model.base_url)
        }
        None => "  provider: echo".to_owned(),
    };
    format!(
        "name: reviewer\nmodel:\n{model}\nmemory:\n  scope: thread\n{extra}\ntriggers:\n  - type: github\n    port: 0\n{}\n",
        if trigger.is_empty() { "    events: ['*']" } else { trigger }
    )
}

async fn start(yaml: &str) -> AgentApp {
    AgentApp::start(yaml, ENV, TestDb::new(Backend::from_env()).await).await.unwrap()
}

fn fast_retries(max_attempts: u32) -> triggers::RetryPolicy {
    triggers::RetryPolicy {
        max_attempts,
        first_backoff: Duration::from_millis(50),
        max_backoff: Duration::from_millis(200),
    }
}

/// A delivery as GitHub sends it.
struct Delivery {
    event: String,
    id: String,
    body: Vec<u8>,
}

impl Delivery {
    fn new(event: &str, id: &str, payload: &Value) -> Self {
        Self { event: event.to_owned(), id: id.to_owned(), body: serde_json::to_vec(payload).unwrap() }
    }

    async fn send_signed(&self, app: &AgentApp, signature: Option<&str>) -> reqwest::Response {
        let mut request = app
            .http
            .post(format!("{}/github", app.trigger))
            .header("content-type", "application/json")
            .header("x-github-event", &self.event)
            .header("x-github-delivery", &self.id)
            .body(self.body.clone());
        if let Some(signature) = signature {
            request = request.header("x-hub-signature-256", signature);
        }
        request.send().await.unwrap()
    }

    async fn send(&self, app: &AgentApp) -> reqwest::Response {
        self.send_signed(app, Some(&sign(SECRET, &self.body))).await
    }
}

async fn answer(response: reqwest::Response) -> (StatusCode, Value) {
    (response.status(), response.json().await.unwrap_or_default())
}

async fn deliveries(app: &AgentApp) -> Vec<Value> {
    let (status, log) = app.get_json("/v1/agent/deliveries?limit=500").await;
    assert_eq!(status, 200);
    log.as_array().unwrap().clone()
}

/// Waits until every accepted delivery is `done` or `failed`; returns the log.
async fn settled(app: &AgentApp) -> Vec<Value> {
    for _ in 0..200 {
        let log = deliveries(app).await;
        let open = log.iter().any(|d| matches!(d["state"].as_str(), Some("queued" | "running")));
        if !open {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("deliveries still pending: {:#?}", deliveries(app).await);
}

/// A comment on pull request 42 saying `text`.
fn comment(text: &str) -> Value {
    let mut payload = fixture("issue_comment.created");
    payload["comment"]["body"] = json!(text);
    payload
}

#[tokio::test]
async fn the_ping_is_answered_without_a_model_call() {
    let model = FakeModel::start(vec![], Some(Answer::reply("never")));
    let app = start(&agent(Some(&model), "", "")).await;
    let ping = Delivery::new("ping", "ping-1", &fixture("ping"));
    assert_eq!(answer(ping.send(&app).await).await, (StatusCode::OK, json!({"status": "pong"})));
    let log = deliveries(&app).await;
    assert_eq!((log[0]["event"].as_str(), log[0]["verdict"].as_str()), (Some("ping"), Some("ignored")));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn a_pull_request_is_acknowledged_then_run_on_its_rendering() {
    let model = FakeModel::start(
        vec![],
        Some(Answer::Slow { delay: Duration::from_millis(500), text: "LGTM".into() }),
    );
    let app = start(&agent(Some(&model), "", "    events: [pull_request]")).await;
    let opened = Delivery::new("pull_request", "guid-pr-opened", &fixture("pull_request.opened"));
    let started = std::time::Instant::now();
    let (status, body) = answer(opened.send(&app).await).await;
    assert_eq!(
        (status, body),
        (StatusCode::ACCEPTED, json!({"status": "accepted", "delivery": "guid-pr-opened"}))
    );
    assert!(started.elapsed() < Duration::from_millis(500), "the answer does not wait for the agent");

    let log = settled(&app).await;
    let entry = &log[0];
    assert_eq!(entry["delivery"], "guid-pr-opened");
    assert_eq!(
        (entry["event"].as_str(), entry["action"].as_str(), entry["repository"].as_str()),
        (Some("pull_request"), Some("opened"), Some("octo-org/hello-world"))
    );
    assert_eq!(entry["conversationId"], "github:octo-org/hello-world#42");
    assert_eq!(
        (entry["verdict"].as_str(), entry["state"].as_str(), entry["attempts"].as_u64()),
        (Some("accepted"), Some("done"), Some(1))
    );

    let input = last_user_message(&model.requests()[0]);
    assert!(
        input.contains("<<<UNTRUSTED GITHUB EVENT>>>") && input.contains("<<<END UNTRUSTED GITHUB EVENT>>>"),
        "{input}"
    );
    assert!(input.contains("#42"), "{input}");
    let (_, run) = app.get_json(&format!("/v1/agent/runs/{}", entry["runId"].as_str().unwrap())).await;
    assert_eq!((run["trigger"].as_str(), run["status"].as_str()), (Some("github"), Some("ok")));
    assert_eq!(run["conversationId"], "github:octo-org/hello-world#42");
    // The run shows exactly what the model read: the framed event.
    assert_eq!(run["modelInput"], input.as_str());
}

/// Every example delivery GitHub's SDK project publishes (`tests/fixtures/github/octokit`),
/// as (event, raw body), in a stable order.
fn github_examples() -> Vec<(String, Vec<u8>)> {
    let root = format!("{}/fixtures/github/octokit", env!("CARGO_MANIFEST_DIR"));
    let mut examples = Vec::new();
    for folder in std::fs::read_dir(root).unwrap().map(|entry| entry.unwrap().path()).filter(|p| p.is_dir()) {
        let event = folder.file_name().unwrap().to_str().unwrap().to_owned();
        for file in std::fs::read_dir(&folder).unwrap().map(|entry| entry.unwrap().path()) {
            if file.to_str().unwrap().ends_with("payload.json") {
                examples.push((event.clone(), std::fs::read(&file).unwrap()));
            }
        }
    }
    examples.sort();
    examples
}

#[tokio::test]
async fn every_example_github_publishes_is_acknowledged_and_run_once() {
    let app = start(&agent(None, "", "")).await;
    let examples = github_examples();
    assert!(examples.len() >= 270, "{} examples", examples.len());
    for (n, (event, body)) in examples.iter().enumerate() {
        let delivery = Delivery { event: event.clone(), id: format!("example-{n}"), body: body.clone() };
        let status = delivery.send(&app).await.status();
        let expected = if event == "ping" { StatusCode::OK } else { StatusCode::ACCEPTED };
        assert_eq!(status, expected, "{event} #{n}");
    }
    // A redelivery of each is recognised and runs nothing.
    let (event, body) = &examples[0];
    let again = Delivery { event: event.clone(), id: "example-0".into(), body: body.clone() };
    let duplicate = json!({"status": "duplicate", "delivery": "example-0"});
    assert_eq!(answer(again.send(&app).await).await, (StatusCode::ACCEPTED, duplicate));

    let log = settled(&app).await;
    let accepted: Vec<&Value> = log.iter().filter(|d| d["verdict"] == "accepted").collect();
    let pings = examples.iter().filter(|(event, _)| event == "ping").count();
    assert_eq!(accepted.len(), examples.len() - pings, "every example but the pings runs");
    assert_eq!(log.iter().filter(|d| d["verdict"] == "duplicate").count(), 1);
    let mut runs = std::collections::HashSet::new();
    for delivery in &accepted {
        assert_eq!(
            (delivery["state"].as_str(), delivery["attempts"].as_u64()),
            (Some("done"), Some(1)),
            "{delivery}"
        );
        assert!(runs.insert(delivery["runId"].as_str().unwrap().to_owned()), "one run each: {delivery}");
        let summary = delivery["summary"].as_str().unwrap();
        assert!(summary.starts_with(delivery["event"].as_str().unwrap()), "{delivery}");
    }
    // The run history says which event each run was about.
    let (_, listed) = app.get_json("/v1/agent/runs?limit=500").await;
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), accepted.len());
    for delivery in &accepted {
        let run = listed.iter().find(|run| run["id"] == delivery["runId"]).unwrap();
        assert_eq!((&run["input"], &run["status"]), (&delivery["summary"], &json!("ok")), "{delivery}");
    }
}

#[tokio::test]
async fn bad_signatures_are_401_and_leave_no_trace() {
    let app = start(&agent(None, "", "")).await;
    let delivery = Delivery::new("issues", "guid-issue", &fixture("issues.opened"));
    let good = sign(SECRET, &delivery.body);
    let mut changed = delivery.body.clone();
    changed[10] ^= 1;
    let refused = [
        None,
        Some(String::new()),
        Some("sha256=".to_owned()),
        Some(sign("another secret", &delivery.body)),
        Some(sign(SECRET, &changed)),
        Some(good.replace("sha256=", "sha1=")),
        Some(good[..good.len() - 2].to_owned()),
        Some(format!("{good}00")),
        Some(good.replace("sha256=", "SHA256=")),
    ];
    for signature in &refused {
        let (status, body) = answer(delivery.send_signed(&app, signature.as_deref()).await).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{signature:?}");
        assert!(body["error"].as_str().unwrap().contains("X-Hub-Signature-256"), "{body}");
    }
    // A body that is not even JSON is refused for its signature, before it is parsed.
    let garbage = Delivery { event: "issues".into(), id: "guid-x".into(), body: b"not json".to_vec() };
    assert_eq!(garbage.send_signed(&app, Some(&good)).await.status(), StatusCode::UNAUTHORIZED);
    assert!(deliveries(&app).await.is_empty(), "refused deliveries are not logged");
    // The hex digits may come in upper case.
    let upper = format!("sha256={}", good["sha256=".len()..].to_ascii_uppercase());
    assert_eq!(delivery.send_signed(&app, Some(&upper)).await.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn either_secret_verifies_during_a_rotation() {
    let env = &[("GITHUB_WEBHOOK_SECRET", "old-secret, new-secret")];
    let app = AgentApp::start(&agent(None, "", ""), env, TestDb::new(Backend::Memory).await).await.unwrap();
    for (i, secret) in ["old-secret", "new-secret"].into_iter().enumerate() {
        let delivery = Delivery::new("issues", &format!("guid-{i}"), &comment(secret));
        let signature = sign(secret, &delivery.body);
        assert_eq!(
            delivery.send_signed(&app, Some(&signature)).await.status(),
            StatusCode::ACCEPTED,
            "{secret}"
        );
    }
    let third = Delivery::new("issues", "guid-3", &comment("third"));
    let both = sign("old-secret, new-secret", &third.body);
    assert_eq!(third.send_signed(&app, Some(&both)).await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn failed_signatures_are_throttled_per_address() {
    let mut config = serve_config();
    config.trigger_auth_failures = parse_rate("2/60s").unwrap();
    let yaml = agent(None, "", "");
    let app = AgentApp::start_with(
        config,
        triggers::RetryPolicy::default(),
        &yaml,
        ENV,
        TestDb::new(Backend::Memory).await,
    )
    .await
    .unwrap();
    let delivery = Delivery::new("issues", "guid-1", &fixture("issues.opened"));
    for _ in 0..2 {
        assert_eq!(delivery.send_signed(&app, Some("sha256=00")).await.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(delivery.send_signed(&app, Some("sha256=00")).await.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        delivery.send(&app).await.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "even when signed, while blocked"
    );
}

#[tokio::test]
async fn filtered_deliveries_are_ignored_with_a_note() {
    let model = FakeModel::start(vec![], Some(Answer::reply("ok")));
    let trigger = "    events: [pull_request, issue_comment.created]\n    repos: ['octo-org/*']";
    let app = start(&agent(Some(&model), "", trigger)).await;
    let push = Delivery::new("push", "guid-push", &fixture("push"));
    let (status, body) = answer(push.send(&app).await).await;
    assert_eq!((status, body["status"].as_str()), (StatusCode::OK, Some("ignored")));
    assert_eq!(body["note"], "event push is not in the trigger's events");

    let mut edited = comment("edited");
    edited["action"] = json!("edited");
    let (_, body) = answer(Delivery::new("issue_comment", "guid-edit", &edited).send(&app).await).await;
    assert_eq!(body["note"], "event issue_comment.edited is not in the trigger's events");

    let mut elsewhere = fixture("pull_request.opened");
    elsewhere["repository"]["full_name"] = json!("someone/else");
    let (status, body) =
        answer(Delivery::new("pull_request", "guid-else", &elsewhere).send(&app).await).await;
    assert_eq!(
        (status, body["note"].as_str()),
        (StatusCode::OK, Some("repository someone/else matches none of the trigger's repos"))
    );

    let mut upper = fixture("pull_request.opened");
    upper["repository"]["full_name"] = json!("Octo-Org/Hello-World");
    assert_eq!(
        Delivery::new("pull_request", "guid-upper", &upper).send(&app).await.status(),
        StatusCode::ACCEPTED
    );

    let log = settled(&app).await;
    let verdicts: Vec<(&str, &str)> =
        log.iter().map(|d| (d["delivery"].as_str().unwrap(), d["verdict"].as_str().unwrap())).collect();
    assert_eq!(
        verdicts,
        [
            ("guid-upper", "accepted"),
            ("guid-else", "ignored"),
            ("guid-edit", "ignored"),
            ("guid-push", "ignored")
        ]
    );
    assert_eq!(model.requests().len(), 1, "only the matching delivery cost a model call");
    let (_, ignored) = app.get_json("/v1/agent/deliveries?verdict=ignored").await;
    assert_eq!(ignored.as_array().unwrap().len(), 3);
    assert_eq!(app.get_json("/v1/agent/deliveries?verdict=maybe").await.0, 400);
}

#[tokio::test]
async fn a_redelivery_or_a_replayed_body_runs_nothing() {
    let model = FakeModel::start(vec![], Some(Answer::reply("ok")));
    let app = start(&agent(Some(&model), "", "")).await;
    let original = Delivery::new("issue_comment", "guid-1", &comment("please review"));
    assert_eq!(answer(original.send(&app).await).await.0, StatusCode::ACCEPTED);
    let redelivered = original.send(&app).await;
    assert_eq!(
        answer(redelivered).await,
        (StatusCode::ACCEPTED, json!({"status": "duplicate", "delivery": "guid-1"}))
    );
    let replayed =
        Delivery { id: "guid-2".into(), ..Delivery::new("issue_comment", "x", &comment("please review")) };
    assert_eq!(answer(replayed.send(&app).await).await.1["status"], "duplicate");
    let log = settled(&app).await;
    let verdicts: Vec<&str> = log.iter().map(|d| d["verdict"].as_str().unwrap()).collect();
    assert_eq!(verdicts, ["duplicate", "duplicate", "accepted"]);
    assert_eq!(log[0]["note"], "the same body was already accepted as delivery guid-1");
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn deliveries_of_one_conversation_run_in_order_and_conversations_in_parallel() {
    let model = FakeModel::start(
        vec![],
        Some(Answer::Slow { delay: Duration::from_millis(150), text: "noted".into() }),
    );
    let app = start(&agent(Some(&model), "", "")).await;
    // Five comments on #42, then three on #7, each sent once the one before is acknowledged:
    // the order of acceptance is the order to keep, and a timed gap between sends would
    // not fix it on a loaded machine. Each run takes 150 ms, so all eight are accepted
    // while the first runs are still going.
    for (number, count) in [(42, 5), (7, 3)] {
        for i in 0..count {
            let mut payload = comment(&format!("comment {i} on {number}"));
            payload["issue"]["number"] = json!(number);
            let delivery = Delivery::new("issue_comment", &format!("guid-{number}-{i}"), &payload);
            assert_eq!(answer(delivery.send(&app).await).await.0, StatusCode::ACCEPTED);
        }
    }
    let log = settled(&app).await;
    assert!(log.iter().all(|d| d["state"] == "done"), "{log:#?}");
    let inputs: Vec<String> = model.requests().iter().map(last_user_message).collect();
    for (number, count) in [(42, 5), (7, 3)] {
        let order: Vec<usize> = inputs
            .iter()
            .filter_map(|input| (0..count).find(|i| input.contains(&format!("comment {i} on {number}"))))
            .collect();
        assert_eq!(order, (0..count).collect::<Vec<_>>(), "conversation #{number} kept its order");
    }
    assert!(model.most_in_flight() >= 2, "two conversations ran side by side");
    let conversations: Vec<&str> = log.iter().filter_map(|d| d["conversationId"].as_str()).collect();
    assert_eq!(conversations.iter().filter(|c| **c == "github:octo-org/hello-world#42").count(), 5);
}

#[tokio::test]
async fn a_failed_run_is_retried_then_marked_failed() {
    let failing = Answer::Status { status: 500, retry_after: None };
    let model = FakeModel::start(vec![failing.clone(), Answer::reply("second time lucky")], Some(failing));
    let yaml = agent(Some(&model), "", "");
    let app = AgentApp::start_with(
        serve_config(),
        fast_retries(3),
        &yaml,
        ENV,
        TestDb::new(Backend::from_env()).await,
    )
    .await
    .unwrap();
    let lucky = Delivery::new("issue_comment", "guid-lucky", &comment("lucky"));
    assert_eq!(lucky.send(&app).await.status(), StatusCode::ACCEPTED);
    let log = settled(&app).await;
    assert_eq!((log[0]["state"].as_str(), log[0]["attempts"].as_u64()), (Some("done"), Some(2)));

    let doomed = Delivery::new("issue_comment", "guid-doomed", &comment("doomed"));
    assert_eq!(doomed.send(&app).await.status(), StatusCode::ACCEPTED);
    let log = settled(&app).await;
    let entry = &log[0];
    assert_eq!((entry["state"].as_str(), entry["attempts"].as_u64()), (Some("failed"), Some(3)));
    assert!(entry["error"].as_str().unwrap().contains("model call failed"), "{entry}");
    let (_, runs) = app.get_json("/v1/agent/runs").await;
    let statuses: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(
        statuses,
        ["failed", "failed", "failed", "ok", "failed"],
        "every attempt is in the run history"
    );
}

#[tokio::test]
async fn malformed_deliveries_are_400_or_415_naming_what_is_wrong() {
    let app = start(&agent(None, "", "")).await;
    let payload = fixture("issues.opened");
    let body = serde_json::to_vec(&payload).unwrap();
    let post = |event: Option<&str>, id: Option<&str>, content_type: &str, body: Vec<u8>| {
        let signature = sign(SECRET, &body);
        let mut request = app
            .http
            .post(format!("{}/github", app.trigger))
            .header("content-type", content_type)
            .header("x-hub-signature-256", signature)
            .body(body);
        if let Some(event) = event {
            request = request.header("x-github-event", event);
        }
        if let Some(id) = id {
            request = request.header("x-github-delivery", id);
        }
        request.send()
    };
    let cases = [
        (post(None, Some("g"), "application/json", body.clone()).await.unwrap(), 400, "X-GitHub-Event"),
        (
            post(Some("issues"), None, "application/json", body.clone()).await.unwrap(),
            400,
            "X-GitHub-Delivery",
        ),
        (
            post(Some("iss ues"), Some("g"), "application/json", body.clone()).await.unwrap(),
            400,
            "X-GitHub-Event",
        ),
        (post(Some("issues"), Some("g"), "application/json", b"{oops".to_vec()).await.unwrap(), 400, "body"),
        (
            post(Some("issues"), Some("g"), "application/x-www-form-urlencoded", body.clone()).await.unwrap(),
            415,
            "application/json",
        ),
    ];
    for (response, status, named) in cases {
        let (got, body) = answer(response).await;
        assert_eq!(got.as_u16(), status, "{body}");
        assert!(body["error"].as_str().unwrap().contains(named), "{body} should name {named}");
    }
    // Valid JSON that is no event: GitHub sends every event as an object.
    for (n, not_an_event) in
        ["\"issues\"", "42", "[]", "[{\"action\": \"opened\"}]", "null", "true"].iter().enumerate()
    {
        let response = post(
            Some("issues"),
            Some(&format!("g-{n}")),
            "application/json",
            not_an_event.as_bytes().to_vec(),
        );
        let (got, body) = answer(response.await.unwrap()).await;
        assert_eq!(got, StatusCode::BAD_REQUEST, "{not_an_event}: {body}");
        assert_eq!(
            body["error"], "body: must be a JSON object, as GitHub sends every event",
            "{not_an_event}"
        );
    }
    assert!(deliveries(&app).await.is_empty());
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let app = start(&agent(None, "", "    events: ['*']\n    body_limit: 4096")).await;
    let mut payload = comment(&"x".repeat(5000));
    payload["padding"] = json!("y");
    let response = Delivery::new("issue_comment", "guid-big", &payload).send(&app).await;
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(deliveries(&app).await.is_empty());
}

#[tokio::test]
async fn a_restart_resumes_what_was_accepted_but_not_run() {
    let model =
        FakeModel::start(vec![], Some(Answer::Slow { delay: Duration::from_secs(30), text: "slow".into() }));
    let yaml = agent(Some(&model), "", "");
    let app = AgentApp::start(&yaml, ENV, TestDb::new(Backend::durable_from_env()).await).await.unwrap();
    for i in 0..3 {
        let delivery =
            Delivery::new("issue_comment", &format!("guid-{i}"), &comment(&format!("restart {i}")));
        assert_eq!(delivery.send(&app).await.status(), StatusCode::ACCEPTED);
    }
    model.wait_for_requests(1).await;
    let db = app.stop().await;
    // A new process on the same database, with a model that answers at once.
    let fresh = FakeModel::start(vec![], Some(Answer::reply("done")));
    let app = AgentApp::start(&agent(Some(&fresh), "", ""), ENV, db).await.unwrap();
    let log = settled(&app).await;
    assert!(log.iter().all(|d| d["state"] == "done"), "{log:#?}");
    let inputs: Vec<String> = fresh.requests().iter().map(last_user_message).collect();
    for i in 0..3 {
        let runs = inputs.iter().filter(|input| input.contains(&format!("restart {i}"))).count();
        assert_eq!(runs, 1, "delivery {i} ran once after the restart");
    }
}

/// A process that loses a delivery's lease while it runs (another process queued it
/// again) stops its run at once: the run is neither finished nor recorded twice.
#[tokio::test]
async fn a_run_whose_lease_is_lost_stops_and_records_nothing() {
    let slow = Answer::Slow { delay: Duration::from_secs(4), text: "too late".into() };
    let model = FakeModel::start(vec![slow], Some(Answer::reply("ok")));
    let app = start(&agent(Some(&model), "", "")).await;
    let started = std::time::Instant::now();
    let delivery = Delivery::new("issue_comment", "guid-lost", &comment("please review"));
    assert_eq!(answer(delivery.send(&app).await).await.0, StatusCode::ACCEPTED);
    while model.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // What another process does once the lease looks ended to it.
    let later = chrono::Utc::now() + chrono::TimeDelta::hours(1);
    assert_eq!(app.store.agent().requeue_expired(app.team, later).await.unwrap(), 1);

    let log = settled(&app).await;
    assert_eq!((log[0]["state"].as_str(), log[0]["attempts"].as_u64()), (Some("done"), Some(2)));
    // Past the moment the first run would have replied had it gone on.
    tokio::time::sleep(Duration::from_secs(4).saturating_sub(started.elapsed())).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, runs) = app.get_json("/v1/agent/runs").await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 1, "only the second attempt's run is recorded: {runs:#?}");
    assert_eq!(runs[0]["status"], "ok");
    assert_eq!(model.requests().len(), 2);
}

/// `examples/timekeeper.yaml` as written (only the model's address and the trigger's port
/// are a test's), run against recorded model replies (`tests/fixtures/agent`) for a merged
/// pull request GitHub sent (`tests/fixtures/github/pull_request.closed.json`), byte for
/// byte: the model reads when it was opened, merged and closed, and the time between is
/// logged on the project whose code is the repository's name, for the first start's owner.
#[tokio::test]
async fn the_timekeeper_example_as_written_logs_a_merged_pull_requests_time() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let model = FakeModel::start(vec![], None);
    let yaml = example_as_written("timekeeper.yaml", &model.base_url);
    let env = [("GITHUB_WEBHOOK_SECRET", SECRET), ("OPENAI_API_KEY", "sk-test")];
    let app = AgentApp::start_first_run(&yaml, &env, TestDb::new(Backend::from_env()).await).await.unwrap();
    let project = app
        .http
        .post(format!("{}/v1/track/projects", app.rest))
        .header("x-api-key", &app.key)
        .json(&json!({"title": "Hello World", "code": "hello-world"}))
        .send()
        .await
        .unwrap();
    assert_eq!(project.status(), 201);
    let project: Value = project.json().await.unwrap();
    let project_id = project["id"].as_str().unwrap();
    let replies = std::fs::read_to_string(format!("{fixtures}/agent/timekeeper.replies.json")).unwrap();
    let replies: Vec<Value> = serde_json::from_str(&replies.replace("PROJECT_ID", project_id)).unwrap();
    model.queue_answers(replies.into_iter().map(Answer::Recorded).collect());
    let body = std::fs::read(format!("{fixtures}/github/pull_request.closed.json")).unwrap();
    let delivery = Delivery { event: "pull_request".into(), id: "timekeeper-merged".into(), body };
    assert_eq!(answer(delivery.send(&app).await).await.0, StatusCode::ACCEPTED);
    let log = settled(&app).await;
    assert_eq!((log[0]["state"].as_str(), log[0]["attempts"].as_u64()), (Some("done"), Some(1)), "{log:?}");

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0]["model"], "gpt-4o-mini");
    let system = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("projectId the project's id"), "the example's instructions: {system}");
    let input = last_user_message(&requests[0]);
    for line in [
        "Pull request #42: Fix the parser's handling of trailing commas\n",
        "State: closed (merged)\n",
        "Opened: 2024-05-03T14:02:46Z\n",
        "Merged: 2024-05-03T16:35:12Z\n",
        "Closed: 2024-05-03T16:35:12Z\n",
        "URL: https://github.com/octo-org/hello-world/pull/42\n",
    ] {
        assert!(input.contains(line), "{line:?} is not in what the model read:\n{input}");
    }
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["create_time_entry", "list_projects"], "only the trigger's tools");
    // The model found the project through list_projects' answer.
    let messages = requests[1]["messages"].as_array().unwrap();
    let listed = messages.iter().rfind(|m| m["role"] == "tool").unwrap();
    assert!(listed["content"].as_str().unwrap().contains(project_id), "{listed}");

    let (_, entries) = app.get_json("/v1/track/time?date=2024-05-03").await;
    let entries = entries.as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let users = app.store.accounts().list_users(app.team).await.unwrap();
    let owner = users
        .iter()
        .find(|u| u.email.as_str() == "owner@billable.localhost")
        .expect("the first start's owner");
    let entry = &entries[0];
    assert_eq!(
        (
            &entry["userId"],
            &entry["projectId"],
            &entry["durationSeconds"],
            &entry["date"],
            &entry["taskName"]
        ),
        (
            &json!(owner.id.to_string()),
            &json!(project_id),
            &json!(9120),
            &json!("2024-05-03T16:35:12.000Z"),
            &json!("Fix the parser's handling of trailing commas")
        )
    );
    let (_, runs) = app.get_json("/v1/agent/runs").await;
    let calls: Vec<(&str, bool)> = runs[0]["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(calls, [("list_projects", true), ("create_time_entry", true)]);
}
