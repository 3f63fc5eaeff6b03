//! Stripe as billable's card processor ([`billing::cards::CardProcessor`]).
//!
//! A checkout is a Checkout Session (`POST /v1/checkout/sessions`, form-encoded, one line
//! for what the invoice has due, its metadata naming team and invoice, an idempotency key
//! from invoice and amount). A webhook delivery is verified as Stripe documents it: the
//! `Stripe-Signature` header's `t` and each `v1`, an HMAC-SHA256 of `"{t}.{body}"` under the
//! endpoint's secret, compared in constant time, `t` within five minutes of now; then
//! `checkout.session.completed` (paid) and `payment_intent.succeeded` are read as the
//! payment of their `PaymentIntent`, `charge.refunded` as what the charge has refunded by now.

use std::time::Duration;

use async_trait::async_trait;
use billing::InvoiceId;
use billing::cards::{
    CardAccount, CardEvent, CardPayment, CardProcessor, CardRefund, Checkout, CheckoutError, CheckoutRequest,
    DeliveryRefusal,
};
use billing::ledger::Reference;
use billing::money::Currency;
use chrono::{DateTime, NaiveDate, Utc};
use hmac::{Hmac, KeyInit, Mac};
use kernel::Id;
use rust_decimal::Decimal;
use serde_json::Value;
use sha2::Sha256;

/// Stripe's API, where billable reaches it unless told otherwise.
pub const API_BASE: &str = "https://api.stripe.com";

/// How far a delivery's timestamp may be from now: Stripe's libraries' default.
pub const TOLERANCE_SECONDS: i64 = 300;

/// The API version billable's requests are written for.
const API_VERSION: &str = "2024-06-20";

/// How long one call to Stripe may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// Stripe at `base`.
#[derive(Debug, Clone)]
pub struct Stripe {
    base: String,
    http: reqwest::Client,
}

impl Stripe {
    /// Stripe's API at `base` (`https://api.stripe.com`, or a stand-in's address).
    pub fn new(base: &str) -> Result<Self, String> {
        let parsed = url::Url::parse(base).map_err(|e| format!("{base}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(format!("{base}: must be an http or https URL"));
        }
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { base: base.trim_end_matches('/').to_owned(), http })
    }
}

/// The decimals Stripe's API counts `currency` in: ISO 4217's minor unit, but for the two
/// currencies that lost theirs and that Stripe still counts in hundredths, always `00`
/// (ISK and UGX, Stripe's "special cases"). HUF and TWD keep ISO's two decimals in charges;
/// Stripe treats them as whole only in payouts, which billable does not make.
fn stripe_decimals(currency: Currency) -> u32 {
    match currency.as_str() {
        "ISK" | "UGX" => 2,
        _ => currency.minor_unit(),
    }
}

/// `amount` in the currency's minor unit, as Stripe counts it (`12.30 EUR` is `1230`, and
/// `500 ISK` is `50000`); none for a fraction of what the currency can hold.
fn minor_units(amount: Decimal, currency: Currency) -> Option<i64> {
    let whole = amount * Decimal::from(10_i64.pow(currency.minor_unit()));
    if !whole.fract().is_zero() {
        return None;
    }
    let scaled = amount * Decimal::from(10_i64.pow(stripe_decimals(currency)));
    i64::try_from(scaled.trunc()).ok()
}

/// A number of minor units of `currency` Stripe sent, as an amount of it.
fn from_minor_units(units: i64, currency: Currency) -> Decimal {
    Decimal::new(units, stripe_decimals(currency)).round_dp(currency.minor_unit())
}

