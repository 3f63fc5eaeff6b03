//! E-mail through a real SMTP server (aiosmtpd), each mail read back with a MIME parser:
//! sending invoices and credit notes, the message log, temporary and permanent failures,
//! TLS and login, and what a client may send.

use acceptance::outside::{SmtpOptions, SmtpServer};
use acceptance::{TestApp, mailing_config, spawn_app, spawn_app_with};
use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error_of;

/// An invoice of a client called Zoë, due in 30 days, through the API; its JSON.
pub(crate) async fn invoice(app: &TestApp, email: &str) -> Value {
    let due = (chrono::Utc::now() + chrono::TimeDelta::days(30)).format("%Y-%m-%d").to_string();
    let response = app
        .request(Method::POST, "/v1/invoices", &app.key)
        .json(&json!({
            "client": {"email": email, "name": "Zoë Łukasiewicz"},
            "dueDate": due, "taxPercentage": 19,
            "lineItems": [{"description": "Design", "unitPrice": 100, "quantity": 1}]
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    response.json().await.unwrap()
}

/// `POST path` with `body` and the team's key: its status and JSON.
pub(crate) async fn post(app: &TestApp, path: &str, body: Value) -> (StatusCode, Value) {
    let response = app.request(Method::POST, path, &app.key).json(&body).send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or_default())
}

fn sha256(bytes: &[u8]) -> String {
    notify::mail::sha256_hex(bytes)
}

#[tokio::test]
async fn sending_needs_an_smtp_server() {
    let app = spawn_app().await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let path = format!("/v1/invoices/{}/send", invoice["id"].as_str().unwrap());
    let response = app.request(Method::POST, &path, &app.key).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::CONFLICT);
    let error = error_of(response).await;
    assert!(error.contains("BILLABLE_SMTP_URL") && error.contains("BILLABLE_MAIL_FROM"), "{error}");
}

#[tokio::test]
async fn an_invoice_is_mailed_with_its_pdf_and_logged() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let id = invoice["id"].as_str().unwrap();
    let pdf = app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}"))).send().await.unwrap();
    let pdf = pdf.bytes().await.unwrap();

    let body =
        json!({"cc": ["books@example.com"], "subject": "Rechnung {serial} für {client} – {amountDue}"});
    let response = app
        .request(Method::POST, &format!("/v1/invoices/{id}/send"), &app.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let message: Value = response.json().await.unwrap();
    assert_eq!(message["status"], "queued");
    assert_eq!(message["kind"], "invoice");
    assert_eq!(message["to"], json!(["zoe@example.com"]), "the client's email by default");
    assert_eq!(message["subject"], "Rechnung INV-0001 für Zoë Łukasiewicz – 119.00 EUR");
    let attachment = &message["attachments"][0];
    assert_eq!(attachment["filename"], "INV-0001.pdf");
    assert_eq!(attachment["contentType"], "application/pdf");
    assert_eq!(attachment["size"], pdf.len());
    assert_eq!(attachment["sha256"], sha256(&pdf), "the PDF GET /v1/invoices/pdf serves");
    assert!(
        message["body"].as_str().unwrap().contains(&format!("https://billing.example.com/invoices/{id}"))
    );
    assert!(smtp.received().is_empty(), "sent by the job queue, not by the request");

    let report = app.run_jobs().await;
    assert_eq!(report.done, 1, "{report:?}");
    let [mail] = smtp.received().try_into().unwrap();
    assert_eq!(mail["mail_from"], "billing@acme.example");
    assert_eq!(mail["rcpt_tos"], json!(["zoe@example.com", "books@example.com"]));
    assert_eq!(mail["subject"], "Rechnung INV-0001 für Zoë Łukasiewicz – 119.00 EUR");
    assert_eq!(mail["message_id"], format!("<{}>", message["messageId"].as_str().unwrap()));
    assert!(mail["body"].as_str().unwrap().contains("119.00 EUR"));
    let sent = &mail["attachments"][0];
    assert_eq!(
        (sent["filename"].as_str(), sent["content_type"].as_str()),
        (Some("INV-0001.pdf"), Some("application/pdf"))
    );
    let bytes = base64::engine::general_purpose::STANDARD.decode(sent["base64"].as_str().unwrap()).unwrap();
    assert_eq!(bytes, pdf, "the attachment's bytes");

    let logged = app.get_json(&format!("/v1/messages/{}", message["id"].as_str().unwrap())).await;
    assert_eq!((logged["status"].as_str(), logged["attempts"].as_u64()), (Some("sent"), Some(1)));
    assert!(logged["sentAt"].is_string());
    let invoice = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(invoice["sentAt"], logged["sentAt"]);
    let listed = app.get_json(&format!("/v1/invoices/{id}/messages")).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let sent_ones = app.get_json("/v1/messages?status=sent").await;
    assert_eq!(sent_ones[0]["id"], message["id"]);
    assert_eq!(app.get_json("/v1/messages?status=failed").await, json!([]));
    // Another send keeps the first sentAt.
    let (status, _) = post(&app, &format!("/v1/invoices/{id}/send"), json!({"attachPdf": false})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    app.run_jobs().await;
    assert_eq!(smtp.received()[1]["attachments"], json!([]));
    assert_eq!(app.get_json(&format!("/v1/invoices/{id}")).await["sentAt"], invoice["sentAt"]);
}

#[tokio::test]
async fn a_temporary_failure_is_retried_with_the_same_message_id() {
    let smtp = SmtpServer::with(SmtpOptions { fail_first: 1, ..SmtpOptions::default() });
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let (status, message) =
        post(&app, &format!("/v1/invoices/{}/send", invoice["id"].as_str().unwrap()), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let at = chrono::Utc::now();
    let report = app.run_jobs_at(at).await;
    assert_eq!((report.retried, report.done), (1, 0), "{report:?}");
    let path = format!("/v1/messages/{}", message["id"].as_str().unwrap());
    let retrying = app.get_json(&path).await;
    assert_eq!((retrying["status"].as_str(), retrying["attempts"].as_u64()), (Some("queued"), Some(1)));
    assert!(retrying["lastError"].as_str().unwrap().contains("451"), "{retrying}");
    // Not before its backoff (a minute), then sent.
    assert_eq!(app.run_jobs_at(at + chrono::TimeDelta::seconds(59)).await.done, 0);
    assert_eq!(app.run_jobs_at(at + chrono::TimeDelta::seconds(61)).await.done, 1);
    let sent = app.get_json(&path).await;
    assert_eq!((sent["status"].as_str(), sent["attempts"].as_u64()), (Some("sent"), Some(2)));
    assert_eq!(sent["lastError"], Value::Null);
    let (refused, received) = (smtp.refused(), smtp.received());
    assert_eq!(refused[0]["message_id"], received[0]["message_id"], "a retry is the same mail");
    assert_eq!(received.len(), 1);
}

#[tokio::test]
async fn a_permanent_failure_fails_at_once_and_may_be_sent_again() {
    let smtp = SmtpServer::with(SmtpOptions { reject_rcpt: Some("nobody".into()), ..SmtpOptions::default() });
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let id = invoice["id"].as_str().unwrap();
    let (_, message) =
        post(&app, &format!("/v1/invoices/{id}/send"), json!({"to": ["nobody@example.com"]})).await;
    let report = app.run_jobs().await;
    assert_eq!(report.failed, 1, "{report:?}");
    let path = format!("/v1/messages/{}", message["id"].as_str().unwrap());
    let failed = app.get_json(&path).await;
    assert_eq!(failed["status"], "failed");
    assert!(failed["lastError"].as_str().unwrap().contains("550"), "the server's reply: {failed}");
    assert_eq!(app.get_json(&format!("/v1/invoices/{id}")).await["sentAt"], Value::Null);

    let retry = app.request(Method::POST, &format!("{path}/retry"), &app.key).send().await.unwrap();
    assert_eq!(retry.status(), StatusCode::ACCEPTED);
    let retried: Value = retry.json().await.unwrap();
    assert_eq!((retried["status"].as_str(), &retried["messageId"]), (Some("queued"), &failed["messageId"]));
    app.run_jobs().await;
    assert_eq!(app.get_json(&path).await["attempts"], 2);
    let (_, sent) = post(&app, &format!("/v1/invoices/{id}/send"), json!({})).await;
    app.run_jobs().await;
    let again =
        app.request(Method::POST, &format!("/v1/messages/{}/retry", sent["id"].as_str().unwrap()), &app.key);
    let again = again.send().await.unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert!(error_of(again).await.contains("only a failed message"));
}

#[tokio::test]
async fn starttls_and_smtps_with_a_login_deliver() {
    for tls in ["starttls", "smtps"] {
        let options =
            SmtpOptions { tls: Some(tls), auth: Some("billable:s3cret".into()), ..SmtpOptions::default() };
        let smtp = SmtpServer::with(options);
        let app = spawn_app_with(mailing_config(&smtp)).await;
        let invoice = invoice(&app, "zoe@example.com").await;
        post(&app, &format!("/v1/invoices/{}/send", invoice["id"].as_str().unwrap()), json!({})).await;
        let report = app.run_jobs().await;
        assert_eq!(report.done, 1, "{tls}: {report:?} {}", app.get_json("/v1/messages").await);
        assert_eq!(smtp.received().len(), 1, "{tls}");
    }
}

#[tokio::test]
async fn a_credit_note_is_mailed_with_its_own_pdf() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let id = invoice["id"].as_str().unwrap();
    let (status, note) = post(&app, &format!("/v1/invoices/{id}/credit-notes"), json!({"full": true})).await;
    assert_eq!(status, StatusCode::CREATED);
    let note_id = note["id"].as_str().unwrap();
    let (status, message) = post(&app, &format!("/v1/credit-notes/{note_id}/send"), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{message}");
    assert_eq!(
        (message["kind"].as_str(), message["creditNoteId"].as_str()),
        (Some("credit_note"), Some(note_id))
    );
    app.run_jobs().await;
    let [mail] = smtp.received().try_into().unwrap();
    assert_eq!(mail["subject"], "Credit note CN-0001");
    assert_eq!(mail["attachments"][0]["filename"], "CN-0001.pdf");
    assert!(mail["body"].as_str().unwrap().contains(&format!("/v1/credit-notes/pdf?id={note_id}")));
    let listed = app.get_json(&format!("/v1/invoices/{id}/messages")).await;
    assert_eq!(listed[0]["creditNoteId"], note["id"]);
}

#[tokio::test]
async fn what_a_send_may_say_is_checked_and_named() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let path = format!("/v1/invoices/{}/send", invoice["id"].as_str().unwrap());
    for (body, field) in [
        (json!({"to": ["not an address"]}), "to[0]: "),
        (json!({"to": []}), "to: must name at least one address"),
        (json!({"cc": ["a@example.com", "bad"]}), "cc[1]: "),
        (
            json!({"to": (0..21).map(|n| format!("p{n}@example.com")).collect::<Vec<_>>()}),
            "to: at most 20 recipients",
        ),
        (
            json!({"to": ["a@example.com"], "cc": (0..20).map(|n| format!("c{n}@example.com")).collect::<Vec<_>>()}),
            "cc: at most 20 recipients",
        ),
        (json!({"subject": "Dear {customer}"}), "subject: {customer} is not a placeholder; use {serial}"),
        (json!({"subject": "a\nBcc: x@example.com"}), "subject: "),
        (json!({"body": ""}), "body: "),
        (json!({"attachPdf": "yes"}), "attachPdf: "),
        (json!({"from": "me@example.com"}), "from: not accepted"),
    ] {
        let response = app.request(Method::POST, &path, &app.key).json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let error = error_of(response).await;
        assert!(error.starts_with(field), "{body}: {error}");
    }
    let text = app.request(Method::POST, &path, &app.key).header("content-type", "text/plain").body("x");
    assert_eq!(text.send().await.unwrap().status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let unknown = format!("/v1/invoices/{}/send", uuid::Uuid::now_v7());
    assert_eq!(post(&app, &unknown, json!({})).await.0, StatusCode::NOT_FOUND);
    // Another team sees neither the invoice nor its messages.
    let (_, message) = post(&app, &path, json!({})).await;
    let other = acceptance::create_team(&app.store, "Other").await;
    let owner = acceptance::create_user(&app.store, other, accounts::Role::Owner).await;
    let (_, key) = acceptance::create_key(&app.store, other, owner, accounts::Scope::Write, None).await;
    let theirs = app.request(Method::POST, &path, &key).send().await.unwrap();
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    let read = app.request(Method::GET, &format!("/v1/messages/{}", message["id"].as_str().unwrap()), &key);
    assert_eq!(read.send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let listed = app.request(Method::GET, "/v1/messages", &key).send().await.unwrap();
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([]));
    // Sending needs invoices:write.
    let (_, reader) =
        acceptance::create_key(&app.store, app.team, app.owner, accounts::Scope::ReadOnly, None).await;
    let refused = app.request(Method::POST, &path, &reader).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}

/// A template's length is bounded before its placeholders are read, and they are read in
/// one pass: a body of nearly 1 MiB of `{` is a 400 naming `body` at once, on every
/// operation that takes a template, and `/healthz` answers meanwhile.
#[tokio::test]
async fn huge_templates_are_refused_by_their_length_at_once() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = invoice(&app, "zoe@example.com").await;
    let id = invoice["id"].as_str().unwrap().to_owned();
    let (status, note) = post(
        &app,
        &format!("/v1/invoices/{id}/credit-notes"),
        json!({
        "lineItems": [{"description": "Design", "unitPrice": 10, "quantity": 1}]}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{note}");
    let braces = "{".repeat(1024 * 1024 - 64);
    let too_long = "body: must be at most 20000 characters";
    let started = std::time::Instant::now();
    let refusals = [
        (Method::POST, format!("/v1/invoices/{id}/send"), json!({"body": braces})),
        (Method::POST, format!("/v1/invoices/{id}/remind"), json!({"body": braces})),
        (
            Method::POST,
            format!("/v1/credit-notes/{}/send", note["id"].as_str().unwrap()),
            json!({"body": braces}),
        ),
        (Method::PUT, "/v1/reminder-policy".to_owned(), json!({"enabled": false, "body": braces})),
    ];
    // All at once, beside a health check.
    let sent: Vec<_> = refusals
        .iter()
        .map(|(method, path, body)| {
            tokio::spawn(app.request(method.clone(), path, &app.key).json(body).send())
        })
        .collect();
    let asked = std::time::Instant::now();
    let health = app.http.get(app.url("/healthz")).send().await.unwrap().status();
    let health_took = asked.elapsed();
    for (answer, (_, path, _)) in sent.into_iter().zip(&refusals) {
        let answer = answer.await.unwrap().unwrap();
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(error_of(answer).await, too_long, "{path}");
    }
    // A tool call's arguments sit inside a JSON-RPC message, itself within 1 MiB.
    let tool =
        app.call_tool(&app.key, "send_invoice", json!({"id": id, "body": &braces[..512 * 1024]})).await;
    assert_eq!(tool["isError"], true);
    assert!(tool["content"][0]["text"].as_str().unwrap().contains(too_long), "{tool}");
    assert_eq!(health, StatusCode::OK);
    // Loose bounds for a debug build on a busy machine: one search per `{` took seconds.
    assert!(health_took < std::time::Duration::from_secs(1), "/healthz took {health_took:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3), "took {:?}", started.elapsed());
    // Nothing was queued.
    let messages = app.get_json("/v1/messages").await;
    assert_eq!(messages.as_array().unwrap().len(), 0, "{messages}");
}
