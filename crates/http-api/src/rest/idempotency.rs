//! `Idempotency-Key` on the writes of `/v1` (Stripe's semantics, with the status codes of
//! the IETF `Idempotency-Key` header draft): the first request with a key is carried out
//! and its answer kept; a retry of the same request gets that answer again and does
//! nothing; the key reused for another request is 422; a retry while the first is still
//! running is 409. Keys are kept per team in the database, so every replica sees them.

use std::sync::Arc;
use std::time::Duration;

use accounts::{
    ApiKeyId, Claimed, IdempotencyKey, IdempotencyStore, KeptResponse, KeyClaim, Principal,
    RequestFingerprint,
};
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpResponse, web};
use sha2::{Digest, Sha256};

use crate::conventions::body::unread_body;
use crate::conventions::error::ApiError;
use crate::rest::state::ApiState;

pub const IDEMPOTENCY_KEY: &str = "idempotency-key";
/// Set on an answer given back from a kept one.
pub const REPLAYED: &str = "idempotent-replayed";

/// How long an unanswered key is held before another attempt may take it over: longer
/// than any request runs, so only a process that died mid-request loses it.
const LEASE: Duration = Duration::from_mins(1);

/// Middleware of the keyed scopes, inside the key check (it needs the team): requests
/// without the header, and reads, pass straight through.
pub(crate) async fn replay_retries(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let is_write = matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
    // A method no route takes is the router's 404 or 405, whatever the header says.
    let is_routed = |req: &ServiceRequest| {
        req.app_data::<web::Data<crate::conventions::RouteTable>>()
            .is_some_and(|table| table.routes(req.path(), req.method()))
    };
    let mut presented = req.headers().get_all(IDEMPOTENCY_KEY);
    let Some(first) = presented.next().filter(|_| is_write && is_routed(&req)) else {
        return next.call(req).await.map(ServiceResponse::map_into_boxed_body);
    };
    if presented.next().is_some() {
        return Ok(refuse(req, ApiError::new(StatusCode::BAD_REQUEST, "Idempotency-Key: must be sent once")));
    }
    let Some(key) = first.to_str().ok().and_then(|text| IdempotencyKey::parse(text).ok()) else {
        let detail = format!(
            "Idempotency-Key: must be 1 to {} visible ASCII characters without spaces",
            IdempotencyKey::MAX_LEN
        );
        return Ok(refuse(req, ApiError::new(StatusCode::BAD_REQUEST, detail)));
    };
    let (Some(state), Some(principal)) =
        (req.app_data::<web::Data<ApiState>>().cloned(), req.extensions().get::<Principal>().cloned())
    else {
        return Err(ApiError::internal(anyhow::anyhow!("idempotency needs the key check before it")).into());
    };
    let body = match req.extract::<web::Bytes>().await {
        Ok(body) => body,
        Err(error) => return Ok(refuse(req, unread_body(&error))),
    };
    let fingerprint = fingerprint(principal.key_id, req.method(), &req.uri().to_string(), &body);
    req.set_payload(Payload::from(body));

    let now = state.clock.now();
    let claim = KeyClaim {
        team: principal.team_id,
        key,
        fingerprint,
        at: now,
        lease_until: now + LEASE,
        expires_at: now + state.settings.idempotency_ttl,
    };
    let store = state.stores.idempotency.clone();
    match store.claim(&claim).await {
        Err(error) => Ok(refuse(req, error.into())),
        Ok(Claimed::Mismatch) => Ok(refuse(
            req,
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Idempotency-Key: was used for a different request (another method, path, body or API key)",
            ),
        )),
        Ok(Claimed::InFlight) => Ok(refuse(
            req,
            ApiError::conflict(
                "Idempotency-Key: a request with this key is still being processed, retry later",
            )
            .with_header(header::RETRY_AFTER, 1),
        )),
        Ok(Claimed::Answered(kept)) => Ok(req.into_response(replayed(&kept))),
        // Carried out in a task of its own, so a client that hangs up cannot stop it
        // between the write and the keeping of its answer.
        Ok(Claimed::Granted) => {
            actix_web::rt::spawn(carry_out(req, next, store, claim)).await.unwrap_or_else(|_| {
                Err(ApiError::internal(anyhow::anyhow!("idempotent request task failed")).into())
            })
        }
    }
}

/// Runs the request that holds the key, and keeps its answer or frees the key.
async fn carry_out(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    store: Arc<dyn IdempotencyStore>,
    claim: KeyClaim,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let response = match next.call(req).await {
        Ok(response) => response,
        Err(error) => {
            release(&*store, &claim).await;
            return Err(error);
        }
    };
    let (request, response) = response.into_parts();
    let (head, body) = response.into_parts();
    let Ok(body) = actix_web::body::to_bytes(body).await else {
        // The answer could not be read back, so a retry could not be given it.
        release(&*store, &claim).await;
        return Err(ApiError::internal(anyhow::anyhow!("response body could not be read")).into());
    };
    if keeps(head.status()) {
        let kept = KeptResponse {
            status: head.status().as_u16(),
            headers: kept_headers(head.headers()),
            body: body.to_vec(),
        };
        if let Err(error) = store.answer(&claim, &kept).await {
            // The write happened; its answer goes out, and a retry is told 409 until the
            // lease ends.
            tracing::error!(error = format!("{error:#}"), "could not keep an idempotent answer");
        }
    } else {
        release(&*store, &claim).await;
    }
    Ok(ServiceResponse::new(request, head.set_body(BoxBody::new(body))))
}

/// Whether an answer is kept for retries: the request was carried out, or refused for the
/// state it found (404, 409, 410). A request refused for its own form or permissions, or
/// that failed on the server's side, changed nothing; its key is freed, so a corrected
/// request or a later retry runs anew.
fn keeps(status: StatusCode) -> bool {
    status.is_success() || matches!(status.as_u16(), 404 | 409 | 410)
}

/// What makes two requests the same request: the API key that sent them (another key of
/// the team reusing it is a mismatch, so no key is given an answer it may not see), the
/// method, the path with its query, and the body's bytes.
pub fn fingerprint(key: ApiKeyId, method: &Method, path_and_query: &str, body: &[u8]) -> RequestFingerprint {
    let mut digest = Sha256::new();
    for part in [key.to_string().as_bytes(), method.as_str().as_bytes(), path_and_query.as_bytes()] {
        digest.update((part.len() as u64).to_be_bytes());
        digest.update(part);
    }
    digest.update(body);
    RequestFingerprint(digest.finalize().into())
}

fn kept_headers(headers: &header::HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned())))
        .collect()
}

fn replayed(kept: &KeptResponse) -> HttpResponse<BoxBody> {
    let status = StatusCode::from_u16(kept.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = HttpResponse::build(status);
    for (name, value) in &kept.headers {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) {
            response.append_header((name, value));
        }
    }
    response.insert_header((HeaderName::from_static(REPLAYED), "true"));
    response.body(kept.body.clone())
}

fn refuse(req: ServiceRequest, error: ApiError) -> ServiceResponse<BoxBody> {
    req.error_response(error)
}

async fn release(store: &dyn IdempotencyStore, claim: &KeyClaim) {
    if let Err(error) = store.release(claim).await {
        tracing::warn!(
            error = format!("{error:#}"),
            "could not free an idempotency key; it frees itself when its lease ends"
        );
    }
}