#[async_trait]
impl CardProcessor for Stripe {
    async fn checkout(
        &self,
        account: &CardAccount,
        request: &CheckoutRequest,
    ) -> Result<Checkout, CheckoutError> {
        let units = minor_units(request.amount, request.currency).ok_or_else(|| {
            CheckoutError::Refused(format!("{} is not a whole number of minor units", request.amount))
        })?;
        let team = request.team_id.as_uuid().to_string();
        let invoice = request.invoice_id.as_uuid().to_string();
        let form: Vec<(&str, String)> = vec![
            ("mode", "payment".into()),
            ("payment_method_types[0]", "card".into()),
            ("line_items[0][quantity]", "1".into()),
            ("line_items[0][price_data][currency]", request.currency.as_str().to_ascii_lowercase()),
            ("line_items[0][price_data][unit_amount]", units.to_string()),
            ("line_items[0][price_data][product_data][name]", request.invoice_number.clone()),
            ("client_reference_id", invoice.clone()),
            ("customer_email", request.client_email.clone()),
            ("locale", request.language.into()),
            ("success_url", request.success_url.clone()),
            ("cancel_url", request.cancel_url.clone()),
            ("metadata[team_id]", team.clone()),
            ("metadata[invoice_id]", invoice.clone()),
            ("payment_intent_data[metadata][team_id]", team),
            ("payment_intent_data[metadata][invoice_id]", invoice),
        ];
        let answer = self
            .http
            .post(format!("{}/v1/checkout/sessions", self.base))
            .bearer_auth(account.secret_key.expose())
            .header("Stripe-Version", API_VERSION)
            .header("Idempotency-Key", request.idempotency_key())
            .form(&form)
            .send()
            .await
            .map_err(|e| CheckoutError::Unavailable(e.without_url().to_string()))?;
        let status = answer.status();
        let body: Value = answer.json().await.map_err(|e| CheckoutError::Unavailable(e.to_string()))?;
        if status.is_server_error() || status.as_u16() == 429 {
            return Err(CheckoutError::Unavailable(format!("Stripe answered {status}")));
        }
        if !status.is_success() {
            let message = body["error"]["message"].as_str().unwrap_or("no message");
            return Err(CheckoutError::Refused(format!("Stripe answered {status}: {message}")));
        }
        let url = body["url"]
            .as_str()
            .ok_or_else(|| CheckoutError::Unavailable("a session without a url".into()))?;
        Ok(Checkout { url: url.to_owned() })
    }

    fn read_delivery(
        &self,
        account: &CardAccount,
        payload: &[u8],
        signature: &str,
        now: DateTime<Utc>,
    ) -> Result<CardEvent, DeliveryRefusal> {
        verify(account.webhook_secret.expose().as_bytes(), payload, signature, now)?;
        let event: Value = serde_json::from_slice(payload)
            .map_err(|e| DeliveryRefusal::Malformed(format!("the body is not JSON: {e}")))?;
        read_event(&event)
    }
}

/// Checks `header` (`t=…,v1=…[,v1=…]`) against `payload` signed with `secret` at `now`.
pub fn verify(
    secret: &[u8],
    payload: &[u8],
    header: &str,
    now: DateTime<Utc>,
) -> Result<(), DeliveryRefusal> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => timestamp = value.parse::<i64>().ok(),
            Some(("v1", value)) => signatures.extend(hex::decode(value).ok()),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else { return Err(DeliveryRefusal::BadSignature) };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return Err(DeliveryRefusal::BadSignature);
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(payload);
    let expected = mac.finalize().into_bytes();
    // Every signature is compared, whichever matches: the time taken tells nothing.
    let matched = signatures
        .iter()
        .fold(false, |found, signature| constant_time_eq::constant_time_eq(signature, &expected) | found);
    if !matched {
        return Err(DeliveryRefusal::BadSignature);
    }
    if (now.timestamp() - timestamp).abs() > TOLERANCE_SECONDS {
        return Err(DeliveryRefusal::Stale { tolerance_seconds: TOLERANCE_SECONDS });
    }
    Ok(())
}

fn malformed(what: &str) -> DeliveryRefusal {
    DeliveryRefusal::Malformed(format!("the event has no valid {what}"))
}

