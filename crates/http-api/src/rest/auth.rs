//! API key authentication: the middleware that runs the cached key check ([`keys`]) with
//! rate limits for every `/v1` request, and the extractor that enforces a permission.
//!
//! [`keys`]: crate::rest::keys

use std::future::{Ready, ready};
use std::marker::PhantomData;

use accounts::{Permission, Principal};
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};

use crate::conventions::client::client_ip;
use crate::conventions::error::ApiError;
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::keys::AuthFailure;
use crate::rest::state::ApiState;

pub const API_KEY_HEADER: &str = "x-api-key";

/// Middleware for keyed routes: 401 for a missing, unknown, expired or revoked key
/// (with failures limited per client IP), 429 when the key's allowance is spent;
/// otherwise stores the [`Principal`] for the handler and adds the `RateLimit-*`
/// headers to the response.
pub(crate) async fn require_api_key(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let presented = header_key(req.request());
    authenticated(req, next, presented, "missing X-API-Key header").await
}

/// [`require_api_key`], taking the key from `Authorization: Bearer` too, as MCP clients
/// send it.
pub(crate) async fn require_api_key_or_bearer(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let presented = header_key(req.request())
        .or_else(|| crate::conventions::client::bearer_token(req.request()).map(str::to_owned));
    authenticated(req, next, presented, "missing API key (X-API-Key or Authorization: Bearer)").await
}

/// The key in `X-API-Key`, if any.
fn header_key(req: &HttpRequest) -> Option<String> {
    req.headers().get(API_KEY_HEADER).map(|v| v.to_str().unwrap_or_default().to_owned())
}

async fn authenticated(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
    presented: Option<String>,
    missing: &str,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let Some(state) = req.app_data::<web::Data<ApiState>>().cloned() else {
        return Err(ApiError::internal(anyhow::anyhow!("ApiState missing")).into());
    };
    let principal = match state.authenticator.authenticate(presented.as_deref()).await {
        Ok(principal) => principal,
        Err(AuthFailure::Store(error)) => {
            return Ok(req.error_response(ApiError::from(error)).map_into_right_body());
        }
        Err(failure) => {
            let ip = client_ip(req.request(), state.settings.trust_forwarded);
            let over_limit = match ip {
                Some(ip) => state.limits.check_ip(ip).await.err(),
                None => None,
            };
            let error = if let Some(exceeded) = over_limit {
                too_many_requests(exceeded)
            } else {
                let message = match failure {
                    AuthFailure::Refused(refusal) => refusal.to_string(),
                    _ => missing.to_owned(),
                };
                ApiError::new(StatusCode::UNAUTHORIZED, message)
            };
            tracing::info!(
                status = error.status().as_u16(),
                reason = error.message(),
                ?ip,
                "refused API key"
            );
            return Ok(req.error_response(error).map_into_right_body());
        }
    };
    let allowance = match state.limits.check_key(principal.key_id).await {
        Ok(allowance) => allowance,
        Err(exceeded) => return Ok(req.error_response(too_many_requests(exceeded)).map_into_right_body()),
    };
    req.extensions_mut().insert(principal);
    let mut response = next.call(req).await?;
    let headers = response.headers_mut();
    for (name, value) in [
        ("ratelimit-limit", allowance.limit.to_string()),
        ("ratelimit-remaining", allowance.remaining.to_string()),
        ("ratelimit-reset", allowance.reset_secs.to_string()),
    ] {
        if let Ok(value) = header::HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
    Ok(response.map_into_left_body())
}

/// The permissions a handler needs, as a type.
pub trait Needs {
    const PERMISSIONS: &'static [Permission];
}

macro_rules! needs {
    ($($name:ident => $($permission:ident)&+),* $(,)?) => {$(
        #[derive(Debug)]
        pub struct $name;
        impl Needs for $name {
            const PERMISSIONS: &'static [Permission] = &[$(Permission::$permission),+];
        }
    )*};
}

needs!(
    ClientsRead => ClientsRead,
    ClientsWrite => ClientsWrite,
    InvoicesRead => InvoicesRead,
    InvoicesWrite => InvoicesWrite,
    TrackRead => TrackRead,
    TrackWrite => TrackWrite,
    AgentRead => AgentRead,
    PaymentsWrite => PaymentsWrite,
    WebhooksRead => WebhooksRead,
    WebhooksWrite => WebhooksWrite,
    QuotesRead => QuotesRead,
    QuotesWrite => QuotesWrite,
    BankingRead => BankingRead,
    BankingWrite => BankingWrite,
    // Converting a quote writes it and makes an invoice.
    ConvertQuotes => QuotesWrite & InvoicesWrite,
    // Billing time reads the team's time and writes an invoice of it.
    BillTime => InvoicesWrite & TrackRead,
);

/// 403 unless `who`'s key holds `permission`, which `what` needs: for a rule that depends
/// on what the request is about, past the permission its route states.
pub(crate) fn require(who: &Principal, permission: Permission, what: &str) -> Result<(), ApiError> {
    if who.may(permission) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        format!("this API key lacks the {} permission, which {what} needs", permission.as_str()),
    ))
}

/// The authenticated caller, proven to hold permission `P` (403 otherwise), whose query
/// string names only parameters the route takes (400 otherwise). Put it first among a
/// handler's extractors: it resolves at once, so a 403 beats a 400.
#[derive(Debug)]
pub struct Auth<P: Needs> {
    pub principal: Principal,
    needs: PhantomData<P>,
}

impl<P: Needs> FromRequest for Auth<P> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let principal = req.extensions().get::<Principal>().cloned();
        ready(match principal {
            None => Err(ApiError::new(StatusCode::UNAUTHORIZED, "missing X-API-Key header")),
            Some(principal) => match P::PERMISSIONS.iter().find(|needed| !principal.may(**needed)) {
                Some(lacking) => Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    format!("this API key lacks the {} permission", lacking.as_str()),
                )),
                // The permission first, then the query: a 403 beats a 400.
                None => crate::conventions::refuse_unknown_query_parameters(req)
                    .map(|()| Self { principal, needs: PhantomData }),
            },
        })
    }
}
