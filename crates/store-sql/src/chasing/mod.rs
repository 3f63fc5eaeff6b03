//! Sending and chasing over diesel: the event log, the job queue, messages, reminders and
//! webhooks (the ports of the `notify` crate), and the two things every other write of
//! this adapter does in its own transaction: recording the events it raises
//! (`record_events!`), and keeping the next reminder of the invoices it touches
//! (`refresh_reminders!`).

mod events;
mod jobs;
mod messages;
mod reminders;
mod webhooks;

use notify::reminders::{ReminderPolicy, ReminderStep};
use notify::{EventType, mail::Template};

use crate::corrupt;

/// Inserts each of `$events` (`NewEvent`s) into the event log, in order; in a write's
/// transaction, evaluating `?` on diesel's errors.
///
/// `record_events!(batched conn, events)` does the same in a statement per thousand events
/// (eight bound parameters a row), for a write on PostgreSQL that raises many: diesel has
/// no multi-row insert on SQLite, where a row costs no round trip anyway.
macro_rules! record_events {
    ($conn:ident, $events:expr) => {
        for event in $events.iter() {
            diesel::insert_into(events::table)
                .values($crate::chasing::event_row!(event))
                .execute($conn)
                .await?;
        }
    };
    (one_by_one $conn:ident, $events:expr) => {
        $crate::chasing::record_events!($conn, $events)
    };
    (batched $conn:ident, $events:expr) => {
        let rows: Vec<_> = $events.iter().map(|event| $crate::chasing::event_row!(event)).collect();
        for chunk in rows.chunks(1000) {
            diesel::insert_into(events::table).values(chunk.to_vec()).execute($conn).await?;
        }
    };
}

/// The values of the event log's row of `$event` (a `&NewEvent`).
macro_rules! event_row {
    ($event:expr) => {{
        let event: &notify::NewEvent = $event;
        (
            events::team_id.eq(DbUuid::of(event.team_id)),
            events::id.eq(DbUuid::of(event.id)),
            events::kind.eq(event.kind.as_str()),
            events::subject_id.eq(DbUuid(event.subject)),
            events::thread.eq(event.thread.as_str()),
            events::data.eq(event.data.as_str()),
            events::owner_id.eq(event.owner.map(DbUuid::of)),
            events::occurred_at.eq(event.occurred_at),
        )
    }};
}
pub(crate) use event_row;
pub(crate) use record_events;

/// Inserts the job `$job` (a `NewJob`), queued; in a transaction, `?` on diesel's errors.
macro_rules! insert_job {
    ($conn:ident, $job:expr) => {{
        let job: &notify::jobs::NewJob = $job;
        diesel::insert_into(jobs::table)
            .values((
                jobs::team_id.eq(DbUuid::of(job.team_id)),
                jobs::id.eq(DbUuid::of(job.id)),
                jobs::kind.eq(job.kind.as_str()),
                jobs::subject_id.eq(DbUuid(job.subject)),
                jobs::thread.eq(job.order.as_ref().map(|(thread, _)| thread.as_str())),
                jobs::seq.eq(job.order.as_ref().map(|(_, seq)| *seq)),
                jobs::state.eq(notify::JobState::Queued.as_str()),
                jobs::attempts.eq(0),
                jobs::run_at.eq(job.run_at),
                jobs::created_at.eq(job.run_at),
            ))
            .execute($conn)
            .await?;
    }};
}
pub(crate) use insert_job;

/// Records how the attempt of `$job` (a `ClaimedJob`) ended, `$finish` (a `Finish`), at
/// `$at`, if that attempt still holds it; evaluates to whether it did (`?` on diesel's
/// errors).
macro_rules! finish_job_row {
    ($conn:ident, $job:expr, $finish:expr, $at:expr) => {{
        let job: &notify::ClaimedJob = $job;
        let at: chrono::DateTime<chrono::Utc> = $at;
        let held = jobs::table
            .filter(jobs::team_id.eq(DbUuid::of(job.team_id)))
            .filter(jobs::id.eq(DbUuid::of(job.id)))
            .filter(jobs::state.eq(notify::JobState::Running.as_str()))
            .filter(jobs::attempts.eq(i32::try_from(job.attempt).unwrap_or(i32::MAX)));
        let none: Option<chrono::DateTime<chrono::Utc>> = None;
        let updated = match $finish {
            notify::Finish::Done => {
                diesel::update(held)
                    .set((
                        jobs::state.eq(notify::JobState::Done.as_str()),
                        jobs::lease_until.eq(none),
                        jobs::finished_at.eq(Some(at)),
                    ))
                    .execute($conn)
                    .await?
            }
            notify::Finish::Retry { at: retry_at, error } => {
                diesel::update(held)
                    .set((
                        jobs::state.eq(notify::JobState::Queued.as_str()),
                        jobs::lease_until.eq(none),
                        jobs::run_at.eq(*retry_at),
                        jobs::last_error.eq(Some(error.as_str())),
                    ))
                    .execute($conn)
                    .await?
            }
            notify::Finish::Failed { error } => {
                diesel::update(held)
                    .set((
                        jobs::state.eq(notify::JobState::Failed.as_str()),
                        jobs::lease_until.eq(none),
                        jobs::last_error.eq(Some(error.as_str())),
                        jobs::finished_at.eq(Some(at)),
                    ))
                    .execute($conn)
                    .await?
            }
        };
        updated == 1
    }};
}
pub(crate) use finish_job_row;

