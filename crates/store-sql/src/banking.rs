//! Bank statements over diesel: the statements imported, their transactions (one row per
//! team and key: an import inserts what is new and skips what is kept, however many import
//! at once), the payments each made (`bank_payments`), and the team's CSV mapping.
//!
//! A booking touches the transaction's row first (its lock; on SQLite the write lock), then
//! reads its status: of two bookings of one transaction, the second finds it matched once
//! the first committed. Each allocation then takes its invoice's lock and is written as any
//! payment is, with what is above its due going to the client's credit, in the same
//! transaction.

use accounts::TeamId;
use async_trait::async_trait;
use billing::banking::{
    Allocation, BankError, BankPayment, BankRepository, BankStatementId, BankTransaction, BankTransactionId,
    CsvColumns, CsvMapping, ImportedStatement, NewStatement, OpenInvoice, StatementEntry, StatementFormat,
    TransactionFilter, TransactionStatus, check_booking, payment_entry,
};
use billing::cards::split_payment;
use billing::ledger::{LedgerEntry, LedgerEntryId};
use billing::store::LedgerError;
use billing::{Invoice, InvoiceId, InvoiceStatus, LineItem};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{StoreError, Words};
use rust_decimal::Decimal;

use crate::cards::{book_entry, lock_credit, write_credit};
use crate::chasing::record_events;
use crate::invoice_rows::{InvoiceRow, LineRow, invoice_from};
use crate::ledger::{insert_entry, lock_invoice, rebalanced, void_locked_entry, write_balance};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

#[derive(Queryable)]
struct TransactionRow {
    team_id: DbUuid,
    id: DbUuid,
    statement_id: DbUuid,
    _entry_key: String,
    account: Option<String>,
    booked_on: NaiveDate,
    value_on: Option<NaiveDate>,
    amount: DbDecimal,
    currency: String,
    counterparty_name: Option<String>,
    counterparty_iban: Option<String>,
    remittance: String,
    reference: Option<String>,
    bank_reference: Option<String>,
    status: String,
    suggested_invoice_id: Option<DbUuid>,
    credited: DbDecimal,
    credited_client_id: Option<DbUuid>,
    created_at: DateTime<Utc>,
}

/// A payment row: transaction, entry, invoice, amount.
type PaymentRow = (DbUuid, DbUuid, DbUuid, DbDecimal);

fn transaction_from(row: TransactionRow, payments: &[PaymentRow]) -> Result<BankTransaction, StoreError> {
    Ok(BankTransaction {
        id: row.id.into_id(),
        team_id: row.team_id.into_id(),
        statement_id: row.statement_id.into_id(),
        account: row.account,
        entry: StatementEntry {
            booked_on: row.booked_on,
            value_on: row.value_on,
            amount: row.amount.0,
            currency: accounts::Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?,
            counterparty_name: row.counterparty_name,
            counterparty_iban: row.counterparty_iban,
            text: row.remittance,
            reference: row.reference,
            bank_reference: row.bank_reference,
        },
        status: TransactionStatus::from_word(&row.status)
            .ok_or_else(|| corrupt("transaction status", &row.status))?,
        suggested_invoice: row.suggested_invoice_id.map(DbUuid::into_id),
        payments: payments
            .iter()
            .filter(|(transaction, ..)| *transaction == row.id)
            .map(|(_, entry, invoice, amount)| BankPayment {
                entry_id: entry.into_id(),
                invoice_id: invoice.into_id(),
                amount: amount.0,
            })
            .collect(),
        credited: row.credited.0,
        credited_client: row.credited_client_id.map(DbUuid::into_id),
        created_at: row.created_at,
    })
}

/// The team's transactions `$rows` with their payments.
macro_rules! with_payments {
    ($conn:ident, $team:expr, $rows:expr) => {{
        let rows: Vec<TransactionRow> = $rows;
        let ids: Vec<DbUuid> = rows.iter().map(|row| row.id).collect();
        let payments: Vec<PaymentRow> = bank_payments::table
            .filter(bank_payments::team_id.eq(DbUuid::of($team)))
            .filter(bank_payments::transaction_id.eq_any(ids))
            .select((
                bank_payments::transaction_id,
                bank_payments::entry_id,
                bank_payments::invoice_id,
                bank_payments::amount,
            ))
            .load($conn)
            .await?;
        (rows, payments)
    }};
}

