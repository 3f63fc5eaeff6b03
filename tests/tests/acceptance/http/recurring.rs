//! Recurring invoices through the real server, driven by job passes on the days the tests
//! choose: a year of passes (two racing each day) makes exactly the invoices each schedule
//! names, with consecutive serials and no flood after a gap; a pause makes nothing and
//! resuming does not backfill; the period's unbilled time is billed once; every refusal
//! names its field.

use std::collections::BTreeMap;
use std::sync::Arc;

use acceptance::outside::SmtpServer;
use acceptance::{
    Backend, TestApp, TestDb, create_key, create_user, mailing_config, spawn_app, spawn_app_on, start_on,
};
use chrono::{DateTime, Days, NaiveDate, Utc};
use kernel::{FixedClock, Id};
use reqwest::Method;
use serde_json::{Value, json};

use super::track::{PROJECTS, expect, log, refused};

const RECURRING: &str = "/v1/recurring-invoices";

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

/// 06:00 UTC on `day`, when the tests run each day's pass.
fn morning(day: NaiveDate) -> DateTime<Utc> {
    day.and_hms_opt(6, 0, 0).unwrap().and_utc()
}

async fn make(app: &TestApp, body: Value) -> Value {
    expect(app, &app.key, Method::POST, RECURRING, Some(body), 201).await
}

async fn act(app: &TestApp, recurring: &Value, action: &str) -> Value {
    let path = format!("{RECURRING}/{}/{action}", recurring["id"].as_str().unwrap());
    expect(app, &app.key, Method::POST, &path, None, 200).await
}

async fn get(app: &TestApp, recurring: &Value, tail: &str) -> Value {
    app.get_json(&format!("{RECURRING}/{}{tail}", recurring["id"].as_str().unwrap())).await
}

fn retainer(client: &Value) -> Value {
    json!({
        "clientId": client["id"],
        "template": {"description": "Retainer", "lineItems": [{"description": "Retainer", "unitPrice": 1500, "quantity": 1}],
                     "taxPercentage": 19, "dueDays": 14},
        "schedule": {"frequency": "monthly", "dayOfMonth": -1},
        "startsOn": "2027-01-01", "count": 12,
        "includeUnbilledTime": {"groupBy": "project"}
    })
}

fn plain(client: &Value, schedule: &Value) -> Value {
    json!({
        "clientId": client["id"],
        "template": {"lineItems": [{"description": "Hosting", "unitPrice": 200, "quantity": 1}]},
        "schedule": schedule.clone(), "startsOn": "2027-01-01"
    })
}

/// Each recurring invoice's invoices as `(issue day, sequence)`, by recurring invoice id,
/// and every serial.
/// Each recurring invoice's invoices as `(issue day, sequence)`, by its id.
type ByRecurring = BTreeMap<String, Vec<(String, u64)>>;

fn by_recurring(invoices: &[Value]) -> (ByRecurring, Vec<String>) {
    let mut made: ByRecurring = BTreeMap::new();
    for invoice in invoices {
        let id = invoice["recurringInvoiceId"].as_str().unwrap().to_owned();
        let issued = invoice["issueDate"].as_str().unwrap()[..10].to_owned();
        made.entry(id).or_default().push((issued, invoice["recurringSequence"].as_u64().unwrap()));
    }
    for invoices in made.values_mut() {
        invoices.sort();
    }
    let mut serials: Vec<String> =
        invoices.iter().map(|i| i["serial"].as_str().unwrap().to_owned()).collect();
    serials.sort();
    (made, serials)
}

fn expected(days: &[&str]) -> Vec<(String, u64)> {
    days.iter().zip(1..).map(|(day, sequence)| ((*day).to_owned(), sequence)).collect()
}

