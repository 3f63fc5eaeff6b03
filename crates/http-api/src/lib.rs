//! The actix-web adapter: the REST API, its conventions, and its OpenAPI description.
//!
//! A request passes, outermost first: `conventions::request_id` (id, span, log line),
//! `metrics::record`, `conventions::json_errors`, then for `/v1` routes
//! `auth::require_api_key` (401, 429) and the handler, whose [`auth::Auth`] extractor
//! checks the permission (403) before the [`body::Json`] body is parsed (400). Handlers
//! parse input into domain types, call a port, and map its errors with [`ApiError`].

pub mod auth;
pub mod body;
pub mod conventions;
pub mod error;
pub mod listings;
pub mod metrics;
pub mod ratelimit;
pub mod revisions;
mod routes;
pub mod state;
pub mod triggers;

use std::net::TcpListener;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::{Method, header};
use actix_web::middleware::from_fn;
use actix_web::{App, HttpResponse, HttpServer, web};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{OpenApi as OpenApiDoc, PathItem};
use utoipa::{Modify, OpenApi};
use utoipa_actix_web::{AppExt, UtoipaApp, scope};
use utoipa_swagger_ui::SwaggerUi;

pub use error::{ApiError, ErrorBody};
pub use ratelimit::Rate;
pub use state::{ApiState, HttpSettings, Stores};

/// Version of the API description.
pub const API_VERSION: &str = "2026.6.2";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "billable",
        version = "2026.6.2",
        description = "Team-scoped REST API for clients, invoices and time tracking. Every `/v1` \
            endpoint needs an `X-API-Key` header; all data belongs to the key's team, and another \
            team's resources are reported as not found. Errors are `{\"error\": \"...\"}`; a 400 \
            names the offending field first. Requests are rate-limited per key (429 with \
            `Retry-After`), and keyed responses carry `RateLimit-Limit`, `RateLimit-Remaining` and \
            `RateLimit-Reset`."
    ),
    modifiers(&KeySecurity),
    tags(
        (name = "Clients", description = "Who invoices are billed to"),
        (name = "Invoices", description = "Invoices with line items and exact money; PDFs by public link"),
        (name = "Time entries", description = "Time spent on tasks. Members log and see their own; owners and \
            admins log and see anyone's in the team"),
        (name = "Tags", description = "Labels on time entries"),
        (name = "Projects", description = "What time is logged against"),
        (name = "Sections", description = "Parts of a project"),
        (name = "Agent runs", description = "The agent runtime's run history: every call of its triggers, \
            with status, steps and tokens; and the repository trigger's delivery log: every verified \
            delivery with its verdict and what became of it. Needs `agent:read`"),
        (name = "Operations", description = "Health and metrics"),
    )
)]
struct ApiDoc;

struct KeySecurity;

impl Modify for KeySecurity {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-Key",
                "A key made by `billable keys create` (or printed at first start).",
            ))),
        );
        // Every `/v1` operation needs the key: stated once here rather than on each handler.
        let keyed = SecurityRequirement::new("api_key", Vec::<String>::new());
        for (path, item) in &mut openapi.paths.paths {
            // The PDF link is public: its unguessable id is the credential.
            if !path.starts_with("/v1/") || path == "/v1/invoices/pdf" {
                continue;
            }
            let operations =
                [&mut item.get, &mut item.post, &mut item.put, &mut item.patch, &mut item.delete];
            for operation in operations.into_iter().flatten() {
                operation.security = Some(vec![keyed.clone()]);
            }
        }
    }
}

