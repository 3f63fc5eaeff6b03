//! Conventions every response follows: an `x-request-id`, a request log line, and
//! `{"error": ...}` bodies also for the framework's own refusals (unknown route, wrong
//! method); and what every listener shares: error bodies, body parsing and its limits, rate
//! limits, who is calling, and which browser origins may.
//!
//! The leaf of the adapter: it imports no other room of it.

pub mod body;
pub mod client;
pub mod deadline;
pub mod error;
pub mod origins;
pub mod ratelimit;

use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use tracing::Instrument;

use crate::conventions::error::ApiError;

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

/// The route templates the API serves, their methods, and the query parameters each
/// method takes: to tell "no such route" (404) from "no such method here" (405), and an
/// unknown query parameter (400) from a known one. Built from the OpenAPI description, so
/// the server takes exactly what the description says.
#[derive(Debug, Default)]
pub struct RouteTable(Vec<Template>);

/// A path template (`/v1/invoices/{id}`), split at `/`, and what is served there.
#[derive(Debug)]
struct Template {
    segments: Vec<String>,
    operations: Vec<Operation>,
}

/// A method served at a template, and the names of the query parameters it takes.
#[derive(Debug)]
struct Operation {
    method: Method,
    query: Vec<String>,
}

impl RouteTable {
    /// A table of `(path template, method, query parameter names)`.
    pub fn new<'a>(routes: impl IntoIterator<Item = (&'a str, Method, Vec<String>)>) -> Self {
        let mut table: Vec<Template> = Vec::new();
        for (path, method, query) in routes {
            let segments: Vec<String> = path.split('/').map(str::to_owned).collect();
            let operation = Operation { method, query };
            match table.iter_mut().find(|template| template.segments == segments) {
                Some(template) => template.operations.push(operation),
                None => table.push(Template { segments, operations: vec![operation] }),
            }
        }
        Self(table)
    }

    /// Whether some route takes `method` at `path`.
    pub(crate) fn routes(&self, path: &str, method: &Method) -> bool {
        self.methods_at(path).is_some_and(|methods| methods.contains(method))
    }

    /// The query parameters the route of `method` at `path` takes, if there is one.
    pub(crate) fn query_parameters(&self, path: &str, method: &Method) -> Option<&[String]> {
        self.best_templates(path)
            .into_iter()
            .flat_map(|template| &template.operations)
            .find(|operation| operation.method == *method)
            .map(|operation| operation.query.as_slice())
    }

    /// The methods served at `path`, when some template matches it.
    fn methods_at(&self, path: &str) -> Option<Vec<Method>> {
        let best = self.best_templates(path);
        (!best.is_empty()).then(|| {
            best.iter().flat_map(|template| template.operations.iter().map(|o| o.method.clone())).collect()
        })
    }

    /// The route a caller of `path`, which no template matches, likely meant: the template
    /// one segment away (one added, dropped, or changed; a misspelt segment counts half),
    /// preferring one that keeps every word of the path, and none if two are as near. Written with the path's own ids
    /// in its placeholders; an id the template has no place for, on a template whose GET
    /// takes `id`, goes to the query (`/v1/invoices/{id}/pdf` is `/v1/invoices/pdf?id=…`).
    pub(crate) fn nearest(&self, path: &str) -> Option<String> {
        let segments: Vec<&str> = path.split('/').collect();
        // A template more than one segment longer or shorter is never within one step, and
        // skipping it keeps the work per unknown path small however long the path is.
        let near_in_length = |template: &&Template| template.segments.len().abs_diff(segments.len()) <= 1;
        let scored = self.0.iter().filter(near_in_length).filter_map(|template| {
            let (cost, filled) = alignment(&template.segments, &segments);
            // Within one step: an insertion, a deletion or a change (2), or a misspelling (1).
            (cost <= 2).then(|| {
                let words_lost = segments
                    .iter()
                    .filter(|s| !s.is_empty() && !looks_like_id(s))
                    .filter(|s| !template.segments.iter().any(|t| t == *s))
                    .count();
                ((cost, words_lost), template, filled)
            })
        });
        let scored: Vec<_> = scored.collect();
        let best = scored.iter().map(|(score, _, _)| *score).min()?;
        let mut at_best = scored.into_iter().filter(|(score, _, _)| *score == best);
        let (_, template, filled) = at_best.next()?;
        if at_best.next().is_some() {
            // Two routes are as near (`/v1/x` to every `/v1/…`): naming one would be a guess.
            return None;
        }
        let mut suggestion = filled.join("/");
        let takes_id = template
            .operations
            .iter()
            .any(|operation| operation.method == Method::GET && operation.query.iter().any(|q| q == "id"));
        let left_out = segments.iter().find(|s| looks_like_id(s) && !filled.iter().any(|f| f == *s));
        if let (true, Some(id)) = (takes_id, left_out) {
            suggestion.push_str("?id=");
            suggestion.push_str(id);
        }
        Some(suggestion)
    }

    /// The templates that match `path` with the fewest placeholders: literal segments beat
    /// placeholders, so `/v1/invoices/clients` is not `/v1/invoices/{id}`.
    fn best_templates(&self, path: &str) -> Vec<&Template> {
        let segments: Vec<&str> = path.split('/').collect();
        let matches = |template: &Template| {
            template.segments.len() == segments.len()
                && template
                    .segments
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
        };
        let placeholders =
            |template: &Template| template.segments.iter().filter(|t| t.starts_with('{')).count();
        let Some(fewest) = self.0.iter().filter(|t| matches(t)).map(placeholders).min() else {
            return Vec::new();
        };
        self.0.iter().filter(|t| matches(t) && placeholders(t) == fewest).collect()
    }
}

