//! The ledger port over diesel: every invoice's payments, refunds and write-offs, its
//! credit notes, and what clients owe.
//!
//! Every write of an invoice's books starts by touching the invoice row: SQLite's write
//! lock, and on PostgreSQL the row's lock, so that concurrent writes of one invoice's books
//! are played one after the other. The ledger is then read and played by the domain's rules
//! (`billing::store::record`, `void`, `credit`), and the balance it leaves is written back
//! on the invoice in the same transaction.

use accounts::{Currency, TeamId};
use async_trait::async_trait;
use billing::credit::{CreditNote, CreditNoteFilter, CreditNoteId, CreditSerial, NewCreditNote};
use billing::ledger::{CreditApplication, EntryFilter, EntryKind, NewEntry, Notes, PaymentMethod, Reference};
use billing::numbering::{NumberTaken, Series};
use billing::receivables::{Age, Receivable};
use billing::store::LedgerError;
use billing::{Invoice, InvoiceId, LedgerEntry, LedgerEntryId, LedgerRepository, LineItem, TaxRule};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;

use crate::chasing::record_events;
use crate::invoice_rows::{InvoiceRow, LineRow, insert_lines, invoice_from, position_column, position_from};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

#[derive(Queryable)]
pub(crate) struct EntryRow {
    team_id: DbUuid,
    id: DbUuid,
    invoice_id: DbUuid,
    position: i32,
    kind: String,
    amount: DbDecimal,
    on_day: NaiveDate,
    method: String,
    reference: Option<String>,
    notes: Option<String>,
    voided_at: Option<DateTime<Utc>>,
    void_reason: Option<String>,
    created_at: DateTime<Utc>,
}

impl TryFrom<EntryRow> for LedgerEntry {
    type Error = StoreError;
    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        let text = |what, value: Option<String>| {
            value.map(Notes::from_stored).transpose().map_err(|e| corrupt(what, e))
        };
        Ok(LedgerEntry {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            invoice_id: row.invoice_id.into_id(),
            position: position_from(row.position)?,
            kind: <EntryKind as kernel::Words>::parse_word(&row.kind)
                .map_err(|e| corrupt("entry kind", e))?,
            amount: row.amount.0,
            on: row.on_day,
            method: PaymentMethod::parse(&row.method).map_err(|e| corrupt("payment method", e))?,
            reference: row
                .reference
                .map(Reference::from_stored)
                .transpose()
                .map_err(|e| corrupt("reference", e))?,
            notes: text("entry notes", row.notes)?,
            voided_at: row.voided_at,
            void_reason: text("void reason", row.void_reason)?,
            created_at: row.created_at,
        })
    }
}

/// The status and balance columns of an invoice whose ledger leaves `$balance`.
macro_rules! balance_values {
    ($balance:expr) => {{
        let balance: &billing::Balance = &$balance;
        (
            invoices::status.eq(balance.status().as_str()),
            invoices::amount_paid.eq(DbDecimal(balance.paid)),
            invoices::amount_credited.eq(DbDecimal(balance.credited)),
            invoices::amount_written_off.eq(DbDecimal(balance.written_off)),
            invoices::credit_refundable.eq(DbDecimal(balance.refundable)),
            invoices::paid_on.eq(balance.paid_on),
            invoices::ledger_events.eq($crate::invoice_rows::position_column(balance.events)),
        )
    }};
}
pub(crate) use balance_values;

/// The values of the ledger's row of `$entry` (a `&LedgerEntry`).
macro_rules! entry_values {
    ($entry:expr) => {{
        let entry: &billing::LedgerEntry = $entry;
        (
            ledger_entries::team_id.eq(DbUuid::of(entry.team_id)),
            ledger_entries::id.eq(DbUuid::of(entry.id)),
            ledger_entries::invoice_id.eq(DbUuid::of(entry.invoice_id)),
            ledger_entries::position.eq($crate::invoice_rows::position_column(entry.position)),
            ledger_entries::kind.eq(entry.kind.as_str()),
            ledger_entries::amount.eq(DbDecimal(entry.amount)),
            ledger_entries::on_day.eq(entry.on),
            ledger_entries::method.eq(entry.method.as_str()),
            ledger_entries::reference.eq(entry.reference.as_ref().map(|r| r.as_str())),
            ledger_entries::notes.eq(entry.notes.as_ref().map(|n| n.as_str())),
            ledger_entries::voided_at.eq(entry.voided_at),
            ledger_entries::void_reason.eq(entry.void_reason.as_ref().map(|n| n.as_str())),
            ledger_entries::created_at.eq(entry.created_at),
        )
    }};
}
pub(crate) use entry_values;

