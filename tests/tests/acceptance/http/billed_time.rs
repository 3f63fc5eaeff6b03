//! Tracked time to an invoice (`POST /v1/invoices/from-time`), and the lock on billed
//! time, through the real server.

use std::collections::BTreeSet;

use acceptance::{TestApp, create_key, create_team, create_user, spawn_app};
use accounts::{Permission, Role, Scope};
use reqwest::Method;
use serde_json::{Value, json};

use super::track::{PROJECTS, TIME, at, entry, expect, key_of, log, refused, with};

const FROM_TIME: &str = "/v1/invoices/from-time";
const INVOICES: &str = "/v1/invoices";

async fn rated(app: &TestApp, title: &str, rate: Option<f64>) -> Value {
    expect(app, &app.key, Method::POST, PROJECTS, Some(json!({"title": title, "rate": rate})), 201).await
}

/// Logs `seconds` of `task` on `date` (on `project` when given) as the app's owner.
async fn logged(app: &TestApp, date: &str, seconds: u64, task: &str, project: Option<&Value>) -> Value {
    let body = json!({"durationSeconds": seconds, "taskName": task, "date": date,
                      "projectId": project.map(|p| p["id"].clone())});
    log(app, &app.key, body).await
}

/// The invoice billing an entry now (`null` when none).
async fn billed_by(app: &TestApp, entry: &Value) -> Value {
    expect(app, &app.key, Method::GET, &at(&entry["id"], TIME), None, 200).await["invoiceId"].clone()
}

/// Each line item as `(description, quantity, unitPrice, amount)`, numbers as written.
fn lines(invoice: &Value) -> Vec<(String, String, String, String)> {
    let items = invoice["lineItems"].as_array().unwrap();
    let text = |item: &Value, field: &str| item[field].to_string();
    items
        .iter()
        .map(|item| {
            let description = item["description"].as_str().unwrap().to_owned();
            (description, text(item, "quantity"), text(item, "unitPrice"), text(item, "amount"))
        })
        .collect()
}

fn line(
    description: &str,
    quantity: &str,
    unit_price: &str,
    amount: &str,
) -> (String, String, String, String) {
    (description.to_owned(), quantity.to_owned(), unit_price.to_owned(), amount.to_owned())
}

fn november(client: &Value) -> Value {
    json!({"clientId": client["id"], "from": "2026-11-01", "to": "2026-11-30"})
}

#[tokio::test]
async fn a_month_of_time_becomes_one_invoice_of_its_billable_unbilled_entries() {
    let app = spawn_app().await;
    let website = rated(&app, "Website", Some(100.0)).await;
    let support = rated(&app, "support", Some(80.5)).await;
    let internal = rated(&app, "Internal", None).await;
    let billed = [
        logged(&app, "2026-11-01T00:00:00Z", 3600, "Design", Some(&website)).await,
        logged(&app, "2026-11-10", 1800, "Build", Some(&website)).await,
        logged(&app, "2026-11-28", 4500, "Build", Some(&website)).await,
        logged(&app, "2026-11-05", 1200, "Calls", Some(&support)).await,
        logged(&app, "2026-11-30T23:59:59Z", 600, "Calls", Some(&support)).await,
    ];
    let not_billable = log(
        &app,
        &app.key,
        with(entry("2026-11-12"), &json!({"projectId": website["id"], "billable": false})),
    )
    .await;
    let december = logged(&app, "2026-12-01T00:00:00Z", 3600, "Build", Some(&website)).await;
    let october = logged(&app, "2026-10-31T23:59:59Z", 3600, "Build", Some(&website)).await;
    let unrated = logged(&app, "2026-11-15", 3600, "Admin", Some(&internal)).await;
    let client = app.create_client(&app.key, "Buyer").await;

    // Every project by default: Internal's time has no rate, and no rate is given.
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, november(&client)).await;
    assert_eq!(message, "rate: is required: no hourly rate is set on Internal");

    let body = with(
        november(&client),
        &json!({"projectIds": [website["id"], support["id"]], "description": "November"}),
    );
    let response = app.request(Method::POST, FROM_TIME, &app.key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let invoice: Value = response.json().await.unwrap();
    assert_eq!(location, at(&invoice["id"], INVOICES));
    // One line per project, by title; hours = seconds ÷ 3600 to 6 places, at the project's rate.
    assert_eq!(
        lines(&invoice),
        [line("support", "0.5", "80.5", "40.25"), line("Website", "2.75", "100", "275.00")]
    );
    assert_eq!(
        (&invoice["subtotal"].to_string(), &invoice["total"].to_string(), &invoice["description"]),
        (&"315.25".to_owned(), &"315.25".to_owned(), &json!("November"))
    );
    // The answer is the invoice as GET shows it, with the entries it left out: none.
    let mut answered = invoice.clone();
    assert_eq!(answered.as_object_mut().unwrap().remove("skippedEntries"), Some(json!([])));
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await, answered);
    for entry in &billed {
        assert_eq!(billed_by(&app, entry).await, invoice["id"], "{entry}");
    }
    for entry in [&not_billable, &december, &october, &unrated] {
        assert_eq!(billed_by(&app, entry).await, Value::Null, "{entry}");
    }

    // Billed time is not billed again.
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, body).await;
    assert_eq!(message, "from: no billable time that is not billed yet in the range");
    // A rate for every line bills the rest, Internal's time included.
    let rest = with(november(&client), &json!({"rate": 50}));
    let second = expect(&app, &app.key, Method::POST, FROM_TIME, Some(rest), 201).await;
    assert_eq!(lines(&second), [line("Internal", "1", "50", "50.00")]);
    assert_eq!(billed_by(&app, &unrated).await, second["id"]);
}

