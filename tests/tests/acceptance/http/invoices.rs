//! `/v1/invoices` and the public PDF link, through the real server.

use acceptance::{TestApp, create_key, create_user, serve_config, spawn_app, spawn_app_with};
use accounts::{Currency, Permission, Role, Scope, TeamName};
use kernel::{Clock, SystemClock};
use reqwest::Method;
use serde_json::{Value, json};

use super::track::expect;
use super::{error_of, pages};

const INVOICES: &str = "/v1/invoices";

/// A number member as its exact JSON text.
fn num(value: &Value) -> String {
    assert!(value.is_number(), "{value} is a number");
    value.to_string()
}

async fn client_id(app: &TestApp) -> String {
    app.create_client(&app.key, "Zoë Łukasiewicz — Ёлка ΑΒΓ").await["id"].as_str().unwrap().to_owned()
}

async fn post(app: &TestApp, key: &str, body: &Value) -> reqwest::Response {
    app.request(Method::POST, INVOICES, key).json(body).send().await.unwrap()
}

async fn create(app: &TestApp, body: &Value) -> Value {
    let response = post(app, &app.key, body).await;
    assert_eq!(response.status(), 201, "{body}");
    response.json().await.unwrap()
}

async fn refused(app: &TestApp, method: Method, path: &str, body: &Value) -> String {
    let response = app.request(method, path, &app.key).json(body).send().await.unwrap();
    assert_eq!(response.status(), 400, "{body}");
    error_of(response).await
}

/// A one-item invoice for `client`.
async fn simple_invoice(app: &TestApp, client: &str) -> Value {
    create(app, &json!({"clientId": client, "lineItems": items(&[("A", json!(1), json!(1))])})).await
}

