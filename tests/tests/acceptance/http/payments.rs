//! The books of invoices through the real server: payments, refunds, voids, write-offs,
//! the statuses that follow, credit notes, receivables, and the races and retries the
//! books must survive.

use acceptance::{TestApp, create_key, spawn_app};
use accounts::{Permission, Scope};
use reqwest::Method;
use serde_json::{Value, json};

use super::error_of;

/// A number member as its exact JSON text.
fn num(value: &Value) -> String {
    assert!(value.is_number(), "{value} is a number");
    value.to_string()
}

/// An invoice of one line for exactly `total`, no tax, due 30 days after `issued`.
async fn invoice_of(app: &TestApp, total: &str, issued: &str) -> Value {
    let client = app.create_client(&app.key, "Zoë Łukasiewicz").await;
    invoice_for(app, client["id"].as_str().unwrap(), total, issued).await
}

async fn invoice_for(app: &TestApp, client: &str, total: &str, issued: &str) -> Value {
    let due = chrono::NaiveDate::parse_from_str(issued, "%Y-%m-%d").unwrap() + chrono::TimeDelta::days(30);
    let body = json!({"clientId": client, "issueDate": issued, "dueDate": due.to_string(),
        "lineItems": [{"description": "Work", "unitPrice": serde_json::from_str::<Value>(total).unwrap(), "quantity": 1}]});
    let response = app.request(Method::POST, "/v1/invoices", &app.key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 201);
    response.json().await.unwrap()
}

async fn send(app: &TestApp, method: Method, path: &str, body: &Value) -> reqwest::Response {
    app.request(method, path, &app.key).json(body).send().await.unwrap()
}

async fn fetch(app: &TestApp, id: &str) -> Value {
    app.get_json(&format!("/v1/invoices/{id}")).await
}

fn money(invoice: &Value) -> [String; 5] {
    ["amountPaid", "amountCredited", "amountWrittenOff", "amountDue", "total"]
        .map(|field| num(&invoice[field]))
}

#[tokio::test]
async fn paying_in_part_then_in_full_follows_the_books() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    assert_eq!(money(&invoice), ["0.00", "0.00", "0.00", "100.00", "100.00"].map(String::from));
    assert_eq!(invoice["paidAt"], Value::Null);

    let payments = format!("/v1/invoices/{id}/payments");
    let body =
        json!({"amount": 29.21, "paidOn": "2026-11-05", "method": "bank_transfer", "reference": "RF18 5390"});
    let response = send(&app, Method::POST, &payments, &body).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let payment: Value = response.json().await.unwrap();
    assert_eq!(location, format!("/v1/payments/{}", payment["id"].as_str().unwrap()));
    assert_eq!(
        (payment["kind"].as_str(), payment["method"].as_str()),
        (Some("payment"), Some("bank_transfer"))
    );
    assert_eq!(
        (num(&payment["amount"]), payment["paidOn"].as_str()),
        ("29.21".to_owned(), Some("2026-11-05"))
    );
    assert_eq!(
        (&payment["invoiceId"], &payment["reference"], &payment["voidedAt"]),
        (&json!(id), &json!("RF18 5390"), &Value::Null)
    );
    assert_eq!(app.get_json(&location).await, payment);

    let partial = fetch(&app, id).await;
    assert_eq!(partial["status"], "PAID_PARTIAL");
    assert_eq!(money(&partial), ["29.21", "0.00", "0.00", "70.79", "100.00"].map(String::from));

    // More than is due is refused, naming the figure, and records nothing.
    let response = send(&app, Method::POST, &payments, &json!({"amount": 70.80})).await;
    assert_eq!(response.status(), 409);
    assert_eq!(error_of(response).await, "amount: exceeds amountDue 70.79");
    for (body, message) in [
        (json!({"amount": 0}), "amount: must be greater than 0"),
        (json!({"amount": 1.001}), "amount: must have at most 2 decimal places in EUR"),
        (json!({"amount": 1, "paidOn": "2999-01-01"}), "paidOn: must not be in the future"),
        (
            json!({"amount": 1, "method": "bitcoin"}),
            "method: must be one of bank_transfer, card, cash, check, other",
        ),
        (json!({}), "amount: is required"),
    ] {
        let response = send(&app, Method::POST, &payments, &body).await;
        assert_eq!(response.status(), 400, "{body}");
        let error = error_of(response).await;
        assert!(error.starts_with(message), "{body}: {error}");
    }

    let response =
        send(&app, Method::POST, &payments, &json!({"amount": 70.79, "paidOn": "2026-11-20"})).await;
    assert_eq!(response.status(), 201);
    let paid = fetch(&app, id).await;
    assert_eq!(paid["status"], "PAID");
    assert_eq!(paid["paidAt"], "2026-11-20T00:00:00.000Z");
    assert_eq!(money(&paid), ["100.00", "0.00", "0.00", "0.00", "100.00"].map(String::from));
    let ledger = app.get_json(&payments).await;
    assert_eq!(ledger.as_array().unwrap().len(), 2);
    assert_eq!(ledger[0]["paidOn"], "2026-11-20", "newest day first");
}

