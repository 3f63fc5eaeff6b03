//! A VAT rate and category per line through the real server: the breakdown per rate, each
//! group's tax rounded once, what the lines' own categories need, and every e-invoice of
//! such a sale held to the official rules.

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{
    FORMATS, assert_totals, check_officially, client, e_invoicing_team, facturx_pdf, figures, get, post, xml,
};
use super::error_of;

/// A German client with all an XRechnung needs.
pub(super) async fn public_buyer(app: &TestApp, key: &str) -> String {
    client(
        app,
        key,
        &json!({"name": "Bundesamt für Beispiele", "postalCode": "53113", "city": "Bonn", "countryCode": "DE",
                "vatNumber": "DE987654321", "buyerReference": "04011000-12345-34"}),
    )
    .await
}

/// A book at 7 % and a workshop at the invoice's 19 %: the docs' worked example.
fn book_and_workshop(client: &str) -> Value {
    json!({"clientId": client, "issueDate": "2026-11-02", "dueDate": "2026-12-02", "taxPercentage": 19,
        "lineItems": [
            {"description": "Fachbuch", "unitPrice": 19.99, "quantity": 2, "taxPercentage": 7},
            {"description": "Workshop", "unitPrice": 1200, "quantity": 1},
            {"description": "Arbeitsheft", "unitPrice": 0.05, "quantity": 3, "taxPercentage": 7}]})
}

/// A group of `vatBreakdown`, its figures as the JSON writes them (`40.13`, `0.00`).
fn group(category: &str, percentage: &str, taxable: &str, tax: &str, reason: Option<&str>) -> Value {
    let exact = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
    json!({"vatCategory": category, "taxPercentage": exact(percentage), "taxableAmount": exact(taxable),
           "taxAmount": exact(tax), "vatExemptionReason": reason})
}