/// A JSON number with exactly the digits of `text`.
fn exact(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

fn items(list: &[(&str, Value, Value)]) -> Value {
    list.iter().map(|(d, p, q)| json!({"description": d, "unitPrice": p, "quantity": q})).collect()
}

#[tokio::test]
async fn create_read_list_patch_mark_delete() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let body = json!({
        "clientId": client, "description": "November work", "issueDate": "2026-11-20",
        "dueDate": "2026-12-20T00:00:00+01:00", "taxPercentage": 19,
        "lineItems": [
            {"description": "Design", "unitPrice": 100, "quantity": 1, "amount": 100},
            {"description": "Ёлка", "unitPrice": 0.5, "quantity": 3, "amount": 1.5}
        ]
    });
    let response = post(&app, &app.key, &body).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created: Value = response.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(location, format!("{INVOICES}/{id}"));
    assert_eq!(created["serial"], "INV-0001");
    assert_eq!(created["status"], "PENDING");
    assert_eq!(created["currency"], "EUR");
    assert_eq!(created["clientId"], client);
    assert_eq!(created["teamId"], app.team.to_string());
    assert_eq!(created["issueDate"], "2026-11-20T00:00:00.000Z");
    assert_eq!(created["dueDate"], "2026-12-19T23:00:00.000Z");
    assert_eq!(created["description"], "November work");
    assert!(created["sendersAddressId"].as_str().unwrap().len() == 36);
    assert_eq!(
        (
            num(&created["subtotal"]),
            num(&created["taxPercentage"]),
            num(&created["tax"]),
            num(&created["total"])
        ),
        ("101.50".into(), "19".into(), "19.29".into(), "120.79".into())
    );
    let lines = created["lineItems"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!((&lines[0]["position"], &lines[1]["position"]), (&json!(0), &json!(1)));
    assert_eq!(
        (num(&lines[1]["unitPrice"]), num(&lines[1]["quantity"]), num(&lines[1]["amount"])),
        ("0.5".into(), "3".into(), "1.50".into())
    );
    assert_eq!(lines[1]["invoiceId"], id);
    for field in ["id", "description", "createdAt", "updatedAt"] {
        assert!(lines[0].get(field).is_some(), "{field}");
    }

    let fetched: Value =
        app.request(Method::GET, &location, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(fetched, created);
    let listed: Value =
        app.request(Method::GET, INVOICES, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(listed, json!([created]));

    // Only the given fields change; new items replace the old and the totals follow.
    let patch =
        json!({"description": null, "lineItems": [{"description": "Only", "unitPrice": 10, "quantity": 2}]});
    let response = app.request(Method::PATCH, &location, &app.key).json(&patch).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let patched: Value = response.json().await.unwrap();
    assert_eq!(patched["description"], Value::Null);
    assert_eq!(patched["dueDate"], created["dueDate"]);
    assert_eq!(patched["serial"], "INV-0001");
    assert_eq!(
        (num(&patched["subtotal"]), num(&patched["tax"]), num(&patched["total"])),
        ("20.00".into(), "3.80".into(), "23.80".into())
    );
    assert_eq!(patched["lineItems"].as_array().unwrap().len(), 1);
    let response = app
        .request(Method::PATCH, &location, &app.key)
        .json(&json!({"taxPercentage": 0, "tax": 2.5}))
        .send()
        .await
        .unwrap();
    let flat: Value = response.json().await.unwrap();
    assert_eq!(
        (num(&flat["taxPercentage"]), num(&flat["tax"]), num(&flat["total"])),
        ("0".into(), "2.50".into(), "22.50".into())
    );

    let response = app.request(Method::PATCH, &format!("{location}/mark"), &app.key).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let paid: Value = response.json().await.unwrap();
    assert_eq!(paid["status"], "PAID");
    assert_eq!(num(&paid["total"]), "22.50");

    // Marking it paid recorded a payment, which the books keep; an invoice without one goes.
    assert_eq!((num(&paid["amountPaid"]), num(&paid["amountDue"])), ("22.50".into(), "0.00".into()));
    assert_eq!(app.request(Method::DELETE, &location, &app.key).send().await.unwrap().status(), 409);
    let location = format!("{INVOICES}/{}", simple_invoice(&app, &client).await["id"].as_str().unwrap());
    let response = app.request(Method::DELETE, &location, &app.key).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.json::<Value>().await.unwrap(), json!({"message": "invoice deleted"}));
    for method in [Method::GET, Method::PATCH, Method::DELETE] {
        let response =
            app.request(method.clone(), &location, &app.key).json(&json!({})).send().await.unwrap();
        assert_eq!(response.status(), 404, "{method}");
        assert_eq!(error_of(response).await, "invoice not found");
    }
    let response = app.request(Method::PATCH, &format!("{location}/mark"), &app.key).send().await.unwrap();
    assert_eq!(response.status(), 404);
    // The next invoice does not reuse the deleted one's serial.
    let next = simple_invoice(&app, &client).await;
    assert_eq!(next["serial"], "INV-0003");
}

/// A team in `currency` with an owner's write key.
pub(super) async fn team_in(app: &TestApp, currency: &str) -> String {
    let team = accounts::new_team(
        TeamName::parse("Other").unwrap(),
        Currency::parse(currency).unwrap(),
        SystemClock.now(),
    );
    app.store.accounts().create_team(&team).await.unwrap();
    let owner = create_user(&app.store, team.id, Role::Owner).await;
    create_key(&app.store, team.id, owner, Scope::Write, None).await.1
}

#[tokio::test]
async fn totals_on_representative_cases() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let cases = [
        (json!({"lineItems": items(&[("A", json!(19.99), json!(3))])}), ("59.97", "0.00", "59.97")),
        (
            json!({"taxPercentage": 7.5, "lineItems": items(&[("A", json!(19.99), json!(3))])}),
            ("59.97", "4.50", "64.47"),
        ),
        (
            json!({"taxPercentage": 19, "tax": 19.29, "lineItems": items(&[("A", json!(100), json!(1)), ("B", json!(0.5), json!(3))])}),
            ("101.50", "19.29", "120.79"),
        ),
        (
            json!({"tax": 12.345, "lineItems": items(&[("A", json!(80), json!(1))])}),
            ("80.00", "12.35", "92.35"),
        ),
        (
            // Sent as the text a float-minded client writes, not through f64.
            serde_json::from_str::<Value>(
                r#"{"lineItems": [{"description": "A", "unitPrice": 0.1, "quantity": 3, "amount": 0.30000000000000004}]}"#,
            )
            .unwrap(),
            ("0.30", "0.00", "0.30"),
        ),
        (json!({"lineItems": items(&[("A", json!(0.125), json!(1))])}), ("0.13", "0.00", "0.13")),
    ];
    for (mut body, (subtotal, tax, total)) in cases {
        body["clientId"] = json!(client);
        let invoice = create(&app, &body).await;
        assert_eq!(
            (num(&invoice["subtotal"]), num(&invoice["tax"]), num(&invoice["total"])),
            (subtotal.into(), tax.into(), total.into()),
            "{body}"
        );
    }

    let yen = team_in(&app, "JPY").await;
    let yen_client = app.create_client(&yen, "Tanaka").await["id"].as_str().unwrap().to_owned();
    let body = json!({"clientId": yen_client, "taxPercentage": 10, "lineItems": items(&[("A", json!(1234.5), json!(3))])});
    let response = post(&app, &yen, &body).await;
    assert_eq!(response.status(), 201);
    let invoice: Value = response.json().await.unwrap();
    assert_eq!(invoice["currency"], "JPY");
    assert_eq!(
        (num(&invoice["subtotal"]), num(&invoice["tax"]), num(&invoice["total"])),
        ("3704".into(), "370".into(), "4074".into())
    );
}

/// A one-item invoice body for `client`, with `extra`'s members set over it.
fn one_item_invoice(client: &str, extra: Value) -> Value {
    let mut body = json!({"clientId": client, "lineItems": items(&[("A", json!(1), json!(1))])});
    let Value::Object(members) = extra else { panic!("extra members are an object") };
    for (name, value) in members {
        body[name] = value;
    }
    body
}

#[tokio::test]
async fn every_field_is_validated_and_named() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let one = items(&[("A", json!(1), json!(1))]);
    let with = |extra: Value| one_item_invoice(&client, extra);
    let cases = [
        (json!({"clientId": client}), "lineItems: is required"),
        (with(json!({"lineItems": []})), "lineItems: must have at least 1 item"),
        (
            with(json!({"lineItems": items(&[("A", json!(1), json!(0))])})),
            "lineItems[0].quantity: must be greater than 0",
        ),
        (
            with(json!({"lineItems": items(&[("A", json!(1), json!(1)), ("B", json!(-1), json!(1))])})),
            "lineItems[1].unitPrice: must be at least 0",
        ),
        (
            with(
                json!({"lineItems": [{"description": "A", "unitPrice": 0.1, "quantity": 3, "amount": 0.31}]}),
            ),
            "lineItems[0].amount: must equal unitPrice × quantity = 0.30",
        ),
        (
            with(json!({"lineItems": [{"description": "A", "unitPrice": "1", "quantity": 1}]})),
            "lineItems[0].unitPrice: invalid type",
        ),
        (
            with(json!({"lineItems": [{"description": "A", "unitPrice": 1, "quantity": 1, "x": 1}]})),
            "lineItems[0].x: not accepted",
        ),
        (with(json!({"subtotal": 5})), "subtotal: not accepted"),
        (with(json!({"total": 5})), "total: not accepted"),
        (json!({"lineItems": one}), "clientId: is required when client is not given"),
        (
            with(json!({"client": {"email": "a@example.com", "name": "A"}})),
            "client: give either clientId or client, not both",
        ),
        (with(json!({"clientId": "nope"})), "clientId: no such client in the team"),
        (with(json!({"clientId": uuid::Uuid::now_v7()})), "clientId: no such client in the team"),
        (
            with(json!({"sendersAddressId": uuid::Uuid::now_v7()})),
            "sendersAddressId: no such sender address in the team",
        ),
        (
            with(json!({"taxPercentage": 19, "tax": 1})),
            "tax: must equal subtotal × taxPercentage / 100 = 0.19, or be left out",
        ),
        (with(json!({"taxPercentage": 101})), "taxPercentage: must be at most 100"),
        (with(json!({"tax": -1})), "tax: must be at least 0"),
        (
            with(json!({"status": "paid"})),
            "status: must be one of PENDING, PAID, PAID_PARTIAL, EXPIRED, OVERDUE",
        ),
        (with(json!({"issueDate": "yesterday"})), "issueDate: "),
        (
            with(json!({"issueDate": "2026-11-20", "dueDate": "2026-11-19"})),
            "dueDate: must not be before issueDate",
        ),
        (with(json!({"description": "x".repeat(1001)})), "description: must be at most 1000 characters"),
        (json!({"client": {"email": "not-an-email", "name": "A"}, "lineItems": one}), "client.email: "),
        (
            json!({"client": {"email": "new@example.com", "name": "A", "address": {"postalCode": "x".repeat(33)}}, "lineItems": one}),
            "client.address.postalCode: must be at most 32 characters",
        ),
    ];
    for (body, expected) in cases {
        let message = refused(&app, Method::POST, INVOICES, &body).await;
        assert!(message.starts_with(expected), "{body}: {message:?} does not start with {expected:?}");
    }
    // Nothing was written by any of them: the first invoice is still INV-0001.
    assert_eq!(
        app.request(Method::GET, INVOICES, &app.key).send().await.unwrap().json::<Value>().await.unwrap(),
        json!([])
    );
    assert_eq!(create(&app, &with(json!({}))).await["serial"], "INV-0001");
}

