//! The tracking ports over diesel: tags, projects, sections, time entries and (in
//! `timers`) running timers.
//!
//! The delete rules are foreign keys: an entry or a running timer restricts deleting its
//! project or section (the violation becomes `HasTimeEntries`), a project's sections and a
//! tag's entry and timer links are deleted with them.

use std::collections::{HashMap, HashSet};

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;
use tracking::{
    CreateSectionError, DeleteError, Description, DurationSeconds, EntryFilter, HourlyRate, Project,
    ProjectChanges, ProjectCode, ProjectId, ProjectRepository, ProjectStatus, SaveEntryError,
    SaveProjectError, Section, SectionId, SectionRepository, Tag, TagId, TagRef, TagRepository, TaskName,
    TimeEntry, TimeEntryId, TimeEntryRepository, Title,
};

use crate::TxError;
use crate::chasing::record_events;
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, corrupt, db_run, violation};

#[derive(Queryable)]
struct TagRow {
    team_id: DbUuid,
    id: DbUuid,
    title: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<TagRow> for Tag {
    type Error = StoreError;
    fn try_from(row: TagRow) -> Result<Self, StoreError> {
        Ok(Tag {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            title: Title::from_stored(row.title).map_err(|e| corrupt("tag title", e))?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

#[derive(Queryable)]
struct ProjectRow {
    team_id: DbUuid,
    id: DbUuid,
    title: String,
    code: Option<String>,
    status: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    rate: Option<DbDecimal>,
    client_id: Option<DbUuid>,
}

impl TryFrom<ProjectRow> for Project {
    type Error = StoreError;
    fn try_from(row: ProjectRow) -> Result<Self, StoreError> {
        Ok(Project {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            title: Title::from_stored(row.title).map_err(|e| corrupt("project title", e))?,
            code: row
                .code
                .map(ProjectCode::from_stored)
                .transpose()
                .map_err(|e| corrupt("project code", e))?,
            status: ProjectStatus::parse(&row.status).map_err(|e| corrupt("project status", e))?,
            rate: row
                .rate
                .map(|rate| HourlyRate::parse(rate.0))
                .transpose()
                .map_err(|e| corrupt("project rate", e))?,
            client_id: row.client_id.map(DbUuid::into_id),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

#[derive(Queryable)]
struct SectionRow {
    team_id: DbUuid,
    id: DbUuid,
    project_id: DbUuid,
    title: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<SectionRow> for Section {
    type Error = StoreError;
    fn try_from(row: SectionRow) -> Result<Self, StoreError> {
        Ok(Section {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            project_id: row.project_id.into_id(),
            title: Title::from_stored(row.title).map_err(|e| corrupt("section title", e))?,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

#[derive(Queryable)]
struct EntryRow {
    team_id: DbUuid,
    id: DbUuid,
    user_id: DbUuid,
    duration_seconds: i64,
    task_name: String,
    description: Option<String>,
    date: DateTime<Utc>,
    project_id: Option<DbUuid>,
    section_id: Option<DbUuid>,
    ai_generated: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    /// The ids of the entry's tags, as [`tag_ids_text`] writes them.
    tag_ids: String,
    billable: bool,
    invoice_id: Option<DbUuid>,
}

/// The most tag ids a listing binds to read their titles; beyond, it reads all the team's.
const MAX_BOUND_TAGS: usize = 1000;

/// The `tag_ids` column of an entry with `tags`: their ids, comma-separated.
pub(crate) fn tag_ids_text(tags: &[TagRef]) -> String {
    tags.iter().map(|tag| tag.id.to_string()).collect::<Vec<_>>().join(",")
}

/// The ids in a `tag_ids` column.
fn tag_ids(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').filter(|id| !id.is_empty())
}

impl EntryRow {
    fn into_entry(self, tags: Vec<TagRef>) -> Result<TimeEntry, StoreError> {
        let mut tags = tags;
        TimeEntry::order_tags(&mut tags);
        Ok(TimeEntry {
            id: self.id.into_id(),
            team_id: self.team_id.into_id(),
            user_id: self.user_id.into_id(),
            duration: DurationSeconds::parse(self.duration_seconds.into())
                .map_err(|e| corrupt("duration", e))?,
            task_name: TaskName::from_stored(self.task_name).map_err(|e| corrupt("task name", e))?,
            description: self
                .description
                .map(Description::from_stored)
                .transpose()
                .map_err(|e| corrupt("description", e))?,
            date: self.date,
            project_id: self.project_id.map(DbUuid::into_id),
            section_id: self.section_id.map(DbUuid::into_id),
            tags,
            ai_generated: self.ai_generated,
            billable: self.billable,
            invoice_id: self.invoice_id.map(DbUuid::into_id),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// SQL's text functions that deleting a tag uses.
mod sql {
    use diesel::sql_types::Text;

    diesel::define_sql_function! {
        /// `replace(text, from, to)`.
        fn replace(text: Text, from: Text, to: Text) -> Text;
    }
    diesel::define_sql_function! {
        /// `trim(text, characters)`: PostgreSQL reads it as `btrim`.
        fn trim(text: Text, characters: Text) -> Text;
    }
}

/// Entry id, tag id, tag title: one tag of one entry.
type LinkRow = (DbUuid, DbUuid, String);

/// The tag of a link row.
fn link_tag((_, tag, title): LinkRow) -> Result<TagRef, StoreError> {
    Ok(TagRef { id: tag.into_id(), title: Title::from_stored(title).map_err(|e| corrupt("tag title", e))? })
}

/// Attaches each entry's tags to it.
fn assemble(rows: Vec<EntryRow>, links: Vec<LinkRow>) -> Result<Vec<TimeEntry>, StoreError> {
    let mut tags: HashMap<DbUuid, Vec<TagRef>> = HashMap::new();
    for link in links {
        tags.entry(link.0).or_default().push(link_tag(link)?);
    }
    rows.into_iter()
        .map(|row| {
            let own = tags.remove(&row.id).unwrap_or_default();
            row.into_entry(own)
        })
        .collect()
}

macro_rules! entry_values {
    ($entry:expr) => {
        (
            time_entries::user_id.eq(DbUuid::of($entry.user_id)),
            // At most 2^53 - 1 by construction, so it fits an i64.
            time_entries::duration_seconds.eq(i64::try_from($entry.duration.get()).unwrap_or(i64::MAX)),
            time_entries::task_name.eq($entry.task_name.as_str()),
            time_entries::description.eq($entry.description.as_ref().map(|d| d.as_str())),
            time_entries::date.eq($entry.date),
            time_entries::project_id.eq($entry.project_id.map(DbUuid::of)),
            time_entries::section_id.eq($entry.section_id.map(DbUuid::of)),
            time_entries::ai_generated.eq($entry.ai_generated),
            time_entries::billable.eq($entry.billable),
            time_entries::updated_at.eq($entry.updated_at),
            time_entries::tag_ids.eq($crate::time_tracking::tag_ids_text(&$entry.tags)),
        )
    };
}

/// Whether the team has the entry, on `$conn`.
macro_rules! entry_exists {
    ($conn:ident, $team:expr, $id:expr) => {
        diesel::select(diesel::dsl::exists(
            time_entries::table
                .filter(time_entries::team_id.eq(DbUuid::of($team)))
                .filter(time_entries::id.eq(DbUuid::of($id))),
        ))
        .get_result::<bool>($conn)
        .await
    };
}

/// Inserts the entry-tag links of `entry`, one statement each: diesel-async cannot send
/// a multi-row insert to SQLite, and an entry has few tags.
macro_rules! insert_links {
    ($conn:ident, $entry:expr) => {
        for tag in &$entry.tags {
            diesel::insert_into(time_entry_tags::table)
                .values((
                    time_entry_tags::team_id.eq(DbUuid::of($entry.team_id)),
                    time_entry_tags::entry_id.eq(DbUuid::of($entry.id)),
                    time_entry_tags::tag_id.eq(DbUuid::of(tag.id)),
                ))
                .execute($conn)
                .await?;
        }
    };
}

/// Inserts `entry` and its tag links.
macro_rules! insert_entry {
    ($conn:ident, $entry:expr) => {
        diesel::insert_into(time_entries::table)
            .values((
                time_entries::team_id.eq(DbUuid::of($entry.team_id)),
                time_entries::id.eq(DbUuid::of($entry.id)),
                entry_values!($entry),
                time_entries::created_at.eq($entry.created_at),
            ))
            .execute($conn)
            .await?;
        insert_links!($conn, $entry);
    };
}
use insert_entry;

pub(crate) mod report;
mod timers;

/// Entries of `$team` matching `$filter` (but for its tag and limit), as a boxed query on `time_entries`.
macro_rules! filtered_entries {
    ($source:expr, $team:expr, $filter:expr) => {{
        let mut query = $source
            .filter(time_entries::team_id.eq(DbUuid::of($team)))
            .filter(time_entries::date.ge($filter.period.start))
            .filter(time_entries::date.lt($filter.period.end))
            .into_boxed();
        if let Some(user) = $filter.user {
            query = query.filter(time_entries::user_id.eq(DbUuid::of(user)));
        }
        if let Some(project) = $filter.project {
            query = query.filter(time_entries::project_id.eq(DbUuid::of(project)));
        }
        if let Some(section) = $filter.section {
            query = query.filter(time_entries::section_id.eq(DbUuid::of(section)));
        }
        if let Some(after) = $filter.after {
            // Listing order is (date, created_at, id): strictly after `after` in it.
            query = query.filter(
                time_entries::date.gt(after.date).or(time_entries::date.eq(after.date).and(
                    time_entries::created_at.gt(after.created_at).or(time_entries::created_at
                        .eq(after.created_at)
                        .and(time_entries::id.gt(DbUuid::of(after.id)))),
                )),
            );
        }
        query
    }};
}

/// The entries of `$team` that `$filter` shows, in listing order, at most its `limit`.
macro_rules! listed_entries {
    ($team:expr, $filter:expr) => {{
        let mut rows = filtered_entries!(time_entries::table, $team, $filter).order((
            time_entries::date,
            time_entries::created_at,
            time_entries::id,
        ));
        if let Some(tag) = $filter.tag {
            rows = rows.filter(
                time_entries::id.eq_any(
                    time_entry_tags::table
                        .filter(time_entry_tags::team_id.eq(DbUuid::of($team)))
                        .filter(time_entry_tags::tag_id.eq(DbUuid::of(tag)))
                        .select(time_entry_tags::entry_id),
                ),
            );
        }
        if let Some(limit) = $filter.limit {
            rows = rows.limit(i64::from(limit));
        }
        rows
    }};
}
pub(crate) use {filtered_entries, listed_entries};

/// Why a write of an entry failed, in the port's terms.
fn entry_write_error(error: diesel::result::Error) -> SaveEntryError {
    match violation(&error) {
        Some(DatabaseErrorKind::ForeignKeyViolation) => SaveEntryError::MissingReference,
        _ => SaveEntryError::Store(crate::store_error(error)),
    }
}

/// Maps the result of a delete guarded by restricting foreign keys.
fn deletion(result: Result<usize, diesel::result::Error>) -> Result<(), DeleteError> {
    match result {
        Ok(0) => Err(DeleteError::NotFound),
        Ok(_) => Ok(()),
        Err(e) if violation(&e) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
            Err(DeleteError::HasTimeEntries)
        }
        Err(e) => Err(crate::store_error(e).into()),
    }
}

/// Maps the result of a project write, where the only unique key besides the id is the code.
fn project_write<T>(result: Result<T, diesel::result::Error>) -> Result<T, SaveProjectError> {
    result.map_err(|e| match violation(&e) {
        Some(DatabaseErrorKind::UniqueViolation) => SaveProjectError::CodeTaken,
        // The client is referred to by (team, client): another team's is as unknown as none.
        Some(DatabaseErrorKind::ForeignKeyViolation) => SaveProjectError::UnknownClient,
        _ => SaveProjectError::Store(crate::store_error(e)),
    })
}

#[async_trait]
impl TagRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn list_tags(&self, team: TeamId) -> Result<Vec<Tag>, StoreError> {
        let rows: Vec<TagRow> = db_run!(self, |conn| tags::table
            .filter(tags::team_id.eq(DbUuid::of(team)))
            .load(conn)
            .await
            .or_store()?);
        let mut tags = rows.into_iter().map(Tag::try_from).collect::<Result<Vec<_>, _>>()?;
        tracking::tag::sort_for_listing(&mut tags);
        Ok(tags)
    }

    #[tracing::instrument(skip(self))]
    async fn find_tags(&self, team: TeamId, ids: &[TagId]) -> Result<Vec<Tag>, StoreError> {
        let ids: Vec<DbUuid> = ids.iter().copied().map(DbUuid::of).collect();
        let rows: Vec<TagRow> = db_run!(self, |conn| tags::table
            .filter(tags::team_id.eq(DbUuid::of(team)))
            .filter(tags::id.eq_any(&ids))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter().map(Tag::try_from).collect()
    }

    #[tracing::instrument(skip_all, fields(team = %tag.team_id, tag = %tag.id))]
    async fn create_tag(&self, tag: &Tag) -> Result<(), StoreError> {
        db_run!(self, |conn| diesel::insert_into(tags::table)
            .values((
                tags::team_id.eq(DbUuid::of(tag.team_id)),
                tags::id.eq(DbUuid::of(tag.id)),
                tags::title.eq(tag.title.as_str()),
                tags::created_at.eq(tag.created_at),
                tags::updated_at.eq(tag.updated_at),
            ))
            .execute(conn)
            .await
            .or_store())?;
        Ok(())
    }

    #[tracing::instrument(skip(self, title))]
    async fn rename_tag(
        &self,
        team: TeamId,
        id: TagId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Tag>, StoreError> {
        let row: Option<TagRow> = db_run!(self, |conn| diesel::update(
            tags::table.filter(tags::team_id.eq(DbUuid::of(team))).filter(tags::id.eq(DbUuid::of(id)))
        )
        .set((tags::title.eq(title.as_str()), tags::updated_at.eq(now)))
        .get_result(conn)
        .await
        .optional()
        .or_store()?);
        row.map(Tag::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn delete_tag(&self, team: TeamId, id: TagId) -> Result<(), DeleteError> {
        let team = DbUuid::of(team);
        let tag = DbUuid::of(id);
        deletion(db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The entries' own lists first (the cascade takes the links with the tag):
                // `,a,b,c,` with `,b,` made `,` is `,a,c,`, trimmed `a,c`.
                let carrying = time_entry_tags::table
                    .filter(time_entry_tags::team_id.eq(team))
                    .filter(time_entry_tags::tag_id.eq(tag))
                    .select(time_entry_tags::entry_id);
                let listed = ",".into_sql::<Text>().concat(time_entries::tag_ids).concat(",");
                diesel::update(time_entries::table.filter(time_entries::team_id.eq(team)))
                    .filter(time_entries::id.eq_any(carrying))
                    .set(
                        time_entries::tag_ids
                            .eq(sql::trim(sql::replace(listed, format!(",{id},"), ","), ",")),
                    )
                    .execute(conn)
                    .await?;
                diesel::delete(tags::table.filter(tags::team_id.eq(team)).filter(tags::id.eq(tag)))
                    .execute(conn)
                    .await
            })
            .await))
    }
}

#[async_trait]
impl ProjectRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn list_projects(&self, team: TeamId) -> Result<Vec<Project>, StoreError> {
        let rows: Vec<ProjectRow> = db_run!(self, |conn| projects::table
            .filter(projects::team_id.eq(DbUuid::of(team)))
            .load(conn)
            .await
            .or_store()?);
        let mut projects = rows.into_iter().map(Project::try_from).collect::<Result<Vec<_>, _>>()?;
        tracking::project::sort_for_listing(&mut projects);
        Ok(projects)
    }

    #[tracing::instrument(skip(self))]
    async fn get_project(&self, team: TeamId, id: ProjectId) -> Result<Option<Project>, StoreError> {
        let row: Option<ProjectRow> = db_run!(self, |conn| projects::table
            .filter(projects::team_id.eq(DbUuid::of(team)))
            .filter(projects::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(Project::try_from).transpose()
    }

    #[tracing::instrument(skip_all, fields(team = %project.team_id, project = %project.id))]
    async fn create_project(&self, project: &Project) -> Result<(), SaveProjectError> {
        project_write(db_run!(self, |conn| diesel::insert_into(projects::table)
            .values((
                projects::team_id.eq(DbUuid::of(project.team_id)),
                projects::id.eq(DbUuid::of(project.id)),
                projects::title.eq(project.title.as_str()),
                projects::code.eq(project.code.as_ref().map(kernel::Text::as_str)),
                projects::status.eq(project.status.as_str()),
                projects::rate.eq(project.rate.map(|rate| DbDecimal(rate.amount()))),
                projects::client_id.eq(project.client_id.map(DbUuid::of)),
                projects::created_at.eq(project.created_at),
                projects::updated_at.eq(project.updated_at),
            ))
            .execute(conn)
            .await))?;
        Ok(())
    }

    #[tracing::instrument(skip(self, changes))]
    async fn update_project(
        &self,
        team: TeamId,
        id: ProjectId,
        changes: &ProjectChanges,
        now: DateTime<Utc>,
    ) -> Result<Project, SaveProjectError> {
        // `None` parts of the changeset leave their column alone.
        let row: Option<ProjectRow> = project_write(db_run!(self, |conn| diesel::update(
            projects::table
                .filter(projects::team_id.eq(DbUuid::of(team)))
                .filter(projects::id.eq(DbUuid::of(id)))
        )
        .set((
            changes.title.as_ref().map(|title| projects::title.eq(title.as_str())),
            changes.code.as_ref().map(|code| projects::code.eq(code.as_ref().map(kernel::Text::as_str))),
            changes.status.map(|status| projects::status.eq(status.as_str())),
            changes.rate.map(|rate| projects::rate.eq(rate.map(|rate| DbDecimal(rate.amount())))),
            changes.client_id.map(|client| projects::client_id.eq(client.map(DbUuid::of))),
            projects::updated_at.eq(now),
        ))
        .get_result(conn)
        .await
        .optional()))?;
        Ok(row.ok_or(SaveProjectError::NotFound)?.try_into()?)
    }

    #[tracing::instrument(skip(self))]
    async fn delete_project(&self, team: TeamId, id: ProjectId) -> Result<(), DeleteError> {
        deletion(db_run!(self, |conn| diesel::delete(
            projects::table
                .filter(projects::team_id.eq(DbUuid::of(team)))
                .filter(projects::id.eq(DbUuid::of(id)))
        )
        .execute(conn)
        .await))
    }
}

#[async_trait]
impl SectionRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn list_sections(&self, team: TeamId, project: ProjectId) -> Result<Vec<Section>, StoreError> {
        let rows: Vec<SectionRow> = db_run!(self, |conn| sections::table
            .filter(sections::team_id.eq(DbUuid::of(team)))
            .filter(sections::project_id.eq(DbUuid::of(project)))
            .load(conn)
            .await
            .or_store()?);
        let mut sections = rows.into_iter().map(Section::try_from).collect::<Result<Vec<_>, _>>()?;
        tracking::section::sort_for_listing(&mut sections);
        Ok(sections)
    }

    #[tracing::instrument(skip(self))]
    async fn get_section(&self, team: TeamId, id: SectionId) -> Result<Option<Section>, StoreError> {
        let row: Option<SectionRow> = db_run!(self, |conn| sections::table
            .filter(sections::team_id.eq(DbUuid::of(team)))
            .filter(sections::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(Section::try_from).transpose()
    }

    #[tracing::instrument(skip_all, fields(team = %section.team_id, section = %section.id))]
    async fn create_section(&self, section: &Section) -> Result<(), CreateSectionError> {
        let result = db_run!(self, |conn| diesel::insert_into(sections::table)
            .values((
                sections::team_id.eq(DbUuid::of(section.team_id)),
                sections::id.eq(DbUuid::of(section.id)),
                sections::project_id.eq(DbUuid::of(section.project_id)),
                sections::title.eq(section.title.as_str()),
                sections::created_at.eq(section.created_at),
                sections::updated_at.eq(section.updated_at),
            ))
            .execute(conn)
            .await);
        match result {
            Ok(_) => Ok(()),
            Err(e) if violation(&e) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
                Err(CreateSectionError::ProjectNotFound)
            }
            Err(e) => Err(crate::store_error(e).into()),
        }
    }

    #[tracing::instrument(skip(self, title))]
    async fn rename_section(
        &self,
        team: TeamId,
        id: SectionId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Section>, StoreError> {
        let row: Option<SectionRow> = db_run!(self, |conn| diesel::update(
            sections::table
                .filter(sections::team_id.eq(DbUuid::of(team)))
                .filter(sections::id.eq(DbUuid::of(id)))
        )
        .set((sections::title.eq(title.as_str()), sections::updated_at.eq(now)))
        .get_result(conn)
        .await
        .optional()
        .or_store()?);
        row.map(Section::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn delete_section(&self, team: TeamId, id: SectionId) -> Result<(), DeleteError> {
        deletion(db_run!(self, |conn| diesel::delete(
            sections::table
                .filter(sections::team_id.eq(DbUuid::of(team)))
                .filter(sections::id.eq(DbUuid::of(id)))
        )
        .execute(conn)
        .await))
    }
}

#[async_trait]
impl TimeEntryRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn report(
        &self,
        team: TeamId,
        query: &tracking::ReportQuery,
    ) -> Result<Vec<tracking::ReportRow>, StoreError> {
        self.report_rows(team, query).await
    }

    #[tracing::instrument(skip(self))]
    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<TimeEntry>, StoreError> {
        let (rows, titles): (Vec<EntryRow>, Vec<(DbUuid, String)>) = db_run!(self, |conn| {
            let rows: Vec<EntryRow> = listed_entries!(team, filter).load(conn).await.or_store()?;
            // The titles of the tags the entries carry: by id while they are few enough to
            // bind (SQLite takes 32,766 values), else every tag of the team.
            let ids: HashSet<&str> = rows.iter().flat_map(|row| tag_ids(&row.tag_ids)).collect();
            let team_tags =
                tags::table.filter(tags::team_id.eq(DbUuid::of(team))).select((tags::id, tags::title));
            let titles = if ids.is_empty() {
                Vec::new()
            } else if ids.len() <= MAX_BOUND_TAGS {
                let ids: Vec<DbUuid> = ids.iter().filter_map(|id| id.parse().ok()).map(DbUuid).collect();
                team_tags.filter(tags::id.eq_any(ids)).load(conn).await.or_store()?
            } else {
                team_tags.load(conn).await.or_store()?
            };
            (rows, titles)
        });
        let titles: HashMap<String, (DbUuid, String)> =
            titles.into_iter().map(|(id, title)| (id.0.to_string(), (id, title))).collect();
        rows.into_iter()
            .map(|row| {
                // An id without a title is of a tag deleted between the two reads.
                let links = tag_ids(&row.tag_ids)
                    .filter_map(|id| titles.get(id))
                    .map(|(id, title)| (row.id, *id, title.clone()));
                let tags = links.map(link_tag).collect::<Result<_, _>>()?;
                row.into_entry(tags)
            })
            .collect()
    }

    /// Triggers of the migration `track_revisions` keep the counters (see there).
    #[tracing::instrument(skip(self))]
    async fn listing_revision(&self, team: TeamId) -> Result<u64, StoreError> {
        // Summed here: SQL's sum of bigint is a numeric on PostgreSQL. At most 16 rows.
        let counters: Vec<i64> = db_run!(self, |conn| track_revisions::table
            .filter(track_revisions::team_id.eq(DbUuid::of(team)))
            .select(track_revisions::revision)
            .load(conn)
            .await
            .or_store()?);
        counters.into_iter().try_fold(0_u64, |sum, counter| {
            let counter = u64::try_from(counter).map_err(|e| corrupt("listing revision", e))?;
            Ok(sum.saturating_add(counter))
        })
    }

    #[tracing::instrument(skip(self))]
    async fn get_entry(&self, team: TeamId, id: TimeEntryId) -> Result<Option<TimeEntry>, StoreError> {
        let (row, links): (Option<EntryRow>, Vec<LinkRow>) = db_run!(self, |conn| {
            let row = time_entries::table
                .filter(time_entries::team_id.eq(DbUuid::of(team)))
                .filter(time_entries::id.eq(DbUuid::of(id)))
                .first(conn)
                .await
                .optional()
                .or_store()?;
            let links =
                time_entry_tags::table
                    .inner_join(tags::table.on(
                        tags::team_id.eq(time_entry_tags::team_id).and(tags::id.eq(time_entry_tags::tag_id)),
                    ))
                    .filter(time_entry_tags::team_id.eq(DbUuid::of(team)))
                    .filter(time_entry_tags::entry_id.eq(DbUuid::of(id)))
                    .select((time_entry_tags::entry_id, tags::id, tags::title))
                    .load(conn)
                    .await
                    .or_store()?;
            (row, links)
        });
        Ok(assemble(row.into_iter().collect(), links)?.pop())
    }

    #[tracing::instrument(skip_all, fields(team = %entry.team_id, entry = %entry.id))]
    async fn create_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                insert_entry!(conn, entry);
                record_events!(
                    conn,
                    notify::raise::time_entry_created(entry).events(&*self.describe, entry.created_at)
                );
                Ok::<_, diesel::result::Error>(())
            })
            .await
            .map_err(entry_write_error));
        self.signalling(done)
    }

    #[tracing::instrument(skip_all, fields(team = %entry.team_id, entry = %entry.id))]
    async fn replace_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // Billed time is locked: the condition is part of the write itself.
                let updated = diesel::update(
                    time_entries::table
                        .filter(time_entries::team_id.eq(DbUuid::of(entry.team_id)))
                        .filter(time_entries::id.eq(DbUuid::of(entry.id)))
                        .filter(time_entries::invoice_id.is_null()),
                )
                .set(entry_values!(entry))
                .execute(conn)
                .await?;
                if updated == 0 {
                    let billed = entry_exists!(conn, entry.team_id, entry.id)?;
                    return Ok(if billed {
                        Err(SaveEntryError::Billed)
                    } else {
                        Err(SaveEntryError::NotFound)
                    });
                }
                diesel::delete(
                    time_entry_tags::table
                        .filter(time_entry_tags::team_id.eq(DbUuid::of(entry.team_id)))
                        .filter(time_entry_tags::entry_id.eq(DbUuid::of(entry.id))),
                )
                .execute(conn)
                .await?;
                insert_links!(conn, entry);
                record_events!(
                    conn,
                    notify::raise::time_entry_updated(entry).events(&*self.describe, entry.updated_at)
                );
                Ok::<_, diesel::result::Error>(Ok(()))
            })
            .await
            .map_err(entry_write_error)?);
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn delete_entry(
        &self,
        team: TeamId,
        id: TimeEntryId,
        at: DateTime<Utc>,
    ) -> Result<(), DeleteError> {
        // The entry's tag links go with it (ON DELETE CASCADE); billed time stays. A write
        // first (SQLite's lock), which finds the entry unless it is billed or gone.
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let unbilled = time_entries::table
                    .filter(time_entries::team_id.eq(DbUuid::of(team)))
                    .filter(time_entries::id.eq(DbUuid::of(id)))
                    .filter(time_entries::invoice_id.is_null());
                let row: Option<EntryRow> = diesel::update(unbilled)
                    .set(time_entries::updated_at.eq(time_entries::updated_at))
                    .returning(time_entries::all_columns)
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(row) = row else {
                    let billed = entry_exists!(conn, team, id)?;
                    return Err(TxError::Refused(if billed {
                        DeleteError::Billed
                    } else {
                        DeleteError::NotFound
                    }));
                };
                let links: Vec<LinkRow> = time_entry_tags::table
                    .inner_join(tags::table.on(
                        tags::team_id.eq(time_entry_tags::team_id).and(tags::id.eq(time_entry_tags::tag_id)),
                    ))
                    .filter(time_entry_tags::team_id.eq(DbUuid::of(team)))
                    .filter(time_entry_tags::entry_id.eq(DbUuid::of(id)))
                    .select((time_entry_tags::entry_id, tags::id, tags::title))
                    .load(conn)
                    .await?;
                let gone = assemble(vec![row], links)
                    .map_err(|e| TxError::Refused(e.into()))?
                    .pop()
                    .ok_or(TxError::Refused(DeleteError::NotFound))?;
                diesel::delete(unbilled).execute(conn).await?;
                record_events!(conn, notify::raise::time_entry_deleted(&gone).events(&*self.describe, at));
                Ok::<_, TxError<DeleteError>>(())
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }
}
