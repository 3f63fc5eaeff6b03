//! Peppol BIS Billing 3.0 through the real server: both parties' Peppol addresses, set
//! over the API and checked by their schemes' check digits; an invoice of two rates and
//! discounts and its credit note held to OpenPeppol's own rules; and a 422 naming what a
//! Peppol e-invoice lacks.

use acceptance::{TestApp, spawn_app};
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{check_officially, client, e_invoicing_team, get, post, xml};
use super::error_of;

async fn call(app: &TestApp, key: &str, method: Method, path: &str, body: &Value) -> (u16, Value) {
    let response = app.request(method, path, key).json(body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// `GET path?format=peppol-bis`: its 422's message.
async fn refusal(app: &TestApp, key: &str, path: &str) -> String {
    let response = app.request(Method::GET, &format!("{path}?format=peppol-bis"), key).send().await.unwrap();
    assert_eq!(response.status(), 422, "{path}");
    error_of(response).await
}

#[tokio::test]
async fn an_invoice_of_two_rates_and_discounts_passes_openpeppols_rules() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Atelier Bruxelles SRL", "postalCode": "1000", "city": "Bruxelles", "countryCode": "BE",
                "vatNumber": "BE0123456749", "buyerReference": "PO-2026-77", "peppolId": "0208:0123456749"}),
    )
    .await;
    assert_eq!(
        get(&app, &key, &format!("/v1/invoices/clients/{buyer}")).await["peppolId"],
        "0208:0123456749"
    );
    let invoice = post(
        &app,
        &key,
        "/v1/invoices",
        &json!({"clientId": buyer, "issueDate": "2026-11-02",
        "dueDate": "2026-12-02", "taxPercentage": 19, "discount": {"amount": 25},
        "servicePeriod": {"from": "2026-10-01", "to": "2026-10-31"},
        "lineItems": [
            {"description": "Fachbuch", "unitPrice": 19.99, "quantity": 2, "taxPercentage": 7,
             "discount": {"percentage": 10}},
            {"description": "Workshop", "unitPrice": 1200, "quantity": 1},
            {"description": "Beratung", "unitPrice": 120, "quantity": 7.5, "unitCode": "HUR"}]}),
    )
    .await;
    let id = invoice["id"].as_str().unwrap();
    // Without the sender's Peppol address, the e-invoice names it.
    let path = format!("/v1/invoices/{id}/e-invoice");
    assert_eq!(
        refusal(&app, &key, &path).await,
        "peppolId (BT-34) is required for Peppol BIS Billing 3.0: set it on the sender address (`billable teams sender`)"
    );
    let (status, team) =
        call(&app, &key, Method::PATCH, "/v1/team", &json!({"sender": {"peppolId": "9930:DE123456789"}}))
            .await;
    assert_eq!((status, &team["sender"]["peppolId"]), (200, &json!("9930:DE123456789")));

    let invoice_xml = xml(&app, &key, &path, "peppol-bis").await;
    for part in [
        "<cbc:CustomizationID>urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0</cbc:CustomizationID>",
        "<cbc:ProfileID>urn:fdc:peppol.eu:2017:poacc:billing:01:1.0</cbc:ProfileID>",
        r#"<cbc:EndpointID schemeID="9930">DE123456789</cbc:EndpointID>"#,
        r#"<cbc:EndpointID schemeID="0208">0123456749</cbc:EndpointID>"#,
        "<cbc:AllowanceChargeReasonCode>95</cbc:AllowanceChargeReasonCode>",
    ] {
        assert!(invoice_xml.contains(part), "{part} in {invoice_xml}");
    }
    let note = post(
        &app,
        &key,
        &format!("/v1/invoices/{id}/credit-notes"),
        &json!({
        "lineItems": [{"description": "Beratung", "unitPrice": 120, "quantity": 1.5, "unitCode": "HUR"}],
        "discount": {"percentage": 5}, "reason": "Anderthalb Stunden zu viel"}),
    )
    .await;
    let note_xml = xml(
        &app,
        &key,
        &format!("/v1/credit-notes/{}/e-invoice", note["id"].as_str().unwrap()),
        "peppol-bis",
    )
    .await;
    assert!(note_xml.contains("<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>"), "{note_xml}");
    check_officially(&[
        ("invoice-peppol-bis.xml".to_owned(), invoice_xml.into_bytes()),
        ("credit-note-peppol-bis.xml".to_owned(), note_xml.into_bytes()),
    ]);
}