#[tokio::test]
async fn money_beyond_its_bounds_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let with = |extra: Value| one_item_invoice(&client, extra);
    let cases = [
        (
            with(json!({"lineItems": items(&[("A", json!(1e13), json!(1))])})),
            "lineItems[0].unitPrice: must be at most 1000000000000",
        ),
        (
            with(json!({"lineItems": items(&[("A", exact("0.1234567"), json!(1))])})),
            "lineItems[0].unitPrice: must have at most 6 decimal places",
        ),
        (
            with(json!({"lineItems": items(&[("A", json!(1), exact(&format!("1.{}1", "0".repeat(398))))])})),
            "lineItems[0].quantity: must have at most 6 decimal places",
        ),
        (
            with(json!({"lineItems": items(&[("A", json!(1), exact("1e-7"))])})),
            "lineItems[0].quantity: must have at most 6 decimal places",
        ),
        (
            with(json!({"taxPercentage": exact("8.87501")})),
            "taxPercentage: must have at most 4 decimal places",
        ),
        (
            with(json!({"tax": exact(&format!("{}1", "9".repeat(399)))})),
            "tax: must be at most 1000000000000000000000",
        ),
        (with(json!({"tax": 1e22})), "tax: must be at most 1000000000000000000000"),
    ];
    for (body, expected) in cases {
        let message = refused(&app, Method::POST, INVOICES, &body).await;
        assert!(message.starts_with(expected), "{body}: {message:?} does not start with {expected:?}");
    }
}

