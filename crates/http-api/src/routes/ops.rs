//! Operational endpoints: liveness, readiness, metrics.

use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::{ApiError, ErrorBody};
use crate::state::ApiState;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok` (live) or `ready` (can serve).
    status: &'static str,
}

/// Check liveness
///
/// Liveness: answers `ok` while the process answers. Needs no key.
#[utoipa::path(tag = "Operations", responses((status = 200, description = "Alive", body = Health)))]
#[get("/healthz")]
pub(crate) async fn healthz() -> web::Json<Health> {
    web::Json(Health { status: "ok" })
}

/// Check readiness
///
/// Readiness: answers `ready` when the database answers, 503 when it does not. Needs no key.
#[utoipa::path(
    tag = "Operations",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "The database does not answer", body = ErrorBody),
    )
)]
#[get("/readyz")]
pub(crate) async fn readyz(state: web::Data<ApiState>) -> Result<web::Json<Health>, ApiError> {
    state.stores.health.ping().await?;
    Ok(web::Json(Health { status: "ready" }))
}

/// Get Prometheus metrics
///
/// Prometheus metrics in the text exposition format: requests and latency by route and
/// status, and database pool usage. Needs no key.
#[utoipa::path(
    tag = "Operations",
    responses((status = 200, description = "Prometheus text exposition", body = String, content_type = "text/plain"))
)]
#[get("/metrics")]
pub(crate) async fn metrics(state: web::Data<ApiState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(state.metrics.render(state.stores.health.status()))
}
