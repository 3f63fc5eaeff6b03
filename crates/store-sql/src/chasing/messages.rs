//! The message log and its queue over diesel. A message's row is written whole when it is
//! queued (its attachments' bytes beside it); each attempt of its mail job reads it, and
//! the attempt's end is written on the job, the message and its invoice in one
//! transaction, with the events it raises.

use std::collections::HashMap;

use accounts::TeamId;
use async_trait::async_trait;
use billing::{Invoice, InvoiceId, InvoiceStatus};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::DatabaseErrorKind;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Email, Id, StoreError, Words};
use notify::jobs::NewJob;
use notify::mail::{QueueMessageError, Recipients, RetryMessageError};
use notify::{
    Attachment, AttachmentInfo, ClaimedJob, Finish, JobKind, MailSubject, Message, MessageFilter, MessageId,
    MessageKind, MessageStatus, MessageStore, NewMessage, OutgoingMail,
};

use super::{finish_job_row, insert_job, record_events, refresh_reminders, take_invoice};
use crate::TxError;
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, corrupt, db_run, violation};

/// A reminder's invoice as it stands: status, total, paid, credited, written off, and its
/// client's consent to reminders.
type Standing = (String, DbDecimal, DbDecimal, DbDecimal, DbDecimal, bool);

#[derive(Queryable)]
pub(crate) struct MessageRow {
    team_id: DbUuid,
    id: DbUuid,
    invoice_id: Option<DbUuid>,
    credit_note_id: Option<DbUuid>,
    kind: String,
    recipients_to: String,
    recipients_cc: String,
    subject: String,
    body: String,
    status: String,
    attempts: i32,
    last_error: Option<String>,
    message_id: String,
    reminder_step: Option<i32>,
    queued_at: DateTime<Utc>,
    sent_at: Option<DateTime<Utc>>,
    quote_id: Option<DbUuid>,
}

/// An attachment's row without its bytes: message, position, filename, content type, sha256
/// and size.
type AttachmentInfoRow = (DbUuid, i32, String, String, String, i64);

fn addresses(text: &str) -> Result<Vec<Email>, StoreError> {
    text.lines().map(|line| Email::parse(line).map_err(|e| corrupt("recipient", e))).collect()
}

fn address_column(addresses: &[Email]) -> String {
    addresses.iter().map(Email::as_str).collect::<Vec<_>>().join("\n")
}

pub(crate) fn message_from(row: MessageRow, attachments: Vec<AttachmentInfo>) -> Result<Message, StoreError> {
    let recipients = Recipients::new(addresses(&row.recipients_to)?, addresses(&row.recipients_cc)?)
        .map_err(|e| corrupt("recipients", e))?;
    Ok(Message {
        id: row.id.into_id(),
        team_id: row.team_id.into_id(),
        about: notify::mail::Concerning::from_columns(
            row.invoice_id.map(DbUuid::into_id),
            row.credit_note_id.map(DbUuid::into_id),
            row.quote_id.map(DbUuid::into_id),
        )
        .ok_or_else(|| corrupt("message's document", row.id.0))?,
        kind: MessageKind::from_word(&row.kind).ok_or_else(|| corrupt("message kind", &row.kind))?,
        recipients,
        subject: MailSubject::from_stored(row.subject).map_err(|e| corrupt("subject", e))?,
        body: notify::MailBody::from_stored(row.body).map_err(|e| corrupt("body", e))?,
        status: MessageStatus::from_word(&row.status)
            .ok_or_else(|| corrupt("message status", &row.status))?,
        attempts: u32::try_from(row.attempts).map_err(|e| corrupt("attempts", e))?,
        last_error: row.last_error,
        message_id: row.message_id,
        attachments,
        reminder_step: row.reminder_step,
        queued_at: row.queued_at,
        sent_at: row.sent_at,
    })
}