#[tokio::test]
async fn the_largest_invoice_keeps_every_digit_and_the_minor_unit() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let largest = vec![json!({"description": "x", "unitPrice": 1e12, "quantity": 1e9}); 1000];
    let body = json!({"clientId": client, "lineItems": largest, "taxPercentage": 100});
    let created = create(&app, &body).await;
    let total = format!("2{}.00", "0".repeat(24));
    assert_eq!(num(&created["total"]), total);
    assert_eq!(num(&created["lineItems"][999]["amount"]), format!("1{}.00", "0".repeat(21)));
    let id = created["id"].as_str().unwrap();
    assert_eq!(num(&app.get_json(&format!("{INVOICES}/{id}")).await["total"]), total);
    // A product of 36 digits, worked out whole and rounded once.
    let odd = items(&[("y", exact("912702340527.064441"), exact("477781726.297155"))]);
    let created = create(&app, &json!({"clientId": client, "lineItems": odd})).await;
    assert_eq!(num(&created["lineItems"][0]["amount"]), "436072499852474662333.52");
}

#[tokio::test]
async fn patches_are_validated_and_change_nothing_when_refused() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let created = simple_invoice(&app, &client).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let path = format!("{INVOICES}/{id}");
    let patches = [
        (json!({"subtotal": 1}), "subtotal: not accepted"),
        (json!({"status": null}), "status: must not be null"),
        (json!({"lineItems": null}), "lineItems: must not be null"),
        (json!({"lineItems": []}), "lineItems: must have at least 1 item"),
        (json!({"clientId": uuid::Uuid::now_v7()}), "clientId: no such client in the team"),
        (
            json!({"issueDate": "2030-01-01", "dueDate": "2029-01-01"}),
            "dueDate: must not be before issueDate",
        ),
        (
            json!({"taxPercentage": 10, "tax": 3}),
            "tax: must equal subtotal × taxPercentage / 100 = 0.10, or be left out",
        ),
    ];
    for (body, expected) in patches {
        let message = refused(&app, Method::PATCH, &path, &body).await;
        assert!(message.starts_with(expected), "{body}: {message:?}");
    }
    let unchanged: Value =
        app.request(Method::GET, &path, &app.key).send().await.unwrap().json().await.unwrap();
    assert_eq!(unchanged, created);
}

#[tokio::test]
async fn inline_clients_are_matched_by_email_or_made() {
    let app = spawn_app().await;
    let existing = client_id(&app).await; // billing@example.com
    let one = items(&[("A", json!(1), json!(1))]);
    let matched = create(
        &app,
        &json!({"client": {"email": "Billing@Example.com", "name": "Whoever"}, "lineItems": one}),
    )
    .await;
    assert_eq!(matched["clientId"], existing);
    let made = create(
        &app,
        &json!({"client": {"email": "new@example.com", "name": "New Client", "address": {"line1": "2 High St", "postalCode": "SW1"}}, "lineItems": one}),
    )
    .await;
    assert_ne!(made["clientId"], existing);
    let client = client_of(&app, &made).await;
    assert_eq!(
        (&client["name"], &client["email"], &client["line1"], &client["postalCode"]),
        (&json!("New Client"), &json!("new@example.com"), &json!("2 High St"), &json!("SW1"))
    );
    // Without an address: the new client's address fields are empty.
    let bare =
        create(&app, &json!({"client": {"email": "bare@example.com", "name": "Bare"}, "lineItems": one}))
            .await;
    let client = client_of(&app, &bare).await;
    assert_eq!(
        [&client["email"], &client["line1"], &client["line2"], &client["line3"], &client["postalCode"]],
        [&json!("bare@example.com"), &json!(""), &json!(""), &json!(""), &json!("")]
    );
    // The client with invoices cannot be deleted now.
    let response = app
        .request(Method::DELETE, &format!("/v1/invoices/clients/{existing}"), &app.key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 409);
}

