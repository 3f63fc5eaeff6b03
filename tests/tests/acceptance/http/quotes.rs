//! Quotes through the real server: a draft that changes, its number once sent, the client's
//! decision recorded once, a paid deposit and the final invoice that deducts it (its
//! e-invoice held to the official rules), its e-mail in the client's language, and what
//! each key may do.

use acceptance::outside::SmtpServer;
use acceptance::{TestApp, create_key, create_user, mailing_config, spawn_app, spawn_app_with};
use accounts::{Role, Scope};
use base64::Engine;
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{FORMATS, check_officially, e_invoicing_team, get, post, xml};
use super::error_of;
use super::vat_rates::public_buyer;

/// The docs' worked example: five days of design at 19 % and two books at 7 %.
fn website(client: &str) -> Value {
    json!({"clientId": client, "description": "Website redesign", "taxPercentage": 19,
        "validUntil": "2099-12-31T23:59:59Z", "notes": "50 % on order, the rest on delivery.",
        "lineItems": [
            {"description": "Design", "unitPrice": 800, "quantity": 5, "unitCode": "DAY"},
            {"description": "Style guide (book)", "unitPrice": 40, "quantity": 2, "taxPercentage": 7}]})
}

/// The status and error of `method path` with `body`.
async fn refusal(app: &TestApp, key: &str, method: Method, path: &str, body: &Value) -> (u16, String) {
    let response = app.request(method, path, key).json(body).send().await.unwrap();
    (response.status().as_u16(), error_of(response).await)
}

async fn call(app: &TestApp, key: &str, method: Method, path: &str, body: &Value) -> Value {
    let response = app.request(method, path, key).json(body).send().await.unwrap();
    assert_eq!(response.status(), 200, "{path} {body}");
    response.json().await.unwrap()
}

