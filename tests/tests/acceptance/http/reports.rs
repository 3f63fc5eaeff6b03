//! `GET /v1/track/reports`: where tracked time went, through the real server.

use std::collections::BTreeSet;

use acceptance::{TestApp, create_key, create_team, create_user, spawn_app};
use accounts::{Permission, Role, Scope};
use reqwest::Method;
use serde_json::{Value, json};

use super::track::{PROJECTS, expect, key_of, log, with};

const REPORTS: &str = "/v1/track/reports";

/// A team's month: two projects (one rated), two tags, a member, billed and unbilled time.
struct Month {
    app: TestApp,
    member_key: String,
    member: String,
    website: Value,
    internal: Value,
    urgent: Value,
    client: Value,
}

async fn month() -> Month {
    let app = spawn_app().await;
    let post = |path: &'static str, body: Value| {
        let app = &app;
        async move { expect(app, &app.key, Method::POST, path, Some(body), 201).await }
    };
    let website = post(PROJECTS, json!({"title": "Website", "rate": 100})).await;
    let internal = post(PROJECTS, json!({"title": "internal"})).await;
    let urgent = post("/v1/track/tags", json!({"title": "urgent"})).await;
    let client = post("/v1/track/tags", json!({"title": "Client"})).await;
    let (member, member_key) = key_of(&app, Role::Member).await;
    let tag = |tag: &Value| json!({"id": tag["id"], "title": tag["title"]});
    let entry = |seconds: u64, task: &str, date: &str, project: Option<&Value>, tags: Vec<Value>| {
        json!({"durationSeconds": seconds, "taskName": task, "date": date,
               "projectId": project.map(|p| p["id"].clone()), "tags": tags})
    };
    log(
        &app,
        &app.key,
        entry(3600, "Design", "2026-11-02", Some(&website), vec![tag(&urgent), tag(&client)]),
    )
    .await;
    let unbillable = with(
        entry(1800, "Build", "2026-11-03", Some(&website), vec![tag(&urgent)]),
        &json!({"billable": false}),
    );
    log(&app, &app.key, unbillable).await;
    log(&app, &member_key, entry(1200, "Admin", "2026-11-03", Some(&internal), vec![])).await;
    log(&app, &app.key, entry(600, "Calls", "2026-11-04", None, vec![])).await;
    log(&app, &app.key, entry(900, "Build", "2026-11-30T23:59:59Z", Some(&website), vec![])).await;
    log(&app, &app.key, entry(7200, "Build", "2026-12-01T00:00:00Z", Some(&website), vec![])).await;
    // The last day of the month is billed.
    let buyer = app.create_client(&app.key, "Buyer").await;
    let bill = json!({"clientId": buyer["id"], "from": "2026-11-30", "to": "2026-11-30"});
    post("/v1/invoices/from-time", bill).await;
    // Another team's time in the same month counts nowhere.
    let stranger = create_team(&app.store, "Stranger").await;
    let stranger_user = create_user(&app.store, stranger, Role::Owner).await;
    let (_, stranger_key) = create_key(&app.store, stranger, stranger_user, Scope::Write, None).await;
    log(&app, &stranger_key, entry(999, "Theirs", "2026-11-02", None, vec![])).await;
    Month { app, member_key, member: member.to_string(), website, internal, urgent, client }
}

fn november(group_by: &str) -> String {
    format!("{REPORTS}?from=2026-11-01&to=2026-11-30&groupBy={group_by}")
}

/// Each group as `(key, title, seconds, billableSeconds, invoicedSeconds, amount)`.
fn groups(report: &Value) -> Vec<(Value, String, u64, u64, u64, String)> {
    report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let n = |field: &str| g[field].as_u64().unwrap();
            let title = g["title"].as_str().unwrap().to_owned();
            (
                g["key"].clone(),
                title,
                n("seconds"),
                n("billableSeconds"),
                n("invoicedSeconds"),
                g["amount"].to_string(),
            )
        })
        .collect()
}

fn group(
    key: &Value,
    title: &str,
    seconds: u64,
    billable: u64,
    invoiced: u64,
    amount: &str,
) -> (Value, String, u64, u64, u64, String) {
    (key.clone(), title.to_owned(), seconds, billable, invoiced, amount.to_owned())
}

