//! The timer port over diesel. A stop deletes the timer and inserts its entry in one
//! transaction; the UNIQUE key on (team, user) makes a second start fail however the
//! starts race.

use accounts::{TeamId, UserId};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;
use tracking::{
    Description, RunningTimer, StartTimerError, StopTimerError, TagRef, TaskName, TimeEntry, TimerRepository,
    Title,
};

use crate::chasing::record_events;
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run, violation};

#[derive(Queryable)]
struct TimerRow {
    team_id: DbUuid,
    id: DbUuid,
    user_id: DbUuid,
    task_name: String,
    description: Option<String>,
    project_id: Option<DbUuid>,
    section_id: Option<DbUuid>,
    started_at: DateTime<Utc>,
}

impl TimerRow {
    fn into_timer(self, tags: Vec<(DbUuid, String)>) -> Result<RunningTimer, StoreError> {
        let mut tags = tags
            .into_iter()
            .map(|(id, title)| Ok(TagRef { id: id.into_id(), title: Title::from_stored(title)? }))
            .collect::<Result<Vec<_>, kernel::InvalidValue>>()
            .map_err(|e| corrupt("tag title", e))?;
        TimeEntry::order_tags(&mut tags);
        Ok(RunningTimer {
            id: self.id.into_id(),
            team_id: self.team_id.into_id(),
            user_id: self.user_id.into_id(),
            task_name: TaskName::from_stored(self.task_name).map_err(|e| corrupt("task name", e))?,
            description: self
                .description
                .map(Description::from_stored)
                .transpose()
                .map_err(|e| corrupt("description", e))?,
            project_id: self.project_id.map(DbUuid::into_id),
            section_id: self.section_id.map(DbUuid::into_id),
            tags,
            started_at: self.started_at,
        })
    }
}

/// The running timer `$timer` of `$team`, as a filter on `running_timers`.
macro_rules! the_timer {
    ($team:expr, $timer:expr) => {
        running_timers::table
            .filter(running_timers::team_id.eq(DbUuid::of($team)))
            .filter(running_timers::id.eq(DbUuid::of($timer)))
    };
}

#[async_trait]
impl TimerRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn running_timer(&self, team: TeamId, user: UserId) -> Result<Option<RunningTimer>, StoreError> {
        let (row, tags): (Option<TimerRow>, Vec<(DbUuid, String)>) = db_run!(self, |conn| {
            let row: Option<TimerRow> = running_timers::table
                .filter(running_timers::team_id.eq(DbUuid::of(team)))
                .filter(running_timers::user_id.eq(DbUuid::of(user)))
                .first(conn)
                .await
                .optional()
                .or_store()?;
            let tags = match &row {
                None => Vec::new(),
                Some(row) => running_timer_tags::table
                    .inner_join(
                        tags::table.on(tags::team_id
                            .eq(running_timer_tags::team_id)
                            .and(tags::id.eq(running_timer_tags::tag_id))),
                    )
                    .filter(running_timer_tags::team_id.eq(row.team_id))
                    .filter(running_timer_tags::timer_id.eq(row.id))
                    .select((tags::id, tags::title))
                    .load(conn)
                    .await
                    .or_store()?,
            };
            (row, tags)
        });
        row.map(|row| row.into_timer(tags)).transpose()
    }

    #[tracing::instrument(skip_all, fields(team = %timer.team_id, timer = %timer.id))]
    async fn start_timer(&self, timer: &RunningTimer) -> Result<(), StartTimerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                diesel::insert_into(running_timers::table)
                    .values((
                        running_timers::team_id.eq(DbUuid::of(timer.team_id)),
                        running_timers::id.eq(DbUuid::of(timer.id)),
                        running_timers::user_id.eq(DbUuid::of(timer.user_id)),
                        running_timers::task_name.eq(timer.task_name.as_str()),
                        running_timers::description.eq(timer.description.as_ref().map(Description::as_str)),
                        running_timers::project_id.eq(timer.project_id.map(DbUuid::of)),
                        running_timers::section_id.eq(timer.section_id.map(DbUuid::of)),
                        running_timers::started_at.eq(timer.started_at),
                    ))
                    .execute(conn)
                    .await?;
                for tag in &timer.tags {
                    diesel::insert_into(running_timer_tags::table)
                        .values((
                            running_timer_tags::team_id.eq(DbUuid::of(timer.team_id)),
                            running_timer_tags::timer_id.eq(DbUuid::of(timer.id)),
                            running_timer_tags::tag_id.eq(DbUuid::of(tag.id)),
                        ))
                        .execute(conn)
                        .await?;
                }
                record_events!(
                    conn,
                    notify::raise::timer_started(timer).events(&*self.describe, timer.started_at)
                );
                Ok::<_, diesel::result::Error>(())
            })
            .await
            .map_err(|error| match violation(&error) {
                Some(DatabaseErrorKind::UniqueViolation) => StartTimerError::AlreadyRunning,
                Some(DatabaseErrorKind::ForeignKeyViolation) => StartTimerError::MissingReference,
                _ => StartTimerError::Store(crate::store_error(error)),
            }));
        self.signalling(done)
    }

    #[tracing::instrument(skip_all, fields(team = %timer.team_id, timer = %timer.id))]
    async fn stop_timer(&self, timer: &RunningTimer, entry: &TimeEntry) -> Result<(), StopTimerError> {
        let stopped = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The timer's tag links go with it (ON DELETE CASCADE).
                if diesel::delete(the_timer!(timer.team_id, timer.id)).execute(conn).await? == 0 {
                    return Ok(false);
                }
                super::insert_entry!(conn, entry);
                let raised = notify::raise::timer_stopped(timer, entry);
                record_events!(conn, raised.events(&*self.describe, entry.created_at));
                Ok::<_, diesel::result::Error>(true)
            })
            .await
            .map_err(|error| match violation(&error) {
                Some(DatabaseErrorKind::ForeignKeyViolation) => StopTimerError::MissingReference,
                _ => StopTimerError::Store(crate::store_error(error)),
            })?);
        if stopped { self.signalling(Ok(())) } else { Err(StopTimerError::NotRunning) }
    }

    #[tracing::instrument(skip_all, fields(team = %timer.team_id, timer = %timer.id))]
    async fn discard_timer(&self, timer: &RunningTimer, at: DateTime<Utc>) -> Result<(), StopTimerError> {
        let discarded = db_run!(self, |conn| conn
            .transaction(async |conn| {
                if diesel::delete(the_timer!(timer.team_id, timer.id)).execute(conn).await? == 0 {
                    return Ok(false);
                }
                record_events!(
                    conn,
                    notify::raise::timer_stopped_unlogged(timer).events(&*self.describe, at)
                );
                Ok::<_, diesel::result::Error>(true)
            })
            .await
            .or_store()?);
        if discarded { self.signalling(Ok(())) } else { Err(StopTimerError::NotRunning) }
    }
}
