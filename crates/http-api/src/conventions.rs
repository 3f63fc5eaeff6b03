//! Conventions every response follows: an `x-request-id`, a request log line, and
//! `{"error": ...}` bodies also for the framework's own refusals (unknown route, wrong
//! method).

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use tracing::Instrument;

use crate::error::ApiError;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The request's id: the caller's `x-request-id` when it is sane, else a random (v4) UUID.
/// It comes from another generator than resource ids and holds no time or sequence, so the
/// ids `/healthz` hands anyone tell nothing about an invoice id made in the same instant.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

fn usable(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic())
}

/// Outermost middleware: assigns the request id, logs the request within a span that
/// carries it, and echoes it on the response. It also routes a `HEAD` as a `GET` (RFC
/// 9110, 9.3.2): the connection still knows it was a `HEAD`, so it sends the `GET`'s status
/// and headers, `Content-Length` included, and leaves the body out.
pub(crate) async fn request_id(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| usable(v))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    req.extensions_mut().insert(RequestId(id.clone()));
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.path());
    if req.method() == Method::HEAD {
        req.head_mut().method = Method::GET;
    }
    let started = Instant::now();
    // Handlers' and extractors' errors arrive here as responses already.
    let mut response = next.call(req).instrument(span.clone()).await?.map_into_boxed_body();
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    span.in_scope(|| {
        tracing::info!(
            status = response.status().as_u16(),
            elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
            "answered"
        );
    });
    Ok(response)
}

/// The route templates the API serves and their methods, to tell "no such route" (404)
/// from "no such method here" (405).
#[derive(Debug, Default)]
pub struct RouteTable(Vec<(Vec<String>, Vec<Method>)>);

impl RouteTable {
    pub fn new<'a>(routes: impl IntoIterator<Item = (&'a str, Method)>) -> Self {
        let mut table: Vec<(Vec<String>, Vec<Method>)> = Vec::new();
        for (path, method) in routes {
            let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
            match table.iter_mut().find(|(s, _)| *s == segments) {
                Some((_, methods)) => methods.push(method),
                None => table.push((segments, vec![method])),
            }
        }
        Self(table)
    }

    /// The methods served at `path`, when some template matches it.
    /// Whether some route takes `method` at `path`.
    pub(crate) fn routes(&self, path: &str, method: &Method) -> bool {
        self.methods_at(path).is_some_and(|methods| methods.contains(method))
    }

    fn methods_at(&self, path: &str) -> Option<Vec<Method>> {
        let segments: Vec<&str> = path.split('/').collect();
        let matches = |template: &[String]| {
            template.len() == segments.len()
                && template
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
        };
        // Literal segments beat placeholders: `/v1/invoices/clients` is not `/v1/invoices/{id}`.
        let placeholders = |template: &[String]| template.iter().filter(|t| t.starts_with('{')).count();
        let best = self.0.iter().filter(|(t, _)| matches(t)).min_by_key(|(t, _)| placeholders(t))?;
        let fewest = placeholders(&best.0);
        let methods: Vec<Method> = self
            .0
            .iter()
            .filter(|(t, _)| matches(t) && placeholders(t) == fewest)
            .flat_map(|(_, m)| m.iter().cloned())
            .collect();
        Some(methods)
    }
}

/// The default service: 405 with `Allow` on a known path, 404 elsewhere.
pub(crate) async fn no_route(req: HttpRequest, routes: web::Data<RouteTable>) -> HttpResponse {
    match routes.methods_at(req.path()) {
        Some(methods) => {
            let mut allow: Vec<&str> = methods.iter().map(Method::as_str).collect();
            if methods.contains(&Method::GET) {
                allow.push(Method::HEAD.as_str());
            }
            ApiError::new(StatusCode::METHOD_NOT_ALLOWED, format!("method {} not allowed here", req.method()))
                .with_header(header::ALLOW, allow.join(", "))
                .error_response()
        }
        None => ApiError::new(StatusCode::NOT_FOUND, "no such route").error_response(),
    }
}

/// Safety net: any error response that is not JSON (an error raised inside the framework)
/// gets the `{"error": ...}` body of its status.
pub(crate) async fn json_errors(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let response = next.call(req).await?.map_into_boxed_body();
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return Ok(response);
    }
    let message = status.canonical_reason().unwrap_or("error").to_lowercase();
    let mut replacement = ApiError::new(status, message).error_response();
    // What the layers inside set (the key's `RateLimit-*`, `Allow`) stays.
    for (name, value) in response.headers() {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            replacement.headers_mut().append(name.clone(), value.clone());
        }
    }
    Ok(response.into_response(replacement))
}

#[cfg(test)]
mod tests {
    use actix_web::http::Method;

    use super::RouteTable;

    #[test]
    fn tells_methods_of_templates() {
        let table = RouteTable::new([
            ("/v1/invoices/clients", Method::GET),
            ("/v1/invoices/clients", Method::POST),
            ("/v1/invoices/clients/{id}", Method::DELETE),
        ]);
        assert_eq!(table.methods_at("/v1/invoices/clients"), Some(vec![Method::GET, Method::POST]));
        assert_eq!(table.methods_at("/v1/invoices/clients/abc"), Some(vec![Method::DELETE]));
        assert_eq!(table.methods_at("/v1/invoices/clients/"), None);
        assert_eq!(table.methods_at("/v1/invoices/clients/a/b"), None);
        assert_eq!(table.methods_at("/v2"), None);
    }
}