#[tokio::test]
async fn reports_sum_the_time_of_the_days_per_group() {
    let m = month().await;
    let app = &m.app;
    let by_project = app.get_json(&november("project")).await;
    assert_eq!(
        (&by_project["from"], &by_project["to"], &by_project["groupBy"], &by_project["currency"]),
        (&json!("2026-11-01"), &json!("2026-11-30"), &json!("project"), &json!("EUR"))
    );
    // Billable hours at the project's rate: (3600 + 900) s at 100 an hour.
    assert_eq!(
        groups(&by_project),
        [
            group(&m.internal["id"], "internal", 1200, 1200, 0, "null"),
            group(&m.website["id"], "Website", 6300, 4500, 900, "125.00"),
            group(&Value::Null, "Time without a project", 600, 600, 0, "null"),
        ]
    );
    assert_eq!(by_project["totalSeconds"], 8100);

    // An entry with two tags counts under both; the total counts it once.
    let by_tag = app.get_json(&november("tag")).await;
    assert_eq!(
        groups(&by_tag),
        [
            group(&m.client["id"], "Client", 3600, 3600, 0, "100.00"),
            group(&m.urgent["id"], "urgent", 5400, 3600, 0, "100.00"),
            group(&Value::Null, "Time without a tag", 2700, 2700, 900, "25.00"),
        ]
    );
    assert_eq!(by_tag["totalSeconds"], 8100);

    let by_day = app.get_json(&november("day")).await;
    let days: Vec<(Value, u64)> = groups(&by_day).into_iter().map(|g| (g.0, g.2)).collect();
    assert_eq!(
        days,
        [
            (json!("2026-11-02"), 3600),
            (json!("2026-11-03"), 3000),
            (json!("2026-11-04"), 600),
            (json!("2026-11-30"), 900)
        ]
    );
    let by_task = app.get_json(&november("task")).await;
    let tasks: Vec<(String, u64)> = groups(&by_task).into_iter().map(|g| (g.1, g.2)).collect();
    assert_eq!(
        tasks,
        [("Admin".into(), 1200), ("Build".into(), 2700), ("Calls".into(), 600), ("Design".into(), 3600)]
    );
    let by_user = app.get_json(&november("user")).await;
    let users: BTreeSet<(String, u64)> =
        groups(&by_user).into_iter().map(|g| (g.0.as_str().unwrap().to_owned(), g.2)).collect();
    assert_eq!(users, BTreeSet::from([(m.member.clone(), 1200), (app.owner.to_string(), 6900)]));

    // Owners and admins may narrow to one user; members see only their own time.
    let one = app.get_json(&format!("{}&userId={}", november("project"), m.member)).await;
    assert_eq!(groups(&one), [group(&m.internal["id"], "internal", 1200, 1200, 0, "null")]);
    let mine = expect(app, &m.member_key, Method::GET, &november("project"), None, 200).await;
    assert_eq!(mine["groups"], one["groups"]);
    let path = format!("{}&userId={}", november("project"), app.owner);
    let answer = expect(app, &m.member_key, Method::GET, &path, None, 403).await;
    assert!(answer["error"].as_str().unwrap().starts_with("userId: "), "{answer}");
    let empty = app.get_json(&format!("{REPORTS}?from=2025-01-01&to=2025-12-31&groupBy=tag")).await;
    assert_eq!((&empty["groups"], &empty["totalSeconds"]), (&json!([]), &json!(0)));
}

#[tokio::test]
async fn report_parameters_are_checked_and_reports_need_track_read() {
    let m = month().await;
    let app = &m.app;
    for (query, error) in [
        ("to=2026-11-30&groupBy=project", "from: is required"),
        ("from=2026-11-01&groupBy=project", "to: is required"),
        ("from=2026-11-01&to=2026-11-30", "groupBy: is required"),
        (
            "from=2026-11-01&to=2026-11-30&groupBy=client",
            "groupBy: must be one of project, task, user, tag, day",
        ),
        ("from=2026-11-31&to=2026-11-30&groupBy=day", "from: must be a date YYYY-MM-DD"),
        ("from=2026-11-02&to=2026-11-01&groupBy=day", "to: must not be before from"),
        ("from=2025-11-01&to=2026-11-02&groupBy=day", "to: the period may be at most 366 days"),
        ("from=2026-11-01&to=2026-11-30&groupBy=day&userId=x", "userId: must be a UUID"),
        ("from=2026-11-01&to=2026-11-30&groupBy=day&limit=5", "limit: not accepted"),
    ] {
        let answer = expect(app, &app.key, Method::GET, &format!("{REPORTS}?{query}"), None, 400).await;
        assert_eq!(answer["error"], error, "{query}");
    }
    // A leap year's 366 days are one report.
    expect(
        app,
        &app.key,
        Method::GET,
        &format!("{REPORTS}?from=2024-01-01&to=2024-12-31&groupBy=day"),
        None,
        200,
    )
    .await;

    let scope = Scope::Restricted(BTreeSet::from([Permission::InvoicesWrite, Permission::ClientsRead]));
    let (_, key) = create_key(&app.store, app.team, app.owner, scope, None).await;
    let answer = expect(app, &key, Method::GET, &november("day"), None, 403).await;
    assert_eq!(answer["error"], "this API key lacks the track:read permission");
}