/// Takes SQLite's write lock at the start of a transaction that reads before it writes
/// (a transaction that read first could not upgrade while another wrote); nothing on
/// PostgreSQL, whose rows lock one by one.
pub(crate) const SQLITE_WRITE_FIRST: &str = "UPDATE jobs SET attempts = attempts WHERE 0";

/// A stored policy row: enabled, steps, subject, body.
pub(crate) type PolicyRow = (bool, String, String, String);

/// The policy a stored row holds.
pub(crate) fn policy_from(row: Option<PolicyRow>) -> Result<ReminderPolicy, kernel::StoreError> {
    let Some((enabled, steps, subject, body)) = row else { return Ok(ReminderPolicy::default()) };
    let steps = steps
        .split(',')
        .filter(|step| !step.is_empty())
        .map(str::parse)
        .collect::<Result<Vec<i32>, _>>()
        .map_err(|e| corrupt("reminder steps", e))?;
    let subject = Template::parse(subject).map_err(|e| corrupt("reminder subject", e))?;
    let body = Template::parse(body).map_err(|e| corrupt("reminder body", e))?;
    ReminderPolicy::new(enabled, &steps, subject, body).map_err(|e| corrupt("reminder policy", e))
}

/// A policy's steps as its column holds them: `-3,0,7`.
pub(crate) fn steps_column(policy: &ReminderPolicy) -> String {
    policy.steps().iter().map(|step| step.days_after_due().to_string()).collect::<Vec<_>>().join(",")
}

/// The team's reminder policy (a `Result<_, StoreError>`).
macro_rules! load_policy {
    ($conn:ident, $team:expr) => {{
        let row: Result<Option<$crate::chasing::PolicyRow>, diesel::result::Error> = reminder_policies::table
            .filter(reminder_policies::team_id.eq(DbUuid::of($team)))
            .select((
                reminder_policies::enabled,
                reminder_policies::steps,
                reminder_policies::subject,
                reminder_policies::body,
            ))
            .first($conn)
            .await
            .optional();
        row.map_err($crate::store_error).and_then($crate::chasing::policy_from)
    }};
}
pub(crate) use load_policy;

/// What the schedule of one invoice is computed from: id, due date, when it was sent,
/// status, total, paid, credited, written off, last step handled, next reminder as stored,
/// its client's consent.
pub(crate) type ScheduleRow = (
    crate::types::DbUuid,
    Option<chrono::DateTime<chrono::Utc>>,
    Option<chrono::DateTime<chrono::Utc>>,
    String,
    crate::types::DbDecimal,
    crate::types::DbDecimal,
    crate::types::DbDecimal,
    crate::types::DbDecimal,
    Option<i32>,
    Option<chrono::DateTime<chrono::Utc>>,
    bool,
);

/// The next reminder of the invoice a schedule row describes under `policy`, and whether it
/// differs from the one stored.
pub(crate) fn schedule_of(
    row: &ScheduleRow,
    policy: &ReminderPolicy,
) -> Result<(Option<chrono::DateTime<chrono::Utc>>, bool), kernel::StoreError> {
    let (_, due, sent_at, status, total, paid, credited, written_off, step, stored, consent) = row;
    let status = billing::InvoiceStatus::parse(status).map_err(|e| corrupt("status", e))?;
    let nothing_due = (total.0 - paid.0 - credited.0 - written_off.0).is_zero();
    let schedule = notify::Schedule {
        due: *due,
        sent: sent_at.is_some(),
        open: notify::reminders::is_open(nothing_due, status),
        client_takes_reminders: *consent,
        done: step.and_then(ReminderStep::new),
    };
    let next = schedule.next_at(policy);
    Ok((next, next != *stored))
}

