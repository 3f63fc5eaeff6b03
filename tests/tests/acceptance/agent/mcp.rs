//! MCP servers as the agent's tools: a real server from the npm registry over stdio
//! (`@modelcontextprotocol/server-everything`, installed by `npm ci --prefix tests/mcp`), and
//! billable's own `/mcp` over streamable HTTP, started in the test.

use acceptance::fake_model::{Answer, FakeModel};
use acceptance::{AgentApp, Backend, TestDb, spawn_app};
use serde_json::{Value, json};

const TOKEN: &str = "mcp-token";

/// An agent whose tools are the MCP servers `servers` (YAML list items).
fn agent(model: &FakeModel, servers: &str, trigger: &str) -> String {
    format!(
        "name: mcp\nmodel:\n  provider: openai\n  base_url: {}\n  model: fake-1\n  max_retries: 0\n\
         tools:\n  mcp:\n{servers}\
         triggers:\n  - type: webhook\n    port: 0\n    token_env: WEBHOOK_TOKEN\n{trigger}",
        model.base_url
    )
}

/// The stdio server from the npm registry.
fn everything() -> String {
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    );
    assert!(std::path::Path::new(server).exists(), "{server} is missing: npm ci --prefix tests/mcp");
    format!("    - name: everything\n      command: [node, {server}, stdio]\n")
}

/// Runs the agent once through the webhook; the run as the history keeps it.
async fn run(app: &AgentApp) -> Value {
    let response = app.call("/", Some(TOKEN), &json!({"input": "go"})).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_owned();
    app.get_json(&format!("/v1/agent/runs/{run_id}")).await.1
}

fn offered(request: &Value) -> Vec<String> {
    let tools = request["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

fn tool_result(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    messages.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_stdio_server_from_npm_is_offered_and_called() {
    let model = FakeModel::start(vec![], None);
    let yaml = agent(&model, &everything(), "    tools: [everything__echo]\n");
    let env = [("WEBHOOK_TOKEN", TOKEN)];
    let app = AgentApp::start(&yaml, &env, TestDb::new(Backend::from_env()).await).await.unwrap();
    model.queue_answers(vec![
        Answer::call("everything__echo", &json!({"message": "hello from billable"})),
        Answer::reply("done"),
    ]);
    let recorded = run(&app).await;

    let requests = model.requests();
    assert_eq!(offered(&requests[0]), ["everything__echo"], "the trigger's list narrows the server's tools");
    assert!(tool_result(&requests[1]).contains("hello from billable"), "{}", tool_result(&requests[1]));
    let call = &recorded["toolCalls"][0];
    assert_eq!((call["name"].as_str(), call["ok"].as_bool()), (Some("everything__echo"), Some(true)));
}

#[tokio::test]
async fn an_http_server_gets_its_headers_from_the_environment() {
    // Another billable, whose /mcp is the agent's MCP server.
    let books = spawn_app().await;
    let model = FakeModel::start(vec![], None);
    let servers = format!(
        "    - name: books\n      url: {}\n      headers_env: {{X-API-Key: BOOKS_KEY}}\n      timeout: 20s\n",
        books.url("/mcp")
    );
    let env = [("WEBHOOK_TOKEN", TOKEN), ("BOOKS_KEY", books.key.as_str())];
    let app = AgentApp::start(&agent(&model, &servers, ""), &env, TestDb::new(Backend::from_env()).await)
        .await
        .unwrap();
    model.queue_answers(vec![
        Answer::call(
            "books__create_client",
            &json!({"name": "Remote", "email": "r@example.com", "line1": "1 Way", "postalCode": "9"}),
        ),
        Answer::call("books__get_client", &json!({"id": "nope"})),
        Answer::reply("done"),
    ]);
    let recorded = run(&app).await;

    let requests = model.requests();
    assert_eq!(
        offered(&requests[0]).len(),
        http_api::tools::CATALOGUE.len(),
        "every tool the key allows, each as books__<tool>"
    );
    let made: Value = serde_json::from_str(&tool_result(&requests[1])).unwrap();
    assert_eq!(made["name"], "Remote");
    let clients = books.request(reqwest::Method::GET, "/v1/invoices/clients", &books.key).send().await;
    let clients: Value = clients.unwrap().json().await.unwrap();
    assert_eq!(clients[0]["id"], made["id"], "the call reached the other billable");
    assert_eq!(tool_result(&requests[2]), "error: client not found", "a tool's error reaches the model");
    let outcomes: Vec<bool> =
        recorded["toolCalls"].as_array().unwrap().iter().map(|c| c["ok"] == true).collect();
    assert_eq!(outcomes, [true, false]);
}

#[tokio::test]
async fn a_server_that_cannot_start_or_lacks_a_listed_tool_stops_startup() {
    let model = FakeModel::start(vec![], None);
    let broken = "    - name: broken\n      command: [/nonexistent/mcp-server]\n";
    let env = [("WEBHOOK_TOKEN", TOKEN)];
    let error = AgentApp::start(&agent(&model, broken, ""), &env, TestDb::new(Backend::Memory).await)
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(message.starts_with("agent.yaml: tools.mcp[0]: MCP server broken: cannot start"), "{message}");

    let unknown = agent(&model, &everything(), "    tools: [everything__no_such_tool]\n");
    let error = AgentApp::start(&unknown, &env, TestDb::new(Backend::Memory).await).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.yaml: triggers[0].tools: everything__no_such_tool is not a tool of the agent"
    );
    let missing = agent(
        &model,
        "    - name: books\n      url: http://127.0.0.1:9/mcp\n      headers_env: {X-API-Key: UNSET_KEY}\n",
        "",
    );
    let error = AgentApp::start(&missing, &env, TestDb::new(Backend::Memory).await).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tools.mcp[0].headers_env.X-API-Key: the environment variable UNSET_KEY is not set"),
        "{error}"
    );
}

#[tokio::test]
async fn a_server_that_exits_is_started_again_for_the_next_call() {
    let server = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp/one_call_server.py");
    let model = FakeModel::start(vec![], None);
    let servers = format!("    - name: once\n      command: [python3, {server}]\n");
    let env = [("WEBHOOK_TOKEN", TOKEN)];
    let app = AgentApp::start(&agent(&model, &servers, ""), &env, TestDb::new(Backend::Memory).await)
        .await
        .unwrap();
    model.queue_answers(vec![
        Answer::call("once__count", &json!({})),
        Answer::call("once__count", &json!({})),
        Answer::reply("done"),
    ]);
    let recorded = run(&app).await;

    let requests = model.requests();
    let (first, second) = (tool_result(&requests[1]), tool_result(&requests[2]));
    assert!(first.starts_with("calls=1 pid=") && second.starts_with("calls=1 pid="), "{first} / {second}");
    assert_ne!(first, second, "the second call reached a process started again");
    let outcomes: Vec<bool> =
        recorded["toolCalls"].as_array().unwrap().iter().map(|c| c["ok"] == true).collect();
    assert_eq!(outcomes, [true, true]);
}