/// Messages from their rows and their attachments' info rows.
fn messages_from(rows: Vec<MessageRow>, infos: Vec<AttachmentInfoRow>) -> Result<Vec<Message>, StoreError> {
    let mut attached: HashMap<DbUuid, Vec<AttachmentInfo>> = HashMap::new();
    for (message, _, filename, content_type, sha256, size) in infos {
        attached.entry(message).or_default().push(AttachmentInfo {
            filename,
            content_type,
            size: u64::try_from(size).map_err(|e| corrupt("attachment size", e))?,
            sha256,
        });
    }
    rows.into_iter()
        .map(|row| {
            let infos = attached.remove(&row.id).unwrap_or_default();
            message_from(row, infos)
        })
        .collect()
}

/// The attachment infos of the team's messages `$ids`, in order.
macro_rules! attachment_infos {
    ($conn:ident, $team:expr, $ids:expr) => {
        message_attachments::table
            .filter(message_attachments::team_id.eq(DbUuid::of($team)))
            .filter(message_attachments::message_id.eq_any($ids))
            .order((message_attachments::message_id, message_attachments::position))
            .select((
                message_attachments::message_id,
                message_attachments::position,
                message_attachments::filename,
                message_attachments::content_type,
                message_attachments::sha256,
                diesel::dsl::sql::<diesel::sql_types::BigInt>("CAST(length(content) AS BIGINT)"),
            ))
            .load::<AttachmentInfoRow>($conn)
            .await
    };
}

/// Inserts the message of `$new` (a `NewMessage`), its attachments and its mail job, due
/// at the message's `queued_at`; in a transaction (`?` on diesel's errors).
macro_rules! insert_message {
    ($conn:ident, $new:expr) => {{
        let new: &notify::NewMessage = $new;
        let message = &new.message;
        let team = DbUuid::of(message.team_id);
        diesel::insert_into(messages::table)
            .values((
                messages::team_id.eq(team),
                messages::id.eq(DbUuid::of(message.id)),
                messages::invoice_id.eq(message.about.invoice().map(DbUuid::of)),
                messages::credit_note_id.eq(message.about.credit_note().map(DbUuid::of)),
                messages::quote_id.eq(message.about.quote().map(DbUuid::of)),
                messages::kind.eq(message.kind.as_str()),
                messages::recipients_to
                    .eq($crate::chasing::messages::address_column_of(message.recipients.to())),
                messages::recipients_cc
                    .eq($crate::chasing::messages::address_column_of(message.recipients.cc())),
                messages::subject.eq(message.subject.as_str()),
                messages::body.eq(message.body.as_str()),
                messages::status.eq(notify::MessageStatus::Queued.as_str()),
                messages::attempts.eq(0),
                messages::message_id.eq(&message.message_id),
                messages::reminder_step.eq(message.reminder_step),
                messages::queued_at.eq(message.queued_at),
            ))
            .execute($conn)
            .await?;
        for (position, attachment) in new.attachments.iter().enumerate() {
            let info = attachment.info();
            diesel::insert_into(message_attachments::table)
                .values((
                    message_attachments::team_id.eq(team),
                    message_attachments::message_id.eq(DbUuid::of(message.id)),
                    message_attachments::position.eq(i32::try_from(position).unwrap_or(i32::MAX)),
                    message_attachments::filename.eq(&attachment.filename),
                    message_attachments::content_type.eq(&attachment.content_type),
                    message_attachments::sha256.eq(&info.sha256),
                    message_attachments::content.eq(&attachment.bytes),
                ))
                .execute($conn)
                .await?;
        }
        $crate::chasing::insert_job!(
            $conn,
            &notify::jobs::NewJob::new(
                message.team_id,
                notify::JobKind::Mail,
                kernel::Id::as_uuid(&message.id),
                message.queued_at
            )
        );
    }};
}
pub(crate) use insert_message;

pub(crate) fn address_column_of(addresses: &[Email]) -> String {
    address_column(addresses)
}

/// Touches the team's invoice `$invoice` (its row lock, so that the events of its thread
/// keep their order), with `$set` as the change; evaluates to the invoice as it now is, or
/// `None` when it is gone.
macro_rules! touch_invoice {
    ($conn:ident, $team:expr, $invoice:expr, $set:expr) => {{
        let invoice = DbUuid::of($invoice);
        take_invoice!($conn, DbUuid::of($team), invoice, invoices::id.eq(invoice), $set)
    }};
}

