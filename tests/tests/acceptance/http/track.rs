//! `/v1/track`: every endpoint's statuses, the tracking rules, the role matrix, and
//! cross-team invisibility, through the real server.

use std::collections::BTreeSet;

use acceptance::{TestApp, create_key, create_team, create_user, spawn_app};
use accounts::{Permission, Role, Scope, UserId};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::{error_of, pages};

pub(super) const TIME: &str = "/v1/track/time";
const TAGS: &str = "/v1/track/tags";
pub(super) const PROJECTS: &str = "/v1/track/projects";
const SECTIONS: &str = "/v1/track/sections";

/// Sends `body` (when given) and returns the status and JSON answer.
async fn call(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = app.request(method, path, key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap())
}

/// Expects `status` and returns the answer.
pub(super) async fn expect(
    app: &TestApp,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
    status: u16,
) -> Value {
    let (got, answer) = call(app, key, method.clone(), path, body).await;
    assert_eq!(got.as_u16(), status, "{method} {path}: {answer}");
    answer
}

/// Expects a 400 and returns its message.
pub(super) async fn refused(app: &TestApp, key: &str, method: Method, path: &str, body: Value) -> String {
    let answer = expect(app, key, method, path, Some(body), 400).await;
    answer["error"].as_str().unwrap().to_owned()
}

async fn tag(app: &TestApp, title: &str) -> Value {
    expect(app, &app.key, Method::POST, TAGS, Some(json!({"title": title})), 201).await
}

pub(super) async fn project(app: &TestApp, title: &str, code: Option<&str>) -> Value {
    expect(app, &app.key, Method::POST, PROJECTS, Some(json!({"title": title, "code": code})), 201).await
}

async fn section(app: &TestApp, project: &Value, title: &str) -> Value {
    let body = json!({"title": title, "projectId": project["id"]});
    expect(app, &app.key, Method::POST, SECTIONS, Some(body), 201).await
}

pub(super) async fn log(app: &TestApp, key: &str, body: Value) -> Value {
    expect(app, key, Method::POST, TIME, Some(body), 201).await
}

/// A tag as entries take it: `{id, title}`.
fn tag_ref(tag: &Value) -> Value {
    json!({"id": tag["id"], "title": tag["title"]})
}

pub(super) fn entry(date: &str) -> Value {
    json!({"durationSeconds": 3600, "taskName": "Write the report", "date": date})
}

pub(super) fn with(mut base: Value, extra: &Value) -> Value {
    for (field, value) in extra.as_object().unwrap() {
        base[field] = value.clone();
    }
    base
}

fn ids(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap()).collect()
}

pub(super) fn at(id: &Value, base: &str) -> String {
    format!("{base}/{}", id.as_str().unwrap())
}

/// A key of a new user with `role` in the app's team.
pub(super) async fn key_of(app: &TestApp, role: Role) -> (UserId, String) {
    let user = create_user(&app.store, app.team, role).await;
    let (_, key) = create_key(&app.store, app.team, user, Scope::Write, None).await;
    (user, key)
}

#[tokio::test]
async fn projects_have_hourly_rates_and_entries_say_whether_they_are_billable() {
    let app = spawn_app().await;
    let body = json!({"title": "Consulting", "rate": 95.5});
    let consulting = expect(&app, &app.key, Method::POST, PROJECTS, Some(body), 201).await;
    assert_eq!(consulting["rate"].to_string(), "95.5");
    assert_eq!(project(&app, "Internal", None).await["rate"], Value::Null);
    let path = at(&consulting["id"], PROJECTS);
    let update = |rate: Value| Some(json!({"id": consulting["id"], "data": {"rate": rate}}));
    let raised = expect(&app, &app.key, Method::PUT, &path, update(json!(120.125)), 200).await;
    assert_eq!(raised["rate"].to_string(), "120.125");
    assert_eq!(expect(&app, &app.key, Method::GET, &path, None, 200).await, raised);
    let unrated = expect(&app, &app.key, Method::PUT, &path, update(Value::Null), 200).await;
    assert_eq!((&unrated["rate"], &unrated["title"]), (&Value::Null, &json!("Consulting")));
    for (rate, error) in [
        (json!(-1), "rate: must be at least 0"),
        (json!(0.123_456_7), "rate: must have at most 6 decimal places"),
        (json!(1e13), "rate: must be at most 1000000000000"),
        (json!("95"), "rate: "),
    ] {
        let message =
            refused(&app, &app.key, Method::POST, PROJECTS, json!({"title": "X", "rate": rate})).await;
        assert!(message.starts_with(error), "{message}");
        let message = refused(&app, &app.key, Method::PUT, &path, update(rate).unwrap()).await;
        assert!(message.starts_with(&format!("data.{error}")), "{message}");
    }

    // Time is billable unless it says otherwise; which invoice billed it is not for a client to say.
    let logged = log(&app, &app.key, entry("2026-11-20")).await;
    assert_eq!((&logged["billable"], &logged["invoiceId"]), (&json!(true), &Value::Null));
    let unbilled = log(&app, &app.key, with(entry("2026-11-20"), &json!({"billable": false}))).await;
    assert_eq!(unbilled["billable"], json!(false));
    let location = at(&logged["id"], TIME);
    let changed =
        expect(&app, &app.key, Method::PATCH, &location, Some(json!({"billable": false})), 200).await;
    assert_eq!((&changed["billable"], &changed["taskName"]), (&json!(false), &logged["taskName"]));
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await["billable"], json!(false));
    let message = refused(&app, &app.key, Method::PATCH, &location, json!({"billable": null})).await;
    assert_eq!(message, "billable: must not be null");
    let invoice = json!({"invoiceId": uuid::Uuid::now_v7()});
    let message = refused(&app, &app.key, Method::PATCH, &location, invoice.clone()).await;
    assert!(message.starts_with("invoiceId: "), "{message}");
    let message = refused(&app, &app.key, Method::POST, TIME, with(entry("2026-11-20"), &invoice)).await;
    assert!(message.starts_with("invoiceId: "), "{message}");
}

