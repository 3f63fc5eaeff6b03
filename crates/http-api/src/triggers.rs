//! The agent's trigger listeners: the bearer-token webhook (POST an input, get the reply)
//! and the signed repository (GitHub) webhook (acknowledged at once, run afterwards).
//!
//! They run beside the REST API on the ports of their trigger entries; triggers sharing a
//! port share one listener and are told apart by path. A webhook call passes, in order:
//! the body size (413, as the body is read), the per-IP throttle of failed authentication
//! (429), the bearer token (401), the content type (415), the body (400), then the agent,
//! whose queue may refuse it (429). A repository delivery passes the body size, the
//! throttle, the signature over the raw body (401, before anything is parsed), the content
//! type, then the trigger's intake (400 for headers or a body GitHub would not send).

use std::net::TcpListener;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, ResponseError, web};
use kernel::FieldError;
use serde::{Deserialize, Serialize};
use triggers::{
    Agent, Intake, IntakeError, Malformed, Receipt, RunOutcome, RunRequest, RunRequestError, Secrets,
    ToolChoice, TriggerKind,
};

use crate::conventions;
use crate::conventions::client::{bearer_token, client_ip};
use crate::conventions::deadline::{self, ClientLimits};
use crate::conventions::error::ApiError;
use crate::conventions::ratelimit::too_many_requests;
use crate::conventions::ratelimit::{FailureThrottle, Rate};

/// Largest webhook body.
pub const WEBHOOK_BODY_LIMIT: usize = 1024 * 1024;

pub const RUN_ID_HEADER: HeaderName = HeaderName::from_static("x-run-id");

/// One webhook trigger: where it listens, the tokens it accepts and the agent's tools its
/// runs may call.
#[derive(Debug, Clone)]
pub struct WebhookRoute {
    pub path: String,
    pub tokens: Secrets,
    pub tools: ToolChoice,
}

/// One repository trigger: where it listens, the secrets its deliveries are signed with,
/// its body limit and what takes a verified delivery.
#[derive(Debug, Clone)]
pub struct GithubRoute {
    pub path: String,
    pub secrets: Secrets,
    pub body_limit: usize,
    pub intake: Arc<Intake>,
}

/// A trigger served on a port.
#[derive(Debug, Clone)]
pub enum TriggerRoute {
    Webhook(WebhookRoute),
    Github(GithubRoute),
}

impl TriggerRoute {
    pub fn path(&self) -> &str {
        match self {
            Self::Webhook(route) => &route.path,
            Self::Github(route) => &route.path,
        }
    }
}

pub const SIGNATURE_HEADER: &str = "X-Hub-Signature-256";

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

/// The listener app for the triggers on one port.
pub fn trigger_app(
    state: web::Data<TriggerState>,
    routes: Vec<TriggerRoute>,
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
        let resource = match route {
            TriggerRoute::Webhook(route) => web::resource(route.path)
                .app_data(web::Data::new(route.tokens))
                .app_data(web::Data::new(route.tools))
                .route(web::post().to(webhook)),
            TriggerRoute::Github(route) => web::resource(route.path.clone())
                .app_data(web::PayloadConfig::new(route.body_limit))
                .app_data(web::Data::new(route))
                .route(web::post().to(github)),
        };
        app = app.service(resource.default_service(web::to(method_not_allowed)));
    }
    app.default_service(web::to(no_such_trigger))
        .wrap(from_fn(deadline::body_deadline))
        .wrap(from_fn(conventions::json_errors))
        .wrap(from_fn(conventions::request_id))
}

/// Serves `routes` on `listener` until the process stops (gracefully on SIGTERM).
pub fn serve_triggers(
    listener: TcpListener,
    state: web::Data<TriggerState>,
    routes: Vec<TriggerRoute>,
    workers: usize,
    limits: ClientLimits,
) -> std::io::Result<Server> {
    Ok(HttpServer::new(move || trigger_app(state.clone(), routes.clone()).app_data(web::Data::new(limits)))
        .workers(workers.max(1))
        .max_connections(limits.per_worker(workers))
        .shutdown_timeout(limits.shutdown_timeout.as_secs())
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

fn unauthorized(message: &str) -> ApiError {
    ApiError::new(StatusCode::UNAUTHORIZED, message)
        .with_header(header::WWW_AUTHENTICATE, "Bearer realm=\"agent\"")
}

fn require_json(req: &HttpRequest) -> Result<(), ApiError> {
    let json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if json {
        Ok(())
    } else {
        Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "content-type must be application/json"))
    }
}

impl TriggerState {
    /// The per-IP throttle around a credential check: 429 for an address past its
    /// failures, before the check; a `refusal` is logged, counted and answered by
    /// `refuse` (or 429 once it is one too many).
    fn authenticate(
        &self,
        req: &HttpRequest,
        refusal: Option<&str>,
        refuse: fn(&str) -> ApiError,
    ) -> Result<(), ApiError> {
        let ip = client_ip(req, self.trust_forwarded);
        if let Some(ip) = ip {
            self.throttle.check(ip).map_err(too_many_requests)?;
        }
        let Some(reason) = refusal else {
            return Ok(());
        };
        tracing::warn!(?ip, path = req.path(), reason, "refused trigger call");
        if let Some(Err(exceeded)) = ip.map(|ip| self.throttle.fail(ip)) {
            return Err(too_many_requests(exceeded));
        }
        Err(refuse(reason))
    }
}

