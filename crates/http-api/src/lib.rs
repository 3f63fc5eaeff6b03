//! The actix-web adapter: the REST API, its conventions, and its OpenAPI description.
//!
//! A request passes, outermost first: `conventions::request_id` (id, span, log line),
//! `metrics::record`, `conventions::json_errors`, then for `/v1` routes
//! `auth::require_api_key` (401, 429), `idempotency::replay_retries` (a write's
//! `Idempotency-Key`: 400, 409, 422, or the kept answer) and the handler, whose [`auth::Auth`] extractor
//! checks the permission (403) before the [`body::Json`] body is parsed (400). Handlers
//! parse input into domain types, call a port, and map its errors with [`ApiError`].

pub mod auth;
pub mod body;
pub mod conventions;
mod csv;
pub mod deadline;
pub mod error;
pub mod idempotency;
pub mod listings;
mod mcp;
pub mod metrics;
mod openapi;
pub mod paging;
pub mod ratelimit;
pub mod revisions;
mod routes;
pub mod state;
pub mod tools;
pub mod triggers;

use std::net::TcpListener;
use std::rc::Rc;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::{Method, header};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpResponse, HttpServer, web};
use serde_json::Value;
use utoipa::OpenApi;
use utoipa_actix_web::{AppExt, UtoipaApp, scope};
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::openapi::{ApiDoc, SchemaLedger};

pub use deadline::ClientLimits;
pub use error::{ApiError, ErrorBody};
pub use mcp::AllowedOrigins;
pub use openapi::API_VERSION;
pub use ratelimit::Rate;
pub use state::{ApiState, HttpSettings, Stores};

fn register<T>(app: UtoipaApp<T>, ledger: &Rc<SchemaLedger>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.openapi(ApiDoc::openapi())
        .service(
            scope("/v1/invoices/clients")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::clients::list_clients))
                .service(ledger.check(routes::clients::create_client))
                .service(ledger.check(routes::clients::get_client))
                .service(ledger.check(routes::clients::replace_client))
                .service(ledger.check(routes::clients::delete_client)),
        )
        // A scope of its own, before the keyed `/v1/invoices` one, so that `/{id}` there
        // never sees `pdf` (another method on it is a 405 here).
        .service(scope("/v1/invoices/pdf").service(ledger.check(routes::invoices::invoice_pdf)))
        .service(
            scope("/v1/invoices/from-time")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::billed_time::invoice_time)),
        )
        .service(
            scope("/v1/invoices")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::invoices::list_invoices))
                .service(ledger.check(routes::invoices::create_invoice))
                .service(ledger.check(routes::invoices::get_invoice))
                .service(ledger.check(routes::invoices::update_invoice))
                .service(ledger.check(routes::invoices::mark_invoice))
                .service(ledger.check(routes::invoices::delete_invoice)),
        )
        .service(
            scope("/v1/track/time")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::time::list_time))
                .service(ledger.check(routes::track::time::create_time))
                .service(ledger.check(routes::track::time::get_time))
                .service(ledger.check(routes::track::time::update_time))
                .service(ledger.check(routes::track::time::delete_time)),
        )
        .service(
            scope("/v1/track/timer")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::timer::get_timer))
                .service(ledger.check(routes::track::timer::start_timer))
                .service(ledger.check(routes::track::timer::stop_timer))
                .service(ledger.check(routes::track::timer::discard_timer)),
        )
        .service(
            scope("/v1/track/reports")
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::reports::get_report)),
        )
        .service(
            scope("/v1/track/tags")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::tags::list_tags))
                .service(ledger.check(routes::track::tags::get_tag))
                .service(ledger.check(routes::track::tags::create_tag))
                .service(ledger.check(routes::track::tags::rename_tag))
                .service(ledger.check(routes::track::tags::delete_tag)),
        )
        .service(
            scope("/v1/track/projects")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::projects::list_projects))
                .service(ledger.check(routes::track::projects::get_project))
                .service(ledger.check(routes::track::projects::create_project))
                .service(ledger.check(routes::track::projects::update_project))
                .service(ledger.check(routes::track::projects::delete_project)),
        )
        .service(
            scope("/v1/track/sections")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::track::sections::list_sections))
                .service(ledger.check(routes::track::sections::get_section))
                .service(ledger.check(routes::track::sections::create_section))
                .service(ledger.check(routes::track::sections::update_section))
                .service(ledger.check(routes::track::sections::delete_section)),
        )
        .service(
            scope("/v1/agent/runs")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::agent::list_runs))
                .service(ledger.check(routes::agent::get_run)),
        )
        .service(
            scope("/v1/agent/deliveries")
                .wrap(from_fn(idempotency::replay_retries))
                .wrap(from_fn(auth::require_api_key))
                .service(ledger.check(routes::agent::list_deliveries)),
        )
        .service(ledger.check(routes::ops::healthz))
        .service(ledger.check(routes::ops::readyz))
        .service(ledger.check(routes::ops::metrics))
}

