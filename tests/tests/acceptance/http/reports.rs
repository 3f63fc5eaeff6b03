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

    // A user without a name is titled by their email.
    let email = kernel::Email::parse("nameless@example.com").unwrap();
    let nameless = accounts::new_user(
        app.team,
        email,
        accounts::UserName::parse("").unwrap(),
        Role::Member,
        chrono::Utc::now(),
    );
    app.store.accounts().create_user(&nameless).await.unwrap();
    let theirs = json!({"durationSeconds": 60, "taskName": "x", "date": "2026-06-01", "userId": nameless.id.to_string()});
    log(app, &app.key, theirs).await;
    let june = app.get_json(&format!("{REPORTS}?from=2026-06-01&to=2026-06-30&groupBy=user")).await;
    assert_eq!(june["groups"][0]["title"], "nameless@example.com");
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
        (
            "from=2026-11-01&to=2026-11-30&groupBy=day&limit=5",
            "limit: not accepted; accepted: from, to, groupBy, userId",
        ),
        // A date is exactly YYYY-MM-DD: no sign, no longer year, no blanks.
        ("from=%2B2026-11-01&to=2026-11-30&groupBy=day", "from: must be a date YYYY-MM-DD"),
        ("from=%0A2026-11-01&to=2026-11-30&groupBy=day", "from: must be a date YYYY-MM-DD"),
        ("from=2026-11-01&to=12026-11-30&groupBy=day", "to: must be a date YYYY-MM-DD"),
        ("from=0000-01-01&to=0000-01-02&groupBy=day", "from: must fall in the years 0001 to 9999"),
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

/// `path` asked for as CSV: its rows, header first, after checking the answer's headers.
async fn csv_rows(app: &TestApp, key: &str, path: &str) -> Vec<Vec<String>> {
    let response = app.request(Method::GET, path, key).header("accept", "text/csv").send().await.unwrap();
    assert_eq!(response.status(), 200, "{path}");
    let headers = response.headers();
    assert_eq!(headers["content-type"], "text/csv; charset=utf-8");
    assert!(
        headers["content-disposition"].to_str().unwrap().starts_with("attachment; filename="),
        "{headers:?}"
    );
    let body = response.bytes().await.unwrap();
    let text = std::str::from_utf8(&body).unwrap();
    assert!(text.ends_with("\r\n"), "RFC 4180 lines end in CRLF");
    let mut reader = csv::ReaderBuilder::new().has_headers(false).from_reader(&body[..]);
    reader.records().map(|record| record.unwrap().iter().map(str::to_owned).collect()).collect()
}

