//! The middleware that watches every answer: its route and latency for the metrics, and
//! what it says of the database's disk.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::web;

use crate::rest::idempotency::REPLAYED;
use crate::rest::state::ApiState;

/// Records every response's route pattern (not its path: ids would explode the labels).
pub(crate) async fn record(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let state = req.app_data::<web::Data<ApiState>>().cloned();
    let method = req.method().to_string();
    let response = next.call(req).await?;
    if let Some(state) = state {
        let route = response.request().match_pattern().unwrap_or_else(|| "unmatched".to_owned());
        let status = response.status();
        state.metrics.observe(&method, &route, status.as_u16(), started.elapsed().as_secs_f64());
        // A kept answer given back again wrote nothing: it says nothing of the disk.
        if !response.headers().contains_key(REPLAYED) {
            state.room.observe(response.request().method(), status);
        }
    }
    Ok(response)
}
