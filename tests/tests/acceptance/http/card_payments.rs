//! Card payments through the real server and a local stateful Stripe (the Python package `localstripe`
//! with a stand-in for Checkout Sessions): the team connects Stripe, the client presses
//! "Pay by card" on its page and pays on Stripe's Checkout, and Stripe's events, signed by
//! the official `stripe` library, book the payment once, whatever is replayed, tampered
//! with, stale, or received by two replicas at once. Money beyond what is due becomes the
//! client's credit, which pays another invoice.

use acceptance::TestApp;
use acceptance::outside::{FakeStripe, stripe_signature};
use reqwest::Method;
use serde_json::{Value, json};

use super::einvoices::{client, e_invoicing_team, get, post};

const WEBHOOK_SECRET: &str = "whsec_test_billable";
/// Where people reach the server, as its links say: the tests' server listens elsewhere.
const PUBLIC_URL: &str = "https://billing.example.com";

async fn app_with(stripe: &FakeStripe) -> TestApp {
    let mut config = acceptance::serve_config();
    config.sending.stripe_api_base = Some(stripe.url());
    config.sending.public_url = Some(PUBLIC_URL.to_owned());
    acceptance::spawn_app_with(config).await
}

/// A client that stays where it is told to go, as a browser's first step would.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn connect(app: &TestApp, key: &str) -> String {
    let body = json!({"secretKey": "sk_test_billable", "webhookSecret": WEBHOOK_SECRET});
    let response =
        app.request(Method::PUT, "/v1/payment-providers/stripe", key).json(&body).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let answer: Value = response.json().await.unwrap();
    let public = answer["webhookUrl"].as_str().unwrap();
    assert!(public.starts_with(&format!("{PUBLIC_URL}/v1/payment-providers/stripe/webhook/")), "{public}");
    public.replace(PUBLIC_URL, &app.address)
}

/// Presses "Pay by card" on the invoice's page: where it is sent.
async fn press_pay(base: &str, invoice: &Value) -> String {
    let url = format!("{base}/invoices/{}/pay", invoice["id"].as_str().unwrap());
    let response = no_redirects().post(url).send().await.unwrap();
    assert_eq!(response.status(), 303);
    response.headers()["location"].to_str().unwrap().to_owned()
}

/// Delivers `event` to `url` as Stripe does, signed at `timestamp` with `secret`.
async fn deliver_signed(url: &str, event: &str, secret: &str, timestamp: i64) -> u16 {
    send(url, event, stripe_signature(secret, event, timestamp)).await
}

