//! Card payments through Stripe: the team's account (`/v1/payment-providers/stripe`), the
//! webhook Stripe posts the team's events to (public, found by the token in its address,
//! trusted by its signature), and the client's "Pay by card" (`POST /invoices/{id}/pay`).

use actix_web::http::{StatusCode, header};
use actix_web::{HttpRequest, HttpResponse, delete, get, post, put, web};
use billing::InvoiceId;
use billing::cards::{DeliveryRefusal, Processor, stripe_secret_key, stripe_webhook_secret};
use billing::service::{self, CardError, Received, ReturnLinks};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::conventions::body::Json;
use crate::conventions::client::client_ip;
use crate::conventions::error::{ApiError, ErrorBody};
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite};
use crate::rest::routes::team::keeper;
use crate::rest::routes::{BodyErrors, KeyedErrors, Timestamp, not_found, path_id};
use crate::rest::state::ApiState;

/// The team's Stripe keys, from its Stripe dashboard (Developers → API keys, and the
/// webhook endpoint's signing secret). Both are write-only: never answered, never logged.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"secretKey": "sk_test_51HxExampleKey", "webhookSecret": "whsec_3fExampleSecret"}))]
pub(crate) struct StripeInput {
    /// A secret key (`sk_live_…`, `sk_test_…`) or a restricted key (`rk_…`) that may write
    /// Checkout Sessions.
    #[schema(pattern = r"^(sk|rk)_[!-~]+$", max_length = 255)]
    secret_key: String,
    /// The signing secret of the webhook endpoint registered at `webhookUrl`.
    #[schema(pattern = r"^whsec_[!-~]+$", max_length = 255)]
    webhook_secret: String,
}

/// The team's Stripe account as billable keeps it (its keys are never shown).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StripeAccountBody {
    #[schema(example = "stripe")]
    provider: &'static str,
    /// Where Stripe is to post the team's events: register it as a webhook endpoint for
    /// `checkout.session.completed`, `payment_intent.succeeded` and `charge.refunded`.
    /// Answered once, by the `PUT` that made it; `null` when read later.
    #[schema(
        required = true,
        example = "https://billing.example.com/v1/payment-providers/stripe/webhook/Jx3…"
    )]
    webhook_url: Option<String>,
    connected_at: Timestamp,
    updated_at: Timestamp,
}

/// Connect the team's Stripe account
///
/// Stores the team's Stripe secret key and webhook signing secret, and answers the
/// `webhookUrl` to register at Stripe: an address with an unguessable token, new with every
/// `PUT` (an earlier one stops working). From then on the team's invoice pages show "Pay by
/// card", which opens a Stripe Checkout for `amountDue`; Stripe's events at `webhookUrl`
/// book each payment once, as a payment of method `card`. Needs `invoices:write`, and an
/// owner's or admin's key.
#[utoipa::path(
    tag = "Card payments",
    request_body = StripeInput,
    responses(
        (status = 200, description = "Connected", body = StripeAccountBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[put("")]
pub(crate) async fn connect_stripe(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<StripeInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<StripeAccountBody>, ApiError> {
    keeper(&auth.principal)?;
    let secret_key = stripe_secret_key(&input.secret_key).map_err(|e| e.at("secretKey"))?;
    let webhook_secret = stripe_webhook_secret(&input.webhook_secret).map_err(|e| e.at("webhookSecret"))?;
    let team = auth.principal.team_id;
    let now = state.clock.now();
    let token =
        service::connect_stripe(&*state.stores.billing, team, secret_key, webhook_secret, now).await?;
    let mut answer = account(&state, team).await?;
    answer.webhook_url = Some(
        state
            .settings
            .sending
            .links
            .absolute(&format!("/v1/payment-providers/stripe/webhook/{}", token.expose())),
    );
    Ok(web::Json(answer))
}

async fn account(state: &ApiState, team: accounts::TeamId) -> Result<StripeAccountBody, ApiError> {
    let account = state.stores.billing.card_account(team, Processor::Stripe).await?;
    let account =
        account.ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "no Stripe account is connected"))?;
    Ok(StripeAccountBody {
        provider: Processor::Stripe.as_str(),
        webhook_url: None,
        connected_at: Timestamp(account.created_at),
        updated_at: Timestamp(account.updated_at),
    })
}

/// Get the team's Stripe account
///
/// Whether the team has connected Stripe, and since when; its keys are never answered.
/// 404 when none is connected. Needs `invoices:read`, and an owner's or admin's key.
#[utoipa::path(
    tag = "Card payments",
    responses(
        (status = 200, description = "The account", body = StripeAccountBody),
        (status = 404, description = "No Stripe account is connected", body = ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn get_stripe(
    auth: Auth<InvoicesRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<StripeAccountBody>, ApiError> {
    keeper(&auth.principal)?;
    Ok(web::Json(account(&state, auth.principal.team_id).await?))
}

/// Disconnect the team's Stripe account
///
/// Forgets its keys: the pages show no "Pay by card" and the webhook address stops working.
/// Payments booked stay booked. Needs `invoices:write`, and an owner's or admin's key.
#[utoipa::path(
    tag = "Card payments",
    responses(
        (status = 204, description = "Disconnected"),
        (status = 404, description = "No Stripe account is connected", body = ErrorBody),
        KeyedErrors,
    )
)]
#[delete("")]
pub(crate) async fn disconnect_stripe(
    auth: Auth<InvoicesWrite>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    keeper(&auth.principal)?;
    if state.stores.billing.disconnect_card_account(auth.principal.team_id, Processor::Stripe).await? {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::new(StatusCode::NOT_FOUND, "no Stripe account is connected"))
    }
}

/// A Stripe event as Stripe sends it: the handler reads the raw body, checks its signature,
/// then the event; this describes it for the OpenAPI description.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(example = json!({"id": "evt_1Q", "object": "event", "type": "checkout.session.completed", "created": 1_795_000_000,
    "data": {"object": {"object": "checkout.session", "payment_status": "paid", "payment_intent": "pi_3Q",
        "amount_total": 143_990, "currency": "eur",
        "metadata": {"team_id": "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e", "invoice_id": "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6f"}}}}))]
