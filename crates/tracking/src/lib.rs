//! Time tracking: time entries, running timers, tags, projects and sections.
//!
//! The rules live here: the bounds of every field, the period a listing covers (day, ISO
//! week, calendar month, in UTC), who may log or see time for whom, how an entry's
//! project, section and tags must fit together, and when a project or section may be
//! deleted. Storage is five repository ports ([`TagRepository`], [`ProjectRepository`],
//! [`SectionRepository`], [`TimeEntryRepository`],
//! [`TimerRepository`]); the [`service`] functions combine them with the rules. This crate knows nothing of HTTP or SQL.

pub mod access;
pub mod entry;
pub mod fields;
pub mod invoicing;
pub mod period;
pub mod project;
pub mod report;
pub mod section;
pub mod service;
pub mod tag;
pub mod timer;

pub use access::Actor;
pub use entry::{
    EntryFilter, EntryPosition, SaveEntryError, TagRef, TimeEntry, TimeEntryId, TimeEntryRepository,
};
pub use fields::{Description, DurationSeconds, ProjectCode, TaskName, Title};
pub use period::{Frequency, Period};
pub use project::{
    HourlyRate, Project, ProjectChanges, ProjectId, ProjectRepository, ProjectStatus, SaveProjectError,
};
pub use report::{Report, ReportAmount, ReportGroup, ReportGroupBy, ReportQuery, ReportRow};
pub use section::{CreateSectionError, Section, SectionId, SectionRepository};
pub use service::{
    BillTimeError, EntryChanges, EntryDraft, EntryRule, NotAllowed, TimeBilling, TimeToInvoice, TimerDraft,
    TrackConflict, TrackError,
};
pub use tag::{Tag, TagId, TagRepository};
pub use timer::{RunningTimer, StartTimerError, StopTimerError, TimerId, TimerRepository};

use kernel::StoreError;

/// Why a project, section, tag or time entry was not deleted.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    #[error("not found")]
    NotFound,
    /// Time entries refer to it (projects and sections only); nothing was deleted.
    #[error("has time entries")]
    HasTimeEntries,
    /// The time entry is billed on an invoice, which locks it; nothing was deleted.
    #[error("billed")]
    Billed,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Every tracking port at once, for adapters that implement them all.
pub trait TrackStore:
    TagRepository + ProjectRepository + SectionRepository + TimeEntryRepository + TimerRepository
{
}

impl<T> TrackStore for T where
    T: TagRepository + ProjectRepository + SectionRepository + TimeEntryRepository + TimerRepository
{
}

/// Orders by title, case-insensitively (full Unicode lowercase, so every store orders
/// alike), then by id: the listing order of tags, projects and sections.
pub(crate) fn sort_by_title<T, I: Ord + Copy>(items: &mut [T], key: impl Fn(&T) -> (&Title, I)) {
    items.sort_by_cached_key(|item| {
        let (title, id) = key(item);
        (title.as_str().to_lowercase(), id)
    });
}