/// Inserts the ledger entry `$entry`.
macro_rules! insert_entry {
    ($conn:ident, $entry:expr) => {{
        diesel::insert_into(ledger_entries::table)
            .values($crate::ledger::entry_values!($entry))
            .execute($conn)
            .await?;
    }};
}
pub(crate) use insert_entry;

/// The ledger entries and the credit notes' applications of the team's invoice, as the
/// ledger plays them; in a write's transaction.
macro_rules! load_books {
    ($conn:ident, $team:expr, $invoice:expr) => {{
        let rows: Vec<$crate::ledger::EntryRow> = ledger_entries::table
            .filter(ledger_entries::team_id.eq(DbUuid::of($team)))
            .filter(ledger_entries::invoice_id.eq(DbUuid::of($invoice)))
            .order(ledger_entries::position)
            .load($conn)
            .await?;
        let entries = rows
            .into_iter()
            .map(billing::LedgerEntry::try_from)
            .collect::<Result<Vec<_>, kernel::StoreError>>()
            .map_err(|error| TxError::Refused(error.into()))?;
        let notes: Vec<(DbDecimal, DbDecimal, DbDecimal, i32)> = credit_notes::table
            .filter(credit_notes::team_id.eq(DbUuid::of($team)))
            .filter(credit_notes::invoice_id.eq(DbUuid::of($invoice)))
            .select((
                credit_notes::total,
                credit_notes::applied,
                credit_notes::refundable,
                credit_notes::position,
            ))
            .load($conn)
            .await?;
        let credits = notes
            .into_iter()
            .map(|(total, applied, refundable, position)| {
                let application = billing::ledger::CreditApplication {
                    total: total.0,
                    applied: applied.0,
                    refundable: refundable.0,
                };
                Ok((application, $crate::invoice_rows::position_from(position)?))
            })
            .collect::<Result<Vec<_>, kernel::StoreError>>()
            .map_err(|error| TxError::Refused(error.into()))?;
        (entries, credits)
    }};
}
pub(crate) use load_books;

/// Touches the team's invoice `$id` (the lock of a write of its books) and reads it with
/// its items; refuses with `NotFound` when the team has no such invoice. With `@which`, the
/// invoice is the team's that the condition `$which` on `invoices` picks.
macro_rules! lock_invoice {
    ($conn:ident, $team:expr, $id:expr, $at:expr) => {
        lock_invoice!(@which $conn, $team, invoices::id.eq(DbUuid::of($id)), $at)
    };
    // On PostgreSQL: the lock and the read of the lines in one round trip (pipelined; the
    // server runs them in order, so the lines are read under the lock).
    (pipelined $conn:ident, $team:expr, $id:expr, $at:expr) => {{
        let shared: &diesel_async::AsyncPgConnection = &*$conn;
        let mine = invoices::table
            .filter(invoices::team_id.eq(DbUuid::of($team)))
            .filter(invoices::id.eq(DbUuid::of($id)));
        let lock = diesel::update(mine)
            .set(invoices::updated_at.eq($at))
            .returning(invoices::all_columns)
            .get_result::<InvoiceRow>(&mut &*shared);
        let lines = line_items::table
            .filter(line_items::team_id.eq(DbUuid::of($team)))
            .filter(line_items::invoice_id.eq(DbUuid::of($id)))
            .order(line_items::position)
            .load::<LineRow>(&mut &*shared);
        let (row, lines) = futures_util::future::try_join(async { lock.await.optional() }, lines).await?;
        let Some(row) = row else { return Err(TxError::Refused(LedgerError::NotFound)) };
        lock_invoice!(@rows row, lines)
    }};
    (@rows $row:expr, $lines:expr) => {{
        let lines = $lines
            .into_iter()
            .map(LineItem::try_from)
            .collect::<Result<Vec<_>, StoreError>>()
            .map_err(|error| TxError::Refused(error.into()))?;
        invoice_from($row, lines).map_err(|error| TxError::Refused(error.into()))?
    }};
    (@which $conn:ident, $team:expr, $which:expr, $at:expr) => {{
        let mine = invoices::table.filter(invoices::team_id.eq(DbUuid::of($team))).filter($which);
        let row: Option<InvoiceRow> = diesel::update(mine)
            .set(invoices::updated_at.eq($at))
            .returning(invoices::all_columns)
            .get_result($conn)
            .await
            .optional()?;
        let Some(row) = row else { return Err(TxError::Refused(LedgerError::NotFound)) };
        let lines: Vec<LineRow> = line_items::table
            .filter(line_items::team_id.eq(DbUuid::of($team)))
            .filter(line_items::invoice_id.eq(row.id))
            .order(line_items::position)
            .load($conn)
            .await?;
        lock_invoice!(@rows row, lines)
    }};
}
pub(crate) use lock_invoice;