/// Whether a path segment is an id (a UUID), which fills a placeholder.
fn looks_like_id(segment: &str) -> bool {
    uuid::Uuid::try_parse(segment).is_ok()
}

/// The cheapest edit of `path`'s segments into `template`'s (an insertion or deletion 2, a
/// change 2, a change to a similar word 1; a placeholder takes any segment for nothing),
/// and the template with its placeholders filled from the path.
fn alignment(template: &[String], path: &[&str]) -> (usize, Vec<String>) {
    let (rows, columns) = (template.len() + 1, path.len() + 1);
    let mut cost = vec![vec![0_usize; columns]; rows];
    for (i, row) in cost.iter_mut().enumerate() {
        row[0] = 2 * i;
    }
    for (j, cell) in cost[0].iter_mut().enumerate() {
        *cell = 2 * j;
    }
    let change = |t: &str, p: &str| {
        if t == p || (t.starts_with('{') && !p.is_empty()) {
            0
        } else if strsim::normalized_levenshtein(t, p) >= 0.7 {
            1
        } else {
            2
        }
    };
    for i in 1..rows {
        for j in 1..columns {
            cost[i][j] = (cost[i - 1][j - 1] + change(&template[i - 1], path[j - 1]))
                .min(cost[i - 1][j] + 2)
                .min(cost[i][j - 1] + 2);
        }
    }
    // Walk back for what fills each placeholder.
    let mut filled: Vec<String> = template.to_vec();
    let (mut i, mut j) = (template.len(), path.len());
    while i > 0 && j > 0 {
        if cost[i][j] == cost[i - 1][j - 1] + change(&template[i - 1], path[j - 1]) {
            if template[i - 1].starts_with('{') {
                path[j - 1].clone_into(&mut filled[i - 1]);
            }
            i -= 1;
            j -= 1;
        } else if cost[i][j] == cost[i - 1][j] + 2 {
            i -= 1;
        } else {
            j -= 1;
        }
    }
    (cost[template.len()][path.len()], filled)
}

/// A 400 for the first query parameter of `req` that its route does not take, naming it
/// and the parameter likely meant: a misspelt filter (`projectID=`) would otherwise widen
/// a listing to everything, silently. Routes the table does not know are left alone.
pub(crate) fn refuse_unknown_query_parameters(req: &HttpRequest) -> Result<(), ApiError> {
    if req.query_string().is_empty() {
        return Ok(());
    }
    let Some(table) = req.app_data::<web::Data<RouteTable>>() else { return Ok(()) };
    let Some(known) = table.query_parameters(req.path(), req.method()) else { return Ok(()) };
    let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string())
        .map_err(|error| ApiError::new(StatusCode::BAD_REQUEST, format!("query: {error}")))?;
    let Some((unknown, _)) = pairs.iter().find(|(name, _)| !known.iter().any(|k| k == name)) else {
        return Ok(());
    };
    let message = if known.is_empty() {
        format!("{unknown}: not accepted; this operation takes no query parameters")
    } else {
        let known: Vec<&str> = known.iter().map(String::as_str).collect();
        crate::conventions::body::not_accepted(unknown, unknown, &known)
    };
    Err(ApiError::new(StatusCode::BAD_REQUEST, message))
}