#[tokio::test]
async fn a_week_of_time_end_to_end() {
    let app = spawn_app().await;
    let website = project(&app, "Website", Some("WEB")).await;
    assert_eq!(
        (&website["status"], &website["code"], &website["teamId"]),
        (&json!("ACTIVE"), &json!("WEB"), &json!(app.team.to_string()))
    );
    let design = section(&app, &website, "Design").await;
    let build = section(&app, &website, "Build").await;
    let urgent = tag(&app, "urgent").await;

    let body = with(
        entry("2026-11-16T09:00:00+01:00"),
        &json!({"description": "Ёлка — ΑΒΓ", "sectionId": design["id"], "tags": [tag_ref(&urgent), tag_ref(&urgent)], "aiGenerated": true}),
    );
    let response = app.request(Method::POST, TIME, &app.key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let monday: Value = response.json().await.unwrap();
    assert_eq!(location, at(&monday["id"], TIME));
    let expected = json!({
        "id": monday["id"], "durationSeconds": 3600, "taskName": "Write the report", "description": "Ёлка — ΑΒΓ",
        "date": "2026-11-16T08:00:00.000Z", "userId": app.owner.to_string(),
        "projectId": website["id"], "sectionId": design["id"],
        "tags": [{"id": urgent["id"], "title": "urgent"}], "aiGenerated": true, "billable": true, "billed": false, "invoiceId": null,
        "teamId": app.team.to_string(),
        "createdAt": monday["createdAt"], "updatedAt": monday["createdAt"],
    });
    assert_eq!(monday, expected);
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await, expected);
    let friday = log(&app, &app.key, entry("2026-11-20")).await;
    assert_eq!(
        (&friday["description"], &friday["projectId"], &friday["tags"], &friday["aiGenerated"]),
        (&Value::Null, &Value::Null, &json!([]), &json!(false))
    );
    let next_monday = log(&app, &app.key, entry("2026-11-23")).await;

    let week =
        expect(&app, &app.key, Method::GET, &format!("{TIME}?date=2026-11-19&frequency=week"), None, 200)
            .await;
    assert_eq!(ids(&week), [monday["id"].as_str().unwrap(), friday["id"].as_str().unwrap()]);
    let day = expect(&app, &app.key, Method::GET, &format!("{TIME}?date=2026-11-20"), None, 200).await;
    assert_eq!(ids(&day), [friday["id"].as_str().unwrap()]);
    let month = expect(
        &app,
        &app.key,
        Method::GET,
        &format!("{TIME}?date=2026-11-30T23:00:00Z&frequency=month"),
        None,
        200,
    )
    .await;
    assert_eq!(month.as_array().unwrap().len(), 3);
    assert_eq!(month[2]["id"], next_monday["id"]);

    // Move to another section; rename the tag; both show on the entry.
    let moved =
        expect(&app, &app.key, Method::PATCH, &location, Some(json!({"sectionId": build["id"]})), 200).await;
    assert_eq!(
        (&moved["sectionId"], &moved["projectId"], &moved["description"]),
        (&build["id"], &website["id"], &expected["description"])
    );
    assert_ne!(moved["updatedAt"], moved["createdAt"].clone());
    expect(&app, &app.key, Method::PATCH, &at(&urgent["id"], TAGS), Some(json!({"title": "ASAP"})), 200)
        .await;
    let shown = expect(&app, &app.key, Method::GET, &location, None, 200).await;
    assert_eq!(shown["tags"], json!([{"id": urgent["id"], "title": "ASAP"}]));

    // Projects and sections with time cannot go; deleting the tag takes it off the entry.
    let answer = expect(&app, &app.key, Method::DELETE, &at(&website["id"], PROJECTS), None, 409).await;
    assert_eq!(answer["error"], "the project has time entries and cannot be deleted");
    expect(&app, &app.key, Method::DELETE, &at(&build["id"], SECTIONS), None, 409).await;
    let answer = expect(&app, &app.key, Method::DELETE, &at(&urgent["id"], TAGS), None, 200).await;
    assert_eq!(answer, json!({"message": "tag deleted"}));
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await["tags"], json!([]));
    expect(&app, &app.key, Method::DELETE, &at(&design["id"], SECTIONS), None, 200).await;

    // Archived: no more time on it, and its entries are frozen.
    let update = json!({"id": website["id"], "data": {"status": "ARCHIVED"}});
    let archived =
        expect(&app, &app.key, Method::PUT, &at(&website["id"], PROJECTS), Some(update), 200).await;
    assert_eq!(
        (&archived["status"], &archived["title"], &archived["code"]),
        (&json!("ARCHIVED"), &json!("Website"), &json!("WEB"))
    );
    let message = refused(
        &app,
        &app.key,
        Method::POST,
        TIME,
        with(entry("2026-11-20"), &json!({"projectId": website["id"]})),
    )
    .await;
    assert_eq!(message, "projectId: the project is archived; no time can be logged on it");
    refused(&app, &app.key, Method::PATCH, &location, json!({"durationSeconds": 60})).await;
    // Moving the entry off the archived project is allowed; then the project can go.
    let off = expect(&app, &app.key, Method::PATCH, &location, Some(json!({"projectId": null})), 200).await;
    assert_eq!((&off["projectId"], &off["sectionId"]), (&Value::Null, &Value::Null));
    expect(&app, &app.key, Method::DELETE, &at(&website["id"], PROJECTS), None, 200).await;
    let answer = expect(&app, &app.key, Method::DELETE, &location, None, 200).await;
    assert_eq!(answer, json!({"message": "time entry deleted"}));
    expect(&app, &app.key, Method::GET, &location, None, 404).await;
}

#[tokio::test]
async fn tags_answer_every_status() {
    let app = spawn_app().await;
    let (b, a) = (tag(&app, "beta").await, tag(&app, "Alpha").await);
    assert_eq!(expect(&app, &app.key, Method::GET, TAGS, None, 200).await, json!([a, b]));
    let renamed =
        expect(&app, &app.key, Method::PATCH, &at(&a["id"], TAGS), Some(json!({"title": "Gamma"})), 200)
            .await;
    assert_eq!((&renamed["title"], &renamed["createdAt"]), (&json!("Gamma"), &a["createdAt"]));
    for missing in ["/v1/track/tags/00000000-0000-7000-8000-000000000000", "/v1/track/tags/nope"] {
        let answer = expect(&app, &app.key, Method::PATCH, missing, Some(json!({"title": "x"})), 404).await;
        assert_eq!(answer["error"], "tag not found");
        expect(&app, &app.key, Method::DELETE, missing, None, 404).await;
    }
    assert_eq!(
        refused(&app, &app.key, Method::POST, TAGS, json!({"title": ""})).await,
        "title: must not be empty"
    );
    assert_eq!(refused(&app, &app.key, Method::POST, TAGS, json!({})).await, "title: is required");
    assert_eq!(
        refused(&app, &app.key, Method::POST, TAGS, json!({"title": "x".repeat(256)})).await,
        "title: must be at most 255 characters"
    );
}