/// Posts `event` with `signature` to `url`.
async fn send(url: &str, event: &str, signature: String) -> u16 {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json; charset=utf-8")
        .header("stripe-signature", signature)
        .body(event.to_owned())
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

async fn deliver(url: &str, event: &Value) -> u16 {
    deliver_signed(url, &event.to_string(), WEBHOOK_SECRET, chrono::Utc::now().timestamp()).await
}

async fn payments(app: &TestApp, key: &str, invoice: &Value) -> Vec<Value> {
    let path = format!("/v1/invoices/{}/payments", invoice["id"].as_str().unwrap());
    get(app, key, &path).await.as_array().unwrap().clone()
}

async fn page(app: &TestApp, invoice: &Value, query: &str) -> String {
    let url = app.url(&format!("{}{query}", invoice["hostedUrl"].as_str().unwrap()));
    app.http.get(url).send().await.unwrap().text().await.unwrap()
}

/// A client's `creditBalance`: each currency and amount, as written.
fn credit(client: &Value) -> Vec<(String, String)> {
    let balances = client["creditBalance"].as_array().unwrap();
    balances
        .iter()
        .map(|credit| (credit["currency"].as_str().unwrap().to_owned(), credit["amount"].to_string()))
        .collect()
}

async fn german_invoice(app: &TestApp, key: &str) -> Value {
    let buyer = client(
        app,
        key,
        &json!({"name": "Müller GmbH", "line1": "Hauptstraße 5", "postalCode": "10115", "city": "Berlin",
                "countryCode": "DE", "language": "de"}),
    )
    .await;
    post(app, key, "/v1/invoices", &super::payment_qr::invoice_body(&buyer)).await
}

#[tokio::test]
async fn a_client_pays_by_card_from_its_page_and_stripes_events_book_it_once() {
    let stripe = FakeStripe::start();
    let app = app_with(&stripe).await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let invoice = german_invoice(&app, &key).await;
    let id = invoice["id"].as_str().unwrap();
    assert!(!page(&app, &invoice, "").await.contains("Mit Karte bezahlen"), "no card payments yet");

    // Connecting: keys checked, never answered.
    let wrong = json!({"secretKey": "pk_test_public", "webhookSecret": WEBHOOK_SECRET});
    let response =
        app.request(Method::PUT, "/v1/payment-providers/stripe", &key).json(&wrong).send().await.unwrap();
    assert_eq!(response.status(), 400);
    let error: Value = response.json().await.unwrap();
    assert!(error["error"].as_str().unwrap().starts_with("secretKey: must start with sk_"), "{error}");
    let webhook = connect(&app, &key).await;
    let account = get(&app, &key, "/v1/payment-providers/stripe").await;
    assert_eq!((&account["provider"], &account["webhookUrl"]), (&json!("stripe"), &Value::Null));
    assert!(!account.to_string().contains("sk_test") && !account.to_string().contains("whsec"), "{account}");

    // The page offers the card; pressing it twice makes one Checkout Session for what is due.
    let html = page(&app, &invoice, "").await;
    assert!(html.contains(&format!("action=\"/invoices/{id}/pay\"")) && html.contains("Mit Karte bezahlen"));
    let checkout = press_pay(&app.address, &invoice).await;
    assert_eq!(press_pay(&app.address, &invoice).await, checkout, "the same session for the same amount");
    let session = stripe.session(checkout.rsplit('/').next().unwrap()).await;
    assert_eq!((&session["amount_total"], &session["currency"]), (&json!(143_990), &json!("eur")));
    assert_eq!((&session["metadata"]["invoice_id"], &session["locale"]), (&json!(id), &json!("de")));
    assert_eq!(session["success_url"], json!(format!("{PUBLIC_URL}/invoices/{id}?payment=paid")));

    // The client pays; back on the page before Stripe's event, it reads that it is coming.
    let (completed, succeeded) = stripe.pay(&checkout).await;
    assert!(page(&app, &invoice, "?payment=paid").await.contains("Ihre Zahlung wird bearbeitet"));
    assert_eq!(deliver(&webhook, &completed).await, 200);
    let booked = payments(&app, &key, &invoice).await;
    let intent = completed["data"]["object"]["payment_intent"].as_str().unwrap();
    assert_eq!(booked.len(), 1, "{booked:?}");
    assert_eq!((&booked[0]["method"], &booked[0]["reference"]), (&json!("card"), &json!(intent)));
    assert_eq!(booked[0]["amount"].to_string(), "1439.90");
    assert_eq!(get(&app, &key, &format!("/v1/invoices/{id}")).await["status"], "PAID");
    let receipt = page(&app, &invoice, "?payment=paid").await;
    assert!(receipt.contains("Zahlung erhalten") && !receipt.contains("Mit Karte bezahlen"), "{receipt}");

    // Stripe's other event of the same payment, a retry, a tampered, a stale and a foreign
    // signature: nothing more is booked.
    assert_eq!(deliver(&webhook, &succeeded).await, 200);
    assert_eq!(deliver(&webhook, &completed).await, 200);
    let original = completed.to_string();
    let signature = stripe_signature(WEBHOOK_SECRET, &original, chrono::Utc::now().timestamp());
    let tampered = original.replace("143990", "143991");
    let response = reqwest::Client::new()
        .post(&webhook)
        .header("stripe-signature", signature)
        .body(tampered)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let stale = chrono::Utc::now().timestamp() - 301;
    assert_eq!(deliver_signed(&webhook, &original, WEBHOOK_SECRET, stale).await, 400);
    assert_eq!(
        deliver_signed(&webhook, &original, "whsec_someone_else", chrono::Utc::now().timestamp()).await,
        400
    );
    let unknown = format!("{}/v1/payment-providers/stripe/webhook/{}", app.address, "x".repeat(43));
    assert_eq!(deliver(&unknown, &completed).await, 404);
    assert_eq!(payments(&app, &key, &invoice).await.len(), 1);

    // A refund at Stripe books a refund, once.
    let refunded = stripe.refund(intent, 50_000).await;
    assert_eq!(deliver(&webhook, &refunded).await, 200);
    assert_eq!(deliver(&webhook, &refunded).await, 200);
    let books = payments(&app, &key, &invoice).await;
    let refunds: Vec<&Value> = books.iter().filter(|entry| entry["kind"] == "refund").collect();
    assert_eq!(refunds.len(), 1, "{books:?}");
    assert_eq!(
        (refunds[0]["amount"].to_string(), &refunds[0]["method"]),
        ("500.00".to_owned(), &json!("card"))
    );
    let after = get(&app, &key, &format!("/v1/invoices/{id}")).await;
    assert_eq!(
        (&after["status"], after["amountDue"].to_string()),
        (&json!("PAID_PARTIAL"), "500.00".to_owned())
    );
}

#[tokio::test]
async fn money_for_a_settled_invoice_becomes_credit_that_pays_another() {
    let stripe = FakeStripe::start();
    let app = app_with(&stripe).await;
    let (team, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let webhook = connect(&app, &key).await;
    let invoice = german_invoice(&app, &key).await;
    let id = invoice["id"].as_str().unwrap();
    let checkout = press_pay(&app.address, &invoice).await;
    // Paid by transfer meanwhile: the card payment that follows is never refused.
    let transfer = json!({"amount": 1439.90, "method": "bank_transfer"});
    post(&app, &key, &format!("/v1/invoices/{id}/payments"), &transfer).await;
    let (completed, _) = stripe.pay(&checkout).await;
    assert_eq!(deliver(&webhook, &completed).await, 200);
    assert_eq!(payments(&app, &key, &invoice).await.len(), 1, "the card payment is credit, not a payment");
    let client_id = invoice["clientId"].as_str().unwrap();
    let buyer = get(&app, &key, &format!("/v1/invoices/clients/{client_id}/credit")).await;
    assert_eq!(credit(&buyer), [("EUR".to_owned(), "1439.90".to_owned())]);
    let events = app.store.notify().list_events(team, 100).await.unwrap();
    assert!(events.iter().any(|event| event.kind == notify::EventType::InvoiceOverpaid), "invoice.overpaid");

    // The credit pays the next invoice, never beyond what the client holds.
    let next = post(&app, &key, "/v1/invoices", &super::payment_qr::invoice_body(client_id)).await;
    let apply = |amount: f64| {
        app.request(
            Method::POST,
            &format!("/v1/invoices/{}/apply-credit", next["id"].as_str().unwrap()),
            &key,
        )
        .json(&json!({"amount": amount}))
        .send()
    };
    let too_much = apply(1439.91).await.unwrap();
    assert_eq!(too_much.status(), 409);
    let error: Value = too_much.json().await.unwrap();
    assert!(
        error["error"].as_str().unwrap().starts_with("amount: exceeds the client's creditBalance"),
        "{error}"
    );
    let applied = apply(1000.0).await.unwrap();
    assert_eq!(applied.status(), 201);
    let applied: Value = applied.json().await.unwrap();
    assert_eq!(
        (applied["amount"].to_string(), &applied["reference"]),
        ("1000.00".to_owned(), &json!("client-credit"))
    );
    let buyer = get(&app, &key, &format!("/v1/invoices/clients/{client_id}/credit")).await;
    assert_eq!(credit(&buyer), [("EUR".to_owned(), "439.90".to_owned())]);
}

#[tokio::test]
async fn two_replicas_receiving_stripes_events_at_once_book_one_payment() {
    let stripe = FakeStripe::start();
    let app = app_with(&stripe).await;
    let (_, key) = e_invoicing_team(&app, "EUR", "DE").await;
    let webhook = connect(&app, &key).await;
    let replica = webhook.replace(&app.address, &app.another_instance());
    let invoice = german_invoice(&app, &key).await;
    let checkout = press_pay(&app.address, &invoice).await;
    let (completed, succeeded) = stripe.pay(&checkout).await;
    // Signed first, so that the four requests go out together.
    let now = chrono::Utc::now().timestamp();
    let (completed, succeeded) = (completed.to_string(), succeeded.to_string());
    let signed = |event: &str| stripe_signature(WEBHOOK_SECRET, event, now);
    let statuses = tokio::join!(
        send(&webhook, &completed, signed(&completed)),
        send(&replica, &completed, signed(&completed)),
        send(&webhook, &succeeded, signed(&succeeded)),
        send(&replica, &succeeded, signed(&succeeded)),
    );
    assert_eq!(statuses, (200, 200, 200, 200));
    let booked = payments(&app, &key, &invoice).await;
    assert_eq!(booked.len(), 1, "{booked:?}");
    assert_eq!(
        get(&app, &key, &format!("/v1/invoices/{}", invoice["id"].as_str().unwrap())).await["status"],
        "PAID"
    );
}