#[tokio::test]
async fn pending_invoices_past_due_read_overdue_and_lists_are_ordered() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let one = items(&[("A", json!(1), json!(1))]);
    let old = create(
        &app,
        &json!({"clientId": client, "issueDate": "2020-01-01", "dueDate": "2020-02-01", "lineItems": one}),
    )
    .await;
    assert_eq!(old["status"], "OVERDUE");
    let paid = create(&app, &json!({"clientId": client, "issueDate": "2020-01-01", "dueDate": "2020-02-01", "status": "PAID", "lineItems": one})).await;
    assert_eq!(paid["status"], "PAID");
    let newest =
        create(&app, &json!({"clientId": client, "issueDate": "2026-01-01", "lineItems": one})).await;
    let listed: Vec<Value> =
        app.request(Method::GET, INVOICES, &app.key).send().await.unwrap().json().await.unwrap();
    let serials: Vec<&Value> = listed.iter().map(|i| &i["serial"]).collect();
    assert_eq!(serials, [&newest["serial"], &paid["serial"], &old["serial"]]);
    // Clearing the due date ends the overdue state.
    let path = format!("{INVOICES}/{}", old["id"].as_str().unwrap());
    let cleared: Value = app
        .request(Method::PATCH, &path, &app.key)
        .json(&json!({"dueDate": null}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!((&cleared["status"], &cleared["dueDate"]), (&json!("PENDING"), &Value::Null));
}

/// The serials of a listing's pages, page by page.
fn serials_of(pages: &[Value]) -> Vec<Vec<String>> {
    let serials = |page: &Value| {
        page.as_array().unwrap().iter().map(|i| i["serial"].as_str().unwrap().to_owned()).collect()
    };
    pages.iter().map(serials).collect()
}

#[tokio::test]
async fn invoices_filter_by_status_client_issue_date_and_text_and_page_through_link_headers() {
    let app = spawn_app().await;
    let acme = client_id(&app).await;
    let bright = app.create_client(&app.key, "Bright Ideas Ltd").await["id"].as_str().unwrap().to_owned();
    let one = items(&[("Work", json!(1), json!(1))]);
    // INV-0001..0005, issued 1 to 5 November 2020; the first three long overdue, the fourth
    // paid, the fifth with no due date.
    for day in 1..=5 {
        let client = if day % 2 == 0 { &bright } else { &acme };
        let mut body = json!({"clientId": client, "issueDate": format!("2020-11-0{day}"), "lineItems": one,
                              "description": format!("Sprint {day}")});
        match day {
            1..=3 => body["dueDate"] = json!("2020-12-01"),
            4 => body["status"] = json!("PAID"),
            _ => {}
        }
        create(&app, &body).await;
    }
    let listed = async |query: &str| serials_of(&pages(&app, &format!("{INVOICES}?{query}")).await).concat();
    let serials = |numbers: &[u32]| numbers.iter().map(|n| format!("INV-{n:04}")).collect::<Vec<_>>();
    assert_eq!(listed("").await, serials(&[5, 4, 3, 2, 1]));
    assert_eq!(listed("status=OVERDUE").await, serials(&[3, 2, 1]));
    assert_eq!(listed("status=PENDING&status=PAID").await, serials(&[5, 4]));
    assert_eq!(listed(&format!("clientId={bright}")).await, serials(&[4, 2]));
    assert_eq!(
        listed("issuedFrom=2020-11-02&issuedTo=2020-11-03").await,
        serials(&[3, 2]),
        "both days included"
    );
    assert_eq!(listed("q=inv-2").await, serials(&[2]));
    assert_eq!(listed("q=SPRINT%205").await, serials(&[5]));
    assert_eq!(listed("q=bright&status=OVERDUE").await, serials(&[2]), "filters narrow together");
    let paged = pages(&app, &format!("{INVOICES}?limit=2&status=PENDING&status=OVERDUE")).await;
    assert_eq!(serials_of(&paged), [serials(&[5, 3]), serials(&[2, 1])]);

    for (query, message) in [
        ("status=LATE", "status: must be one of PENDING, PAID, PAID_PARTIAL, EXPIRED, OVERDUE"),
        ("clientId=42", "clientId: must be a UUID"),
        ("issuedFrom=2020-13-01", "issuedFrom: must be a date YYYY-MM-DD"),
        ("issuedFrom=2020-11-02&issuedTo=2020-11-01", "issuedTo: must not be before issuedFrom"),
        ("q=", "q: must not be empty"),
        ("limit=0", "limit: must be a whole number from 1 to 1000"),
        ("cursor=bm90IG91cnM", "cursor: is not a cursor of this listing"),
        ("clientId=a&clientId=b", "clientId: invalid type: array, expected a string"),
    ] {
        let response =
            app.request(Method::GET, &format!("{INVOICES}?{query}"), &app.key).send().await.unwrap();
        assert_eq!(response.status(), 400, "{query}");
        assert_eq!(error_of(response).await, message, "{query}");
    }
}

#[tokio::test]
async fn other_teams_invoices_are_invisible() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let invoice = simple_invoice(&app, &client).await;
    let path = format!("{INVOICES}/{}", invoice["id"].as_str().unwrap());
    let theirs = team_in(&app, "EUR").await;
    for (method, path) in [
        (Method::GET, path.clone()),
        (Method::PATCH, path.clone()),
        (Method::DELETE, path.clone()),
        (Method::PATCH, format!("{path}/mark")),
    ] {
        let response = app.request(method.clone(), &path, &theirs).json(&json!({})).send().await.unwrap();
        assert_eq!(response.status(), 404, "{method} {path}");
        assert_eq!(error_of(response).await, "invoice not found");
    }
    assert_eq!(
        app.request(Method::GET, INVOICES, &theirs).send().await.unwrap().json::<Value>().await.unwrap(),
        json!([])
    );
    // Our client is not theirs to bill; their serials start at 1.
    let response =
        post(&app, &theirs, &json!({"clientId": client, "lineItems": items(&[("A", json!(1), json!(1))])}))
            .await;
    assert_eq!(error_of(response).await, "clientId: no such client in the team");
    let their_client = app.create_client(&theirs, "Theirs").await["id"].as_str().unwrap().to_owned();
    let response = post(&app, &theirs, &json!({"clientId": their_client, "sendersAddressId": invoice["sendersAddressId"], "lineItems": items(&[("A", json!(1), json!(1))])})).await;
    assert_eq!(error_of(response).await, "sendersAddressId: no such sender address in the team");
    let response = post(
        &app,
        &theirs,
        &json!({"clientId": their_client, "lineItems": items(&[("A", json!(1), json!(1))])}),
    )
    .await;
    assert_eq!(response.json::<Value>().await.unwrap()["serial"], "INV-0001");
    assert_eq!(app.request(Method::GET, &path, &app.key).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn scopes_decide_who_reads_and_writes_invoices() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let invoice = simple_invoice(&app, &client).await;
    let path = format!("{INVOICES}/{}", invoice["id"].as_str().unwrap());
    let key = async |scope| create_key(&app.store, app.team, app.owner, scope, None).await.1;
    let read_only = key(Scope::ReadOnly).await;
    let clients_only = key(Scope::Restricted([Permission::ClientsWrite].into())).await;
    let invoices_read = key(Scope::Restricted([Permission::InvoicesRead].into())).await;
    assert_eq!(app.request(Method::GET, &path, &read_only).send().await.unwrap().status(), 200);
    assert_eq!(app.request(Method::GET, &path, &invoices_read).send().await.unwrap().status(), 200);
    let body = json!({"clientId": client, "lineItems": items(&[("A", json!(1), json!(1))])});
    for key in [&read_only, &invoices_read] {
        let response = post(&app, key, &body).await;
        assert_eq!(response.status(), 403);
        assert_eq!(error_of(response).await, "this API key lacks the invoices:write permission");
        assert_eq!(
            app.request(Method::PATCH, &format!("{path}/mark"), key).send().await.unwrap().status(),
            403
        );
        assert_eq!(app.request(Method::DELETE, &path, key).send().await.unwrap().status(), 403);
    }
    let response = app.request(Method::GET, INVOICES, &clients_only).send().await.unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(error_of(response).await, "this API key lacks the invoices:read permission");
    let response = app.http.get(app.url(INVOICES)).send().await.unwrap();
    assert_eq!(response.status(), 401);
    // 403 comes before the body is looked at.
    let response =
        app.request(Method::POST, INVOICES, &read_only).json(&json!({"subtotal": 1})).send().await.unwrap();
    assert_eq!(response.status(), 403);
}

#[tokio::test]
async fn pdfs_are_public_by_unguessable_id() {
    let app = spawn_app().await;
    let client = client_id(&app).await;
    let invoice = simple_invoice(&app, &client).await;
    let id = invoice["id"].as_str().unwrap();
    let response = app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}"))).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/pdf");
    assert_eq!(response.headers()["content-disposition"], "inline; filename=\"INV-0001.pdf\"");
    assert!(response.bytes().await.unwrap().starts_with(b"%PDF-"));
    let response =
        app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}&download=true"))).send().await.unwrap();
    assert_eq!(response.headers()["content-disposition"], "attachment; filename=\"INV-0001.pdf\"");

    for (query, status, message) in [
        ("", 400, "id: is required"),
        ("?id=not-a-uuid", 404, "invoice not found"),
        (&format!("?id={}", uuid::Uuid::now_v7()) as &str, 404, "invoice not found"),
        (&format!("?id={id}&download=maybe") as &str, 400, "download: must be true or false"),
    ] {
        let response = app.http.get(app.url(&format!("/v1/invoices/pdf{query}"))).send().await.unwrap();
        assert_eq!(response.status(), status, "{query}");
        assert_eq!(error_of(response).await, message);
    }
}