/// The routes and their OpenAPI description, built by the same calls.
fn build<T>(app: UtoipaApp<T>) -> (App<T>, Value, Vec<String>)
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    let ledger = Rc::new(SchemaLedger::default());
    let (app, doc) = register(app, &ledger).split_for_parts();
    let mut doc = serde_json::to_value(doc).unwrap_or_default();
    openapi::finish(&mut doc);
    (app, doc, ledger.clashes())
}

/// The OpenAPI description, generated from the routes themselves.
pub fn openapi() -> Value {
    build(App::new().into_utoipa_app()).1
}

/// Component names that two different schemas claimed while the description was built:
/// each is a type whose schema the description lost. Empty when the description is sound.
pub fn schema_name_clashes() -> Vec<String> {
    build(App::new().into_utoipa_app()).2
}

/// Every documented `(path, method)`.
pub fn documented_routes(doc: &Value) -> Vec<(String, Method)> {
    documented_operations(doc).into_iter().map(|(path, method, _)| (path, method)).collect()
}

/// Every documented `(path, method, names of its query parameters)`.
fn documented_operations(doc: &Value) -> Vec<(String, Method, Vec<String>)> {
    let Some(paths) = doc["paths"].as_object() else { return Vec::new() };
    paths
        .iter()
        .flat_map(|(path, item)| {
            openapi::METHODS.iter().filter_map(move |method| {
                let operation = item.get(*method)?;
                let parameters =
                    item["parameters"].as_array().into_iter().chain(operation["parameters"].as_array());
                let query = parameters
                    .flatten()
                    .filter(|parameter| parameter["in"] == "query")
                    .filter_map(|parameter| parameter["name"].as_str().map(str::to_owned))
                    .collect();
                let method = Method::from_bytes(method.to_uppercase().as_bytes()).ok()?;
                Some((path.clone(), method, query))
            })
        })
        .collect()
}

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
    let (app, doc, clashes) = build(App::new().into_utoipa_app());
    if !clashes.is_empty() {
        tracing::error!(?clashes, "two schemas share a name in the OpenAPI description");
    }
    let routes = documented_operations(&doc);
    let table = conventions::RouteTable::new(
        routes.iter().map(|(path, method, query)| (path.as_str(), method.clone(), query.clone())),
    );
    app.app_data(state)
        .app_data(web::Data::new(table))
        .app_data(web::PayloadConfig::new(body::BODY_LIMIT))
        .app_data(web::QueryConfig::default().error_handler(body::query_error))
        .service(
            SwaggerUi::new("/reference/{_:.*}")
                .external_url_unchecked("/openapi.json", doc)
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
        .wrap(from_fn(metrics::record))
        .wrap(from_fn(conventions::request_id))
}

/// Binds the API to `listener` and returns the running server. On SIGTERM it stops
/// gracefully: new connections are refused and requests in flight get 30 s to finish.
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
        .shutdown_timeout(30)
        .listen(listener)?
        .run())
}