#[expect(dead_code, reason = "it describes the body; the handler reads the raw bytes")]
pub(crate) struct StripeEvent {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    created: i64,
    /// `object`: what the event is about (a Checkout Session, a `PaymentIntent`, a charge).
    data: serde_json::Map<String, serde_json::Value>,
}

/// Whether the team's clients can pay by card: this server has a card processor and the
/// team connected its account.
pub(crate) async fn takes_cards(state: &ApiState, team: accounts::TeamId) -> Result<bool, ApiError> {
    Ok(state.cards.is_some() && state.stores.billing.card_account(team, Processor::Stripe).await?.is_some())
}

/// What billable answers Stripe.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ReceivedBody {
    received: bool,
}

/// Receive Stripe's events
///
/// Where Stripe posts the team's events (the `webhookUrl` of its account). Public: the
/// token in the address finds the team, and the `Stripe-Signature` header, checked on the
/// raw body against the team's webhook secret in constant time and no older than 300
/// seconds, proves Stripe sent it. `checkout.session.completed` (paid) and
/// `payment_intent.succeeded` book their `PaymentIntent` as a payment (method `card`,
/// reference the `PaymentIntent`'s id) once, however often Stripe retries and whichever
/// replica receives it; money beyond what the invoice owes becomes its client's
/// `creditBalance` and an `invoice.overpaid` event. `charge.refunded` books each refund
/// once, from that credit first. Other events are acknowledged and ignored.
#[utoipa::path(
    tag = "Card payments",
    params(
        ("token" = String, Path, description = "The token of the team's webhook address", example = "Jx3kq9ZtY0bV5wN8mR2pL7cH4sD6fG1aE9uT3yQ5xWz"),
        ("Stripe-Signature" = String, Header, description = "Stripe's signature of the body: `t=` the time it signed, `v1=` an HMAC-SHA256 of `{t}.{body}` under the endpoint's signing secret", example = "t=1795000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd"),
    ),
    request_body(content = StripeEvent, description = "A Stripe event, as Stripe sends it", content_type = "application/json"),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 200, description = "Taken (booked, booked before, or not an event billable books)", body = ReceivedBody),
        (status = 400, description = "No valid signature, a stale one, or not an event", body = ErrorBody),
        (status = 404, description = "No account has this webhook address", body = ErrorBody),
        (status = 429, description = "Too many failed deliveries from this IP", body = ErrorBody),
    )
)]
#[post("/{token}")]
pub(crate) async fn stripe_webhook(
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
    state: web::Data<ApiState>,
) -> Result<web::Json<ReceivedBody>, ApiError> {
    let refused = |error: ApiError| async {
        // Only failures count against the IP: Stripe's own bursts are never throttled.
        if let Some(ip) = client_ip(&req, state.settings.trust_forwarded) {
            state.limits.check_ip(ip).await.map_err(too_many_requests)?;
        }
        Err(error)
    };
    let Some(cards) = state.cards.clone() else {
        return refused(ApiError::new(StatusCode::NOT_FOUND, "card payments are not configured")).await;
    };
    let Some(signature) = req.headers().get("stripe-signature").and_then(|v| v.to_str().ok()) else {
        return refused(ApiError::new(StatusCode::BAD_REQUEST, "Stripe-Signature: the header is missing"))
            .await;
    };
    let received = service::receive_card_delivery(
        &*state.stores.billing,
        &*cards,
        &path,
        &body,
        signature,
        state.clock.now(),
    )
    .await;
    match received {
        Ok(Received::Unbookable(error)) => {
            tracing::warn!(%error, "a card payment or refund Stripe reported could not be booked; book it by hand");
        }
        Ok(Received::Ignored(kind)) => tracing::debug!(kind, "a Stripe event billable does not book"),
        Ok(Received::Booked(_)) => {}
        Err(CardError::UnknownAccount) => {
            return refused(ApiError::new(
                StatusCode::NOT_FOUND,
                "no Stripe account has this webhook address",
            ))
            .await;
        }
        Err(CardError::Delivery(refusal)) => {
            let message = match refusal {
                DeliveryRefusal::Malformed(what) => format!("body: {what}"),
                other => format!("Stripe-Signature: {other}"),
            };
            return refused(ApiError::new(StatusCode::BAD_REQUEST, message)).await;
        }
        Err(CardError::Store(error)) => return Err(error.into()),
        Err(other) => return Err(ApiError::internal(other.into())),
    }
    Ok(web::Json(ReceivedBody { received: true }))
}

