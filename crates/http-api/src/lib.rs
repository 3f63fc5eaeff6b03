//! The actix-web adapter: the REST API, the built-in tools over `/mcp`, the agent's trigger
//! listeners, and the HTTP conventions they share.
//!
//! Four rooms, whose imports point one way:
//! - `conventions`: the leaf. Error bodies, body parsing and limits, request ids, rate
//!   limits, who is calling; it imports no other room.
//! - `rest`: the REST API and its OpenAPI description; imports `conventions`.
//! - `tools`: the catalogue of built-in tools and `/mcp`; imports `rest` and `conventions`.
//! - `triggers`: the agent's listeners; imports `conventions` only.
//!
//! A REST request passes, outermost first: `conventions::request_id` (id, span, log line),
//! `rest::observe::record`, `conventions::json_errors`, then for `/v1` routes
//! `rest::auth::require_api_key` (401, 429), `rest::idempotency::replay_retries` (a write's
//! `Idempotency-Key`: 400, 409, 422, or the kept answer) and the handler, whose
//! [`rest::auth::Auth`] extractor checks the permission (403) before the
//! [`conventions::body::Json`] body is parsed (400). Handlers parse input into domain types,
//! call a port, and map its errors with [`ApiError`].

pub mod conventions;
pub mod rest;
pub mod tools;
pub mod triggers;

use std::net::TcpListener;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpResponse, HttpServer, web};
use utoipa_actix_web::AppExt;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::conventions::{body, deadline};
use crate::rest::{auth, observe};
use crate::tools::mcp;

pub use conventions::deadline::ClientLimits;
pub use conventions::error::{ApiError, ErrorBody};
pub use conventions::origins::AllowedOrigins;
pub use conventions::ratelimit::Rate;
pub use rest::describe::ApiBodies;
pub use rest::openapi::API_VERSION;
pub use rest::state::{ApiState, HttpSettings, Sending, Stores};
pub use rest::{documented_routes, openapi, schema_name_clashes};

/// The whole application, as served by [`serve`] and by tests.
pub fn app(
    state: web::Data<ApiState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let (app, doc, clashes) = rest::build(App::new().into_utoipa_app());
    if !clashes.is_empty() {
        tracing::error!(?clashes, "two schemas share a name in the OpenAPI description");
    }
    let routes = rest::documented_operations(&doc);
    let table = conventions::RouteTable::new(
        routes.iter().map(|(path, method, query)| (path.as_str(), method.clone(), query.clone())),
    );
    let description = description(&doc);
    app.app_data(state)
        .app_data(web::Data::new(table))
        .app_data(web::PayloadConfig::new(body::BODY_LIMIT))
        .app_data(web::QueryConfig::default().error_handler(body::query_error))
        .route(
            "/openapi.json",
            web::get().to(move || {
                let description = description.clone();
                async move { HttpResponse::Ok().content_type(header::ContentType::json()).body(description) }
            }),
        )
        .service(
            SwaggerUi::new("/reference/{_:.*}")
                .config(Config::new(["/openapi.json"]).persist_authorization(true).try_it_out_enabled(true)),
        )
        .service(
            web::resource("/mcp")
                .wrap(from_fn(auth::require_api_key_or_bearer))
                .wrap(from_fn(mcp::check_origin))
                .route(web::post().to(mcp::handle)),
        )
        .route(
            "/",
            web::get().to(|| async {
                HttpResponse::Found().insert_header((header::LOCATION, "/reference/")).finish()
            }),
        )
        .default_service(web::to(conventions::no_route))
        .wrap(from_fn(deadline::body_deadline))
        .wrap(from_fn(conventions::json_errors))
        .wrap(from_fn(observe::record))
        .wrap(from_fn(conventions::request_id))
}

/// `/openapi.json` as served: written once per process and shared. Every worker's app
/// describes the same routes, and the description kept as a JSON tree in each (as the
/// reference's own handler keeps it) cost several megabytes of memory per worker.
fn description(doc: &serde_json::Value) -> web::Bytes {
    static WRITTEN: std::sync::OnceLock<web::Bytes> = std::sync::OnceLock::new();
    WRITTEN
        .get_or_init(|| {
            serde_json::to_vec(doc).map_or_else(
                |error| {
                    tracing::error!(%error, "cannot write the OpenAPI description");
                    web::Bytes::new()
                },
                web::Bytes::from,
            )
        })
        .clone()
}

/// Binds the API to `listener` and returns the running server. On SIGTERM it stops
/// gracefully: new connections are refused and requests in flight get `limits.shutdown_timeout` to finish.
/// SIGINT (Ctrl-C) stops at once.
pub fn serve(
    listener: TcpListener,
    state: web::Data<ApiState>,
    workers: usize,
    limits: ClientLimits,
) -> std::io::Result<Server> {
    Ok(HttpServer::new(move || app(state.clone()).app_data(web::Data::new(limits)))
        .workers(workers.max(1))
        .max_connections(limits.per_worker(workers))
        .shutdown_timeout(limits.shutdown_timeout.as_secs())
        .listen(listener)?
        .run())
}
