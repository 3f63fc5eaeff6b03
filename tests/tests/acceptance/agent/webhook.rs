//! The webhook trigger through real sockets: authentication, bodies, runs, memory across a
//! restart, per-conversation order and the queue's limit, and the run history.

use std::time::Duration;

use acceptance::fake_model::{Answer, FakeModel, last_user_message};
use acceptance::{AgentApp, Backend, TestDb, serve_config};
use app::config::parse_rate;
use reqwest::StatusCode;
use serde_json::{Value, json};

const TOKEN: &str = "s3cret-token";
const ENV: &[(&str, &str)] = &[("WEBHOOK_TOKEN", TOKEN)];

fn echo_agent(extra: &str) -> String {
    format!(
        "name: echo\nmodel:\n  provider: echo\n{extra}\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: WEBHOOK_TOKEN\n"
    )
}

fn model_agent(model: &FakeModel, extra: &str) -> String {
    format!(
        "name: modelled\ninstructions: Be brief.\nmodel:\n  provider: openai\n  base_url: {}\n  model: fake-1\n  max_retries: 0\n{extra}\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: WEBHOOK_TOKEN\n",
        model.base_url
    )
}

/// The echo agent on its own in-memory database, served with `config`.
async fn echo_with(config: app::config::ServeConfig) -> AgentApp {
    let db = TestDb::new(Backend::Memory).await;
    AgentApp::start_with(config, triggers::RetryPolicy::default(), &echo_agent(""), ENV, db).await.unwrap()
}

async fn start(yaml: &str) -> AgentApp {
    AgentApp::start(yaml, ENV, TestDb::new(Backend::from_env()).await).await.unwrap()
}

async fn json_of(response: reqwest::Response) -> Value {
    response.json().await.unwrap()
}

