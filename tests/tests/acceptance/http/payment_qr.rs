//! Payment QR codes through the real server: the EPC QR code and the Swiss QR-bill of an
//! invoice, rasterised from its PDF and decoded (zxing-cpp), equal byte for byte to what the
//! reference encoders make from the same data (segno's EPC helper, qrbill), and the same
//! bytes `GET /v1/invoices/{id}/payment-qr` answers; what a format lacks is a 422 naming
//! it, and a paid invoice carries none. The oracle is `tests/payments/check_qr.py`.

use acceptance::TestApp;
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{client, e_invoicing_team, post};
use super::error_of;
use super::payments::pdf_text;

async fn pdf(app: &TestApp, id: &str, qr: &str) -> Vec<u8> {
    let response = app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}&qr={qr}"))).send().await.unwrap();
    assert_eq!(response.status(), 200, "qr={qr}");
    response.bytes().await.unwrap().to_vec()
}

async fn payload(app: &TestApp, key: &str, id: &str, format: &str) -> Value {
    let response = app
        .request(Method::GET, &format!("/v1/invoices/{id}/payment-qr?format={format}"), key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{format}");
    response.json().await.unwrap()
}

async fn refusal(app: &TestApp, key: &str, id: &str, format: &str) -> String {
    let response = app
        .request(Method::GET, &format!("/v1/invoices/{id}/payment-qr?format={format}"), key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422, "{format}");
    error_of(response).await
}

/// The payload's bytes, as its `encoding` says.
fn bytes_of(answer: &Value) -> Vec<u8> {
    let text = answer["payload"].as_str().unwrap();
    match answer["encoding"].as_str().unwrap() {
        "iso-8859-1" => text.chars().map(|c| u8::try_from(u32::from(c)).unwrap()).collect(),
        _ => text.as_bytes().to_vec(),
    }
}

/// Runs the oracle on the PDF and the payload against `expect`; panics with its report.
/// The same run with the amount a cent off must fail: the oracle can tell.
fn check_with_reference_encoders(expect: &Value, pdf: &[u8], payload: &[u8]) {
    let (passed, report) = oracle(expect, pdf, payload);
    assert!(passed, "{report}");
    assert!(report.contains("ok: the PDF's one QR code is the reference encoder's"), "{report}");
    let mut off = expect.clone();
    let format = expect["format"].as_str().unwrap().to_owned();
    off[&format]["amount"] = json!("1439.91");
    let (passed, report) = oracle(&off, pdf, payload);
    assert!(
        !passed && report.contains("FAIL: the PDF's QR codes are not exactly the reference payload"),
        "{report}"
    );
}

/// The oracle's verdict on the PDF and the payload against `expect`, and its report.
fn oracle(expect: &Value, pdf: &[u8], payload: &[u8]) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("billable-qr-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let (expect_path, pdf_path, payload_path) =
        (dir.join("expect.json"), dir.join("invoice.pdf"), dir.join("payload.bin"));
    std::fs::write(&expect_path, expect.to_string()).unwrap();
    std::fs::write(&pdf_path, pdf).unwrap();
    std::fs::write(&payload_path, payload).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/payments/check_qr.py");
    let output = std::process::Command::new("python3")
        .arg(script)
        .arg("--expect")
        .arg(&expect_path)
        .arg("--pdf")
        .arg(&pdf_path)
        .arg("--payload")
        .arg(&payload_path)
        .output()
        .expect("python3 with tests/payments/requirements.txt");
    let report =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    std::fs::remove_dir_all(&dir).ok();
    (output.status.success(), report)
}

/// An invoice of 1,439.90 (a workshop and seven hours, 19 %) to `client`, due in a month.
pub(super) fn invoice_body(client: &str) -> Value {
    json!({"clientId": client, "issueDate": "2026-11-27", "dueDate": "2026-12-27", "taxPercentage": 19,
           "lineItems": [{"description": "Workshop", "unitPrice": 1000, "quantity": 1},
                         {"description": "Beratung", "unitPrice": 30, "quantity": 7, "unitCode": "HUR"}]})
}

#[tokio::test]
async fn an_epc_code_in_the_pdf_is_segnos_to_the_byte_and_a_paid_invoice_has_none() {
    let app = acceptance::spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Müller GmbH", "line1": "Hauptstraße 5", "postalCode": "10115",
                                             "city": "Berlin", "countryCode": "DE"}),
    )
    .await;
    let invoice = post(&app, &key, "/v1/invoices", &invoice_body(&buyer)).await;
    let id = invoice["id"].as_str().unwrap();
    let answer = payload(&app, &key, id, "epc").await;
    assert_eq!(
        (&answer["encoding"], &answer["reference"]),
        (&json!("iso-8859-1"), &invoice["paymentReference"])
    );
    assert_eq!(answer["amount"].to_string(), "1439.90");
    let expect = json!({"format": "epc", "epc": {"name": "Muster & Söhne GmbH", "iban": "DE02120300000000202051",
        "amount": "1439.90", "reference": invoice["paymentReference"], "bic": "BYLADEM1001", "encoding": null}});
    // The team's choice is `auto`: a German account in EUR takes the EPC code.
    for qr in ["epc", "auto"] {
        check_with_reference_encoders(&expect, &pdf(&app, id, qr).await, &bytes_of(&answer));
    }
    assert!(pdf_text(&pdf(&app, id, "auto").await).contains("Scan with your banking app to pay"));
    assert!(!pdf_text(&pdf(&app, id, "none").await).contains("Scan with your banking app"));
    assert_eq!(
        refusal(&app, &key, id, "swiss").await,
        "sender.iban must be a Swiss or Liechtenstein account (CH, LI) for a Swiss QR-bill; it is a DE account"
    );
    let response = app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}&qr=swiss"))).send().await.unwrap();
    assert_eq!(response.status(), 422, "an explicit choice the invoice cannot meet");
    let response =
        app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}&qr=girocode"))).send().await.unwrap();
    assert_eq!(error_of(response).await, "qr: must be one of auto, epc, swiss, none");

    // Paid: nothing to scan.
    let paid = json!({"amount": 1439.90, "method": "bank_transfer", "paidOn": "2026-11-27"});
    post(&app, &key, &format!("/v1/invoices/{id}/payments"), &paid).await;
    assert_eq!(
        refusal(&app, &key, id, "epc").await,
        "nothing is due on this invoice: a paid invoice carries no payment QR code"
    );
    assert!(!pdf_text(&pdf(&app, id, "epc").await).contains("Scan with your banking app"));
}