#[tokio::test]
async fn refunds_voids_and_write_offs_keep_the_books() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    let pay: Value =
        send(&app, Method::POST, &format!("/v1/invoices/{id}/payments"), &json!({"amount": 100}))
            .await
            .json()
            .await
            .unwrap();
    let refunds = format!("/v1/invoices/{id}/refunds");
    let response = send(&app, Method::POST, &refunds, &json!({"amount": 100.01})).await;
    assert_eq!(response.status(), 409);
    assert_eq!(error_of(response).await, "amount: exceeds amountPaid 100.00");
    let response =
        send(&app, Method::POST, &refunds, &json!({"amount": 30, "reason": "Hosting cancelled"})).await;
    assert_eq!(response.status(), 201);
    let refund: Value = response.json().await.unwrap();
    assert_eq!(
        (refund["kind"].as_str(), num(&refund["amount"]), refund["notes"].as_str()),
        (Some("refund"), "30.00".to_owned(), Some("Hosting cancelled"))
    );
    assert_eq!(invoice_status(&app, id).await, ("PAID_PARTIAL".to_owned(), "30.00".to_owned()));

    // Voiding the payment would leave the refund unbacked.
    let pay_void = format!("/v1/payments/{}/void", pay["id"].as_str().unwrap());
    let response = send(&app, Method::POST, &pay_void, &json!({"reason": "bounced"})).await;
    assert_eq!(response.status(), 409);
    assert!(error_of(response).await.starts_with("id: voiding it would leave a later entry unbacked"));
    let refund_void = format!("/v1/payments/{}/void", refund["id"].as_str().unwrap());
    let response = send(&app, Method::POST, &refund_void, &json!({"reason": "entered twice"})).await;
    assert_eq!(response.status(), 200);
    let voided: Value = response.json().await.unwrap();
    assert!(voided["voidedAt"].is_string());
    assert_eq!(voided["voidReason"], "entered twice");
    assert_eq!(invoice_status(&app, id).await, ("PAID".to_owned(), "0.00".to_owned()));
    let response = send(&app, Method::POST, &refund_void, &json!({})).await;
    assert_eq!(response.status(), 409);
    assert_eq!(error_of(response).await, "id: the entry is voided already");
    // Voided, the payment no longer counts: the invoice is due again, and can be written off.
    assert_eq!(send(&app, Method::POST, &pay_void, &json!({})).await.status(), 200);
    assert_eq!(invoice_status(&app, id).await, ("PENDING".to_owned(), "100.00".to_owned()));
    let response =
        send(&app, Method::POST, &format!("/v1/invoices/{id}/write-off"), &json!({"reason": "client gone"}))
            .await;
    assert_eq!(response.status(), 200);
    let written_off: Value = response.json().await.unwrap();
    assert_eq!(
        (written_off["status"].as_str(), num(&written_off["amountWrittenOff"])),
        (Some("EXPIRED"), "100.00".to_owned())
    );
    let response = send(&app, Method::POST, &format!("/v1/invoices/{id}/write-off"), &json!({})).await;
    assert_eq!(response.status(), 409);
    // Every entry stays listed; the books keep the invoice.
    assert_eq!(app.get_json(&format!("/v1/invoices/{id}/payments")).await.as_array().unwrap().len(), 3);
    let response = send(&app, Method::DELETE, &format!("/v1/invoices/{id}"), &json!({})).await;
    assert_eq!(response.status(), 409);
    assert_eq!(
        error_of(response).await,
        "invoice: it has payments, write-offs or credit notes, which the books keep; it cannot be deleted"
    );
}

async fn invoice_status(app: &TestApp, id: &str) -> (String, String) {
    let invoice = fetch(app, id).await;
    (invoice["status"].as_str().unwrap().to_owned(), num(&invoice["amountDue"]))
}