/// Touches the team's transaction `$id` (its lock) and reads it with its payments.
macro_rules! lock_transaction {
    ($conn:ident, $team:expr, $id:expr) => {{
        let row: Option<TransactionRow> = diesel::update(
            bank_transactions::table
                .filter(bank_transactions::team_id.eq(DbUuid::of($team)))
                .filter(bank_transactions::id.eq(DbUuid::of($id))),
        )
        .set(bank_transactions::status.eq(bank_transactions::status))
        .returning(bank_transactions::all_columns)
        .get_result($conn)
        .await
        .optional()?;
        let Some(row) = row else { return Err(TxError::Refused(BankError::NotFound)) };
        let (mut rows, payments) = with_payments!($conn, $team, vec![row]);
        let row = rows.pop().ok_or(TxError::Refused(BankError::NotFound))?;
        transaction_from(row, &payments).map_err(|e| TxError::Refused(e.into()))?
    }};
}

/// A ledger write's refusal, as a booking's.
fn ledger_refusal(error: TxError<LedgerError>, invoice: InvoiceId) -> TxError<BankError> {
    match error {
        TxError::Db(error) => TxError::Db(error),
        TxError::Refused(LedgerError::NotFound) => TxError::Refused(BankError::InvoiceNotFound(invoice)),
        TxError::Refused(LedgerError::Rule(rule)) => TxError::Refused(BankError::Books(rule)),
        TxError::Refused(LedgerError::Store(error)) => TxError::Refused(BankError::Store(error)),
        TxError::Refused(other) => {
            TxError::Refused(BankError::Store(StoreError::Unexpected(anyhow::anyhow!("{other}"))))
        }
        TxError::Previewed(never) => match never {},
    }
}

/// A refusal of the client's credit's write, as a booking's.
fn credit_refusal(error: TxError<LedgerError>) -> TxError<BankError> {
    match error {
        TxError::Db(error) => TxError::Db(error),
        TxError::Refused(error) => TxError::Refused(error.into()),
        TxError::Previewed(never) => match never {},
    }
}

fn mapping_text(mapping: &CsvMapping) -> String {
    let columns = &mapping.columns;
    serde_json::json!({
        "delimiter": char::from(mapping.delimiter).to_string(),
        "decimalSeparator": mapping.decimal_separator.to_string(),
        "dateFormat": mapping.date_format,
        "columns": {
            "date": columns.date, "amount": columns.amount, "currency": columns.currency,
            "counterpartyName": columns.counterparty_name, "counterpartyIban": columns.counterparty_iban,
            "text": columns.text, "reference": columns.reference,
        }
    })
    .to_string()
}

fn mapping_from(text: &str) -> Result<CsvMapping, StoreError> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| corrupt("CSV mapping", e))?;
    let word = |value: &serde_json::Value| value.as_str().map(str::to_owned);
    let columns = &value["columns"];
    let required = |name: &str| word(&columns[name]).ok_or_else(|| corrupt("CSV mapping column", name));
    Ok(CsvMapping {
        delimiter: word(&value["delimiter"])
            .and_then(|d| d.bytes().next())
            .ok_or_else(|| corrupt("CSV mapping", "delimiter"))?,
        decimal_separator: word(&value["decimalSeparator"])
            .and_then(|d| d.chars().next())
            .ok_or_else(|| corrupt("CSV mapping", "decimalSeparator"))?,
        date_format: word(&value["dateFormat"]).ok_or_else(|| corrupt("CSV mapping", "dateFormat"))?,
        columns: CsvColumns {
            date: required("date")?,
            amount: required("amount")?,
            currency: word(&columns["currency"]),
            counterparty_name: word(&columns["counterpartyName"]),
            counterparty_iban: word(&columns["counterpartyIban"]),
            text: required("text")?,
            reference: word(&columns["reference"]),
        },
    })
}

const OPEN: [InvoiceStatus; 3] = [InvoiceStatus::Pending, InvoiceStatus::PaidPartial, InvoiceStatus::Overdue];