/// Writes `$balance` on the team's invoice `$id`.
macro_rules! write_balance {
    ($conn:ident, $team:expr, $id:expr, $balance:expr) => {
        diesel::update(
            invoices::table
                .filter(invoices::team_id.eq(DbUuid::of($team)))
                .filter(invoices::id.eq(DbUuid::of($id))),
        )
        .set($crate::ledger::balance_values!($balance))
        .execute($conn)
        .await?
    };
}
pub(crate) use write_balance;

/// The invoice `$current` (as locked) once its books leave `$balance`, its next reminder
/// kept: none once nothing is due, the policy's again when something is due once more.
macro_rules! rebalanced {
    ($conn:ident, $team:expr, $current:expr, $balance:expr) => {{
        let current: Invoice = $current;
        let balance: billing::Balance = $balance;
        let open = |balance: &billing::Balance| {
            notify::reminders::is_open(balance.due().is_zero(), balance.status())
        };
        let next = match (open(&current.balance), open(&balance)) {
            (true, false) if current.chasing.next_reminder_at.is_some() => {
                diesel::update(
                    invoices::table
                        .filter(invoices::team_id.eq(DbUuid::of($team)))
                        .filter(invoices::id.eq(DbUuid::of(current.id))),
                )
                .set(invoices::next_reminder_at.eq(None::<DateTime<Utc>>))
                .execute($conn)
                .await?;
                None
            }
            (false, true) => $crate::chasing::refresh_reminders!(
                $conn,
                $team,
                invoices::id.eq(DbUuid::of(current.id)),
                TxError<LedgerError>
            )
            .next_of(current.id),
            _ => current.chasing.next_reminder_at,
        };
        Invoice {
            balance,
            status: balance.status(),
            chasing: billing::Chasing { next_reminder_at: next, ..current.chasing },
            ..current
        }
    }};
}
pub(crate) use rebalanced;

/// Voids `$entry` of the invoice `$current` (locked by the caller): the books' rules checked,
/// the entry marked with `$reason`, the invoice's balance and status written and
/// `entry.voided` recorded. Answers the voided entry and the invoice after it.
macro_rules! void_locked_entry {
    ($conn:ident, $store:expr, $team:expr, $current:expr, $entry:expr, $reason:expr, $at:expr) => {{
        let current: Invoice = $current;
        let invoice = current.id;
        let (entries, credits) = $crate::ledger::load_books!($conn, $team, invoice);
        let balance = billing::store::void(&current, &entries, &credits, $entry, $at)
            .map_err(|rule| TxError::Refused(LedgerError::Rule(rule)))?;
        let row: $crate::ledger::EntryRow = diesel::update(
            ledger_entries::table
                .filter(ledger_entries::team_id.eq(DbUuid::of($team)))
                .filter(ledger_entries::id.eq(DbUuid::of($entry))),
        )
        .set((ledger_entries::voided_at.eq(Some($at)), ledger_entries::void_reason.eq($reason)))
        .returning(ledger_entries::all_columns)
        .get_result($conn)
        .await?;
        $crate::ledger::write_balance!($conn, $team, invoice, balance);
        let voided = LedgerEntry::try_from(row).map_err(|error| TxError::Refused(error.into()))?;
        let after = $crate::ledger::rebalanced!($conn, $team, current, balance);
        $crate::chasing::record_events!(
            $conn,
            notify::raise::entry_voided(&voided).events(&*$store.describe, $at)
        );
        (voided, after)
    }};
}
pub(crate) use void_locked_entry;

