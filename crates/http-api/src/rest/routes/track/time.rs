//! `/v1/track/time`: time entries.

use accounts::{Principal, UserId};
use actix_web::http::header::{AcceptEncoding, ContentEncoding, ContentType, Encoding, Header, VARY};
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use kernel::{FieldError, Id, InvalidValue, parse_instant};
use serde::{Deserialize, Serialize};
use serde_json::Number;
use tracking::report::MAX_REPORT_DAYS;
use tracking::service::{self, EntryChanges, EntryDraft};
use tracking::{
    Actor, Description, DurationSeconds, EntryFilter, EntryPosition, Frequency, Period, ProjectId, SectionId,
    TagId, TagRef, TaskName, TimeEntry, TimeEntryId,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead, TrackWrite};
use crate::rest::csv;
use crate::rest::listings::{InvoiceIds, Listing};
use crate::rest::openapi::{Frequency as FrequencySchema, InstantInput};
use crate::rest::paging;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, Timestamp, body_id, created, days, path_id, query_id,
};
use crate::rest::state::ApiState;

/// A tag on a time entry, with the tag's current title.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct EntryTag {
    id: Uuid,
    title: String,
}

/// Tags as an entry or a timer shows them.
pub(super) fn entry_tags(tags: Vec<TagRef>) -> Vec<EntryTag> {
    tags.into_iter().map(|t| EntryTag { id: t.id.as_uuid(), title: t.title.into_string() }).collect()
}

/// A time entry.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TimeEntryBody {
    id: Uuid,
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    duration_seconds: u64,
    task_name: String,
    #[schema(required = true)]
    description: Option<String>,
    date: Timestamp,
    /// Whose time it is.
    user_id: Uuid,
    #[schema(required = true)]
    project_id: Option<Uuid>,
    /// When set, `projectId` is the section's project.
    #[schema(required = true)]
    section_id: Option<Uuid>,
    /// Ordered by title (case-insensitive), then id.
    tags: Vec<EntryTag>,
    ai_generated: bool,
    /// Whether the time is to be billed.
    billable: bool,
    /// Whether an invoice billed this time (it is then locked until that invoice is
    /// deleted). Read-only.
    billed: bool,
    /// The invoice that billed this time; `null` until it is billed, and always `null` for
    /// a key without `invoices:read` (the id alone opens the invoice's PDF). Read-only.
    #[schema(required = true)]
    invoice_id: Option<Uuid>,
    team_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

impl TimeEntryBody {
    /// `entry` as `invoice_ids` lets its reader see it.
    pub(crate) fn shown(entry: TimeEntry, invoice_ids: InvoiceIds) -> Self {
        Self {
            id: entry.id.as_uuid(),
            duration_seconds: entry.duration.get(),
            task_name: entry.task_name.into_string(),
            description: entry.description.map(Description::into_string),
            date: Timestamp(entry.date),
            user_id: entry.user_id.as_uuid(),
            project_id: entry.project_id.map(|id| id.as_uuid()),
            section_id: entry.section_id.map(|id| id.as_uuid()),
            tags: entry_tags(entry.tags),
            ai_generated: entry.ai_generated,
            billable: entry.billable,
            billed: entry.invoice_id.is_some(),
            invoice_id: invoice_ids.show(entry.invoice_id).map(|id| id.as_uuid()),
            team_id: entry.team_id.as_uuid(),
            created_at: Timestamp(entry.created_at),
            updated_at: Timestamp(entry.updated_at),
        }
    }
}

/// A tag on a time entry, on input: its id, or `{id, title}` as entries show their tags.
#[derive(Debug)]
pub(crate) enum TagGiven {
    Id(String),
    Shown(EntryTagInput),
}

/// A tag as entries show it, on input: the `id` decides; `title` is required (as the seed
/// says) but not used, since entries show the tag's current title.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntryTagInput {
    #[schema(format = Uuid)]
    id: String,
    #[expect(dead_code, reason = "required as the seed says, but the tag's own title is shown")]
    title: String,
}