#[tokio::test]
async fn a_preview_shows_the_invoice_that_would_be_made_and_writes_nothing() {
    let app = spawn_app().await;
    let website = rated(&app, "Website", Some(120.0)).await;
    let entries = [
        logged(&app, "2026-11-02", 5400, "Build", Some(&website)).await,
        logged(&app, "2026-11-03", 900, "Build", Some(&website)).await,
    ];
    // An inline client is matched or made as on invoice create; a preview makes none.
    let body = json!({"client": {"email": "buyer@example.com", "name": "Buyer"},
                      "from": "2026-11-01", "to": "2026-11-30", "preview": true, "taxPercentage": 20});
    let preview = expect(&app, &app.key, Method::POST, FROM_TIME, Some(body.clone()), 200).await;
    assert_eq!(lines(&preview), [line("Website", "1.75", "120", "210.00")]);
    assert_eq!((&preview["serial"], &preview["tax"].to_string()), (&json!("INV-0001"), &"42.00".to_owned()));
    for entry in &entries {
        assert_eq!(billed_by(&app, entry).await, Value::Null);
    }
    assert_eq!(app.get_json(INVOICES).await, json!([]));
    assert_eq!(app.get_json("/v1/invoices/clients").await, json!([]));

    let made =
        expect(&app, &app.key, Method::POST, FROM_TIME, Some(with(body, &json!({"preview": false}))), 201)
            .await;
    assert_eq!(lines(&made), lines(&preview));
    for field in ["serial", "subtotal", "tax", "total", "status", "currency"] {
        assert_eq!(made[field], preview[field], "{field}");
    }
    assert_eq!(app.get_json(INVOICES).await[0]["id"], made["id"]);
}

#[tokio::test]
async fn lines_group_by_project_task_or_entry_after_each_entry_is_rounded() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    logged(&app, "2026-11-02", 7 * 60, "Calls", None).await;
    logged(&app, "2026-11-03T08:00:00Z", 22 * 60, "Calls", None).await;
    logged(&app, "2026-11-03T09:00:00Z", 50 * 60, "Design", None).await;
    let preview = |extra: Value| {
        let body = with(november(&client), &with(json!({"rate": 60, "preview": true}), &extra));
        expect(&app, &app.key, Method::POST, FROM_TIME, Some(body), 200)
    };

    // 79 minutes on no project: 1.31666… hours, to 6 places; 60 × 1.316667 rounds to 79.00.
    let by_project = preview(json!({})).await;
    assert_eq!(lines(&by_project), [line("Time without a project", "1.316667", "60", "79.00")]);
    // Each entry rounded up to 15 minutes first: 15 + 30 for Calls, 60 for Design.
    let by_task = preview(json!({"groupBy": "task", "rounding": {"minutes": 15, "mode": "up"}})).await;
    assert_eq!(lines(&by_task), [line("Calls", "0.75", "60", "45.00"), line("Design", "1", "60", "60.00")]);
    // To the nearest 15 minutes, the 7-minute entry is nothing and makes no line.
    let by_entry = preview(json!({"groupBy": "entry", "rounding": {"minutes": 15, "mode": "nearest"}})).await;
    assert_eq!(
        lines(&by_entry),
        [line("2026-11-03 Calls", "0.25", "60", "15.00"), line("2026-11-03 Design", "0.75", "60", "45.00")]
    );
    let body = with(november(&client), &json!({"rate": 60, "rounding": {"minutes": 60, "mode": "down"}}));
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, body).await;
    assert_eq!(message, "rounding: leaves no time to bill");
}