#[derive(Queryable)]
struct CreditNoteRow {
    team_id: DbUuid,
    id: DbUuid,
    serial: i32,
    number: String,
    number_counter: i32,
    invoice_id: DbUuid,
    position: i32,
    issue_date: DateTime<Utc>,
    currency: String,
    tax_percentage: DbDecimal,
    tax: DbDecimal,
    subtotal: DbDecimal,
    total: DbDecimal,
    reason: Option<String>,
    applied: DbDecimal,
    refundable: DbDecimal,
    created_at: DateTime<Utc>,
    discount_percentage: Option<DbDecimal>,
    discount_amount: Option<DbDecimal>,
}

/// What a credit note reads of its invoice: its number and counter, VAT category and
/// exemption reason.
type InvoiceOfNote = (DbUuid, String, i32, String, Option<String>);

/// Credit notes from their rows, their lines' rows and their invoices' serials and VAT.
fn credit_notes_from(
    rows: Vec<CreditNoteRow>,
    lines: Vec<LineRow>,
    invoices: Vec<InvoiceOfNote>,
) -> Result<Vec<CreditNote>, StoreError> {
    let mut items: std::collections::HashMap<DbUuid, Vec<LineItem>> = std::collections::HashMap::new();
    for line in lines {
        items.entry(line.parent_id).or_default().push(line.try_into()?);
    }
    let invoices: std::collections::HashMap<DbUuid, (String, i32, String, Option<String>)> = invoices
        .into_iter()
        .map(|(id, number, counter, category, reason)| (id, (number, counter, category, reason)))
        .collect();
    rows.into_iter()
        .map(|row| {
            let serial = u32::try_from(row.serial).ok().and_then(CreditSerial::new);
            let (invoice_number, invoice_counter, category, reason) =
                invoices.get(&row.invoice_id).ok_or_else(|| corrupt("credit note's invoice", row.serial))?;
            let number = crate::invoice_rows::number_of(row.number, row.number_counter)?;
            Ok(CreditNote {
                id: row.id.into_id(),
                team_id: row.team_id.into_id(),
                serial: serial.ok_or_else(|| corrupt("credit note serial", row.serial))?,
                number,
                invoice_id: row.invoice_id.into_id(),
                invoice_number: crate::invoice_rows::number_of(invoice_number.clone(), *invoice_counter)?,
                issue_date: row.issue_date,
                currency: Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?,
                tax_rule: TaxRule::from_stored(row.tax_percentage.0, row.tax.0),
                vat: crate::invoice_rows::vat_of(category, reason.clone())?,
                line_items: items.remove(&row.id).unwrap_or_default(),
                discount: crate::invoice_rows::discount_of(row.discount_percentage, row.discount_amount)?,
                totals: crate::invoice_rows::totals_of(&row.subtotal, &row.tax, &row.total),
                reason: row
                    .reason
                    .map(Notes::from_stored)
                    .transpose()
                    .map_err(|e| corrupt("credit reason", e))?,
                application: CreditApplication {
                    total: row.total.0,
                    applied: row.applied.0,
                    refundable: row.refundable.0,
                },
                position: position_from(row.position)?,
                created_at: row.created_at,
            })
        })
        .collect()
}

/// The credit notes of `$team` that `$notes` (a boxed query of `credit_notes`) selects,
/// with their lines and their invoices' serials.
macro_rules! load_credit_notes {
    ($conn:ident, $team:expr, $notes:expr) => {{
        let rows: Vec<CreditNoteRow> = $notes.load($conn).await.or_store()?;
        let ids: Vec<DbUuid> = rows.iter().map(|row| row.id).collect();
        let invoices_of: Vec<DbUuid> = rows.iter().map(|row| row.invoice_id).collect();
        let lines: Vec<LineRow> = credit_note_lines::table
            .filter(credit_note_lines::team_id.eq(DbUuid::of($team)))
            .filter(credit_note_lines::credit_note_id.eq_any(ids))
            .order((credit_note_lines::credit_note_id, credit_note_lines::position))
            .load($conn)
            .await
            .or_store()?;
        let serials: Vec<InvoiceOfNote> = invoices::table
            .filter(invoices::team_id.eq(DbUuid::of($team)))
            .filter(invoices::id.eq_any(invoices_of))
            .select((
                invoices::id,
                invoices::number,
                invoices::number_counter,
                invoices::vat_category,
                invoices::vat_exemption_reason,
            ))
            .load($conn)
            .await
            .or_store()?;
        (rows, lines, serials)
    }};
}

/// What `receivables` sums, per invoice with something due: client, currency, due date,
/// total, paid, credited, written off.
type DueRow = (DbUuid, String, Option<DateTime<Utc>>, DbDecimal, DbDecimal, DbDecimal, DbDecimal);