impl TagGiven {
    /// The tag id given, and the field it is named by (`tags[0].id`).
    fn id_at(&self, index: usize) -> (&str, String) {
        match self {
            // The contract names a tag's id `tags[i].id`, however it was given.
            Self::Id(id) | Self::Shown(EntryTagInput { id, .. }) => (id, format!("tags[{index}].id")),
        }
    }
}

impl<'de> Deserialize<'de> for TagGiven {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = TagGiven;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tag id, or an object {\"id\", \"title\"}")
            }

            fn visit_str<E: serde::de::Error>(self, id: &str) -> Result<TagGiven, E> {
                Ok(TagGiven::Id(id.to_owned()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<TagGiven, A::Error> {
                EntryTagInput::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(TagGiven::Shown)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

impl utoipa::PartialSchema for TagGiven {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, OneOfBuilder, SchemaFormat, Type};
        let id = ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
            .description(Some("The tag's id."));
        OneOfBuilder::new()
            .item(id)
            .item(utoipa::openapi::Ref::from_schema_name("EntryTagInput"))
            .description(Some("A tag of the team: its id, or `{id, title}` as entries show tags."))
            .into()
    }
}

impl ToSchema for TagGiven {
    fn schemas(schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>) {
        schemas.push(("EntryTagInput".to_owned(), <EntryTagInput as utoipa::PartialSchema>::schema()));
    }
}

/// A new time entry.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"durationSeconds": 7200, "taskName": "Landing page",
    "description": "Hero section and pricing table", "date": "2026-11-20T09:00:00+01:00", "billable": true}))]
pub(crate) struct TimeEntryInput {
    #[schema(value_type = i64, minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    duration_seconds: Number,
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
    #[schema(value_type = InstantInput)]
    date: String,
    /// Log the time for this user of the team: owners and admins only (403 otherwise).
    /// Default: the key's user.
    #[serde(default)]
    #[schema(format = Uuid, nullable)]
    user_id: Option<String>,
    /// A project of the team that is not archived.
    #[serde(default)]
    #[schema(format = Uuid, nullable)]
    project_id: Option<String>,
    /// A section of the team; it implies its project (a different `projectId` is a 400).
    #[serde(default)]
    #[schema(format = Uuid, nullable)]
    section_id: Option<String>,
    /// Tags of the team, each its id or `{id, title}`; repeats count once.
    #[serde(default)]
    #[schema(default = json!([]))]
    #[schema(inline)]
    tags: Vec<TagGiven>,
    #[serde(default)]
    #[schema(default = false)]
    ai_generated: bool,
    /// Whether the time is to be billed.
    #[serde(default = "billable_by_default")]
    #[schema(default = true)]
    billable: bool,
}

fn billable_by_default() -> bool {
    true
}

/// A partial update of a time entry: only the fields given change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"durationSeconds": 5400, "description": "Hero section, pricing table and review"}))]
pub(crate) struct TimeEntryPatch {
    #[serde(default)]
    #[schema(value_type = i64, minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    duration_seconds: Patch<Number>,
    #[serde(default)]
    #[schema(value_type = String, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    task_name: Patch<String>,
    /// `null` clears it.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 1000)]
    description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = InstantInput)]
    date: Patch<String>,
    /// Move the entry to this user of the team: owners and admins only (403 otherwise).
    #[serde(default)]
    #[schema(value_type = String, format = Uuid)]
    user_id: Patch<String>,
    /// `null` clears the project and the section. Another project leaves the section
    /// behind unless `sectionId` names one of that project.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Uuid)]
    project_id: Patch<String>,
    /// Moves the entry to this section (and its project); `null` clears the section.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Uuid)]
    section_id: Patch<String>,
    /// Replaces the entry's tags.
    #[serde(default)]
    #[schema(value_type = Vec<TagGiven>, inline)]
    tags: Patch<Vec<TagGiven>>,
    #[serde(default)]
    #[schema(value_type = bool)]
    billable: Patch<bool>,
}

