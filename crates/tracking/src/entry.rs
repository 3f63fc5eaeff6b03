//! Time entries: time a user spent on a task, optionally filed under a project, a section
//! and tags.

use accounts::{TeamId, UserId};
use async_trait::async_trait;
use billing::InvoiceId;
use chrono::{DateTime, Utc};
use kernel::{StoreError, define_id};

use crate::{Description, DurationSeconds, Period, ProjectId, SectionId, TagId, TaskName, Title};

define_id!(
    /// Identifies a time entry.
    TimeEntryId
);

/// A tag as an entry shows it: always with the tag's current title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagRef {
    pub id: TagId,
    pub title: Title,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeEntry {
    pub id: TimeEntryId,
    pub team_id: TeamId,
    /// Whose time it is.
    pub user_id: UserId,
    pub duration: DurationSeconds,
    pub task_name: TaskName,
    pub description: Option<Description>,
    /// When the work happened; listings select and order by it.
    pub date: DateTime<Utc>,
    pub project_id: Option<ProjectId>,
    /// When set, `project_id` is the section's project.
    pub section_id: Option<SectionId>,
    /// Distinct tags, ordered by title (case-insensitively), then id.
    pub tags: Vec<TagRef>,
    pub ai_generated: bool,
    /// Whether the time is to be billed (default `true`).
    pub billable: bool,
    /// The invoice that billed the entry; set only when time is billed, never by an edit.
    pub invoice_id: Option<InvoiceId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl TimeEntry {
    pub fn tag_ids(&self) -> Vec<TagId> {
        self.tags.iter().map(|t| t.id).collect()
    }

    /// Puts `tags` in the order entries show them, without repeats.
    pub fn order_tags(tags: &mut Vec<TagRef>) {
        crate::sort_by_title(tags, |t| (&t.title, t.id));
        tags.dedup_by_key(|t| t.id);
    }
}

/// Puts entries in listing order: by `date`, then `created_at`, then id.
pub fn sort_for_listing(entries: &mut [TimeEntry]) {
    entries.sort_by_key(|e| (e.date, e.created_at, e.id));
}

/// Where an entry stands in listing order: what a page of a listing continues after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryPosition {
    pub date: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub id: TimeEntryId,
}

impl EntryPosition {
    pub fn of(entry: &TimeEntry) -> Self {
        Self { date: entry.date, created_at: entry.created_at, id: entry.id }
    }
}

/// Which entries a listing asks for: those matching every filter given, in listing order,
/// after `after`, at most `limit` of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryFilter {
    /// Entries whose `date` lies in the period.
    pub period: Period,
    /// Only this user's entries; every user's when `None`.
    pub user: Option<UserId>,
    pub project: Option<ProjectId>,
    pub section: Option<SectionId>,
    /// Only entries carrying this tag.
    pub tag: Option<TagId>,
    /// Only entries that come after this position.
    pub after: Option<EntryPosition>,
    /// At most this many entries; all of them when `None`.
    pub limit: Option<u32>,
}

impl EntryFilter {
    /// Every entry of `period`.
    pub fn within(period: Period) -> Self {
        Self { period, user: None, project: None, section: None, tag: None, after: None, limit: None }
    }

    /// Whether `entry` is one the listing shows (before `limit` is applied).
    pub fn matches(&self, entry: &TimeEntry) -> bool {
        self.period.contains(entry.date)
            && self.user.is_none_or(|user| entry.user_id == user)
            && self.project.is_none_or(|project| entry.project_id == Some(project))
            && self.section.is_none_or(|section| entry.section_id == Some(section))
            && self.tag.is_none_or(|tag| entry.tags.iter().any(|t| t.id == tag))
            && self.after.is_none_or(|after| EntryPosition::of(entry) > after)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SaveEntryError {
    #[error("time entry not found")]
    NotFound,
    /// A user, project, section or tag the entry names is no longer the team's (deleted
    /// while the entry was being saved); nothing was written.
    #[error("a user, project, section or tag of the entry no longer exists")]
    MissingReference,
    /// The stored entry is billed on an invoice: its time is locked; nothing was written.
    #[error("the entry is billed")]
    Billed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of time entries and their tags, scoped to a team like every port. Whether the
/// caller may see an entry is decided by [`crate::Actor`], not here.
#[async_trait]
pub trait TimeEntryRepository: Send + Sync {
    /// Entries matching `filter`, in [`sort_for_listing`] order, each with its tags: the
    /// first `filter.limit` of them when it is set.
    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<TimeEntry>, StoreError>;

    /// The team's listing revision: it grows with every committed change that a listing of
    /// the team's entries can show (an entry created, replaced or deleted, a tag renamed or
    /// deleted), and is 0 before the first. A listing read after the revision was read
    /// shows at least every change up to it, so a copy of a listing taken at a revision is
    /// current while the revision holds.
    async fn listing_revision(&self, team: TeamId) -> Result<u64, StoreError>;

    async fn get_entry(&self, team: TeamId, id: TimeEntryId) -> Result<Option<TimeEntry>, StoreError>;

    /// Stores the entry and its tag links together. The tags' titles are not stored, and
    /// neither is `invoice_id`: a new entry is not billed yet. MUST return `MissingReference` when the user, project, section or a tag is not the
    /// team's, or the section is not in the project.
    async fn create_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError>;

    /// Replaces every field but `invoice_id` (which only billing sets) and the tag links of
    /// a stored entry together. MUST return `Billed`, writing nothing, when the stored entry
    /// has an invoice (checked in the write itself, so no billing can slip in between), and
    /// MUST return
    /// `NotFound` when the entry is not the team's, and `MissingReference` as
    /// [`TimeEntryRepository::create_entry`] does.
    async fn replace_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError>;

    /// Deletes the entry at `at`. MUST return `NotFound` when the entry is not the team's,
    /// and `Billed`, deleting nothing, when it has an invoice.
    async fn delete_entry(
        &self,
        team: TeamId,
        id: TimeEntryId,
        at: DateTime<Utc>,
    ) -> Result<(), crate::DeleteError>;

    /// The time of the entries `query` covers, summed per group and per hourly rate of the
    /// entries' projects (one row each), in any order: by the database, not by reading
    /// the entries.
    async fn report(
        &self,
        team: TeamId,
        query: &crate::ReportQuery,
    ) -> Result<Vec<crate::ReportRow>, StoreError>;
}
