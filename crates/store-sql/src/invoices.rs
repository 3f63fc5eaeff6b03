//! The invoice and sender-address ports over diesel.
//!
//! Every write transaction starts with a write (the serial counter, or touching the
//! invoice row) so that SQLite takes its write lock before reading anything: concurrent
//! writers then wait on the busy timeout instead of failing to upgrade a read snapshot.
//! On PostgreSQL the counter row's lock orders concurrent creates of one team, which is
//! what keeps serials gapless.

use accounts::TeamId;
use async_trait::async_trait;
use billing::client::{OptionalText, RequiredText};
use billing::quote::{ConversionKind, QuoteStatus};
use billing::sender::{Logo, PaymentDetails, SenderPostalCode};
use billing::store::{
    BillTo, CreateInvoiceError, DeleteInvoiceError, NewInvoice, SaveInvoiceError, SenderChoice, StatusWrite,
    TimeToBill,
};
use billing::{
    ClientId, Invoice, InvoiceFilter, InvoiceId, InvoiceRepository, InvoiceStatus, SenderAddress,
    SenderAddressId, SenderDetails, SenderRepository, Serial,
};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Email, InvalidValue, StoreError};

use crate::chasing::{record_events, refresh_reminders};
use crate::clients::{details_values, insert_client};
use crate::invoice_rows::{InvoiceRow, LineRow, assemble, exchange_of, insert_lines};
use crate::ledger::{balance_values, insert_entry, load_books};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

/// SQL's functions the listing uses.
pub(crate) mod sql {
    use diesel::sql_types::{Nullable, Text};

    diesel::define_sql_function! {
        /// `lower`: on SQLite it folds ASCII letters only.
        fn lower(text: Nullable<Text>) -> Nullable<Text>;
    }
}
pub(crate) use sql::lower;

