//! The agent's built-in tools, through the webhook trigger with a fake model that asks for
//! them: they act on the real store as the definition's user, with its permissions, within
//! the trigger's list; a refusal or a 400 goes back to the model as text.

use acceptance::fake_model::{Answer, FakeModel};
use acceptance::{AGENT_USER, AgentApp, Backend, TestDb, example};
use serde_json::{Value, json};

const TOKEN: &str = "tools-token";
const ENV: &[(&str, &str)] = &[("WEBHOOK_TOKEN", TOKEN)];

/// An agent whose built-in tools have `permissions`; `trigger` adds to the webhook trigger.
fn agent(model: &FakeModel, permissions: &str, trigger: &str) -> String {
    format!(
        "name: payments\nmodel:\n  provider: openai\n  base_url: {}\n  model: fake-1\n  max_retries: 0\n\
         tools:\n  billable:\n    user: {AGENT_USER}\n    permissions: [{permissions}]\n\
         triggers:\n  - type: webhook\n    port: 0\n    token_env: WEBHOOK_TOKEN\n{trigger}",
        model.base_url
    )
}

async fn start(yaml: &str) -> AgentApp {
    AgentApp::start(yaml, ENV, TestDb::new(Backend::from_env()).await).await.unwrap()
}

/// Runs the agent once through the webhook; the reply, and the run as the history keeps it.
async fn run(app: &AgentApp, input: &str) -> (Value, Value) {
    let response = app.call("/", Some(TOKEN), &json!({"input": input})).send().await.unwrap();
    let run_id = response.headers()["x-run-id"].to_str().unwrap().to_owned();
    let reply = response.json().await.unwrap();
    let (status, run) = app.get_json(&format!("/v1/agent/runs/{run_id}")).await;
    assert_eq!(status, 200);
    (reply, run)
}

/// The tools offered in a model request, by name.
fn offered(request: &Value) -> Vec<String> {
    let tools = request["tools"].as_array().cloned().unwrap_or_default();
    tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
}

/// The content of the tool message answering the last call in `request`.
fn tool_result(request: &Value) -> String {
    let messages = request["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "tool").expect("a tool result");
    last["content"].as_str().unwrap().to_owned()
}

/// POSTs `body` to the REST API's `path` with the app's key, expecting a 201.
async fn created(app: &AgentApp, path: &str, body: &Value) -> Value {
    let response =
        app.http.post(format!("{}{path}", app.rest)).header("x-api-key", &app.key).json(body).send().await;
    let response = response.unwrap();
    let status = response.status();
    let answer: Value = response.json().await.unwrap();
    assert_eq!(status, 201, "{answer}");
    answer
}

/// An invoice of 100.00 USD made through the REST API.
async fn invoice(app: &AgentApp) -> Value {
    let body = json!({
        "client": {"name": "Acme", "email": "billing@acme.test"},
        "issueDate": "2026-11-01", "dueDate": "2026-12-01", "taxPercentage": 0,
        "lineItems": [{"description": "Consulting", "quantity": 1, "unitPrice": 100}],
    });
    created(app, "/v1/invoices", &body).await
}

#[tokio::test]
async fn the_agent_reports_a_month_of_time_and_bills_it() {
    let model = FakeModel::start(vec![], None);
    let app = start(&agent(&model, "invoices:write, track:read", "")).await;
    let project = created(&app, "/v1/track/projects", &json!({"title": "Website", "rate": 80})).await;
    for (date, seconds) in [("2026-11-03", 5400), ("2026-11-20", 1800)] {
        let entry = json!({"durationSeconds": seconds, "taskName": "Build", "date": date, "projectId": project["id"]});
        created(&app, "/v1/track/time", &entry).await;
    }
    let client = created(
        &app,
        "/v1/invoices/clients",
        &json!({"name": "Acme", "email": "a@acme.test", "line1": "1 Way", "postalCode": "1"}),
    )
    .await;
    let month = json!({"from": "2026-11-01", "to": "2026-11-30"});
    let report = json!({"groupBy": "project", "from": month["from"], "to": month["to"]});
    let bill = json!({"clientId": client["id"], "from": month["from"], "to": month["to"]});
    model.queue_answers(vec![
        Answer::call("time_report", &report),
        Answer::call(
            "bill_time",
            &json!({"preview": true, "clientId": client["id"], "from": "2026-11-01", "to": "2026-11-30"}),
        ),
        Answer::call("bill_time", &bill),
        Answer::call("bill_time", &bill),
        Answer::reply("billed"),
    ]);
    let (reply, recorded) = run(&app, "Bill November").await;
    assert_eq!(reply["reply"], "billed");
    let outcomes: Vec<bool> =
        recorded["toolCalls"].as_array().unwrap().iter().map(|c| c["ok"] == true).collect();
    assert_eq!(outcomes, [true, true, true, false], "the second bill finds nothing left to bill");

    let requests = model.requests();
    let tools = offered(&requests[0]);
    assert!(
        tools.contains(&"bill_time".to_owned()) && tools.contains(&"time_report".to_owned()),
        "{tools:?}"
    );
    let reported: Value = serde_json::from_str(&tool_result(&requests[1])).unwrap();
    let website = &reported["groups"][0];
    assert_eq!(
        (website["title"].as_str(), website["amount"].to_string()),
        (Some("Website"), "160.00".to_owned())
    );
    let preview: Value = serde_json::from_str(&tool_result(&requests[2])).unwrap();
    let billed: Value = serde_json::from_str(&tool_result(&requests[3])).unwrap();
    assert_eq!(
        (preview["total"].to_string(), billed["total"].to_string()),
        ("160.00".into(), "160.00".into())
    );
    assert_eq!(
        tool_result(&requests[4]),
        "error: from: no billable time that is not billed yet in the range"
    );
    let (_, invoices) = app.get_json("/v1/invoices").await;
    assert_eq!(invoices.as_array().unwrap().len(), 1, "the preview wrote nothing, the bill one invoice");
    let (_, entries) = app.get_json("/v1/track/time?from=2026-11-01&to=2026-11-30").await;
    assert!(entries.as_array().unwrap().iter().all(|e| e["invoiceId"] == billed["id"]), "{entries}");
}

#[tokio::test]
async fn billing_time_needs_both_of_its_permissions() {
    let model = FakeModel::start(vec![], None);
    let yaml = agent(&model, "invoices:write", "    tools: [bill_time]\n");
    let error = AgentApp::start(&yaml, ENV, TestDb::new(Backend::Memory).await).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.yaml: triggers[0].tools[0]: bill_time needs track:read, which tools.billable.permissions does not grant"
    );
    let app = start(&agent(&model, "invoices:write, track:write", "")).await;
    model.queue_answers(vec![Answer::reply("nothing to do")]);
    run(&app, "hello").await;
    let tools = offered(&model.requests()[0]);
    assert!(tools.contains(&"bill_time".to_owned()), "track:write implies track:read: {tools:?}");
}