/// The next reminders `refresh_reminders!` left.
#[derive(Debug, Default)]
pub(crate) struct Refreshed {
    enabled: bool,
    next: std::collections::HashMap<crate::types::DbUuid, Option<chrono::DateTime<chrono::Utc>>>,
}

impl Refreshed {
    pub(crate) fn record(&mut self, id: crate::types::DbUuid, next: Option<chrono::DateTime<chrono::Utc>>) {
        self.next.insert(id, next);
    }

    pub(crate) fn enable(&mut self) {
        self.enabled = true;
    }

    /// The next reminder of the invoice `id` now.
    pub(crate) fn next_of(&self, id: impl kernel::Id) -> Option<chrono::DateTime<chrono::Utc>> {
        if self.enabled { self.next.get(&crate::types::DbUuid::of(id)).copied().flatten() } else { None }
    }
}

/// Sets the next reminder of the team's invoices that `$which` (a condition on `invoices`)
/// picks, as the team's policy, their books, their due dates and their clients' consent
/// say; in a write's transaction, whose error type `$error` takes a `StoreError`. Evaluates
/// to the [`Refreshed`] schedule.
macro_rules! refresh_reminders {
    ($conn:ident, $team:expr, $which:expr, $error:ty) => {{
        let team = DbUuid::of($team);
        let policy = $crate::chasing::load_policy!($conn, $team).map_err(|e| <$error>::Refused(e.into()))?;
        let mut refreshed = $crate::chasing::Refreshed::default();
        if policy.enabled {
            let rows: Vec<$crate::chasing::ScheduleRow> = invoices::table
                .inner_join(
                    clients::table
                        .on(clients::team_id.eq(invoices::team_id).and(clients::id.eq(invoices::client_id))),
                )
                .filter(invoices::team_id.eq(team))
                .filter($which)
                .select((
                    invoices::id,
                    invoices::due_date,
                    invoices::sent_at,
                    invoices::status,
                    invoices::payable,
                    invoices::amount_paid,
                    invoices::amount_credited,
                    invoices::amount_written_off,
                    invoices::reminder_step,
                    invoices::next_reminder_at,
                    clients::reminders_enabled,
                ))
                .load($conn)
                .await?;
            for row in &rows {
                let (next, changed) =
                    $crate::chasing::schedule_of(row, &policy).map_err(|e| <$error>::Refused(e.into()))?;
                if changed {
                    diesel::update(
                        invoices::table.filter(invoices::team_id.eq(team)).filter(invoices::id.eq(row.0)),
                    )
                    .set(invoices::next_reminder_at.eq(next))
                    .execute($conn)
                    .await?;
                }
                refreshed.record(row.0, next);
            }
            refreshed.enable();
        } else {
            diesel::update(
                invoices::table
                    .filter(invoices::team_id.eq(team))
                    .filter($which)
                    .filter(invoices::next_reminder_at.is_not_null()),
            )
            .set(invoices::next_reminder_at.eq(None::<chrono::DateTime<chrono::Utc>>))
            .execute($conn)
            .await?;
        }
        refreshed
    }};
}
pub(crate) use refresh_reminders;

/// Locks the team's invoice `$id` if `$condition` (on `invoices`) still holds, setting
/// `$set`; evaluates to the invoice with its items, or `None`.
macro_rules! take_invoice {
    ($conn:ident, $team:expr, $id:expr, $condition:expr, $set:expr) => {{
        let row: Option<$crate::invoice_rows::InvoiceRow> = diesel::update(
            invoices::table
                .filter(invoices::team_id.eq($team))
                .filter(invoices::id.eq($id))
                .filter($condition),
        )
        .set($set)
        .returning(invoices::all_columns)
        .get_result($conn)
        .await
        .optional()?;
        match row {
            None => None,
            Some(row) => {
                let lines: Vec<$crate::invoice_rows::LineRow> = line_items::table
                    .filter(line_items::team_id.eq($team))
                    .filter(line_items::invoice_id.eq($id))
                    .order(line_items::position)
                    .load($conn)
                    .await?;
                $crate::invoice_rows::assemble(vec![row], lines).map_err($crate::TxError::Refused)?.pop()
            }
        }
    }};
}
pub(crate) use take_invoice;

/// The type of a stored event.
pub(crate) fn event_type(text: &str) -> Result<EventType, kernel::StoreError> {
    <EventType as kernel::Words>::from_word(text).ok_or_else(|| corrupt("event type", text))
}
