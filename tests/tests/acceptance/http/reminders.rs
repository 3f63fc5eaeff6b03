//! Payment reminders, driven by job passes at the instants the tests choose: the policy, the
//! schedule each invoice shows, each step once (racing passes too), the amount due as it is,
//! and no reminder for what is paid or for a client who takes none.

use acceptance::outside::SmtpServer;
use acceptance::{TestApp, mailing_config, spawn_app_with};
use chrono::{DateTime, TimeDelta, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::error_of;
use super::sending::post;

async fn put_policy(app: &TestApp, body: &Value) -> reqwest::Response {
    app.request(Method::PUT, "/v1/reminder-policy", &app.key).json(body).send().await.unwrap()
}

/// An invoice of 119.00 for `email`, due at `due`; its JSON.
async fn due_on(app: &TestApp, email: &str, due: DateTime<Utc>) -> Value {
    let (status, invoice) = post(
        app,
        "/v1/invoices",
        json!({
            "client": {"email": email, "name": "Zoë"},
            "issueDate": (due - TimeDelta::days(30)).to_rfc3339(), "dueDate": due.to_rfc3339(),
            "taxPercentage": 19, "lineItems": [{"description": "Design", "unitPrice": 100, "quantity": 1}]
        }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{invoice}");
    invoice
}

/// Marks the invoice `id` sent, as a team does for one it delivered by hand.
async fn mark_sent(app: &TestApp, id: &str) -> Value {
    let (status, marked) = post(app, &format!("/v1/invoices/{id}/mark-sent"), Value::Null).await;
    assert_eq!(status, StatusCode::OK, "{marked}");
    assert!(marked["sentAt"].is_string());
    marked
}

/// Reminders chase an invoice only once the client has it: e-mailed by billable, marked sent
/// by the team, or reminded by hand. One never sent is never chased.
#[tokio::test]
async fn reminders_chase_only_invoices_the_client_has() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let due = (Utc::now() + TimeDelta::days(5)).date_naive().and_hms_opt(0, 0, 0).unwrap().and_utc();
    let policy = json!({"enabled": true, "steps": [{"daysAfterDue": 0}, {"daysAfterDue": 7}]});
    assert_eq!(put_policy(&app, &policy).await.status(), StatusCode::OK);
    let [never, mailed, marked, reminded] =
        ["never", "mailed", "marked", "reminded"].map(|who| format!("{who}@example.com"));
    let mut ids = Vec::new();
    for email in [&never, &mailed, &marked, &reminded] {
        let invoice = due_on(&app, email, due).await;
        assert_eq!((&invoice["sentAt"], &invoice["nextReminderAt"]), (&Value::Null, &Value::Null));
        ids.push(invoice["id"].as_str().unwrap().to_owned());
    }
    let (status, _) = post(&app, &format!("/v1/invoices/{}/send", ids[1]), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let marked_answer = mark_sent(&app, &ids[2]).await;
    let (status, _) = post(&app, &format!("/v1/invoices/{}/remind", ids[3]), json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // Marking again changes nothing.
    assert_eq!(mark_sent(&app, &ids[2]).await["sentAt"], marked_answer["sentAt"]);
    app.run_jobs().await;
    let stamp = due.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    for (n, id) in ids.iter().enumerate() {
        let invoice = app.get_json(&format!("/v1/invoices/{id}")).await;
        let expected = if n == 0 { Value::Null } else { Value::from(stamp.clone()) };
        assert_eq!(invoice["nextReminderAt"], expected, "invoice {n}");
    }
    app.run_jobs_at(due + TimeDelta::hours(1)).await;
    let mut reminded_to: Vec<String> = smtp
        .received()
        .iter()
        .filter(|mail| mail["subject"].as_str().unwrap().starts_with("Reminder"))
        .map(|mail| mail["rcpt_tos"][0].as_str().unwrap().to_owned())
        .collect();
    reminded_to.sort();
    assert_eq!(reminded_to, [mailed, marked, reminded.clone(), reminded], "never the one never sent");
    let unknown =
        app.request(Method::POST, "/v1/invoices/0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e/mark-sent", &app.key);
    assert_eq!(unknown.send().await.unwrap().status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_policy_is_read_set_and_checked() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let policy = app.get_json("/v1/reminder-policy").await;
    assert_eq!((policy["enabled"].as_bool(), &policy["steps"]), (Some(false), &json!([])));
    assert!(policy["subject"].as_str().unwrap().contains("{serial}"));
    for (body, error) in [
        (json!({"enabled": true}), "steps: an enabled policy needs at least one step"),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 7}, {"daysAfterDue": 7}]}),
            "steps[1].daysAfterDue: repeats",
        ),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 366}]}),
            "steps[0].daysAfterDue: must be a whole number from -365 to 365",
        ),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 1.5}]}),
            "steps[0].daysAfterDue: must be a whole number from -365 to 365",
        ),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 0}], "subject": "x".repeat(256)}),
            "subject: must be at most 255 characters",
        ),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 0}], "subject": "Reminder\n"}),
            "subject: must be one line",
        ),
        (json!({"enabled": true, "steps": [{"daysAfterDue": 0}], "body": "  "}), "body: must not be empty"),
        (
            json!({"enabled": true, "steps": [{"daysAfterDue": 0}], "body": "{total}"}),
            "body: {total} is not a placeholder",
        ),
        (json!({"enabled": true, "steps": [{"days": 0}]}), "steps[0].days: not accepted"),
    ] {
        let response = put_policy(&app, &body).await;
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
        let message = error_of(response).await;
        assert!(message.starts_with(error), "{body}: {message}");
    }
    // JSON Schema's integers include 7.0.
    let set = json!({"enabled": true, "steps": [{"daysAfterDue": 7.0}, {"daysAfterDue": -3}],
                     "subject": "Reminder {serial}: {amountDue}", "body": "Hello {client}, see {pdfUrl}"});
    let response = put_policy(&app, &set).await;
    assert_eq!(response.status(), StatusCode::OK);
    let stored: Value = response.json().await.unwrap();
    assert_eq!(stored["steps"], json!([{"daysAfterDue": -3}, {"daysAfterDue": 7}]), "in order");
    assert_eq!(app.get_json("/v1/reminder-policy").await, stored);
    let (_, reader) =
        acceptance::create_key(&app.store, app.team, app.owner, accounts::Scope::ReadOnly, None).await;
    let refused = app.request(Method::PUT, "/v1/reminder-policy", &reader).json(&set).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn each_step_is_sent_once_with_the_amount_due_then_reminders_stop() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let due = (Utc::now() + TimeDelta::days(10)).date_naive().and_hms_opt(0, 0, 0).unwrap().and_utc();
    let invoice = due_on(&app, "zoe@example.com", due).await;
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(invoice["nextReminderAt"], Value::Null, "no policy yet");
    let set = json!({"enabled": true, "steps": [{"daysAfterDue": -3}, {"daysAfterDue": 0}, {"daysAfterDue": 7}],
                     "subject": "Reminder {serial}: {amountDue} due {dueDate}"});
    assert_eq!(put_policy(&app, &set).await.status(), StatusCode::OK);
    let path = format!("/v1/invoices/{id}");
    let read = || app.get_json(&path);
    let stamp = |at: DateTime<Utc>| Value::from(at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
    assert_eq!(read().await["nextReminderAt"], Value::Null, "not sent yet");
    mark_sent(&app, id).await;
    assert_eq!(read().await["nextReminderAt"], stamp(due - TimeDelta::days(3)));

    assert_eq!(app.run_jobs_at(due - TimeDelta::days(4)).await.reminders, 0);
    // Two passes racing send the step once.
    let (a, b) =
        tokio::join!(app.run_jobs_at(due - TimeDelta::days(3)), app.run_jobs_at(due - TimeDelta::days(3)));
    assert_eq!(a.reminders + b.reminders, 1);
    let mails = smtp.received();
    assert_eq!(mails.len(), 1);
    let day = due.format("%Y-%m-%d");
    assert_eq!(mails[0]["subject"], format!("Reminder INV-0001: 119.00 EUR due {day}"));
    assert_eq!(mails[0]["rcpt_tos"], json!(["zoe@example.com"]));
    let after = read().await;
    assert_eq!((after["remindersSent"].as_u64(), &after["nextReminderAt"]), (Some(1), &stamp(due)));
    assert_eq!(app.run_jobs_at(due - TimeDelta::days(1)).await.reminders, 0, "once per step");

    // Paid in part: the next one says what is still due.
    let (status, _) = post(&app, &format!("/v1/invoices/{id}/payments"), json!({"amount": 100})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(app.run_jobs_at(due).await.reminders, 1);
    assert_eq!(smtp.received()[1]["subject"], format!("Reminder INV-0001: 19.00 EUR due {day}"));
    let messages = app.get_json(&format!("/v1/invoices/{id}/messages")).await;
    assert_eq!(messages[0]["kind"], "reminder");
    assert_eq!(messages[0]["reminderStep"], 0);

    // Paid: nothing more, ever.
    post(&app, &format!("/v1/invoices/{id}/payments"), json!({"amount": 19})).await;
    let paid = read().await;
    assert_eq!((paid["status"].as_str(), &paid["nextReminderAt"]), (Some("PAID"), &Value::Null));
    assert_eq!(app.run_jobs_at(due + TimeDelta::days(30)).await.reminders, 0);
    assert_eq!(read().await["remindersSent"], 2);
    let manual =
        app.request(Method::POST, &format!("/v1/invoices/{id}/remind"), &app.key).send().await.unwrap();
    assert_eq!(manual.status(), StatusCode::CONFLICT);
    assert!(error_of(manual).await.contains("nothing is due"));
}

#[tokio::test]
async fn a_late_pass_sends_the_latest_step_and_clients_may_take_none() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let due = (Utc::now() + TimeDelta::days(2)).date_naive().and_hms_opt(9, 0, 0).unwrap().and_utc();
    put_policy(
        &app,
        &json!({"enabled": true, "steps": [{"daysAfterDue": 0}, {"daysAfterDue": 7}, {"daysAfterDue": 14}]}),
    )
    .await;
    let chased = due_on(&app, "zoe@example.com", due).await;
    let spared = due_on(&app, "quiet@example.com", due).await;
    for sent in [&chased, &spared] {
        mark_sent(&app, sent["id"].as_str().unwrap()).await;
    }
    let client =
        app.get_json(&format!("/v1/invoices/clients/{}", spared["clientId"].as_str().unwrap())).await;
    assert_eq!(client["remindersEnabled"], true);
    let replace = json!({"name": "Quiet", "email": "quiet@example.com", "line1": "1 Main St", "postalCode": "1000",
                         "remindersEnabled": false});
    let path = format!("/v1/invoices/clients/{}", client["id"].as_str().unwrap());
    let replaced = app.request(Method::PATCH, &path, &app.key).json(&replace).send().await.unwrap();
    assert_eq!(replaced.status(), StatusCode::OK);
    assert_eq!(
        app.get_json(&format!("/v1/invoices/{}", spared["id"].as_str().unwrap())).await["nextReminderAt"],
        Value::Null
    );
    // A replacement that leaves the field out (a caller from before it) keeps the choice.
    let mut without = replace.clone();
    without.as_object_mut().unwrap().remove("remindersEnabled");
    let kept = app.request(Method::PATCH, &path, &app.key).json(&without).send().await.unwrap();
    assert_eq!(kept.json::<Value>().await.unwrap()["remindersEnabled"], false);

    // A pause over two steps: the latest is sent, the one before passed over.
    assert_eq!(app.run_jobs_at(due + TimeDelta::days(8)).await.reminders, 1);
    let [mail] = smtp.received().try_into().unwrap();
    assert_eq!(mail["rcpt_tos"], json!(["zoe@example.com"]));
    let messages = app.get_json(&format!("/v1/invoices/{}/messages", chased["id"].as_str().unwrap())).await;
    assert_eq!(messages[0]["reminderStep"], 7);
    let manual = app.request(
        Method::POST,
        &format!("/v1/invoices/{}/remind", spared["id"].as_str().unwrap()),
        &app.key,
    );
    let manual = manual.send().await.unwrap();
    assert_eq!(manual.status(), StatusCode::CONFLICT);
    assert!(error_of(manual).await.contains("remindersEnabled is false"));
    // By hand, to one who takes them: at once, beside the policy's steps.
    let (status, sent) = post(
        &app,
        &format!("/v1/invoices/{}/remind", chased["id"].as_str().unwrap()),
        json!({"subject": "Please pay {serial}"}),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    assert_eq!((sent["kind"].as_str(), &sent["reminderStep"]), (Some("reminder"), &Value::Null));
    app.run_jobs().await;
    assert_eq!(smtp.received()[1]["subject"], "Please pay INV-0001");
    assert_eq!(
        app.run_jobs_at(due + TimeDelta::days(14)).await.reminders,
        1,
        "the policy's next step still comes"
    );
}

#[tokio::test]
async fn a_reminder_queued_before_the_invoice_was_paid_is_not_sent() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let invoice = due_on(&app, "late@example.com", Utc::now() - TimeDelta::days(3)).await;
    let id = invoice["id"].as_str().unwrap();
    let remind =
        app.request(Method::POST, &format!("/v1/invoices/{id}/remind"), &app.key).send().await.unwrap();
    assert_eq!(remind.status(), StatusCode::ACCEPTED);
    // Paid before the queue came round to the reminder (an SMTP outage, a busy queue).
    let (status, _) = post(&app, &format!("/v1/invoices/{id}/payments"), json!({"amount": 119})).await;
    assert_eq!(status, StatusCode::CREATED);
    app.run_jobs().await;
    let messages = app.get_json(&format!("/v1/invoices/{id}/messages")).await;
    assert_eq!(
        (&messages[0]["status"], &messages[0]["lastError"]),
        (&json!("failed"), &json!("not sent: nothing is due on the invoice any more"))
    );
    assert!(smtp.received().is_empty(), "{:?}", smtp.received());
}