/// PostgreSQL sums what is due by client and age in the database, exactly (`numeric`).
const RECEIVABLES_PG: &str = "\
SELECT client_id, currency,
       COALESCE(SUM(due) FILTER (WHERE due_date IS NULL OR due_date >= $2), 0) AS current,
       COALESCE(SUM(due) FILTER (WHERE due_date >= $3 AND due_date < $2), 0) AS days1to30,
       COALESCE(SUM(due) FILTER (WHERE due_date >= $4 AND due_date < $3), 0) AS days31to60,
       COALESCE(SUM(due) FILTER (WHERE due_date >= $5 AND due_date < $4), 0) AS days61to90,
       COALESCE(SUM(due) FILTER (WHERE due_date < $5), 0) AS over90
FROM (SELECT client_id, currency, due_date,
             payable - amount_paid - amount_credited - amount_written_off AS due
      FROM invoices WHERE team_id = $1 AND status IN ('PENDING', 'PAID_PARTIAL')) AS open
WHERE due > 0
GROUP BY client_id, currency
ORDER BY client_id, currency";

#[derive(QueryableByName)]
struct AgeRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    client_id: DbUuid,
    #[diesel(sql_type = diesel::sql_types::Text)]
    currency: String,
    #[diesel(sql_type = diesel::sql_types::Numeric)]
    current: DbDecimal,
    #[diesel(sql_type = diesel::sql_types::Numeric)]
    days1to30: DbDecimal,
    #[diesel(sql_type = diesel::sql_types::Numeric)]
    days31to60: DbDecimal,
    #[diesel(sql_type = diesel::sql_types::Numeric)]
    days61to90: DbDecimal,
    #[diesel(sql_type = diesel::sql_types::Numeric)]
    over90: DbDecimal,
}