#[tokio::test]
async fn status_writes_keep_their_meaning_without_lying_about_money() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Acme").await;
    let client = client["id"].as_str().unwrap();
    let line = json!([{"description": "Work", "unitPrice": 50, "quantity": 1}]);
    // PAID on create pays the total; EXPIRED writes it off.
    for (status, paid, written_off) in [("PAID", "50.00", "0.00"), ("EXPIRED", "0.00", "50.00")] {
        let body = json!({"clientId": client, "status": status, "lineItems": line});
        let made: Value = send(&app, Method::POST, "/v1/invoices", &body).await.json().await.unwrap();
        assert_eq!(made["status"], status);
        assert_eq!(
            (num(&made["amountPaid"]), num(&made["amountWrittenOff"])),
            (paid.to_owned(), written_off.to_owned())
        );
        let ledger = app.get_json(&format!("/v1/invoices/{}/payments", made["id"].as_str().unwrap())).await;
        assert_eq!(ledger.as_array().unwrap().len(), 1, "{status}: one entry");
    }
    for (status, message) in [
        ("PAID_PARTIAL", "status: PAID_PARTIAL follows from payments and cannot be set"),
        ("OVERDUE", "status: OVERDUE follows from dueDate and cannot be set"),
    ] {
        let response = send(
            &app,
            Method::POST,
            "/v1/invoices",
            &json!({"clientId": client, "status": status, "lineItems": line}),
        )
        .await;
        assert_eq!(response.status(), 400);
        assert!(error_of(response).await.starts_with(message), "{status}");
    }
    let invoice = invoice_for(&app, client, "50.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    let path = format!("/v1/invoices/{id}");
    send(&app, Method::POST, &format!("{path}/payments"), &json!({"amount": 20})).await;
    // PENDING is refused once money was recorded; the total may not fall below it.
    let response = send(&app, Method::PATCH, &path, &json!({"status": "PENDING"})).await;
    assert_eq!(response.status(), 409);
    assert!(error_of(response).await.starts_with("status: PENDING cannot be set once money was recorded"));
    let lower = json!({"lineItems": [{"description": "Work", "unitPrice": 19.99, "quantity": 1}]});
    let response = send(&app, Method::PATCH, &path, &lower).await;
    assert_eq!(response.status(), 409);
    assert_eq!(
        error_of(response).await,
        "total: 19.99 would be below what was paid, credited and written off (20.00)"
    );
    // `mark` pays what is due; again, it answers the invoice as it is.
    for _ in 0..2 {
        let response = send(&app, Method::PATCH, &format!("{path}/mark"), &json!({})).await;
        assert_eq!(response.status(), 200);
        let marked: Value = response.json().await.unwrap();
        assert_eq!(
            (marked["status"].as_str(), num(&marked["amountPaid"])),
            (Some("PAID"), "50.00".to_owned())
        );
    }
    assert_eq!(app.get_json(&format!("{path}/payments")).await.as_array().unwrap().len(), 2);
    // EXPIRED asked of a PAID invoice has nothing to write off.
    let response = send(&app, Method::PATCH, &path, &json!({"status": "EXPIRED"})).await;
    assert_eq!(response.status(), 409);
}