#[tokio::test]
async fn a_quote_goes_from_draft_to_a_paid_deposit_and_a_final_invoice_that_deducts_it() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;

    let draft = post(&app, &key, "/v1/quotes", &website(&buyer)).await;
    assert_eq!((&draft["serial"], &draft["status"]), (&Value::Null, &json!("DRAFT")));
    // 4,000.00 at 19 % and 80.00 at 7 %.
    assert_eq!(
        ["subtotal", "tax", "total"].map(|f| draft[f].to_string()),
        ["4080.00", "765.60", "4845.60"].map(str::to_owned)
    );
    let id = draft["id"].as_str().unwrap().to_owned();
    let path = |rest: &str| format!("/v1/quotes/{id}{rest}");
    let changed = call(&app, &key, Method::PATCH, &path(""), &json!({"notes": null})).await;
    assert_eq!(changed["notes"], Value::Null);

    let (status, error) =
        refusal(&app, &key, Method::POST, &path("/convert"), &json!({"mode": "full"})).await;
    assert_eq!(
        (status, error.as_str()),
        (409, "status: the quote is DRAFT, and only an accepted quote becomes invoices")
    );
    let sent = call(&app, &key, Method::POST, &path("/finalize"), &json!({})).await;
    assert_eq!((&sent["serial"], &sent["status"]), (&json!("Q-0001"), &json!("SENT")));
    let (status, error) = refusal(&app, &key, Method::PATCH, &path(""), &json!({"notes": "Cheaper"})).await;
    assert_eq!(status, 409, "{error}");
    assert!(error.starts_with("status: the quote is SENT, and only a draft changes"), "{error}");

    let accepted =
        call(&app, &key, Method::POST, &path("/accept"), &json!({"signerName": "Dr. Erika Beispiel"})).await;
    assert_eq!(accepted["status"], "ACCEPTED");
    assert_eq!(
        (
            &accepted["decision"]["verdict"],
            &accepted["decision"]["signerName"],
            &accepted["decision"]["source"]
        ),
        (&json!("accepted"), &json!("Dr. Erika Beispiel"), &json!("team"))
    );
    let (status, error) = refusal(&app, &key, Method::POST, &path("/decline"), &json!({})).await;
    assert_eq!((status, error.as_str()), (409, "decision: the client has decided on this quote already"));

    let deposit =
        post(&app, &key, &path("/convert"), &json!({"mode": "deposit", "depositPercent": 30})).await;
    let deposit_invoice = &deposit;
    assert_eq!(deposit_invoice["quoteConversion"], "deposit");
    // 30 % of each group: 1,200.00 at 19 % and 24.00 at 7 %.
    assert_eq!(
        ["taxableAmount", "tax", "total"].map(|f| deposit_invoice[f].to_string()),
        ["1224.00", "229.68", "1453.68"].map(str::to_owned)
    );
    assert_eq!(deposit_invoice["lineItems"][0]["description"], "Deposit on quote Q-0001, 19 % VAT");
    assert_eq!(get(&app, &key, &path("")).await["status"], "ACCEPTED");
    let deposit_id = deposit_invoice["id"].as_str().unwrap();
    post(&app, &key, &format!("/v1/invoices/{deposit_id}/payments"), &json!({"amount": 1453.68})).await;
    assert_eq!(get(&app, &key, &format!("/v1/invoices/{deposit_id}")).await["status"], "PAID");

    let (status, error) = refusal(
        &app,
        &key,
        Method::POST,
        &path("/convert"),
        &json!({"mode": "deposit", "depositAmount": 3000}),
    )
    .await;
    assert_eq!(status, 409, "{error}");
    assert!(
        error.starts_with("depositAmount: the deposits would reach the quote's taxable amount 4080.00"),
        "{error}"
    );

    let final_invoice = &post(&app, &key, &path("/convert"), &json!({"mode": "full"})).await;
    assert_eq!(final_invoice["quoteConversion"], "final");
    assert_eq!(final_invoice["quoteId"], json!(id));
    assert_eq!(final_invoice["depositInvoiceIds"], json!([deposit_id]));
    assert_eq!(
        ["total", "depositsDeducted", "amountDue"].map(|f| final_invoice[f].to_string()),
        ["4845.60", "1453.68", "3391.92"].map(str::to_owned)
    );
    assert_eq!(final_invoice["lineItems"].as_array().unwrap().len(), 2);
    let quote = get(&app, &key, &path("")).await;
    assert_eq!(quote["status"], "CONVERTED");
    assert_eq!(quote["invoiceIds"], json!([deposit_id, final_invoice["id"]]));
    let (status, error) =
        refusal(&app, &key, Method::POST, &path("/convert"), &json!({"mode": "full"})).await;
    let serial = final_invoice["serial"].as_str().unwrap();
    assert_eq!((status, error), (409, format!("status: the quote was invoiced in full as {serial}")));

    // The final invoice's e-invoices state the deposits as prepaid (BT-113) and pass the
    // official rules; so do the deposit invoice's.
    let final_id = final_invoice["id"].as_str().unwrap();
    let mut documents = Vec::new();
    for invoice in [deposit_id, final_id] {
        for format in FORMATS {
            let xml = xml(&app, &key, &format!("/v1/invoices/{invoice}/e-invoice"), format).await;
            documents.push((format!("{invoice}-{format}.xml"), xml.into_bytes()));
        }
    }
    let ubl = String::from_utf8(documents[3].1.clone()).unwrap();
    assert!(ubl.contains("<cbc:PrepaidAmount currencyID=\"EUR\">1453.68</cbc:PrepaidAmount>"), "{ubl}");
    assert!(ubl.contains("<cbc:PayableAmount currencyID=\"EUR\">3391.92</cbc:PayableAmount>"), "{ubl}");
    check_officially(&documents);

    let listed = get(&app, &key, "/v1/quotes?status=CONVERTED").await;
    assert_eq!(listed.as_array().unwrap().iter().map(|q| &q["id"]).collect::<Vec<_>>(), [&json!(id)]);
    assert!(get(&app, &key, "/v1/quotes?status=SENT").await.as_array().unwrap().is_empty());
    let csv = app.request(Method::GET, "/v1/quotes", &key).header("accept", "text/csv").send().await.unwrap();
    let csv = csv.text().await.unwrap();
    assert!(csv.lines().nth(1).unwrap().starts_with(&format!("{id},Q-0001,CONVERTED,")), "{csv}");
}