#[tokio::test]
async fn projects_answer_every_status() {
    let app = spawn_app().await;
    // Codes are optional, unique when given.
    let site = project(&app, "Site", Some("WEB")).await;
    let bare = project(&app, "App", Some("")).await;
    assert_eq!(bare["code"], Value::Null);
    let answer =
        expect(&app, &app.key, Method::POST, PROJECTS, Some(json!({"title": "Other", "code": "WEB"})), 409)
            .await;
    assert_eq!(answer["error"], "code: another project of the team has this code");
    assert_eq!(
        refused(&app, &app.key, Method::POST, PROJECTS, json!({"title": "x", "code": "c".repeat(51)})).await,
        "code: must be at most 50 characters"
    );
    assert_eq!(
        refused(&app, &app.key, Method::POST, PROJECTS, json!({"title": "x", "status": "ACTIVE"})).await,
        "status: not accepted; accepted: title, code, rate, clientId"
    );
    assert_eq!(
        ids(&expect(&app, &app.key, Method::GET, PROJECTS, None, 200).await),
        [bare["id"].as_str().unwrap(), site["id"].as_str().unwrap()]
    );
    let path = at(&site["id"], PROJECTS);
    let message =
        refused(&app, &app.key, Method::PUT, &path, json!({"id": bare["id"], "data": {"title": "x"}})).await;
    assert_eq!(message, "id: must equal the project id in the path");
    assert_eq!(
        refused(&app, &app.key, Method::PUT, &path, json!({"id": site["id"], "data": {"status": "DONE"}}))
            .await,
        "data.status: must be one of PENDING, ACTIVE, COMPLETED, ARCHIVED"
    );
    assert_eq!(
        refused(&app, &app.key, Method::PUT, &path, json!({"id": site["id"]})).await,
        "data: is required"
    );
    assert_eq!(
        refused(&app, &app.key, Method::PUT, &path, json!({"id": site["id"], "data": {"title": null}})).await,
        "data.title: must not be null"
    );
    let update = json!({"id": site["id"], "data": {"title": "Website", "code": null, "status": "PENDING"}});
    let updated = expect(&app, &app.key, Method::PUT, &path, Some(update), 200).await;
    assert_eq!(
        (&updated["title"], &updated["code"], &updated["status"]),
        (&json!("Website"), &Value::Null, &json!("PENDING"))
    );
    let unknown = "/v1/track/projects/00000000-0000-7000-8000-000000000000";
    expect(
        &app,
        &app.key,
        Method::PUT,
        unknown,
        Some(json!({"id": "00000000-0000-7000-8000-000000000000", "data": {}})),
        404,
    )
    .await;
    expect(&app, &app.key, Method::DELETE, unknown, None, 404).await;
}

#[tokio::test]
async fn sections_answer_every_status() {
    let app = spawn_app().await;
    let (site, bare) = (project(&app, "Site", None).await, project(&app, "App", None).await);
    // Listed per project.
    let design = section(&app, &site, "Design").await;
    assert_eq!((&design["projectId"], &design["teamId"]), (&site["id"], &json!(app.team.to_string())));
    section(&app, &bare, "Elsewhere").await;
    let listed = expect(
        &app,
        &app.key,
        Method::GET,
        &format!("{SECTIONS}?projectId={}", site["id"].as_str().unwrap()),
        None,
        200,
    )
    .await;
    assert_eq!(listed, json!([design]));
    assert_eq!(
        expect(&app, &app.key, Method::GET, SECTIONS, None, 400).await["error"],
        "projectId: is required"
    );
    assert_eq!(
        expect(&app, &app.key, Method::GET, &format!("{SECTIONS}?projectId="), None, 400).await["error"],
        "projectId: is required"
    );
    assert_eq!(
        expect(&app, &app.key, Method::GET, &format!("{SECTIONS}?projectId=x"), None, 400).await["error"],
        "projectId: must be a UUID"
    );
    expect(
        &app,
        &app.key,
        Method::GET,
        &format!("{SECTIONS}?projectId=00000000-0000-7000-8000-000000000000"),
        None,
        404,
    )
    .await;
    let message = refused(
        &app,
        &app.key,
        Method::POST,
        SECTIONS,
        json!({"title": "x", "projectId": "00000000-0000-7000-8000-000000000000"}),
    )
    .await;
    assert_eq!(message, "projectId: no such project in the team");
    let path = at(&design["id"], SECTIONS);
    let renamed = expect(&app, &app.key, Method::PUT, &path, Some(json!({"title": "UX"})), 200).await;
    assert_eq!((&renamed["title"], &renamed["projectId"]), (&json!("UX"), &site["id"]));
    assert_eq!(expect(&app, &app.key, Method::PUT, &path, Some(json!({})), 200).await["title"], "UX");
    let answer = expect(&app, &app.key, Method::DELETE, &at(&site["id"], PROJECTS), None, 200).await;
    assert_eq!(answer, json!({"message": "project deleted"}));
    // The project's sections went with it.
    expect(&app, &app.key, Method::PUT, &path, Some(json!({"title": "x"})), 404).await;
    expect(&app, &app.key, Method::DELETE, &path, None, 404).await;
}

#[tokio::test]
async fn time_entry_fields_are_validated_by_name() {
    let app = spawn_app().await;
    let site = project(&app, "Site", None).await;
    let app_project = project(&app, "App", None).await;
    let design = section(&app, &site, "Design").await;
    let known = tag(&app, "known").await;
    let cases = [
        (json!({"durationSeconds": 0}), "durationSeconds: must be greater than 0"),
        (
            json!({"durationSeconds": 9_007_199_254_740_992_u64}),
            "durationSeconds: must be at most 9007199254740991",
        ),
        (json!({"durationSeconds": 1.5}), "durationSeconds: must be a whole number"),
        (json!({"taskName": ""}), "taskName: must not be empty"),
        (json!({"taskName": "t".repeat(256)}), "taskName: must be at most 255 characters"),
        (json!({"description": "é".repeat(1001)}), "description: must be at most 1000 characters"),
        (
            json!({"date": "2026-11-20T09:00:00"}),
            "date: must be an RFC 3339 datetime with an offset or a date YYYY-MM-DD",
        ),
        (
            json!({"projectId": "00000000-0000-7000-8000-000000000000"}),
            "projectId: no such project in the team",
        ),
        (json!({"sectionId": "nope"}), "sectionId: no such section in the team"),
        (
            json!({"tags": [tag_ref(&known), {"id": "00000000-0000-7000-8000-000000000000", "title": "x"}]}),
            "tags[1].id: no such tag in the team",
        ),
        (json!({"tags": [{"id": known["id"]}]}), "tags[0].title: is required"),
        (json!({"userId": "00000000-0000-7000-8000-000000000000"}), "userId: no such user in the team"),
        (json!({"subtotal": 1}), "subtotal: not accepted; it is computed from the line items and the tax"),
    ];
    for (extra, message) in cases {
        assert_eq!(
            refused(&app, &app.key, Method::POST, TIME, with(entry("2026-11-20"), &extra)).await,
            message,
            "{extra}"
        );
    }
    let mismatch = json!({"projectId": app_project["id"], "sectionId": design["id"]});
    let message = refused(&app, &app.key, Method::POST, TIME, with(entry("2026-11-20"), &mismatch)).await;
    assert!(message.starts_with("projectId: must be the project of section"), "{message}");
    assert_eq!(
        refused(&app, &app.key, Method::POST, TIME, json!({"taskName": "x", "date": "2026-11-20"})).await,
        "durationSeconds: is required"
    );
    // The bounds themselves are accepted; nothing refused above was stored.
    let edge = json!({"durationSeconds": 9_007_199_254_740_991_u64, "description": "é".repeat(1000), "taskName": "t".repeat(255)});
    let stored = log(&app, &app.key, with(entry("2026-11-20"), &edge)).await;
    let listed = expect(&app, &app.key, Method::GET, &format!("{TIME}?date=2026-11-20"), None, 200).await;
    assert_eq!(listed, json!([stored]));
}

