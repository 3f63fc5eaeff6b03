//! Reminder policies and the passes that chase invoices, over diesel.
//!
//! A pass takes the invoices whose next reminder has come (`invoices_next_reminder`), and
//! for each, in a transaction that starts by touching its row (its lock): the step due,
//! claimed in `invoice_reminders` (whose key refuses a second claim of one step, however
//! passes race), its message and mail job, and the invoice's next step.

use accounts::TeamId;
use async_trait::async_trait;
use billing::InvoiceStatus;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Id, StoreError};
use notify::reminders::{ComposeReminder, ReminderStep, ReminderStore};
use notify::{ReminderPolicy, Schedule};

use super::messages::insert_message;
use super::{load_policy, record_events, refresh_reminders, steps_column, take_invoice};
use crate::TxError;
use crate::clients::load_client;
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, db_run};

/// The statuses of invoices with something due (the others are paid or written off).
const OPEN: [&str; 2] = ["PENDING", "PAID_PARTIAL"];

#[async_trait]
impl ReminderStore for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn reminder_policy(&self, team: TeamId) -> Result<ReminderPolicy, StoreError> {
        db_run!(self, |conn| load_policy!(conn, team))
    }

    #[tracing::instrument(skip(self, policy))]
    async fn set_reminder_policy(
        &self,
        team: TeamId,
        policy: &ReminderPolicy,
        at: DateTime<Utc>,
    ) -> Result<ReminderPolicy, StoreError> {
        let steps = steps_column(policy);
        db_run!(self, |conn| conn
            .transaction(async |conn| {
                diesel::insert_into(reminder_policies::table)
                    .values((
                        reminder_policies::team_id.eq(DbUuid::of(team)),
                        reminder_policies::enabled.eq(policy.enabled),
                        reminder_policies::steps.eq(&steps),
                        reminder_policies::subject.eq(policy.subject.as_str()),
                        reminder_policies::body.eq(policy.body.as_str()),
                        reminder_policies::updated_at.eq(at),
                    ))
                    .on_conflict(reminder_policies::team_id)
                    .do_update()
                    .set((
                        reminder_policies::enabled.eq(policy.enabled),
                        reminder_policies::steps.eq(&steps),
                        reminder_policies::subject.eq(policy.subject.as_str()),
                        reminder_policies::body.eq(policy.body.as_str()),
                        reminder_policies::updated_at.eq(at),
                    ))
                    .execute(conn)
                    .await?;
                refresh_reminders!(
                    conn,
                    team,
                    invoices::due_date
                        .is_not_null()
                        .and(invoices::status.eq_any(OPEN).or(invoices::next_reminder_at.is_not_null()),),
                    TxError<StoreError>
                );
                Ok::<_, TxError<StoreError>>(())
            })
            .await
            .map_err(TxError::into_port)?);
        self.signalling(Ok(policy.clone()))
    }

    #[tracing::instrument(skip(self, compose))]
    async fn queue_due_reminders(
        &self,
        now: DateTime<Utc>,
        compose: &dyn ComposeReminder,
        limit: u32,
    ) -> Result<u32, StoreError> {
        let due: Vec<(DbUuid, DbUuid)> = db_run!(self, |conn| invoices::table
            .filter(invoices::next_reminder_at.le(now))
            .order((invoices::next_reminder_at, invoices::id))
            .limit(i64::from(limit))
            .select((invoices::team_id, invoices::id))
            .load(conn)
            .await
            .or_store()?);
        let mut queued = 0;
        for (team, id) in due {
            let sent = db_run!(self, |conn| conn
                .transaction(async |conn| {
                    let Some(invoice) = take_invoice!(
                        conn,
                        team,
                        id,
                        invoices::next_reminder_at.le(now),
                        invoices::updated_at.eq(invoices::updated_at)
                    ) else {
                        return Ok(false);
                    };
                    let policy = load_policy!(conn, team.into_id::<TeamId>()).map_err(TxError::Refused)?;
                    let client =
                        load_client!(conn, team, DbUuid::of(invoice.client_id)).map_err(TxError::Refused)?;
                    let step = client.as_ref().and_then(|client| {
                        let done = invoice.chasing.reminder_step.and_then(ReminderStep::new);
                        Schedule::of(&invoice, client.details.reminders_enabled, done).step_due(&policy, now)
                    });
                    let mut sent = false;
                    if let (Some(step), Some(client)) = (step, &client) {
                        let team_language: Option<String> = sender_addresses::table
                            .filter(sender_addresses::team_id.eq(team))
                            .filter(sender_addresses::id.eq(DbUuid::of(invoice.sender_id)))
                            .select(sender_addresses::language)
                            .first(conn)
                            .await
                            .optional()?;
                        // A sender's language is one billable speaks, as it was written.
                        let team_language = team_language
                            .and_then(|code| billing::client::language(&code).ok())
                            .unwrap_or_default();
                        let message = compose.compose(&policy, &invoice, client, team_language, step, now);
                        let message_id =
                            message.as_ref().map_or_else(kernel::mint_uuid, |m| m.message.id.as_uuid());
                        let claimed = diesel::insert_into(invoice_reminders::table)
                            .values((
                                invoice_reminders::team_id.eq(team),
                                invoice_reminders::invoice_id.eq(id),
                                invoice_reminders::step.eq(step.days_after_due()),
                                invoice_reminders::message_id.eq(DbUuid(message_id)),
                                invoice_reminders::queued_at.eq(now),
                            ))
                            .on_conflict_do_nothing()
                            .execute(conn)
                            .await?;
                        if claimed == 1
                            && let Some(message) = &message
                        {
                            insert_message!(conn, message);
                            sent = true;
                        }
                        diesel::update(
                            invoices::table.filter(invoices::team_id.eq(team)).filter(invoices::id.eq(id)),
                        )
                        .set(invoices::reminder_step.eq(Some(step.days_after_due())))
                        .execute(conn)
                        .await?;
                    }
                    refresh_reminders!(
                        conn,
                        team.into_id::<TeamId>(),
                        invoices::id.eq(id),
                        TxError<StoreError>
                    );
                    Ok::<_, TxError<StoreError>>(sent)
                })
                .await
                .map_err(TxError::into_port)?);
            if sent {
                queued += 1;
            }
        }
        if queued > 0 {
            self.signal.notify_one();
        }
        Ok(queued)
    }

    #[tracing::instrument(skip(self))]
    async fn mark_overdue(&self, now: DateTime<Utc>, limit: u32) -> Result<u32, StoreError> {
        let candidates: Vec<(DbUuid, DbUuid)> = db_run!(self, |conn| invoices::table
            .filter(invoices::overdue_at.is_null())
            .filter(invoices::due_date.lt(now))
            .filter(invoices::status.eq_any(OPEN))
            .order((invoices::due_date, invoices::id))
            .limit(i64::from(limit))
            .select((invoices::team_id, invoices::id))
            .load(conn)
            .await
            .or_store()?);
        let mut marked = 0;
        for (team, id) in candidates {
            let raised = db_run!(self, |conn| conn
                .transaction(async |conn| {
                    let taken = take_invoice!(
                        conn,
                        team,
                        id,
                        invoices::overdue_at
                            .is_null()
                            .and(invoices::due_date.lt(now))
                            .and(invoices::status.eq_any(OPEN)),
                        invoices::overdue_at.eq(Some(now))
                    );
                    let Some(invoice) = taken else { return Ok(false) };
                    // Nothing due (an invoice of 0): not a debt to chase.
                    if invoice.balance.due().is_zero() || invoice.status == InvoiceStatus::Expired {
                        return Ok(false);
                    }
                    record_events!(
                        conn,
                        notify::raise::invoice_overdue(&invoice).events(&*self.describe, now)
                    );
                    Ok::<_, TxError<StoreError>>(true)
                })
                .await
                .map_err(TxError::into_port)?);
            if raised {
                marked += 1;
            }
        }
        marked += self.mark_expired_quotes(now, limit).await?;
        if marked > 0 {
            self.signal.notify_one();
        }
        Ok(marked)
    }
}