#[async_trait]
impl MessageStore for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %new.message.team_id, message = %new.message.id))]
    async fn queue_message(&self, new: &NewMessage) -> Result<Message, QueueMessageError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                insert_message!(conn, new);
                Ok::<_, diesel::result::Error>(())
            })
            .await);
        match done {
            Ok(()) => self.signalling(Ok(new.message.clone())),
            // The invoice (or credit note) is not the team's.
            Err(error) if violation(&error) == Some(DatabaseErrorKind::ForeignKeyViolation) => {
                Err(QueueMessageError::NotFound)
            }
            Err(error) => Err(crate::store_error(error).into()),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn get_message(&self, team: TeamId, id: MessageId) -> Result<Option<Message>, StoreError> {
        let (rows, infos): (Vec<MessageRow>, Vec<AttachmentInfoRow>) = db_run!(self, |conn| {
            let rows: Vec<MessageRow> = messages::table
                .filter(messages::team_id.eq(DbUuid::of(team)))
                .filter(messages::id.eq(DbUuid::of(id)))
                .load(conn)
                .await
                .or_store()?;
            let infos = attachment_infos!(conn, team, vec![DbUuid::of(id)]).or_store()?;
            (rows, infos)
        });
        Ok(messages_from(rows, infos)?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn list_messages(&self, team: TeamId, filter: &MessageFilter) -> Result<Vec<Message>, StoreError> {
        let (rows, infos): (Vec<MessageRow>, Vec<AttachmentInfoRow>) = db_run!(self, |conn| {
            let mut query = messages::table
                .filter(messages::team_id.eq(DbUuid::of(team)))
                .order(messages::id.desc())
                .limit(i64::from(filter.limit))
                .into_boxed();
            if let Some(invoice) = filter.invoice {
                query = query.filter(messages::invoice_id.eq(DbUuid::of(invoice)));
            }
            if let Some(quote) = filter.quote {
                query = query.filter(messages::quote_id.eq(DbUuid::of(quote)));
            }
            if let Some(status) = filter.status {
                query = query.filter(messages::status.eq(status.as_str()));
            }
            if let Some(before) = filter.before {
                query = query.filter(messages::id.lt(DbUuid::of(before)));
            }
            let rows: Vec<MessageRow> = query.load(conn).await.or_store()?;
            let ids: Vec<DbUuid> = rows.iter().map(|row| row.id).collect();
            let infos = attachment_infos!(conn, team, ids).or_store()?;
            (rows, infos)
        });
        messages_from(rows, infos)
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn start_sending(&self, job: &ClaimedJob) -> Result<Option<OutgoingMail>, StoreError> {
        let team = DbUuid::of(job.team_id);
        let found: Option<(MessageRow, Vec<(String, String, Vec<u8>)>, Option<Standing>)> =
            db_run!(self, |conn| conn
                .transaction(async |conn| {
                    let row: Option<MessageRow> =
                        diesel::update(
                            messages::table
                                .filter(messages::team_id.eq(team))
                                .filter(messages::id.eq(DbUuid(job.subject)))
                                .filter(messages::status.eq_any([
                                    MessageStatus::Queued.as_str(),
                                    MessageStatus::Sending.as_str(),
                                ])),
                        )
                        .set((
                            messages::status.eq(MessageStatus::Sending.as_str()),
                            messages::attempts.eq(messages::attempts + 1),
                        ))
                        .returning(messages::all_columns)
                        .get_result(conn)
                        .await
                        .optional()?;
                    let Some(row) = row else { return Ok(None) };
                    // A reminder is sent only if it still applies: its invoice and client as
                    // they stand now.
                    let standing: Option<Standing> = if row.kind == MessageKind::Reminder.as_str() {
                        invoices::table
                            .inner_join(
                                clients::table.on(clients::team_id
                                    .eq(invoices::team_id)
                                    .and(clients::id.eq(invoices::client_id))),
                            )
                            .filter(invoices::team_id.eq(team))
                            .filter(invoices::id.nullable().eq(row.invoice_id))
                            .select((
                                invoices::status,
                                invoices::payable,
                                invoices::amount_paid,
                                invoices::amount_credited,
                                invoices::amount_written_off,
                                clients::reminders_enabled,
                            ))
                            .first(conn)
                            .await
                            .optional()?
                    } else {
                        None
                    };
                    let files: Vec<(String, String, Vec<u8>)> = message_attachments::table
                        .filter(message_attachments::team_id.eq(team))
                        .filter(message_attachments::message_id.eq(row.id))
                        .order(message_attachments::position)
                        .select((
                            message_attachments::filename,
                            message_attachments::content_type,
                            message_attachments::content,
                        ))
                        .load(conn)
                        .await?;
                    Ok::<_, diesel::result::Error>(Some((row, files, standing)))
                })
                .await
                .or_store()?);
        let Some((row, files, standing)) = found else { return Ok(None) };
        let moot = match standing {
            Some((status, total, paid, credited, written_off, consent)) => {
                let status = InvoiceStatus::parse(&status).map_err(|e| corrupt("status", e))?;
                let nothing_due = (total.0 - paid.0 - credited.0 - written_off.0).is_zero();
                notify::reminders::moot(nothing_due, status, consent)
            }
            None => None,
        };
        let attachments: Vec<Attachment> = files
            .into_iter()
            .map(|(filename, content_type, bytes)| Attachment { filename, content_type, bytes })
            .collect();
        let message = message_from(row, attachments.iter().map(Attachment::info).collect())?;
        Ok(Some(OutgoingMail { message, attachments, moot }))
    }

    #[tracing::instrument(skip_all, fields(job = %job.id, attempt = job.attempt))]
    async fn finish_sending(
        &self,
        job: &ClaimedJob,
        finish: &Finish,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let team = job.team_id;
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                if !finish_job_row!(conn, job, finish, at) {
                    return Ok(false);
                }
                let mine = messages::table
                    .filter(messages::team_id.eq(DbUuid::of(team)))
                    .filter(messages::id.eq(DbUuid(job.subject)));
                let none: Option<String> = None;
                let row: Option<MessageRow> = match finish {
                    Finish::Done => diesel::update(mine)
                        .set((
                            messages::status.eq(MessageStatus::Sent.as_str()),
                            messages::sent_at.eq(Some(at)),
                            messages::last_error.eq(none),
                        ))
                        .returning(messages::all_columns)
                        .get_result(conn)
                        .await
                        .optional()?,
                    Finish::Retry { error, .. } => diesel::update(mine)
                        .set((
                            messages::status.eq(MessageStatus::Queued.as_str()),
                            messages::last_error.eq(Some(error)),
                        ))
                        .returning(messages::all_columns)
                        .get_result(conn)
                        .await
                        .optional()?,
                    Finish::Failed { error } => diesel::update(mine)
                        .set((
                            messages::status.eq(MessageStatus::Failed.as_str()),
                            messages::last_error.eq(Some(error)),
                        ))
                        .returning(messages::all_columns)
                        .get_result(conn)
                        .await
                        .optional()?,
                };
                // Its invoice was deleted, and it with it: nothing more to tell.
                let Some(row) = row else { return Ok(true) };
                if matches!(finish, Finish::Retry { .. }) {
                    return Ok(true);
                }
                let message = message_from(row, Vec::new()).map_err(TxError::Refused)?;
                // The invoice's row lock keeps its thread's events in order (a quote's
                // message has none: its only event is its failure).
                let touched = match message.about.invoice() {
                    Some(invoice) => {
                        touch_invoice!(conn, team, invoice, invoices::updated_at.eq(invoices::updated_at))
                    }
                    None => None,
                };
                let mut invoice = match (touched, message.status, message.kind) {
                    (Some(mut invoice), MessageStatus::Sent, MessageKind::Invoice)
                        if invoice.chasing.sent_at.is_none() =>
                    {
                        diesel::update(
                            invoices::table
                                .filter(invoices::team_id.eq(DbUuid::of(team)))
                                .filter(invoices::id.eq(DbUuid::of(invoice.id))),
                        )
                        .set(invoices::sent_at.eq(Some(at)))
                        .execute(conn)
                        .await?;
                        invoice.chasing.sent_at = Some(at);
                        Some(invoice)
                    }
                    (Some(mut invoice), MessageStatus::Sent, MessageKind::Reminder) => {
                        // A reminder that reached the client counts as sending the invoice.
                        let sent_at = invoice.chasing.sent_at.unwrap_or(at);
                        diesel::update(
                            invoices::table
                                .filter(invoices::team_id.eq(DbUuid::of(team)))
                                .filter(invoices::id.eq(DbUuid::of(invoice.id))),
                        )
                        .set((
                            invoices::reminders_sent.eq(invoices::reminders_sent + 1),
                            invoices::sent_at.eq(Some(sent_at)),
                        ))
                        .execute(conn)
                        .await?;
                        invoice.chasing.reminders_sent += 1;
                        invoice.chasing.sent_at = Some(sent_at);
                        Some(invoice)
                    }
                    (invoice, _, _) => invoice,
                };
                // Reminders start once the client has the invoice.
                if let Some(invoice) = invoice.as_mut().filter(|_| message.status == MessageStatus::Sent) {
                    let refreshed = refresh_reminders!(
                        conn,
                        team,
                        invoices::id.eq(DbUuid::of(invoice.id)),
                        TxError<StoreError>
                    );
                    invoice.chasing.next_reminder_at = refreshed.next_of(invoice.id);
                }
                let raised = notify::raise::message_finished(&message, invoice.as_ref());
                record_events!(conn, raised.events(&*self.describe, at));
                Ok::<_, TxError<StoreError>>(true)
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn mark_sent(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<Option<Invoice>, StoreError> {
        let id = DbUuid::of(invoice);
        let marked = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let Some(mut marked) = take_invoice!(
                    conn,
                    DbUuid::of(team),
                    id,
                    invoices::sent_at.is_null(),
                    invoices::sent_at.eq(Some(at))
                ) else {
                    // Sent already (nothing changes), or none such.
                    let found =
                        touch_invoice!(conn, team, invoice, invoices::updated_at.eq(invoices::updated_at));
                    return Ok(found);
                };
                marked.chasing.sent_at = Some(at);
                let refreshed = refresh_reminders!(conn, team, invoices::id.eq(id), TxError<StoreError>);
                marked.chasing.next_reminder_at = refreshed.next_of(invoice);
                record_events!(conn, notify::raise::invoice_marked_sent(&marked).events(&*self.describe, at));
                Ok::<_, TxError<StoreError>>(Some(marked))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(marked)
    }

    #[tracing::instrument(skip(self))]
    async fn retry_message(
        &self,
        team: TeamId,
        id: MessageId,
        at: DateTime<Utc>,
    ) -> Result<Message, RetryMessageError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let mine = messages::table
                    .filter(messages::team_id.eq(DbUuid::of(team)))
                    .filter(messages::id.eq(DbUuid::of(id)));
                let row: Option<MessageRow> =
                    diesel::update(mine.filter(messages::status.eq(MessageStatus::Failed.as_str())))
                        .set(messages::status.eq(MessageStatus::Queued.as_str()))
                        .returning(messages::all_columns)
                        .get_result(conn)
                        .await
                        .optional()?;
                let Some(row) = row else {
                    let status: Option<String> =
                        mine.select(messages::status).first(conn).await.optional()?;
                    return Err(TxError::Refused(match status.and_then(|s| MessageStatus::from_word(&s)) {
                        Some(status) => RetryMessageError::NotFailed(status),
                        None => RetryMessageError::NotFound,
                    }));
                };
                insert_job!(conn, &NewJob::new(team, JobKind::Mail, id.as_uuid(), at));
                let infos = attachment_infos!(conn, team, vec![DbUuid::of(id)])?;
                let message = messages_from(vec![row], infos).map_err(|e| TxError::Refused(e.into()))?.pop();
                message.ok_or(TxError::Refused(RetryMessageError::NotFound))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }
}