#[tokio::test]
async fn bad_requests_name_their_field_and_bill_nothing() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let mine = rated(&app, "Mine", Some(10.0)).await;
    let entry = logged(&app, "2026-11-02", 3600, "Build", Some(&mine)).await;
    let other_team = create_team(&app.store, "Other").await;
    let other_user = create_user(&app.store, other_team, Role::Owner).await;
    let (_, other_key) = create_key(&app.store, other_team, other_user, Scope::Write, None).await;
    let theirs =
        expect(&app, &other_key, Method::POST, PROJECTS, Some(json!({"title": "Theirs", "rate": 1})), 201)
            .await;
    let their_entry = logged_as(&app, &other_key, &theirs).await;

    let base = november(&client);
    for (extra, error) in [
        (json!({"from": "2026-13-01"}), "from: must be a date YYYY-MM-DD".to_owned()),
        (json!({"to": "2026-10-31"}), "to: must not be before from".to_owned()),
        (
            json!({"projectIds": [theirs["id"]]}),
            format!("projectIds: {}: no such project in the team", theirs["id"].as_str().unwrap()),
        ),
        (json!({"projectIds": ["nope"]}), "projectIds: no such project in the team".to_owned()),
        (json!({"projectIds": []}), "projectIds: must name at least one project, or be left out".to_owned()),
        (json!({"groupBy": "client"}), "groupBy: must be one of project, task, entry".to_owned()),
        (
            json!({"rounding": {"minutes": 0, "mode": "up"}}),
            "rounding.minutes: must be from 1 to 60".to_owned(),
        ),
        (
            json!({"rounding": {"minutes": 15, "mode": "sideways"}}),
            "rounding.mode: must be one of up, down, nearest".to_owned(),
        ),
        (json!({"rate": -1}), "rate: must be at least 0".to_owned()),
        (json!({"clientId": null}), "clientId: is required when client is not given".to_owned()),
        (json!({"clientId": uuid::Uuid::now_v7()}), "clientId: no such client in the team".to_owned()),
        (json!({"dueDate": "2020-01-01"}), "dueDate: must not be before issueDate".to_owned()),
        (json!({"status": "PAID"}), "status: not accepted".to_owned()),
        (
            json!({"from": "2025-11-01", "to": "2026-11-02"}),
            "to: the period may be at most 366 days".to_owned(),
        ),
        (
            json!({"projectIds": vec![mine["id"].clone(); 1001]}),
            "projectIds: must name at most 1000 projects".to_owned(),
        ),
    ] {
        for preview in [false, true] {
            let body = with(base.clone(), &with(extra.clone(), &json!({"preview": preview})));
            let message = refused(&app, &app.key, Method::POST, FROM_TIME, body).await;
            assert!(message.starts_with(&error), "{extra}: {message}");
        }
    }
    let message =
        refused(&app, &app.key, Method::POST, FROM_TIME, with(base.clone(), &json!({"from": "2026-11-03"})))
            .await;
    assert_eq!(message, "from: no billable time that is not billed yet in the range");
    assert_eq!(app.get_json(INVOICES).await, json!([]));
    assert_eq!(billed_by(&app, &entry).await, Value::Null);

    // The other team's hour of the same day is neither billed nor counted.
    let invoice = expect(&app, &app.key, Method::POST, FROM_TIME, Some(base), 201).await;
    assert_eq!(lines(&invoice), [line("Mine", "1", "10", "10.00")]);
    let theirs_now = expect(&app, &other_key, Method::GET, &at(&their_entry["id"], TIME), None, 200).await;
    assert_eq!(theirs_now["invoiceId"], Value::Null);
}