#[tokio::test]
async fn a_peppol_address_is_a_known_scheme_with_its_check_digits_and_both_parties_need_one() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let base = json!({"name": "Käufer", "email": "k@buyer.example", "line1": "Weg 1", "postalCode": "1000",
                      "city": "Bruxelles", "countryCode": "BE", "vatNumber": "BE0123456749"});
    let with = |fields: Value| {
        let mut body = base.clone();
        body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        body
    };
    for (peppol_id, error) in [
        (
            "0208:0123456789",
            "peppolId: 0123456789 is not a valid Belgian enterprise number (ten digits, mod 97)",
        ),
        (
            "1234:0123456749",
            "peppolId: the scheme \"1234\" is not an Electronic Address Scheme of Peppol BIS Billing 3.0, such as 0208 (Belgium), 0088 (GLN) or 9930 (German VAT number)",
        ),
        ("0208", "peppolId: must be scheme:identifier, such as 0208:0123456749 or 9930:DE123456789"),
    ] {
        let (status, body) =
            call(&app, &key, Method::POST, "/v1/invoices/clients", &with(json!({"peppolId": peppol_id})))
                .await;
        assert_eq!((status, body["error"].as_str().unwrap()), (400, error));
    }
    let (status, body) =
        call(&app, &key, Method::PATCH, "/v1/team", &json!({"sender": {"peppolId": "0088:7300010000002"}}))
            .await;
    assert_eq!(
        (status, body["error"].as_str().unwrap()),
        (400, "sender.peppolId: 7300010000002 is not a valid GLN (its check digit, GS1)")
    );
    call(&app, &key, Method::PATCH, "/v1/team", &json!({"sender": {"peppolId": "0088:7300010000001"}})).await;

    // No Peppol address of the client, then no buyer reference nor purchase order.
    let buyer = client(
        &app,
        &key,
        &json!({"name": "Käufer", "postalCode": "1000", "city": "Bruxelles",
                                            "countryCode": "BE", "vatNumber": "BE0123456749"}),
    )
    .await;
    let invoice = post(
        &app,
        &key,
        "/v1/invoices",
        &json!({"clientId": buyer, "dueDate": "2030-01-01",
        "taxPercentage": 21, "lineItems": [{"description": "Werk", "unitPrice": 100, "quantity": 1}]}),
    )
    .await;
    let path = format!("/v1/invoices/{}/e-invoice", invoice["id"].as_str().unwrap());
    assert_eq!(
        refusal(&app, &key, &path).await,
        "peppolId (BT-49) is required for Peppol BIS Billing 3.0: set it on the client"
    );
    let client_path = format!("/v1/invoices/clients/{buyer}");
    let (status, _) =
        call(&app, &key, Method::PATCH, &client_path, &with(json!({"peppolId": "0208:0123456749"}))).await;
    assert_eq!(status, 200);
    assert_eq!(
        refusal(&app, &key, &path).await,
        "buyerReference (BT-10 or BT-13) is required for Peppol BIS Billing 3.0: set it on the client, or give the invoice a purchaseOrder"
    );
    let (status, _) = call(
        &app,
        &key,
        Method::PATCH,
        &format!("/v1/invoices/{}", invoice["id"].as_str().unwrap()),
        &json!({"purchaseOrder": "PO-1"}),
    )
    .await;
    assert_eq!(status, 200);
    check_officially(&[(
        "purchase-order-peppol-bis.xml".to_owned(),
        xml(&app, &key, &path, "peppol-bis").await.into_bytes(),
    )]);
    // Removed with an empty text, as the other optional details.
    let (_, removed) = call(&app, &key, Method::PATCH, &client_path, &with(json!({"peppolId": ""}))).await;
    assert_eq!(removed["peppolId"], Value::Null);
}