/// Pay an invoice by card
///
/// What the "Pay by card" button of an invoice's page posts: a Stripe Checkout for what is
/// due, in the invoice's currency, and a redirect (303) to it. Stripe sends the client back
/// to the page, which then shows the payment received (or, until Stripe's event arrives,
/// that it is being processed). Nothing due, or no card payments, redirects back to the
/// page; Stripe unavailable, back to the page with a notice. Public like the page: the
/// unguessable id is the only credential, and requests are limited per client IP.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    extensions(("x-billable-public" = json!(true))),
    responses(
        (status = 303, description = "To Stripe's Checkout, or back to the page", headers(("Location" = String, description = "Where to go"))),
        (status = 404, description = "No such invoice", body = ErrorBody),
        (status = 429, description = "Too many requests from this IP", body = ErrorBody),
    )
)]
#[post("/{id}/pay")]
pub(crate) async fn pay_by_card(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if let Some(ip) = client_ip(&req, state.settings.trust_forwarded) {
        state.limits.check_ip(ip).await.map_err(too_many_requests)?;
    }
    let id: InvoiceId = path_id(&path, "invoice")?;
    let page = format!("/invoices/{id}");
    let see =
        |location: String| HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish();
    let Some(cards) = state.cards.clone() else { return Ok(see(page)) };
    let links = &state.settings.sending.links;
    let back = ReturnLinks {
        paid: links.absolute(&format!("{page}?payment=paid")),
        cancelled: links.absolute(&format!("{page}?payment=cancelled")),
    };
    match service::card_checkout(&*state.stores.billing, &*cards, id, back).await {
        Ok(checkout) => Ok(see(checkout.url)),
        Err(CardError::NotFound) => Err(not_found("invoice")),
        Err(CardError::NotOffered | CardError::NothingDue) => Ok(see(page)),
        Err(CardError::Checkout(error)) => {
            tracing::warn!(%error, invoice = %id, "no Stripe Checkout could be made");
            Ok(see(format!("{page}?payment=failed")))
        }
        Err(CardError::Store(error)) => Err(error.into()),
        Err(other) => Err(ApiError::internal(other.into())),
    }
}

