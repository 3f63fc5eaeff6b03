//! `/v1/track/projects`: what time is logged against.

use accounts::Principal;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, delete, get, post, put, web};
use billing::ClientId;
use billing::money::UNIT_PRICE;
use kernel::FieldError;
use kernel::Id;
use serde::{Deserialize, Serialize};
use serde_json::Number;
use tracking::{
    HourlyRate, Project, ProjectChanges, ProjectCode, ProjectId, ProjectStatus, SaveProjectError, Title,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::{delete_error, title, title_key};
use crate::conventions::body::{Json, Patch};
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead, TrackWrite};
use crate::rest::collection::Collection;
use crate::rest::openapi::ProjectStatus as ProjectStatusSchema;
use crate::rest::paging;
use crate::rest::routes::numbers::Exact;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, body_id, created, no_such, not_found,
    path_id, query_id, query_search,
};
use crate::rest::state::ApiState;

/// A project.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProjectBody {
    id: Uuid,
    title: String,
    /// `null` when the project has no code; unique in the team otherwise.
    #[schema(required = true)]
    code: Option<String>,
    /// `ACTIVE` when created. No time can be logged on an `ARCHIVED` project.
    #[schema(value_type = ProjectStatusSchema)]
    status: &'static str,
    /// What an hour of the project's time is billed at, in the team's currency; `null`
    /// for no rate.
    #[schema(required = true)]
    rate: Option<Exact>,
    /// The client the project's work is for: only that client's invoices bill its time.
    /// `null` for a project of no client in particular.
    #[schema(required = true)]
    client_id: Option<Uuid>,
    team_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<Project> for ProjectBody {
    fn from(project: Project) -> Self {
        Self {
            id: project.id.as_uuid(),
            title: project.title.into_string(),
            code: project.code.map(ProjectCode::into_string),
            status: project.status.as_str(),
            rate: project.rate.map(|rate| Exact(rate.amount().normalize())),
            client_id: project.client_id.map(|id| id.as_uuid()),
            team_id: project.team_id.as_uuid(),
            created_at: Timestamp(project.created_at),
            updated_at: Timestamp(project.updated_at),
        }
    }
}

/// A new project.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"title": "Website", "code": "WEB", "rate": 95}))]
pub(crate) struct ProjectInput {
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    title: String,
    /// Optional; empty or `null` means none. Unique in the team (409 otherwise).
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        max_length = 50,
        nullable
    )]
    code: Option<String>,
    /// Hourly rate in the team's currency: 0 to 10¹², at most 6 decimal places; `null` or
    /// left out for none.
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 1_000_000_000_000_i64, nullable)]
    rate: Option<Number>,
    /// A client of the team whose work the project is: only that client's invoices bill
    /// its time. `null` or left out for a project of no client in particular.
    #[serde(default)]
    #[schema(value_type = Option<Uuid>, nullable)]
    client_id: Option<String>,
}

/// The fields a project update may change; each is optional.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ProjectData {
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    title: Patch<String>,
    /// Empty or `null` removes the code.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 50)]
    code: Patch<String>,
    #[serde(default)]
    #[schema(value_type = ProjectStatusSchema)]
    status: Patch<String>,
    /// Hourly rate, 0 to 10¹², at most 6 decimal places; `null` removes it.
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 1_000_000_000_000_i64)]
    rate: Patch<Number>,
    /// A client of the team; `null` makes it a project of no client in particular. Its
    /// time billed before stays on the invoices that billed it.
    #[serde(default)]
    #[schema(value_type = Option<Uuid>)]
    client_id: Patch<String>,
}

/// A project update: `id` must be the id in the path.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
/// The example's `id` is not one of yours: it must be the project's id, the one in the path.
#[schema(example = json!({"id": "0193d2c4-5f6a-7b8c-9d0e-1f2a3b4c5d6e", "data": {"rate": 110, "status": "ACTIVE"}}))]
pub(crate) struct ProjectUpdate {
    #[schema(format = Uuid)]
    id: String,
    data: ProjectData,
}