/// `durationSeconds`: a JSON integer in bounds.
fn duration(number: &Number) -> Result<DurationSeconds, FieldError> {
    // JSON Schema's integers include `3600.0` and `3.6e3`.
    kernel::number::whole_number(&number.to_string())
        .ok_or_else(|| InvalidValue::new("must be a whole number"))
        .and_then(DurationSeconds::parse)
        .map_err(|e| e.at("durationSeconds"))
}

pub(super) fn task_name(text: String) -> Result<TaskName, FieldError> {
    TaskName::parse(text).map_err(|e| e.at("taskName"))
}

pub(super) fn description(text: String) -> Result<Description, FieldError> {
    Description::parse(text).map_err(|e| e.at("description"))
}

fn date(text: &str) -> Result<chrono::DateTime<chrono::Utc>, FieldError> {
    parse_instant(text).map_err(|e| e.at("date"))
}

fn user(text: &str) -> Result<UserId, FieldError> {
    body_id(text, "userId", "user")
}

pub(super) fn tags(tags: &[TagGiven]) -> Result<Vec<TagId>, FieldError> {
    tags.iter()
        .enumerate()
        .map(|(i, tag)| {
            let (id, field) = tag.id_at(i);
            body_id(id, &field, "tag")
        })
        .collect()
}

/// `projectId` and `sectionId` as a body gives them.
pub(super) fn placement(
    project: Option<&str>,
    section: Option<&str>,
) -> Result<(Option<ProjectId>, Option<SectionId>), FieldError> {
    let project = project.map(|p| body_id(p, "projectId", "project")).transpose()?;
    Ok((project, section.map(|s| body_id(s, "sectionId", "section")).transpose()?))
}

impl TimeEntryInput {
    fn parse(self) -> Result<EntryDraft, FieldError> {
        let (project_id, section_id) = placement(self.project_id.as_deref(), self.section_id.as_deref())?;
        Ok(EntryDraft {
            duration: duration(&self.duration_seconds)?,
            task_name: task_name(self.task_name)?,
            description: self.description.map(description).transpose()?,
            date: date(&self.date)?,
            user_id: self.user_id.as_deref().map(user).transpose()?,
            project_id,
            section_id,
            tags: tags(&self.tags)?,
            ai_generated: self.ai_generated,
            billable: self.billable,
        })
    }
}