fn text<'a>(value: &'a Value, what: &str) -> Result<&'a str, DeliveryRefusal> {
    value.as_str().ok_or_else(|| malformed(what))
}

fn reference(value: &Value, what: &str) -> Result<Reference, DeliveryRefusal> {
    Reference::parse(text(value, what)?)
        .ok()
        .filter(|r| !r.as_str().is_empty())
        .ok_or_else(|| malformed(what))
}

fn currency(value: &Value) -> Result<Currency, DeliveryRefusal> {
    Currency::parse(&text(value, "currency")?.to_ascii_uppercase()).map_err(|_| malformed("currency"))
}

fn day(event: &Value) -> Result<NaiveDate, DeliveryRefusal> {
    let created = event["created"].as_i64().ok_or_else(|| malformed("created"))?;
    DateTime::from_timestamp(created, 0).map(|at| at.date_naive()).ok_or_else(|| malformed("created"))
}

fn invoice_of(object: &Value) -> Result<InvoiceId, DeliveryRefusal> {
    let id = text(&object["metadata"]["invoice_id"], "metadata.invoice_id")?;
    id.parse::<kernel::uuid::Uuid>().map(InvoiceId::from_uuid).map_err(|_| malformed("metadata.invoice_id"))
}

fn amount(value: &Value, currency: Currency, what: &str) -> Result<Decimal, DeliveryRefusal> {
    value
        .as_i64()
        .filter(|units| *units > 0)
        .map(|units| from_minor_units(units, currency))
        .ok_or_else(|| malformed(what))
}