/// `text` as a `LIKE` pattern that finds it anywhere, with `\` escaping the wildcards.
pub(crate) fn anywhere(text: &str) -> String {
    let mut pattern = String::with_capacity(text.len() + 2);
    pattern.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Which PENDING invoices a status filter takes, beside those whose stored status it names.
pub(crate) enum PendingTaken {
    None,
    All,
    /// Not (yet) due at the filter's `now`: they read PENDING.
    NotDue,
    /// Due before `now`: they read OVERDUE.
    Overdue,
}

/// The stored statuses a filter takes as they are, and which PENDING ones it takes.
pub(crate) fn status_terms(filter: &InvoiceFilter) -> (Vec<&'static str>, PendingTaken) {
    let wants = |status| filter.statuses.contains(&status);
    let stored =
        filter.statuses.iter().filter(|s| **s != InvoiceStatus::Pending).map(|s| s.as_str()).collect();
    let pending = match (wants(InvoiceStatus::Pending), wants(InvoiceStatus::Overdue)) {
        (true, true) => PendingTaken::All,
        (true, false) => PendingTaken::NotDue,
        (false, true) => PendingTaken::Overdue,
        (false, false) => PendingTaken::None,
    };
    (stored, pending)
}

/// The invoices of `$team` that `$filter` shows, in listing order, at most its `limit`.
macro_rules! filtered_invoices {
    ($team:expr, $filter:expr) => {{
        let team = DbUuid::of($team);
        let filter: &InvoiceFilter = $filter;
        let mut query = invoices::table
            .filter(invoices::team_id.eq(team))
            .order((invoices::issue_date.desc(), invoices::serial.desc()))
            .into_boxed();
        if !filter.statuses.is_empty() {
            let (stored, pending) = status_terms(filter);
            let stored = invoices::status.eq_any(stored);
            let is_pending = invoices::status.eq(InvoiceStatus::Pending.as_str());
            let due = invoices::due_date;
            query = match pending {
                PendingTaken::None => query.filter(stored),
                PendingTaken::All => query.filter(stored.or(is_pending)),
                PendingTaken::NotDue => {
                    query.filter(stored.or(is_pending.and(due.is_null().or(due.ge(filter.now)))))
                }
                PendingTaken::Overdue => query.filter(stored.or(is_pending.and(due.lt(filter.now)))),
            };
        }
        if let Some(client) = filter.client {
            query = query.filter(invoices::client_id.eq(DbUuid::of(client)));
        }
        if let Some(from) = filter.issued_from {
            query = query.filter(invoices::issue_date.ge(from));
        }
        if let Some(before) = filter.issued_before {
            query = query.filter(invoices::issue_date.lt(before));
        }
        if let Some(text) = &filter.text {
            let pattern = || lower(Some(anywhere(text.as_str())));
            let named = billing::numbering::NumberQuery::of(text.as_str());
            // A counter beyond the column's range names no invoice; 0 is no counter.
            let counter = named.counter.and_then(|c| i32::try_from(c).ok()).unwrap_or(0);
            let clients_named = clients::table
                .filter(clients::team_id.eq(team))
                .filter(lower(clients::name.nullable()).like(pattern()).escape('\\'))
                .select(clients::id);
            query = query.filter(
                invoices::number_key
                    .eq(named.key)
                    .or(invoices::number_counter.eq(counter))
                    .or(lower(invoices::description).like(pattern()).escape('\\'))
                    .or(invoices::client_id.eq_any(clients_named)),
            );
        }
        if let Some(after) = filter.after {
            let serial = i32::try_from(after.serial.number()).unwrap_or(i32::MAX);
            query = query.filter(
                invoices::issue_date
                    .lt(after.issue_date)
                    .or(invoices::issue_date.eq(after.issue_date).and(invoices::serial.lt(serial))),
            );
        }
        if let Some(limit) = filter.limit {
            query = query.limit(i64::from(limit));
        }
        query
    }};
}

pub(crate) use filtered_invoices;

/// The columns an update writes (the status and the balance are the books': see
/// `balance_values!`).
macro_rules! invoice_values {
    ($invoice:expr) => {
        (
            invoices::description.eq($invoice.description.as_ref().map(|d| d.as_str())),
            invoices::issue_date.eq($invoice.issue_date),
            invoices::due_date.eq($invoice.due_date),
            invoices::tax_percentage.eq(DbDecimal($invoice.tax_rule.percentage())),
            invoices::tax.eq(DbDecimal($invoice.totals.tax)),
            invoices::subtotal.eq(DbDecimal($invoice.totals.subtotal)),
            invoices::total.eq(DbDecimal($invoice.totals.total)),
            invoices::payable.eq(DbDecimal($invoice.payable())),
            invoices::client_id.eq(DbUuid::of($invoice.client_id)),
            invoices::sender_id.eq(DbUuid::of($invoice.sender_id)),
            invoices::updated_at.eq($invoice.updated_at),
            invoices::vat_category.eq($invoice.vat.category().as_str()),
            invoices::vat_exemption_reason.eq($invoice.vat.exemption_reason().map(|r| r.as_str())),
            invoices::exchange.eq($crate::invoice_rows::exchange_text(&$invoice.exchange)),
            {
                let (from, to, is_period, order) = $crate::invoice_rows::supply_columns(&$invoice.supply);
                (
                    invoices::service_from.eq(from),
                    invoices::service_to.eq(to),
                    invoices::service_is_period.eq(is_period),
                    invoices::purchase_order.eq(order),
                )
            },
            {
                let (percentage, amount) = $crate::invoice_rows::discount_columns($invoice.discount);
                (invoices::discount_percentage.eq(percentage), invoices::discount_amount.eq(amount))
            },
        )
    };
}
pub(crate) use invoice_values;

/// Whether the team has the client / the sender address; evaluates to a diesel result.
macro_rules! exists {
    ($conn:ident, $table:ident, $team:expr, $id:expr) => {
        diesel::select(diesel::dsl::exists(
            $table::table
                .filter($table::team_id.eq(DbUuid::of($team)))
                .filter($table::id.eq(DbUuid::of($id))),
        ))
        .get_result::<bool>($conn)
        .await
    };
}
pub(crate) use exists;

/// Whether a create keeps what it did, or only answers what it would have made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keep {
    Commit,
    RollBack,
}

/// Inserts `$sender` as its team's default sender address. The partial unique index on
/// `(team_id) WHERE is_default` turns a second default into a conflict, which is ignored.
macro_rules! insert_default_sender {
    ($conn:expr, $sender:expr) => {
        diesel::insert_into(sender_addresses::table)
            .values((
                sender_addresses::team_id.eq(DbUuid::of($sender.team_id)),
                sender_addresses::id.eq(DbUuid::of($sender.id)),
                sender_addresses::is_default.eq(true),
                sender_values!($sender.details),
                sender_addresses::created_at.eq($sender.created_at),
                sender_addresses::updated_at.eq($sender.updated_at),
            ))
            .on_conflict_do_nothing()
    };
}
pub(crate) use insert_default_sender;

