//! `/v1/webhooks`: endpoints subscribed to the team's events, signed per Standard Webhooks,
//! their deliveries, tests and redeliveries, and the event types.

use std::net::IpAddr;
use std::time::Duration;

use accounts::Principal;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, delete, get, patch, post, web};
use chrono::SecondsFormat;
use kernel::{FieldError, Id};
use notify::service::{
    EndpointChanges, EndpointError, NewEndpoint, Reach, Resolve, create_endpoint, may_subscribe,
    rotate_secret, update_endpoint,
};
use notify::webhooks::{
    DEFAULT_OVERLAP, DeliveryFilter, EndpointDescription, MAX_ENDPOINTS, MAX_OVERLAP, RedeliverError, UrlRule,
};
use notify::{
    DeliveryStatus, EventFilter, EventType, NewEvent, WebhookDelivery, WebhookDeliveryId, WebhookEndpoint,
    WebhookEndpointId, WebhookUrl,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, OptionalJson, Patch, whole_in};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, WebhooksRead, WebhooksWrite, require};
use crate::rest::openapi::{
    DeliveryStatus as DeliveryStatusSchema, EventPattern, EventType as EventTypeSchema,
};
use crate::rest::paging::{self, Page};
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, not_found, path_id,
};
use crate::rest::state::ApiState;

/// How long resolving an endpoint's host may take before it is refused.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(3);

/// A webhook endpoint. Its secret is shown only when it is made or rotated.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointBody {
    id: Uuid,
    #[schema(example = "https://hooks.example.com/billable")]
    url: String,
    /// The event types and patterns it takes: `invoice.paid`, `payment.*`, `*`.
    #[schema(value_type = Vec<EventPattern>, example = json!(["invoice.paid", "payment.*"]))]
    events: Vec<String>,
    description: String,
    /// `false` once a receiver answered 410 Gone, or when turned off by hand; deliveries
    /// are then not made, and PATCH `enabled: true` turns it back on.
    enabled: bool,
    #[schema(required = true)]
    disabled_at: Option<Timestamp>,
    #[schema(required = true)]
    disabled_reason: Option<String>,
    /// After a rotation: until when the previous secret signs too (each delivery then
    /// carries two signatures).
    #[schema(required = true)]
    previous_secret_expires_at: Option<Timestamp>,
    /// The user who made it: it receives only what that user may read, as the team has them
    /// when each delivery is made (a member's endpoint gets the member's own time entries
    /// and timers). Rotating or revoking the key that made it changes nothing.
    created_by: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl EndpointBody {
    fn of(endpoint: &WebhookEndpoint, now: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            id: endpoint.id.as_uuid(),
            url: endpoint.url.as_str().to_owned(),
            events: endpoint.events.words(),
            description: endpoint.description.as_str().to_owned(),
            enabled: endpoint.disabled.is_none(),
            disabled_at: endpoint.disabled.as_ref().map(|d| Timestamp(d.at)),
            disabled_reason: endpoint.disabled.as_ref().map(|d| d.reason.clone()),
            previous_secret_expires_at: endpoint
                .previous_secret
                .as_ref()
                .map(|(_, until)| *until)
                .filter(|until| *until > now)
                .map(Timestamp),
            created_by: endpoint.created_by.as_uuid(),
            created_at: Timestamp(endpoint.created_at),
            updated_at: Timestamp(endpoint.updated_at),
        }
    }
}

/// An endpoint with its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EndpointWithSecret {
    #[serde(flatten)]
    endpoint: EndpointBody,
    /// `whsec_` and base64 of 32 random bytes: what a Standard Webhooks verifier takes.
    /// Shown only now; store it.
    #[schema(example = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")]
    secret: String,
}

/// A new endpoint.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"url": "https://hooks.example.com/billable", "events": ["invoice.paid", "payment.*"],
    "description": "Bookkeeping sync"}))]