/// The card event a Stripe event object is.
pub fn read_event(event: &Value) -> Result<CardEvent, DeliveryRefusal> {
    let kind = text(&event["type"], "type")?;
    let object = &event["data"]["object"];
    match kind {
        "checkout.session.completed" | "checkout.session.async_payment_succeeded"
            if object["payment_status"] == "paid" =>
        {
            let currency = currency(&object["currency"])?;
            Ok(CardEvent::Paid(CardPayment {
                invoice_id: invoice_of(object)?,
                reference: reference(&object["payment_intent"], "payment_intent")?,
                amount: amount(&object["amount_total"], currency, "amount_total")?,
                currency,
                on: day(event)?,
            }))
        }
        "payment_intent.succeeded" => {
            let currency = currency(&object["currency"])?;
            let received = if object["amount_received"].is_i64() {
                &object["amount_received"]
            } else {
                &object["amount"]
            };
            Ok(CardEvent::Paid(CardPayment {
                invoice_id: invoice_of(object)?,
                reference: reference(&object["id"], "id")?,
                amount: amount(received, currency, "amount_received")?,
                currency,
                on: day(event)?,
            }))
        }
        "charge.refunded" => {
            // Stripe's charges carry their refunds' total, not their list (since 2022-11-15).
            let currency = currency(&object["currency"])?;
            let refunded = object["amount_refunded"].as_i64().filter(|units| *units >= 0);
            let refunded = refunded.ok_or_else(|| malformed("amount_refunded"))?;
            Ok(CardEvent::Refunded(CardRefund {
                payment: reference(&object["payment_intent"], "payment_intent")?,
                charge: reference(&object["id"], "id")?,
                refunded: from_minor_units(refunded, currency),
                currency,
                on: day(event)?,
            }))
        }
        other => Ok(CardEvent::Other { kind: other.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sign(secret: &str, payload: &str, at: i64) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(format!("{at}.{payload}").as_bytes());
        format!("t={at},v1={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn a_signature_is_checked_on_the_exact_body_and_within_five_minutes() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let body = r#"{"type":"ping"}"#;
        let header = sign("whsec_a", body, now.timestamp() - 10);
        assert_eq!(verify(b"whsec_a", body.as_bytes(), &header, now), Ok(()));
        assert_eq!(verify(b"whsec_b", body.as_bytes(), &header, now), Err(DeliveryRefusal::BadSignature));
        assert_eq!(
            verify(b"whsec_a", br#"{"type":"pong"}"#, &header, now),
            Err(DeliveryRefusal::BadSignature)
        );
        let old = sign("whsec_a", body, now.timestamp() - 301);
        assert_eq!(
            verify(b"whsec_a", body.as_bytes(), &old, now),
            Err(DeliveryRefusal::Stale { tolerance_seconds: 300 })
        );
        // A rotated secret: Stripe signs with both, one v1 each.
        let both = format!("{header},v1={}", "00".repeat(32));
        assert_eq!(verify(b"whsec_a", body.as_bytes(), &both, now), Ok(()));
        assert_eq!(verify(b"whsec_a", body.as_bytes(), "v1=abc", now), Err(DeliveryRefusal::BadSignature));
    }

    #[test]
    fn amounts_are_counted_in_the_currencys_minor_unit() {
        let eur = Currency::parse("EUR").unwrap();
        let jpy = Currency::parse("JPY").unwrap();
        assert_eq!(minor_units("1439.90".parse().unwrap(), eur), Some(143_990));
        assert_eq!(minor_units("1200".parse().unwrap(), jpy), Some(1200));
        assert_eq!(minor_units("0.001".parse().unwrap(), eur), None);
        assert_eq!(from_minor_units(143_990, eur), "1439.90".parse::<Decimal>().unwrap());
    }

    #[test]
    fn icelandic_kronur_and_ugandan_shillings_are_counted_in_hundredths_that_are_always_zero() {
        let isk = Currency::parse("ISK").unwrap();
        let ugx = Currency::parse("UGX").unwrap();
        let huf = Currency::parse("HUF").unwrap();
        assert_eq!(minor_units("500".parse().unwrap(), isk), Some(50_000));
        assert_eq!(minor_units("500.5".parse().unwrap(), isk), None);
        assert_eq!(minor_units("12000".parse().unwrap(), ugx), Some(1_200_000));
        assert_eq!(from_minor_units(50_000, isk), Decimal::from(500));
        assert_eq!(minor_units("1500.25".parse().unwrap(), huf), Some(150_025));
        assert_eq!(from_minor_units(150_025, huf), "1500.25".parse::<Decimal>().unwrap());
    }

    #[test]
    fn a_completed_session_and_its_payment_intent_name_the_same_payment() {
        let invoice = kernel::uuid::Uuid::now_v7();
        let metadata = json!({"invoice_id": invoice.to_string()});
        let session = json!({"type": "checkout.session.completed", "created": 1_800_000_000, "data": {"object": {
            "payment_status": "paid", "payment_intent": "pi_1", "amount_total": 1000, "currency": "eur", "metadata": metadata}}});
        let intent = json!({"type": "payment_intent.succeeded", "created": 1_800_000_000, "data": {"object": {
            "id": "pi_1", "amount_received": 1000, "currency": "eur", "metadata": metadata}}});
        let (Ok(CardEvent::Paid(a)), Ok(CardEvent::Paid(b))) = (read_event(&session), read_event(&intent))
        else {
            panic!("both are payments")
        };
        assert_eq!(a, b);
        assert_eq!(a.amount, "10.00".parse::<Decimal>().unwrap());
        let unpaid =
            json!({"type": "checkout.session.completed", "data": {"object": {"payment_status": "unpaid"}}});
        assert_eq!(read_event(&unpaid), Ok(CardEvent::Other { kind: "checkout.session.completed".into() }));
        let refund = json!({"type": "charge.refunded", "created": 1_800_000_000, "data": {"object": {
            "id": "ch_1", "payment_intent": "pi_1", "currency": "eur", "amount_refunded": 250}}});
        let Ok(CardEvent::Refunded(refund)) = read_event(&refund) else { panic!("a refund") };
        assert_eq!((refund.charge.as_str(), refund.refunded), ("ch_1", "2.50".parse().unwrap()));
        assert_eq!(refund.key().as_str(), "ch_1/refunded/2.5");
    }
}