/// Inserts `$rows` (value tuples of bank transactions, one per id of `$ids`), skipping each
/// whose entry key the team keeps already; answers the ids inserted. `batched`: a thousand
/// rows a statement (seventeen bound parameters a row); `one_by_one`: a statement a row.
macro_rules! insert_transactions {
    (batched $conn:ident, $rows:expr, $ids:expr) => {{
        let mut added: Vec<DbUuid> = Vec::new();
        for chunk in $rows.chunks(1000) {
            let inserted: Vec<DbUuid> = diesel::insert_into(bank_transactions::table)
                .values(chunk.to_vec())
                .on_conflict((bank_transactions::team_id, bank_transactions::entry_key))
                .do_nothing()
                .returning(bank_transactions::id)
                .get_results($conn)
                .await?;
            added.extend(inserted);
        }
        added
    }};
    (one_by_one $conn:ident, $rows:expr, $ids:expr) => {{
        let mut added: Vec<DbUuid> = Vec::new();
        for (row, id) in $rows.into_iter().zip(&$ids) {
            let inserted = diesel::insert_into(bank_transactions::table)
                .values(row)
                .on_conflict((bank_transactions::team_id, bank_transactions::entry_key))
                .do_nothing()
                .execute($conn)
                .await?;
            if inserted == 1 {
                added.push(DbUuid::of(*id));
            }
        }
        added
    }};
}

