//! Prometheus metrics: requests and latency by route and status, and pool usage.

use std::time::Instant;

use kernel::StoreStatus;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    pool: IntGaugeVec,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new();
        let labels = &["method", "route", "status"];
        let requests = IntCounterVec::new(Opts::new("http_requests_total", "HTTP requests answered"), labels)
            .unwrap_or_else(|_| unreachable!("metric definitions are constant and valid"));
        let latency = HistogramVec::new(
            HistogramOpts::new("http_request_duration_seconds", "Time to answer HTTP requests").buckets(
                vec![0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0],
            ),
            labels,
        )
        .unwrap_or_else(|_| unreachable!("metric definitions are constant and valid"));
        let pool =
            IntGaugeVec::new(Opts::new("db_pool_connections", "Database pool connections"), &["state"])
                .unwrap_or_else(|_| unreachable!("metric definitions are constant and valid"));
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(pool.clone()),
        ] {
            // Names are distinct, so registration cannot collide.
            let _ = registry.register(collector);
        }
        Self { registry, requests, latency, pool }
    }

    pub(crate) fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        let status = status.to_string();
        let labels = [method, route, status.as_str()];
        self.requests.with_label_values(&labels).inc();
        self.latency.with_label_values(&labels).observe(seconds);
    }

    /// The text exposition, with pool figures read now.
    pub fn render(&self, pool: StoreStatus) -> String {
        for (state, value) in [
            ("max", pool.max_size),
            ("open", pool.size),
            ("idle", pool.available),
            ("in_use", pool.size.saturating_sub(pool.available)),
            ("waiting", pool.waiting),
        ] {
            self.pool.with_label_values(&[state]).set(i64::try_from(value).unwrap_or(i64::MAX));
        }
        let mut buffer = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut buffer);
        String::from_utf8(buffer).unwrap_or_default()
    }
}

/// Whether the database's disk had room for the last write, as the answers tell: a 507
/// marks it full, a write answered 2xx marks it roomy again. `/readyz` reports it.
#[derive(Debug, Default)]
pub struct DiskRoom {
    last_refusal: std::sync::Mutex<Option<Instant>>,
}

impl DiskRoom {
    /// How long a refusal counts when no write follows it to say otherwise.
    const MEMORY: std::time::Duration = std::time::Duration::from_mins(1);

    pub(crate) fn observe(&self, method: &actix_web::http::Method, status: actix_web::http::StatusCode) {
        let refused = status == actix_web::http::StatusCode::INSUFFICIENT_STORAGE;
        let written = status.is_success() && !method.is_safe();
        if refused || written {
            let mut last = self.last_refusal.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            *last = refused.then(Instant::now);
        }
    }

    /// How long ago the last write was refused for want of room, while it still counts.
    pub fn full_since(&self) -> Option<std::time::Duration> {
        let last = *self.last_refusal.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        last.map(|at| at.elapsed()).filter(|ago| *ago < Self::MEMORY)
    }
}
