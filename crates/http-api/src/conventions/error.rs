//! The one error type handlers return, and its mapping to `{"error": "..."}` responses.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use kernel::{FieldError, StoreError};
use serde::Serialize;
use utoipa::ToSchema;

/// Body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong. For a 400 it starts with the offending field as a path, e.g.
    /// `lineItems[1].quantity: must be greater than 0`.
    pub error: String,
}

/// The answer to a write the database's disk has no room for.
pub const DISK_FULL: &str = "the database's disk is full: writes are refused until there is room again";

/// An error on its way to becoming a response.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Logged (with its whole chain) for server errors; never shown to the client.
    source: Option<anyhow::Error>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), headers: Vec::new(), source: None }
    }

    #[must_use]
    pub fn with_header(mut self, name: HeaderName, value: impl std::fmt::Display) -> Self {
        if let Ok(value) = HeaderValue::from_str(&value.to_string()) {
            self.headers.push((name, value));
        }
        self
    }

    pub fn field(error: &FieldError) -> Self {
        Self::new(StatusCode::BAD_REQUEST, error.to_string())
    }

    pub fn not_found() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not found")
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    pub fn internal(source: anyhow::Error) -> Self {
        Self { source: Some(source), ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal server error") }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        if let Some(source) = &self.source {
            tracing::error!(error = format!("{source:#}"), status = self.status.as_u16(), "request failed");
        }
        let mut response = HttpResponse::build(self.status);
        for (name, value) in &self.headers {
            response.insert_header((name.clone(), value.clone()));
        }
        response
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .json(ErrorBody { error: self.message.clone() })
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable(source) => Self {
                source: Some(source),
                ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "service temporarily unavailable, retry later")
                    .with_header(header::RETRY_AFTER, 1)
            },
            StoreError::Full(source) => {
                Self { source: Some(source), ..Self::new(StatusCode::INSUFFICIENT_STORAGE, DISK_FULL) }
            }
            StoreError::Unexpected(source) => Self::internal(source),
        }
    }
}

impl From<FieldError> for ApiError {
    fn from(error: FieldError) -> Self {
        Self::field(&error)
    }
}