/// The instant an age's due dates start or end at, bound as a parameter: far in the past
/// for a bound that is open.
fn bound(instant: Option<DateTime<Utc>>) -> DateTime<Utc> {
    instant.unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// The next reminder of the invoice `current` once its books leave `balance`, when that
/// takes no read: the one it has while something stays due, none once nothing is. `None`
/// when the books are due again after nothing was, whose next reminder comes from the
/// team's policy (`rebalanced!`).
#[expect(clippy::option_option, reason = "no answer, or the answer that there is no reminder")]
fn next_reminder_without_policy(
    current: &Invoice,
    balance: &billing::Balance,
) -> Option<Option<DateTime<Utc>>> {
    let open =
        |balance: &billing::Balance| notify::reminders::is_open(balance.due().is_zero(), balance.status());
    match (open(&current.balance), open(balance)) {
        (false, true) => None,
        (true, false) => Some(None),
        _ => Some(current.chasing.next_reminder_at),
    }
}

/// Writes the new `$entry` of the locked invoice `$current` (whose status was `$before`),
/// the `$balance` it leaves and the events it raises, a statement at a time; evaluates to
/// the invoice after it.
macro_rules! write_entry {
    ($conn:ident, $store:expr, $team:expr, $current:expr, $entry:expr, $balance:expr, $before:expr, $at:expr) => {{
        let current: Invoice = $current;
        let invoice = current.id;
        insert_entry!($conn, &$entry);
        write_balance!($conn, $team, invoice, $balance);
        let after = rebalanced!($conn, $team, current, $balance);
        record_events!(
            $conn,
            notify::raise::entry_recorded(&$entry, $before, &after).events(&*$store.describe, $at)
        );
        after
    }};
}

#[async_trait]
impl LedgerRepository for SqlStore {
    #[tracing::instrument(skip_all, fields(%team, %invoice, kind = %entry.kind.as_str()))]
    async fn record_entry(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        entry: NewEntry,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let done = db_run!(self,
            // Two round trips between BEGIN and COMMIT: the lock with the lines, then the
            // entry, the balance, the status, the next reminder and the events together.
            postgres: |conn| conn
                .transaction(async |conn| {
                    let at = entry.created_at;
                    let current = lock_invoice!(pipelined conn, team, invoice, at);
                    let before = current.status;
                    let (entry, balance) = billing::store::record(&current, entry)
                        .map_err(|rule| TxError::Refused(LedgerError::Rule(rule)))?;
                    let Some(next) = next_reminder_without_policy(&current, &balance) else {
                        // Books due again read the reminder policy first: the sequential way.
                        let after = write_entry!(conn, self, team, current, entry, balance, before, at);
                        return Ok((entry, after));
                    };
                    let chasing = billing::Chasing { next_reminder_at: next, ..current.chasing };
                    let after = Invoice { balance, status: balance.status(), chasing, ..current };
                    let events = notify::raise::entry_recorded(&entry, before, &after).events(&*self.describe, at);
                    let shared: &diesel_async::AsyncPgConnection = &*conn;
                    let insert = diesel::insert_into(ledger_entries::table)
                        .values(entry_values!(&entry))
                        .execute(&mut &*shared);
                    let mine = invoices::table
                        .filter(invoices::team_id.eq(DbUuid::of(team)))
                        .filter(invoices::id.eq(DbUuid::of(invoice)));
                    let update = diesel::update(mine)
                        .set((balance_values!(balance), invoices::next_reminder_at.eq(next)))
                        .execute(&mut &*shared);
                    let rows: Vec<_> = events.iter().map(|event| crate::chasing::event_row!(event)).collect();
                    let record = diesel::insert_into(events::table).values(rows).execute(&mut &*shared);
                    futures_util::future::try_join3(insert, update, record).await?;
                    Ok::<_, TxError<LedgerError>>((entry, after))
                })
                .await
                .map_err(TxError::into_port),
            sqlite: |conn| conn
                .transaction(async |conn| {
                    let at = entry.created_at;
                    let current = lock_invoice!(conn, team, invoice, at);
                    let before = current.status;
                    let (entry, balance) = billing::store::record(&current, entry)
                        .map_err(|rule| TxError::Refused(LedgerError::Rule(rule)))?;
                    let after = write_entry!(conn, self, team, current, entry, balance, before, at);
                    Ok::<_, TxError<LedgerError>>((entry, after))
                })
                .await
                .map_err(TxError::into_port)
        );
        self.signalling(done)
    }

    #[tracing::instrument(skip(self, reason))]
    async fn void_entry(
        &self,
        team: TeamId,
        entry: LedgerEntryId,
        reason: Option<Notes>,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let mine = ledger_entries::table
                    .filter(ledger_entries::team_id.eq(DbUuid::of(team)))
                    .filter(ledger_entries::id.eq(DbUuid::of(entry)));
                // The entry's invoice, locked by the first statement: on SQLite a read before
                // the first write would fail ("database is locked") after another write.
                let of_entry = invoices::id.eq_any(mine.select(ledger_entries::invoice_id));
                let current = lock_invoice!(@which conn, team, of_entry, at);
                let reason = reason.as_ref().map(kernel::Text::as_str);
                let (voided, after) = void_locked_entry!(conn, self, team, current, entry, reason, at);
                Ok::<_, TxError<LedgerError>>((voided, after))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn get_entry(&self, team: TeamId, id: LedgerEntryId) -> Result<Option<LedgerEntry>, StoreError> {
        let row: Option<EntryRow> = db_run!(self, |conn| ledger_entries::table
            .filter(ledger_entries::team_id.eq(DbUuid::of(team)))
            .filter(ledger_entries::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(LedgerEntry::try_from).transpose()
    }

    #[tracing::instrument(skip(self))]
    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<LedgerEntry>, StoreError> {
        let rows: Vec<EntryRow> = db_run!(self, |conn| {
            let mut query = ledger_entries::table
                .filter(ledger_entries::team_id.eq(DbUuid::of(team)))
                .order((ledger_entries::on_day.desc(), ledger_entries::id.desc()))
                .into_boxed();
            if let Some(invoice) = filter.invoice {
                query = query.filter(ledger_entries::invoice_id.eq(DbUuid::of(invoice)));
            }
            if let Some(client) = filter.client {
                let billed_to = invoices::table
                    .filter(invoices::team_id.eq(DbUuid::of(team)))
                    .filter(invoices::client_id.eq(DbUuid::of(client)))
                    .select(invoices::id);
                query = query.filter(ledger_entries::invoice_id.eq_any(billed_to));
            }
            if let Some(from) = filter.from {
                query = query.filter(ledger_entries::on_day.ge(from));
            }
            if let Some(to) = filter.to {
                query = query.filter(ledger_entries::on_day.le(to));
            }
            if let Some(method) = filter.method {
                query = query
                    .filter(ledger_entries::kind.eq(EntryKind::Payment.as_str()))
                    .filter(ledger_entries::method.eq(method.as_str()));
            }
            if let Some(after) = filter.after {
                query =
                    query.filter(ledger_entries::on_day.lt(after.on).or(
                        ledger_entries::on_day.eq(after.on).and(ledger_entries::id.lt(DbUuid(after.id))),
                    ));
            }
            if let Some(limit) = filter.limit {
                query = query.limit(i64::from(limit));
            }
            query.load(conn).await.or_store()?
        });
        rows.into_iter().map(LedgerEntry::try_from).collect()
    }

    #[tracing::instrument(skip_all, fields(%team, %invoice))]
    async fn issue_credit_note(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        note: NewCreditNote,
    ) -> Result<(CreditNote, Invoice), LedgerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_invoice!(conn, team, invoice, note.created_at);
                // The team's next credit serial: its counter row's lock orders concurrent
                // notes, and a refused one gives its number back with the rollback.
                let serial: i32 = diesel::insert_into(credit_note_serials::table)
                    .values((
                        credit_note_serials::team_id.eq(DbUuid::of(team)),
                        credit_note_serials::last_serial.eq(1),
                    ))
                    .on_conflict(credit_note_serials::team_id)
                    .do_update()
                    .set(credit_note_serials::last_serial.eq(credit_note_serials::last_serial + 1))
                    .returning(credit_note_serials::last_serial)
                    .get_result(conn)
                    .await?;
                let Some(serial_number) = u32::try_from(serial).ok().and_then(CreditSerial::new) else {
                    return Err(TxError::Refused(corrupt("credit serial", serial).into()));
                };
                let number = crate::numbering::next_number!(conn, team, Series::CreditNotes, note.created_at);
                // The credit serial row's lock keeps every other note of the team out.
                let taken: Option<i32> = credit_notes::table
                    .filter(credit_notes::team_id.eq(DbUuid::of(team)))
                    .filter(credit_notes::number.eq(number.as_str()))
                    .select(credit_notes::serial)
                    .first(conn)
                    .await
                    .optional()?;
                if taken.is_some() {
                    return Err(TxError::Refused(LedgerError::NumberTaken(NumberTaken { number })));
                }
                let (note, balance) = billing::store::credit(&current, note, serial_number, number)
                    .map_err(TxError::Refused)?;
                diesel::insert_into(credit_notes::table)
                    .values((
                        credit_notes::team_id.eq(DbUuid::of(team)),
                        credit_notes::id.eq(DbUuid::of(note.id)),
                        credit_notes::serial.eq(serial),
                        credit_notes::number.eq(note.number.as_str()),
                        credit_notes::number_counter
                            .eq(i32::try_from(note.number.counter()).unwrap_or(i32::MAX)),
                        credit_notes::invoice_id.eq(DbUuid::of(invoice)),
                        credit_notes::position.eq(position_column(note.position)),
                        credit_notes::issue_date.eq(note.issue_date),
                        credit_notes::currency.eq(note.currency.as_str()),
                        credit_notes::tax_percentage.eq(DbDecimal(note.tax_rule.percentage())),
                        credit_notes::tax.eq(DbDecimal(note.totals.tax)),
                        credit_notes::subtotal.eq(DbDecimal(note.totals.subtotal)),
                        credit_notes::total.eq(DbDecimal(note.totals.total)),
                        credit_notes::reason.eq(note.reason.as_ref().map(kernel::Text::as_str)),
                        credit_notes::applied.eq(DbDecimal(note.application.applied)),
                        credit_notes::refundable.eq(DbDecimal(note.application.refundable)),
                        credit_notes::created_at.eq(note.created_at),
                        {
                            let (percentage, amount) = crate::invoice_rows::discount_columns(note.discount);
                            (
                                credit_notes::discount_percentage.eq(percentage),
                                credit_notes::discount_amount.eq(amount),
                            )
                        },
                    ))
                    .execute(conn)
                    .await?;
                insert_lines!(conn, note, credit_note_lines, credit_note_id);
                write_balance!(conn, team, invoice, balance);
                let after = rebalanced!(conn, team, current, balance);
                record_events!(
                    conn,
                    notify::raise::credit_issued(&note).events(&*self.describe, note.created_at)
                );
                Ok::<_, TxError<LedgerError>>((note, after))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn get_credit_note(
        &self,
        team: TeamId,
        id: CreditNoteId,
    ) -> Result<Option<CreditNote>, StoreError> {
        let (rows, lines, serials) = db_run!(self, |conn| {
            let notes = credit_notes::table
                .filter(credit_notes::team_id.eq(DbUuid::of(team)))
                .filter(credit_notes::id.eq(DbUuid::of(id)));
            load_credit_notes!(conn, team, notes)
        });
        Ok(credit_notes_from(rows, lines, serials)?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn find_credit_note(&self, id: CreditNoteId) -> Result<Option<CreditNote>, StoreError> {
        let team: Option<DbUuid> = db_run!(self, |conn| credit_notes::table
            .filter(credit_notes::id.eq(DbUuid::of(id)))
            .select(credit_notes::team_id)
            .first(conn)
            .await
            .optional()
            .or_store()?);
        match team {
            Some(team) => self.get_credit_note(team.into_id(), id).await,
            None => Ok(None),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn list_credit_notes(
        &self,
        team: TeamId,
        filter: &CreditNoteFilter,
    ) -> Result<Vec<CreditNote>, StoreError> {
        let (rows, lines, serials) = db_run!(self, |conn| {
            let mut notes = credit_notes::table
                .filter(credit_notes::team_id.eq(DbUuid::of(team)))
                .order(credit_notes::serial.desc())
                .into_boxed();
            if let Some(invoice) = filter.invoice {
                notes = notes.filter(credit_notes::invoice_id.eq(DbUuid::of(invoice)));
            }
            if let Some(before) = filter.before_serial {
                notes =
                    notes.filter(credit_notes::serial.lt(i32::try_from(before.number()).unwrap_or(i32::MAX)));
            }
            if let Some(from) = filter.issued_from {
                notes = notes.filter(credit_notes::issue_date.ge(from));
            }
            if let Some(before) = filter.issued_before {
                notes = notes.filter(credit_notes::issue_date.lt(before));
            }
            if let Some(limit) = filter.limit {
                notes = notes.limit(i64::from(limit));
            }
            load_credit_notes!(conn, team, notes)
        });
        credit_notes_from(rows, lines, serials)
    }

    #[tracing::instrument(skip(self))]
    async fn receivables(&self, team: TeamId, as_of: NaiveDate) -> Result<Vec<Receivable>, StoreError> {
        db_run!(self,
            postgres: |conn| {
                let [current, days30, days60, days90, _] = Age::ALL.map(|age| bound(age.due_between(as_of).0));
                let rows: Vec<AgeRow> = diesel::sql_query(RECEIVABLES_PG)
                    .bind::<diesel::sql_types::Uuid, _>(DbUuid::of(team))
                    .bind::<diesel::sql_types::Timestamptz, _>(current)
                    .bind::<diesel::sql_types::Timestamptz, _>(days30)
                    .bind::<diesel::sql_types::Timestamptz, _>(days60)
                    .bind::<diesel::sql_types::Timestamptz, _>(days90)
                    .load(conn)
                    .await
                    .or_store()?;
                rows.into_iter()
                    .map(|row| {
                        let currency = Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?;
                        let by_age = [row.current, row.days1to30, row.days31to60, row.days61to90, row.over90]
                            .map(|sum| billing::money::round_to_minor(sum.0, currency));
                        Ok(Receivable { client_id: row.client_id.into_id(), currency, by_age })
                    })
                    .collect()
            },
            sqlite: |conn| {
                // SQLite keeps money as text and would sum it as floating point: the open
                // invoices are read and summed here, exactly.
                let rows: Vec<DueRow> = invoices::table
                    .filter(invoices::team_id.eq(DbUuid::of(team)))
                    .filter(invoices::status.eq_any(["PENDING", "PAID_PARTIAL"]))
                    .select((
                        invoices::client_id,
                        invoices::currency,
                        invoices::due_date,
                        invoices::payable,
                        invoices::amount_paid,
                        invoices::amount_credited,
                        invoices::amount_written_off,
                    ))
                    .load(conn)
                    .await
                    .or_store()?;
                let mut dues = Vec::with_capacity(rows.len());
                for (client, currency, due_date, total, paid, credited, written_off) in rows {
                    let due = total.0 - paid.0 - credited.0 - written_off.0;
                    if due > billing::money::Decimal::ZERO {
                        let currency = Currency::parse(&currency).map_err(|e| corrupt("currency", e))?;
                        dues.push((client.into_id(), currency, due_date, due));
                    }
                }
                Ok(billing::receivables::sum_by_age(dues, as_of))
            }
        )
    }
}
