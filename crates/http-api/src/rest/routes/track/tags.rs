//! `/v1/track/tags`: labels for time entries.

use accounts::Principal;
use actix_web::{HttpResponse, delete, get, patch, post, web};
use kernel::Id;
use serde::{Deserialize, Serialize};

use tracking::{Tag, TagId};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{delete_error, title, title_key};
use crate::conventions::body::Json;
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead, TrackWrite};
use crate::rest::collection::{Collection, NoFilters};
use crate::rest::paging;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, created, not_found, path_id,
};
use crate::rest::state::ApiState;

/// A tag. Entries carrying it show its current title.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TagBody {
    id: Uuid,
    title: String,
    team_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl From<Tag> for TagBody {
    fn from(tag: Tag) -> Self {
        Self {
            id: tag.id.as_uuid(),
            title: tag.title.into_string(),
            team_id: tag.team_id.as_uuid(),
            created_at: Timestamp(tag.created_at),
            updated_at: Timestamp(tag.updated_at),
        }
    }
}

/// A tag's title, for create and rename.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"title": "urgent"}))]
pub(crate) struct TagInput {
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 255
    )]
    title: String,
}

/// List tags
///
/// Lists the team's tags, by title (case-insensitive), then id. With `limit`, a page: a
/// `Link` header with `rel="next"` names the next one while there is more. Needs
/// `track:read`.
#[utoipa::path(
    tag = "Tags",
    params(paging::PageQuery),
    responses(
        (status = 200, description = "The team's tags", body = [TagBody],
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_tags(
    auth: Auth<TrackRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.answer::<Tags>(&state, &auth.principal).await
}

/// The team's tags, by title (case-insensitive), then id.
pub(crate) struct Tags;

impl Collection for Tags {
    type Filters = NoFilters;
    type Row = Tag;
    type Body = TagBody;

    async fn find(state: &ApiState, who: &Principal, _: NoFilters) -> Result<Vec<Tag>, ApiError> {
        Ok(state.stores.track.list_tags(who.team_id).await?)
    }

    fn order(tag: &Tag) -> [String; 2] {
        title_key(&tag.title, tag.id)
    }
}

/// Get a tag
///
/// Returns one tag of the key's team; another team's is a 404 like an unknown one. Needs
/// `track:read`.
#[utoipa::path(
    tag = "Tags",
    params(("id" = Uuid, Path, description = "Tag id")),
    responses((status = 200, description = "The tag", body = TagBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_tag(
    auth: Auth<TrackRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TagBody>, ApiError> {
    let id: TagId = path_id(&path, "tag")?;
    let found = state.stores.track.find_tags(auth.principal.team_id, &[id]).await?;
    Ok(web::Json(found.into_iter().next().ok_or_else(|| not_found("tag"))?.into()))
}

/// Create a tag
///
/// Creates a tag in the key's team. Needs `track:write`.
#[utoipa::path(
    tag = "Tags",
    request_body = TagInput,
    responses(
        (status = 201, description = "Created", body = TagBody, headers(("Location" = String, description = "URL of the new tag"))),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_tag(
    auth: Auth<TrackWrite>,
    Json(input): Json<TagInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let tag = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/track/tags/{}", tag.id), tag))
}

/// Makes a tag of `input` in the caller's team.
pub(crate) async fn create(state: &ApiState, who: &Principal, input: TagInput) -> Result<TagBody, ApiError> {
    let tag = Tag::new(who.team_id, title(input.title)?, state.clock.now());
    state.stores.track.create_tag(&tag).await?;
    Ok(tag.into())
}

/// Rename a tag
///
/// Sets the tag's `title`. Every entry carrying it shows the new title. Needs
/// `track:write`.
#[utoipa::path(
    tag = "Tags",
    params(("id" = Uuid, Path, description = "Tag id")),
    request_body = TagInput,
    responses((status = 200, description = "The renamed tag", body = TagBody), BodyErrors, NotFound, KeyedErrors)
)]
#[patch("/{id}")]
pub(crate) async fn rename_tag(
    auth: Auth<TrackWrite>,
    Json(input): Json<TagInput>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TagBody>, ApiError> {
    let title = title(input.title)?;
    let id: TagId = path_id(&path, "tag")?;
    let tag = state.stores.track.rename_tag(auth.principal.team_id, id, &title, state.clock.now()).await?;
    Ok(web::Json(tag.ok_or_else(|| not_found("tag"))?.into()))
}

/// Delete a tag
///
/// Deletes the tag. It is taken off every entry that carried it. Needs `track:write`.
#[utoipa::path(
    tag = "Tags",
    params(("id" = Uuid, Path, description = "Tag id")),
    responses((status = 200, description = "Deleted", body = Deleted), NotFound, KeyedErrors)
)]
#[delete("/{id}")]
pub(crate) async fn delete_tag(
    auth: Auth<TrackWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id: TagId = path_id(&path, "tag")?;
    state.stores.track.delete_tag(auth.principal.team_id, id).await.map_err(delete_error("tag"))?;
    Ok(Deleted::new("tag"))
}