pub(crate) struct EndpointInput {
    /// An absolute `http` or `https` URL without credentials, on a public address.
    #[schema(
        pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://",
        max_length = 2048,
        example = "https://hooks.example.com/billable"
    )]
    url: String,
    /// 1 to 64 event types (`invoice.paid`), families (`payment.*`) or `*`.
    #[schema(value_type = Vec<EventPattern>, min_items = 1, max_items = 64)]
    events: Vec<String>,
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 500)]
    description: Option<String>,
}

/// A change of an endpoint: only the fields given change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"events": ["*"], "enabled": true}))]
pub(crate) struct EndpointPatch {
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[Hh][Tt][Tt][Pp][Ss]?://", max_length = 2048)]
    url: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Vec<EventPattern>, min_items = 1, max_items = 64)]
    events: Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 500)]
    description: Patch<String>,
    /// `true` turns a disabled endpoint back on; `false` turns it off.
    #[serde(default)]
    #[schema(value_type = bool)]
    enabled: Patch<bool>,
}

/// A rotation of an endpoint's secret.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"overlapSeconds": 3600}))]
pub(crate) struct RotateInput {
    /// How long the previous secret signs beside the new one, 0 to 604800 (7 days).
    /// Default 86400 (a day).
    #[serde(default)]
    #[schema(value_type = Option<u64>, minimum = 0, maximum = 604_800, default = 86400)]
    overlap_seconds: Option<serde_json::Number>,
}

/// One event's delivery to the endpoint, with its last attempt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WebhookDeliveryBody {
    id: Uuid,
    /// The `webhook-id` it carries: the event's, the same on every attempt and redelivery.
    event_id: Uuid,
    #[schema(value_type = EventTypeSchema)]
    event_type: &'static str,
    #[schema(value_type = DeliveryStatusSchema)]
    status: &'static str,
    /// Attempts made.
    attempts: u32,
    /// The last attempt's status code from the receiver.
    #[schema(required = true)]
    response_status: Option<u16>,
    /// How long the last attempt took.
    #[schema(required = true)]
    duration_ms: Option<u64>,
    /// What went wrong with the last attempt.
    #[schema(required = true)]
    error: Option<String>,
    #[schema(required = true)]
    last_attempt_at: Option<Timestamp>,
    /// While pending: when the next attempt is due.
    #[schema(required = true)]
    next_attempt_at: Option<Timestamp>,
    created_at: Timestamp,
}

impl From<WebhookDelivery> for WebhookDeliveryBody {
    fn from(delivery: WebhookDelivery) -> Self {
        Self {
            id: delivery.id.as_uuid(),
            event_id: delivery.event_id.as_uuid(),
            event_type: delivery.event_type.as_str(),
            status: delivery.status.as_str(),
            attempts: delivery.attempts,
            response_status: delivery.response_status,
            duration_ms: delivery.duration_ms,
            error: delivery.error,
            last_attempt_at: delivery.last_attempt_at.map(Timestamp),
            next_attempt_at: delivery.next_attempt_at.map(Timestamp),
            created_at: Timestamp(delivery.created_at),
        }
    }
}

/// An event type an endpoint may subscribe to.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EventTypeBody {
    #[serde(rename = "type")]
    #[schema(value_type = EventTypeSchema)]
    kind: &'static str,
    /// What raises it, and what its `data` is.
    description: &'static str,
    /// The permission a key needs to subscribe to it.
    permission: &'static str,
}