#[tokio::test]
async fn time_invoices_and_reports_answer_csv_that_agrees_with_their_json() {
    let m = month().await;
    let app = &m.app;
    // Text a spreadsheet would run as a formula is written with a leading quote.
    let risky = json!({"durationSeconds": 60, "taskName": "=HYPERLINK(\"http://x\")", "date": "2026-11-05",
                       "description": "-2+3, \"quoted\"\nsecond line"});
    let risky = log(app, &app.key, risky).await;
    let path = "/v1/track/time?from=2026-11-01&to=2026-11-30";
    let json = app.get_json(path).await;
    let rows = csv_rows(app, &app.key, path).await;
    assert_eq!(
        rows[0],
        [
            "id",
            "date",
            "userId",
            "projectId",
            "sectionId",
            "taskName",
            "description",
            "durationSeconds",
            "hours",
            "tags",
            "billable",
            "billed",
            "invoiceId",
            "aiGenerated",
            "createdAt",
            "updatedAt"
        ]
    );
    let entries = json.as_array().unwrap();
    assert_eq!(rows.len(), entries.len() + 1);
    for (row, entry) in rows[1..].iter().zip(entries) {
        assert_eq!(row[0], entry["id"].as_str().unwrap());
        assert_eq!(
            (&row[1], &row[7]),
            (&entry["date"].as_str().unwrap().to_owned(), &entry["durationSeconds"].to_string())
        );
        assert_eq!(row[11], entry["billed"].to_string());
        assert_eq!(row[12], entry["invoiceId"].as_str().unwrap_or(""));
    }
    let row = rows.iter().find(|row| row[0] == risky["id"].as_str().unwrap()).unwrap();
    assert_eq!(
        (row[5].as_str(), row[6].as_str()),
        ("'=HYPERLINK(\"http://x\")", "'-2+3, \"quoted\"\nsecond line")
    );
    assert_eq!(row[8], "0.0167");
    let tagged = rows.iter().find(|row| row[5] == "Design").unwrap();
    assert_eq!(
        (tagged[3].as_str(), tagged[9].as_str()),
        (m.website["id"].as_str().unwrap(), "Client, urgent")
    );
    // JSON stays JSON, whatever it holds; JSON wins where it is preferred.
    assert_eq!(
        json.as_array().unwrap().iter().find(|e| e["id"] == risky["id"]).unwrap()["taskName"],
        risky["taskName"]
    );
    for accept in ["application/json, text/csv;q=0.5", "*/*", "text/csv;q=0, application/json;q=0.1"] {
        let response =
            app.request(Method::GET, path, &app.key).header("accept", accept).send().await.unwrap();
        assert_eq!(response.headers()["content-type"], "application/json", "{accept}");
        assert_eq!(response.headers()["vary"], "accept, accept-encoding", "{accept}");
    }
    let response = app
        .request(Method::GET, &format!("{path}&limit=5"), &app.key)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert_eq!(error["error"], "limit: is not taken with Accept: text/csv, which answers every match");

    let invoices = app.get_json("/v1/invoices").await;
    let rows = csv_rows(app, &app.key, "/v1/invoices").await;
    assert_eq!(rows[0][..4], ["id", "serial", "status", "issueDate"]);
    assert_eq!(rows.len(), 2);
    let invoice = &invoices[0];
    assert_eq!(
        (&rows[1][1], &rows[1][2], &rows[1][6], &rows[1][10], &rows[1][12]),
        (
            &"INV-0001".to_owned(),
            &"PENDING".to_owned(),
            &"EUR".to_owned(),
            &invoice["total"].to_string(),
            &"1".to_owned()
        )
    );

    let report = app.get_json(&november("project")).await;
    let rows = csv_rows(app, &app.key, &november("project")).await;
    assert_eq!(rows[0], ["key", "title", "seconds", "hours", "billableSeconds", "invoicedSeconds", "amount"]);
    // The JSON's groups, with the hours CSV adds: one row each, in the same order.
    let expected: Vec<Vec<String>> = groups(&report)
        .into_iter()
        .map(|(key, title, seconds, billable, invoiced, amount)| {
            let hours =
                [(1200, "0.3333"), (6300, "1.75"), (660, "0.1833")].iter().find(|(s, _)| *s == seconds);
            let amount = if amount == "null" { String::new() } else { amount };
            let key = key.as_str().unwrap_or("").to_owned();
            let hours = hours.unwrap().1.to_owned();
            vec![key, title, seconds.to_string(), hours, billable.to_string(), invoiced.to_string(), amount]
        })
        .collect();
    assert_eq!(rows[1..], expected);
}

#[tokio::test]
async fn a_long_listing_streams_as_csv_a_page_at_a_time() {
    let app = spawn_app().await;
    let track = app.store.stores().track;
    let start: chrono::DateTime<chrono::Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let count = 2345;
    for n in 0..count {
        let at = start + chrono::TimeDelta::minutes(n * 7);
        let entry = tracking::TimeEntry {
            id: kernel::Id::generate(),
            team_id: app.team,
            user_id: app.owner,
            duration: tracking::DurationSeconds::parse(60).unwrap(),
            task_name: tracking::TaskName::parse(format!("Task {n}")).unwrap(),
            description: None,
            date: at,
            project_id: None,
            section_id: None,
            tags: Vec::new(),
            ai_generated: false,
            billable: true,
            invoice_id: None,
            created_at: at,
            updated_at: at,
        };
        track.create_entry(&entry).await.unwrap();
    }
    let path = "/v1/track/time?from=2026-01-01&to=2026-12-31";
    let response =
        app.request(Method::GET, path, &app.key).header("accept", "text/csv").send().await.unwrap();
    assert!(response.headers().get("content-length").is_none(), "streamed: {:?}", response.headers());
    let rows = csv_rows(&app, &app.key, path).await;
    assert_eq!(rows.len(), usize::try_from(count).unwrap() + 1);
    let tasks: Vec<&str> = rows[1..].iter().map(|row| row[5].as_str()).collect();
    let expected: Vec<String> = (0..count).map(|n| format!("Task {n}")).collect();
    assert_eq!(tasks, expected, "every entry once, in listing order, across the pages");
}

