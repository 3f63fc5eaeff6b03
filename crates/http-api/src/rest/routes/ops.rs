//! Operational endpoints: liveness, readiness, metrics.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, get, web};
use serde::Serialize;
use utoipa::ToSchema;

use crate::conventions::error::{ApiError, DISK_FULL, ErrorBody};
use crate::rest::state::ApiState;

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok` (live) or `ready` (can serve).
    status: HealthStatus,
}

/// What a health check says.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HealthStatus {
    /// The process answers (`/healthz`).
    Ok,
    /// The process can serve: its database answers and has room (`/readyz`).
    Ready,
}

/// Check liveness
///
/// Liveness: answers `ok` while the process answers. Needs no key.
#[utoipa::path(tag = "Operations", responses((status = 200, description = "Alive", body = Health)))]
#[get("/healthz")]
pub(crate) async fn healthz() -> web::Json<Health> {
    web::Json(Health { status: HealthStatus::Ok })
}

/// Check readiness
///
/// Readiness: answers `ready` when the database answers and has room for writes; 503
/// when it does not answer, or when its disk was full for the last write (within the last
/// minute). Needs no key.
#[utoipa::path(
    tag = "Operations",
    responses(
        (status = 200, description = "Ready", body = Health),
        (status = 503, description = "The database does not answer, or its disk is full", body = ErrorBody),
    )
)]
#[get("/readyz")]
pub(crate) async fn readyz(state: web::Data<ApiState>) -> Result<web::Json<Health>, ApiError> {
    state.stores.health.ping().await?;
    if let Some(ago) = state.room.full_since() {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{DISK_FULL} (a write was refused {} s ago)", ago.as_secs()),
        ));
    }
    Ok(web::Json(Health { status: HealthStatus::Ready }))
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