#[tokio::test]
async fn a_year_of_racing_passes_makes_exactly_the_invoices_each_schedule_names() {
    let clock = Arc::new(FixedClock::new(morning(day("2026-12-15"))));
    let app = spawn_app_on(clock.clone()).await;
    let client = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    let website =
        expect(&app, &app.key, Method::POST, PROJECTS, Some(json!({"title": "Website", "rate": 100})), 201)
            .await;
    let monthly = make(&app, retainer(&client)).await;
    assert_eq!((&monthly["status"], &monthly["nextRunOn"]), (&json!("active"), &json!("2027-01-31")));
    assert_eq!(monthly["schedule"]["rrule"], "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1;COUNT=12");
    let fortnightly = make(
        &app,
        with_fields(
            plain(&client, &json!({"frequency": "weekly", "interval": 2, "weekday": "friday"})),
            &json!({"endsOn": "2027-06-30"}),
        ),
    )
    .await;
    let yearly =
        make(&app, plain(&client, &json!({"frequency": "yearly", "month": 2, "dayOfMonth": -1}))).await;
    let mid_month = make(&app, plain(&client, &json!({"frequency": "monthly", "dayOfMonth": 15}))).await;
    let preview = get(&app, &monthly, "/preview?count=3").await;
    assert_eq!(
        preview,
        json!([
            {"sequence": 1, "periodStart": "2027-01-31", "dueDate": "2027-02-14", "timeFrom": "2026-12-31", "timeTo": "2027-01-30"},
            {"sequence": 2, "periodStart": "2027-02-28", "dueDate": "2027-03-14", "timeFrom": "2027-01-31", "timeTo": "2027-02-27"},
            {"sequence": 3, "periodStart": "2027-03-31", "dueDate": "2027-04-14", "timeFrom": "2027-02-28", "timeTo": "2027-03-30"},
        ])
    );
    let entries = drive_the_year(&app, &clock, &website, &mid_month).await;
    let invoices = app.get_json("/v1/invoices").await;
    let invoices = invoices.as_array().unwrap();
    let (made, serials) = by_recurring(invoices);
    let of = |recurring: &Value| made.get(recurring["id"].as_str().unwrap()).cloned().unwrap_or_default();
    // The gap: August and September are recorded skipped, October's is made on 1 November.
    assert_eq!(
        of(&monthly),
        expected(&[
            "2027-01-31",
            "2027-02-28",
            "2027-03-31",
            "2027-04-30",
            "2027-05-31",
            "2027-06-30",
            "2027-07-31",
            "2027-10-31",
            "2027-11-30",
            "2027-12-31"
        ])
    );
    assert_eq!(
        of(&fortnightly),
        expected(&[
            "2027-01-01",
            "2027-01-15",
            "2027-01-29",
            "2027-02-12",
            "2027-02-26",
            "2027-03-12",
            "2027-03-26",
            "2027-04-09",
            "2027-04-23",
            "2027-05-07",
            "2027-05-21",
            "2027-06-04",
            "2027-06-18"
        ])
    );
    assert_eq!(of(&yearly), expected(&["2027-02-28"]));
    assert_eq!(
        of(&mid_month),
        expected(&[
            "2027-01-15",
            "2027-02-15",
            "2027-03-15",
            "2027-07-15",
            "2027-10-15",
            "2027-11-15",
            "2027-12-15"
        ])
    );
    let count = 10 + 13 + 1 + 7;
    assert_eq!(invoices.len(), count, "one invoice per period, whoever won each race");
    let consecutive: Vec<String> = (1..=count).map(|n| format!("INV-{n:04}")).collect();
    assert_eq!(serials, consecutive);
    // Where each stands.
    let state = |recurring: Value| {
        (recurring["status"].clone(), recurring["nextRunOn"].clone(), recurring["generatedCount"].clone())
    };
    assert_eq!(state(get(&app, &monthly, "").await), (json!("completed"), Value::Null, json!(10)));
    assert_eq!(state(get(&app, &fortnightly, "").await), (json!("completed"), Value::Null, json!(13)));
    assert_eq!(state(get(&app, &yearly, "").await), (json!("active"), json!("2028-02-29"), json!(1)));
    assert_eq!(state(get(&app, &mid_month, "").await), (json!("active"), json!("2028-01-15"), json!(7)));
    check_the_runs(&app, &monthly).await;
    check_the_unbilled_time(&app, invoices, &monthly, &entries).await;
}