/// The sender address `$choice` names, in a create's transaction: a given one, checked to
/// be the team's, or the team's default, made from the fallback when there is none.
macro_rules! settle_sender {
    ($conn:ident, $team:expr, $choice:expr) => {
        match $choice {
            SenderChoice::Given(id) => {
                if !exists!($conn, sender_addresses, $team, *id)? {
                    return Err(TxError::Refused(CreateInvoiceError::UnknownSender));
                }
                *id
            }
            SenderChoice::TeamDefault { fallback } => {
                let default = sender_addresses::table
                    .filter(sender_addresses::team_id.eq(DbUuid::of($team)))
                    .filter(sender_addresses::is_default.eq(true))
                    .select(sender_addresses::id);
                match default.first::<DbUuid>($conn).await.optional()? {
                    Some(id) => id.into_id(),
                    None => {
                        // A concurrent first invoice may make it first: its default stands
                        // (the partial unique index), and is read back.
                        insert_default_sender!($conn, fallback).execute($conn).await?;
                        default.first::<DbUuid>($conn).await?.into_id()
                    }
                }
            }
        }
    };
}
pub(crate) use settle_sender;

/// Marks `$wanted` (distinct, in order) billed by `$invoice` in a create's transaction,
/// each only if still billable, unbilled and unchanged since it was read; else refuses
/// with `TimeTaken`, and the transaction makes nothing.
macro_rules! bill_entries {
    ($conn:expr, $team:expr, $invoice:expr, $wanted:expr) => {
        let wanted: Vec<TimeToBill> = $wanted;
        let mut billed: Vec<TimeToBill> = Vec::with_capacity(wanted.len());
        // In slices, so that no statement binds more parameters than SQLite takes.
        for slice in wanted.chunks(1000) {
            let ids: Vec<DbUuid> = slice.iter().map(|entry| DbUuid(entry.id)).collect();
            let marked: Vec<(DbUuid, DateTime<Utc>)> = diesel::update(
                time_entries::table
                    .filter(time_entries::team_id.eq(DbUuid::of($team)))
                    .filter(time_entries::id.eq_any(ids))
                    .filter(time_entries::billable.eq(true))
                    .filter(time_entries::invoice_id.is_null()),
            )
            .set(time_entries::invoice_id.eq(Some(DbUuid::of($invoice))))
            .returning((time_entries::id, time_entries::updated_at))
            .get_results($conn)
            .await?;
            billed.extend(marked.into_iter().map(|(id, updated_at)| TimeToBill { id: id.0, updated_at }));
        }
        // Each as it was read: one changed since is not billed on its old lines.
        billed.sort_unstable();
        if billed != wanted {
            return Err(TxError::Refused(CreateInvoiceError::TimeTaken));
        }
    };
}
pub(crate) use bill_entries;

/// What an update reads of the invoice it locks: paid, credited, written off, status, due date.
/// What an update reads back under the row's lock: the books (paid, credited, written
/// off, refundable), the status and due date before, and what fixes the rate (the
/// currency, the exchange, when it was sent).
type Recorded = (
    (DbDecimal, DbDecimal, DbDecimal, DbDecimal),
    String,
    Option<DateTime<Utc>>,
    (String, Option<String>, Option<DateTime<Utc>>),
);