/// What raises each event, and what its `data` is.
pub(crate) fn describe_type(kind: EventType) -> &'static str {
    match kind {
        EventType::InvoiceCreated => {
            "An invoice was made (POST /v1/invoices, /v1/invoices/from-time). data: the invoice."
        }
        EventType::InvoiceUpdated => "An invoice was changed (PATCH, mark). data: the invoice.",
        EventType::InvoiceDeleted => "An invoice was deleted. data: the invoice as it was.",
        EventType::InvoiceSent => {
            "An invoice's e-mail was accepted by the SMTP server, or the team marked it sent (POST /v1/invoices/{id}/mark-sent). data: the invoice."
        }
        EventType::InvoicePaid => "A payment left nothing due. data: the invoice.",
        EventType::InvoiceOverdue => {
            "A job pass found an invoice with something due past its due date (once per due date). data: the invoice."
        }
        EventType::InvoiceReminderSent => {
            "A reminder's e-mail was accepted by the SMTP server. data: the invoice."
        }
        EventType::InvoiceWrittenOff => "What was due on an invoice was written off. data: the invoice.",
        EventType::InvoiceOverpaid => {
            "A card payment brought more than the invoice owed; the rest became its client's creditBalance. data: the invoice."
        }
        EventType::PaymentCreated => "A payment was recorded. data: the payment.",
        EventType::PaymentRefunded => "A refund was recorded. data: the refund.",
        EventType::PaymentVoided => "A payment, refund or write-off was voided. data: the voided entry.",
        EventType::CreditNoteCreated => "A credit note was issued. data: the credit note.",
        EventType::QuoteSent => {
            "A quote was numbered and put before its client (POST /v1/quotes/{id}/finalize). data: the quote."
        }
        EventType::QuoteAccepted => {
            "A quote was accepted, on its page or as the team recorded. data: the quote."
        }
        EventType::QuoteDeclined => {
            "A quote was declined, on its page or as the team recorded. data: the quote."
        }
        EventType::QuoteExpired => {
            "A job pass found a sent quote past its validUntil, undecided (once per validUntil). data: the quote."
        }
        EventType::QuoteConverted => {
            "A quote's full or final invoice was made (POST /v1/quotes/{id}/convert); invoice.created tells of the invoice. data: the quote."
        }
        EventType::BankTransactionUnmatched => {
            "An imported bank statement left money in for a person: nothing booked it, or it only suggests an invoice (POST /v1/bank-statements). data: the transaction."
        }
        EventType::MessageFailed => "An e-mail failed for good. data: the message.",
        EventType::ClientCreated => "A client was made (also inline, by an invoice). data: the client.",
        EventType::ClientUpdated => "A client was changed. data: the client.",
        EventType::ClientDeleted => "A client was deleted. data: the client as it was.",
        EventType::TimeEntryCreated => "Time was logged (also by stopping a timer). data: the time entry.",
        EventType::TimeEntryUpdated => "A time entry was changed. data: the time entry.",
        EventType::TimeEntryDeleted => "A time entry was deleted. data: the time entry as it was.",
        EventType::TimerStarted => "A timer was started. data: the timer.",
        EventType::TimerStopped => "A timer was stopped, or discarded. data: the timer.",
        EventType::WebhookTest => "Sent by POST /v1/webhooks/{id}/test to that endpoint only.",
    }
}

/// List the event types
///
/// Every event type an endpoint may subscribe to, what raises it, and the permission a key
/// needs to subscribe to it. Needs `webhooks:read`.
#[utoipa::path(
    tag = "Webhooks",
    responses((status = 200, description = "The event types", body = Vec<EventTypeBody>), KeyedErrors)
)]
#[get("")]
pub(crate) async fn list_event_types(_auth: Auth<WebhooksRead>) -> web::Json<Vec<EventTypeBody>> {
    web::Json(
        EventType::subscribable()
            .map(|kind| EventTypeBody {
                kind: kind.as_str(),
                description: describe_type(kind),
                permission: kind.family().read_permission().as_str(),
            })
            .collect(),
    )
}