/// How a client pays an invoice: the links and figures to put in a message to it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaymentLinkBody {
    /// The invoice's page on where people reach this server (`BILLABLE_PUBLIC_URL`): what is
    /// due, the bank details and QR code, and "Pay by card" when the team takes cards.
    #[schema(example = "https://billing.example.com/invoices/0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e")]
    url: String,
    /// Its PDF, on the same address.
    #[schema(
        example = "https://billing.example.com/v1/invoices/pdf?id=0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e"
    )]
    pdf_url: String,
    amount_due: crate::rest::routes::numbers::Exact,
    #[schema(example = "EUR")]
    currency: &'static str,
    /// What a bank transfer quotes.
    #[schema(example = "RF18INV0001")]
    payment_reference: String,
    /// Whether the page offers "Pay by card" now: the team connected Stripe and
    /// something is due.
    pay_by_card: bool,
}

/// Get an invoice's payment link
///
/// What to send a client so that it pays: its page's address on where people reach this
/// server, the PDF's, what is due, the payment reference, and whether it can pay by card
/// there. Needs `invoices:read`.
#[utoipa::path(
    tag = "Invoices",
    params(("id" = Uuid, Path, description = "Invoice id")),
    responses(
        (status = 200, description = "The invoice's payment link", body = PaymentLinkBody),
        crate::rest::routes::NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/payment-link")]
pub(crate) async fn payment_link(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<PaymentLinkBody>, ApiError> {
    Ok(web::Json(link(&state, &auth.principal, &path).await?))
}

/// The payment link of the caller's team's invoice `id` (as written in a path).
pub(crate) async fn link(
    state: &ApiState,
    who: &accounts::Principal,
    id: &str,
) -> Result<PaymentLinkBody, ApiError> {
    let id: InvoiceId = path_id(id, "invoice")?;
    let invoice =
        state.stores.billing.get_invoice(who.team_id, id).await?.ok_or_else(|| not_found("invoice"))?;
    let due = invoice.balance.due();
    let takes_cards = takes_cards(state, who.team_id).await?;
    let links = &state.settings.sending.links;
    Ok(PaymentLinkBody {
        url: links.page(id),
        pdf_url: links.pdf(billing::issue::DocumentRef::Invoice(id)),
        amount_due: crate::rest::routes::numbers::Exact(billing::money::round_to_minor(
            due,
            invoice.currency,
        )),
        currency: invoice.currency.as_str(),
        payment_reference: invoice.payment_reference.to_string(),
        pay_by_card: takes_cards && due > billing::money::Decimal::ZERO,
    })
}

/// What a client holds as credit.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClientCreditBody {
    client_id: uuid::Uuid,
    /// What the client paid by card beyond what its invoices owed, per currency, to apply
    /// to an invoice (`POST /v1/invoices/{id}/apply-credit`) or refund; `[]` when none.
    credit_balance: Vec<CreditBody>,
}

/// Credit a client holds in one currency.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CreditBody {
    #[schema(example = "EUR")]
    currency: &'static str,
    /// Greater than 0, at the currency's minor unit.
    amount: crate::rest::routes::numbers::Exact,
}

/// Get a client's credit
///
/// The client's `creditBalance`: what card payments brought beyond what its invoices owed,
/// per currency. A client of another team is a 404 like an unknown one. Needs
/// `clients:read`.
#[utoipa::path(
    tag = "Clients",
    params(("id" = Uuid, Path, description = "Client id")),
    responses(
        (status = 200, description = "The client's credit", body = ClientCreditBody),
        crate::rest::routes::NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/credit")]
pub(crate) async fn client_credit(
    auth: Auth<crate::rest::auth::ClientsRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ClientCreditBody>, ApiError> {
    Ok(web::Json(credit(&state, &auth.principal, &path).await?))
}

/// The credit of the caller's team's client `id` (as written in a path).
pub(crate) async fn credit(
    state: &ApiState,
    who: &accounts::Principal,
    id: &str,
) -> Result<ClientCreditBody, ApiError> {
    let client: billing::ClientId = path_id(id, "client")?;
    let billing = &*state.stores.billing;
    billing.get(who.team_id, client).await?.ok_or_else(|| not_found("client"))?;
    let balances = billing.credit_balances(who.team_id, Some(client)).await?;
    Ok(ClientCreditBody {
        client_id: kernel::Id::as_uuid(&client),
        credit_balance: balances
            .into_iter()
            .map(|credit| CreditBody {
                currency: credit.currency.as_str(),
                amount: crate::rest::routes::numbers::Exact(credit.amount),
            })
            .collect(),
    })
}