/// A delivery's acknowledgement.
#[derive(Debug, Serialize)]
struct Acknowledgement<'a> {
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivery: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

fn acknowledge(
    status: StatusCode,
    verdict: &'static str,
    delivery: Option<&str>,
    note: Option<&str>,
) -> HttpResponse {
    HttpResponse::build(status).json(Acknowledgement { status: verdict, delivery, note })
}

async fn github(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<TriggerState>,
    route: web::Data<GithubRoute>,
) -> Result<HttpResponse, ApiError> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let refusal = match header(SIGNATURE_HEADER) {
        None => Some("missing X-Hub-Signature-256 signature"),
        Some(signature) if !route.secrets.verifies_signature(&body, signature) => {
            Some("invalid X-Hub-Signature-256 signature")
        }
        Some(_) => None,
    };
    state.authenticate(&req, refusal, |reason| ApiError::new(StatusCode::UNAUTHORIZED, reason))?;
    require_json(&req)?;
    let receipt = route.intake.receive(header(EVENT_HEADER), header(DELIVERY_HEADER), &body).await;
    Ok(match receipt {
        Ok(Receipt::Pong) => acknowledge(StatusCode::OK, "pong", None, None),
        Ok(Receipt::Ignored { note }) => acknowledge(StatusCode::OK, "ignored", None, Some(&note)),
        Ok(Receipt::Accepted { delivery }) => {
            acknowledge(StatusCode::ACCEPTED, "accepted", Some(delivery.as_str()), None)
        }
        Ok(Receipt::Duplicate { delivery }) => {
            acknowledge(StatusCode::ACCEPTED, "duplicate", Some(delivery.as_str()), None)
        }
        Err(IntakeError::Malformed(malformed)) => return Err(delivery_refusal(&malformed).into()),
        Err(IntakeError::Store(error)) => return Err(error.into()),
    })
}

/// GitHub's headers of a delivery's event and id.
const EVENT_HEADER: &str = "X-GitHub-Event";
const DELIVERY_HEADER: &str = "X-GitHub-Delivery";

/// What of a delivery is not as GitHub sends it, naming the header or the body.
fn delivery_refusal(malformed: &Malformed) -> FieldError {
    match malformed {
        Malformed::NoEvent => FieldError::new(EVENT_HEADER, "is required"),
        Malformed::EventName(name) => FieldError::new(EVENT_HEADER, format!("{name:?} is not an event name")),
        Malformed::NoDeliveryId => FieldError::new(DELIVERY_HEADER, "is required"),
        Malformed::DeliveryId(why) => FieldError::new(DELIVERY_HEADER, why.clone()),
        Malformed::NotJson(why) => FieldError::new("body", format!("is not a JSON payload: {why}")),
        Malformed::NotAnObject => {
            FieldError::new("body", "must be a JSON object, as GitHub sends every event")
        }
    }
}

/// A refused run request, naming the webhook body's field.
fn run_request_refusal(error: &RunRequestError) -> FieldError {
    match error {
        RunRequestError::EmptyInput => FieldError::new("input", "must not be empty"),
        RunRequestError::NulInInput => FieldError::new("input", "must not contain NUL characters"),
        RunRequestError::InputTooLong => {
            FieldError::new("input", format!("must be at most {} characters", triggers::run::MAX_INPUT_CHARS))
        }
        RunRequestError::Conversation(why) => FieldError::new("conversation_id", why.clone()),
    }
}

async fn webhook(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<TriggerState>,
    tokens: web::Data<Secrets>,
    tools: web::Data<ToolChoice>,
) -> Result<HttpResponse, ApiError> {
    let refusal = match bearer_token(&req) {
        None => Some("missing bearer token"),
        Some(token) if !tokens.matches_token(token.as_bytes()) => Some("invalid bearer token"),
        Some(_) => None,
    };
    state.authenticate(&req, refusal, unauthorized)?;
    require_json(&req)?;
    let body: WebhookBody = crate::conventions::body::parse(&body)?;
    let request = RunRequest::parse(body.input, body.conversation_id.as_deref())
        .map_err(|error| run_request_refusal(&error))?
        .with_tools((**tools).clone());
    // The run goes on, and is recorded, even if the caller stops waiting for it.
    let agent = state.agent.clone();
    let run = tokio::spawn(async move { agent.run(TriggerKind::Webhook, request).await });
    let outcome = run.await.unwrap_or_else(|error| {
        tracing::error!(%error, "agent run panicked");
        RunOutcome::Failed {
            run: <triggers::RunId as kernel::Id>::generate(),
            error: "the run failed unexpectedly".into(),
        }
    });
    Ok(match outcome {
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