#[tokio::test]
async fn invoices_permissions_bring_quotes_and_another_team_sees_none() {
    let app = spawn_app().await;
    let (team, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    let quote = post(&app, &key, "/v1/quotes", &website(&buyer)).await;
    let id = quote["id"].as_str().unwrap();
    let user = create_user(&app.store, team, Role::Member).await;
    let scoped = |permissions: &[&str]| Scope::from_parts("restricted", permissions).unwrap();
    let reader = create_key(&app.store, team, user, scoped(&["invoices:read"]), None).await.1;
    assert_eq!(get(&app, &reader, &format!("/v1/quotes/{id}")).await["id"], json!(id));
    let (status, _) = refusal(&app, &reader, Method::POST, "/v1/quotes", &website(&buyer)).await;
    assert_eq!(status, 403);
    // Quotes alone may write quotes, not invoices: converting needs invoices:write too.
    let quoter = create_key(&app.store, team, user, scoped(&["quotes:write"]), None).await.1;
    call(&app, &quoter, Method::POST, &format!("/v1/quotes/{id}/finalize"), &json!({})).await;
    call(&app, &quoter, Method::POST, &format!("/v1/quotes/{id}/accept"), &json!({"signerName": "Erika"}))
        .await;
    let (status, _) =
        refusal(&app, &quoter, Method::POST, &format!("/v1/quotes/{id}/convert"), &json!({"mode": "full"}))
            .await;
    assert_eq!(status, 403);
    let (status, _) = refusal(&app, &quoter, Method::GET, "/v1/invoices", &json!({})).await;
    assert_eq!(status, 403);

    let (_, other) = e_invoicing_team(&app, "EUR", "DE").await;
    let (status, error) = refusal(&app, &other, Method::GET, &format!("/v1/quotes/{id}"), &json!({})).await;
    assert_eq!((status, error.as_str()), (404, "quote not found"));
    assert!(get(&app, &other, "/v1/quotes").await.as_array().unwrap().is_empty());
    let (status, error) = refusal(&app, &other, Method::POST, "/v1/quotes", &website(&buyer)).await;
    assert_eq!((status, error.as_str()), (400, "clientId: no such client in the team"));
}

#[tokio::test]
async fn the_client_accepts_on_the_page_in_its_language_and_reads_the_pdf() {
    let app = spawn_app().await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let buyer = public_buyer(&app, &key).await;
    call(
        &app,
        &key,
        Method::PATCH,
        &format!("/v1/invoices/clients/{buyer}"),
        &json!({
        "name": "Bundesamt für Beispiele", "email": "einkauf@buyer.example", "line1": "Amtsweg 2",
        "postalCode": "53113", "city": "Bonn", "countryCode": "DE", "vatNumber": "DE987654321",
        "buyerReference": "04011000-12345-34", "language": "de"}),
    )
    .await;
    let quote = post(&app, &key, "/v1/quotes", &website(&buyer)).await;
    let id = quote["id"].as_str().unwrap();
    let page = format!("/quotes/{id}");
    // A draft has no page.
    assert_eq!(app.http.get(app.url(&page)).send().await.unwrap().status(), 404);
    call(&app, &key, Method::POST, &format!("/v1/quotes/{id}/finalize"), &json!({})).await;

    let shown = app.http.get(app.url(&page)).send().await.unwrap();
    assert_eq!(shown.status(), 200);
    let csp = shown.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains("form-action 'self'"), "{csp}");
    let html = shown.text().await.unwrap().replace(['\u{a0}', '\u{202f}'], " ");
    for words in ["Angebot Q-0001", "4.845,60 €", "Ihre Entscheidung", "Angebot annehmen", "Gültig bis"] {
        assert!(html.contains(words), "{words} is not on the page");
    }

    let pdf = app.http.get(app.url(&format!("{page}/pdf"))).send().await.unwrap();
    assert_eq!(pdf.headers()["content-type"], "application/pdf");
    let text = super::payments::pdf_text(&pdf.bytes().await.unwrap()).replace('\u{a0}', " ");
    for words in
        ["Angebot", "Q-0001", "Angebotsdatum", "Angebot für", "Gültig bis", "31. Dezember 2099", "4.845,60 €"]
    {
        assert!(text.contains(words), "{words} is not in the PDF:\n{text}");
    }

    // Without the box ticked, the page asks again and nothing is recorded.
    let no_box =
        app.http.post(app.url(&format!("{page}/accept"))).form(&[("signer", "Erika")]).send().await.unwrap();
    assert_eq!(no_box.status(), 200);
    let asked = no_box.text().await.unwrap();
    assert!(asked.contains("setzen Sie das Häkchen"), "{asked}");
    assert_eq!(get(&app, &key, &format!("/v1/quotes/{id}")).await["status"], "SENT");

    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let accepted = client
        .post(app.url(&format!("{page}/accept")))
        .header("user-agent", "Mozilla/5.0 (quote test)")
        .form(&[("signer", "Dr. Erika Beispiel"), ("agree", "yes")])
        .send()
        .await
        .unwrap();
    assert_eq!(
        (accepted.status().as_u16(), accepted.headers()["location"].to_str().unwrap()),
        (303, page.as_str())
    );
    let decided = get(&app, &key, &format!("/v1/quotes/{id}")).await;
    assert_eq!(decided["status"], "ACCEPTED");
    let decision = &decided["decision"];
    assert_eq!(
        (&decision["source"], &decision["signerName"], &decision["userAgent"]),
        (&json!("page"), &json!("Dr. Erika Beispiel"), &json!("Mozilla/5.0 (quote test)"))
    );
    assert!(!decision["ipAddress"].as_str().unwrap().is_empty());
    // Final: a decline afterwards changes nothing, and the page no longer offers the forms.
    let declined =
        client.post(app.url(&format!("{page}/decline"))).form(&[("reason", "")]).send().await.unwrap();
    assert_eq!(declined.status(), 303);
    assert_eq!(get(&app, &key, &format!("/v1/quotes/{id}")).await["status"], "ACCEPTED");
    let html = app.http.get(app.url(&page)).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("Angenommen von Dr. Erika Beispiel") && !html.contains("Angebot annehmen"));
}

