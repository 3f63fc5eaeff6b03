//! The renderer as an HTTP service, so PDFs can be made apart from the API:
//!
//! - `POST /render` takes an [`InvoiceDocument`] as JSON (`application/json`, at most
//!   4 MiB) and answers `200 application/pdf`;
//! - `GET /health` answers `200 {"status":"ok"}`.
//!
//! Errors are `{"error": "..."}`: 400 for a body that is not a document, 413 for one over
//! the limit, 415 for another content type, 500 `failed to generate PDF` when rendering
//! fails (the cause is logged). The service holds no data and checks no keys: run it where
//! only the API can reach it.

use std::net::{SocketAddr, TcpListener};

use actix_web::dev::Server;
use actix_web::error::{InternalError, JsonPayloadError};
use actix_web::http::StatusCode;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use billing::InvoiceDocument;
use billing::issue::MediaType;
use serde_json::json;

use crate::builtin::render_pdf;

/// The largest document accepted: thousands of line items fit.
pub const BODY_LIMIT: usize = 4 * 1024 * 1024;

fn error(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "error": message }))
}

fn refused(payload: JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    let response = match &payload {
        JsonPayloadError::ContentType => error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (Content-Type: application/json)",
        ),
        JsonPayloadError::Overflow { .. } | JsonPayloadError::OverflowKnownLength { .. } => {
            error(StatusCode::PAYLOAD_TOO_LARGE, "the document is larger than 4 MiB")
        }
        JsonPayloadError::Deserialize(cause) => {
            error(StatusCode::BAD_REQUEST, &format!("not an invoice document: {cause}"))
        }
        other => error(StatusCode::BAD_REQUEST, &other.to_string()),
    };
    InternalError::from_response(payload, response).into()
}

async fn render(document: web::Json<InvoiceDocument>) -> HttpResponse {
    let document = document.into_inner();
    let serial = document.serial.clone();
    let failure = match web::block(move || render_pdf(&document)).await {
        Ok(Ok(pdf)) => return HttpResponse::Ok().content_type(MediaType::Pdf.as_str()).body(pdf),
        Ok(Err(cause)) => cause,
        Err(blocking) => anyhow::Error::new(blocking).context("the rendering task failed"),
    };
    tracing::error!(serial, error = format!("{failure:#}"), "rendering an invoice failed");
    error(StatusCode::INTERNAL_SERVER_ERROR, "failed to generate PDF")
}

/// The service's routes, to mount in an actix-web `App`.
pub fn configure(config: &mut web::ServiceConfig) {
    config
        .app_data(web::JsonConfig::default().limit(BODY_LIMIT).error_handler(refused))
        .service(
            web::resource("/render")
                .route(web::post().to(render))
                .default_service(web::to(|| async { error(StatusCode::METHOD_NOT_ALLOWED, "use POST") })),
        )
        .service(
            web::resource("/health")
                .route(web::get().to(|| async { HttpResponse::Ok().json(json!({ "status": "ok" })) }))
                .default_service(web::to(|| async { error(StatusCode::METHOD_NOT_ALLOWED, "use GET") })),
        )
        .default_service(web::to(|| async { error(StatusCode::NOT_FOUND, "no such route") }));
}

/// The service on a bound listener; await the [`Server`] to run it. Tests use this with
/// a listener on port 0.
pub fn run(listener: TcpListener) -> anyhow::Result<Server> {
    Ok(HttpServer::new(|| App::new().configure(configure)).listen(listener)?.run())
}

/// Serves the renderer on `listen` until the process is stopped.
pub async fn serve(listen: SocketAddr) -> anyhow::Result<()> {
    let listener =
        TcpListener::bind(listen).map_err(|error| anyhow::anyhow!("cannot listen on {listen}: {error}"))?;
    tracing::info!(address = %listener.local_addr()?, "serving the invoice renderer");
    run(listener)?.await?;
    Ok(())
}