/// The events `patterns` name, checked, and the caller's right to read what they carry (403
/// otherwise).
fn events(patterns: &[String], who: &Principal) -> Result<EventFilter, ApiError> {
    let filter = EventFilter::parse(patterns).map_err(|rule| match rule {
        notify::EventRule::Unknown { index, pattern } => FieldError::new(
            format!("events[{index}]"),
            format!(
                "{pattern:?} names no event type; use a type of GET /v1/webhooks/event-types, a family such as \
                 \"payment.*\", or \"*\""
            ),
        ),
        other => FieldError::new("events", other.to_string()),
    })?;
    may_subscribe(who, &filter).map_err(|error| refused(error, who))?;
    Ok(filter)
}

/// `text` as an endpoint's URL, parsed.
fn url(text: &str) -> Result<WebhookUrl, FieldError> {
    WebhookUrl::parse(text).map_err(|rule| FieldError::new("url", rule.to_string()))
}

/// Where this server lets endpoints point, host names resolved by the system's resolver.
fn reach(state: &ApiState) -> Reach<'_> {
    Reach { resolver: &SystemResolver, allow_private: state.settings.sending.allow_private_webhooks }
}

/// The system's resolver, given [`RESOLVE_TIMEOUT`] to answer.
struct SystemResolver;

#[async_trait::async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, String> {
        match tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((host, port))).await {
            Err(_) => Err("no answer in time".to_owned()),
            Ok(Err(error)) => Err(error.to_string()),
            Ok(Ok(addresses)) => Ok(addresses.map(|address| address.ip()).collect()),
        }
    }
}

/// An endpoint not made or changed, in the API's words.
fn refused(error: EndpointError, who: &Principal) -> ApiError {
    match error {
        EndpointError::Forbidden(permission) => {
            require(who, permission, "these events' data").err().unwrap_or_else(|| {
                ApiError::internal(anyhow::anyhow!("refused {permission:?}, which the key has"))
            })
        }
        EndpointError::Unresolved { host, reason } => {
            FieldError::new("url", UrlRule::Unresolved { host, reason }.to_string()).into()
        }
        EndpointError::NotPublic { host, address } => FieldError::new(
            "url",
            format!(
                "{host} is {address}, which is not a globally reachable address (loopback, private, link-local \
                 or another special-purpose block); webhooks go to public addresses only. To test with a \
                 receiver on this machine, start the server with BILLABLE_WEBHOOK_ALLOW_PRIVATE=true"
            ),
        )
        .into(),
        EndpointError::TooMany => ApiError::new(
            StatusCode::CONFLICT,
            format!("the team has {MAX_ENDPOINTS} webhook endpoints, the most it may have; delete one first"),
        ),
        EndpointError::NotFound => not_found("webhook endpoint"),
        EndpointError::Conflict => {
            ApiError::conflict("the webhook endpoint changed while this request changed it; try again")
        }
        EndpointError::StillSigning { until } => ApiError::conflict(format!(
            "the previous secret still signs until {}; rotate again after that, or with \
             overlapSeconds 0 to stop both earlier secrets now",
            until.to_rfc3339_opts(SecondsFormat::Secs, true)
        )),
        EndpointError::Store(error) => error.into(),
    }
}

fn description(text: Option<String>) -> Result<EndpointDescription, FieldError> {
    EndpointDescription::parse(text.unwrap_or_default()).map_err(|e| e.at("description"))
}

fn endpoint_id(path: &str) -> Result<WebhookEndpointId, ApiError> {
    path_id(path, "webhook endpoint")
}

async fn the_endpoint(
    state: &ApiState,
    who: &Principal,
    id: WebhookEndpointId,
) -> Result<WebhookEndpoint, ApiError> {
    state.stores.notify.get_endpoint(who.team_id, id).await?.ok_or_else(|| not_found("webhook endpoint"))
}