/// `(category, percentage, reason)` of each line of `document`.
fn line_rates(document: &Value) -> Vec<(String, String, Value)> {
    document["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            (
                line["vatCategory"].as_str().unwrap().to_owned(),
                line["taxPercentage"].to_string(),
                line["vatExemptionReason"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_book_and_a_workshop_on_one_invoice_are_taxed_per_rate_and_pass_every_format() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let invoice = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    // 2 × 19.99 + 3 × 0.05 = 40.13 at 7 % = 2.8091 → 2.81, rounded once for the group
    // (the lines alone would make 2.80 + 0.01); 1200 at 19 % = 228.
    assert_eq!(
        invoice["vatBreakdown"],
        json!([group("S", "7", "40.13", "2.81", None), group("S", "19", "1200.00", "228.00", None)])
    );
    assert_eq!(figures(&invoice), ["1240.13", "230.81", "1470.94", "1470.94"].map(String::from));
    assert_eq!(
        line_rates(&invoice),
        [("S", "7", Value::Null), ("S", "19", Value::Null), ("S", "7", Value::Null)].map(|(c, p, r)| (
            c.to_owned(),
            p.to_owned(),
            r
        ))
    );
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(get(&app, &key, &format!("/v1/invoices/{id}")).await["vatBreakdown"], invoice["vatBreakdown"]);

    let mut documents = Vec::new();
    for format in FORMATS {
        let xml = xml(&app, &key, &format!("/v1/invoices/{id}/e-invoice"), format).await;
        assert_totals(&xml, format, "1240.13", "230.81", "1470.94", "1470.94");
        // A group each, at its rate and with its own tax.
        for figure in ["40.13", "2.81", "1200.00", "228.00"] {
            assert!(xml.contains(&format!(">{figure}<")), "{format}: {figure} in\n{xml}");
        }
        documents.push((format!("two-rates-{format}.xml"), xml.into_bytes()));
    }
    let pdf = facturx_pdf(&app, &format!("/v1/invoices/pdf?id={id}")).await;
    let text = super::payments::pdf_text(&pdf);
    // The VAT breakdown's table: a row per rate, its taxable amount and its tax.
    for row in
        ["VAT breakdown", "7%", "40.13 EUR", "2.81 EUR", "19%", "1,200.00 EUR", "228.00 EUR", "1,470.94 EUR"]
    {
        assert!(text.contains(row), "{row} in\n{text}");
    }
    documents.push(("two-rates-facturx.pdf".to_owned(), pdf));

    // The whole invoice credited: the same lines, rates and groups.
    let full = post(&app, &key, &format!("/v1/invoices/{id}/credit-notes"), &json!({"full": true})).await;
    assert_eq!(full["vatBreakdown"], invoice["vatBreakdown"]);
    assert_eq!(line_rates(&full), line_rates(&invoice));
    // Two lines of another such invoice credited, one at its own rate.
    let other = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    let other = other["id"].as_str().unwrap();
    let part = post(
        &app,
        &key,
        &format!("/v1/invoices/{other}/credit-notes"),
        &json!({"lineItems": [
        {"description": "Fachbuch, zurück", "unitPrice": 19.99, "quantity": 1, "taxPercentage": 7},
        {"description": "Workshop, Anteil", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    assert_eq!(
        part["vatBreakdown"],
        json!([group("S", "7", "19.99", "1.40", None), group("S", "19", "100.00", "19.00", None)])
    );
    assert_eq!([part["tax"].to_string(), part["total"].to_string()], ["20.40", "140.39"]);
    for (name, note) in [("full", &full), ("part", &part)] {
        let note_id = note["id"].as_str().unwrap();
        for format in FORMATS {
            let xml = xml(&app, &key, &format!("/v1/credit-notes/{note_id}/e-invoice"), format).await;
            let [subtotal, tax, total] = ["subtotal", "tax", "total"].map(|field| note[field].to_string());
            assert_totals(&xml, format, &subtotal, &tax, &total, &total);
            documents.push((format!("credit-{name}-{format}.xml"), xml.into_bytes()));
        }
    }
    check_officially(&documents);
}

#[tokio::test]
async fn exempt_zero_rated_and_reverse_charge_lines_sit_beside_standard_ones() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let body = json!({"clientId": buyer, "issueDate": "2026-11-02", "dueDate": "2026-12-02", "taxPercentage": 19,
        "lineItems": [
            {"description": "Beratung", "unitPrice": 100, "quantity": 3},
            {"description": "Schulung", "unitPrice": 250, "quantity": 1, "vatCategory": "E",
             "vatExemptionReason": "Steuerfrei nach § 4 Nr. 21 UStG"},
            {"description": "Zeitschrift", "unitPrice": 12.5, "quantity": 2, "vatCategory": "Z"},
            {"description": "Bauleistung", "unitPrice": 1000, "quantity": 1, "vatCategory": "AE",
             "vatExemptionReason": "Steuerschuldnerschaft des Leistungsempfängers"}]});
    let invoice = post(&app, &key, "/v1/invoices", &body).await;
    assert_eq!(
        invoice["vatBreakdown"],
        json!([
            group("S", "19", "300.00", "57.00", None),
            group("E", "0", "250.00", "0.00", Some("Steuerfrei nach § 4 Nr. 21 UStG")),
            group("Z", "0", "25.00", "0.00", None),
            group("AE", "0", "1000.00", "0.00", Some("Steuerschuldnerschaft des Leistungsempfängers")),
        ])
    );
    assert_eq!(figures(&invoice), ["1575.00", "57.00", "1632.00", "1632.00"].map(String::from));
    let id = invoice["id"].as_str().unwrap();
    let mut documents = Vec::new();
    for format in FORMATS {
        let xml = xml(&app, &key, &format!("/v1/invoices/{id}/e-invoice"), format).await;
        documents.push((format!("mixed-{format}.xml"), xml.into_bytes()));
    }
    check_officially(&documents);
}

pub(super) async fn refused(app: &TestApp, key: &str, method: Method, path: &str, body: &Value) -> String {
    let response = app.request(method, path, key).json(body).send().await.unwrap();
    assert_eq!(response.status(), 400, "{path} {body}");
    error_of(response).await
}

#[tokio::test]
async fn a_line_that_breaks_its_categorys_rule_is_named_and_nothing_is_made() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    // No VAT number, no country: what K and AE need of the client.
    let bare = post(
        &app,
        &key,
        "/v1/invoices/clients",
        &json!({"name": "Bare Client", "email": "bare@example.com", "phone": "", "vatNumber": "", "line1": "Weg 1",
                "line2": "", "line3": "", "postalCode": "10115"}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let own = |client: &str, line: Value| {
        json!({"clientId": client, "taxPercentage": 19, "lineItems": [
            {"description": "Beratung", "unitPrice": 100, "quantity": 1}, line]})
    };
    let line = |fields: Value| {
        let mut line = json!({"description": "Zweite", "unitPrice": 10, "quantity": 1});
        line.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        line
    };
    let cases = [
        (
            buyer.as_str(),
            json!({"vatCategory": "E"}),
            "lineItems[1].vatExemptionReason: is required with vatCategory E",
        ),
        (
            buyer.as_str(),
            json!({"vatCategory": "Z", "vatExemptionReason": "x"}),
            "lineItems[1].vatExemptionReason: is not taken with vatCategory Z",
        ),
        (
            buyer.as_str(),
            json!({"taxPercentage": 0}),
            "lineItems[1].taxPercentage: must be greater than 0 with vatCategory S",
        ),
        (
            buyer.as_str(),
            json!({"vatCategory": "Z", "taxPercentage": 7}),
            "lineItems[1].taxPercentage: must be 0 with vatCategory Z",
        ),
        (
            buyer.as_str(),
            json!({"vatCategory": "O", "vatExemptionReason": "Nicht steuerbar"}),
            "lineItems[1].vatCategory: O (outside the scope of VAT) cannot share",
        ),
        (
            bare.as_str(),
            json!({"vatCategory": "AE", "vatExemptionReason": "Reverse charge"}),
            "lineItems[1].vatCategory: AE names the buyer's VAT number",
        ),
        (
            bare.as_str(),
            json!({"vatCategory": "K", "vatExemptionReason": "Art. 138"}),
            "lineItems[1].vatCategory: K names the buyer's VAT number",
        ),
        (
            buyer.as_str(),
            json!({"vatCategory": "X"}),
            "lineItems[1].vatCategory: must be one of S, Z, E, AE, K, G, O",
        ),
        (buyer.as_str(), json!({"taxPercentage": 101}), "lineItems[1].taxPercentage"),
    ];
    for (client, fields, expected) in cases {
        let error =
            refused(&app, &key, Method::POST, "/v1/invoices", &own(client, line(fields.clone()))).await;
        assert!(error.starts_with(expected), "{fields}: {error}");
    }
    // A flat tax is refused once a line states its own rate; a tax that agrees is a check.
    let flat = json!({"clientId": buyer, "tax": 5, "lineItems": [
        {"description": "Buch", "unitPrice": 10, "quantity": 1, "taxPercentage": 7}]});
    let error = refused(&app, &key, Method::POST, "/v1/invoices", &flat).await;
    assert!(error.starts_with("tax: a line states its own VAT rate"), "{error}");
    let checked = json!({"clientId": buyer, "taxPercentage": 19, "tax": 20.70, "lineItems": [
        {"description": "Buch", "unitPrice": 10, "quantity": 1, "taxPercentage": 7},
        {"description": "Kurs", "unitPrice": 105, "quantity": 1}]});
    let error = refused(&app, &key, Method::POST, "/v1/invoices", &checked).await;
    assert!(
        error.starts_with("tax: must equal the sum of each rate's tax (see vatBreakdown) = 20.65"),
        "{error}"
    );
    post(&app, &key, "/v1/invoices", &with_tax(&checked, 20.65)).await;
    let listed = get(&app, &key, "/v1/invoices").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "only the one that agreed was made");
}

fn with_tax(body: &Value, tax: f64) -> Value {
    let mut body = body.clone();
    body["tax"] = json!(tax);
    body
}

#[tokio::test]
async fn lines_that_state_nothing_follow_the_invoice_and_keep_todays_answers() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let flat = post(
        &app,
        &key,
        "/v1/invoices",
        &json!({"clientId": buyer, "tax": 12.345, "lineItems": [
        {"description": "Arbeit", "unitPrice": 80, "quantity": 1}]}),
    )
    .await;
    assert_eq!(flat["vatBreakdown"], json!([group("S", "0", "80.00", "12.35", None)]));
    assert_eq!(line_rates(&flat), [("S".to_owned(), "0".to_owned(), Value::Null)]);
    // An answer's lines sent back unchanged state the invoice's own rate: nothing changes.
    let id = flat["id"].as_str().unwrap();
    let lines: Vec<Value> = flat["lineItems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            json!({"description": line["description"], "unitPrice": line["unitPrice"], "quantity": line["quantity"],
                   "vatCategory": line["vatCategory"], "taxPercentage": line["taxPercentage"]})
        })
        .collect();
    let response = app
        .request(Method::PATCH, &format!("/v1/invoices/{id}"), &key)
        .json(&json!({"lineItems": lines}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let patched: Value = response.json().await.unwrap();
    assert_eq!((&patched["tax"], &patched["vatBreakdown"]), (&flat["tax"], &flat["vatBreakdown"]));

    // A line at its own rate keeps it when the invoice's rate changes; the others follow.
    let invoice = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    let id = invoice["id"].as_str().unwrap();
    let response = app
        .request(Method::PATCH, &format!("/v1/invoices/{id}"), &key)
        .json(&json!({"taxPercentage": 20}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let changed: Value = response.json().await.unwrap();
    assert_eq!(
        changed["vatBreakdown"],
        json!([group("S", "7", "40.13", "2.81", None), group("S", "20", "1200.00", "240.00", None)])
    );
}

#[tokio::test]
async fn the_service_time_and_the_purchase_order_reach_every_format_and_pass_its_rules() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let mut over_a_month = book_and_workshop(&buyer);
    over_a_month["servicePeriod"] = json!({"from": "2026-10-01", "to": "2026-10-31"});
    over_a_month["purchaseOrder"] = json!("PO-4711");
    let mut on_a_day = book_and_workshop(&buyer);
    on_a_day["serviceDate"] = json!("2026-10-30");
    let mut documents = Vec::new();
    for (name, body, expected) in [
        ("period", over_a_month, ["InvoicePeriod", "BillingSpecifiedPeriod", "PO-4711"]),
        ("day", on_a_day, ["ActualDeliveryDate", "ActualDeliverySupplyChainEvent", "20261030"]),
    ] {
        let invoice = post(&app, &key, "/v1/invoices", &body).await;
        let id = invoice["id"].as_str().unwrap();
        for format in FORMATS {
            let xml = xml(&app, &key, &format!("/v1/invoices/{id}/e-invoice"), format).await;
            let (ubl_term, cii_term, figure) = (expected[0], expected[1], expected[2]);
            let term = if format.ends_with("ubl") { ubl_term } else { cii_term };
            assert!(xml.contains(term), "{name}, {format}: {term} in\n{xml}");
            let figure = if format.ends_with("ubl") && name == "day" { "2026-10-30" } else { figure };
            assert!(xml.contains(figure), "{name}, {format}: {figure} in\n{xml}");
            documents.push((format!("service-{name}-{format}.xml"), xml.into_bytes()));
        }
        let printed = if name == "day" {
            vec!["Service date", "2026-10-30"]
        } else {
            vec!["Service period", "2026-10-01 to 2026-10-31", "Purchase order", "PO-4711"]
        };
        let text = super::payments::pdf_text(&facturx_pdf(&app, &format!("/v1/invoices/pdf?id={id}")).await);
        for words in printed {
            assert!(text.contains(words), "{name}: {words} in\n{text}");
        }
    }
    // An invoice that states no service time says its service date is its issue date.
    let plain = post(&app, &key, "/v1/invoices", &book_and_workshop(&buyer)).await;
    let text = super::payments::pdf_text(
        &facturx_pdf(&app, &format!("/v1/invoices/pdf?id={}", plain["id"].as_str().unwrap())).await,
    );
    assert!(text.contains("Service date") && text.contains("the issue date"), "{text}");
    check_officially(&documents);
}

/// A credit note's own lines are held to the parties as an invoice's are: reverse charge
/// needs the client's VAT number when the note is issued, not only when it is exported.
#[tokio::test]
async fn a_credit_notes_reverse_charge_line_needs_the_clients_vat_number() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let bare = client(
        &app,
        &key,
        &json!({"name": "Ohne USt-IdNr.", "postalCode": "10115", "city": "Berlin",
                                           "countryCode": "DE"}),
    )
    .await;
    let invoice = post(
        &app,
        &key,
        "/v1/invoices",
        &json!({"clientId": bare, "taxPercentage": 19,
        "lineItems": [{"description": "Beratung", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    let path = format!("/v1/invoices/{}/credit-notes", invoice["id"].as_str().unwrap());
    let reverse_charge = json!({"lineItems": [{"description": "Beratung", "unitPrice": 10, "quantity": 1,
        "vatCategory": "AE", "taxPercentage": 0, "vatExemptionReason": "Reverse charge"}]});
    assert_eq!(
        refused(&app, &key, Method::POST, &path, &reverse_charge).await,
        "lineItems[0].vatCategory: AE names the buyer's VAT number: set the client's vatNumber first"
    );
    let notes = get(&app, &key, "/v1/credit-notes").await;
    assert_eq!(notes.as_array().map(Vec::len), Some(0), "nothing was issued");
    // Lines at the invoice's own rate are not held to it.
    let plain = json!({"lineItems": [{"description": "Beratung", "unitPrice": 10, "quantity": 1}]});
    let response = app.request(Method::POST, &path, &key).json(&plain).send().await.unwrap();
    assert_eq!(response.status(), 201);
}
