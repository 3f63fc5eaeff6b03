//! Random invoices through the real server: what is stored, what is shown and what is
//! recomputed agree to the minor unit, on the backend `TEST_BACKEND` names.

use acceptance::{TestApp, spawn_app};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use reqwest::Method;
use serde_json::{Value, json};

use super::invoices::team_in;

/// A line as integers: the price in millionths (at most 10¹² whole), the quantity in
/// millionths (more than 0, at most 10⁹ whole).
type Line = (u64, u64);

/// How an invoice's tax is given: a percentage in ten-thousandths, or a flat amount in
/// millionths.
#[derive(Debug, Clone, Copy)]
enum Tax {
    Percentage(u64),
    Flat(u64),
}

/// `units × 10^-scale` as JSON number text, trailing zeros kept as a client might send them.
fn decimal(units: u128, scale: u32) -> String {
    let text = format!("{units:0>width$}", width = scale as usize + 1);
    let (whole, fraction) = text.split_at(text.len() - scale as usize);
    if fraction.is_empty() { whole.to_owned() } else { format!("{whole}.{fraction}") }
}

/// `numerator / 10^shift` rounded half away from zero (all values here are ≥ 0).
fn rounded(numerator: u128, shift: u32) -> u128 {
    let divisor = 10_u128.pow(shift);
    (numerator + divisor / 2) / divisor
}

/// A magnitude spread over every order, so both cents and 10¹² turn up.
fn spread(max_whole: u64, decimals: u32) -> impl Strategy<Value = u64> {
    let max = max_whole * 10_u64.pow(decimals);
    (0..=18_u32).prop_flat_map(move |digits| 0..=10_u64.saturating_pow(digits).min(max))
}

fn line() -> impl Strategy<Value = Line> {
    (spread(1_000_000_000_000, 6), spread(1_000_000_000, 6).prop_map(|q| q.max(1)))
}

fn tax() -> impl Strategy<Value = Tax> {
    prop_oneof![spread(100, 4).prop_map(Tax::Percentage), spread(1_000_000_000_000, 6).prop_map(Tax::Flat)]
}

/// The totals worked out here on integers, independently of billing's decimals.
fn expected(lines: &[Line], tax: Tax, minor: u32) -> (Vec<String>, [String; 3]) {
    let amounts: Vec<u128> = lines
        .iter()
        .map(|(price, quantity)| rounded(u128::from(*price) * u128::from(*quantity), 12 - minor))
        .collect();
    let subtotal: u128 = amounts.iter().sum();
    let tax = match tax {
        // subtotal (minor units) × p / 10⁴ / 100.
        Tax::Percentage(p) => rounded(subtotal * u128::from(p), 6),
        Tax::Flat(flat) => rounded(u128::from(flat), 6 - minor),
    };
    let shown = |units| decimal(units, minor);
    (amounts.into_iter().map(shown).collect(), [shown(subtotal), shown(tax), shown(subtotal + tax)])
}

fn body(client: &str, lines: &[Line], tax: Tax) -> Value {
    let items: Vec<Value> = lines
        .iter()
        .map(|(price, quantity)| {
            let number =
                |units, scale| serde_json::from_str::<Value>(&decimal(u128::from(units), scale)).unwrap();
            json!({"description": "x", "unitPrice": number(*price, 6), "quantity": number(*quantity, 6)})
        })
        .collect();
    let mut body = json!({"clientId": client, "lineItems": items});
    let (field, units, scale) = match tax {
        Tax::Percentage(p) => ("taxPercentage", p, 4),
        Tax::Flat(flat) => ("tax", flat, 6),
    };
    body[field] = serde_json::from_str(&decimal(u128::from(units), scale)).unwrap();
    body
}

fn sums(invoice: &Value) -> (Vec<String>, [String; 3]) {
    let text = |value: &Value| {
        assert!(value.is_number(), "{value}");
        value.to_string()
    };
    let amounts = invoice["lineItems"].as_array().unwrap().iter().map(|item| text(&item["amount"])).collect();
    (amounts, [text(&invoice["subtotal"]), text(&invoice["tax"]), text(&invoice["total"])])
}

/// Makes the invoice, reads it back alone and in the listing, and changes it: every answer
/// shows the sums worked out independently.
async fn check(app: &TestApp, key: &str, client: &str, minor: u32, lines: &[Line], tax: Tax) {
    let want = expected(lines, tax, minor);
    let response =
        app.request(Method::POST, "/v1/invoices", key).json(&body(client, lines, tax)).send().await.unwrap();
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    assert_eq!(sums(&created), want, "created");
    let path = format!("/v1/invoices/{}", created["id"].as_str().unwrap());
    let read: Value = app.request(Method::GET, &path, key).send().await.unwrap().json().await.unwrap();
    assert_eq!(read, created, "stored as shown");
    // A change of the tax alone recomputes the stored items' sums.
    let doubled = match tax {
        Tax::Percentage(p) => Tax::Percentage((p * 2).min(1_000_000)),
        Tax::Flat(flat) => Tax::Flat(flat / 2),
    };
    let with_new_tax = body(client, lines, doubled);
    let tax_only: serde_json::Map<String, Value> = with_new_tax
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| k.starts_with("tax"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let response = app.request(Method::PATCH, &path, key).json(&tax_only).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let changed: Value = response.json().await.unwrap();
    assert_eq!(sums(&changed), expected(lines, doubled, minor), "recomputed");
}

#[test]
fn random_invoices_are_stored_shown_and_recomputed_alike() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (app, teams) = runtime.block_on(async {
        let app = spawn_app().await;
        let mut teams = Vec::new();
        for (currency, minor) in [("USD", 2), ("JPY", 0), ("KWD", 3), ("CLF", 4)] {
            let key = team_in(&app, currency).await;
            let client = app.create_client(&key, "Buyer").await["id"].as_str().unwrap().to_owned();
            teams.push((key, client, minor));
        }
        (app, teams)
    });
    let strategy = (0..teams.len(), prop::collection::vec(line(), 1..12), tax());
    let mut runner = TestRunner::new(Config { cases: 48, ..Config::default() });
    runner
        .run(&strategy, |(team, lines, tax)| {
            let (key, client, minor) = &teams[team];
            runtime.block_on(check(&app, key, client, *minor, &lines, tax));
            Ok(())
        })
        .unwrap();
}
