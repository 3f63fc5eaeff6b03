//! Handlers, one module per resource.

pub(crate) mod clients;
pub(crate) mod ops;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// Answer of a successful delete.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Deleted {
    pub(crate) message: String,
}

/// RFC 3339 in UTC with milliseconds: `2026-11-20T09:30:00.000Z`.
pub(crate) fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}