fn register<T>(app: UtoipaApp<T>) -> UtoipaApp<T>
where
    T: ServiceFactory<ServiceRequest, Config = (), Error = actix_web::Error, InitError = ()>,
{
    app.openapi(ApiDoc::openapi())
        .service(
            scope("/v1/invoices/clients")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::clients::list_clients)
                .service(routes::clients::create_client)
                .service(routes::clients::get_client)
                .service(routes::clients::replace_client)
                .service(routes::clients::delete_client),
        )
        // A scope of its own, before the keyed `/v1/invoices` one, so that `/{id}` there
        // never sees `pdf` (another method on it is a 405 here).
        .service(scope("/v1/invoices/pdf").service(routes::invoices::invoice_pdf))
        .service(
            scope("/v1/invoices")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::invoices::list_invoices)
                .service(routes::invoices::create_invoice)
                .service(routes::invoices::get_invoice)
                .service(routes::invoices::update_invoice)
                .service(routes::invoices::mark_invoice)
                .service(routes::invoices::delete_invoice),
        )
        .service(
            scope("/v1/track/time")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::track::time::list_time)
                .service(routes::track::time::create_time)
                .service(routes::track::time::get_time)
                .service(routes::track::time::update_time)
                .service(routes::track::time::delete_time),
        )
        .service(
            scope("/v1/track/tags")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::track::tags::list_tags)
                .service(routes::track::tags::create_tag)
                .service(routes::track::tags::rename_tag)
                .service(routes::track::tags::delete_tag),
        )
        .service(
            scope("/v1/track/projects")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::track::projects::list_projects)
                .service(routes::track::projects::create_project)
                .service(routes::track::projects::update_project)
                .service(routes::track::projects::delete_project),
        )
        .service(
            scope("/v1/track/sections")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::track::sections::list_sections)
                .service(routes::track::sections::create_section)
                .service(routes::track::sections::update_section)
                .service(routes::track::sections::delete_section),
        )
        .service(
            scope("/v1/agent/runs")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::agent::list_runs)
                .service(routes::agent::get_run),
        )
        .service(
            scope("/v1/agent/deliveries")
                .wrap(from_fn(auth::require_api_key))
                .service(routes::agent::list_deliveries),
        )
        .service(routes::ops::healthz)
        .service(routes::ops::readyz)
        .service(routes::ops::metrics)
}

/// The OpenAPI description, generated from the routes themselves.
pub fn openapi() -> OpenApiDoc {
    register(App::new().into_utoipa_app()).split_for_parts().1
}

/// Every documented `(path, method)`.
pub fn documented_routes(doc: &OpenApiDoc) -> Vec<(String, Method)> {
    let methods = |item: &PathItem| {
        [
            (Method::GET, item.get.is_some()),
            (Method::POST, item.post.is_some()),
            (Method::PUT, item.put.is_some()),
            (Method::PATCH, item.patch.is_some()),
            (Method::DELETE, item.delete.is_some()),
        ]
        .into_iter()
        .filter_map(|(method, present)| present.then_some(method))
        .collect::<Vec<_>>()
    };
    doc.paths
        .paths
        .iter()
        .flat_map(|(path, item)| methods(item).into_iter().map(move |m| (path.clone(), m)))
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
    let (app, doc) = register(App::new().into_utoipa_app()).split_for_parts();
    let routes = documented_routes(&doc);
    let table =
        conventions::RouteTable::new(routes.iter().map(|(path, method)| (path.as_str(), method.clone())));
    app.app_data(state)
        .app_data(web::Data::new(table))
        .app_data(web::PayloadConfig::new(body::BODY_LIMIT))
        .service(SwaggerUi::new("/reference/{_:.*}").url("/openapi.json", doc))
        .route(
            "/",
            web::get().to(|| async {
                HttpResponse::Found().insert_header((header::LOCATION, "/reference/")).finish()
            }),
        )
        .default_service(web::to(conventions::no_route))
        .wrap(from_fn(conventions::json_errors))
        .wrap(from_fn(metrics::record))
        .wrap(from_fn(conventions::request_id))
}

/// Binds the API to `listener` and returns the running server. On SIGTERM it stops
/// gracefully: new connections are refused and requests in flight get 30 s to finish.
/// SIGINT (Ctrl-C) stops at once.
pub fn serve(listener: TcpListener, state: web::Data<ApiState>, workers: usize) -> std::io::Result<Server> {
    Ok(HttpServer::new(move || app(state.clone()))
        .workers(workers.max(1))
        .shutdown_timeout(30)
        .listen(listener)?
        .run())
}