#[tokio::test]
async fn patching_an_entry_changes_only_what_is_given() {
    let app = spawn_app().await;
    let site = project(&app, "Site", None).await;
    let app_project = project(&app, "App", None).await;
    let design = section(&app, &site, "Design").await;
    let known = tag(&app, "known").await;
    let stored = log(&app, &app.key, with(entry("2026-11-20"), &json!({"description": "notes"}))).await;
    let path = at(&stored["id"], TIME);
    assert_eq!(
        refused(&app, &app.key, Method::PATCH, &path, json!({"taskName": null})).await,
        "taskName: must not be null"
    );
    assert_eq!(
        refused(&app, &app.key, Method::PATCH, &path, json!({"createdAt": "2026-11-20"})).await,
        "createdAt: not accepted; the server sets it"
    );
    let cleared = expect(
        &app,
        &app.key,
        Method::PATCH,
        &path,
        Some(json!({"description": null, "tags": [tag_ref(&known)]})),
        200,
    )
    .await;
    assert_eq!(
        (&cleared["description"], &cleared["durationSeconds"]),
        (&Value::Null, &stored["durationSeconds"])
    );
    // A project of its own plus a section of another project is refused; the section alone decides.
    let message = refused(
        &app,
        &app.key,
        Method::PATCH,
        &path,
        json!({"projectId": app_project["id"], "sectionId": design["id"]}),
    )
    .await;
    assert!(message.starts_with("projectId:"), "{message}");
    let filed =
        expect(&app, &app.key, Method::PATCH, &path, Some(json!({"sectionId": design["id"]})), 200).await;
    assert_eq!(filed["projectId"], site["id"]);
    // A section of another project moves the entry to that project too.
    let elsewhere = section(&app, &app_project, "Elsewhere").await;
    let moved =
        expect(&app, &app.key, Method::PATCH, &path, Some(json!({"sectionId": elsewhere["id"]})), 200).await;
    assert_eq!((&moved["projectId"], &moved["sectionId"]), (&app_project["id"], &elsewhere["id"]));
    let message =
        refused(&app, &app.key, Method::PATCH, &path, json!({"projectId": null, "sectionId": design["id"]}))
            .await;
    assert_eq!(message, "projectId: must not be null beside a sectionId");
    let filed =
        expect(&app, &app.key, Method::PATCH, &path, Some(json!({"sectionId": design["id"]})), 200).await;
    assert_eq!((&filed["projectId"], &filed["sectionId"]), (&site["id"], &design["id"]));
    // Clearing the section keeps the project.
    let unfiled = expect(&app, &app.key, Method::PATCH, &path, Some(json!({"sectionId": null})), 200).await;
    assert_eq!((&unfiled["projectId"], &unfiled["sectionId"]), (&site["id"], &Value::Null));
    expect(&app, &app.key, Method::PATCH, &path, Some(json!({"sectionId": design["id"]})), 200).await;
    // Another project leaves the section behind.
    let moved =
        expect(&app, &app.key, Method::PATCH, &path, Some(json!({"projectId": app_project["id"]})), 200)
            .await;
    assert_eq!(
        (&moved["projectId"], &moved["sectionId"], &moved["tags"]),
        (&app_project["id"], &Value::Null, &json!([{"id": known["id"], "title": "known"}]))
    );
}

#[tokio::test]
async fn bad_listing_parameters_and_unknown_entries_are_refused() {
    let app = spawn_app().await;
    for query in
        ["", "?date=", "?date=tomorrow", "?date=2026-11-20&frequency=year", "?date=2026-11-20&userId=x"]
    {
        let answer = expect(&app, &app.key, Method::GET, &format!("{TIME}{query}"), None, 400).await;
        let message = answer["error"].as_str().unwrap();
        let field = message.split(':').next().unwrap();
        assert!(["date", "frequency", "userId"].contains(&field), "{query}: {message}");
    }
    for missing in ["/v1/track/time/00000000-0000-7000-8000-000000000000", "/v1/track/time/nope"] {
        expect(&app, &app.key, Method::GET, missing, None, 404).await;
        expect(&app, &app.key, Method::PATCH, missing, Some(json!({"taskName": "x"})), 404).await;
        let answer = expect(&app, &app.key, Method::DELETE, missing, None, 404).await;
        assert_eq!(answer["error"], "time entry not found");
    }
}

#[tokio::test]
async fn roles_decide_whose_time_a_key_touches() {
    let app = spawn_app().await;
    let (admin, admin_key) = key_of(&app, Role::Admin).await;
    let (member, member_key) = key_of(&app, Role::Member).await;
    let (colleague, colleague_key) = key_of(&app, Role::Member).await;
    let day = format!("{TIME}?date=2026-11-20");

    // Owners and admins log for anyone; members only for themselves.
    let for_member =
        log(&app, &app.key, with(entry("2026-11-20"), &json!({"userId": member.to_string()}))).await;
    assert_eq!(for_member["userId"], member.to_string());
    let for_colleague =
        log(&app, &admin_key, with(entry("2026-11-20"), &json!({"userId": colleague.to_string()}))).await;
    let own = log(&app, &member_key, with(entry("2026-11-20"), &json!({"userId": member.to_string()}))).await;
    let answer = expect(
        &app,
        &member_key,
        Method::POST,
        TIME,
        Some(with(entry("2026-11-20"), &json!({"userId": colleague.to_string()}))),
        403,
    )
    .await;
    assert_eq!(answer["error"], "userId: only owners and admins may log or move time for another user");
    // Even a user of another team: the role check comes first.
    let stranger_team = create_team(&app.store, "Strangers").await;
    let stranger = create_user(&app.store, stranger_team, Role::Owner).await;
    expect(
        &app,
        &member_key,
        Method::POST,
        TIME,
        Some(with(entry("2026-11-20"), &json!({"userId": stranger.to_string()}))),
        403,
    )
    .await;
    assert_eq!(
        refused(
            &app,
            &admin_key,
            Method::POST,
            TIME,
            with(entry("2026-11-20"), &json!({"userId": stranger.to_string()}))
        )
        .await,
        "userId: no such user in the team"
    );

    // Members see their own; owners and admins the team's, or one user's.
    let set = |list: &Value| ids(list).into_iter().map(str::to_owned).collect::<BTreeSet<_>>();
    let all = [&for_member, &for_colleague, &own]
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .into_iter()
        .collect();
    for key in [&app.key, &admin_key] {
        assert_eq!(set(&expect(&app, key, Method::GET, &day, None, 200).await), all);
        let theirs = expect(&app, key, Method::GET, &format!("{day}&userId={colleague}"), None, 200).await;
        assert_eq!(ids(&theirs), [for_colleague["id"].as_str().unwrap()]);
    }
    let mine = expect(&app, &member_key, Method::GET, &day, None, 200).await;
    assert_eq!(
        set(&mine),
        [&for_member, &own].map(|e| e["id"].as_str().unwrap().to_owned()).into_iter().collect()
    );
    assert_eq!(
        set(&expect(&app, &member_key, Method::GET, &format!("{day}&userId={member}"), None, 200).await),
        set(&mine)
    );
    expect(&app, &member_key, Method::GET, &format!("{day}&userId={colleague}"), None, 403).await;
    assert_eq!(
        ids(&expect(&app, &colleague_key, Method::GET, &day, None, 200).await),
        [for_colleague["id"].as_str().unwrap()]
    );

    // Another member's entry does not exist for a member; owners and admins reach it.
    let path = at(&for_colleague["id"], TIME);
    expect(&app, &member_key, Method::GET, &path, None, 404).await;
    expect(&app, &member_key, Method::PATCH, &path, Some(json!({"taskName": "mine now"})), 404).await;
    expect(&app, &member_key, Method::DELETE, &path, None, 404).await;
    expect(&app, &app.key, Method::GET, &path, None, 200).await;
    let moved =
        expect(&app, &admin_key, Method::PATCH, &path, Some(json!({"userId": admin.to_string()})), 200).await;
    assert_eq!(moved["userId"], admin.to_string());
    expect(&app, &colleague_key, Method::GET, &path, None, 404).await;

    // A member may change their own entry but not hand it to someone else.
    let own_path = at(&own["id"], TIME);
    expect(
        &app,
        &member_key,
        Method::PATCH,
        &own_path,
        Some(json!({"userId": member.to_string(), "taskName": "Review"})),
        200,
    )
    .await;
    expect(&app, &member_key, Method::PATCH, &own_path, Some(json!({"userId": colleague.to_string()})), 403)
        .await;
    assert_eq!(
        expect(&app, &member_key, Method::GET, &own_path, None, 200).await["userId"],
        member.to_string()
    );
    expect(&app, &member_key, Method::DELETE, &own_path, None, 200).await;
    expect(&app, &admin_key, Method::DELETE, &path, None, 200).await;
}

