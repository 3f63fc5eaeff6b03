//! `/mcp`: the built-in tools for any Model Context Protocol client (Claude Desktop, an IDE
//! agent), over MCP's streamable HTTP transport, as the caller's API key allows them.
//!
//! Stateless: every `POST` carries one JSON-RPC message and gets its answer as
//! `application/json`; no session, no server-sent events (a `GET` is 405, which the
//! transport allows). The key comes in `X-API-Key` or `Authorization: Bearer`, and is
//! checked and rate-limited as on `/v1`.
//!
//! A request that carries `Origin` (a browser's) is refused with 403 unless that origin is
//! listed ([`AllowedOrigins`](crate::conventions::origins::AllowedOrigins)), before the key
//! is looked at: the MCP specification asks servers to, so that a page served from
//! elsewhere (by DNS rebinding, say) cannot drive the tools of a server on `localhost`.

use accounts::Principal;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use serde_json::{Value, json};

use crate::conventions::error::ApiError;
use crate::rest::state::ApiState;
use crate::tools::BuiltinTools;

/// The protocol revisions this server speaks; the newest is offered to a client that asks
/// for another.
const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

// JSON-RPC 2.0 error codes.
const PARSE_ERROR: i64 = -32_700;
const INVALID_REQUEST: i64 = -32_600;
const METHOD_NOT_FOUND: i64 = -32_601;
const INVALID_PARAMS: i64 = -32_602;

/// Refuses a request whose `Origin` is not allowed: 403 before anything else. A request
/// without `Origin` (an MCP client that is not a browser) passes.
pub(crate) async fn check_origin(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let origin =
        req.headers().get(header::ORIGIN).map(|value| value.to_str().unwrap_or("(not text)").to_owned());
    let allowed = req.app_data::<web::Data<ApiState>>().map(|state| state.settings.mcp_origins.clone());
    if let Some(origin) = origin.filter(|origin| !allowed.is_some_and(|allowed| allowed.allows(origin))) {
        tracing::info!(%origin, "refused an MCP request from a browser origin that is not allowed");
        let error = ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "Origin: {origin} may not call /mcp; list it in BILLABLE_MCP_ALLOWED_ORIGINS to allow it"
            ),
        );
        return Ok(req.error_response(error));
    }
    next.call(req).await.map(ServiceResponse::map_into_boxed_body)
}

/// One JSON-RPC message in, its answer out.
pub(crate) async fn handle(req: HttpRequest, body: web::Bytes, state: web::Data<ApiState>) -> HttpResponse {
    let Some(caller) = req.extensions().get::<Principal>().cloned() else {
        return ApiError::new(StatusCode::UNAUTHORIZED, "missing API key").error_response();
    };
    let message: Value = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(error) => {
            return rpc_error(StatusCode::BAD_REQUEST, &Value::Null, PARSE_ERROR, &error.to_string());
        }
    };
    let method = match classify(&message) {
        Err(error) => {
            return rpc_error(StatusCode::BAD_REQUEST, &echoed_id(&message), INVALID_REQUEST, error);
        }
        Ok(Message::Response) => return HttpResponse::Accepted().finish(),
        Ok(Message::Call(method)) => method,
    };
    if message.get("params").is_some_and(|params| !params.is_object()) {
        let error = "params: must be an object";
        return rpc_error(StatusCode::BAD_REQUEST, &echoed_id(&message), INVALID_PARAMS, error);
    }
    let Some(id) = message.get("id").cloned() else {
        // A notification (`notifications/initialized`, a cancellation): nothing to answer.
        return HttpResponse::Accepted().finish();
    };
    let params = &message["params"];
    let tools = BuiltinTools::new(state.into_inner(), caller);
    let result = match method {
        "initialize" => Ok(initialize(params)),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(list(&tools)),
        "tools/call" => call(&tools, params).await,
        _ => Err((METHOD_NOT_FOUND, format!("method {method:?} is not supported"))),
    };
    match result {
        Ok(result) => HttpResponse::Ok().json(json!({"jsonrpc": "2.0", "id": id, "result": result})),
        Err((code, error)) => rpc_error(StatusCode::OK, &id, code, &error),
    }
}

/// What one JSON-RPC message is.
enum Message<'a> {
    /// A request (with an `id`) or a notification (without), calling this method.
    Call(&'a str),
    /// A response to a request of ours, which we never send: accepted and dropped, as the
    /// transport asks.
    Response,
}

/// What `message` is, or why it is not one JSON-RPC 2.0 message as MCP takes them (a
/// batch, an `id` that is neither a string nor an integer: MCP forbids a `null` one).
fn classify(message: &Value) -> Result<Message<'_>, &'static str> {
    if !message.is_object() || message["jsonrpc"] != "2.0" {
        return Err("expected one JSON-RPC 2.0 request, notification or response");
    }
    if let Some(id) = message.get("id")
        && !is_usable_id(id)
    {
        return Err("id: must be a string or an integer");
    }
    match message.get("method") {
        Some(Value::String(method)) => Ok(Message::Call(method)),
        Some(_) => Err("method: must be a string"),
        None if message.get("id").is_some()
            && (message.get("result").is_some() || message.get("error").is_some_and(Value::is_object)) =>
        {
            Ok(Message::Response)
        }
        None => {
            Err("expected a method (a request or notification), or a result or error with an id (a response)")
        }
    }
}

/// Whether `id` is one MCP takes: a string, or an integer of any size (JSON Schema's
/// `integer`, which `4.0` is too).
fn is_usable_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => kernel::number::whole_number(&number.to_string()).is_some(),
        _ => false,
    }
}

/// The `id` an error answer carries: the message's, when it is one a client could match.
fn echoed_id(message: &Value) -> Value {
    match message.get("id") {
        Some(id) if is_usable_id(id) => id.clone(),
        _ => Value::Null,
    }
}

fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> HttpResponse {
    HttpResponse::build(status)
        .json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

fn initialize(params: &Value) -> Value {
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    let version = PROTOCOL_VERSIONS.iter().find(|v| **v == asked).unwrap_or(&PROTOCOL_VERSIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {"name": "billable", "version": env!("CARGO_PKG_VERSION")},
        "instructions": "The team's clients, invoices and tracked time, as the API key's scopes allow. \
                         Arguments and results are the REST API's bodies (see /openapi.json).",
    })
}

/// The tools the key's scopes allow.
fn list(tools: &BuiltinTools) -> Value {
    let listed: Vec<Value> = tools
        .allowed()
        .map(|tool| json!({"name": tool.name, "description": tool.description, "inputSchema": tool.parameters}))
        .collect();
    json!({"tools": listed})
}

/// Runs a tool; its refusals and the API's errors are the tool's result, marked
/// `isError`, as MCP asks of a tool that ran and failed.
async fn call(tools: &BuiltinTools, params: &Value) -> Result<Value, (i64, String)> {
    let name = params["name"].as_str().ok_or((INVALID_PARAMS, "params.name: is required".to_owned()))?;
    if !crate::tools::descriptions().iter().any(|tool| tool.name == name) {
        return Err((INVALID_PARAMS, format!("there is no tool named {name:?}")));
    }
    let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
    Ok(match tools.call(name, arguments).await {
        Ok(result) => json!({"content": [{"type": "text", "text": result.to_string()}], "isError": false}),
        Err(error) => json!({"content": [{"type": "text", "text": error.message()}], "isError": true}),
    })
}
