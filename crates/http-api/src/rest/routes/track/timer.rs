//! `/v1/track/timer`: the key user's running timer. Started, read, stopped into a time
//! entry, or discarded; at most one per user.

use accounts::Principal;
use actix_web::{HttpResponse, delete, get, post, web};
use kernel::Id;
use serde::{Deserialize, Serialize};
use tracking::service::{self, TimerDraft};
use tracking::{Actor, Description, RunningTimer};
use utoipa::ToSchema;
use uuid::Uuid;

use super::time::{EntryTag, TagGiven, TimeEntryBody, description, entry_tags, placement, tags, task_name};
use crate::conventions::body::Json;
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead, TrackWrite};
use crate::rest::listings::InvoiceIds;
use crate::rest::routes::{BodyErrors, Deleted, KeyedErrors, Timestamp, created};
use crate::rest::state::ApiState;

/// A running timer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TimerBody {
    id: Uuid,
    task_name: String,
    #[schema(required = true)]
    description: Option<String>,
    /// Whose time it measures: the user of the key that started it.
    user_id: Uuid,
    #[schema(required = true)]
    project_id: Option<Uuid>,
    /// When set, `projectId` is the section's project.
    #[schema(required = true)]
    section_id: Option<Uuid>,
    /// Ordered by title (case-insensitive), then id.
    tags: Vec<EntryTag>,
    team_id: Uuid,
    /// When the timer was started: the `date` of the entry a stop makes.
    started_at: Timestamp,
    /// Whole seconds since the start as of this answer, at least 1: the `durationSeconds`
    /// a stop now would log.
    #[schema(minimum = 1)]
    elapsed_seconds: u64,
}

impl TimerBody {
    pub(crate) fn of(timer: RunningTimer, now: chrono::DateTime<chrono::Utc>) -> Self {
        Self {
            id: timer.id.as_uuid(),
            elapsed_seconds: timer.elapsed(now).get(),
            task_name: timer.task_name.into_string(),
            description: timer.description.map(Description::into_string),
            user_id: timer.user_id.as_uuid(),
            project_id: timer.project_id.map(|id| id.as_uuid()),
            section_id: timer.section_id.map(|id| id.as_uuid()),
            tags: entry_tags(timer.tags),
            team_id: timer.team_id.as_uuid(),
            started_at: Timestamp(timer.started_at),
        }
    }
}

/// A timer to start: what the time entry will say.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"taskName": "Code review", "description": "Pull request #42"}))]
pub(crate) struct TimerInput {
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    task_name: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 1000,
        nullable
    )]
    description: Option<String>,
    /// A project of the team that is not archived.
    #[serde(default)]
    #[schema(format = Uuid, nullable)]
    project_id: Option<String>,
    /// A section of the team; it implies its project (a different `projectId` is a 400).
    #[serde(default)]
    #[schema(format = Uuid, nullable)]
    section_id: Option<String>,
    /// Tags of the team; repeats count once.
    #[serde(default)]
    #[schema(default = json!([]))]
    #[schema(inline)]
    tags: Vec<TagGiven>,
}

impl TimerInput {
    fn parse(self) -> Result<TimerDraft, kernel::FieldError> {
        let (project_id, section_id) = placement(self.project_id.as_deref(), self.section_id.as_deref())?;
        Ok(TimerDraft {
            task_name: task_name(self.task_name)?,
            description: self.description.map(description).transpose()?,
            project_id,
            section_id,
            tags: tags(&self.tags)?,
        })
    }
}

/// Start a timer
///
/// Starts a timer for the key's user, filed as a time entry would be: a section implies
/// its project, no `ARCHIVED` project (400), tags of the team. A user has one running
/// timer: starting a second is a 409. Needs `track:write`.
#[utoipa::path(
    tag = "Timer",
    request_body = TimerInput,
    responses(
        (status = 201, description = "Started", body = TimerBody, headers(("Location" = String, description = "URL of the running timer"))),
        (status = 409, description = "A timer is already running, or a referenced project, section or tag was deleted meanwhile", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("/start")]
pub(crate) async fn start_timer(
    auth: Auth<TrackWrite>,
    Json(input): Json<TimerInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    Ok(created("/v1/track/timer".to_owned(), start(&state, &auth.principal, input).await?))
}

/// Starts the timer `input` describes, for the caller.
pub(crate) async fn start(
    state: &ApiState,
    who: &Principal,
    input: TimerInput,
) -> Result<TimerBody, ApiError> {
    let draft = input.parse()?;
    let now = state.clock.now();
    let timer =
        service::start_timer(&*state.stores.track, &Actor::from(who), who.team_id, draft, now).await?;
    Ok(TimerBody::of(timer, now))
}

/// Get the running timer
///
/// The key user's running timer, with the seconds it has run so far; 404 when none is
/// running. Needs `track:read`.
#[utoipa::path(
    tag = "Timer",
    responses(
        (status = 200, description = "The running timer", body = TimerBody),
        (status = 404, description = "No timer is running", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn get_timer(
    auth: Auth<TrackRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TimerBody>, ApiError> {
    Ok(web::Json(current(&state, &auth.principal).await?))
}

/// The caller's running timer.
pub(crate) async fn current(state: &ApiState, who: &Principal) -> Result<TimerBody, ApiError> {
    let timer = service::running_timer(&*state.stores.track, &Actor::from(who), who.team_id).await?;
    Ok(TimerBody::of(timer, state.clock.now()))
}

/// Stop the timer
///
/// Stops the key user's running timer and logs its time: the new time entry is dated at
/// the start and lasts the whole seconds the timer ran (at least 1). 404 when no timer is
/// running, so of two stops racing only one logs time. A timer whose project was archived
/// while it ran cannot be stopped (400); discard it. Takes no body. Needs `track:write`.
#[utoipa::path(
    tag = "Timer",
    responses(
        (status = 201, description = "The time entry the timer became", body = TimeEntryBody, headers(("Location" = String, description = "URL of the new entry"))),
        (status = 400, description = "The timer's project was archived while it ran", body = crate::conventions::error::ErrorBody),
        (status = 404, description = "No timer is running", body = crate::conventions::error::ErrorBody),
        (status = 409, description = "A referenced project, section or tag was deleted meanwhile", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[post("/stop")]
pub(crate) async fn stop_timer(
    auth: Auth<TrackWrite>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let entry = stop(&state, &auth.principal).await?;
    let location = format!("/v1/track/time/{}", entry.id);
    Ok(created(location, TimeEntryBody::shown(entry, InvoiceIds::for_caller(&auth.principal))))
}

/// Stops the caller's running timer into a time entry.
pub(crate) async fn stop(state: &ApiState, who: &Principal) -> Result<tracking::TimeEntry, ApiError> {
    let now = state.clock.now();
    Ok(service::stop_timer(&*state.stores.track, &Actor::from(who), who.team_id, now).await?)
}

/// Discard the timer
///
/// Stops the key user's running timer without logging its time; 404 when none is
/// running. Needs `track:write`.
#[utoipa::path(
    tag = "Timer",
    responses(
        (status = 200, description = "Discarded", body = Deleted),
        (status = 404, description = "No timer is running", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[delete("")]
pub(crate) async fn discard_timer(
    auth: Auth<TrackWrite>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let who = &auth.principal;
    service::discard_timer(&*state.stores.track, &Actor::from(who), who.team_id, state.clock.now()).await?;
    Ok(Deleted::new("timer"))
}