#[tokio::test]
async fn another_teams_tracking_is_invisible() {
    let app = spawn_app().await;
    let site = project(&app, "Site", None).await;
    let design = section(&app, &site, "Design").await;
    let urgent = tag(&app, "urgent").await;
    let logged = log(
        &app,
        &app.key,
        with(entry("2026-11-20"), &json!({"sectionId": design["id"], "tags": [tag_ref(&urgent)]})),
    )
    .await;

    let team = create_team(&app.store, "Strangers").await;
    let owner = create_user(&app.store, team, Role::Owner).await;
    let (_, key) = create_key(&app.store, team, owner, Scope::Write, None).await;
    for list in [TIME.to_owned() + "?date=2026-11-20&frequency=month", TAGS.to_owned(), PROJECTS.to_owned()] {
        assert_eq!(expect(&app, &key, Method::GET, &list, None, 200).await, json!([]), "{list}");
    }
    let project_id = site["id"].as_str().unwrap();
    expect(&app, &key, Method::GET, &format!("{SECTIONS}?projectId={project_id}"), None, 404).await;
    // In a path: 404, like a missing id.
    expect(&app, &key, Method::GET, &at(&logged["id"], TIME), None, 404).await;
    expect(&app, &key, Method::PATCH, &at(&logged["id"], TIME), Some(json!({"taskName": "x"})), 404).await;
    expect(&app, &key, Method::DELETE, &at(&logged["id"], TIME), None, 404).await;
    expect(&app, &key, Method::PATCH, &at(&urgent["id"], TAGS), Some(json!({"title": "x"})), 404).await;
    expect(&app, &key, Method::DELETE, &at(&urgent["id"], TAGS), None, 404).await;
    expect(
        &app,
        &key,
        Method::PUT,
        &at(&site["id"], PROJECTS),
        Some(json!({"id": site["id"], "data": {"title": "x"}})),
        404,
    )
    .await;
    expect(&app, &key, Method::DELETE, &at(&site["id"], PROJECTS), None, 404).await;
    expect(&app, &key, Method::PUT, &at(&design["id"], SECTIONS), Some(json!({"title": "x"})), 404).await;
    expect(&app, &key, Method::DELETE, &at(&design["id"], SECTIONS), None, 404).await;
    // In a body: 400 naming the field.
    let cases = [
        (json!({"projectId": site["id"]}), "projectId: no such project in the team"),
        (json!({"sectionId": design["id"]}), "sectionId: no such section in the team"),
        (json!({"tags": [tag_ref(&urgent)]}), "tags[0].id: no such tag in the team"),
        (json!({"userId": app.owner.to_string()}), "userId: no such user in the team"),
    ];
    for (extra, message) in cases {
        assert_eq!(refused(&app, &key, Method::POST, TIME, with(entry("2026-11-20"), &extra)).await, message);
    }
    assert_eq!(
        refused(&app, &key, Method::POST, SECTIONS, json!({"title": "x", "projectId": site["id"]})).await,
        "projectId: no such project in the team"
    );
    // Everything is still there, unchanged, for its own team.
    assert_eq!(expect(&app, &app.key, Method::GET, &at(&logged["id"], TIME), None, 200).await, logged);
}

#[tokio::test]
async fn track_endpoints_need_track_permissions() {
    let app = spawn_app().await;
    let logged = log(&app, &app.key, entry("2026-11-20")).await;
    let entry_path = at(&logged["id"], TIME);
    let read_only = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await.1;
    let clients_only = create_key(
        &app.store,
        app.team,
        app.owner,
        Scope::Restricted([Permission::ClientsWrite].into()),
        None,
    )
    .await
    .1;
    let track_read =
        create_key(&app.store, app.team, app.owner, Scope::Restricted([Permission::TrackRead].into()), None)
            .await
            .1;
    let track_write =
        create_key(&app.store, app.team, app.owner, Scope::Restricted([Permission::TrackWrite].into()), None)
            .await
            .1;
    let reads =
        [TIME.to_owned() + "?date=2026-11-20", entry_path.clone(), TAGS.to_owned(), PROJECTS.to_owned()];
    for path in &reads {
        for key in [&read_only, &track_read, &track_write] {
            expect(&app, key, Method::GET, path, None, 200).await;
        }
        let response = app.request(Method::GET, path, &clients_only).send().await.unwrap();
        assert_eq!(response.status(), 403, "{path}");
        assert_eq!(error_of(response).await, "this API key lacks the track:read permission");
    }
    let writes =
        [(Method::POST, TAGS.to_owned()), (Method::PATCH, entry_path.clone()), (Method::DELETE, entry_path)];
    for (method, path) in writes {
        for key in [&read_only, &clients_only, &track_read] {
            // The scope is checked before the body is read: 403 even for an empty body.
            let response = app.request(method.clone(), &path, key).json(&json!({})).send().await.unwrap();
            assert_eq!(response.status(), 403, "{method} {path}");
            assert_eq!(error_of(response).await, "this API key lacks the track:write permission");
        }
    }
    expect(&app, &track_write, Method::POST, TAGS, Some(json!({"title": "ok"})), 201).await;
    for path in
        [TIME.to_owned() + "?date=2026-11-20", TAGS.to_owned(), PROJECTS.to_owned(), SECTIONS.to_owned()]
    {
        let response = app.http.get(app.url(&path)).send().await.unwrap();
        assert_eq!(response.status(), 401, "{path}");
        assert_eq!(error_of(response).await, "missing X-API-Key header");
    }
}

