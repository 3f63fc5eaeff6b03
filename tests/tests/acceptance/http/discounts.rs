//! Discounts through the real server: a line's and the whole invoice's, allocated to the VAT
//! groups, changed and removed, refused when they would take more than there is, carried by
//! credit notes and recurring templates, printed on the PDF, and every e-invoice of them
//! held to the official rules.

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{FORMATS, check_officially, e_invoicing_team, facturx_pdf, get, post, xml};
use super::error_of;
use super::vat_rates::{public_buyer, refused};

/// The docs' worked example: a book at 7 % with 10 % off, a workshop at 19 % with 100.00
/// off, and 5 % off the whole invoice.
fn book_and_workshop(client: &str) -> Value {
    json!({"clientId": client, "issueDate": "2026-11-02", "dueDate": "2026-12-02", "taxPercentage": 19,
        "discount": {"percentage": 5},
        "lineItems": [
            {"description": "Fachbuch", "unitPrice": 19.99, "quantity": 2, "taxPercentage": 7,
             "discount": {"percentage": 10}},
            {"description": "Workshop", "unitPrice": 1200, "quantity": 1, "discount": {"amount": 100}}]})
}

/// `subtotal`, `discountTotal`, `taxableAmount`, `tax` and `total` as the JSON writes them.
fn totals(document: &Value) -> [String; 5] {
    ["subtotal", "discountTotal", "taxableAmount", "tax", "total"].map(|field| document[field].to_string())
}

/// `(taxPercentage, taxableAmount, taxAmount)` of each VAT group.
fn groups(document: &Value) -> Vec<[String; 3]> {
    document["vatBreakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| ["taxPercentage", "taxableAmount", "taxAmount"].map(|field| g[field].to_string()))
        .collect()
}

/// `[percentage, amount]` of a discount.
fn discount(discount: &Value) -> [String; 2] {
    [&discount["percentage"], &discount["amount"]].map(Value::to_string)
}

fn strings<const N: usize>(texts: [&str; N]) -> [String; N] {
    texts.map(str::to_owned)
}

#[tokio::test]
async fn discounts_of_lines_and_of_the_whole_are_allocated_to_the_rates_and_pass_every_format() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let invoice = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    // 39.98 less 4.00 (10 %, rounded) is 35.98; 1200 less 100 is 1100; 5 % of each group:
    // 1.80 and 55.00. The groups are taxed on 34.18 (2.39 at 7 %) and 1045.00 (198.55).
    let lines: Vec<[String; 4]> = invoice["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            let discount = &line["discount"];
            [&line["amount"], &discount["percentage"], &discount["amount"], &line["netAmount"]]
                .map(Value::to_string)
        })
        .collect();
    assert_eq!(
        lines,
        [strings(["39.98", "10", "null", "35.98"]), strings(["1200.00", "null", "100.00", "1100.00"])]
    );
    assert_eq!(groups(&invoice), [strings(["7", "34.18", "2.39"]), strings(["19", "1045.00", "198.55"])]);
    assert_eq!(totals(&invoice), strings(["1239.98", "160.80", "1079.18", "200.94", "1280.12"]));
    assert_eq!(discount(&invoice["discount"]), strings(["5", "null"]));
    assert_eq!(invoice["amountDue"].to_string(), "1280.12");
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(get(&app, &key, &format!("/v1/invoices/{id}")).await, invoice);

    let mut documents = Vec::new();
    for format in FORMATS {
        let xml = xml(&app, &key, &format!("/v1/invoices/{id}/e-invoice"), format).await;
        // The sum of the lines' net amounts, the document's allowances and what is taxed.
        let expected = if format == "xrechnung-ubl" {
            [
                "<cbc:LineExtensionAmount currencyID=\"EUR\">1135.98<",
                "<cbc:AllowanceTotalAmount currencyID=\"EUR\">56.80<",
                "<cbc:TaxExclusiveAmount currencyID=\"EUR\">1079.18<",
            ]
        } else {
            [
                "<ram:LineTotalAmount>1135.98<",
                "<ram:AllowanceTotalAmount>56.80<",
                "<ram:TaxBasisTotalAmount>1079.18<",
            ]
        };
        for figure in expected {
            assert!(xml.contains(figure), "{format}: {figure} in {xml}");
        }
        documents.push((format!("discounted-{format}.xml"), xml.into_bytes()));
    }
    let pdf = facturx_pdf(&app, &format!("/v1/invoices/pdf?id={id}")).await;
    let text = super::payments::pdf_text(&pdf);
    for printed in [
        "Discount (10%): −4.00 EUR",
        "Discount: −100.00 EUR",
        "35.98 EUR",
        "1,135.98 EUR",
        "Discount (5%)",
        "−56.80 EUR",
        "Taxable amount",
        "1,079.18 EUR",
        "VAT",
        "1,280.12 EUR",
    ] {
        assert!(text.contains(printed), "{printed} in\n{text}");
    }
    documents.push(("discounted-facturx.pdf".to_owned(), pdf));
    documents.extend(credit_notes(&app, &key, &buyer, id).await);
    check_officially(&documents);
}