async fn error_of(response: reqwest::Response) -> String {
    json_of(response).await["error"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_call_with_the_token_gets_the_run_result_and_is_recorded() {
    let app = start(&echo_agent("")).await;
    let response = app.call("/", Some(TOKEN), &json!({"input": "Hello"})).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_owned();
    assert_eq!(json_of(response).await, json!({"status": "ok", "reply": "Hello", "steps": 1}));

    let (status, runs) = app.get_json("/v1/agent/runs").await;
    assert_eq!(status, 200);
    let run = &runs[0];
    assert_eq!(run["id"], run_id.as_str());
    assert_eq!((run["trigger"].as_str(), run["status"].as_str()), (Some("webhook"), Some("ok")));
    assert_eq!(
        (run["steps"].as_u64(), run["inputTokens"].as_u64(), run["outputTokens"].as_u64()),
        (Some(1), Some(0), Some(0))
    );
    assert_eq!(
        (run["input"].as_str(), &run["conversationId"], &run["error"]),
        (Some("Hello"), &Value::Null, &Value::Null)
    );
    let (status, mut one) = app.get_json(&format!("/v1/agent/runs/{run_id}")).await;
    assert_eq!(status, 200);
    // One run by id: the listing's fields, and the text the model read and its reply.
    let texts = one.as_object_mut().map(|run| (run.remove("modelInput"), run.remove("reply")));
    assert_eq!(texts, Some((Some(json!("Hello")), Some(json!("Hello")))));
    assert_eq!(&one, run);
    assert_eq!(app.get_json("/v1/agent/runs/00000000-0000-7000-8000-000000000000").await.0, 404);
    assert_eq!(app.get_json("/v1/agent/runs/not-an-id").await.0, 404);
    assert_eq!(app.get_json("/v1/agent/runs?limit=0").await.0, 400);
}

#[tokio::test]
async fn the_bearer_token_is_required_and_either_rotation_token_works() {
    let env = &[("WEBHOOK_TOKEN", "old-token,new-token")];
    let app = AgentApp::start(&echo_agent(""), env, TestDb::new(Backend::Memory).await).await.unwrap();
    let body = json!({"input": "hi"});
    for token in [None, Some("wrong-token"), Some("old-token,new-token"), Some("")] {
        let response = app.call("/", token, &body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{token:?}");
        assert!(response.headers()["www-authenticate"].to_str().unwrap().starts_with("Bearer"));
        assert!(error_of(response).await.contains("bearer token"));
    }
    let basic = app.call("/", None, &body).basic_auth("user", Some("old-token")).send().await.unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED, "only the Bearer scheme");
    for token in ["old-token", "new-token"] {
        let response = app.call("/", Some(token), &body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{token}");
    }
    // Refusals are not runs.
    assert_eq!(app.get_json("/v1/agent/runs").await.1.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn failed_authentication_is_throttled_per_address() {
    let mut config = serve_config();
    config.trigger_auth_failures = parse_rate("3/60s").unwrap();
    let app = echo_with(config).await;
    let body = json!({"input": "hi"});
    for _ in 0..3 {
        assert_eq!(
            app.call("/", Some("guess"), &body).send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED
        );
    }
    let refused = app.call("/", Some("guess"), &body).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let wait: u64 = refused.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait));
    assert_eq!(error_of(refused).await, "rate limit exceeded");
    // While blocked, even the right token is not looked at.
    let right = app.call("/", Some(TOKEN), &body).send().await.unwrap();
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn a_body_that_never_arrives_is_a_408_and_runs_nothing() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let config = app::config::ServeConfig { body_timeout: Duration::from_secs(1), ..serve_config() };
    let app = echo_with(config).await;
    let mut stream = tokio::net::TcpStream::connect(app.trigger.trim_start_matches("http://")).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"input\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut answer)).await.unwrap().unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.ends_with(r#"{"error":"body: did not arrive within 1 s"}"#), "{answer}");
    assert_eq!(app.get_json("/v1/agent/runs").await, (200, json!([])));
}

#[tokio::test]
async fn bodies_that_are_not_a_run_request_are_400_naming_the_field() {
    let app = AgentApp::start(&echo_agent(""), ENV, TestDb::new(Backend::Memory).await).await.unwrap();
    let post = |body: &'static str| {
        app.http
            .post(format!("{}/", app.trigger))
            .bearer_auth(TOKEN)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    for (body, expected) in [
        ("{", "body: malformed JSON"),
        ("[]", "body: must be a JSON object"),
        ("{}", "input: is required"),
        (r#"{"input": 42}"#, "input: invalid type"),
        (r#"{"input": "  "}"#, "input: must not be empty"),
        (r#"{"input": "hi", "conversation_id": ""}"#, "conversation_id: must not be empty"),
        (r#"{"input": "hi", "conversation_id": 7}"#, "conversation_id: invalid type"),
        (r#"{"input": "hi", "stream": true}"#, "stream: not accepted"),
    ] {
        let response = post(body).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let error = error_of(response).await;
        assert!(error.starts_with(expected), "{body}: {error}");
    }
    let form =
        app.http.post(format!("{}/", app.trigger)).bearer_auth(TOKEN).body("input=hi").send().await.unwrap();
    assert_eq!(form.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let large = json!({"input": "x".repeat(2 * 1024 * 1024)});
    assert_eq!(
        app.call("/", Some(TOKEN), &large).send().await.unwrap().status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let elsewhere = app.call("/other", Some(TOKEN), &json!({"input": "hi"})).send().await.unwrap();
    assert_eq!(elsewhere.status(), StatusCode::NOT_FOUND);
    let get = app.http.get(format!("{}/", app.trigger)).send().await.unwrap();
    assert_eq!(get.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(get.headers()["allow"], "POST");
    assert!(app.get_json("/v1/agent/runs").await.1.as_array().unwrap().is_empty(), "nothing ran");
}

#[tokio::test]
async fn thread_memory_survives_a_restart() {
    let model = FakeModel::start(vec![], Some(Answer::Reflect));
    let yaml = model_agent(&model, "memory:\n  scope: thread");
    let app = AgentApp::start(&yaml, ENV, TestDb::new(Backend::durable_from_env()).await).await.unwrap();
    let first = app.call("/", Some(TOKEN), &json!({"input": "My name is Ada.", "conversation_id": "ada"}));
    assert_eq!(first.send().await.unwrap().status(), StatusCode::OK);
    let db = app.stop().await;

    let app = AgentApp::start(&yaml, ENV, db).await.unwrap();
    let second = app.call("/", Some(TOKEN), &json!({"input": "What is my name?", "conversation_id": "ada"}));
    let reply = json_of(second.send().await.unwrap()).await;
    assert_eq!(reply["status"], "ok");
    let lines: Vec<&str> = reply["reply"].as_str().unwrap().lines().collect();
    assert_eq!(lines[..2], ["system: Be brief.", "user: My name is Ada."]);
    assert_eq!(lines.last(), Some(&"user: What is my name?"));
    let (_, runs) = app.get_json("/v1/agent/runs?conversationId=ada").await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0]["inputTokens"].as_u64(), runs[0]["outputTokens"].as_u64()), (Some(7), Some(3)));
}

#[tokio::test]
async fn one_conversation_runs_one_at_a_time_in_arrival_order() {
    let model = FakeModel::start(vec![], Some(Answer::reply("done")));
    model.set_delay(Duration::from_millis(150));
    let app =
        AgentApp::start(&model_agent(&model, ""), ENV, TestDb::new(Backend::Memory).await).await.unwrap();
    let mut calls = Vec::new();
    for i in 0..5 {
        let request =
            app.call("/", Some(TOKEN), &json!({"input": format!("message {i}"), "conversation_id": "fifo"}));
        calls.push(tokio::spawn(request.send()));
        // Distinct arrival times, so that arrival order is known.
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    // Meanwhile another conversation is not held up.
    let other = app.call("/", Some(TOKEN), &json!({"input": "elsewhere", "conversation_id": "other"}));
    assert_eq!(other.send().await.unwrap().status(), StatusCode::OK);
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    let order: Vec<String> =
        model.requests().iter().map(last_user_message).filter(|m| m.starts_with("message")).collect();
    assert_eq!(order, (0..5).map(|i| format!("message {i}")).collect::<Vec<_>>());
    assert_eq!(model.most_in_flight(), 2, "one run of `fifo` at a time, beside `other`");
}

#[tokio::test]
async fn past_queue_depth_waiting_the_caller_is_rejected_with_retry_after() {
    let model = FakeModel::start(vec![], Some(Answer::reply("done")));
    model.set_delay(Duration::from_millis(800));
    let app = AgentApp::start(
        &model_agent(&model, "limits:\n  queue_depth: 2"),
        ENV,
        TestDb::new(Backend::Memory).await,
    )
    .await
    .unwrap();
    let call = |i: usize| {
        app.call("/", Some(TOKEN), &json!({"input": format!("message {i}"), "conversation_id": "busy"}))
            .send()
    };
    let running = tokio::spawn(call(0));
    model.wait_for_requests(1).await;
    let waiting = [tokio::spawn(call(1)), tokio::spawn(call(2))];
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = call(3).await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers()["retry-after"].to_str().unwrap().parse::<u64>().unwrap() >= 1);
    let body = json_of(refused).await;
    assert_eq!((body["status"].as_str(), body["steps"].as_u64()), (Some("rejected"), Some(0)));
    assert!(body["reply"].as_str().unwrap().contains("queue_depth"));
    assert_eq!(running.await.unwrap().unwrap().status(), StatusCode::OK);
    for call in waiting {
        assert_eq!(call.await.unwrap().unwrap().status(), StatusCode::OK);
    }
    let (_, runs) = app.get_json("/v1/agent/runs?conversationId=busy").await;
    let statuses: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == "rejected").count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == "ok").count(), 3, "{statuses:?}");
}

#[tokio::test]
async fn model_failures_are_502_and_timeouts_504_both_recorded() {
    let model = FakeModel::start(
        vec![
            Answer::Status { status: 503, retry_after: None },
            Answer::Slow { delay: Duration::from_secs(3), text: "late".into() },
        ],
        None,
    );
    let app = AgentApp::start(
        &model_agent(&model, "limits:\n  run_timeout: 1s"),
        ENV,
        TestDb::new(Backend::Memory).await,
    )
    .await
    .unwrap();
    let failed = app.call("/", Some(TOKEN), &json!({"input": "one"})).send().await.unwrap();
    assert_eq!(failed.status(), StatusCode::BAD_GATEWAY);
    assert!(error_of(failed).await.contains("503"));
    let slow = app.call("/", Some(TOKEN), &json!({"input": "two"})).send().await.unwrap();
    assert_eq!(slow.status(), StatusCode::GATEWAY_TIMEOUT);
    assert!(error_of(slow).await.contains("limits.run_timeout"));
    let (_, runs) = app.get_json("/v1/agent/runs").await;
    let statuses: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["timeout", "failed"]);
}

#[tokio::test]
async fn startup_is_refused_without_the_token_variable() {
    let error = AgentApp::start(&echo_agent(""), &[], TestDb::new(Backend::Memory).await).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.yaml: triggers[0].token_env: the environment variable WEBHOOK_TOKEN is not set (or holds no value)"
    );
    let yaml = echo_agent("");
    let empty = AgentApp::start(&yaml, &[("WEBHOOK_TOKEN", " , ")], TestDb::new(Backend::Memory).await).await;
    assert!(empty.unwrap_err().to_string().contains("WEBHOOK_TOKEN"));
}

#[tokio::test]
async fn the_run_history_and_the_delivery_log_need_agent_read() {
    let app = start(&echo_agent("")).await;
    let team = app.team;
    let user = acceptance::create_user(&app.store, team, accounts::Role::Member).await;
    let key_with = |permission: &str| {
        let scope = accounts::Scope::from_parts("restricted", &[permission.to_owned()]).unwrap();
        acceptance::create_key(&app.store, team, user, scope, None)
    };
    let (_, without) = key_with("clients:read").await;
    let (_, with) = key_with("agent:read").await;
    for path in ["/v1/agent/runs", "/v1/agent/deliveries"] {
        for (key, expected) in [(&without, StatusCode::FORBIDDEN), (&with, StatusCode::OK)] {
            let response =
                app.http.get(format!("{}{path}", app.rest)).header("X-API-Key", key).send().await.unwrap();
            assert_eq!(response.status(), expected, "{path}");
        }
    }
}

#[tokio::test]
async fn triggers_on_one_port_share_a_listener_each_with_its_own_token() {
    let yaml = "name: two\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    port: 0\n    path: /alpha\n    token_env: ALPHA\n  - type: webhook\n    port: 0\n    path: /beta\n    token_env: BETA\n";
    let env = &[("ALPHA", "alpha-token"), ("BETA", "beta-token")];
    let app = AgentApp::start(yaml, env, TestDb::new(Backend::Memory).await).await.unwrap();
    let body = json!({"input": "hi"});
    for (path, good, other) in
        [("/alpha", "alpha-token", "beta-token"), ("/beta", "beta-token", "alpha-token")]
    {
        assert_eq!(
            app.call(path, Some(good), &body).send().await.unwrap().status(),
            StatusCode::OK,
            "{path}"
        );
        assert_eq!(
            app.call(path, Some(other), &body).send().await.unwrap().status(),
            StatusCode::UNAUTHORIZED,
            "{path} takes only its own token"
        );
    }
    assert_eq!(
        app.call("/", Some("alpha-token"), &body).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_agent_runs_for_the_team_it_names_or_the_only_one() {
    use app::agent_setup::pick_team;
    // Opened twice (here and by the app), so it must keep what the first opening wrote.
    let db = TestDb::new(Backend::durable_from_env()).await;
    let store = db.open().await;
    let accounts = store.accounts();
    assert_eq!(pick_team(accounts.as_ref(), None).await.unwrap(), Err("there is no team yet".to_owned()));
    let acme = acceptance::create_team(&store, "Acme").await;
    assert_eq!(pick_team(accounts.as_ref(), None).await.unwrap(), Ok(acme));
    let other = acceptance::create_team(&store, "Other").await;
    let ambiguous = pick_team(accounts.as_ref(), None).await.unwrap().unwrap_err();
    assert!(ambiguous.contains("there are 2 teams"), "{ambiguous}");
    assert_eq!(pick_team(accounts.as_ref(), Some("Other")).await.unwrap(), Ok(other));
    assert_eq!(pick_team(accounts.as_ref(), Some(&acme.to_string())).await.unwrap(), Ok(acme));
    let unknown = pick_team(accounts.as_ref(), Some("Nobody")).await.unwrap().unwrap_err();
    assert!(unknown.contains("no team has the id or name \"Nobody\""), "{unknown}");
    acceptance::create_team(&store, "Other").await;
    let twice = pick_team(accounts.as_ref(), Some("Other")).await.unwrap().unwrap_err();
    assert!(twice.contains("several teams are named"), "{twice}");

    // Through the definition: `team:` picks one of several.
    let yaml = echo_agent("team: Acme");
    let app = AgentApp::start(&yaml, ENV, db).await.unwrap();
    assert_eq!(
        app.call("/", Some(TOKEN), &json!({"input": "hi"})).send().await.unwrap().status(),
        StatusCode::OK
    );
    let runs = app
        .store
        .agent()
        .list_runs(acme, &triggers::RunFilter { conversation: None, limit: 10 })
        .await
        .unwrap();
    assert_eq!(runs.len(), 1, "the run belongs to Acme");
}

#[tokio::test]
async fn nul_in_input_is_refused_and_in_a_reply_recorded_and_remembered() {
    let refused = start(&echo_agent("memory:\n  scope: thread")).await;
    for body in [json!({"input": "a\u{0}b"}), json!({"input": "a\u{0}b", "conversation_id": "c"})] {
        let response = refused.call("/", Some(TOKEN), &body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(error_of(response).await, "input: must not contain NUL characters");
    }
    assert_eq!(refused.get_json("/v1/agent/runs").await.1, json!([]), "nothing ran");

    // A model may answer with U+0000 all the same: the caller gets it, the record and
    // the conversation's memory keep U+FFFD in its place, on every database.
    let model = FakeModel::start(vec![Answer::reply("one\u{0}two")], Some(Answer::Reflect));
    let app = start(&model_agent(&model, "memory:\n  scope: thread")).await;
    let first = app.call("/", Some(TOKEN), &json!({"input": "Say it.", "conversation_id": "nul"}));
    let response = first.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(json_of(response).await["reply"], "one\u{0}two");
    let second = app.call("/", Some(TOKEN), &json!({"input": "Again?", "conversation_id": "nul"}));
    let reply = json_of(second.send().await.unwrap()).await;
    assert!(reply["reply"].as_str().unwrap().contains("assistant: one\u{FFFD}two"), "{reply}");
    let (_, runs) = app.get_json("/v1/agent/runs?conversationId=nul").await;
    let statuses: Vec<&str> =
        runs.as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["ok", "ok"]);
}