#[tokio::test]
async fn track_routes_follow_the_http_conventions() {
    let app = spawn_app().await;
    let response = app.request(Method::POST, TIME, &app.key).body("{}").send().await.unwrap();
    assert_eq!(response.status(), 415);
    assert_eq!(error_of(response).await, "content-type: must be application/json");
    let huge = json!({"taskName": "x".repeat(2 * 1024 * 1024)});
    let response = app.request(Method::POST, TIME, &app.key).json(&huge).send().await.unwrap();
    assert_eq!(response.status(), 413);
    let response = app
        .request(Method::POST, TAGS, &app.key)
        .header("content-type", "application/json")
        .body(r#"{"title": "#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert!(error_of(response).await.starts_with("body: malformed JSON"));
    let response = app.request(Method::PUT, TIME, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 405);
    assert_eq!(response.headers()["allow"], "GET, POST, HEAD");
    let response = app.request(Method::GET, "/v1/track/nothing", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 404);
    // Every keyed answer carries the rate-limit headers and a request id.
    let response = app.request(Method::GET, TAGS, &app.key).send().await.unwrap();
    for header in ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "x-request-id"] {
        assert!(response.headers().contains_key(header), "{header}");
    }
}

/// Listings are kept between requests (`BILLABLE_LISTING_CACHE_MB`); every change a listing
/// shows, made through either of two instances on one database, shows in the next listing
/// of both.
#[tokio::test]
async fn listings_show_every_change_at_once_on_every_instance() {
    let app = spawn_app().await;
    let other = app.another_instance();
    let month = format!("{TIME}?date=2026-11-15&frequency=month");
    let list_on = async |address: &str| -> Value {
        let response = app.http.get(format!("{address}{month}")).header("X-API-Key", &app.key).send().await;
        let response = response.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    };
    let both = async |what: &str, check: &dyn Fn(&Value) -> bool| {
        for address in [app.address.as_str(), other.as_str()] {
            let listed = list_on(address).await;
            assert!(check(&listed), "{what}, listed on {address}: {listed}");
        }
    };
    let urgent = tag(&app, "urgent").await;
    let first = log(&app, &app.key, with(entry("2026-11-03"), &json!({"tags": [tag_ref(&urgent)]}))).await;
    // Twice on each instance: the second listing is the kept one.
    for _ in 0..2 {
        both("one entry", &|l| ids(l) == [first["id"].as_str().unwrap()]).await;
    }

    let on_other = |method: Method, path: &str| {
        app.http.request(method, format!("{other}{path}")).header("X-API-Key", &app.key)
    };
    let send = async |request: reqwest::RequestBuilder, status: u16| {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{}", response.text().await.unwrap());
    };
    send(on_other(Method::POST, TIME).json(&entry("2026-11-20")), 201).await;
    both("an entry logged on the other instance", &|l| ids(l).len() == 2).await;

    let first_path = at(&first["id"], TIME);
    expect(&app, &app.key, Method::PATCH, &first_path, Some(json!({"taskName": "Review"})), 200).await;
    both("an entry changed", &|l| l[0]["taskName"] == "Review").await;

    send(on_other(Method::PATCH, &at(&urgent["id"], TAGS)).json(&json!({"title": "ASAP"})), 200).await;
    both("a tag renamed on the other instance", &|l| l[0]["tags"][0]["title"] == "ASAP").await;

    expect(&app, &app.key, Method::DELETE, &at(&urgent["id"], TAGS), None, 200).await;
    both("a tag deleted", &|l| l[0]["tags"] == json!([])).await;

    send(on_other(Method::DELETE, &first_path), 200).await;
    both("an entry deleted on the other instance", &|l| {
        ids(l).len() == 1 && l[0]["taskName"] == "Write the report"
    })
    .await;
}

/// A listing worth compressing goes gzipped to a client that accepts gzip, and as it is to
/// any other; both say they vary by `Accept` (CSV) and `Accept-Encoding`.
#[tokio::test]
async fn listings_are_gzipped_for_clients_that_accept_it() {
    use std::io::Read;

    let app = spawn_app().await;
    for day in 1..=10 {
        log(&app, &app.key, entry(&format!("2026-11-{day:02}"))).await;
    }
    let month = format!("{TIME}?date=2026-11-15&frequency=month");
    let fetch = async |accept: Option<&str>| {
        let mut request = app.request(Method::GET, &month, &app.key);
        if let Some(accept) = accept {
            request = request.header("Accept-Encoding", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["vary"], "accept, accept-encoding");
        let encoding = response.headers().get("content-encoding").map(|v| v.to_str().unwrap().to_owned());
        (encoding, response.bytes().await.unwrap())
    };
    let (encoding, plain) = fetch(None).await;
    assert_eq!(encoding, None);
    let listed: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(ids(&listed).len(), 10);
    for accept in ["gzip", "br, gzip;q=0.8, identity;q=0.5", "deflate, gzip"] {
        let (encoding, gzipped) = fetch(Some(accept)).await;
        assert_eq!(encoding.as_deref(), Some("gzip"), "Accept-Encoding: {accept}");
        assert!(gzipped.len() < plain.len() / 3, "{} bytes gzipped of {}", gzipped.len(), plain.len());
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(&gzipped[..]).read_to_end(&mut unzipped).unwrap();
        assert_eq!(unzipped, plain);
    }
    for accept in ["identity", "gzip;q=0, identity", "br"] {
        let (encoding, body) = fetch(Some(accept)).await;
        assert_eq!(encoding, None, "Accept-Encoding: {accept}");
        assert_eq!(body, plain);
    }
}

const TIMER: &str = "/v1/track/timer";

/// A timer started on one instance is running on every instance, and its stop there is the
/// time entry of the seconds it ran.
#[tokio::test]
async fn a_timer_runs_until_stopped_into_a_time_entry() {
    let app = spawn_app().await;
    let other = app.another_instance();
    let website = project(&app, "Website", Some("WEB")).await;
    let design = section(&app, &website, "Design").await;
    let urgent = tag(&app, "urgent").await;
    let message = expect(&app, &app.key, Method::GET, TIMER, None, 404).await;
    assert_eq!(message, json!({"error": "no timer is running"}));
    expect(&app, &app.key, Method::POST, &format!("{TIMER}/stop"), None, 404).await;

    let before = chrono::Utc::now();
    let start = json!({"taskName": "Mock-ups", "description": "Hero section", "sectionId": design["id"],
                       "tags": [tag_ref(&urgent), tag_ref(&urgent)]});
    let response = app.request(Method::POST, &format!("{TIMER}/start"), &app.key).json(&start).send().await;
    let response = response.unwrap();
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["location"], TIMER);
    let timer: Value = response.json().await.unwrap();
    assert_eq!(timer["projectId"], website["id"], "the section implies its project");
    assert_eq!(timer["tags"], json!([tag_ref(&urgent)]));
    assert_eq!(timer["elapsedSeconds"], 1);
    let started: chrono::DateTime<chrono::Utc> = timer["startedAt"].as_str().unwrap().parse().unwrap();
    assert!(started >= before - chrono::TimeDelta::milliseconds(1));

    let again = json!({"taskName": "Another"});
    let refused = expect(&app, &app.key, Method::POST, &format!("{TIMER}/start"), Some(again), 409).await;
    assert_eq!(refused["error"], "a timer is already running; stop it first");
    // The running timer holds its project and section, as an entry would.
    let held = expect(&app, &app.key, Method::DELETE, &at(&design["id"], SECTIONS), None, 409).await;
    assert_eq!(held["error"], "the section has time entries and cannot be deleted");

    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let read_there = app.http.get(format!("{other}{TIMER}")).header("X-API-Key", &app.key).send().await;
    let read_there: Value = read_there.unwrap().json().await.unwrap();
    assert_eq!(read_there["id"], timer["id"], "seen on every instance");
    assert!(read_there["elapsedSeconds"].as_u64().unwrap() >= 2, "{read_there}");

    let stop =
        app.http.post(format!("{other}{TIMER}/stop")).header("X-API-Key", &app.key).send().await.unwrap();
    assert_eq!(stop.status(), 201);
    let location = stop.headers()["location"].to_str().unwrap().to_owned();
    let entry: Value = stop.json().await.unwrap();
    let ran = (chrono::Utc::now() - started).num_seconds();
    let seconds = entry["durationSeconds"].as_i64().unwrap();
    assert!((2..=ran).contains(&seconds), "{seconds} s logged for a timer that ran {ran} s");
    assert_eq!(location, at(&entry["id"], TIME));
    assert_eq!(entry["date"], timer["startedAt"]);
    for field in ["taskName", "description", "projectId", "sectionId", "tags", "userId"] {
        assert_eq!(entry[field], timer[field], "{field}");
    }
    assert_eq!(expect(&app, &app.key, Method::GET, &location, None, 200).await, entry);
    let day = format!("{TIME}?date={}", &timer["startedAt"].as_str().unwrap()[..10]);
    assert_eq!(
        ids(&expect(&app, &app.key, Method::GET, &day, None, 200).await),
        [entry["id"].as_str().unwrap()]
    );

    expect(&app, &app.key, Method::GET, TIMER, None, 404).await;
    let stopped = expect(&app, &app.key, Method::POST, &format!("{TIMER}/stop"), None, 404).await;
    assert_eq!(stopped["error"], "no timer is running");
}