/// A note of a line with its discount less a discount of its own, and a full note of a
/// second such invoice; their e-invoices.
async fn credit_notes(app: &TestApp, key: &str, buyer: &str, invoice: &str) -> Vec<(String, Vec<u8>)> {
    let part = post(
        app,
        key,
        &format!("/v1/invoices/{invoice}/credit-notes"),
        &json!({
        "lineItems": [{"description": "Workshop, halber Tag", "unitPrice": 600, "quantity": 1,
                       "discount": {"percentage": 10}}],
        "discount": {"amount": 20}, "reason": "Halber Tag entfallen"}),
    )
    .await;
    // 600 less 60 less 20 is 520, at 19 % 98.80.
    assert_eq!(totals(&part), strings(["600.00", "80.00", "520.00", "98.80", "618.80"]));
    let second = post(app, key, "/v1/invoices", &book_and_workshop(buyer)).await;
    let second_id = second["id"].as_str().unwrap();
    let full =
        post(app, key, &format!("/v1/invoices/{second_id}/credit-notes"), &json!({"full": true})).await;
    assert_eq!(totals(&full), totals(&second));
    assert_eq!((&full["discount"], groups(&full)), (&second["discount"], groups(&second)));
    let refused = app
        .request(Method::POST, &format!("/v1/invoices/{second_id}/credit-notes"), key)
        .json(&json!({"full": true, "discount": {"percentage": 5}}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    assert_eq!(
        error_of(refused).await,
        "discount: must be left out with full: true, which takes the invoice's"
    );
    let mut documents = Vec::new();
    for (name, note) in [("part", &part), ("full", &full)] {
        let note = note["id"].as_str().unwrap();
        for format in FORMATS {
            let xml = xml(app, key, &format!("/v1/credit-notes/{note}/e-invoice"), format).await;
            documents.push((format!("credit-note-{name}-{format}.xml"), xml.into_bytes()));
        }
    }
    documents
}

#[tokio::test]
async fn a_discount_changes_with_the_invoice_and_never_takes_more_than_there_is() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let invoice = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    let path = format!("/v1/invoices/{}", invoice["id"].as_str().unwrap());
    // 50.00 over 35.98 and 1100.00: 1.58 and 48.42 (the cent rounding leaves goes to the
    // larger remainder).
    let (status, changed) = patch(&app, &key, &path, &json!({"discount": {"amount": 50}})).await;
    assert_eq!(status, 200, "{changed}");
    assert_eq!(groups(&changed), [strings(["7", "34.40", "2.41"]), strings(["19", "1051.58", "199.80"])]);
    assert_eq!(totals(&changed), strings(["1239.98", "154.00", "1085.98", "202.21", "1288.19"]));
    let (_, removed) = patch(&app, &key, &path, &json!({"discount": null})).await;
    assert_eq!(removed["discount"], Value::Null);
    assert_eq!(totals(&removed), strings(["1239.98", "104.00", "1135.98", "211.52", "1347.50"]));
    // The CSV carries the discounts and what is taxed.
    let csv =
        app.request(Method::GET, "/v1/invoices", &key).header("accept", "text/csv").send().await.unwrap();
    let csv = csv.text().await.unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let cell = |name: &str| row[header.iter().position(|column| *column == name).unwrap()];
    assert_eq!((cell("discountTotal"), cell("taxableAmount")), ("104.00", "1135.98"));
    assert_eq!(cell("vatBreakdown"), "S 7% 35.98 2.52; S 19% 1100.00 209.00");

    let with = |change: Value| {
        let mut body = book_and_workshop(&buyer);
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        body
    };
    let mut too_much_on_a_line = book_and_workshop(&buyer);
    too_much_on_a_line["lineItems"][0]["discount"] = json!({"amount": 40});
    let cases = [
        (too_much_on_a_line, "lineItems[0].discount: must take at most the line's amount, 39.98"),
        (
            with(json!({"discount": {"amount": 1135.99}})),
            "discount: must take at most what the lines come to after their own discounts, 1135.98",
        ),
        (
            with(json!({"discount": {}})),
            "discount: give either percentage or amount: {\"percentage\": 10} or {\"amount\": 5}",
        ),
        (with(json!({"discount": {"percentage": 0}})), "discount.percentage: must be greater than 0"),
        (with(json!({"discount": {"percentage": 100.5}})), "discount.percentage: must be at most 100"),
        (
            with(json!({"discount": {"percentage": 5, "amount": 1}})),
            "discount: give either percentage or amount: {\"percentage\": 10} or {\"amount\": 5}",
        ),
    ];
    for (body, error) in cases {
        assert_eq!(refused(&app, &key, Method::POST, "/v1/invoices", &body).await, error);
    }
    assert_eq!(
        refused(&app, &key, Method::PATCH, &path, &json!({"discount": {"amount": 1135.99}})).await,
        "discount: must take at most what the lines come to after their own discounts, 1135.98"
    );
    let listed = get(&app, &key, "/v1/invoices").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "nothing refused was made");
    assert_eq!(get(&app, &key, &path).await, removed, "nothing refused was changed");

    // All of a line's amount off leaves it at 0, never below.
    let mut whole_line = book_and_workshop(&buyer);
    whole_line["lineItems"][0]["discount"] = json!({"percentage": 100});
    whole_line["discount"] = json!({"amount": 1100});
    let free = post(&app, &key, "/v1/invoices", &whole_line).await;
    assert_eq!(totals(&free), strings(["1239.98", "1239.98", "0.00", "0.00", "0.00"]));
}

async fn patch(app: &TestApp, key: &str, path: &str, body: &Value) -> (u16, Value) {
    let response = app.request(Method::PATCH, path, key).json(body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test]
async fn a_recurring_template_carries_its_discounts_to_each_invoice() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let body = json!({"clientId": buyer, "startsOn": "2030-01-01", "count": 12,
        "schedule": {"frequency": "monthly", "dayOfMonth": 1},
        "template": {"taxPercentage": 19, "discount": {"percentage": 2.5},
            "lineItems": [{"description": "Retainer", "unitPrice": 1500, "quantity": 1,
                           "discount": {"amount": 100}}]}});
    let made = post(&app, &key, "/v1/recurring-invoices", &body).await;
    assert_eq!(discount(&made["template"]["discount"]), strings(["2.5", "null"]));
    assert_eq!(discount(&made["template"]["lineItems"][0]["discount"]), strings(["null", "100"]));
    let id = made["id"].as_str().unwrap();
    assert_eq!(get(&app, &key, &format!("/v1/recurring-invoices/{id}")).await["template"], made["template"]);
}