async fn logged_as(app: &TestApp, key: &str, project: &Value) -> Value {
    log(app, key, with(entry("2026-11-02"), &json!({"projectId": project["id"]}))).await
}

#[tokio::test]
async fn billing_time_needs_invoices_write_and_track_read_and_members_bill_their_own() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let body = with(november(&client), &json!({"rate": 10}));
    let restricted = |permissions: &[Permission]| {
        let scope = Scope::Restricted(permissions.iter().copied().collect::<BTreeSet<_>>());
        create_key(&app.store, app.team, app.owner, scope, None)
    };
    let (_, invoices_only) = restricted(&[Permission::InvoicesWrite]).await;
    let (_, track_only) = restricted(&[Permission::TrackWrite, Permission::InvoicesRead]).await;
    let (_, both) = restricted(&[Permission::InvoicesWrite, Permission::TrackRead]).await;
    for (key, lacking) in [(&invoices_only, "track:read"), (&track_only, "invoices:write")] {
        let answer = expect(&app, key, Method::POST, FROM_TIME, Some(body.clone()), 403).await;
        assert_eq!(answer["error"], format!("this API key lacks the {lacking} permission"));
    }

    let owners = log(&app, &app.key, entry("2026-11-02")).await;
    let (_, member) = key_of(&app, Role::Member).await;
    let members = log(&app, &member, entry("2026-11-03")).await;
    let billed = expect(&app, &member, Method::POST, FROM_TIME, Some(body.clone()), 201).await;
    assert_eq!(lines(&billed), [line("Time without a project", "1", "10", "10.00")]);
    assert_eq!(
        (billed_by(&app, &members).await, billed_by(&app, &owners).await),
        (billed["id"].clone(), Value::Null)
    );
    let rest = expect(&app, &both, Method::POST, FROM_TIME, Some(body), 201).await;
    assert_eq!(billed_by(&app, &owners).await, rest["id"]);
}

#[tokio::test]
async fn racing_requests_bill_each_entry_once() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let mut entries = Vec::new();
    for day in 1..=20 {
        entries.push(logged(&app, &format!("2026-11-{day:02}"), 1800, "Build", None).await);
    }
    let body = with(november(&client), &json!({"rate": 100}));
    let racers: Vec<_> = (0..6)
        .map(|_| tokio::spawn(app.request(Method::POST, FROM_TIME, &app.key).json(&body).send()))
        .collect();
    let mut answers = Vec::new();
    for racer in racers {
        let response = racer.await.unwrap().unwrap();
        answers.push((response.status(), response.json::<Value>().await.unwrap()));
    }
    let made: Vec<&Value> =
        answers.iter().filter(|(status, _)| status.as_u16() == 201).map(|(_, a)| a).collect();
    assert_eq!(made.len(), 1, "{answers:?}");
    for (status, answer) in &answers {
        assert!([201, 400, 409].contains(&status.as_u16()), "{status}: {answer}");
    }
    assert_eq!(lines(made[0]), [line("Time without a project", "10", "100", "1000.00")]);
    for entry in &entries {
        assert_eq!(billed_by(&app, entry).await, made[0]["id"]);
    }
    // A refused racer took no serial: the next invoice is the second.
    let next = app.create_client(&app.key, "Next").await;
    let invoice =
        json!({"clientId": next["id"], "lineItems": [{"description": "x", "unitPrice": 1, "quantity": 1}]});
    assert_eq!(
        expect(&app, &app.key, Method::POST, INVOICES, Some(invoice), 201).await["serial"],
        "INV-0002"
    );
}