/// A pass (two at once) on each day of 2027 at 06:00 but from 1 August to 31 October;
/// `mid_month` paused on 1 April and resumed on 1 July; time logged on `website` on 10
/// January (billed by January's period), 31 January and 27 February (February's). The
/// time entries logged.
async fn drive_the_year(app: &TestApp, clock: &FixedClock, website: &Value, mid_month: &Value) -> Vec<Value> {
    let gap = day("2027-08-01")..=day("2027-10-31");
    let mut entries = Vec::new();
    let mut today = day("2027-01-01");
    while today <= day("2027-12-31") {
        clock.advance(morning(today) - clock_now(clock));
        match today.to_string().as_str() {
            "2027-04-01" => assert_eq!(act(app, mid_month, "pause").await["status"], "paused"),
            "2027-07-01" => {
                let resumed = act(app, mid_month, "resume").await;
                assert_eq!(resumed["nextRunOn"], "2027-07-15", "no backfill of the paused months");
            }
            _ => {}
        }
        if !gap.contains(&today) {
            // Two replicas' passes at once.
            tokio::join!(app.run_jobs_at(morning(today)), app.run_jobs_at(morning(today)));
        }
        // Time of January (billed by January's invoice), of the 31st (February's), and
        // time that is not billable.
        for (date, seconds) in [("2027-01-10", 7200), ("2027-01-31", 3600), ("2027-02-27", 1800)] {
            if today.to_string() == date {
                let body = json!({"durationSeconds": seconds, "taskName": "Build", "date": date, "projectId": website["id"]});
                entries.push(log(app, &app.key, body).await);
            }
        }
        today = today.checked_add_days(Days::new(1)).unwrap();
    }
    entries
}

/// January's time in January's invoice of `monthly`, the 31st's and the 27th's in
/// February's, each entry billed once.
async fn check_the_unbilled_time(app: &TestApp, invoices: &[Value], monthly: &Value, entries: &[Value]) {
    let january = invoices
        .iter()
        .find(|i| i["recurringInvoiceId"] == monthly["id"] && i["recurringSequence"] == 1)
        .unwrap();
    let february = invoices
        .iter()
        .find(|i| i["recurringInvoiceId"] == monthly["id"] && i["recurringSequence"] == 2)
        .unwrap();
    let time_line = |invoice: &Value| {
        let items = invoice["lineItems"].as_array().unwrap();
        assert_eq!((&items[0]["unitCode"], &items[1]["unitCode"]), (&json!("C62"), &json!("HUR")));
        (items.len(), items[1]["description"].clone(), items[1]["quantity"].to_string())
    };
    assert_eq!(time_line(january), (2, json!("Website"), "2".to_owned()));
    assert_eq!(time_line(february), (2, json!("Website"), "1.5".to_owned()));
    assert_eq!(january["total"].to_string(), "2023.00", "(1500 + 200) and 19%");
    assert_eq!(january["dueDate"].as_str().unwrap()[..10], *"2027-02-14");
    let billed: Vec<Value> = entries.iter().map(|e| e["id"].clone()).collect();
    for (entry, invoice) in billed.iter().zip([&january["id"], &february["id"], &february["id"]]) {
        let read = app.get_json(&format!("/v1/track/time/{}", entry.as_str().unwrap())).await;
        assert_eq!(&read["invoiceId"], invoice);
    }
}

/// The runs of `monthly`: twelve periods, two of them skipped in the gap; paged.
async fn check_the_runs(app: &TestApp, monthly: &Value) {
    let runs = get(app, monthly, "/runs").await;
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 12);
    let skipped: Vec<&Value> =
        runs.iter().filter(|run| run["status"] == "skipped").map(|run| &run["periodStart"]).collect();
    assert_eq!(skipped, [&json!("2027-09-30"), &json!("2027-08-31")]);
    assert!(runs.iter().filter(|run| run["status"] == "generated").all(|run| run["invoiceId"].is_string()));
    let paged = app
        .request(
            Method::GET,
            &format!("{RECURRING}/{}/runs?limit=5", monthly["id"].as_str().unwrap()),
            &app.key,
        )
        .send()
        .await
        .unwrap();
    assert!(paged.headers().get("link").is_some(), "a page with more after it links the next");
}

fn clock_now(clock: &FixedClock) -> DateTime<Utc> {
    kernel::Clock::now(clock)
}

