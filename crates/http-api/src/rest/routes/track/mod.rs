//! `/v1/track`: time entries, tags, projects and sections. Every endpoint needs
//! `track:read` (GET) or `track:write` (the rest).

pub(crate) mod projects;
pub(crate) mod reports;
pub(crate) mod sections;
pub(crate) mod tags;
pub(crate) mod time;
pub(crate) mod timer;

use actix_web::http::StatusCode;
use kernel::FieldError;
use tracking::{DeleteError, EntryRule, Title, TrackConflict, TrackError};

use crate::conventions::error::ApiError;
use crate::rest::routes::{no_such, not_found};

impl From<TrackError> for ApiError {
    fn from(error: TrackError) -> Self {
        match error {
            TrackError::Rule(rule) => entry_rule(&rule).into(),
            // The field the rule is about, then the rule.
            TrackError::Forbidden(rule) => ApiError::new(StatusCode::FORBIDDEN, format!("userId: {rule}")),
            TrackError::NotFound => not_found("time entry"),
            TrackError::NoTimer => ApiError::new(StatusCode::NOT_FOUND, "no timer is running"),
            TrackError::Conflict(TrackConflict::Billed) => {
                ApiError::conflict(format!("invoiceId: {}", TrackConflict::Billed))
            }
            TrackError::Conflict(conflict) => ApiError::conflict(conflict.to_string()),
            TrackError::Store(error) => error.into(),
        }
    }
}

/// A rule of time entries in the REST API's words: the JSON field, then what it must be.
fn entry_rule(rule: &EntryRule) -> FieldError {
    match rule {
        EntryRule::ProjectClearedBesideSection => {
            FieldError::new("projectId", "must not be null beside a sectionId")
        }
        EntryRule::UnknownUser => no_such("userId", "user"),
        EntryRule::UnknownSection => no_such("sectionId", "section"),
        EntryRule::NotTheSectionsProject { section, project } => FieldError::new(
            "projectId",
            format!("must be the project of section {section} ({project}), or left out"),
        ),
        EntryRule::UnknownProject => no_such("projectId", "project"),
        EntryRule::ArchivedProject => {
            FieldError::new("projectId", "the project is archived; no time can be logged on it")
        }
        EntryRule::UnknownTag { index } => no_such(&format!("tags[{index}].id"), "tag"),
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