/// The default service: 405 with `Allow` on a known path, 404 elsewhere.
pub(crate) async fn no_route(req: HttpRequest, routes: web::Data<RouteTable>) -> HttpResponse {
    if let Some(methods) = routes.methods_at(req.path()) {
        let mut allow: Vec<&str> = methods.iter().map(Method::as_str).collect();
        if methods.contains(&Method::GET) {
            allow.push(Method::HEAD.as_str());
        }
        return ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {} not allowed here", req.method()),
        )
        .with_header(header::ALLOW, allow.join(", "))
        .error_response();
    }
    let message = match routes.nearest(req.path()) {
        Some(route) => format!("no such route; did you mean {route}?"),
        None => "no such route".to_owned(),
    };
    ApiError::new(StatusCode::NOT_FOUND, message).error_response()
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
            ("/v1/invoices/clients", Method::GET, vec!["q".to_owned()]),
            ("/v1/invoices/clients", Method::POST, vec![]),
            ("/v1/invoices/clients/{id}", Method::DELETE, vec![]),
            ("/v1/invoices/{id}", Method::GET, vec!["x".to_owned()]),
        ]);
        assert_eq!(table.methods_at("/v1/invoices/clients"), Some(vec![Method::GET, Method::POST]));
        assert_eq!(table.methods_at("/v1/invoices/clients/abc"), Some(vec![Method::DELETE]));
        assert_eq!(table.methods_at("/v1/invoices/clients/"), None);
        assert_eq!(table.methods_at("/v1/invoices/clients/a/b"), None);
        assert_eq!(table.methods_at("/v2"), None);
        assert_eq!(table.query_parameters("/v1/invoices/clients", &Method::GET), Some(&["q".to_owned()][..]));
        assert_eq!(table.query_parameters("/v1/invoices/clients", &Method::POST), Some(&[][..]));
        assert_eq!(table.query_parameters("/v1/invoices/clients", &Method::PUT), None);
        assert_eq!(table.query_parameters("/v1/invoices/abc", &Method::GET), Some(&["x".to_owned()][..]));
    }

    #[test]
    fn a_path_one_step_from_a_route_is_pointed_to_it() {
        let none = Vec::new;
        let table = RouteTable::new([
            ("/v1/invoices", Method::GET, none()),
            ("/v1/invoices/clients", Method::GET, none()),
            ("/v1/invoices/{id}", Method::GET, none()),
            ("/v1/invoices/{id}/payments", Method::GET, none()),
            ("/v1/invoices/pdf", Method::GET, vec!["id".to_owned(), "download".to_owned()]),
            ("/v1/track/time", Method::GET, none()),
            ("/healthz", Method::GET, none()),
            ("/metrics", Method::GET, none()),
        ]);
        let id = "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e";
        let nearest = |path: &str| table.nearest(path);
        assert_eq!(nearest("/v1/clients").as_deref(), Some("/v1/invoices/clients"));
        assert_eq!(nearest(&format!("/v1/invoices/{id}/pdf")), Some(format!("/v1/invoices/pdf?id={id}")));
        assert_eq!(
            nearest(&format!("/v1/invoice/{id}/payments")),
            Some(format!("/v1/invoices/{id}/payments"))
        );
        assert_eq!(nearest("/v1/track/times").as_deref(), Some("/v1/track/time"));
        assert_eq!(nearest("/nope"), None, "as near to /healthz as to /metrics");
        assert_eq!(nearest("/healthy").as_deref(), Some("/healthz"));
        assert_eq!(nearest("/v2/things/else/entirely"), None);
    }
}
