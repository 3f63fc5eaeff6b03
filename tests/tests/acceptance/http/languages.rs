//! The client's language and the payment reference through the real server: a team that
//! speaks French, a client that reads German; their PDFs, e-mails and e-invoices in those
//! words and formats (CLDR's, through ICU4X); and references that python-stdnum, an
//! independent implementation of ISO 11649 and of SIX's QR reference, accepts.

use acceptance::outside::SmtpServer;
use acceptance::{TestApp, mailing_config, spawn_app_with};
use reqwest::Method;
use serde_json::{Value, json};

use super::error_of;
use super::payments::pdf_text;

async fn call(app: &TestApp, method: Method, path: &str, body: &Value) -> (u16, Value) {
    call_as(app, &app.key, method, path, body).await
}

async fn call_as(app: &TestApp, key: &str, method: Method, path: &str, body: &Value) -> (u16, Value) {
    let response = app.request(method, path, key).json(body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

async fn refused(app: &TestApp, method: Method, path: &str, body: &Value) -> String {
    let response = app.request(method, path, &app.key).json(body).send().await.unwrap();
    assert_eq!(response.status(), 400, "{path} {body}");
    error_of(response).await
}

async fn pdf(app: &TestApp, invoice: &Value) -> String {
    let response = app
        .http
        .get(app.url(&format!("/v1/invoices/pdf?id={}", invoice["id"].as_str().unwrap())))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    pdf_text(&response.bytes().await.unwrap())
}

/// Whether python-stdnum accepts every one of `references` (an RF creditor reference or a
/// 27-digit QR reference).
fn stdnum_accepts(references: &[&str]) -> bool {
    let script = "import sys\nfrom stdnum import iso11649\nfrom stdnum.ch import esr\n\
        sys.exit(0 if all((iso11649 if r.startswith('RF') else esr).is_valid(r) for r in sys.argv[1:]) else 1)";
    let status = std::process::Command::new("python3")
        .args(["-c", script])
        .args(references)
        .status()
        .expect("python3 with python-stdnum (tests/payments/requirements.txt)");
    status.success()
}

fn invoice_of(client: &str) -> Value {
    json!({"clientId": client, "issueDate": "2026-11-27", "dueDate": "2026-12-27", "taxPercentage": 19,
           "lineItems": [{"description": "Workshop", "unitPrice": 1000, "quantity": 1},
                         {"description": "Beratung", "unitPrice": 30, "quantity": 7, "unitCode": "HUR"}]})
}

#[tokio::test]
async fn a_german_client_reads_german_and_the_rest_the_teams_french() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let sender = json!({"sender": {"language": "fr", "name": "Atelier Lumière", "line1": "1 rue de la Paix",
                        "postalCode": "69001", "city": "Lyon", "countryCode": "FR"}});
    let (status, team) = call(&app, Method::PATCH, "/v1/team", &sender).await;
    assert_eq!((status, &team["sender"]["language"]), (200, &json!("fr")), "{team}");
    assert_eq!(
        refused(&app, Method::PATCH, "/v1/team", &json!({"sender": {"language": "xx"}})).await,
        "sender.language: must be a language billable speaks: one of en, de, fr, it, es, nl"
    );
    let german = json!({"name": "Müller GmbH", "email": "buch@mueller.example", "language": "de", "line1": "Hauptstraße 5",
                        "postalCode": "10115", "city": "Berlin", "countryCode": "DE", "buyerReference": "BR-77"});
    let (status, german) = call(&app, Method::POST, "/v1/invoices/clients", &german).await;
    assert_eq!((status, &german["language"]), (201, &json!("de")), "{german}");
    let tagged = json!({"name": "X", "email": "x@example.com", "line1": "Bahnhofstrasse 1", "postalCode": "8001",
                        "language": "de-CH"});
    let error = refused(&app, Method::POST, "/v1/invoices/clients", &tagged).await;
    assert_eq!(error, "language: must be a language billable speaks: one of en, de, fr, it, es, nl");
    let (_, french) =
        call(&app, Method::POST, "/v1/invoices/clients", &json!({"name": "Zoé", "email": "z@example.fr", "line1": "2 quai Saint-Antoine", "postalCode": "69002"}))
            .await;
    assert_eq!(french["language"], Value::Null, "the team's");

    let (status, invoice) =
        call(&app, Method::POST, "/v1/invoices", &invoice_of(german["id"].as_str().unwrap())).await;
    assert_eq!(status, 201, "{invoice}");
    assert_eq!(invoice["total"].to_string(), "1439.90");
    let reference = invoice["paymentReference"].as_str().unwrap().to_owned();
    // ISO 11649: RF, 98 − ("INV0001RF00" mod 97), the serial's letters and digits.
    assert_eq!(reference, "RF40INV0001");
    // pdftotext reads CLDR's no-break spaces as spaces.
    let text = pdf(&app, &invoice).await;
    for shown in [
        "Rechnung",
        "Offen",
        "Rechnungsdatum",
        "27. November 2026",
        "27. Dezember 2026",
        "1.439,90 €",
        "7 Std.",
        "Zahlungsreferenz",
        "Ihre Referenz",
        "BR-77",
        "10115 Berlin",
        "GERMANY",
        "69001 Lyon",
        "FRANCE",
    ] {
        assert!(text.contains(shown), "{shown:?} in\n{text}");
    }
    let printed = &text[text.find("RF").unwrap()..][..reference.len() + reference.len() / 4];
    assert_eq!(printed.replace(' ', ""), reference, "the reference, printed in groups of four");

    let (_, other) =
        call(&app, Method::POST, "/v1/invoices", &invoice_of(french["id"].as_str().unwrap())).await;
    let text = pdf(&app, &other).await;
    for shown in ["Facture", "Date d'émission", "27 novembre 2026", "1 439,90 €", "Référence de paiement"]
    {
        assert!(text.contains(shown), "{shown:?} in\n{text}");
    }
    let references = [reference.as_str(), other["paymentReference"].as_str().unwrap()];
    assert_ne!(references[0], references[1]);
    assert!(stdnum_accepts(&references), "{references:?}");
    assert!(!stdnum_accepts(&["RF00INV0001"]), "the oracle refuses a wrong check digit");

    // The mail speaks the client's language, with the reference to quote.
    let id = invoice["id"].as_str().unwrap();
    let (status, message) = call(&app, Method::POST, &format!("/v1/invoices/{id}/send"), &json!({})).await;
    assert_eq!(status, 202, "{message}");
    assert_eq!(message["subject"], "Rechnung INV-0001");
    let body = message["body"].as_str().unwrap();
    for said in [
        "Guten Tag Müller GmbH",
        "1.439,90\u{a0}€",
        "27. Dezember 2026",
        &invoice_reference_printed(&reference),
    ] {
        assert!(body.contains(said), "{said:?} in\n{body}");
    }
}

/// `RF40INV0001` as people read it: `RF40 INV0 001`.
fn invoice_reference_printed(reference: &str) -> String {
    let chars: Vec<char> = reference.chars().collect();
    chars.chunks(4).map(|chunk| chunk.iter().collect::<String>()).collect::<Vec<_>>().join(" ")
}

#[tokio::test]
async fn a_qr_iban_gives_qr_references_that_stay_when_the_account_changes() {
    let app = acceptance::spawn_app().await;
    let (_, key) = super::einvoices::e_invoicing_team(&app, "EUR", "DE").await;
    let key = key.as_str();
    let qr_iban = json!({"sender": {"iban": "CH44 3199 9123 0008 8901 2"}});
    assert_eq!(call_as(&app, key, Method::PATCH, "/v1/team", &qr_iban).await.0, 200);
    let buyer = json!({"name": "Z AG", "email": "z@example.ch", "line1": "Bundesgasse 3", "postalCode": "3000", "city": "Bern",
                       "countryCode": "CH", "buyerReference": "04011000-12345-67"});
    let (_, client) = call_as(&app, key, Method::POST, "/v1/invoices/clients", &buyer).await;
    let client = client["id"].as_str().unwrap();
    let (_, first) = call_as(&app, key, Method::POST, "/v1/invoices", &invoice_of(client)).await;
    let qr = first["paymentReference"].as_str().unwrap().to_owned();
    assert!(qr.len() == 27 && qr.bytes().all(|b| b.is_ascii_digit()), "{qr}");

    let german = json!({"sender": {"iban": "DE02120300000000202051"}});
    assert_eq!(call_as(&app, key, Method::PATCH, "/v1/team", &german).await.0, 200);
    let (_, second) = call_as(&app, key, Method::POST, "/v1/invoices", &invoice_of(client)).await;
    let rf = second["paymentReference"].as_str().unwrap().to_owned();
    assert_eq!(rf, "RF13INV0002");
    let first_id = first["id"].as_str().unwrap();
    let (_, again) = call_as(&app, key, Method::GET, &format!("/v1/invoices/{first_id}"), &Value::Null).await;
    assert_eq!(again["paymentReference"], json!(qr), "stable: made once, with the number");
    assert!(stdnum_accepts(&[&qr, &rf]));

    // E-invoices carry it as BT-83, where the official rules accept it.
    let mut documents = Vec::new();
    for (format, element) in [("xrechnung-ubl", "cbc:PaymentID"), ("xrechnung-cii", "ram:PaymentReference")] {
        let path = format!("/v1/invoices/{}/e-invoice", second["id"].as_str().unwrap());
        let xml = super::einvoices::xml(&app, key, &path, format).await;
        assert!(xml.contains(&format!("<{element}>{rf}</{element}>")), "{format}: {xml}");
        documents.push((format!("reference-{format}.xml"), xml.into_bytes()));
    }
    super::einvoices::check_officially(&documents);
}