#[tokio::test]
async fn a_payment_notice_finds_the_invoice_and_marks_it_paid() {
    let model = FakeModel::start(vec![], None);
    let app = start(&agent(&model, "invoices:write", "")).await;
    let invoice = invoice(&app).await;
    let id = invoice["id"].as_str().unwrap();
    model.queue_answers(vec![
        Answer::call("list_invoices", &json!({})),
        Answer::call("mark_invoice_paid", &json!({"id": id})),
        Answer::reply("marked paid"),
    ]);
    let (reply, recorded) =
        run(&app, &format!("Payment received for {}", invoice["serial"].as_str().unwrap())).await;
    assert_eq!(reply["reply"], "marked paid", "{reply}");
    assert_eq!(recorded["steps"], 3, "steps count model calls");
    let calls = recorded["toolCalls"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["list_invoices", "mark_invoice_paid"]);
    assert!(calls.iter().all(|c| c["ok"] == true && c["durationMs"].is_u64()), "{calls:?}");
    assert_eq!(calls[1]["arguments"], json!({"id": id}).to_string());
    let result = calls[1]["result"].as_str().unwrap();
    // The invoice as the operation answers it (keys in order), now with its payment.
    assert!(
        result.starts_with("{\"amountCredited\":0.00,\"amountDue\":0.00,\"amountPaid\":100.00,"),
        "{result}"
    );
    assert_eq!(result.chars().count(), 501, "the first 500 characters, and an ellipsis: {result}");

    let (_, stored) = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(stored["status"], "PAID");
    let requests = model.requests();
    let tools = offered(&requests[0]);
    assert!(tools.contains(&"mark_invoice_paid".to_owned()) && tools.contains(&"list_invoices".to_owned()));
    assert!(
        !tools.iter().any(|t| t.contains("client") || t.contains("time")),
        "only what the permissions allow: {tools:?}"
    );
    let listed: Value = serde_json::from_str(&tool_result(&requests[1])).unwrap();
    assert_eq!(listed[0]["id"], id, "the tool answers the API's response body");
    let marked: Value = serde_json::from_str(&tool_result(&requests[2])).unwrap();
    assert_eq!(marked["status"], "PAID");
    // The create tool's schema is the API's request body.
    let create =
        requests[0]["tools"].as_array().unwrap().iter().find(|t| t["function"]["name"] == "create_invoice");
    let parameters = &create.unwrap()["function"]["parameters"];
    assert!(parameters["properties"]["lineItems"].is_object(), "{parameters}");
    assert!(!parameters.to_string().contains("$ref"), "schemas are inlined: {parameters}");
}