#[tokio::test]
async fn a_swiss_qr_bill_in_the_pdf_is_qrbills_to_the_byte_in_the_clients_language() {
    let app = acceptance::spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "CHF", "CH").await;
    let qr_iban = json!({"sender": {"iban": "CH44 3199 9123 0008 8901 2"}});
    let response = app.request(Method::PATCH, "/v1/team", &key).json(&qr_iban).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Pia Rutschmann", "line1": "Marktgasse 28", "postalCode": "9400",
                                             "city": "Rorschach", "countryCode": "CH", "language": "de"}),
    )
    .await;
    let invoice = post(&app, &key, "/v1/invoices", &invoice_body(&buyer)).await;
    let id = invoice["id"].as_str().unwrap();
    let reference = invoice["paymentReference"].as_str().unwrap();
    assert_eq!(reference.len(), 27, "a QR reference to a QR-IBAN");
    let answer = payload(&app, &key, id, "swiss").await;
    assert_eq!(answer["encoding"], "utf-8");
    let expect = json!({"format": "swiss", "swiss": {
        "account": "CH4431999123000889012",
        "creditor": {"name": "Muster & Söhne GmbH", "street": "Hauptstraße 1", "house_num": "", "pcode": "8001",
                     "city": "Zürich", "country": "CH"},
        "debtor": {"name": "Pia Rutschmann", "street": "Marktgasse 28", "house_num": "", "pcode": "9400",
                   "city": "Rorschach", "country": "CH"},
        "amount": "1439.90", "currency": "CHF", "reference_number": reference,
        "additional_information": invoice["serial"]}});
    let pdf = pdf(&app, id, "auto").await;
    check_with_reference_encoders(&expect, &pdf, &bytes_of(&answer));
    // SIX's German headings, for a German-speaking client.
    let text = pdf_text(&pdf);
    for heading in
        ["Empfangsschein", "Zahlteil", "Konto / Zahlbar an", "Referenz", "Annahmestelle", "1 439.90"]
    {
        assert!(text.contains(heading), "{heading:?} in\n{text}");
    }
    assert_eq!(
        refusal(&app, &key, id, "epc").await,
        "currency: an EPC QR code takes EUR; the invoice is in CHF"
    );

    // Without the sender's town the QR-bill cannot be made: named, and `auto` prints none.
    let no_city = json!({"sender": {"city": ""}});
    let response = app.request(Method::PATCH, "/v1/team", &key).json(&no_city).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        refusal(&app, &key, id, "swiss").await,
        "sender.city is required for a Swiss QR-bill: set it with PATCH /v1/team"
    );
    let response = app.http.get(app.url(&format!("/v1/invoices/pdf?id={id}"))).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(!pdf_text(&response.bytes().await.unwrap()).contains("Empfangsschein"));
}
