//! `billable runs list` and `runs show` read what the real server recorded.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use support::{Scratch, SlowModel, billable, post, serve};

/// An agent whose model asks for `list_clients` once per run, acting as the owner the
/// first start makes.
fn agent(model: &SlowModel) -> String {
    format!(
        "name: cli\nmodel:\n  provider: openai\n  base_url: {}\n  model: m\n  max_retries: 0\n\
         tools:\n  billable:\n    user: owner@billable.localhost\n    permissions: [clients:read]\n\
         triggers:\n  - type: webhook\n    port: 0\n    token_env: RUNS_CLI_TOKEN\n",
        model.start()
    )
}

#[test]
fn runs_list_and_show_the_recorded_calls() {
    let scratch = Scratch::new("runs-cli");
    let definition = scratch.0.join("agent.yaml");
    let model = SlowModel::calling("list_clients");
    std::fs::write(&definition, agent(&model)).unwrap();
    let database_url = scratch.sqlite_url();

    let (mut server, port) = serve(&database_url, &definition, &[("RUNS_CLI_TOKEN", "cli-token")]);
    let body = br#"{"input": "hello cli", "conversation_id": "cli-conversation"}"#;
    let headers = [("Authorization", "Bearer cli-token"), ("Content-Type", "application/json")];
    let answer = post(port, "/", &headers, body);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#"{"status":"ok","reply":"re: []","steps":2}"#), "{answer}");

    let list = billable(&database_url)
        .args(["runs", "list", "--conversation", "cli-conversation"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let stdout = String::from_utf8(list.stdout).unwrap();
    let fields: Vec<&str> = stdout.lines().next().expect("one run").split('\t').collect();
    assert_eq!(fields[2..7], ["webhook", "ok", "2", "6", "2"]);
    assert_eq!(fields[8..], ["cli-conversation", "-"]);

    let show = billable(&database_url).args(["runs", "show", fields[0]]).output().unwrap();
    let shown = String::from_utf8(show.stdout).unwrap();
    assert!(shown.contains("status: ok\n") && shown.contains("input: hello cli\n"), "{shown}");
    let call = shown.lines().find(|line| line.starts_with("tool_call[0]: ")).expect("the tool call");
    assert!(
        call.starts_with("tool_call[0]: list_clients {} (ok, ") && call.ends_with(" ms) -> []"),
        "{call}"
    );
    // What the model read, and what it replied, each line indented under its name.
    assert!(shown.ends_with("model_input:\n  hello cli\nreply:\n  re: []\n"), "{shown}");
    let unknown = billable(&database_url)
        .args(["runs", "show", "00000000-0000-7000-8000-000000000000"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no run with id"));
}