#[tokio::test]
async fn billed_time_is_locked_until_its_invoice_is_deleted() {
    let app = spawn_app().await;
    let logged = log(&app, &app.key, entry("2026-11-20")).await;
    let client = app.create_client(&app.key, "Buyer").await;
    let invoice = expect(
        &app,
        &app.key,
        Method::POST,
        FROM_TIME,
        Some(with(november(&client), &json!({"rate": 100}))),
        201,
    )
    .await;

    let location = at(&logged["id"], TIME);
    assert_eq!(billed_by(&app, &logged).await, invoice["id"]);
    let locked = "invoiceId: the entry is billed and its time is locked; deleting the invoice releases it";
    let patched =
        expect(&app, &app.key, Method::PATCH, &location, Some(json!({"durationSeconds": 60})), 409).await;
    assert_eq!(patched["error"], locked);
    assert_eq!(expect(&app, &app.key, Method::DELETE, &location, None, 409).await["error"], locked);
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await["durationSeconds"], 3600);

    expect(&app, &app.key, Method::DELETE, &at(&invoice["id"], INVOICES), None, 200).await;
    assert_eq!(billed_by(&app, &logged).await, Value::Null);
    let patched =
        expect(&app, &app.key, Method::PATCH, &location, Some(json!({"durationSeconds": 60})), 200).await;
    assert_eq!(patched["durationSeconds"], 60);
}

/// The invoice id is the PDF's only credential: a key that may read time but not invoices
/// learns that an entry is billed, never by which invoice, wherever it reads the entry.
#[tokio::test]
async fn only_a_key_that_may_read_invoices_sees_which_invoice_billed_time() {
    let app = spawn_app().await;
    let logged = log(&app, &app.key, entry("2026-11-20")).await;
    let unbilled = log(&app, &app.key, entry("2026-11-21")).await;
    assert_eq!((&logged["billed"], &logged["invoiceId"]), (&json!(false), &Value::Null));
    let client = app.create_client(&app.key, "Buyer").await;
    let body = with(november(&client), &json!({"rate": 100, "to": "2026-11-20"}));
    let invoice = expect(&app, &app.key, Method::POST, FROM_TIME, Some(body), 201).await;
    let scope = Scope::Restricted(BTreeSet::from([Permission::TrackWrite]));
    let (_, track_only) = create_key(&app.store, app.team, app.owner, scope, None).await;

    let location = at(&logged["id"], TIME);
    let month = format!("{TIME}?from=2026-11-01&to=2026-11-30");
    // The full key first, so that a listing it had rendered would be there to leak.
    for _ in 0..2 {
        let seen = expect(&app, &app.key, Method::GET, &location, None, 200).await;
        assert_eq!((&seen["billed"], &seen["invoiceId"]), (&json!(true), &invoice["id"]));
        let listed = expect(&app, &app.key, Method::GET, &month, None, 200).await;
        assert_eq!(listed[0]["invoiceId"], invoice["id"]);
    }
    let seen = expect(&app, &track_only, Method::GET, &location, None, 200).await;
    assert_eq!((&seen["billed"], &seen["invoiceId"]), (&json!(true), &Value::Null));
    let listed = expect(&app, &track_only, Method::GET, &month, None, 200).await;
    let shown: Vec<(&Value, &Value)> =
        listed.as_array().unwrap().iter().map(|e| (&e["billed"], &e["invoiceId"])).collect();
    assert_eq!(shown, [(&json!(true), &Value::Null), (&json!(false), &Value::Null)]);
    let changed = expect(
        &app,
        &track_only,
        Method::PATCH,
        &at(&unbilled["id"], TIME),
        Some(json!({"taskName": "Renamed"})),
        200,
    )
    .await;
    assert_eq!((&changed["billed"], &changed["invoiceId"]), (&json!(false), &Value::Null));

    let csv_of = |key: &str| app.request(Method::GET, &month, key).header("accept", "text/csv").send();
    let csv = csv_of(&track_only).await.unwrap().text().await.unwrap();
    let invoice_id = invoice["id"].as_str().unwrap();
    assert!(!csv.contains(invoice_id), "{csv}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let billed_column = header.iter().position(|h| *h == "billed").expect("a billed column");
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|row| row.split(',').collect()).collect();
    assert_eq!(rows[0][billed_column], "true");
    let full = csv_of(&app.key).await.unwrap().text().await.unwrap();
    assert!(full.contains(invoice_id), "{full}");

    // The agent's tools read entries through the same rule (here over /mcp).
    let answer = app.call_tool(&track_only, "get_time_entry", json!({"id": logged["id"]})).await;
    let shown: Value = serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!((&shown["billed"], &shown["invoiceId"]), (&json!(true), &Value::Null), "{answer}");
}

