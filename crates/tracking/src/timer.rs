//! Running timers: a user starts one on a task and stops it later; the stop turns it into
//! a time entry of the whole seconds between. A user has at most one running timer.

use accounts::{TeamId, UserId};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{StoreError, define_id};

use crate::{Description, DurationSeconds, ProjectId, SectionId, TagRef, TaskName, TimeEntry, TimeEntryId};

define_id!(
    /// Identifies a running timer: a stop or discard acts on the timer it read, never on
    /// one started after it.
    TimerId
);

/// A timer that is running: what the time entry will say, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTimer {
    pub id: TimerId,
    pub team_id: TeamId,
    /// Whose time it measures: the user who started it.
    pub user_id: UserId,
    pub task_name: TaskName,
    pub description: Option<Description>,
    pub project_id: Option<ProjectId>,
    /// When set, `project_id` is the section's project.
    pub section_id: Option<SectionId>,
    /// Distinct tags, ordered as an entry's are.
    pub tags: Vec<TagRef>,
    pub started_at: DateTime<Utc>,
}

impl RunningTimer {
    /// The whole seconds from the start to `now`, at least 1: a timer stopped within its
    /// first second, or read on a clock that is behind, still measures a second.
    pub fn elapsed(&self, now: DateTime<Utc>) -> DurationSeconds {
        DurationSeconds::clamped((now - self.started_at).num_seconds())
    }

    /// The time entry that stopping the timer at `now` makes: dated at the start, as long
    /// as the timer ran.
    pub fn into_entry(self, id: TimeEntryId, now: DateTime<Utc>) -> TimeEntry {
        TimeEntry {
            id,
            team_id: self.team_id,
            user_id: self.user_id,
            duration: self.elapsed(now),
            task_name: self.task_name,
            description: self.description,
            date: self.started_at,
            project_id: self.project_id,
            section_id: self.section_id,
            tags: self.tags,
            ai_generated: false,
            billable: true,
            invoice_id: None,
            created_at: now,
            updated_at: now,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartTimerError {
    /// The user already has a running timer; nothing was written.
    #[error("a timer is already running")]
    AlreadyRunning,
    /// The user, project, section or a tag is not the team's (deleted meanwhile), or the
    /// section is not in the project; nothing was written.
    #[error("a user, project, section or tag of the timer no longer exists")]
    MissingReference,
    #[error(transparent)]
    Store(#[from] StoreError),
}

#[derive(Debug, thiserror::Error)]
pub enum StopTimerError {
    /// The timer is no longer running (stopped or discarded meanwhile); nothing was written.
    #[error("no timer is running")]
    NotRunning,
    /// A reference of the entry is gone; the timer still runs.
    #[error("a project, section or tag of the timer no longer exists")]
    MissingReference,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of running timers, scoped to a team like every port. A project or section with
/// a running timer on it is not deleted ([`crate::DeleteError::HasTimeEntries`]); a
/// deleted tag leaves the timers it was on.
#[async_trait]
pub trait TimerRepository: Send + Sync {
    /// The user's running timer, with its tags' current titles.
    async fn running_timer(&self, team: TeamId, user: UserId) -> Result<Option<RunningTimer>, StoreError>;

    /// Stores a new running timer and its tag links together. MUST return
    /// `AlreadyRunning` when the user has a running timer, even when two starts race, and
    /// `MissingReference` as [`crate::TimeEntryRepository::create_entry`] does.
    async fn start_timer(&self, timer: &RunningTimer) -> Result<(), StartTimerError>;

    /// Removes the running timer `timer` (of its team, by its id) and stores `entry` in one
    /// transaction. MUST return `NotRunning` when that timer is not running any more (so
    /// two racing stops make one entry), and `MissingReference` (leaving the timer running)
    /// when the entry's references do not hold.
    async fn stop_timer(&self, timer: &RunningTimer, entry: &TimeEntry) -> Result<(), StopTimerError>;

    /// Removes the running timer `timer` (of its team, by its id) at `at` without making an
    /// entry. MUST return `NotRunning` when that timer is not running.
    async fn discard_timer(&self, timer: &RunningTimer, at: DateTime<Utc>) -> Result<(), StopTimerError>;
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;
    use kernel::{Id, parse_instant};

    use super::*;

    fn timer(started_at: &str) -> RunningTimer {
        RunningTimer {
            id: TimerId::generate(),
            team_id: TeamId::generate(),
            user_id: UserId::generate(),
            task_name: TaskName::parse("Review").unwrap(),
            description: None,
            project_id: None,
            section_id: None,
            tags: Vec::new(),
            started_at: parse_instant(started_at).unwrap(),
        }
    }

    #[test]
    fn a_timer_measures_whole_seconds_and_at_least_one() {
        let timer = timer("2026-11-24T09:00:00Z");
        let at = |offset_ms: i64| timer.started_at + TimeDelta::milliseconds(offset_ms);
        assert_eq!(timer.elapsed(at(5_999)).get(), 5, "cut to whole seconds, never rounded up");
        assert_eq!(timer.elapsed(at(3_600_000)).get(), 3600);
        assert_eq!(timer.elapsed(at(300)).get(), 1, "within its first second");
        assert_eq!(timer.elapsed(at(-2_000)).get(), 1, "a clock behind the start");
    }

    #[test]
    fn the_entry_is_dated_at_the_start_and_made_now() {
        let timer = timer("2026-11-24T09:00:00Z");
        let now = parse_instant("2026-11-24T10:30:15.500Z").unwrap();
        let entry = timer.clone().into_entry(TimeEntryId::generate(), now);
        assert_eq!((entry.date, entry.duration.get()), (timer.started_at, 5415));
        assert_eq!((entry.created_at, entry.user_id, entry.ai_generated), (now, timer.user_id, false));
    }
}