#[tokio::test]
async fn a_timer_keeps_the_rules_of_time_entries_and_is_each_users_own() {
    let app = spawn_app().await;
    let start = format!("{TIMER}/start");
    let archived = project(&app, "Old", None).await;
    let update = json!({"id": archived["id"], "data": {"status": "ARCHIVED"}});
    expect(&app, &app.key, Method::PUT, &at(&archived["id"], PROJECTS), Some(update), 200).await;
    for (body, message) in [
        (json!({}), "taskName: is required"),
        (json!({"taskName": ""}), "taskName: must not be empty"),
        (
            json!({"taskName": "x", "durationSeconds": 5}),
            "durationSeconds: not accepted; accepted: taskName, description, projectId, sectionId, tags",
        ),
        (json!({"taskName": "x", "projectId": "nope"}), "projectId: no such project in the team"),
        (
            json!({"taskName": "x", "projectId": archived["id"]}),
            "projectId: the project is archived; no time can be logged on it",
        ),
        (
            json!({"taskName": "x", "tags": [{"id": archived["id"], "title": "t"}]}),
            "tags[0].id: no such tag in the team",
        ),
    ] {
        assert_eq!(refused(&app, &app.key, Method::POST, &start, body).await, message);
    }
    expect(&app, &app.key, Method::GET, TIMER, None, 404).await;

    // Each user runs a timer of their own; an owner's is not a member's.
    let (_, member) = key_of(&app, Role::Member).await;
    expect(&app, &app.key, Method::POST, &start, Some(json!({"taskName": "Owner's"})), 201).await;
    expect(&app, &member, Method::GET, TIMER, None, 404).await;
    let theirs =
        expect(&app, &member, Method::POST, &start, Some(json!({"taskName": "Member's"})), 201).await;
    assert_eq!(expect(&app, &member, Method::GET, TIMER, None, 200).await["id"], theirs["id"]);

    // Discarded: no time logged, and a new one may start.
    let discarded = expect(&app, &member, Method::DELETE, TIMER, None, 200).await;
    assert_eq!(discarded, json!({"message": "timer deleted"}));
    expect(&app, &member, Method::DELETE, TIMER, None, 404).await;
    let today = format!("{TIME}?date={}", chrono::Utc::now().format("%Y-%m-%d"));
    assert_eq!(expect(&app, &member, Method::GET, &today, None, 200).await, json!([]));
    expect(&app, &member, Method::POST, &start, Some(json!({"taskName": "Again"})), 201).await;

    // A project archived while its timer runs: the stop is refused and the timer kept.
    let live = project(&app, "Live", None).await;
    expect(&app, &app.key, Method::DELETE, TIMER, None, 200).await;
    expect(
        &app,
        &app.key,
        Method::POST,
        &start,
        Some(json!({"taskName": "x", "projectId": live["id"]})),
        201,
    )
    .await;
    let archive = json!({"id": live["id"], "data": {"status": "ARCHIVED"}});
    expect(&app, &app.key, Method::PUT, &at(&live["id"], PROJECTS), Some(archive), 200).await;
    let message = refused(&app, &app.key, Method::POST, &format!("{TIMER}/stop"), json!({})).await;
    assert_eq!(message, "projectId: the project is archived; no time can be logged on it");
    expect(&app, &app.key, Method::GET, TIMER, None, 200).await;

    // Another team's key sees no timer of this team.
    let stranger_team = create_team(&app.store, "Other").await;
    let stranger = create_user(&app.store, stranger_team, Role::Owner).await;
    let (_, stranger_key) = create_key(&app.store, stranger_team, stranger, Scope::Write, None).await;
    expect(&app, &stranger_key, Method::GET, TIMER, None, 404).await;

    // Reading needs track:read, the rest track:write.
    let read_only = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await.1;
    expect(&app, &read_only, Method::GET, TIMER, None, 200).await;
    for (method, path) in [
        (Method::POST, start.clone()),
        (Method::POST, format!("{TIMER}/stop")),
        (Method::DELETE, TIMER.to_owned()),
    ] {
        let answer = expect(&app, &read_only, method, &path, Some(json!({"taskName": "x"})), 403).await;
        assert_eq!(answer["error"], "this API key lacks the track:write permission");
    }
}

