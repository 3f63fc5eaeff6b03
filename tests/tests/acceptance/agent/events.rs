//! The events trigger: an overdue invoice wakes the agent of `examples/collections.yaml`,
//! which reads what was sent and chases the client by e-mail, through the job queue, with
//! the event framed as untrusted text; a payment wakes it in the same conversation.

use acceptance::fake_model::{Answer, FakeModel};
use acceptance::outside::SmtpServer;
use acceptance::{AgentApp, Backend, TestDb, example_as_written, mailing_config};
use serde_json::{Value, json};

#[tokio::test]
async fn an_overdue_invoice_wakes_the_agent_which_chases_it() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let smtp = SmtpServer::start();
    let model = FakeModel::start(vec![], Some(Answer::reply("Nothing to send for a payment.")));
    let yaml = example_as_written("collections.yaml", &model.base_url);
    let env = [("OPENAI_API_KEY", "sk-test")];
    let db = TestDb::new(Backend::from_env()).await;
    accounts::bootstrap(db.open().await.accounts().as_ref(), chrono::Utc::now()).await.unwrap();
    let config = mailing_config(&smtp);
    let app = AgentApp::start_with(config, triggers::RetryPolicy::default(), &yaml, &env, db).await.unwrap();
    let post = async |path: &str, body: Value| {
        let response = app
            .http
            .post(format!("{}{path}", app.rest))
            .header("x-api-key", &app.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        response.json::<Value>().await.unwrap()
    };
    let today = chrono::Utc::now().date_naive();
    let invoice = post(
        "/v1/invoices",
        json!({"client": {"email": "zoe@example.com", "name": "Zoë"}, "taxPercentage": 19,
               "issueDate": (today - chrono::TimeDelta::days(40)).to_string(),
               "dueDate": (today - chrono::TimeDelta::days(10)).to_string(),
               "lineItems": [{"description": "Design", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    let id = invoice["id"].as_str().unwrap();
    post(&format!("/v1/invoices/{id}/send"), json!({})).await;
    let replies = std::fs::read_to_string(format!("{fixtures}/agent/collections.replies.json")).unwrap();
    let replies: Vec<Value> = serde_json::from_str(&replies.replace("INVOICE_ID", id)).unwrap();
    model.queue_answers(replies.into_iter().map(Answer::Recorded).collect());

    // One pass: the invoice is found overdue, the agent runs on it and queues a reminder,
    // which the same pass sends.
    let report = app.run_jobs().await;
    assert_eq!(report.overdue, 1, "{report:?}");
    let mails = smtp.received();
    assert_eq!(mails.len(), 2, "the invoice, then the agent's reminder");
    assert_eq!(mails[1]["rcpt_tos"], json!(["zoe@example.com"]));
    assert!(mails[1]["subject"].as_str().unwrap().starts_with("Reminder: invoice INV-0001, 119.00 USD due"));

    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let offered: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        offered,
        ["get_invoice", "send_invoice", "send_reminder", "list_messages"],
        "only the trigger's tools"
    );
    let input =
        requests[0]["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(
        input.starts_with("The text between the markers below is an event of the team's books"),
        "{input}"
    );
    assert!(input.contains("<<<UNTRUSTED BOOKS EVENT>>>\nEvent: invoice.overdue\n"), "{input}");
    assert!(input.contains(&format!("\"id\": \"{id}\"")), "the invoice as GET shows it");
    let listed = requests[1]["messages"].as_array().unwrap().iter().rfind(|m| m["role"] == "tool").unwrap();
    assert!(listed["content"].as_str().unwrap().contains("\"kind\":\"invoice\""), "{listed}");

    let (_, runs) = app.get_json("/v1/agent/runs").await;
    let run = &runs[0];
    assert_eq!((run["trigger"].as_str(), run["status"].as_str()), (Some("events"), Some("ok")));
    assert_eq!(run["conversationId"], format!("invoice:{id}"));
    let (_, recorded) = app.get_json(&format!("/v1/agent/runs/{}", run["id"].as_str().unwrap())).await;
    let calls: Vec<&str> =
        recorded["toolCalls"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(calls, ["list_messages", "send_reminder"]);
    let (_, messages) = app.get_json(&format!("/v1/invoices/{id}/messages")).await;
    assert_eq!(messages[0]["kind"], "reminder");

    // Found overdue once; a payment wakes it again, in the invoice's conversation.
    assert_eq!(app.run_jobs().await.overdue, 0);
    post(&format!("/v1/invoices/{id}/payments"), json!({"amount": 119})).await;
    app.run_jobs().await;
    let (_, runs) = app.get_json("/v1/agent/runs").await;
    assert_eq!(runs.as_array().unwrap().len(), 2);
    assert_eq!(runs[0]["conversationId"], format!("invoice:{id}"));
    let last = model.requests().pop().unwrap();
    let woken = last["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap().to_owned();
    assert!(woken.contains("Event: payment.created"), "{woken}");
    assert_eq!(smtp.received().len(), 2, "nothing sent for a payment");
}