#[async_trait]
impl BankRepository for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %team, statement = %new.id))]
    async fn import_statement(
        &self,
        team: TeamId,
        new: &NewStatement,
    ) -> Result<(ImportedStatement, Vec<BankTransaction>), StoreError> {
        let statement = &new.statement;
        // On PostgreSQL a thousand rows a statement; on SQLite, which diesel gives no
        // multi-row insert and where a row costs no round trip, one at a time.
        macro_rules! import_rows {
            ($mode:ident $conn:ident) => {
                $conn.transaction(async |$conn| {
                    diesel::insert_into(bank_statements::table)
                        .values((
                            bank_statements::team_id.eq(DbUuid::of(team)),
                            bank_statements::id.eq(DbUuid::of(new.id)),
                            bank_statements::format.eq(new.format.as_str()),
                            bank_statements::account.eq(statement.account.as_deref()),
                            bank_statements::currency.eq(statement.currency.as_str()),
                            bank_statements::opening_balance.eq(statement.opening.map(DbDecimal)),
                            bank_statements::closing_balance.eq(statement.closing.map(DbDecimal)),
                            bank_statements::from_day.eq(statement.from),
                            bank_statements::to_day.eq(statement.to),
                            bank_statements::entries
                                .eq(i32::try_from(statement.entries.len()).unwrap_or(i32::MAX)),
                            bank_statements::duplicates.eq(0),
                            bank_statements::imported_at.eq(new.imported_at),
                        ))
                        .execute($conn)
                        .await?;
                    // What is new goes in, what is kept already is skipped.
                    let rows: Vec<_> = statement
                        .entries
                        .iter()
                        .zip(&new.keys)
                        .zip(&new.ids)
                        .map(|((entry, key), id)| {
                            let status = if entry.is_credit() {
                                TransactionStatus::Unmatched
                            } else {
                                TransactionStatus::Ignored
                            };
                            (
                                bank_transactions::team_id.eq(DbUuid::of(team)),
                                bank_transactions::id.eq(DbUuid::of(*id)),
                                bank_transactions::statement_id.eq(DbUuid::of(new.id)),
                                bank_transactions::entry_key.eq(key.as_str()),
                                bank_transactions::account.eq(statement.account.as_deref()),
                                bank_transactions::booked_on.eq(entry.booked_on),
                                bank_transactions::value_on.eq(entry.value_on),
                                bank_transactions::amount.eq(DbDecimal(entry.amount)),
                                bank_transactions::currency.eq(entry.currency.as_str()),
                                bank_transactions::counterparty_name.eq(entry.counterparty_name.as_deref()),
                                bank_transactions::counterparty_iban.eq(entry.counterparty_iban.as_deref()),
                                bank_transactions::remittance.eq(entry.text.as_str()),
                                bank_transactions::reference.eq(entry.reference.as_deref()),
                                bank_transactions::bank_reference.eq(entry.bank_reference.as_deref()),
                                bank_transactions::status.eq(status.as_str()),
                                bank_transactions::credited.eq(DbDecimal(Decimal::ZERO)),
                                bank_transactions::created_at.eq(new.imported_at),
                            )
                        })
                        .collect();
                    let added = insert_transactions!($mode $conn, rows, new.ids);
                    let duplicates = statement.entries.len() - added.len();
                    diesel::update(
                        bank_statements::table
                            .filter(bank_statements::team_id.eq(DbUuid::of(team)))
                            .filter(bank_statements::id.eq(DbUuid::of(new.id))),
                    )
                    .set(bank_statements::duplicates.eq(i32::try_from(duplicates).unwrap_or(i32::MAX)))
                    .execute($conn)
                    .await?;
                    Ok::<_, diesel::result::Error>(added)
                })
                .await
                .or_store()
            };
        }
        let added: Vec<DbUuid> = db_run!(self, postgres: |conn| import_rows!(batched conn)?, sqlite: |conn| import_rows!(one_by_one conn)?);
        let kept: std::collections::HashSet<DbUuid> = added.iter().copied().collect();
        let transactions: Vec<BankTransaction> = (0..new.ids.len())
            .filter(|index| kept.contains(&DbUuid::of(new.ids[*index])))
            .filter_map(|index| new.transaction(team, index))
            .collect();
        let imported = new.imported(transactions.len());
        Ok((imported, transactions))
    }

    async fn get_statement(
        &self,
        team: TeamId,
        id: BankStatementId,
    ) -> Result<Option<ImportedStatement>, StoreError> {
        type Row = (
            DbUuid,
            String,
            Option<String>,
            String,
            Option<DbDecimal>,
            Option<DbDecimal>,
            Option<NaiveDate>,
            Option<NaiveDate>,
            i32,
            i32,
            i32,
            i32,
            DateTime<Utc>,
        );
        let row: Option<Row> = db_run!(self, |conn| bank_statements::table
            .filter(bank_statements::team_id.eq(DbUuid::of(team)))
            .filter(bank_statements::id.eq(DbUuid::of(id)))
            .select((
                bank_statements::id,
                bank_statements::format,
                bank_statements::account,
                bank_statements::currency,
                bank_statements::opening_balance,
                bank_statements::closing_balance,
                bank_statements::from_day,
                bank_statements::to_day,
                bank_statements::entries,
                bank_statements::duplicates,
                bank_statements::matched,
                bank_statements::suggested,
                bank_statements::imported_at,
            ))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        let Some((
            id,
            format,
            account,
            currency,
            opening,
            closing,
            from,
            to,
            entries,
            duplicates,
            matched,
            suggested,
            at,
        )) = row
        else {
            return Ok(None);
        };
        let count = |n: i32| usize::try_from(n).map_err(|e| corrupt("statement count", e));
        Ok(Some(ImportedStatement {
            id: id.into_id(),
            format: StatementFormat::from_word(&format)
                .ok_or_else(|| corrupt("statement format", &format))?,
            account,
            currency: accounts::Currency::parse(&currency).map_err(|e| corrupt("currency", e))?,
            opening: opening.map(|d| d.0),
            closing: closing.map(|d| d.0),
            from,
            to,
            entries: count(entries)?,
            duplicates: count(duplicates)?,
            matched: count(matched)?,
            suggested: count(suggested)?,
            imported_at: at,
        }))
    }

    async fn finish_import(
        &self,
        team: TeamId,
        statement: BankStatementId,
        (matched, suggested): (usize, usize),
        left: &[BankTransaction],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        // Every unmatched credit raises an event: on PostgreSQL, a thousand a statement.
        macro_rules! finish {
            ($mode:ident $conn:ident) => {
                $conn.transaction(async |$conn| {
                    diesel::update(
                        bank_statements::table
                            .filter(bank_statements::team_id.eq(DbUuid::of(team)))
                            .filter(bank_statements::id.eq(DbUuid::of(statement))),
                    )
                    .set((
                        bank_statements::matched.eq(i32::try_from(matched).unwrap_or(i32::MAX)),
                        bank_statements::suggested.eq(i32::try_from(suggested).unwrap_or(i32::MAX)),
                    ))
                    .execute($conn)
                    .await?;
                    let unmatched: Vec<notify::NewEvent> = left
                        .iter()
                        .flat_map(|t| notify::raise::bank_transaction_unmatched(t).events(&*self.describe, at))
                        .collect();
                    record_events!($mode $conn, unmatched);
                    Ok::<_, TxError<StoreError>>(())
                })
                .await
                .map_err(TxError::into_port)
            };
        }
        let done =
            db_run!(self, postgres: |conn| finish!(batched conn), sqlite: |conn| finish!(one_by_one conn));
        self.signalling(done)
    }

    async fn open_invoices(&self, team: TeamId) -> Result<Vec<OpenInvoice>, StoreError> {
        type Row = (DbUuid, String, i32, String, String, DbDecimal, DbDecimal, DbDecimal, DbDecimal);
        let rows: Vec<Row> = db_run!(self, |conn| invoices::table
            .inner_join(
                clients::table
                    .on(clients::team_id.eq(invoices::team_id).and(clients::id.eq(invoices::client_id)))
            )
            .filter(invoices::team_id.eq(DbUuid::of(team)))
            .filter(invoices::status.eq_any(OPEN.map(InvoiceStatus::as_str)))
            .select((
                invoices::id,
                invoices::number,
                invoices::number_counter,
                clients::name,
                invoices::currency,
                invoices::payable,
                invoices::amount_paid,
                invoices::amount_credited,
                invoices::amount_written_off,
            ))
            .load(conn)
            .await
            .or_store()?);
        rows.into_iter()
            .map(|(id, number, counter, client, currency, payable, paid, credited, written_off)| {
                Ok(OpenInvoice {
                    id: id.into_id(),
                    number: billing::DocumentNumber::stored(number, counter.unsigned_abs()),
                    client_name: client,
                    currency: accounts::Currency::parse(&currency).map_err(|e| corrupt("currency", e))?,
                    due: payable.0 - paid.0 - credited.0 - written_off.0,
                })
            })
            .filter(|open: &Result<OpenInvoice, StoreError>| {
                open.as_ref().map_or(true, |o| o.due > Decimal::ZERO)
            })
            .collect()
    }

    async fn get_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
    ) -> Result<Option<BankTransaction>, StoreError> {
        let (rows, payments) = db_run!(self, |conn| async {
            let rows: Vec<TransactionRow> = bank_transactions::table
                .filter(bank_transactions::team_id.eq(DbUuid::of(team)))
                .filter(bank_transactions::id.eq(DbUuid::of(id)))
                .load(conn)
                .await?;
            Ok::<_, diesel::result::Error>(with_payments!(conn, team, rows))
        }
        .await
        .or_store()?);
        rows.into_iter().map(|row| transaction_from(row, &payments)).next().transpose()
    }

    async fn list_transactions(
        &self,
        team: TeamId,
        filter: &TransactionFilter,
    ) -> Result<Vec<BankTransaction>, StoreError> {
        let statuses: Vec<&str> = filter.statuses.iter().map(|s| s.as_str()).collect();
        let (rows, payments) = db_run!(self, |conn| async {
            let mut query = bank_transactions::table
                .filter(bank_transactions::team_id.eq(DbUuid::of(team)))
                .order((bank_transactions::booked_on.desc(), bank_transactions::id.desc()))
                .limit(i64::from(filter.limit))
                .into_boxed();
            if !statuses.is_empty() {
                query = query.filter(bank_transactions::status.eq_any(statuses.clone()));
            }
            if let Some(statement) = filter.statement {
                query = query.filter(bank_transactions::statement_id.eq(DbUuid::of(statement)));
            }
            if let Some((day, id)) = filter.after {
                query =
                    query.filter(bank_transactions::booked_on.lt(day).or(
                        bank_transactions::booked_on.eq(day).and(bank_transactions::id.lt(DbUuid::of(id))),
                    ));
            }
            let rows: Vec<TransactionRow> = query.load(conn).await?;
            Ok::<_, diesel::result::Error>(with_payments!(conn, team, rows))
        }
        .await
        .or_store()?);
        rows.into_iter().map(|row| transaction_from(row, &payments)).collect()
    }

    #[tracing::instrument(skip(self, allocations, entries))]
    async fn book_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        allocations: &[Allocation],
        entries: &[LedgerEntryId],
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let transaction = lock_transaction!(conn, team, id);
                check_booking(&transaction, allocations).map_err(TxError::Refused)?;
                let currency = transaction.entry.currency;
                let mut payments = Vec::new();
                let (mut credited, mut credited_client) = (Decimal::ZERO, None);
                for (allocation, entry_id) in allocations.iter().zip(entries) {
                    let invoice = allocation.invoice;
                    let booked: Result<(Option<LedgerEntry>, Invoice, Decimal), TxError<LedgerError>> =
                        async {
                            let current = lock_invoice!(conn, team, invoice, at);
                            if current.currency != currency {
                                return Ok((None, current, Decimal::ZERO));
                            }
                            let split = split_payment(current.balance.due(), allocation.amount);
                            let before = current.status;
                            let (entry, after) = if split.invoice > Decimal::ZERO {
                                let new = payment_entry(*entry_id, split.invoice, &transaction, at);
                                let (entry, after) = book_entry!(conn, team, current, new);
                                record_events!(
                                    conn,
                                    notify::raise::entry_recorded(&entry, before, &after)
                                        .events(&*self.describe, at)
                                );
                                (Some(entry), after)
                            } else {
                                (None, current)
                            };
                            if split.credit > Decimal::ZERO {
                                let held = lock_credit!(conn, team, after.client_id, currency, at);
                                write_credit!(conn, team, after.client_id, currency, held + split.credit);
                            }
                            Ok((entry, after, split.credit))
                        }
                        .await;
                    let (entry, after, credit) = booked.map_err(|error| ledger_refusal(error, invoice))?;
                    if after.currency != currency {
                        return Err(TxError::Refused(BankError::OtherCurrency {
                            invoice: after.number,
                            currency: after.currency,
                        }));
                    }
                    if let Some(entry) = entry {
                        diesel::insert_into(bank_payments::table)
                            .values((
                                bank_payments::team_id.eq(DbUuid::of(team)),
                                bank_payments::transaction_id.eq(DbUuid::of(id)),
                                bank_payments::entry_id.eq(DbUuid::of(entry.id)),
                                bank_payments::invoice_id.eq(DbUuid::of(after.id)),
                                bank_payments::amount.eq(DbDecimal(entry.amount)),
                            ))
                            .execute(conn)
                            .await?;
                        payments.push(BankPayment {
                            entry_id: entry.id,
                            invoice_id: after.id,
                            amount: entry.amount,
                        });
                    }
                    if credit > Decimal::ZERO {
                        credited += credit;
                        credited_client = Some(after.client_id);
                    }
                }
                diesel::update(
                    bank_transactions::table
                        .filter(bank_transactions::team_id.eq(DbUuid::of(team)))
                        .filter(bank_transactions::id.eq(DbUuid::of(id))),
                )
                .set((
                    bank_transactions::status.eq(TransactionStatus::Matched.as_str()),
                    bank_transactions::suggested_invoice_id.eq(None::<DbUuid>),
                    bank_transactions::credited.eq(DbDecimal(credited)),
                    bank_transactions::credited_client_id.eq(credited_client.map(DbUuid::of)),
                ))
                .execute(conn)
                .await?;
                Ok::<_, TxError<BankError>>(BankTransaction {
                    status: TransactionStatus::Matched,
                    suggested_invoice: None,
                    payments,
                    credited,
                    credited_client,
                    ..transaction
                })
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    async fn suggest(
        &self,
        team: TeamId,
        id: BankTransactionId,
        invoice: InvoiceId,
    ) -> Result<Option<BankTransaction>, StoreError> {
        db_run!(self, |conn| diesel::update(
            bank_transactions::table
                .filter(bank_transactions::team_id.eq(DbUuid::of(team)))
                .filter(bank_transactions::id.eq(DbUuid::of(id)))
                .filter(
                    bank_transactions::status.eq_any([
                        TransactionStatus::Unmatched.as_str(),
                        TransactionStatus::Suggested.as_str()
                    ])
                ),
        )
        .set((
            bank_transactions::status.eq(TransactionStatus::Suggested.as_str()),
            bank_transactions::suggested_invoice_id.eq(Some(DbUuid::of(invoice))),
        ))
        .execute(conn)
        .await
        .or_store()?);
        self.get_transaction(team, id).await
    }

    #[tracing::instrument(skip(self))]
    async fn unmatch_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let transaction = lock_transaction!(conn, team, id);
                if transaction.status != TransactionStatus::Matched {
                    return Err(TxError::Refused(BankError::NotMatched));
                }
                let currency = transaction.entry.currency;
                if let Some(client) = transaction.credited_client {
                    let held: Decimal = {
                        let held: Result<Decimal, TxError<LedgerError>> =
                            async { Ok(lock_credit!(conn, team, client, currency, at)) }.await;
                        held.map_err(credit_refusal)?
                    };
                    if held < transaction.credited {
                        return Err(TxError::Refused(BankError::CreditUsed));
                    }
                    let written: Result<usize, TxError<LedgerError>> = async {
                        Ok(write_credit!(conn, team, client, currency, held - transaction.credited))
                    }
                    .await;
                    written.map_err(credit_refusal)?;
                }
                for payment in &transaction.payments {
                    let invoice = payment.invoice_id;
                    let voided: Result<(), TxError<LedgerError>> = async {
                        let current = lock_invoice!(conn, team, invoice, at);
                        let reason = Some("bank transaction unmatched");
                        let _ = void_locked_entry!(conn, self, team, current, payment.entry_id, reason, at);
                        Ok(())
                    }
                    .await;
                    voided.map_err(|error| ledger_refusal(error, invoice))?;
                }
                diesel::delete(
                    bank_payments::table
                        .filter(bank_payments::team_id.eq(DbUuid::of(team)))
                        .filter(bank_payments::transaction_id.eq(DbUuid::of(id))),
                )
                .execute(conn)
                .await?;
                diesel::update(
                    bank_transactions::table
                        .filter(bank_transactions::team_id.eq(DbUuid::of(team)))
                        .filter(bank_transactions::id.eq(DbUuid::of(id))),
                )
                .set((
                    bank_transactions::status.eq(TransactionStatus::Unmatched.as_str()),
                    bank_transactions::credited.eq(DbDecimal(Decimal::ZERO)),
                    bank_transactions::credited_client_id.eq(None::<DbUuid>),
                ))
                .execute(conn)
                .await?;
                Ok::<_, TxError<BankError>>(BankTransaction {
                    status: TransactionStatus::Unmatched,
                    payments: Vec::new(),
                    credited: Decimal::ZERO,
                    credited_client: None,
                    ..transaction
                })
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    async fn csv_mapping(&self, team: TeamId) -> Result<Option<CsvMapping>, StoreError> {
        let text: Option<String> = db_run!(self, |conn| bank_csv_mappings::table
            .filter(bank_csv_mappings::team_id.eq(DbUuid::of(team)))
            .select(bank_csv_mappings::mapping)
            .first(conn)
            .await
            .optional()
            .or_store()?);
        text.as_deref().map(mapping_from).transpose()
    }

    async fn save_csv_mapping(
        &self,
        team: TeamId,
        mapping: &CsvMapping,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let text = mapping_text(mapping);
        db_run!(self, |conn| diesel::insert_into(bank_csv_mappings::table)
            .values((
                bank_csv_mappings::team_id.eq(DbUuid::of(team)),
                bank_csv_mappings::mapping.eq(&text),
                bank_csv_mappings::updated_at.eq(now),
            ))
            .on_conflict(bank_csv_mappings::team_id)
            .do_update()
            .set((bank_csv_mappings::mapping.eq(&text), bank_csv_mappings::updated_at.eq(now)))
            .execute(conn)
            .await
            .or_store()?);
        Ok(())
    }
}
