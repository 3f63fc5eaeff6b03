//! Instants outside the years 0001–9999 in UTC are refused on every date field, and the
//! last instant of 9999 is stored, listed, paged and shown like any other.

use acceptance::spawn_app;
use reqwest::Method;
use serde_json::{Value, json};

use super::pages;
use super::track::{TIME, at, entry, expect, refused, with};

const INVOICES: &str = "/v1/invoices";
const OUTSIDE: &str = "must fall in the years 0001 to 9999 in UTC";

#[tokio::test]
async fn every_date_field_refuses_instants_outside_the_years_0001_to_9999() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Buyer").await;
    let invoice = json!({"clientId": client["id"],
                         "lineItems": [{"description": "x", "unitPrice": 1, "quantity": 1}]});
    let made = expect(&app, &app.key, Method::POST, INVOICES, Some(invoice.clone()), 201).await;
    let logged = expect(&app, &app.key, Method::POST, TIME, Some(entry("2026-11-20")), 201).await;
    for late in
        ["9999-12-31T23:59:59-23:59", "9999-12-31T23:00:00-01:00", "0000-12-31", "0001-01-01T00:00:00+01:00"]
    {
        for field in ["issueDate", "dueDate"] {
            let body = with(invoice.clone(), &json!({field: late}));
            let message = refused(&app, &app.key, Method::POST, INVOICES, body).await;
            assert_eq!(message, format!("{field}: {OUTSIDE}"), "{late}");
            let path = at(&made["id"], INVOICES);
            let message = refused(&app, &app.key, Method::PATCH, &path, json!({field: late})).await;
            assert_eq!(message, format!("{field}: {OUTSIDE}"), "{late}");
        }
        let message = refused(&app, &app.key, Method::POST, TIME, entry(late)).await;
        assert_eq!(message, format!("date: {OUTSIDE}"));
        let path = at(&logged["id"], TIME);
        let message = refused(&app, &app.key, Method::PATCH, &path, json!({"date": late})).await;
        assert_eq!(message, format!("date: {OUTSIDE}"));
        let listing = format!("{TIME}?date={}", late.replace('+', "%2B"));
        let answer = expect(&app, &app.key, Method::GET, &listing, None, 400).await;
        assert_eq!(answer["error"], format!("date: {OUTSIDE}"));
    }
}

#[tokio::test]
async fn the_last_instant_of_the_year_9999_is_listed_paged_and_shown_as_rfc_3339() {
    let app = spawn_app().await;
    let last = "9999-12-31T23:59:59.999Z";
    let logged =
        expect(&app, &app.key, Method::POST, TIME, Some(entry("9999-12-31T23:59:59.999+00:00")), 201).await;
    assert_eq!(logged["date"], last);
    for frequency in ["day", "week", "month"] {
        let listed = app.get_json(&format!("{TIME}?date=9999-12-31&frequency={frequency}")).await;
        assert_eq!(listed.as_array().map(Vec::len), Some(1), "{frequency}: {listed}");
    }
    let listed = app.get_json(&format!("{TIME}?from=9999-12-01&to=9999-12-31")).await;
    assert_eq!(listed[0]["date"], last);

    let client = app.create_client(&app.key, "Buyer").await;
    let mut serials = Vec::new();
    for issued in ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59-00:00", "0001-01-01T00:00:00Z"] {
        let body = json!({"clientId": client["id"], "issueDate": issued, "dueDate": last,
                          "lineItems": [{"description": "x", "unitPrice": 1, "quantity": 1}]});
        let invoice = expect(&app, &app.key, Method::POST, INVOICES, Some(body), 201).await;
        assert_eq!(invoice["dueDate"], last);
        serials.push(invoice["serial"].clone());
    }
    // The last day of 9999 is a day like any other to filter on.
    let on_the_last_day =
        app.get_json(&format!("{INVOICES}?issuedFrom=9999-12-31&issuedTo=9999-12-31")).await;
    assert_eq!(on_the_last_day.as_array().map(Vec::len), Some(2), "{on_the_last_day}");
    // Newest issue date first; a page at a time through the `Link` cursors.
    let shown: Vec<Value> = pages(&app, &format!("{INVOICES}?limit=1"))
        .await
        .iter()
        .map(|page| page[0]["serial"].clone())
        .collect();
    assert_eq!(shown, [serials[0].clone(), serials[1].clone(), serials[2].clone()]);
}