#[tokio::test]
async fn a_failing_renderer_service_is_a_500() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut config = serve_config();
    config.pdf_renderer_url = Some(format!("http://{closed}"));
    let app = spawn_app_with(config).await;
    let client = client_id(&app).await;
    let invoice = simple_invoice(&app, &client).await;
    let response = app
        .http
        .get(app.url(&format!("/v1/invoices/pdf?id={}", invoice["id"].as_str().unwrap())))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(error_of(response).await, "failed to generate PDF");
}

#[tokio::test]
async fn the_proxy_renders_through_a_real_renderer_service() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(renderer::service::run(listener).unwrap());
    let mut config = serve_config();
    config.pdf_renderer_url = Some(format!("http://{address}"));
    let app = spawn_app_with(config).await;
    let client = client_id(&app).await;
    let invoice = simple_invoice(&app, &client).await;
    let url = app.url(&format!("/v1/invoices/pdf?id={}", invoice["id"].as_str().unwrap()));
    let response = app.http.get(&url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.bytes().await.unwrap().starts_with(b"%PDF-"));
}

/// The client an invoice is billed to, as `GET /v1/invoices/clients/{id}` shows it.
async fn client_of(app: &TestApp, invoice: &Value) -> Value {
    let path = format!("/v1/invoices/clients/{}", invoice["clientId"].as_str().unwrap());
    app.request(Method::GET, &path, &app.key).send().await.unwrap().json().await.unwrap()
}