#[tokio::test]
async fn time_entries_filter_and_page_through_link_headers() {
    let app = spawn_app().await;
    let website = project(&app, "Website", None).await;
    let design = section(&app, &website, "Design").await;
    let urgent = tag(&app, "urgent").await;
    let mut logged = Vec::new();
    for day in 1..=7 {
        let placed = match day % 3 {
            0 => json!({"sectionId": design["id"], "tags": [tag_ref(&urgent)]}),
            1 => json!({"projectId": website["id"]}),
            _ => json!({}),
        };
        logged.push(log(&app, &app.key, with(entry(&format!("2026-11-0{day}")), &placed)).await);
    }
    let listed_ids = |answer: &Value| ids(answer).into_iter().map(str::to_owned).collect::<Vec<_>>();
    let all_ids = |pages: &[Value]| pages.iter().flat_map(listed_ids).collect::<Vec<_>>();
    let logged_ids = |pick: &dyn Fn(usize) -> bool| {
        (1..=7)
            .filter(|d| pick(*d))
            .map(|d| logged[d - 1]["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };

    let month = format!("{TIME}?date=2026-11-15&frequency=month");
    let whole = pages(&app, &month).await;
    assert_eq!(whole.len(), 1, "without limit, one page");
    assert_eq!(all_ids(&whole), logged_ids(&|_| true));
    let paged = pages(&app, &format!("{TIME}?from=2026-11-01&to=2026-11-30&limit=3")).await;
    assert_eq!(paged.iter().map(|p| p.as_array().unwrap().len()).collect::<Vec<_>>(), [3, 3, 1]);
    assert_eq!(all_ids(&paged), logged_ids(&|_| true), "the pages add up to the listing");
    let project_pages =
        pages(&app, &format!("{month}&projectId={}&limit=2", website["id"].as_str().unwrap())).await;
    assert_eq!(all_ids(&project_pages), logged_ids(&|d| d % 3 != 2));
    let in_section = pages(&app, &format!("{month}&sectionId={}", design["id"].as_str().unwrap())).await;
    assert_eq!(all_ids(&in_section), logged_ids(&|d| d % 3 == 0));
    let tagged = pages(
        &app,
        &format!("{TIME}?from=2026-11-04&to=2026-11-06&tagId={}", urgent["id"].as_str().unwrap()),
    )
    .await;
    assert_eq!(all_ids(&tagged), logged_ids(&|d| d == 6), "the days from and to, both included");
    // A last page exactly full has no next link.
    assert_eq!(pages(&app, &format!("{month}&limit=7")).await.len(), 1);

    let other = format!("{TIME}?date=2026-11-01");
    for (query, message) in [
        (format!("{month}&limit=0"), "limit: must be a whole number from 1 to 1000"),
        (format!("{month}&limit=1001"), "limit: must be a whole number from 1 to 1000"),
        (format!("{month}&cursor=not-ours"), "cursor: is not a cursor of this listing"),
        (format!("{month}&projectId=42"), "projectId: must be a UUID"),
        (format!("{month}&tagId=x"), "tagId: must be a UUID"),
        (format!("{TIME}?from=2026-01-01&to=2027-01-02"), "to: the period may be at most 366 days"),
        (format!("{TIME}?from=2026-11-02&to=2026-11-01"), "to: must not be before from"),
        (format!("{TIME}?from=2026-11-02"), "to: is required with from"),
        (format!("{TIME}?from=2026-11-31&to=2026-12-01"), "from: must be a date YYYY-MM-DD"),
        (
            format!("{other}&from=2026-11-01&to=2026-11-02"),
            "date: give either date (with frequency) or from and to, not both",
        ),
        (
            format!("{TIME}?from=2026-11-01&to=2026-11-02&frequency=week"),
            "frequency: is only taken with date",
        ),
        (TIME.to_owned(), "date: is required (or from and to)"),
    ] {
        let answer = expect(&app, &app.key, Method::GET, &query, None, 400).await;
        assert_eq!(answer["error"], message, "{query}");
    }
    // 366 days is the most; a leap year's whole is within it.
    expect(&app, &app.key, Method::GET, &format!("{TIME}?from=2028-01-01&to=2028-12-31"), None, 200).await;
}

#[tokio::test]
async fn tags_projects_and_sections_are_read_one_by_one() {
    let app = spawn_app().await;
    let website = project(&app, "Website", Some("WEB")).await;
    let design = section(&app, &website, "Design").await;
    let urgent = tag(&app, "urgent").await;
    for (base, made) in [(TAGS, &urgent), (PROJECTS, &website), (SECTIONS, &design)] {
        let read = expect(&app, &app.key, Method::GET, &at(&made["id"], base), None, 200).await;
        assert_eq!(&read, made, "{base}");
        expect(&app, &app.key, Method::GET, &format!("{base}/{}", uuid::Uuid::now_v7()), None, 404).await;
        expect(&app, &app.key, Method::GET, &format!("{base}/not-an-id"), None, 404).await;
    }
    // Another team sees none of them.
    let team = create_team(&app.store, "Globex").await;
    let owner = create_user(&app.store, team, Role::Owner).await;
    let (_, theirs) = create_key(&app.store, team, owner, Scope::Write, None).await;
    for (base, made) in [(TAGS, &urgent), (PROJECTS, &website), (SECTIONS, &design)] {
        let answer = expect(&app, &theirs, Method::GET, &at(&made["id"], base), None, 404).await;
        assert!(answer["error"].as_str().unwrap().ends_with("not found"), "{answer}");
    }
}

#[tokio::test]
async fn projects_filter_by_status_and_text_and_tags_and_sections_page_by_title() {
    let app = spawn_app().await;
    let website = project(&app, "Website", Some("WEB")).await;
    project(&app, "Mobile app", Some("APP")).await;
    let archived = project(&app, "Archive", None).await;
    let path = at(&archived["id"], "/v1/track/projects");
    expect(
        &app,
        &app.key,
        Method::PUT,
        &path,
        Some(json!({"id": archived["id"], "data": {"status": "ARCHIVED"}})),
        200,
    )
    .await;
    let titles = |pages: &[Value]| -> Vec<String> {
        pages
            .iter()
            .flat_map(|p| p.as_array().unwrap().iter().map(|x| x["title"].as_str().unwrap().to_owned()))
            .collect()
    };
    let listed = async |query: &str| titles(&pages(&app, query).await);
    assert_eq!(listed("/v1/track/projects?status=ACTIVE").await, ["Mobile app", "Website"]);
    assert_eq!(listed("/v1/track/projects?status=ARCHIVED&status=PENDING").await, ["Archive"]);
    assert_eq!(listed("/v1/track/projects?q=web").await, ["Website"], "the code or the title");
    assert_eq!(listed("/v1/track/projects?q=app").await, ["Mobile app"]);
    assert_eq!(pages(&app, "/v1/track/projects?limit=2").await.len(), 2);
    for title in ["b", "A", "c"] {
        tag(&app, title).await;
        section(&app, &website, title).await;
    }
    let tag_pages = pages(&app, "/v1/track/tags?limit=2").await;
    assert_eq!((tag_pages.len(), titles(&tag_pages)), (2, vec!["A".to_owned(), "b".into(), "c".into()]));
    let sections = format!("/v1/track/sections?projectId={}&limit=1", website["id"].as_str().unwrap());
    assert_eq!(titles(&pages(&app, &sections).await), ["A", "b", "c"]);
    for (query, message) in [
        ("/v1/track/projects?status=DONE", "status: must be one of PENDING, ACTIVE, COMPLETED, ARCHIVED"),
        ("/v1/track/tags?limit=x", "limit: must be a whole number from 1 to 1000"),
        ("/v1/track/tags?cursor=x", "cursor: is not a cursor of this listing"),
    ] {
        assert_eq!(expect(&app, &app.key, Method::GET, query, None, 400).await["error"], message, "{query}");
    }
}