/// An entry that cannot be billed does not hold up the rest: one of the longest duration
/// a time entry takes is left out, named in `skippedEntries` and left unbilled, and the
/// invoice is made of the rest. Each line's quantity is its exact hours to 6 decimals and
/// its amount `unitPrice × quantity` rounded once, whatever the grouping.
#[tokio::test]
async fn time_that_cannot_be_billed_is_left_out_and_named() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Zoë").await;
    let site = rated(&app, "Website", Some(95.5)).await;
    let longest = logged(&app, "2026-11-02", 9_007_199_254_740_991, "Forever", Some(&site)).await;
    let seconds = logged(&app, "2026-11-03", 7, "Call", Some(&site)).await;
    let more = logged(&app, "2026-11-04", 3601, "Build", Some(&site)).await;
    let preview = json!({"preview": true});
    let preview =
        expect(&app, &app.key, Method::POST, FROM_TIME, Some(with(november(&client), &preview)), 200).await;
    // A line per entry: 7 seconds are 0.001944 hours, at 100 0.19; 3601 are 1.000278, 100.03.
    let by_entry = json!({"groupBy": "entry", "preview": true, "rate": 100});
    let each =
        expect(&app, &app.key, Method::POST, FROM_TIME, Some(with(november(&client), &by_entry)), 200).await;
    assert_eq!(
        lines(&each),
        [
            line("2026-11-03 Call", "0.001944", "100", "0.19"),
            line("2026-11-04 Build", "1.000278", "100", "100.03")
        ]
    );
    assert_eq!(each["skippedEntries"][0]["id"], longest["id"]);
    let made = expect(&app, &app.key, Method::POST, FROM_TIME, Some(november(&client)), 201).await;
    for answer in [&preview, &made] {
        assert_eq!(
            answer["skippedEntries"],
            json!([{"id": longest["id"], "reason":
                "its 2501999792983.608611 hours are more than an invoice line holds (at most 1000000000 hours)"}])
        );
    }
    // 3608 seconds: 1.002222 hours, at 95.5: 95.712201 → 95.71.
    assert_eq!(lines(&made), [line("Website", "1.002222", "95.5", "95.71")]);
    assert_eq!(billed_by(&app, &longest).await, Value::Null, "left unbilled");
    for billed in [&seconds, &more] {
        assert_eq!(billed_by(&app, billed).await, made["id"]);
    }
    // Alone, it makes nothing, saying why.
    let alone = json!({"clientId": client["id"], "from": "2026-11-02", "to": "2026-11-02"});
    let error = refused(&app, &app.key, Method::POST, FROM_TIME, alone).await;
    assert_eq!(
        error,
        "from: none of the 1 entries to bill can be billed: each is more hours than an invoice line holds (at most 1000000000 hours); correct their durations"
    );
}

/// A project of `client`'s work, at `rate` an hour.
async fn clients_project(app: &TestApp, title: &str, client: &Value) -> Value {
    let body = json!({"title": title, "rate": 100, "clientId": client["id"]});
    expect(app, &app.key, Method::POST, PROJECTS, Some(body), 201).await
}

/// The line descriptions of an invoice.
fn described(invoice: &Value) -> Vec<String> {
    lines(invoice).into_iter().map(|(description, ..)| description).collect()
}