/// An hourly rate given as a JSON number.
pub(crate) fn rate(value: &Number, field: &str) -> Result<HourlyRate, FieldError> {
    UNIT_PRICE.parse(&value.to_string()).and_then(HourlyRate::parse).map_err(|e| e.at(field))
}

/// An optional code: empty means none.
fn code(text: Option<String>, field: &str) -> Result<Option<ProjectCode>, FieldError> {
    match text {
        Some(text) if !text.is_empty() => ProjectCode::parse(text).map(Some).map_err(|e| e.at(field)),
        _ => Ok(None),
    }
}

impl ProjectData {
    fn parse(self) -> Result<ProjectChanges, FieldError> {
        Ok(ProjectChanges {
            title: self
                .title
                .required("data.title")?
                .map(|t| Title::parse(t).map_err(|e| e.at("data.title")))
                .transpose()?,
            code: self.code.nullable().map(|c| code(c, "data.code")).transpose()?,
            status: self
                .status
                .required("data.status")?
                .map(|s| ProjectStatus::parse(&s).map_err(|e| e.at("data.status")))
                .transpose()?,
            rate: self.rate.nullable().map(|r| r.map(|r| rate(&r, "data.rate")).transpose()).transpose()?,
            client_id: self
                .client_id
                .nullable()
                .map(|id| id.map(|id| client(&id, "data.clientId")).transpose())
                .transpose()?,
        })
    }
}

/// A client id given for a project.
fn client(id: &str, field: &str) -> Result<ClientId, FieldError> {
    body_id(id, field, "client")
}

/// How a refused save is answered; `client_field` names where the client was given.
fn save_error(error: SaveProjectError, client_field: &str) -> ApiError {
    match error {
        SaveProjectError::UnknownClient => no_such(client_field, "client").into(),
        SaveProjectError::NotFound => not_found("project"),
        SaveProjectError::CodeTaken => ApiError::conflict("code: another project of the team has this code"),
        SaveProjectError::Store(error) => error.into(),
    }
}

/// The project listing's filters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub(crate) struct ProjectQuery {
    /// Only projects of this status; repeat the parameter for several
    /// (`status=ACTIVE&status=PENDING`).
    #[param(value_type = Option<Vec<ProjectStatusSchema>>, style = Form, explode, example = json!("ACTIVE"))]
    status: Option<paging::OneOrMany>,
    /// Only projects whose title or code holds this, in any case of its letters (1 to 100
    /// characters).
    #[param(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        example = "web"
    )]
    q: Option<String>,
    /// Only the projects of this client.
    #[param(value_type = Option<Uuid>)]
    client_id: Option<String>,
}