#[tokio::test]
async fn credit_notes_correct_invoices_in_a_series_of_their_own() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    send(&app, Method::POST, &format!("/v1/invoices/{id}/payments"), &json!({"amount": 80})).await;
    let notes = format!("/v1/invoices/{id}/credit-notes");
    let part = json!({"lineItems": [{"description": "Not delivered", "unitPrice": 50, "quantity": 1}], "reason": "Hosting cancelled"});
    let response = send(&app, Method::POST, &notes, &part).await;
    assert_eq!(response.status(), 201);
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let note: Value = response.json().await.unwrap();
    assert_eq!(location, format!("/v1/credit-notes/{}", note["id"].as_str().unwrap()));
    assert_eq!(
        (note["serial"].as_str(), note["invoiceSerial"].as_str()),
        (Some("CN-0001"), invoice["serial"].as_str())
    );
    assert_eq!(
        [&note["total"], &note["appliedToInvoice"], &note["refundable"]].map(num),
        ["50.00", "20.00", "30.00"].map(String::from)
    );
    assert_eq!(app.get_json(&location).await, note);
    let credited = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(credited["status"], "PAID");
    assert_eq!(money(&credited), ["80.00", "20.00", "0.00", "0.00", "100.00"].map(String::from));
    // Refunding the refundable part leaves the corrected invoice settled.
    send(&app, Method::POST, &format!("/v1/invoices/{id}/refunds"), &json!({"amount": 30})).await;
    let refunded = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(money(&refunded), ["50.00", "50.00", "0.00", "0.00", "100.00"].map(String::from));
    // Together the notes never exceed the invoice's total.
    let too_much = json!({"lineItems": [{"description": "More", "unitPrice": 50.01, "quantity": 1}]});
    let response = send(&app, Method::POST, &notes, &too_much).await;
    assert_eq!(response.status(), 409);
    assert_eq!(
        error_of(response).await,
        "lineItems: the invoice's credit notes would come to 100.01, more than its total 100.00"
    );
    for (body, message) in [
        (json!({}), "lineItems: is required, or give full: true"),
        (json!({"full": true, "lineItems": []}), "lineItems: must be left out with full: true"),
    ] {
        let response = send(&app, Method::POST, &notes, &body).await;
        assert_eq!(response.status(), 400, "{body}");
        assert_eq!(error_of(response).await, message);
    }
    let other = invoice_of(&app, "40.00", "2026-11-02").await;
    let full: Value = send(
        &app,
        Method::POST,
        &format!("/v1/invoices/{}/credit-notes", other["id"].as_str().unwrap()),
        &json!({"full": true}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!((full["serial"].as_str(), num(&full["total"])), (Some("CN-0002"), "40.00".to_owned()));
    assert_eq!(
        app.get_json(&format!("/v1/invoices/{}", other["id"].as_str().unwrap())).await["status"],
        "EXPIRED"
    );
    let listed = app.get_json("/v1/credit-notes").await;
    assert_eq!(listed, json!([full.clone(), note.clone()]), "newest serial first");
    assert_eq!(app.get_json(&format!("/v1/credit-notes?invoiceId={id}")).await, json!([note.clone()]));

    // The PDF is public by its unguessable id and names the invoice it corrects.
    let pdf = app
        .http
        .get(app.url(&format!("/v1/credit-notes/pdf?id={}", note["id"].as_str().unwrap())))
        .send()
        .await
        .unwrap();
    assert_eq!(pdf.status(), 200);
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    assert_eq!(pdf.headers()["content-disposition"], "inline; filename=\"CN-0001.pdf\"");
    let text = pdf_text(&pdf.bytes().await.unwrap());
    for expected in
        ["Credit note", "CN-0001", "Corrects", invoice["serial"].as_str().unwrap(), "Hosting cancelled"]
    {
        assert!(text.contains(expected), "{expected} in {text}");
    }
    let missing = app
        .http
        .get(app.url(&format!("/v1/credit-notes/pdf?id={}", uuid::Uuid::now_v7())))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // The invoice's own PDF prints what was paid and what is due.
    let partial = invoice_of(&app, "100.00", "2026-11-03").await;
    let partial_id = partial["id"].as_str().unwrap();
    send(&app, Method::POST, &format!("/v1/invoices/{partial_id}/payments"), &json!({"amount": 29.21})).await;
    let pdf = app.http.get(app.url(&format!("/v1/invoices/pdf?id={partial_id}"))).send().await.unwrap();
    let text = pdf_text(&pdf.bytes().await.unwrap());
    for expected in ["Paid", "29.21 EUR", "Amount due", "70.79 EUR"] {
        assert!(text.contains(expected), "{expected} in {text}");
    }
}

/// The text of a PDF, through poppler's `pdftotext`.
pub(super) fn pdf_text(pdf: &[u8]) -> String {
    let dir = tempfile_dir();
    let path = dir.join("document.pdf");
    std::fs::write(&path, pdf).unwrap();
    let output = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (make pdf-tools)");
    assert!(output.status.success());
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(output.stdout).unwrap()
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("billable-pdf-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test]
async fn payments_list_filter_page_and_answer_csv() {
    let app = spawn_app().await;
    let first = invoice_of(&app, "100.00", "2026-11-01").await;
    let second = invoice_of(&app, "100.00", "2026-11-02").await;
    for (invoice, amount, day, method) in [
        (&first, 10, "2026-11-03", "card"),
        (&first, 20, "2026-11-04", "cash"),
        (&second, 30, "2026-11-05", "card"),
    ] {
        let body = json!({"amount": amount, "paidOn": day, "method": method});
        let path = format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap());
        assert_eq!(send(&app, Method::POST, &path, &body).await.status(), 201);
    }
    let amounts =
        |listed: Value| listed.as_array().unwrap().iter().map(|p| num(&p["amount"])).collect::<Vec<_>>();
    assert_eq!(amounts(app.get_json("/v1/payments").await), ["30.00", "20.00", "10.00"]);
    assert_eq!(amounts(app.get_json("/v1/payments?method=card").await), ["30.00", "10.00"]);
    assert_eq!(amounts(app.get_json("/v1/payments?paidFrom=2026-11-04&paidTo=2026-11-04").await), ["20.00"]);
    let of_first = format!("/v1/payments?invoiceId={}", first["id"].as_str().unwrap());
    assert_eq!(amounts(app.get_json(&of_first).await), ["20.00", "10.00"]);
    let by_client = format!("/v1/payments?clientId={}", second["clientId"].as_str().unwrap());
    assert_eq!(amounts(app.get_json(&by_client).await), ["30.00"]);
    let pages = super::pages(&app, "/v1/payments?limit=2").await;
    assert_eq!(pages.iter().map(|page| page.as_array().unwrap().len()).collect::<Vec<_>>(), [2, 1]);
    let response = app
        .request(Method::GET, "/v1/payments?paidFrom=2026-11-05&paidTo=2026-11-04", &app.key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "paidTo: must not be before paidFrom");
    let csv =
        app.request(Method::GET, "/v1/payments", &app.key).header("accept", "text/csv").send().await.unwrap();
    assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
    let text = csv.text().await.unwrap();
    assert!(
        text.starts_with("id,invoiceId,kind,amount,paidOn,method,reference,notes,voidedAt,createdAt\r\n"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 4);
}

#[tokio::test]
async fn receivables_sum_what_clients_owe_by_age() {
    let app = spawn_app().await;
    let client = app.create_client(&app.key, "Acme").await;
    let client_id = client["id"].as_str().unwrap();
    let old = invoice_for(&app, client_id, "100.00", "2026-10-02").await;
    invoice_for(&app, client_id, "50.00", "2026-11-20").await;
    invoice_for(&app, client_id, "20.00", "2026-12-15").await;
    send(
        &app,
        Method::POST,
        &format!("/v1/invoices/{}/payments", old["id"].as_str().unwrap()),
        &json!({"amount": 40, "paidOn": "2026-11-02"}),
    )
    .await;
    let owed = app.get_json("/v1/invoices/receivables?asOf=2026-12-30").await;
    assert_eq!(owed.as_array().unwrap().len(), 1);
    let row = &owed[0];
    assert_eq!(
        (row["clientId"].as_str(), row["name"].as_str(), row["currency"].as_str()),
        (Some(client_id), Some("Acme"), Some("EUR"))
    );
    assert_eq!(
        ["current", "days1to30", "days31to60", "days61to90", "over90", "total"].map(|f| num(&row[f])),
        ["20.00", "50.00", "60.00", "0.00", "0.00", "130.00"].map(String::from)
    );
    let csv = app
        .request(Method::GET, "/v1/invoices/receivables?asOf=2026-12-30", &app.key)
        .header("accept", "text/csv")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        csv,
        format!(
            "clientId,name,currency,current,days1to30,days31to60,days61to90,over90,total\r\n{client_id},Acme,EUR,20.00,50.00,60.00,0.00,0.00,130.00\r\n"
        )
    );
    let response =
        app.request(Method::GET, "/v1/invoices/receivables?asOf=tomorrow", &app.key).send().await.unwrap();
    assert_eq!(response.status(), 400);
    assert_eq!(error_of(response).await, "asOf: must be a date YYYY-MM-DD");
}

#[tokio::test]
async fn a_bookkeeper_key_records_payments_and_nothing_else() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    let bookkeeper = Scope::Restricted([Permission::PaymentsWrite].into());
    let (_, key) = create_key(&app.store, app.team, app.owner, bookkeeper, None).await;
    let pay =
        app.request(Method::POST, &format!("/v1/invoices/{id}/payments"), &key).json(&json!({"amount": 10}));
    assert_eq!(pay.send().await.unwrap().status(), 201);
    let read = app.request(Method::GET, &format!("/v1/invoices/{id}"), &key).send().await.unwrap();
    assert_eq!(read.status(), 200, "recording payments reads invoices");
    let note = app
        .request(Method::POST, &format!("/v1/invoices/{id}/credit-notes"), &key)
        .json(&json!({"full": true}));
    let response = note.send().await.unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(error_of(response).await, "this API key lacks the invoices:write permission");
    let (_, reader) = create_key(&app.store, app.team, app.owner, Scope::ReadOnly, None).await;
    let response = app
        .request(Method::POST, &format!("/v1/invoices/{id}/payments"), &reader)
        .json(&json!({"amount": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(error_of(response).await, "this API key lacks the payments:write permission");
}

/// A key that may record payments but not write invoices voids payments, but not a
/// write-off: bringing a forgiven debt back needs what forgiving it needs.
#[tokio::test]
async fn voiding_a_write_off_needs_what_writing_it_off_needs() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let id = invoice["id"].as_str().unwrap();
    let bookkeeper = Scope::Restricted([Permission::PaymentsWrite].into());
    let (_, key) = create_key(&app.store, app.team, app.owner, bookkeeper, None).await;
    let paid =
        app.request(Method::POST, &format!("/v1/invoices/{id}/payments"), &key).json(&json!({"amount": 10}));
    let payment: Value = paid.send().await.unwrap().json().await.unwrap();
    let write_off = app
        .request(Method::POST, &format!("/v1/invoices/{id}/write-off"), &app.key)
        .json(&json!({"reason": "the client went bankrupt"}));
    assert_eq!(write_off.send().await.unwrap().status(), 200);
    let entries = app.get_json(&format!("/v1/invoices/{id}/payments")).await;
    let write_off = entries.as_array().unwrap().iter().find(|entry| entry["kind"] == "write_off").unwrap();
    let write_off_id = write_off["id"].as_str().unwrap();
    let refused = app
        .request(Method::POST, &format!("/v1/payments/{write_off_id}/void"), &key)
        .json(&json!({"reason": "paid after all"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(
        error_of(refused).await,
        "this API key lacks the invoices:write permission, which voiding a write-off needs"
    );
    let still = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!(still["status"], "EXPIRED", "the write-off stands");
    // The same key voids the payment it may record (after the write-off is voided by a key
    // that may write invoices, as the books order them).
    let voided = app
        .request(Method::POST, &format!("/v1/payments/{write_off_id}/void"), &app.key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(voided.status(), 200);
    let payment_id = payment["id"].as_str().unwrap();
    let voided = app
        .request(Method::POST, &format!("/v1/payments/{payment_id}/void"), &key)
        .json(&json!({}))
        .send()
        .await;
    assert_eq!(voided.unwrap().status(), 200);
    let back = app.get_json(&format!("/v1/invoices/{id}")).await;
    assert_eq!((back["status"].as_str(), num(&back["amountDue"])), (Some("PENDING"), "100.00".to_owned()));
}

#[tokio::test]
async fn parallel_payments_on_two_replicas_never_overpay() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let path = format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap());
    let replica = app.another_instance();
    let sends = (0..20).map(|n| {
        let base = if n % 2 == 0 { app.address.clone() } else { replica.clone() };
        let request =
            app.http.post(format!("{base}{path}")).header("X-API-Key", &app.key).json(&json!({"amount": 10}));
        tokio::spawn(async move { request.send().await.unwrap().status().as_u16() })
    });
    let mut statuses = Vec::new();
    for sent in sends.collect::<Vec<_>>() {
        statuses.push(sent.await.unwrap());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [[201; 10], [409; 10]].concat());
    let paid = app.get_json(&format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await;
    assert_eq!((paid["status"].as_str(), num(&paid["amountPaid"])), (Some("PAID"), "100.00".to_owned()));
}

#[tokio::test]
async fn a_payment_sent_twice_with_one_idempotency_key_is_recorded_once() {
    let app = spawn_app().await;
    let invoice = invoice_of(&app, "100.00", "2026-11-01").await;
    let path = format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap());
    let mut answers = Vec::new();
    for _ in 0..2 {
        let response = app
            .request(Method::POST, &path, &app.key)
            .header("Idempotency-Key", "bank-statement-2026-11-05-line-7")
            .json(&json!({"amount": 25}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
        answers.push(response.json::<Value>().await.unwrap());
    }
    assert_eq!(answers[0], answers[1]);
    assert_eq!(app.get_json(&path).await.as_array().unwrap().len(), 1);
    assert_eq!(
        num(&app.get_json(&format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await["amountPaid"]),
        "25.00"
    );
}