#[tokio::test]
async fn an_invoice_keeps_its_vat_category_and_the_reason_it_charges_none() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Helvetia AG").await;
    let body = |extra: Value| {
        let mut body = json!({"clientId": client["id"],
            "lineItems": [{"description": "Consulting", "unitPrice": 1200, "quantity": 1}]});
        for (field, value) in extra.as_object().unwrap() {
            body[field] = value.clone();
        }
        body
    };
    let post =
        async |body: Value| app.request(Method::POST, INVOICES, &app.key).json(&body).send().await.unwrap();
    let standard: Value = post(body(json!({"taxPercentage": 19}))).await.json().await.unwrap();
    assert_eq!((&standard["vatCategory"], &standard["vatExemptionReason"]), (&json!("S"), &Value::Null));
    let export: Value =
        post(body(json!({"vatCategory": "G", "vatExemptionReason": "Export outside the EU"})))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!(
        (&export["vatCategory"], &export["vatExemptionReason"], export["tax"].to_string()),
        (&json!("G"), &json!("Export outside the EU"), "0.00".to_owned())
    );
    let read = app.get_json(&format!("{INVOICES}/{}", export["id"].as_str().unwrap())).await;
    assert_eq!(
        (&read["vatCategory"], &read["vatExemptionReason"]),
        (&json!("G"), &json!("Export outside the EU"))
    );
    for (extra, error) in [
        (
            json!({"vatCategory": "E"}),
            "vatExemptionReason: is required with vatCategory E: say why no VAT is charged",
        ),
        (
            json!({"vatCategory": "Z", "vatExemptionReason": "Zero rated"}),
            "vatExemptionReason: is not taken with vatCategory Z, which has no exemption; leave it out",
        ),
        (
            json!({"vatCategory": "AE", "vatExemptionReason": "Reverse charge", "taxPercentage": 19}),
            "taxPercentage: vatCategory AE charges no VAT: the tax must be 0 (taxPercentage 0 and no tax)",
        ),
        (json!({"vatExemptionReason": "Exempt"}), "vatExemptionReason: give it with vatCategory"),
        (json!({"vatCategory": "X"}), "vatCategory:"),
    ] {
        let response = post(body(extra.clone())).await;
        assert_eq!(response.status(), 400, "{extra}");
        let message = error_of(response).await;
        assert!(message.starts_with(error), "{extra}: {message}");
    }
    // A change of category: the standard invoice becomes reverse charge once its tax is 0.
    let location = format!("{INVOICES}/{}", standard["id"].as_str().unwrap());
    let change =
        async |body: Value| app.request(Method::PATCH, &location, &app.key).json(&body).send().await.unwrap();
    let refused = change(json!({"vatCategory": "AE", "vatExemptionReason": "Reverse charge"})).await;
    assert_eq!(refused.status(), 400);
    let changed: Value =
        change(json!({"vatCategory": "AE", "vatExemptionReason": "Reverse charge", "taxPercentage": 0}))
            .await
            .json()
            .await
            .unwrap();
    assert_eq!((&changed["vatCategory"], changed["total"].to_string()), (&json!("AE"), "1200.00".to_owned()));
}

