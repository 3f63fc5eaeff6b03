//! `/v1/track/sections`: parts of a project.

use accounts::Principal;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, delete, get, post, put, web};
use kernel::Id;
use serde::{Deserialize, Serialize};

use tracking::{CreateSectionError, ProjectId, Section, SectionId};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::{delete_error, title, title_key};
use crate::conventions::body::{Json, Patch};
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead, TrackWrite};
use crate::rest::collection::Collection;
use crate::rest::paging;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, Timestamp, body_id, created, no_such, not_found, path_id,
};
use crate::rest::state::ApiState;

/// A section of a project.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SectionBody {
    id: Uuid,
    title: String,
    /// The project that contains the section.
    project_id: Uuid,
    team_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<Section> for SectionBody {
    fn from(section: Section) -> Self {
        Self {
            id: section.id.as_uuid(),
            title: section.title.into_string(),
            project_id: section.project_id.as_uuid(),
            team_id: section.team_id.as_uuid(),
            created_at: Timestamp(section.created_at),
            updated_at: Timestamp(section.updated_at),
        }
    }
}

/// A new section.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
/// The example's `projectId` is not one of yours: a section needs a project of the team
/// (`POST /v1/track/projects` makes one), else the answer is a 400 naming `projectId`.
#[schema(example = json!({"title": "Design", "projectId": "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e"}))]
pub(crate) struct SectionInput {
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    title: String,
    /// A project of the team.
    #[schema(format = Uuid)]
    project_id: String,
}

/// A section update; a left-out title stays as it is.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"title": "Design and review"}))]
pub(crate) struct SectionUpdate {
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    title: Patch<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct SectionQuery {
    /// The project whose sections to list. Required.
    #[param(required = true, min_length = 1, format = Uuid)]
    project_id: Option<String>,
}

/// List a project's sections
///
/// Lists the sections of the project `projectId` (required), by title (case-insensitive),
/// then id. A project that is not the key's team's is a 404. With `limit`, a page: a
/// `Link` header with `rel="next"` names the next one while there is more. Needs
/// `track:read`.
#[utoipa::path(
    tag = "Sections",
    params(SectionQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The project's sections", body = [SectionBody],
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        (status = 400, description = "`projectId` missing or not an id, or a page parameter invalid", body = crate::conventions::error::ErrorBody),
        (status = 404, description = "No such project in the key's team", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_sections(
    auth: Auth<TrackRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.answer::<Sections>(&state, &auth.principal).await
}

/// The sections of one project of the team (`projectId`), by title (case-insensitive),
/// then id.
pub(crate) struct Sections;

impl Collection for Sections {
    type Filters = SectionQuery;
    type Row = Section;
    type Body = SectionBody;

    async fn find(state: &ApiState, who: &Principal, query: SectionQuery) -> Result<Vec<Section>, ApiError> {
        let text = query.project_id.as_deref().filter(|p| !p.is_empty());
        let text = text.ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "projectId: is required"))?;
        let project = <ProjectId as kernel::Id>::parse(text)
            .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "projectId: must be a UUID"))?;
        let team = who.team_id;
        state.stores.track.get_project(team, project).await?.ok_or_else(|| not_found("project"))?;
        Ok(state.stores.track.list_sections(team, project).await?)
    }

    fn order(section: &Section) -> [String; 2] {
        title_key(&section.title, section.id)
    }
}

/// Get a section
///
/// Returns one section of the key's team; another team's is a 404 like an unknown one.
/// Needs `track:read`.
#[utoipa::path(
    tag = "Sections",
    params(("id" = Uuid, Path, description = "Section id")),
    responses((status = 200, description = "The section", body = SectionBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_section(
    auth: Auth<TrackRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<SectionBody>, ApiError> {
    let id: SectionId = path_id(&path, "section")?;
    let section = state.stores.track.get_section(auth.principal.team_id, id).await?;
    Ok(web::Json(section.ok_or_else(|| not_found("section"))?.into()))
}

/// Create a section
///
/// Creates a section in a project of the team; an unknown `projectId` is a 400 naming it.
/// Needs `track:write`.
#[utoipa::path(
    tag = "Sections",
    request_body = SectionInput,
    responses(
        (status = 201, description = "Created", body = SectionBody, headers(("Location" = String, description = "URL of the new section"))),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_section(
    auth: Auth<TrackWrite>,
    Json(input): Json<SectionInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let title = title(input.title)?;
    let project: ProjectId = body_id(&input.project_id, "projectId", "project")?;
    let section = Section::new(auth.principal.team_id, project, title, state.clock.now());
    state.stores.track.create_section(&section).await.map_err(|error| match error {
        CreateSectionError::ProjectNotFound => no_such("projectId", "project").into(),
        CreateSectionError::Store(error) => ApiError::from(error),
    })?;
    Ok(created(format!("/v1/track/sections/{}", section.id), SectionBody::from(section)))
}

/// Rename a section
///
/// Sets the section's `title`; with `title` left out, the section is returned unchanged. A
/// section stays in its project. Needs `track:write`.
#[utoipa::path(
    tag = "Sections",
    params(("id" = Uuid, Path, description = "Section id")),
    request_body = SectionUpdate,
    responses((status = 200, description = "The section", body = SectionBody), BodyErrors, NotFound, KeyedErrors)
)]
#[put("/{id}")]
pub(crate) async fn update_section(
    auth: Auth<TrackWrite>,
    Json(input): Json<SectionUpdate>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<SectionBody>, ApiError> {
    let title = input.title.required("title")?.map(title).transpose()?;
    let id: SectionId = path_id(&path, "section")?;
    let (team, track) = (auth.principal.team_id, &state.stores.track);
    let section = match title {
        Some(title) => track.rename_section(team, id, &title, state.clock.now()).await?,
        None => track.get_section(team, id).await?,
    };
    Ok(web::Json(section.ok_or_else(|| not_found("section"))?.into()))
}

/// Delete a section
///
/// Deletes the section. Refused with 409 while time entries are filed under it. Needs
/// `track:write`.
#[utoipa::path(
    tag = "Sections",
    params(("id" = Uuid, Path, description = "Section id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The section has time entries", body = crate::conventions::error::ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_section(
    auth: Auth<TrackWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id: SectionId = path_id(&path, "section")?;
    state.stores.track.delete_section(auth.principal.team_id, id).await.map_err(delete_error("section"))?;
    Ok(Deleted::new("section"))
}