/// Subscribe an endpoint
///
/// Makes an endpoint that receives the team's events the patterns take, signed per
/// Standard Webhooks: `webhook-id` (the event's id, the same on each attempt),
/// `webhook-timestamp` and `webhook-signature` (`v1,` and the base64 HMAC-SHA256 of
/// `id.timestamp.body` with the secret). The body is `{type, timestamp, data}`, `data` the
/// resource as `GET` shows it when the event happened. Only a 2xx answer delivers; 410
/// disables the endpoint; 429 and 503 are retried no sooner than their `Retry-After`; others
/// are retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. The answer carries the
/// signing secret, shown only this once. A URL on a loopback, private or link-local address
/// is refused. Subscribing to events needs the read permission of what they carry (see
/// `GET /v1/webhooks/event-types`). The endpoint acts for the caller's user (`createdBy`):
/// it gets only what that user may read when each event is delivered, so a member's endpoint
/// gets the member's own time entries and timers, and none once the user leaves the team.
/// A team has at most 20 endpoints. Needs `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    request_body = EndpointInput,
    responses(
        (status = 201, description = "Created, with its secret", body = EndpointWithSecret, headers(("Location" = String, description = "URL of the endpoint"))),
        (status = 409, description = "The team has 20 endpoints, the most it may have", body = ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_webhook_endpoint(
    auth: Auth<WebhooksWrite>,
    Json(input): Json<EndpointInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let created = create(&state, &auth.principal, input).await?;
    Ok(super::created(format!("/v1/webhooks/{}", created.endpoint.id), created))
}

/// Makes an endpoint of `input` in the caller's team.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: EndpointInput,
) -> Result<EndpointWithSecret, ApiError> {
    let events = events(&input.events, who)?;
    let description = description(input.description)?;
    let url = url(&input.url)?;
    let now = state.clock.now();
    let new = NewEndpoint { url, events, description };
    let endpoint = create_endpoint(&*state.stores.notify, reach(state), who, new, now)
        .await
        .map_err(|error| refused(error, who))?;
    Ok(EndpointWithSecret { endpoint: EndpointBody::of(&endpoint, now), secret: endpoint.secret.expose() })
}

/// List the endpoints
///
/// The team's endpoints, oldest first, without their secrets. Needs `webhooks:read`.
#[utoipa::path(
    tag = "Webhooks",
    responses((status = 200, description = "The team's endpoints", body = Vec<EndpointBody>), KeyedErrors)
)]
#[get("")]
pub(crate) async fn list_webhook_endpoints(
    auth: Auth<WebhooksRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<EndpointBody>>, ApiError> {
    let now = state.clock.now();
    let endpoints = state.stores.notify.list_endpoints(auth.principal.team_id).await?;
    Ok(web::Json(endpoints.iter().map(|e| EndpointBody::of(e, now)).collect()))
}

/// Get an endpoint
///
/// Needs `webhooks:read`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id")),
    responses((status = 200, description = "The endpoint", body = EndpointBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_webhook_endpoint(
    auth: Auth<WebhooksRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<EndpointBody>, ApiError> {
    let endpoint = the_endpoint(&state, &auth.principal, endpoint_id(&path)?).await?;
    Ok(web::Json(EndpointBody::of(&endpoint, state.clock.now())))
}

/// Change an endpoint
///
/// Only the fields given change. `enabled: true` turns a disabled endpoint back on (its
/// failed deliveries can then be redelivered). Needs `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id")),
    request_body = EndpointPatch,
    responses(
        (status = 200, description = "The changed endpoint", body = EndpointBody),
        (status = 409, description = "The endpoint kept changing meanwhile; nothing was written", body = ErrorBody),
        BodyErrors, NotFound, KeyedErrors
    )
)]
#[patch("/{id}")]
pub(crate) async fn update_webhook_endpoint(
    auth: Auth<WebhooksWrite>,
    path: web::Path<String>,
    Json(input): Json<EndpointPatch>,
    state: web::Data<ApiState>,
) -> Result<web::Json<EndpointBody>, ApiError> {
    let who = &auth.principal;
    let events = input.events.required("events")?.map(|patterns| events(&patterns, who)).transpose()?;
    let description = input.description.required("description")?.map(|d| description(Some(d))).transpose()?;
    let enabled = input.enabled.required("enabled")?;
    let url = input.url.required("url")?.map(|text| url(&text)).transpose()?;
    let asked = EndpointChanges { url, events, description, enabled };
    let store = &*state.stores.notify;
    let endpoint =
        update_endpoint(store, reach(&state), who, endpoint_id(&path)?, asked, || state.clock.now())
            .await
            .map_err(|error| refused(error, who))?;
    Ok(web::Json(EndpointBody::of(&endpoint, state.clock.now())))
}

/// Delete an endpoint
///
/// Deletes the endpoint and its delivery log; deliveries under way are not made. Needs
/// `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id")),
    responses((status = 200, description = "Deleted", body = Deleted), NotFound, KeyedErrors)
)]
#[delete("/{id}")]
pub(crate) async fn delete_webhook_endpoint(
    auth: Auth<WebhooksWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id = endpoint_id(&path)?;
    if !state.stores.notify.delete_endpoint(auth.principal.team_id, id).await? {
        return Err(not_found("webhook endpoint"));
    }
    Ok(Deleted::new("webhook endpoint"))
}