#[tokio::test]
async fn a_quote_is_mailed_in_its_clients_language_with_its_pdf_and_numbered_by_the_send() {
    let smtp = SmtpServer::start();
    let app = spawn_app_with(mailing_config(&smtp)).await;
    let key = app.key.clone();
    let client = json!({"name": "Müller GmbH", "email": "einkauf@mueller.example", "language": "de",
                        "line1": "Hauptstraße 5", "postalCode": "10115", "city": "Berlin", "countryCode": "DE"});
    let client = post(&app, &key, "/v1/invoices/clients", &client).await;
    let quote = post(&app, &key, "/v1/quotes", &website(client["id"].as_str().unwrap())).await;
    let id = quote["id"].as_str().unwrap();
    let send = format!("/v1/quotes/{id}/send");

    // A subject that would not fit with the longest serial is refused, and the draft stays one.
    let long = json!({"subject": format!("{} {{serial}}", "x".repeat(200))});
    let (status, error) = refusal(&app, &key, Method::POST, &send, &long).await;
    assert_eq!((status, error.starts_with("subject: once filled in, ")), (400, true), "{error}");
    let (status, error) = refusal(&app, &key, Method::POST, &send, &json!({"to": ["nobody"]})).await;
    assert_eq!((status, error.as_str()), (400, "to[0]: must be a valid email address"));
    let draft = get(&app, &key, &format!("/v1/quotes/{id}")).await;
    assert_eq!((&draft["status"], &draft["serial"]), (&json!("DRAFT"), &Value::Null));

    let response = app.request(Method::POST, &send, &key).json(&json!({})).send().await.unwrap();
    assert_eq!(response.status(), 202);
    let message: Value = response.json().await.unwrap();
    assert_eq!(
        (&message["kind"], &message["quoteId"], &message["invoiceId"], &message["subject"]),
        (&json!("quote"), &json!(id), &Value::Null, &json!("Angebot Q-0001"))
    );
    let body = message["body"].as_str().unwrap().replace('\u{a0}', " ");
    for said in [
        "Guten Tag Müller GmbH",
        "Angebot Q-0001",
        "4.845,60 €",
        &format!("https://billing.example.com/quotes/{id}"),
    ] {
        assert!(body.contains(said), "{said:?} in\n{body}");
    }
    let numbered = get(&app, &key, &format!("/v1/quotes/{id}")).await;
    assert_eq!((&numbered["status"], &numbered["serial"]), (&json!("SENT"), &json!("Q-0001")));

    assert_eq!(app.run_jobs().await.done, 1);
    let [mail] = smtp.received().try_into().unwrap();
    assert_eq!(
        (&mail["subject"], &mail["rcpt_tos"]),
        (&json!("Angebot Q-0001"), &json!(["einkauf@mueller.example"]))
    );
    let attached = &mail["attachments"][0];
    assert_eq!(attached["filename"], "Q-0001.pdf");
    let pdf = base64::engine::general_purpose::STANDARD.decode(attached["base64"].as_str().unwrap()).unwrap();
    let text = super::payments::pdf_text(&pdf).replace('\u{a0}', " ");
    for words in ["Angebot", "Q-0001", "Angebot für", "Gültig bis", "4.845,60 €"] {
        assert!(text.contains(words), "{words} is not in the PDF:\n{text}");
    }

    // A numbered quote may be sent again; its messages list by quote.
    let again =
        app.request(Method::POST, &send, &key).json(&json!({"attachPdf": false})).send().await.unwrap();
    assert_eq!(again.status(), 202);
    let listed = get(&app, &key, &format!("/v1/messages?quoteId={id}")).await;
    let listed: Vec<_> =
        listed.as_array().unwrap().iter().map(|m| (m["kind"].clone(), m["status"].clone())).collect();
    assert_eq!(listed, [(json!("quote"), json!("queued")), (json!("quote"), json!("sent"))]);
    assert_eq!(get(&app, &key, &format!("/v1/quotes/{id}")).await["serial"], "Q-0001");
    let (_, other) = e_invoicing_team(&app, "EUR", "DE").await;
    let (status, _) = refusal(&app, &other, Method::POST, &send, &json!({})).await;
    assert_eq!(status, 404, "another team's quote does not exist");
}