#[tokio::test]
async fn a_client_is_billed_for_its_own_projects_and_those_of_no_client_never_for_another_s() {
    let app = spawn_app().await;
    let (acme, globex) =
        (app.create_client(&app.key, "Acme").await, app.create_client(&app.key, "Globex").await);
    let acme_site = clients_project(&app, "Acme site", &acme).await;
    let globex_app = clients_project(&app, "Globex app", &globex).await;
    let shared = rated(&app, "Shared", Some(100.0)).await;
    assert_eq!(acme_site["clientId"], acme["id"]);
    assert_eq!(shared["clientId"], Value::Null);
    let globex_time = logged(&app, "2026-11-03", 3600, "Build", Some(&globex_app)).await;
    logged(&app, "2026-11-04", 3600, "Build", Some(&acme_site)).await;
    logged(&app, "2026-11-05", 3600, "Build", Some(&shared)).await;
    logged(&app, "2026-11-06", 3600, "Admin", None).await;

    // Naming another client's project is refused, and bills nothing.
    let named = with(november(&acme), &json!({"projectIds": [globex_app["id"]], "rate": 50}));
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, named).await;
    assert!(
        message.starts_with(&format!(
            "projectIds: {}: the project is another client's",
            globex_app["id"].as_str().unwrap()
        )),
        "{message}"
    );
    // Only the client's own projects: neither shared time nor time on no project.
    let own = with(november(&acme), &json!({"clientProjectsOnly": true, "preview": true}));
    let preview = expect(&app, &app.key, Method::POST, FROM_TIME, Some(own), 200).await;
    assert_eq!(described(&preview), ["Acme site"]);
    let shared_only =
        with(november(&acme), &json!({"projectIds": [shared["id"]], "clientProjectsOnly": true}));
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, shared_only).await;
    assert!(message.contains("no client's while clientProjectsOnly is true"), "{message}");

    // By default: its own, the shared project's and time on no project; Globex's stays unbilled.
    let invoice = expect(
        &app,
        &app.key,
        Method::POST,
        FROM_TIME,
        Some(with(november(&acme), &json!({"rate": 100}))),
        201,
    )
    .await;
    assert_eq!(described(&invoice), ["Acme site", "Shared", "Time without a project"]);
    // It states the days it bills as its service period.
    assert_eq!(invoice["servicePeriod"], json!({"from": "2026-11-01", "to": "2026-11-30"}));
    assert_eq!(billed_by(&app, &globex_time).await, Value::Null);
    // A client given inline has no projects yet: nothing of Globex's either.
    let inline = json!({"client": {"email": "new@example.com", "name": "New"}, "from": "2026-11-01", "to": "2026-11-30"});
    let message = refused(&app, &app.key, Method::POST, FROM_TIME, inline).await;
    assert_eq!(message, "from: no billable time that is not billed yet in the range");
    let globex_invoice = expect(&app, &app.key, Method::POST, FROM_TIME, Some(november(&globex)), 201).await;
    assert_eq!(described(&globex_invoice), ["Globex app"]);
}

#[tokio::test]
async fn a_project_s_client_is_one_of_the_team_s_and_keeps_its_client() {
    let app = spawn_app().await;
    let acme = app.create_client(&app.key, "Acme").await;
    let project = clients_project(&app, "Acme site", &acme).await;
    let listed = expect(
        &app,
        &app.key,
        Method::GET,
        &format!("{PROJECTS}?clientId={}", acme["id"].as_str().unwrap()),
        None,
        200,
    )
    .await;
    assert_eq!(listed.as_array().unwrap().iter().map(|p| &p["id"]).collect::<Vec<_>>(), [&project["id"]]);
    rated(&app, "Shared", None).await;
    assert_eq!(expect(&app, &app.key, Method::GET, PROJECTS, None, 200).await.as_array().unwrap().len(), 2);

    // Another team's client is as unknown as none.
    let other = create_team(&app.store, "Other").await;
    let owner = create_user(&app.store, other, Role::Owner).await;
    let (_, their_key) = create_key(&app.store, other, owner, Scope::Write, None).await;
    let theirs = app.create_client(&their_key, "Theirs").await;
    let stray = json!({"title": "Stray", "clientId": theirs["id"]});
    assert_eq!(
        refused(&app, &app.key, Method::POST, PROJECTS, stray).await,
        "clientId: no such client in the team"
    );
    let update = json!({"id": project["id"], "data": {"clientId": theirs["id"]}});
    let path = at(&project["id"], PROJECTS);
    assert_eq!(
        refused(&app, &app.key, Method::PUT, &path, update).await,
        "data.clientId: no such client in the team"
    );

    // A client with projects is kept until they are no client's.
    let client_path = at(&acme["id"], "/v1/invoices/clients");
    let answer = expect(&app, &app.key, Method::DELETE, &client_path, None, 409).await;
    let message = answer["error"].as_str().unwrap();
    assert_eq!(
        message,
        "client has projects and cannot be deleted: give each another client, or none, first"
    );
    let unfiled = json!({"id": project["id"], "data": {"clientId": null}});
    let changed = expect(&app, &app.key, Method::PUT, &path, Some(unfiled), 200).await;
    assert_eq!(changed["clientId"], Value::Null);
    expect(&app, &app.key, Method::DELETE, &client_path, None, 200).await;
}