#[tokio::test]
async fn a_line_counts_its_unit() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Helvetia AG").await;
    let lines = json!([
        {"description": "Workshop", "unitPrice": 900, "quantity": 2, "unitCode": "DAY"},
        {"description": "Licence", "unitPrice": 50, "quantity": 1}
    ]);
    let body = json!({"clientId": client["id"], "lineItems": lines});
    let made: Value =
        app.request(Method::POST, INVOICES, &app.key).json(&body).send().await.unwrap().json().await.unwrap();
    let units: Vec<&Value> =
        made["lineItems"].as_array().unwrap().iter().map(|item| &item["unitCode"]).collect();
    assert_eq!(units, [&json!("DAY"), &json!("C62")]);
    let refused = json!({"clientId": client["id"],
        "lineItems": [{"description": "Workshop", "unitPrice": 900, "quantity": 2, "unitCode": "day"}]});
    let response = app.request(Method::POST, INVOICES, &app.key).json(&refused).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(
        error_of(response).await,
        "lineItems[0].unitCode: must be a UN/ECE Recommendation 20 unit code of 2 or 3 capitals and digits, such as HUR or C62"
    );
}

#[tokio::test]
async fn an_invoice_states_its_service_time_and_purchase_order() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Acme").await;
    let base = json!({"clientId": client["id"], "issueDate": "2026-11-20",
                      "lineItems": [{"description": "Work", "unitPrice": 100, "quantity": 1}]});
    let mut body = base.clone();
    body["servicePeriod"] = json!({"from": "2026-11-01", "to": "2026-11-15"});
    body["purchaseOrder"] = json!("PO-4711");
    let invoice = expect(&app, &app.key, Method::POST, INVOICES, Some(body), 201).await;
    assert_eq!(
        (&invoice["servicePeriod"], &invoice["serviceDate"], &invoice["purchaseOrder"]),
        (&json!({"from": "2026-11-01", "to": "2026-11-15"}), &Value::Null, &json!("PO-4711"))
    );
    let path = format!("{INVOICES}/{}", invoice["id"].as_str().unwrap());
    // A day replaces the period; null takes the order off.
    let day = json!({"serviceDate": "2026-11-19", "purchaseOrder": null});
    let patched = expect(&app, &app.key, Method::PATCH, &path, Some(day), 200).await;
    assert_eq!(
        (&patched["servicePeriod"], &patched["serviceDate"], &patched["purchaseOrder"]),
        (&Value::Null, &json!("2026-11-19"), &Value::Null)
    );
    assert_eq!(app.get_json(&path).await, patched);
    let plain = expect(&app, &app.key, Method::POST, INVOICES, Some(base.clone()), 201).await;
    assert_eq!(
        (&plain["servicePeriod"], &plain["serviceDate"], &plain["purchaseOrder"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );

    for (extra, error) in [
        (
            json!({"serviceDate": "2026-11-01", "servicePeriod": {"from": "2026-11-01", "to": "2026-11-02"}}),
            "serviceDate: give either serviceDate or servicePeriod, not both",
        ),
        (
            json!({"servicePeriod": {"from": "2026-11-02", "to": "2026-11-01"}}),
            "servicePeriod.to: must not be before servicePeriod.from",
        ),
        (json!({"serviceDate": "2026-13-01"}), "serviceDate: must be a date YYYY-MM-DD"),
        (json!({"purchaseOrder": ""}), "purchaseOrder: must not be empty"),
    ] {
        let mut body = base.clone();
        for (field, value) in extra.as_object().unwrap() {
            body[field] = value.clone();
        }
        assert_eq!(refused(&app, Method::POST, INVOICES, &body).await, error, "{extra}");
    }
}