#[async_trait]
impl InvoiceRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn list_invoices(&self, team: TeamId, filter: &InvoiceFilter) -> Result<Vec<Invoice>, StoreError> {
        let (rows, lines): (Vec<InvoiceRow>, Vec<LineRow>) = db_run!(self, |conn| {
            let rows = filtered_invoices!(team, filter).load(conn).await.or_store()?;
            let lines = line_items::table
                .filter(line_items::team_id.eq(DbUuid::of(team)))
                .filter(line_items::invoice_id.eq_any(filtered_invoices!(team, filter).select(invoices::id)))
                .order((line_items::invoice_id, line_items::position))
                .load(conn)
                .await
                .or_store()?;
            (rows, lines)
        });
        assemble(rows, lines)
    }

    #[tracing::instrument(skip(self))]
    async fn get_invoice(&self, team: TeamId, id: InvoiceId) -> Result<Option<Invoice>, StoreError> {
        let (row, lines): (Option<InvoiceRow>, Vec<LineRow>) = db_run!(self, |conn| {
            let row = invoices::table
                .filter(invoices::team_id.eq(DbUuid::of(team)))
                .filter(invoices::id.eq(DbUuid::of(id)))
                .first(conn)
                .await
                .optional()
                .or_store()?;
            let lines = line_items::table
                .filter(line_items::team_id.eq(DbUuid::of(team)))
                .filter(line_items::invoice_id.eq(DbUuid::of(id)))
                .order(line_items::position)
                .load(conn)
                .await
                .or_store()?;
            (row, lines)
        });
        Ok(assemble(row.into_iter().collect(), lines)?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn find_invoice(&self, id: InvoiceId) -> Result<Option<Invoice>, StoreError> {
        let team: Option<DbUuid> = db_run!(self, |conn| invoices::table
            .filter(invoices::id.eq(DbUuid::of(id)))
            .select(invoices::team_id)
            .first(conn)
            .await
            .optional()
            .or_store()?);
        match team {
            Some(team) => self.get_invoice(team.into_id(), id).await,
            None => Ok(None),
        }
    }

    #[tracing::instrument(skip_all, fields(team = %new.team_id, invoice = %new.id))]
    async fn create_invoice(&self, new: NewInvoice) -> Result<Invoice, CreateInvoiceError> {
        self.store_invoice(new, Keep::Commit).await
    }

    #[tracing::instrument(skip_all, fields(team = %new.team_id, invoice = %new.id))]
    async fn preview_invoice(&self, new: NewInvoice) -> Result<Invoice, CreateInvoiceError> {
        self.store_invoice(new, Keep::RollBack).await
    }

    #[tracing::instrument(skip_all, fields(team = %invoice.team_id, invoice = %invoice.id))]
    async fn replace_invoice(
        &self,
        invoice: &Invoice,
        lines_changed: bool,
        status: StatusWrite,
    ) -> Result<Invoice, SaveInvoiceError> {
        let team = invoice.team_id;
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let mine = invoices::table
                    .filter(invoices::team_id.eq(DbUuid::of(team)))
                    .filter(invoices::id.eq(DbUuid::of(invoice.id)));
                // A write first: it takes SQLite's write lock (PostgreSQL's lock of the row,
                // against other writes of its books) and finds the invoice.
                let recorded: Option<Recorded> = diesel::update(mine)
                    .set(invoices::updated_at.eq(invoice.updated_at))
                    .returning((
                        (
                            invoices::amount_paid,
                            invoices::amount_credited,
                            invoices::amount_written_off,
                            invoices::credit_refundable,
                        ),
                        invoices::status,
                        invoices::due_date,
                        (invoices::currency, invoices::exchange, invoices::sent_at),
                    ))
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(((paid, credited, written_off, refundable), before, due_before, chasing)) = recorded
                else {
                    return Err(TxError::Refused(SaveInvoiceError::NotFound));
                };
                // A rate is changed only while nothing moved, checked under the row's lock.
                let (currency, exchange, sent_at) = chasing;
                let stored =
                    exchange_of(exchange.as_deref(), &currency).map_err(|e| TxError::Refused(e.into()))?;
                let moved = paid.0 + credited.0 + written_off.0 + refundable.0;
                billing::store::rate_may_change(&stored, &invoice.exchange, moved, sent_at.is_some())
                    .map_err(TxError::Refused)?;
                let before = InvoiceStatus::parse(&before)
                    .map_err(|e| TxError::Refused(corrupt("status", e).into()))?;
                if !exists!(conn, clients, team, invoice.client_id)? {
                    return Err(TxError::Refused(SaveInvoiceError::UnknownClient));
                }
                if !exists!(conn, sender_addresses, team, invoice.sender_id)? {
                    return Err(TxError::Refused(SaveInvoiceError::UnknownSender));
                }
                // The books first: a new total below what was recorded is refused before
                // anything is written (PostgreSQL's check would refuse it too).
                let (entries, credits) = load_books!(conn, team, invoice.id);
                let recorded = paid.0 + credited.0 + written_off.0;
                let (balance, entry) =
                    billing::store::rebalance(invoice, recorded, &entries, &credits, status)
                        .map_err(|rule| TxError::Refused(SaveInvoiceError::Ledger(rule)))?;
                diesel::update(mine)
                    .set((invoice_values!(invoice), balance_values!(balance)))
                    .execute(conn)
                    .await?;
                if due_before != invoice.due_date {
                    // A new due date: the invoice is announced overdue again once it passes.
                    diesel::update(mine)
                        .set(invoices::overdue_at.eq(None::<DateTime<Utc>>))
                        .execute(conn)
                        .await?;
                }
                if let Some(entry) = &entry {
                    insert_entry!(conn, entry);
                }
                if lines_changed {
                    diesel::delete(
                        line_items::table
                            .filter(line_items::team_id.eq(DbUuid::of(team)))
                            .filter(line_items::invoice_id.eq(DbUuid::of(invoice.id))),
                    )
                    .execute(conn)
                    .await?;
                    insert_lines!(conn, invoice);
                }
                let next = refresh_reminders!(
                    conn,
                    team,
                    invoices::id.eq(DbUuid::of(invoice.id)),
                    TxError<SaveInvoiceError>
                );
                let saved = Invoice {
                    balance,
                    status: balance.status(),
                    chasing: billing::Chasing {
                        next_reminder_at: next.next_of(invoice.id),
                        ..invoice.chasing
                    },
                    ..invoice.clone()
                };
                let raised = notify::raise::invoice_replaced(before, &saved, entry.as_ref());
                record_events!(conn, raised.events(&*self.describe, invoice.updated_at));
                Ok::<_, TxError<SaveInvoiceError>>(saved)
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn delete_invoice(
        &self,
        team: TeamId,
        id: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<(), DeleteInvoiceError> {
        // Its items go with it (ON DELETE CASCADE); its books hold it (restricting keys).
        // A write comes first, with no read before it: on SQLite a transaction that read
        // before its first write fails with "database is locked" when another connection
        // wrote in between. Touching the row takes the lock and tells whether it exists.
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let mine = invoices::table
                    .filter(invoices::team_id.eq(DbUuid::of(team)))
                    .filter(invoices::id.eq(DbUuid::of(id)));
                let row: Option<InvoiceRow> = diesel::update(mine)
                    .set(invoices::updated_at.eq(invoices::updated_at))
                    .returning(invoices::all_columns)
                    .get_result(conn)
                    .await
                    .optional()?;
                let Some(row) = row else { return Err(TxError::Refused(DeleteInvoiceError::NotFound)) };
                let lines: Vec<LineRow> = line_items::table
                    .filter(line_items::team_id.eq(DbUuid::of(team)))
                    .filter(line_items::invoice_id.eq(DbUuid::of(id)))
                    .order(line_items::position)
                    .load(conn)
                    .await?;
                let gone = assemble(vec![row], lines)
                    .map_err(|e| TxError::Refused(e.into()))?
                    .pop()
                    .ok_or(TxError::Refused(DeleteInvoiceError::NotFound))?;
                if let Some(link) =
                    gone.from_quote.as_ref().filter(|link| link.kind == ConversionKind::Deposit)
                {
                    // The quote's lock keeps out a final invoice made meanwhile, which would
                    // deduct what is being deleted.
                    let quote = DbUuid::of(link.quote_id);
                    diesel::update(
                        quotes::table
                            .filter(quotes::team_id.eq(DbUuid::of(team)))
                            .filter(quotes::id.eq(quote)),
                    )
                    .set(quotes::updated_at.eq(quotes::updated_at))
                    .execute(conn)
                    .await?;
                    let deducting: Option<(String, i32)> = invoices::table
                        .filter(invoices::team_id.eq(DbUuid::of(team)))
                        .filter(invoices::quote_id.eq(quote))
                        .filter(invoices::quote_kind.eq(ConversionKind::Final.as_str()))
                        .select((invoices::number, invoices::number_counter))
                        .first(conn)
                        .await
                        .optional()?;
                    if let Some((text, counter)) = deducting {
                        let by = billing::DocumentNumber::stored(text, counter.unsigned_abs());
                        return Err(TxError::Refused(DeleteInvoiceError::Deducted { by }));
                    }
                }
                match diesel::delete(mine).execute(conn).await {
                    Ok(_) => {}
                    // Ledger entries or credit notes: their keys restrict the delete.
                    Err(error) if crate::violation(&error).is_some() => {
                        return Err(TxError::Refused(DeleteInvoiceError::HasMoney));
                    }
                    Err(error) => return Err(error.into()),
                }
                // Its quote's row goes with it (ON DELETE CASCADE); a quote whose full or final
                // invoice went is accepted again, and lists so.
                if let Some(link) =
                    gone.from_quote.as_ref().filter(|link| link.kind != ConversionKind::Deposit)
                {
                    diesel::update(
                        quotes::table
                            .filter(quotes::team_id.eq(DbUuid::of(team)))
                            .filter(quotes::id.eq(DbUuid::of(link.quote_id)))
                            .filter(quotes::status.eq(QuoteStatus::Converted.as_str())),
                    )
                    .set(quotes::status.eq(QuoteStatus::Accepted.as_str()))
                    .execute(conn)
                    .await?;
                }
                record_events!(conn, notify::raise::invoice_deleted(&gone).events(&*self.describe, at));
                Ok(())
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }
}
#[derive(Queryable)]
struct SenderRow {
    team_id: DbUuid,
    id: DbUuid,
    #[expect(dead_code, reason = "how the default is found; not part of the address")]
    is_default: bool,
    name: String,
    line1: String,
    line2: String,
    line3: String,
    postal_code: String,
    email: Option<String>,
    vat_number: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    payment_details: String,
    logo: Option<Vec<u8>>,
    city: String,
    country_code: Option<String>,
    iban: Option<String>,
    bic: Option<String>,
    contact_name: String,
    contact_phone: String,
    contact_email: Option<String>,
    peppol_id: Option<String>,
    language: String,
    payment_qr: String,
}

impl TryFrom<SenderRow> for SenderAddress {
    type Error = StoreError;
    fn try_from(row: SenderRow) -> Result<Self, StoreError> {
        let details = (|| -> Result<SenderDetails, InvalidValue> {
            Ok(SenderDetails {
                name: RequiredText::from_stored(row.name)?,
                line1: OptionalText::from_stored(row.line1)?,
                line2: OptionalText::from_stored(row.line2)?,
                line3: OptionalText::from_stored(row.line3)?,
                postal_code: SenderPostalCode::from_stored(row.postal_code)?,
                email: row.email.map(Email::parse).transpose()?,
                vat_number: OptionalText::from_stored(row.vat_number)?,
                payment_details: PaymentDetails::parse(row.payment_details)?,
                logo: row.logo.map(Logo::parse).transpose()?,
                city: OptionalText::from_stored(row.city)?,
                country_code: row.country_code.as_deref().map(billing::CountryCode::parse).transpose()?,
                iban: row.iban.as_deref().map(billing::Iban::parse).transpose()?,
                bic: row.bic.as_deref().map(billing::Bic::parse).transpose()?,
                contact_name: OptionalText::from_stored(row.contact_name)?,
                contact_phone: OptionalText::from_stored(row.contact_phone)?,
                contact_email: row.contact_email.map(Email::parse).transpose()?,
                peppol_id: row.peppol_id.as_deref().map(billing::peppol::PeppolId::parse).transpose()?,
                language: billing::client::language(&row.language)?,
                payment_qr: <billing::payment_qr::QrChoice as kernel::Words>::parse_word(&row.payment_qr)?,
            })
        })()
        .map_err(|e| corrupt("sender address", e))?;
        Ok(SenderAddress {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            details,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! sender_values {
    ($details:expr) => {
        (
            sender_addresses::name.eq($details.name.as_str()),
            sender_addresses::line1.eq($details.line1.as_str()),
            sender_addresses::line2.eq($details.line2.as_str()),
            sender_addresses::line3.eq($details.line3.as_str()),
            sender_addresses::postal_code.eq($details.postal_code.as_str()),
            sender_addresses::email.eq($details.email.as_ref().map(Email::as_str)),
            sender_addresses::vat_number.eq($details.vat_number.as_str()),
            sender_addresses::payment_details.eq($details.payment_details.as_str()),
            sender_addresses::logo.eq($details.logo.as_ref().map(Logo::bytes)),
            sender_addresses::city.eq($details.city.as_str()),
            sender_addresses::country_code.eq($details.country_code.map(billing::CountryCode::as_str)),
            sender_addresses::iban.eq($details.iban.as_ref().map(billing::Iban::as_str)),
            sender_addresses::bic.eq($details.bic.as_ref().map(billing::Bic::as_str)),
            sender_addresses::contact_name.eq($details.contact_name.as_str()),
            sender_addresses::contact_phone.eq($details.contact_phone.as_str()),
            sender_addresses::contact_email.eq($details.contact_email.as_ref().map(Email::as_str)),
            sender_addresses::peppol_id.eq($details.peppol_id.as_ref().map(ToString::to_string)),
            sender_addresses::language.eq($details.language.code()),
            sender_addresses::payment_qr.eq($details.payment_qr.as_str()),
        )
    };
}
pub(crate) use sender_values;

#[async_trait]
impl SenderRepository for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn get_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
    ) -> Result<Option<SenderAddress>, StoreError> {
        let row: Option<SenderRow> = db_run!(self, |conn| sender_addresses::table
            .filter(sender_addresses::team_id.eq(DbUuid::of(team)))
            .filter(sender_addresses::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(SenderAddress::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn default_sender(&self, team: TeamId) -> Result<Option<SenderAddress>, StoreError> {
        let row: Option<SenderRow> = db_run!(self, |conn| sender_addresses::table
            .filter(sender_addresses::team_id.eq(DbUuid::of(team)))
            .filter(sender_addresses::is_default.eq(true))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(SenderAddress::try_from).transpose()
    }

    #[tracing::instrument(skip_all, fields(team = %sender.team_id))]
    async fn ensure_default_sender(&self, sender: &SenderAddress) -> Result<SenderAddress, StoreError> {
        db_run!(self, |conn| insert_default_sender!(conn, sender).execute(conn).await.or_store()?);
        self.default_sender(sender.team_id)
            .await?
            .ok_or_else(|| StoreError::Unexpected(anyhow::anyhow!("default sender vanished after insert")))
    }

    #[tracing::instrument(skip(self, details))]
    async fn update_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
        details: &SenderDetails,
        now: DateTime<Utc>,
    ) -> Result<Option<SenderAddress>, StoreError> {
        let row: Option<SenderRow> = db_run!(self, |conn| diesel::update(
            sender_addresses::table
                .filter(sender_addresses::team_id.eq(DbUuid::of(team)))
                .filter(sender_addresses::id.eq(DbUuid::of(id)))
        )
        .set((sender_values!(details), sender_addresses::updated_at.eq(now)))
        .get_result(conn)
        .await
        .optional()
        .or_store()?);
        row.map(SenderAddress::try_from).transpose()
    }
}

/// Inserts the row of the new `$invoice` with `$serial`, in a transaction whose error is a
/// `TxError<CreateInvoiceError, _>`: the one unique key it can meet, its recurring invoice's
/// sequence taken already, is refused as [`CreateInvoiceError::RecurrenceTaken`].
macro_rules! insert_invoice {
    ($conn:ident, $serial:expr, $invoice:expr) => {{
        let invoice: &Invoice = &$invoice;
        diesel::insert_into(invoices::table)
            .values((
                invoices::team_id.eq(DbUuid::of(invoice.team_id)),
                invoices::id.eq(DbUuid::of(invoice.id)),
                invoices::serial.eq($serial),
                invoices::number.eq(invoice.number.as_str()),
                invoices::number_counter.eq(i32::try_from(invoice.number.counter()).unwrap_or(i32::MAX)),
                invoices::number_key.eq(invoice.number.search_key()),
                invoices::payment_reference.eq(invoice.payment_reference.as_str()),
                invoices::currency.eq(invoice.currency.as_str()),
                invoices::created_at.eq(invoice.created_at),
                invoices::recurring_invoice_id
                    .eq(invoice.recurrence.map(|r| DbUuid::of(r.recurring_invoice_id))),
                invoices::recurring_sequence
                    .eq(invoice.recurrence.map(|r| i32::try_from(r.sequence).unwrap_or(i32::MAX))),
                invoice_values!(invoice),
                balance_values!(invoice.balance),
                {
                    let (quote, kind, deposits, deducted) =
                        $crate::invoice_rows::from_quote_columns(invoice.from_quote.as_ref());
                    (
                        invoices::quote_id.eq(quote),
                        invoices::quote_kind.eq(kind),
                        invoices::deposit_invoice_ids.eq(deposits),
                        invoices::deposits_deducted.eq(deducted),
                    )
                },
            ))
            .execute($conn)
            .await
            .map_err(|error| {
                let taken = invoice.recurrence.is_some()
                    && crate::violation(&error) == Some(diesel::result::DatabaseErrorKind::UniqueViolation);
                if taken { TxError::Refused(CreateInvoiceError::RecurrenceTaken) } else { TxError::Db(error) }
            })?;
    }};
}
pub(crate) use insert_invoice;

/// Makes `$new` inside the transaction of `$conn`, whose error is `$error` (a
/// `TxError<CreateInvoiceError, _>`): its serial, its client (an inline one found or
/// made), its sender, row and lines, the entry of a status it was made with, the time it
/// bills, its reminders, and, when `$raise`, its events. Evaluates to the invoice.
macro_rules! make_invoice {
    ($store:expr, $conn:ident, $new:expr, $raise:expr, $error:ty) => {{
        let new: &NewInvoice = $new;
        let team = new.team_id;
        let serial: i32 = diesel::insert_into(invoice_serials::table)
            .values((invoice_serials::team_id.eq(DbUuid::of(team)), invoice_serials::last_serial.eq(1)))
            .on_conflict(invoice_serials::team_id)
            .do_update()
            .set(invoice_serials::last_serial.eq(invoice_serials::last_serial + 1))
            .returning(invoice_serials::last_serial)
            .get_result($conn)
            .await?;
        // The team's row, locked as a change of its currency locks it: the invoice is in the
        // currency the team has, not one it left while the invoice was priced.
        let team_currency: String = diesel::update(teams::table.filter(teams::id.eq(DbUuid::of(team))))
            .set(teams::currency.eq(teams::currency))
            .returning(teams::currency)
            .get_result($conn)
            .await?;
        if team_currency != new.exchange.team_currency.as_str() {
            return Err(TxError::Refused(CreateInvoiceError::TeamCurrencyChanged));
        }
        let mut made_client = None;
        let client_id: ClientId = match &new.bill_to {
            BillTo::Existing(id) => {
                let currency: Option<Option<String>> = clients::table
                    .filter(clients::team_id.eq(DbUuid::of(team)))
                    .filter(clients::id.eq(DbUuid::of(*id)))
                    .select(clients::currency)
                    .first($conn)
                    .await
                    .optional()?;
                let Some(currency) = currency else {
                    return Err(TxError::Refused(CreateInvoiceError::UnknownClient));
                };
                let currency = $crate::invoice_rows::client_currency(currency.as_deref())
                    .map_err(|e| TxError::Refused(e.into()))?;
                new.suits(currency).map_err(TxError::Refused)?;
                *id
            }
            BillTo::Inline { email, new_client } => {
                let matched: Option<(DbUuid, Option<String>)> = clients::table
                    .filter(clients::team_id.eq(DbUuid::of(team)))
                    .filter(clients::email_key.eq(email.normalized()))
                    .order((clients::created_at, clients::id))
                    .select((clients::id, clients::currency))
                    .first($conn)
                    .await
                    .optional()?;
                if let Some((id, currency)) = matched {
                    let currency = $crate::invoice_rows::client_currency(currency.as_deref())
                        .map_err(|e| TxError::Refused(e.into()))?;
                    new.suits(currency).map_err(TxError::Refused)?;
                    id.into_id()
                } else {
                    insert_client!($conn, new_client)?;
                    made_client = Some(&**new_client);
                    new_client.id
                }
            }
        };
        let sender_id = settle_sender!($conn, team, &new.sender);
        let Some(serial_number) = u32::try_from(serial).ok().and_then(Serial::new) else {
            return Err(TxError::Refused(corrupt("serial", serial).into()));
        };
        let number = $crate::numbering::next_number!(
            $conn,
            team,
            billing::numbering::Series::Invoices,
            new.issue_date
        );
        // Every create of the team holds its serial row's lock: no other can take the
        // number between this look and the insert.
        let taken: Option<i32> = invoices::table
            .filter(invoices::team_id.eq(DbUuid::of(team)))
            .filter(invoices::number.eq(number.as_str()))
            .select(invoices::serial)
            .first($conn)
            .await
            .optional()?;
        if taken.is_some() {
            return Err(TxError::Refused(CreateInvoiceError::NumberTaken(billing::numbering::NumberTaken {
                number,
            })));
        }
        let (mut invoice, opening) = new
            .clone()
            .into_invoice(serial_number, number, client_id, sender_id)
            .map_err(|rule| TxError::Refused(CreateInvoiceError::Ledger(rule)))?;
        insert_invoice!($conn, serial, invoice);
        insert_lines!($conn, invoice);
        if let Some(entry) = &opening {
            insert_entry!($conn, entry);
        }
        if !new.time_entries.is_empty() {
            bill_entries!($conn, team, invoice.id, new.distinct_time_entries());
        }
        if invoice.due_date.is_some() {
            let next = refresh_reminders!($conn, team, invoices::id.eq(DbUuid::of(invoice.id)), $error);
            invoice.chasing.next_reminder_at = next.next_of(invoice.id);
        }
        if $raise {
            let raised = notify::raise::invoice_created(&invoice, made_client, opening.as_ref());
            record_events!($conn, raised.events(&*$store.describe, invoice.created_at));
        }
        invoice
    }};
}
pub(crate) use make_invoice;

impl SqlStore {
    /// A create in one transaction, committed or, for a preview, rolled back.
    async fn store_invoice(&self, new: NewInvoice, keep: Keep) -> Result<Invoice, CreateInvoiceError> {
        let done: Result<Invoice, TxError<CreateInvoiceError, Box<Invoice>>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let invoice = make_invoice!(
                    self,
                    conn,
                    &new,
                    keep == Keep::Commit,
                    TxError<CreateInvoiceError, Box<Invoice>>
                );
                match keep {
                    Keep::Commit => Ok(invoice),
                    Keep::RollBack => Err(TxError::Previewed(Box::new(invoice))),
                }
            })
            .await);
        match done {
            Ok(invoice) => self.signalling(Ok(invoice)),
            Err(TxError::Previewed(invoice)) => Ok(*invoice),
            Err(TxError::Refused(error)) => Err(error),
            Err(TxError::Db(error)) => Err(crate::store_error(error).into()),
        }
    }
}