/// Rotate an endpoint's secret
///
/// Makes a new secret, shown in the answer this once. For `overlapSeconds` (default a
/// day) the previous secret signs too: each delivery carries both signatures, so a
/// receiver may switch to the new one at any moment in between. Needs `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id")),
    request_body(content = RotateInput, description = "May be left out (an empty body too)"),
    responses(
        (status = 200, description = "The endpoint with its new secret", body = EndpointWithSecret),
        (status = 409, description = "The previous secret still signs (a rotation's overlap runs); nothing was changed", body = ErrorBody),
        BodyErrors, NotFound, KeyedErrors
    )
)]
#[post("/{id}/rotate-secret")]
pub(crate) async fn rotate_webhook_secret(
    auth: Auth<WebhooksWrite>,
    path: web::Path<String>,
    OptionalJson(input): OptionalJson<RotateInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<EndpointWithSecret>, ApiError> {
    let overlap = match &input.overlap_seconds {
        None => DEFAULT_OVERLAP,
        Some(seconds) => {
            let most = i64::try_from(MAX_OVERLAP.as_secs()).unwrap_or(i64::MAX);
            let seconds = whole_in(seconds, "overlapSeconds", 0, most)?;
            Duration::from_secs(seconds.unsigned_abs())
        }
    };
    let who = &auth.principal;
    let store = &*state.stores.notify;
    let rotated = rotate_secret(store, who, endpoint_id(&path)?, overlap, || state.clock.now())
        .await
        .map_err(|error| refused(error, who))?;
    let now = state.clock.now();
    Ok(web::Json(EndpointWithSecret {
        endpoint: EndpointBody::of(&rotated, now),
        secret: rotated.secret.expose(),
    }))
}

/// Send a test event
///
/// Queues a `webhook.test` event to this endpoint only (202), signed as every delivery is;
/// its delivery shows in the endpoint's log. Needs `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id")),
    responses((status = 202, description = "Queued", body = WebhookDeliveryBody), NotFound, KeyedErrors)
)]
#[post("/{id}/test")]
pub(crate) async fn test_webhook_endpoint(
    auth: Auth<WebhooksWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    let team = auth.principal.team_id;
    let now = state.clock.now();
    let data = serde_json::json!({
        "endpointId": id.as_uuid(),
        "message": "A test event from billable: this endpoint receives the team's events.",
    });
    let event = NewEvent {
        id: notify::EventId::generate(),
        team_id: team,
        kind: EventType::WebhookTest,
        subject: id.as_uuid(),
        thread: format!("webhook:{id}"),
        data: data.to_string(),
        owner: None,
        occurred_at: now,
    };
    let delivery = state.stores.notify.queue_test(team, id, &event).await?;
    let delivery = delivery.ok_or_else(|| not_found("webhook endpoint"))?;
    Ok(HttpResponse::Accepted().json(WebhookDeliveryBody::from(delivery)))
}

