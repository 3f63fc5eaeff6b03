//! The agent's trigger listeners: the bearer-token webhook (POST an input, get the reply).
//!
//! They run beside the REST API on the ports of their trigger entries; triggers sharing a
//! port share one listener and are told apart by path. A request passes, in order: the
//! body size (413, as the body is read), the per-IP throttle of failed authentication
//! (429), the bearer token (401), the content type (415), the body (400), then the agent,
//! whose queue may refuse it (429).

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, ResponseError, web};
use serde::{Deserialize, Serialize};
use triggers::{Agent, RunOutcome, RunRequest, Secrets, TriggerKind};

use crate::auth::{client_ip, too_many_requests};
use crate::conventions;
use crate::error::ApiError;
use crate::ratelimit::{FailureThrottle, Rate};

/// Largest webhook body.
pub const WEBHOOK_BODY_LIMIT: usize = 1024 * 1024;

pub const RUN_ID_HEADER: HeaderName = HeaderName::from_static("x-run-id");

/// One webhook trigger: where it listens and the tokens it accepts.
#[derive(Debug, Clone)]
pub struct WebhookRoute {
    pub path: String,
    pub tokens: Secrets,
}

/// Settings shared by every trigger listener.
#[derive(Debug, Clone, Copy)]
pub struct TriggerSettings {
    /// Failed authentication allowed per client IP before 429.
    pub failed_auth: Rate,
    /// Take the client IP from `Forwarded`/`X-Forwarded-For` (only behind a trusted proxy).
    pub trust_forwarded: bool,
}

/// Shared by every trigger listener of the process.
pub struct TriggerState {
    agent: Arc<dyn Agent>,
    throttle: FailureThrottle,
    trust_forwarded: bool,
}

impl std::fmt::Debug for TriggerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TriggerState").field("throttle", &self.throttle).finish_non_exhaustive()
    }
}

impl TriggerState {
    pub fn new(agent: Arc<dyn Agent>, settings: TriggerSettings) -> Self {
        Self {
            agent,
            throttle: FailureThrottle::new(settings.failed_auth),
            trust_forwarded: settings.trust_forwarded,
        }
    }

    /// Forgets addresses whose failures are old; call it now and then.
    pub fn sweep(&self) {
        self.throttle.sweep();
    }
}

/// The listener app for the webhook triggers on one port.
pub fn trigger_app(
    state: web::Data<TriggerState>,
    routes: Vec<WebhookRoute>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let mut app = App::new().app_data(state).app_data(web::PayloadConfig::new(WEBHOOK_BODY_LIMIT));
    for route in routes {
        app = app.service(
            web::resource(route.path)
                .app_data(web::Data::new(route.tokens))
                .route(web::post().to(webhook))
                .default_service(web::to(method_not_allowed)),
        );
    }
    app.default_service(web::to(no_such_trigger))
        .wrap(from_fn(conventions::json_errors))
        .wrap(from_fn(conventions::request_id))
}

/// Serves `routes` on `listener` until the process stops (gracefully on SIGTERM).
pub fn serve_triggers(
    listener: TcpListener,
    state: web::Data<TriggerState>,
    routes: Vec<WebhookRoute>,
    workers: usize,
) -> std::io::Result<Server> {
    Ok(HttpServer::new(move || trigger_app(state.clone(), routes.clone()))
        .workers(workers.max(1))
        .shutdown_timeout(30)
        .listen(listener)?
        .run())
}

async fn no_such_trigger() -> HttpResponse {
    ApiError::new(StatusCode::NOT_FOUND, "no trigger at this path").error_response()
}

async fn method_not_allowed(req: HttpRequest) -> HttpResponse {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("method {} not allowed here", req.method()))
        .with_header(header::ALLOW, "POST")
        .error_response()
}

/// The body of a webhook call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookBody {
    input: String,
    #[serde(default)]
    conversation_id: Option<String>,
}

/// The seed's Run result.
#[derive(Debug, Serialize)]
struct RunResult {
    status: &'static str,
    reply: String,
    steps: u32,
}

/// The token after `Bearer ` (the scheme is case-insensitive).
fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, message)
        .with_header(header::WWW_AUTHENTICATE, "Bearer realm=\"agent\"")
}

fn is_json(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

async fn webhook(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<TriggerState>,
    tokens: web::Data<Secrets>,
) -> Result<HttpResponse, ApiError> {
    let ip = client_ip(&req, state.trust_forwarded);
    if let Some(ip) = ip {
        state.throttle.check(ip).map_err(too_many_requests)?;
    }
    let refusal = match bearer_token(&req) {
        None => Some("missing bearer token"),
        Some(token) if !tokens.matches_token(token.as_bytes()) => Some("invalid bearer token"),
        Some(_) => None,
    };
    if let Some(reason) = refusal {
        tracing::warn!(?ip, reason, "refused webhook call");
        if let Some(Err(exceeded)) = ip.map(|ip| state.throttle.fail(ip)) {
            return Err(too_many_requests(exceeded));
        }
        return Err(unauthorized(reason));
    }
    if !is_json(&req) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content-type must be application/json",
        ));
    }
    let body: WebhookBody = crate::body::parse(&body)?;
    let request = RunRequest::parse(body.input, body.conversation_id.as_deref())?;
    Ok(match state.agent.run(TriggerKind::Webhook, request).await {
        RunOutcome::Replied { run, reply, steps } => HttpResponse::Ok()
            .insert_header((RUN_ID_HEADER, run.to_string()))
            .json(RunResult { status: "ok", reply, steps }),
        RunOutcome::Rejected { retry_after_secs } => HttpResponse::TooManyRequests()
            .insert_header((header::RETRY_AFTER, retry_after_secs))
            .json(RunResult {
                status: "rejected",
                reply: "this conversation already has limits.queue_depth requests waiting; retry later"
                    .into(),
                steps: 0,
            }),
        RunOutcome::Failed { run, error } => {
            let mut response = ApiError::new(StatusCode::BAD_GATEWAY, error).error_response();
            insert_run_id(&mut response, run);
            response
        }
        RunOutcome::TimedOut { run } => {
            let mut response =
                ApiError::new(StatusCode::GATEWAY_TIMEOUT, "the run took longer than limits.run_timeout")
                    .error_response();
            insert_run_id(&mut response, run);
            response
        }
    })
}

fn insert_run_id(response: &mut HttpResponse, run: triggers::RunId) {
    if let Ok(value) = header::HeaderValue::from_str(&run.to_string()) {
        response.headers_mut().insert(RUN_ID_HEADER, value);
    }
}