impl TimeEntryPatch {
    fn parse(self) -> Result<EntryChanges, FieldError> {
        Ok(EntryChanges {
            duration: self
                .duration_seconds
                .required("durationSeconds")?
                .as_ref()
                .map(duration)
                .transpose()?,
            task_name: self.task_name.required("taskName")?.map(task_name).transpose()?,
            description: self.description.nullable().map(|d| d.map(description).transpose()).transpose()?,
            date: self.date.required("date")?.as_deref().map(date).transpose()?,
            user_id: self.user_id.required("userId")?.as_deref().map(user).transpose()?,
            project_id: self
                .project_id
                .nullable()
                .map(|p| p.as_deref().map(|p| body_id(p, "projectId", "project")).transpose())
                .transpose()?,
            section_id: self
                .section_id
                .nullable()
                .map(|s| s.as_deref().map(|s| body_id(s, "sectionId", "section")).transpose())
                .transpose()?,
            tags: self.tags.required("tags")?.as_deref().map(tags).transpose()?,
            billable: self.billable.required("billable")?,
        })
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct TimeQuery {
    /// A date `YYYY-MM-DD` or an RFC 3339 datetime; its UTC day decides the period.
    /// Required unless `from` and `to` are given.
    #[param(value_type = Option<InstantInput>)]
    date: Option<String>,
    /// `day` (default), `week` (ISO week, Monday to Sunday) or `month`, all in UTC.
    #[param(value_type = Option<FrequencySchema>)]
    frequency: Option<String>,
    /// With `to`, instead of `date`: the first UTC day of the period, `YYYY-MM-DD`.
    #[param(value_type = Option<String>, format = Date)]
    from: Option<String>,
    /// With `from`: the last UTC day of the period, included; at most 366 days in all.
    #[param(value_type = Option<String>, format = Date)]
    to: Option<String>,
    /// Only this user's entries. Owners and admins see the whole team's entries by
    /// default; members see only their own, and naming another user is a 403 for them.
    #[param(format = Uuid)]
    user_id: Option<String>,
    /// Only entries filed under this project.
    #[param(format = Uuid)]
    project_id: Option<String>,
    /// Only entries filed under this section.
    #[param(format = Uuid)]
    section_id: Option<String>,
    /// Only entries carrying this tag.
    #[param(format = Uuid)]
    tag_id: Option<String>,
    /// At most this many entries (1 to 1000); the `Link` header then names the next page.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    limit: Option<String>,
    /// Where to continue: the `cursor` of a `Link: <…>; rel="next"` this listing gave.
    /// Empty is the same as left out: the first page.
    #[serde(default, deserialize_with = "crate::rest::paging::empty_as_absent")]
    cursor: Option<String>,
}

/// List time entries
///
/// Lists the time entries of the UTC day, ISO week (Monday to Sunday) or calendar month
/// around `date` (`frequency`, default `day`), or of the days `from` to `to`, ordered by
/// `date`, then creation; optionally only those of a project, section or tag. Members see
/// only their own entries; owners and admins see the team's and may filter with `userId`
/// (naming another user is a 403 for a member). With `limit`, a page: a `Link` header with
/// `rel="next"` names the next one while there is more. Needs `track:read`.
#[utoipa::path(
    tag = "Time entries",
    params(TimeQuery),
    responses(
        (status = 200, description = "The entries of the period; with `Accept: text/csv`, all of them as CSV", content((Vec<TimeEntryBody> = "application/json"), (String = "text/csv")),
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        (status = 400, description = "A query parameter missing or invalid (the message names it)", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_time(
    auth: Auth<TrackRead>,
    request: HttpRequest,
    query: web::Query<TimeQuery>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    if csv::wanted(&request) {
        return listing_csv(&state, &auth.principal, &query).await;
    }
    let listing = listing(&state, &auth.principal, query.into_inner()).await?;
    let mut response = HttpResponse::Ok();
    response.content_type(ContentType::json()).insert_header((VARY, csv::VARY));
    if let Some(next) = listing.next() {
        response.insert_header(paging::next_link(&request, &cursor_of(next)));
    }
    // Only for a client that takes it: compressing is most of a miss's cost otherwise.
    match accepts_gzip(&request).then(|| listing.gzipped()).flatten() {
        Some(gzipped) => Ok(response.insert_header(ContentEncoding::Gzip).body(gzipped)),
        None => Ok(response.body(listing.body())),
    }
}

pub(crate) fn cursor_of(position: EntryPosition) -> String {
    let instant = |at: chrono::DateTime<chrono::Utc>| at.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true);
    paging::encode_cursor(&[instant(position.date), instant(position.created_at), position.id.to_string()])
}

fn position(cursor: &str) -> Result<EntryPosition, FieldError> {
    let parts = paging::decode_cursor(cursor)?;
    let [date, created_at, id] = parts.as_slice() else { return Err(paging::not_a_cursor()) };
    let instant = |text: &str| chrono::DateTime::parse_from_rfc3339(text).map(|at| at.to_utc()).ok();
    Ok(EntryPosition {
        date: instant(date).ok_or_else(paging::not_a_cursor)?,
        created_at: instant(created_at).ok_or_else(paging::not_a_cursor)?,
        id: TimeEntryId::parse(id).ok_or_else(paging::not_a_cursor)?,
    })
}

/// The period a listing asks for: around `date` (by `frequency`), or `from` to `to`.
fn period(query: &TimeQuery) -> Result<Period, FieldError> {
    match (&query.date, &query.from, &query.to) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            Err(FieldError::new("date", "give either date (with frequency) or from and to, not both"))
        }
        (Some(at), None, None) => {
            let frequency = query
                .frequency
                .as_deref()
                .map(Frequency::parse)
                .transpose()
                .map_err(|e| e.at("frequency"))?;
            Ok(frequency.unwrap_or_default().period_around(date(at)?))
        }
        (None, Some(from), Some(to)) => {
            if query.frequency.is_some() {
                return Err(FieldError::new("frequency", "is only taken with date"));
            }
            days(from, to, Some(MAX_REPORT_DAYS))
        }
        (None, Some(_), None) => Err(FieldError::new("to", "is required with from")),
        (None, None, Some(_)) => Err(FieldError::new("from", "is required with to")),
        (None, None, None) => Err(FieldError::new("date", "is required (or from and to)")),
    }
}

/// The caller's time entries `query` asks for, as kept or read now.
pub(crate) async fn listing(
    state: &ApiState,
    who: &Principal,
    query: TimeQuery,
) -> Result<Listing, ApiError> {
    let team = who.team_id;
    let mut filter = filter_of(who, &query)?;
    filter.limit = paging::limit(query.limit.as_deref())?;
    filter.after = query.cursor.as_deref().map(position).transpose()?;
    // The revision first: the listing read after it is at least as new (see `listings`).
    // With nothing kept, it would be a read for nothing.
    let invoice_ids = InvoiceIds::for_caller(who);
    let revision = if state.listings.keeps() { state.revisions.read(team).await? } else { 0 };
    if let Some(kept) = state.listings.get(team, &filter, invoice_ids, revision) {
        return Ok(kept);
    }
    let read = EntryFilter { limit: paging::one_more(filter.limit), ..filter };
    let mut entries = state.stores.track.list_entries(team, &read).await?;
    let more = paging::cut(&mut entries, filter.limit);
    let next = if more { entries.last().map(EntryPosition::of) } else { None };
    let bodies: Vec<TimeEntryBody> =
        entries.into_iter().map(|entry| TimeEntryBody::shown(entry, invoice_ids)).collect();
    // About 500 bytes an entry: sized once rather than grown (and copied) a dozen times.
    let mut body = Vec::with_capacity(bodies.len() * 512 + 2);
    serde_json::to_writer(&mut body, &bodies).map_err(|e| ApiError::internal(e.into()))?;
    Ok(state.listings.keep(team, filter, invoice_ids, revision, body.into(), next))
}

/// The entries `query` asks for, of those the caller may see, leaving out the page.
fn filter_of(who: &Principal, query: &TimeQuery) -> Result<EntryFilter, ApiError> {
    let period = period(query)?;
    let requested = query_id(query.user_id.as_deref(), "userId")?;
    let mut filter = service::listing_filter(&Actor::from(who), period, requested)?;
    filter.project = query_id(query.project_id.as_deref(), "projectId")?;
    filter.section = query_id(query.section_id.as_deref(), "sectionId")?;
    filter.tag = query_id(query.tag_id.as_deref(), "tagId")?;
    Ok(filter)
}

/// A team's entries as CSV, read a page at a time.
#[derive(Clone)]
struct EntriesCsv {
    store: std::sync::Arc<dyn tracking::TrackStore>,
    team: accounts::TeamId,
    filter: EntryFilter,
    invoice_ids: InvoiceIds,
}

impl csv::PagedListing for EntriesCsv {
    type Item = TimeEntry;
    type Position = EntryPosition;

    async fn read(&self, after: Option<EntryPosition>, limit: u32) -> Result<Vec<TimeEntry>, ApiError> {
        let filter = EntryFilter { after, limit: Some(limit), ..self.filter };
        Ok(self.store.list_entries(self.team, &filter).await?)
    }

    fn position(entry: &TimeEntry) -> EntryPosition {
        EntryPosition::of(entry)
    }

    fn header() -> &'static [&'static str] {
        &[
            "id",
            "date",
            "userId",
            "projectId",
            "sectionId",
            "taskName",
            "description",
            "durationSeconds",
            "hours",
            "tags",
            "billable",
            "billed",
            "invoiceId",
            "aiGenerated",
            "createdAt",
            "updatedAt",
        ]
    }

    fn cells(&self, entry: &TimeEntry) -> Vec<String> {
        let id = |id: Option<String>| id.unwrap_or_default();
        let tags: Vec<&str> = entry.tags.iter().map(|tag| tag.title.as_str()).collect();
        vec![
            entry.id.to_string(),
            Timestamp(entry.date).text(),
            entry.user_id.to_string(),
            id(entry.project_id.map(|p| p.to_string())),
            id(entry.section_id.map(|s| s.to_string())),
            entry.task_name.as_str().to_owned(),
            entry.description.as_ref().map(|d| d.as_str().to_owned()).unwrap_or_default(),
            entry.duration.get().to_string(),
            tracking::invoicing::hours_text(u128::from(entry.duration.get())),
            tags.join(", "),
            entry.billable.to_string(),
            entry.invoice_id.is_some().to_string(),
            id(self.invoice_ids.show(entry.invoice_id).map(|i| i.to_string())),
            entry.ai_generated.to_string(),
            Timestamp(entry.created_at).text(),
            Timestamp(entry.updated_at).text(),
        ]
    }
}

/// Every entry `query` asks for, as CSV.
async fn listing_csv(state: &ApiState, who: &Principal, query: &TimeQuery) -> Result<HttpResponse, ApiError> {
    csv::refuse_paging(query.limit.as_deref(), query.cursor.as_deref())?;
    let listing = EntriesCsv {
        store: state.stores.track.clone(),
        team: who.team_id,
        filter: filter_of(who, query)?,
        invoice_ids: InvoiceIds::for_caller(who),
    };
    csv::stream("time-entries.csv", listing).await
}

/// Whether the client takes gzip rather than the JSON as it is, by its `Accept-Encoding`.
fn accepts_gzip(request: &HttpRequest) -> bool {
    let Ok(accepted) = AcceptEncoding::parse(request) else { return false };
    accepted.negotiate([Encoding::gzip(), Encoding::identity()].iter()) == Some(Encoding::gzip())
}

/// Log time
///
/// Creates a time entry for the key's user or, for owners and admins only, for `userId`
/// (403 otherwise). No time can be logged on an `ARCHIVED` project (400). Needs
/// `track:write`.
#[utoipa::path(
    tag = "Time entries",
    request_body = TimeEntryInput,
    responses(
        (status = 201, description = "Created", body = TimeEntryBody, headers(("Location" = String, description = "URL of the new entry"))),
        (status = 409, description = "The entry is billed (`invoiceId`), or a referenced project, section, tag or user was deleted meanwhile", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_time(
    auth: Auth<TrackWrite>,
    Json(input): Json<TimeEntryInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let entry = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/track/time/{}", entry.id), entry))
}

/// Logs the time `input` describes, as the caller.
pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: TimeEntryInput,
) -> Result<TimeEntryBody, ApiError> {
    let draft = input.parse()?;
    let stores = &state.stores;
    let actor = Actor::from(who);
    let now = state.clock.now();
    let entry = service::log_time(&*stores.track, &*stores.accounts, &actor, who.team_id, draft, now).await?;
    Ok(TimeEntryBody::shown(entry, InvoiceIds::for_caller(who)))
}

/// Get a time entry
///
/// Returns one time entry. Members can only get their own; another user's entry is a 404
/// for them. Needs `track:read`.
#[utoipa::path(
    tag = "Time entries",
    params(("id" = Uuid, Path, description = "Time entry id")),
    responses((status = 200, description = "The entry", body = TimeEntryBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_time(
    auth: Auth<TrackRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TimeEntryBody>, ApiError> {
    Ok(web::Json(get(&state, &auth.principal, &path).await?))
}

/// The time entry `id` (as written in a path), if the caller may see it.
pub(crate) async fn get(state: &ApiState, who: &Principal, id: &str) -> Result<TimeEntryBody, ApiError> {
    let id: TimeEntryId = path_id(id, "time entry")?;
    let entry = service::get_time(&*state.stores.track, &Actor::from(who), who.team_id, id).await?;
    Ok(TimeEntryBody::shown(entry, InvoiceIds::for_caller(who)))
}

/// Change a time entry
///
/// Only the fields given change. Members can only change their own entries (another user's
/// is a 404 for them); only owners and admins may move an entry to another `userId` (403
/// otherwise). An entry on an `ARCHIVED` project cannot be changed, nor moved onto one
/// (400). Needs `track:write`.
#[utoipa::path(
    tag = "Time entries",
    params(("id" = Uuid, Path, description = "Time entry id")),
    request_body = TimeEntryPatch,
    responses(
        (status = 200, description = "The changed entry", body = TimeEntryBody),
        (status = 409, description = "The entry is billed (`invoiceId`), or a referenced project, section, tag or user was deleted meanwhile", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        NotFound,
        KeyedErrors,
    )
)]
#[patch("/{id}")]
pub(crate) async fn update_time(
    auth: Auth<TrackWrite>,
    Json(input): Json<TimeEntryPatch>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<TimeEntryBody>, ApiError> {
    Ok(web::Json(update(&state, &auth.principal, &path, input).await?))
}

/// Changes the time entry `id` as `input` says, if the caller may.
pub(crate) async fn update(
    state: &ApiState,
    who: &Principal,
    id: &str,
    input: TimeEntryPatch,
) -> Result<TimeEntryBody, ApiError> {
    let changes = input.parse()?;
    let id: TimeEntryId = path_id(id, "time entry")?;
    let (stores, actor, now) = (&state.stores, Actor::from(who), state.clock.now());
    let entry =
        service::change_time(&*stores.track, &*stores.accounts, &actor, who.team_id, id, changes, now)
            .await?;
    Ok(TimeEntryBody::shown(entry, InvoiceIds::for_caller(who)))
}

/// Delete a time entry
///
/// Deletes the entry. Members can only delete their own; another user's entry is a 404 for
/// them. A billed entry (`invoiceId` set) is locked until its invoice is deleted. Needs
/// `track:write`.
#[utoipa::path(
    tag = "Time entries",
    params(("id" = Uuid, Path, description = "Time entry id")),
    responses(
        (status = 200, description = "Deleted", body = Deleted),
        (status = 409, description = "The entry is billed (`invoiceId`)", body = crate::conventions::error::ErrorBody),
        NotFound,
        KeyedErrors,
    )
)]
#[delete("/{id}")]
pub(crate) async fn delete_time(
    auth: Auth<TrackWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    Ok(web::Json(delete(&state, &auth.principal, &path).await?))
}

/// Deletes the time entry `id`, if the caller may.
pub(crate) async fn delete(state: &ApiState, who: &Principal, id: &str) -> Result<Deleted, ApiError> {
    let id: TimeEntryId = path_id(id, "time entry")?;
    service::delete_time(&*state.stores.track, &Actor::from(who), who.team_id, id, state.clock.now()).await?;
    Ok(Deleted::of("time entry"))
}

#[cfg(test)]
mod tests {
    use serde_json::Number;

    use super::duration;

    #[test]
    fn durations_are_whole_numbers_in_bounds() {
        let parsed = |json: &str| {
            let number: Number = serde_json::from_str(json).unwrap();
            duration(&number).map(tracking::DurationSeconds::get).map_err(|e| e.to_string())
        };
        assert_eq!(parsed("3600"), Ok(3600));
        assert_eq!(parsed("9007199254740991"), Ok(9_007_199_254_740_991));
        assert_eq!(
            parsed("9007199254740992"),
            Err("durationSeconds: must be at most 9007199254740991".into())
        );
        assert_eq!(parsed("0"), Err("durationSeconds: must be greater than 0".into()));
        assert_eq!(parsed("-1"), Err("durationSeconds: must be greater than 0".into()));
        assert_eq!(parsed("1.5"), Err("durationSeconds: must be a whole number".into()));
        assert_eq!(parsed("1e-3"), Err("durationSeconds: must be a whole number".into()));
        assert_eq!(parsed("1e3"), Ok(1000));
        assert_eq!(parsed("3600.0"), Ok(3600));
        assert_eq!(parsed("1e400"), Err("durationSeconds: must be at most 9007199254740991".into()));
    }
}