/// The delivery log's filter.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveryQuery {
    /// Only deliveries in this status.
    #[param(value_type = Option<DeliveryStatusSchema>, example = "failed")]
    status: Option<String>,
}

/// List an endpoint's deliveries
///
/// Newest first, each with its last attempt: status code, duration, error, and while
/// pending when the next attempt is due. With `limit`, a page. Needs `webhooks:read`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id"), DeliveryQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The endpoint's deliveries, newest first", body = Vec<WebhookDeliveryBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}/deliveries")]
pub(crate) async fn list_webhook_deliveries(
    auth: Auth<WebhooksRead>,
    path: web::Path<String>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id = endpoint_id(&path)?;
    the_endpoint(&state, &auth.principal, id).await?;
    listing.respond(deliveries(&state, &auth.principal, id, listing.parameters.clone()).await)
}

async fn deliveries(
    state: &ApiState,
    who: &Principal,
    endpoint: WebhookEndpointId,
    query: Map<String, Value>,
) -> Result<Page<WebhookDeliveryBody>, ApiError> {
    let (query, page): (DeliveryQuery, _) = paging::read_listing(query)?;
    let status = query
        .status
        .as_deref()
        .map(|s| <DeliveryStatus as kernel::Words>::parse_word(s).map_err(|e| e.at("status")))
        .transpose()?;
    let position = |cursor: &str| {
        let parts = paging::decode_cursor(cursor)?;
        match parts.as_slice() {
            [id] => WebhookDeliveryId::parse(id).ok_or_else(paging::not_a_cursor),
            _ => Err(paging::not_a_cursor()),
        }
    };
    let cursor = |delivery: &WebhookDelivery| paging::encode_cursor(&[delivery.id.to_string()]);
    let page = paging::page_from_store(&page, position, cursor, |before, limit| async move {
        let filter = DeliveryFilter { status, before, limit: limit.unwrap_or(u32::MAX) };
        Ok(state.stores.notify.list_deliveries(who.team_id, endpoint, &filter).await?)
    })
    .await?;
    Ok(page.map(WebhookDeliveryBody::from))
}

/// Deliver again
///
/// Queues a finished delivery again (202): the same event, body and `webhook-id`, a new
/// timestamp and signature. 409 while it is pending, or while the endpoint is disabled.
/// Needs `webhooks:write`.
#[utoipa::path(
    tag = "Webhooks",
    params(("id" = Uuid, Path, description = "Endpoint id"), ("deliveryId" = Uuid, Path, description = "Delivery id")),
    responses(
        (status = 202, description = "Queued again", body = WebhookDeliveryBody),
        (status = 409, description = "The delivery is pending, or the endpoint is disabled", body = ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[post("/{id}/deliveries/{deliveryId}/redeliver")]
pub(crate) async fn redeliver_webhook(
    auth: Auth<WebhooksWrite>,
    path: web::Path<(String, String)>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let (endpoint, delivery) = path.into_inner();
    let endpoint = endpoint_id(&endpoint)?;
    let delivery: WebhookDeliveryId = path_id(&delivery, "delivery")?;
    let done =
        state.stores.notify.redeliver(auth.principal.team_id, endpoint, delivery, state.clock.now()).await;
    let delivery = done.map_err(|error| match error {
        RedeliverError::NotFound => not_found("delivery"),
        RedeliverError::Pending => {
            ApiError::conflict("delivery: it is pending already; it will be attempted")
        }
        RedeliverError::Disabled => {
            ApiError::conflict("webhook endpoint: it is disabled; PATCH it with enabled: true first")
        }
        RedeliverError::Store(error) => error.into(),
    })?;
    Ok(HttpResponse::Accepted().json(WebhookDeliveryBody::from(delivery)))
}