/// A member can log durations whose sum passes 2^63 (1,025 entries of the longest one, 2^53
/// − 1 s): every grouping, its CSV and the agent's tool still answer, exactly.
#[tokio::test]
async fn no_sum_of_the_longest_durations_fails_a_report() {
    let app = spawn_app().await;
    let (_, member) = key_of(&app, Role::Member).await;
    let project = expect(
        &app,
        &app.key,
        Method::POST,
        PROJECTS,
        Some(json!({"title": "Forever", "rate": 1_000_000_000_000_u64})),
        201,
    )
    .await;
    let tag =
        expect(&app, &app.key, Method::POST, "/v1/track/tags", Some(json!({"title": "long"})), 201).await;
    let longest = 9_007_199_254_740_991_u64;
    let count = 1030_u64;
    for i in 0..count {
        let body = json!({"durationSeconds": longest, "taskName": "Eternity", "date": format!("2026-11-{:02}", i % 28 + 1),
                          "projectId": project["id"], "tags": [{"id": tag["id"], "title": "long"}]});
        log(&app, &member, body).await;
    }
    let total = (u128::from(longest) * u128::from(count)).to_string();
    // (2^53 − 1) × 1,030 s × 10^12 an hour, to the cent.
    let amount = "2577059786773116869444444444.44";
    for group_by in ["project", "task", "user", "tag", "day"] {
        let path = format!("{REPORTS}?from=2026-11-01&to=2026-11-30&groupBy={group_by}");
        let report = expect(&app, &member, Method::GET, &path, None, 200).await;
        assert_eq!(report["totalSeconds"].to_string(), total, "{group_by}");
        let groups = report["groups"].as_array().unwrap();
        let summed: u128 = groups.iter().map(|g| g["seconds"].to_string().parse::<u128>().unwrap()).sum();
        assert_eq!(summed.to_string(), total, "{group_by}");
        if group_by != "day" {
            assert_eq!(groups[0]["amount"].to_string(), amount, "{group_by}");
        }
        let csv = app.request(Method::GET, &path, &member).header("accept", "text/csv").send().await.unwrap();
        assert_eq!(csv.status(), 200, "{group_by}");
        let csv = csv.text().await.unwrap();
        assert!(group_by == "day" || csv.contains(amount), "{group_by}: {csv}");
    }
    let arguments = json!({"from": "2026-11-01", "to": "2026-11-30", "groupBy": "project"});
    let answer = app.call_tool(&member, "time_report", arguments).await;
    assert_eq!(answer["isError"], false, "{answer}");
    let report: Value = serde_json::from_str(answer["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(report["totalSeconds"].to_string(), total);

    // Billing it is refused for what it is: entries of more hours each than a line holds.
    let client = app.create_client(&app.key, "Buyer").await;
    let bill = json!({"clientId": client["id"], "from": "2026-11-01", "to": "2026-11-30"});
    let refused = expect(&app, &member, Method::POST, "/v1/invoices/from-time", Some(bill), 400).await;
    let message = refused["error"].as_str().unwrap();
    assert!(message.starts_with("from: none of the 1030 entries to bill can be billed"), "{refused}");
    assert!(message.ends_with("correct their durations"), "{refused}");
}