/// List projects
///
/// Lists the team's projects, by title (case-insensitive), then id; with `status`, `q` or
/// `clientId`, only those they find. With `limit`, a page: a `Link` header with `rel="next"` names the
/// next one while there is more. Needs `track:read`.
#[utoipa::path(
    tag = "Projects",
    params(ProjectQuery, paging::PageQuery),
    responses(
        (status = 200, description = "The team's projects", body = [ProjectBody],
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_projects(
    auth: Auth<TrackRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.answer::<Projects>(&state, &auth.principal).await
}

/// The team's projects, by title (case-insensitive), then id.
pub(crate) struct Projects;

impl Collection for Projects {
    type Filters = ProjectQuery;
    type Row = Project;
    type Body = ProjectBody;

    async fn find(state: &ApiState, who: &Principal, query: ProjectQuery) -> Result<Vec<Project>, ApiError> {
        let statuses = query.status.map(paging::OneOrMany::into_vec).unwrap_or_default();
        let statuses = statuses
            .iter()
            .map(|s| ProjectStatus::parse(s).map_err(|e| e.at("status")))
            .collect::<Result<Vec<_>, _>>()?;
        let search = query_search(query.q.as_deref())?;
        let client: Option<ClientId> = query_id(query.client_id.as_deref(), "clientId")?;
        let mut projects = state.stores.track.list_projects(who.team_id).await?;
        projects.retain(|project| {
            (statuses.is_empty() || statuses.contains(&project.status))
                && search.as_ref().is_none_or(|search| project.is_found_by(search))
                && client.is_none_or(|client| project.client_id == Some(client))
        });
        Ok(projects)
    }

    fn order(project: &Project) -> [String; 2] {
        title_key(&project.title, project.id)
    }
}

/// Get a project
///
/// Returns one project of the key's team, archived or not; another team's is a 404 like an
/// unknown one. Needs `track:read`.
#[utoipa::path(
    tag = "Projects",
    params(("id" = Uuid, Path, description = "Project id")),
    responses((status = 200, description = "The project", body = ProjectBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_project(
    auth: Auth<TrackRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ProjectBody>, ApiError> {
    let id: ProjectId = path_id(&path, "project")?;
    let project = state.stores.track.get_project(auth.principal.team_id, id).await?;
    Ok(web::Json(project.ok_or_else(|| not_found("project"))?.into()))
}

/// Create a project
///
/// Creates a project, `ACTIVE`. A non-empty `code` must be unique in the team (409
/// otherwise). With `clientId`, only that client's invoices bill its time. Needs
/// `track:write`.
#[utoipa::path(
    tag = "Projects",
    request_body = ProjectInput,
    responses(
        (status = 201, description = "Created", body = ProjectBody, headers(("Location" = String, description = "URL of the new project"))),
        (status = 409, description = "Another project of the team has this code", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_project(
    auth: Auth<TrackWrite>,
    Json(input): Json<ProjectInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let project = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/track/projects/{}", project.id), project))
}

/// Makes a project of `input` in the caller's team.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: ProjectInput,
) -> Result<ProjectBody, ApiError> {
    let project =
        Project::new(who.team_id, title(input.title)?, code(input.code, "code")?, state.clock.now())
            .with_rate(input.rate.map(|r| rate(&r, "rate")).transpose()?)
            .for_client(input.client_id.map(|id| client(&id, "clientId")).transpose()?);
    state.stores.track.create_project(&project).await.map_err(|e| save_error(e, "clientId"))?;
    Ok(project.into())
}

/// Update a project
///
/// Updates a project's title, code, status, hourly rate or client; fields left out of `data` stay as they are.
/// The body's `id` must equal the path id (400 otherwise), and a non-empty `code` must be
/// unique in the team (409 otherwise). Needs `track:write`.
#[utoipa::path(
    tag = "Projects",
    params(("id" = Uuid, Path, description = "Project id")),
    request_body = ProjectUpdate,
    responses(
        (status = 200, description = "The updated project", body = ProjectBody),
        (status = 409, description = "Another project of the team has this code", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[put("/{id}")]
pub(crate) async fn update_project(
    auth: Auth<TrackWrite>,
    Json(input): Json<ProjectUpdate>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ProjectBody>, ApiError> {
    if input.id != *path {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, "id: must equal the project id in the path"));
    }
    let changes = input.data.parse()?;
    let id: ProjectId = path_id(&path, "project")?;
    let project = state
        .stores
        .track
        .update_project(auth.principal.team_id, id, &changes, state.clock.now())
        .await
        .map_err(|e| save_error(e, "data.clientId"))?;
    Ok(web::Json(project.into()))
}

/// Delete a project
///
/// Deletes the project and its sections. Refused with 409 while time entries refer to it.
/// Needs `track:write`.
#[utoipa::path(
    tag = "Projects",
    params(("id" = Uuid, Path, description = "Project id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The project has time entries", body = crate::conventions::error::ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_project(
    auth: Auth<TrackWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id: ProjectId = path_id(&path, "project")?;
    state.stores.track.delete_project(auth.principal.team_id, id).await.map_err(delete_error("project"))?;
    Ok(Deleted::new("project"))
}
