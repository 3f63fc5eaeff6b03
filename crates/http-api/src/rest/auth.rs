//! API key authentication: the cached key check, the middleware that runs it (with rate
//! limits) for every `/v1` request, and the extractor that enforces a permission.

use std::future::{Ready, ready};
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use accounts::{AccountStore, ApiKeySecret, Credential, KeyHash, Permission, Principal, Refusal};
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName};
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use kernel::{Clock, StoreError};

use crate::conventions::client::client_ip;
use crate::conventions::error::ApiError;
use crate::conventions::ratelimit::too_many_requests;
use crate::rest::state::ApiState;

pub const API_KEY_HEADER: &str = "x-api-key";

/// Checks presented keys against the store, caching what it finds for `ttl`.
///
/// At steady state a key costs no database round trip. A revocation or expiry made
/// elsewhere (the CLI, another instance) takes effect within `ttl`; expiry recorded on a
/// cached key is checked on every request. `last_used_at` is written on each cache miss,
/// so it is accurate to `ttl`.
pub struct Authenticator {
    accounts: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
    cache: moka::sync::Cache<[u8; 32], Arc<Credential>>,
    /// Moves on every [`Authenticator::forget_keys`]: a lookup that began before it keeps
    /// its answer out of the cache, lest a key read before a revocation outlive it there.
    forgotten: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("cached", &self.cache.entry_count()).finish_non_exhaustive()
    }
}

/// Why a request was not authenticated.
#[derive(Debug)]
pub enum AuthFailure {
    Missing,
    Refused(Refusal),
    Store(StoreError),
}

impl Authenticator {
    pub fn new(accounts: Arc<dyn AccountStore>, clock: Arc<dyn Clock>, ttl: Duration) -> Self {
        let cache = moka::sync::Cache::builder().max_capacity(100_000).time_to_live(ttl).build();
        Self { accounts, clock, cache, forgotten: std::sync::atomic::AtomicU64::new(0) }
    }

    /// Forgets every cached key check, so the next use of each key reads the database.
    pub fn forget_keys(&self) {
        self.forgotten.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.cache.invalidate_all();
    }

    /// Forgets the cached key checks whenever the store's count of revoked keys moves,
    /// looking every `interval`: a key revoked by any process (another replica, `billable
    /// keys revoke`) stops working here within that time and one query. Runs until the
    /// task holding it is dropped.
    pub async fn watch_revocations(&self, interval: Duration) {
        let mut seen: Option<u64> = None;
        // Whether a count could not be read since the last one that could.
        let mut lost = false;
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match self.accounts.revoked_key_count().await {
                Ok(count) => {
                    if seen.is_some_and(|seen| seen != count) {
                        tracing::info!(revoked = count, "a key was revoked: cached key checks forgotten");
                        self.forget_keys();
                    } else if lost {
                        // A revocation may have come and gone unseen while the count could
                        // not be read.
                        self.forget_keys();
                    }
                    (seen, lost) = (Some(count), false);
                }
                // Forgotten once when the count is lost, not on every tick: while the
                // database struggles, looking every key up again would only add load.
                Err(error) => {
                    if !lost {
                        tracing::warn!(
                            error = format!("{error:#}"),
                            "could not read the revoked keys' count"
                        );
                        self.forget_keys();
                    }
                    lost = true;
                }
            }
        }
    }

    pub async fn authenticate(&self, presented: Option<&str>) -> Result<Principal, AuthFailure> {
        let presented = presented.ok_or(AuthFailure::Missing)?;
        let secret = ApiKeySecret::parse(presented).ok_or(AuthFailure::Refused(Refusal::Unknown))?;
        let KeyHash(hash) = secret.hash();
        let (credential, cache_miss) = if let Some(credential) = self.cache.get(&hash) {
            (credential, false)
        } else {
            let generation = self.forgotten.load(std::sync::atomic::Ordering::SeqCst);
            let found = self.accounts.find_credential(&KeyHash(hash)).await.map_err(AuthFailure::Store)?;
            let credential = Arc::new(found.ok_or(AuthFailure::Refused(Refusal::Unknown))?);
            self.cache.insert(hash, credential.clone());
            // Checked after the insert, so a forgetting at any point since the lookup began
            // takes this entry out again.
            if self.forgotten.load(std::sync::atomic::Ordering::SeqCst) != generation {
                self.cache.invalidate(&hash);
            }
            (credential, true)
        };
        let principal = credential.authenticate(self.clock.now()).map_err(AuthFailure::Refused)?;
        // Only a use that was let through counts as a use.
        if cache_miss {
            self.record_use(&credential);
        }
        Ok(principal)
    }

    fn record_use(&self, credential: &Credential) {
        let (accounts, now) = (self.accounts.clone(), self.clock.now());
        let (team, key) = (credential.key.team_id, credential.key.id);
        actix_web::rt::spawn(async move {
            if let Err(error) = accounts.record_key_use(team, key, now).await {
                tracing::warn!(error = format!("{error:#}"), %key, "could not record key use");
            }
        });
    }
}

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