#[tokio::test]
async fn a_tool_outside_the_triggers_list_is_refused_and_writes_nothing() {
    let model = FakeModel::start(vec![], None);
    let app = start(&agent(&model, "invoices:write", "    tools: [list_invoices, get_invoice]\n")).await;
    let invoice = invoice(&app).await;
    let id = invoice["id"].as_str().unwrap();
    model.queue_answers(vec![
        Answer::call("mark_invoice_paid", &json!({"id": id})),
        Answer::reply("could not"),
    ]);
    let (_, recorded) = run(&app, "mark it paid").await;
    let refused = &recorded["toolCalls"][0];
    assert_eq!((refused["name"].as_str(), refused["ok"].as_bool()), (Some("mark_invoice_paid"), Some(false)));
    assert!(refused["result"].as_str().unwrap().starts_with("error: the tool"), "{refused}");

    let requests = model.requests();
    assert_eq!(
        offered(&requests[0]),
        ["list_invoices", "get_invoice"],
        "only the trigger's tools are offered"
    );
    assert_eq!(
        tool_result(&requests[1]),
        "error: the tool \"mark_invoice_paid\" is not allowed for this trigger"
    );
    let (_, stored) = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(stored["status"], "PENDING");
}

#[tokio::test]
async fn the_apis_errors_reach_the_model_as_text() {
    let model = FakeModel::start(vec![], None);
    let app = start(&agent(&model, "clients:write, track:read", "")).await;
    model.queue_answers(vec![
        Answer::call("create_client", &json!({"name": "No Email", "line1": "x", "postalCode": "1"})),
        Answer::call("get_client", &json!({"id": "00000000-0000-7000-8000-000000000000"})),
        Answer::call("list_time_entries", &json!({"frequency": "week"})),
        Answer::call(
            "create_client",
            &json!({"name": "Zed", "email": "zed@example.com", "line1": "1 Way", "postalCode": "2"}),
        ),
        Answer::reply("done"),
    ]);
    let (_, recorded) = run(&app, "add a client").await;
    let outcomes: Vec<bool> =
        recorded["toolCalls"].as_array().unwrap().iter().map(|c| c["ok"] == true).collect();
    assert_eq!(outcomes, [false, false, false, true]);
    let requests = model.requests();
    assert_eq!(tool_result(&requests[1]), "error: email: is required");
    assert_eq!(tool_result(&requests[2]), "error: client not found");
    assert_eq!(tool_result(&requests[3]), "error: date: is required (or from and to)");
    let made: Value = serde_json::from_str(&tool_result(&requests[4])).unwrap();
    assert_eq!(made["name"], "Zed");
    let (_, clients) = app.get_json("/v1/invoices/clients").await;
    assert_eq!(clients.as_array().unwrap().len(), 1, "only the valid create wrote");
}

#[tokio::test]
async fn a_user_the_team_lacks_stops_startup_naming_the_field() {
    let model = FakeModel::start(vec![], None);
    let yaml = agent(&model, "track:read", "").replace(AGENT_USER, "nobody@example.com");
    let error = AgentApp::start(&yaml, ENV, TestDb::new(Backend::Memory).await).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent.yaml: tools.billable.user: no user of the agent's team has the id or email \"nobody@example.com\""
    );
}

#[tokio::test]
async fn the_payments_example_marks_the_invoice_a_notice_names_paid() {
    let model = FakeModel::start(vec![], None);
    let yaml = example("payments.yaml", &model.base_url);
    let env = [("PAYMENTS_TOKEN", TOKEN)];
    let app = AgentApp::start(&yaml, &env, TestDb::new(Backend::from_env()).await).await.unwrap();
    let invoice = invoice(&app).await;
    let (id, serial) = (invoice["id"].as_str().unwrap(), invoice["serial"].as_str().unwrap());
    model.queue_answers(vec![
        Answer::call("list_invoices", &json!({})),
        Answer::call("mark_invoice_paid", &json!({"id": id})),
        Answer::reply(serial),
    ]);
    let notice = json!({"input": format!("Payment of 100.00 EUR received, reference {serial}")});
    let response = app.call("/payments", Some(TOKEN), &notice).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let requests = model.requests();
    assert_eq!(offered(&requests[0]), ["list_invoices", "get_invoice", "mark_invoice_paid"]);
    assert!(requests[0]["messages"][0]["content"].as_str().unwrap().contains("mark_invoice_paid"));
    let (_, stored) = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(stored["status"], "PAID");
}