fn with_fields(mut base: Value, extra: &Value) -> Value {
    for (field, value) in extra.as_object().unwrap() {
        base[field] = value.clone();
    }
    base
}

#[tokio::test]
async fn refusals_name_their_field() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let base = retainer(&client);
    let cases = [
        (json!({"clientId": "0193a5c4-7d2e-7c41-9a3b-5f1e2d3c4b5a"}), "clientId: no such client in the team"),
        (json!({"schedule": {"frequency": "daily"}}), "schedule.frequency:"),
        (
            json!({"schedule": {"frequency": "monthly"}}),
            "schedule.dayOfMonth: a monthly or yearly schedule needs the day of the month",
        ),
        (
            json!({"schedule": {"frequency": "monthly", "dayOfMonth": 29}}),
            "schedule.dayOfMonth: must be a whole number from -1 to 28",
        ),
        (json!({"schedule": {"frequency": "weekly", "dayOfMonth": 1}}), "schedule.dayOfMonth:"),
        (
            json!({"schedule": {"frequency": "monthly", "dayOfMonth": 1, "interval": 0}}),
            "schedule.interval: must be a whole number from 1 to 100",
        ),
        (
            json!({"schedule": {"frequency": "monthly", "dayOfMonth": 1, "month": 3}}),
            "schedule.month: a month is for yearly schedules",
        ),
        (
            json!({"endsOn": "2027-06-30"}),
            "count: a schedule ends on a day or after a count of periods, not both; give endsOn or count",
        ),
        (json!({"count": 0}), "count: must be a whole number from 1 to 1000"),
        (json!({"startsOn": "2027-02-30"}), "startsOn:"),
        (json!({"mode": "fax"}), "mode:"),
        (
            json!({"template": {"lineItems": []}, "includeUnbilledTime": null}),
            "template.lineItems: a recurring invoice bills at least one line item, or the period's unbilled time; give a line item, or includeUnbilledTime",
        ),
        (
            json!({"template": {"lineItems": [{"description": "A", "unitPrice": -1, "quantity": 1}]}}),
            "template.lineItems[0].unitPrice:",
        ),
        (
            json!({"template": {"lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1}], "dueDays": 400}}),
            "template.dueDays: must be a whole number from 0 to 365",
        ),
        (json!({"includeUnbilledTime": {"groupBy": "client"}}), "includeUnbilledTime.groupBy:"),
        (
            json!({"includeUnbilledTime": {"projectIds": ["0193a5c4-7d2e-7c41-9a3b-5f1e2d3c4b5a"]}}),
            "includeUnbilledTime.projectIds: 0193a5c4-7d2e-7c41-9a3b-5f1e2d3c4b5a: no such project in the team",
        ),
        (
            json!({"includeUnbilledTime": {"rounding": {"minutes": 0, "mode": "up"}}}),
            "includeUnbilledTime.rounding.minutes:",
        ),
        (
            json!({"startsOn": "2020-01-01", "count": 3}),
            "startsOn: the schedule has no day left from today on",
        ),
    ];
    for (change, error) in cases {
        let mut body = base.clone();
        for (field, value) in change.as_object().unwrap() {
            if value.is_null() {
                body.as_object_mut().unwrap().remove(field);
            } else {
                body[field] = value.clone();
            }
        }
        let message = refused(&app, &app.key, Method::POST, RECURRING, body).await;
        assert!(message.starts_with(error), "{change}: {message}");
    }
    let answer = expect(
        &app,
        &app.key,
        Method::POST,
        RECURRING,
        Some(with_fields(base.clone(), &json!({"mode": "issue_and_send"}))),
        409,
    )
    .await;
    assert!(
        answer["error"].as_str().unwrap().starts_with("mode: issue_and_send e-mails each invoice"),
        "{answer}"
    );
    // Pause, resume and a completed one.
    let made = make(&app, base).await;
    assert_eq!(act(&app, &made, "pause").await["nextRunOn"], Value::Null);
    assert_eq!(act(&app, &made, "pause").await["status"], "paused", "pausing twice changes nothing");
    assert_eq!(act(&app, &made, "resume").await["status"], "active");
    let id = made["id"].as_str().unwrap();
    let patched = expect(&app, &app.key, Method::PATCH, &format!("{RECURRING}/{id}"),
        Some(json!({"template": {"lineItems": [{"description": "Retainer", "unitPrice": 1650, "quantity": 1}]}, "includeUnbilledTime": null})), 200).await;
    assert_eq!(
        (patched["template"]["lineItems"][0]["unitPrice"].to_string(), &patched["includeUnbilledTime"]),
        ("1650".to_owned(), &Value::Null)
    );
    let message =
        refused(&app, &app.key, Method::PATCH, &format!("{RECURRING}/{id}"), json!({"schedule": null})).await;
    assert!(message.starts_with("schedule:"), "{message}");
    // Another team sees nothing of it.
    let listed = app.get_json(RECURRING).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    expect(&app, &app.key, Method::DELETE, &format!("{RECURRING}/{id}"), None, 200).await;
    expect(&app, &app.key, Method::GET, &format!("{RECURRING}/{id}"), None, 404).await;
}

#[tokio::test]
async fn issue_and_send_mails_each_invoice_and_its_event_names_the_recurring_invoice() {
    let smtp = SmtpServer::start();
    let clock = Arc::new(FixedClock::new(morning(day("2026-12-15"))));
    let db = TestDb::new(Backend::from_env()).await;
    let store = db.open().await;
    let app = start_on(mailing_config(&smtp), db, store, clock.clone()).await;
    let client = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    let body = with_fields(
        plain(&client, &json!({"frequency": "monthly", "dayOfMonth": 1})),
        &json!({"mode": "issue_and_send", "count": 2}),
    );
    let recurring = make(&app, body).await;
    let first = day("2027-01-01");
    clock.advance(morning(first) - clock_now(&clock));
    let report = app.run_jobs_at(morning(first)).await;
    assert_eq!((report.generated, report.done), (1, 1), "made, and its mail sent: {report:?}");
    let [mail] = smtp.received().try_into().unwrap();
    assert_eq!(mail["rcpt_tos"], json!(["billing@example.com"]));
    assert_eq!(mail["subject"], "Invoice INV-0001");
    assert_eq!(mail["attachments"][0]["filename"], "INV-0001.pdf");
    let invoice = &app.get_json("/v1/invoices").await[0];
    assert_eq!(
        (&invoice["recurringInvoiceId"], &invoice["recurringSequence"]),
        (&recurring["id"], &json!(1))
    );
    assert!(invoice["sentAt"].is_string(), "{invoice}");
    let events = app.store.notify().list_events(app.team, 100).await.unwrap();
    let created = events.iter().find(|e| e.kind == notify::EventType::InvoiceCreated).unwrap();
    let data: Value = serde_json::from_str(&created.data).unwrap();
    assert_eq!(data["recurringInvoiceId"], recurring["id"]);
    assert_eq!(app.run_jobs_at(morning(first)).await.generated, 0, "once");
}

#[tokio::test]
async fn a_template_keeps_its_vat_category() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let export = with_fields(
        retainer(&client),
        &json!({"template": {"lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1}],
                             "vatCategory": "G", "vatExemptionReason": "Export outside the EU"}}),
    );
    let exported = make(&app, export).await;
    assert_eq!(
        (&exported["template"]["vatCategory"], &exported["template"]["vatExemptionReason"]),
        (&json!("G"), &json!("Export outside the EU"))
    );
    expect(
        &app,
        &app.key,
        Method::DELETE,
        &format!("{RECURRING}/{}", exported["id"].as_str().unwrap()),
        None,
        200,
    )
    .await;
    for (change, error) in [
        (
            json!({"template": {"lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1}], "vatCategory": "E"}}),
            "template.vatExemptionReason: is required with vatCategory E: say why no VAT is charged",
        ),
        (
            json!({"template": {"lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1}], "taxPercentage": 19,
                                "vatCategory": "AE", "vatExemptionReason": "Reverse charge"}}),
            "template.taxPercentage: vatCategory AE charges no VAT: the tax must be 0 (taxPercentage 0 and no tax)",
        ),
    ] {
        let message =
            refused(&app, &app.key, Method::POST, RECURRING, with_fields(retainer(&client), &change)).await;
        assert_eq!(message, error, "{change}");
    }
}

/// A schedule ends in the year 9999: however large its interval or count, no date an
/// answer carries leaves the years 0001 to 9999 (a due date past it is its last day).
#[tokio::test]
async fn schedules_end_in_the_year_9999() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    let mut body =
        plain(&client, &json!({"frequency": "yearly", "interval": 100, "month": 2, "dayOfMonth": -1}));
    body["count"] = json!(1000);
    body["startsOn"] = json!("2028-02-01");
    body["template"]["dueDays"] = json!(365);
    let leap_days = make(&app, body).await;
    let preview = get(&app, &leap_days, "/preview?count=100").await;
    let periods = preview.as_array().unwrap();
    assert_eq!(periods.len(), 80, "29 February every 100 years until 9928");
    assert_eq!(periods[79]["periodStart"], "9928-02-29");
    assert_eq!(periods[79]["dueDate"], "9929-02-28");
    let mut late = plain(&client, &json!({"frequency": "monthly", "dayOfMonth": -1}));
    late["startsOn"] = json!("9999-11-01");
    late["template"]["dueDays"] = json!(60);
    let late = make(&app, late).await;
    let preview = get(&app, &late, "/preview?count=100").await;
    assert_eq!(
        preview,
        json!([
            {"sequence": 1, "periodStart": "9999-11-30", "dueDate": "9999-12-31", "timeFrom": null, "timeTo": null},
            {"sequence": 2, "periodStart": "9999-12-31", "dueDate": "9999-12-31", "timeFrom": null, "timeTo": null},
        ])
    );
    let every_text = app.get_json(RECURRING).await.to_string();
    assert!(!every_text.contains("+1") && !every_text.contains("10000-"), "{every_text}");
}

/// Recurring invoices bill time by the rule of `POST /v1/invoices/from-time`: `track:read`
/// to include it; a member's bill the member's own time, an owner's the team's; a member
/// may not point another user's at the time it bills; and each period checks its maker
/// again, failing (billing nothing) once they are gone from the team.
#[tokio::test]
async fn recurring_invoices_bill_time_as_their_maker_may() {
    let clock = Arc::new(FixedClock::new(morning(day("2026-12-01"))));
    let app = spawn_app_on(clock.clone()).await;
    let client = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    let mut with_time = plain(&client, &json!({"frequency": "monthly", "dayOfMonth": 1}));
    with_time["includeUnbilledTime"] = json!({"rate": 100});
    // invoices:write alone bills no one's time.
    let invoices_only = accounts::Scope::Restricted([accounts::Permission::InvoicesWrite].into());
    let (_, writer) = create_key(&app.store, app.team, app.owner, invoices_only, None).await;
    let refused = app.request(Method::POST, RECURRING, &writer).json(&with_time).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"],
        "this API key lacks the track:read permission, which includeUnbilledTime needs"
    );
    let mut without = with_time.clone();
    without.as_object_mut().unwrap().remove("includeUnbilledTime");
    expect(&app, &writer, Method::POST, RECURRING, Some(without), 201).await;

    let member = create_user(&app.store, app.team, accounts::Role::Member).await;
    let (_, member_key) = create_key(&app.store, app.team, member, accounts::Scope::Write, None).await;
    let colleague = create_user(&app.store, app.team, accounts::Role::Member).await;
    let (_, colleague_key) = create_key(&app.store, app.team, colleague, accounts::Scope::Write, None).await;
    let members = expect(&app, &member_key, Method::POST, RECURRING, Some(with_time.clone()), 201).await;
    assert_eq!(members["createdBy"], member.to_string());
    let owners = expect(&app, &app.key, Method::POST, RECURRING, Some(with_time.clone()), 201).await;
    // A member may not choose the time an owner's bills.
    let owners_path = format!("{RECURRING}/{}", owners["id"].as_str().unwrap());
    let change = json!({"includeUnbilledTime": {"rate": 50}});
    let response = app.request(Method::PATCH, &owners_path, &member_key).json(&change).send().await.unwrap();
    assert_eq!(response.status(), 403);
    assert!(
        response.json::<Value>().await.unwrap()["error"]
            .as_str()
            .unwrap()
            .starts_with("includeUnbilledTime: ")
    );
    // An owner may change a member's; it still bills the member's time.
    let members_path = format!("{RECURRING}/{}", members["id"].as_str().unwrap());
    expect(
        &app,
        &app.key,
        Method::PATCH,
        &members_path,
        Some(json!({"includeUnbilledTime": {"rate": 120}})),
        200,
    )
    .await;

    for (key, task) in [(&member_key, "member's"), (&colleague_key, "colleague's")] {
        let body = json!({"durationSeconds": 3600, "taskName": task, "date": "2026-12-10"});
        log(&app, key, body).await;
    }
    // One made by a user no longer in the team (written past the API: no user leaves yet).
    let gone = recurring::RecurringInvoice {
        created_by: accounts::UserId::generate(),
        id: recurring::RecurringInvoiceId::generate(),
        ..stored(&app, &members).await
    };
    app.store.stores().recurring.create_recurring(&gone).await.unwrap();
    let next_month = morning(day("2027-01-01"));
    clock.advance(next_month - clock_now(&clock));
    app.run_jobs_at(next_month).await;
    let invoices = app.get_json("/v1/invoices").await;
    let billed = |recurring: &Value| -> Vec<String> {
        let made =
            invoices.as_array().unwrap().iter().find(|i| i["recurringInvoiceId"] == recurring["id"]).unwrap();
        made["lineItems"].as_array().unwrap()[1..].iter().map(|l| l["quantity"].to_string()).collect()
    };
    // The member's bills the member's hour at 120; the owner's, made earlier in the same
    // pass or later, bills what is left of the team's.
    let member_invoice =
        invoices.as_array().unwrap().iter().find(|i| i["recurringInvoiceId"] == members["id"]).unwrap();
    assert_eq!(member_invoice["lineItems"][1]["unitPrice"].to_string(), "120");
    assert_eq!(billed(&members), ["1"]);
    let runs = app.get_json(&format!("{RECURRING}/{}/runs", gone.id)).await;
    assert_eq!(runs[0]["status"], "failed");
    assert_eq!(
        runs[0]["reason"],
        "unbilled time: the user who made the recurring invoice is no longer in the team, and it bills time only as they may"
    );
    let entries = app.get_json("/v1/track/time?date=2026-12-10&frequency=month").await;
    let colleagues = entries.as_array().unwrap().iter().find(|e| e["taskName"] == "colleague's").unwrap();
    assert_eq!(colleagues["invoiceId"].as_str(), owners_invoice_id(&invoices, &owners).as_deref());
}

/// The id of the invoice `recurring` made, if any.
fn owners_invoice_id(invoices: &Value, recurring: &Value) -> Option<String> {
    invoices
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["recurringInvoiceId"] == recurring["id"])
        .map(|i| i["id"].as_str().unwrap().to_owned())
}

/// `recurring` as the store holds it.
async fn stored(app: &TestApp, recurring: &Value) -> recurring::RecurringInvoice {
    let id = recurring::RecurringInvoiceId::parse(recurring["id"].as_str().unwrap()).unwrap();
    app.store.stores().recurring.get_recurring(app.team, id).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_template_keeps_its_lines_own_rates_and_each_period_is_taxed_per_rate() {
    let clock = Arc::new(FixedClock::new(morning(day("2026-12-15"))));
    let app = spawn_app_on(clock.clone()).await;
    let client = app.create_client(&app.key, "Buchclub").await;
    let body = json!({
        "clientId": client["id"],
        "template": {"taxPercentage": 19, "lineItems": [
            {"description": "Zeitschrift", "unitPrice": 12.5, "quantity": 2, "taxPercentage": 7},
            {"description": "Beratung", "unitPrice": 100, "quantity": 1}]},
        "schedule": {"frequency": "monthly", "dayOfMonth": 1}, "startsOn": "2027-01-01", "count": 1
    });
    let recurring = make(&app, body.clone()).await;
    let lines = &recurring["template"]["lineItems"];
    assert_eq!((&lines[0]["taxPercentage"], &lines[0]["vatCategory"]), (&json!(7), &Value::Null));
    assert_eq!((&lines[1]["taxPercentage"], &lines[1]["vatCategory"]), (&Value::Null, &Value::Null));

    app.run_jobs_at(morning(day("2027-01-01"))).await;
    let invoice = &app.get_json("/v1/invoices").await[0];
    let groups: Vec<(String, String, String)> = invoice["vatBreakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["taxPercentage"].to_string(), g["taxableAmount"].to_string(), g["taxAmount"].to_string()))
        .collect();
    let owned = |(a, b, c): (&str, &str, &str)| (a.to_owned(), b.to_owned(), c.to_owned());
    assert_eq!(groups, [owned(("7", "25.00", "1.75")), owned(("19", "100.00", "19.00"))]);

    // A template line that breaks its category's rule is named in the template.
    let mut zero_at_seven = body;
    zero_at_seven["template"]["lineItems"][1]["vatCategory"] = json!("Z");
    zero_at_seven["template"]["lineItems"][1]["taxPercentage"] = json!(7);
    let error = refused(&app, &app.key, Method::POST, RECURRING, zero_at_seven).await;
    assert!(
        error.starts_with("template.lineItems[1].taxPercentage: must be 0 with vatCategory Z"),
        "{error}"
    );
}

#[tokio::test]
async fn a_period_bills_the_client_s_projects_never_another_client_s() {
    let clock = Arc::new(FixedClock::new(morning(day("2026-12-15"))));
    let app = spawn_app_on(clock.clone()).await;
    let (acme, globex) =
        (app.create_client(&app.key, "Acme").await, app.create_client(&app.key, "Globex").await);
    let project = async |title: &str, client: &Value| {
        let body = json!({"title": title, "rate": 100, "clientId": client["id"]});
        expect(&app, &app.key, Method::POST, PROJECTS, Some(body), 201).await
    };
    let (acme_site, globex_app) = (project("Acme site", &acme).await, project("Globex app", &globex).await);
    let body = |time: Value| {
        json!({"clientId": acme["id"], "template": {"lineItems": []}, "includeUnbilledTime": time,
               "schedule": {"frequency": "monthly", "dayOfMonth": 1}, "startsOn": "2027-01-01", "count": 1})
    };
    let error =
        refused(&app, &app.key, Method::POST, RECURRING, body(json!({"projectIds": [globex_app["id"]]})))
            .await;
    assert!(error.starts_with("includeUnbilledTime.projectIds: "), "{error}");
    assert!(error.contains("the project is another client's"), "{error}");
    let recurring = make(&app, body(json!({"clientProjectsOnly": true}))).await;
    assert_eq!(recurring["includeUnbilledTime"]["clientProjectsOnly"], json!(true));
    // A change of client is held to the same rule as the projects it names.
    let named = make(&app, body(json!({"projectIds": [acme_site["id"]]}))).await;
    let path = format!("{RECURRING}/{}", named["id"].as_str().unwrap());
    let error = refused(&app, &app.key, Method::PATCH, &path, json!({"clientId": globex["id"]})).await;
    assert!(error.contains("the project is another client's"), "{error}");
    act(&app, &named, "pause").await;
    for (project, task) in [(&acme_site, "Acme work"), (&globex_app, "Globex work")] {
        let entry = json!({"durationSeconds": 3600, "taskName": task, "date": "2026-12-20", "projectId": project["id"]});
        log(&app, &app.key, entry).await;
    }
    let free = json!({"durationSeconds": 3600, "taskName": "Admin", "date": "2026-12-21"});
    log(&app, &app.key, free).await;

    app.run_jobs_at(morning(day("2027-01-01"))).await;
    let invoices = app.get_json("/v1/invoices").await;
    let descriptions: Vec<&str> = invoices[0]["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["description"].as_str().unwrap())
        .collect();
    assert_eq!((invoices.as_array().unwrap().len(), descriptions), (1, vec!["Acme site"]));
    // Its service period is the days its period covers.
    assert_eq!(invoices[0]["servicePeriod"], json!({"from": "2026-12-01", "to": "2026-12-31"}));
}
