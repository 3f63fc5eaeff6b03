//! `/v1/track`: time entries, tags, projects and sections. Every endpoint needs
//! `track:read` (GET) or `track:write` (the rest).

pub(crate) mod projects;
pub(crate) mod reports;
pub(crate) mod sections;
pub(crate) mod tags;
pub(crate) mod time;
pub(crate) mod timer;

use actix_web::http::StatusCode;
use tracking::{DeleteError, Title, TrackError};

use crate::error::ApiError;
use crate::routes::not_found;

impl From<TrackError> for ApiError {
    fn from(error: TrackError) -> Self {
        match error {
            TrackError::Invalid(error) => error.into(),
            TrackError::Forbidden(message) => ApiError::new(StatusCode::FORBIDDEN, message),
            TrackError::NotFound => not_found("time entry"),
            TrackError::NoTimer => ApiError::new(StatusCode::NOT_FOUND, "no timer is running"),
            TrackError::Conflict(message) => ApiError::conflict(message),
            TrackError::Store(error) => error.into(),
        }
    }
}

/// Maps a refused delete of a `what` ("project", "section", ...).
fn delete_error(what: &str) -> impl Fn(DeleteError) -> ApiError {
    move |error| match error {
        DeleteError::NotFound => not_found(what),
        DeleteError::HasTimeEntries => {
            ApiError::conflict(format!("the {what} has time entries and cannot be deleted"))
        }
        DeleteError::Billed => ApiError::conflict(format!("invoiceId: the {what} is billed and locked")),
        DeleteError::Store(error) => error.into(),
    }
}

/// Where a titled item stands in a listing: by title, case-insensitively, then id.
fn title_key(title: &Title, id: impl std::fmt::Display) -> [String; 2] {
    [title.as_str().to_lowercase(), id.to_string()]
}

fn title(text: String) -> Result<Title, kernel::FieldError> {
    Title::parse(text).map_err(|e| e.at("title"))
}
