//! Card processors over diesel: a team's account with each, what they reported and how it
//! was booked (`card_receipts`, one row per payment or refund, the key that books it once),
//! and the credit each client holds per currency (`client_credits`).
//!
//! A booking takes the invoice's lock first (as every write of its books does), then looks
//! for its receipt: a report delivered twice, to one replica or two, finds the first's row
//! once that one committed, and books nothing. A client's credit row is written before it
//! is read, so two bookings for one client take turns (the row's lock on PostgreSQL, the
//! write lock on SQLite).

use accounts::TeamId;
use async_trait::async_trait;
use billing::cards::{
    Booked, Booking, CardAccount, CardPayment, CardRefund, CreditBalance, Processor, ProcessorSecret,
    RefundBooking, TokenHash, card_entry, credit_entry, payment_split, refund_booking,
};
use billing::ledger::{EntryKind, Reference};
use billing::store::LedgerError;
use billing::{
    CardRepository, ClientId, Invoice, InvoiceId, LedgerEntry, LedgerEntryId, LedgerRule, LineItem,
};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;
use rust_decimal::Decimal;

use crate::chasing::record_events;
use crate::invoice_rows::{InvoiceRow, LineRow, invoice_from};
use crate::ledger::{insert_entry, lock_invoice, rebalanced, write_balance};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

#[derive(Queryable)]
struct AccountRow {
    team_id: DbUuid,
    processor: String,
    secret_key: String,
    webhook_secret: String,
    webhook_token_hash: Vec<u8>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<AccountRow> for CardAccount {
    type Error = StoreError;
    fn try_from(row: AccountRow) -> Result<Self, StoreError> {
        Ok(CardAccount {
            team_id: row.team_id.into_id(),
            processor: <Processor as kernel::Words>::parse_word(&row.processor)
                .map_err(|e| corrupt("card processor", e))?,
            secret_key: ProcessorSecret::from_stored(row.secret_key),
            webhook_secret: ProcessorSecret::from_stored(row.webhook_secret),
            token_hash: TokenHash(
                row.webhook_token_hash.try_into().map_err(|_| corrupt("webhook token hash", "length"))?,
            ),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// The credit the client holds in the currency, its row written first so that it stays
/// locked until the transaction ends.
macro_rules! lock_credit {
    ($conn:ident, $team:expr, $client:expr, $currency:expr, $at:expr) => {{
        diesel::insert_into(client_credits::table)
            .values((
                client_credits::team_id.eq(DbUuid::of($team)),
                client_credits::client_id.eq(DbUuid::of($client)),
                client_credits::currency.eq($currency.as_str()),
                client_credits::balance.eq(DbDecimal(Decimal::ZERO)),
                client_credits::updated_at.eq($at),
            ))
            .on_conflict((client_credits::team_id, client_credits::client_id, client_credits::currency))
            .do_update()
            .set(client_credits::updated_at.eq($at))
            .execute($conn)
            .await?;
        let balance: DbDecimal = client_credits::table
            .filter(client_credits::team_id.eq(DbUuid::of($team)))
            .filter(client_credits::client_id.eq(DbUuid::of($client)))
            .filter(client_credits::currency.eq($currency.as_str()))
            .select(client_credits::balance)
            .first($conn)
            .await?;
        balance.0
    }};
}
pub(crate) use lock_credit;

/// Sets the client's credit in the currency (locked by [`lock_credit`]) to `$balance`.
macro_rules! write_credit {
    ($conn:ident, $team:expr, $client:expr, $currency:expr, $balance:expr) => {
        diesel::update(
            client_credits::table
                .filter(client_credits::team_id.eq(DbUuid::of($team)))
                .filter(client_credits::client_id.eq(DbUuid::of($client)))
                .filter(client_credits::currency.eq($currency.as_str())),
        )
        .set(client_credits::balance.eq(DbDecimal($balance)))
        .execute($conn)
        .await?
    };
}
pub(crate) use write_credit;

/// Whether the processor's `$reference` was booked already.
macro_rules! booked_before {
    ($conn:ident, $team:expr, $processor:expr, $reference:expr) => {{
        let found: Option<String> = card_receipts::table
            .filter(card_receipts::team_id.eq(DbUuid::of($team)))
            .filter(card_receipts::processor.eq($processor.as_str()))
            .filter(card_receipts::reference.eq($reference.as_str()))
            .select(card_receipts::kind)
            .first($conn)
            .await
            .optional()?;
        found.is_some()
    }};
}

/// What a receipt records of a booking.
struct Receipt<'a> {
    team: TeamId,
    processor: Processor,
    reference: &'a Reference,
    kind: EntryKind,
    payment: &'a Reference,
    invoice: &'a Invoice,
    /// The payment's or refund's, which its credit is in.
    currency: billing::money::Currency,
    amount: Decimal,
    booked: Decimal,
    credited: Decimal,
    at: DateTime<Utc>,
}

macro_rules! insert_receipt {
    ($conn:ident, $receipt:expr) => {{
        let receipt: Receipt<'_> = $receipt;
        diesel::insert_into(card_receipts::table)
            .values((
                card_receipts::team_id.eq(DbUuid::of(receipt.team)),
                card_receipts::processor.eq(receipt.processor.as_str()),
                card_receipts::reference.eq(receipt.reference.as_str()),
                card_receipts::kind.eq(receipt.kind.as_str()),
                card_receipts::payment.eq(receipt.payment.as_str()),
                card_receipts::invoice_id.eq(DbUuid::of(receipt.invoice.id)),
                card_receipts::client_id.eq(DbUuid::of(receipt.invoice.client_id)),
                card_receipts::currency.eq(receipt.currency.as_str()),
                card_receipts::amount.eq(DbDecimal(receipt.amount)),
                card_receipts::booked.eq(DbDecimal(receipt.booked)),
                card_receipts::credited.eq(DbDecimal(receipt.credited)),
                card_receipts::created_at.eq(receipt.at),
            ))
            .execute($conn)
            .await?;
    }};
}

/// Records `$entry` (a `NewEntry`) on the locked invoice `$current`: the entry, the balance
/// and the next reminder; evaluates to the entry and the invoice after it.
macro_rules! book_entry {
    ($conn:ident, $team:expr, $current:expr, $entry:expr) => {{
        let current: Invoice = $current;
        let (entry, balance) = billing::store::record(&current, $entry)
            .map_err(|rule| TxError::Refused(LedgerError::Rule(rule)))?;
        insert_entry!($conn, &entry);
        write_balance!($conn, $team, current.id, balance);
        let after = rebalanced!($conn, $team, current, balance);
        (entry, after)
    }};
}
pub(crate) use book_entry;

#[async_trait]
impl CardRepository for SqlStore {
    async fn connect_card_account(&self, account: &CardAccount) -> Result<(), StoreError> {
        db_run!(self, |conn| diesel::insert_into(card_accounts::table)
            .values((
                card_accounts::team_id.eq(DbUuid::of(account.team_id)),
                card_accounts::processor.eq(account.processor.as_str()),
                card_accounts::secret_key.eq(account.secret_key.expose()),
                card_accounts::webhook_secret.eq(account.webhook_secret.expose()),
                card_accounts::webhook_token_hash.eq(&account.token_hash.0[..]),
                card_accounts::created_at.eq(account.created_at),
                card_accounts::updated_at.eq(account.updated_at),
            ))
            .on_conflict((card_accounts::team_id, card_accounts::processor))
            .do_update()
            .set((
                card_accounts::secret_key.eq(account.secret_key.expose()),
                card_accounts::webhook_secret.eq(account.webhook_secret.expose()),
                card_accounts::webhook_token_hash.eq(&account.token_hash.0[..]),
                card_accounts::updated_at.eq(account.updated_at),
            ))
            .execute(conn)
            .await
            .or_store()?);
        Ok(())
    }

    async fn card_account(
        &self,
        team: TeamId,
        processor: Processor,
    ) -> Result<Option<CardAccount>, StoreError> {
        let row: Option<AccountRow> = db_run!(self, |conn| card_accounts::table
            .filter(card_accounts::team_id.eq(DbUuid::of(team)))
            .filter(card_accounts::processor.eq(processor.as_str()))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(CardAccount::try_from).transpose()
    }

    async fn card_account_by_token(&self, hash: TokenHash) -> Result<Option<CardAccount>, StoreError> {
        let row: Option<AccountRow> = db_run!(self, |conn| card_accounts::table
            .filter(card_accounts::webhook_token_hash.eq(&hash.0[..]))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(CardAccount::try_from).transpose()
    }

    async fn disconnect_card_account(&self, team: TeamId, processor: Processor) -> Result<bool, StoreError> {
        let deleted = db_run!(self, |conn| diesel::delete(
            card_accounts::table
                .filter(card_accounts::team_id.eq(DbUuid::of(team)))
                .filter(card_accounts::processor.eq(processor.as_str()))
        )
        .execute(conn)
        .await
        .or_store()?);
        Ok(deleted > 0)
    }

    #[tracing::instrument(skip(self, payment), fields(invoice = %payment.invoice_id))]
    async fn book_card_payment(
        &self,
        team: TeamId,
        processor: Processor,
        payment: CardPayment,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_invoice!(conn, team, payment.invoice_id, at);
                if booked_before!(conn, team, processor, payment.reference) {
                    return Ok(Booked::Already);
                }
                let before = current.status;
                let split = payment_split(&current, &payment);
                let (client, currency) = (current.client_id, payment.currency);
                let (entry, after) = if split.invoice > Decimal::ZERO {
                    let new = card_entry(
                        entry,
                        EntryKind::Payment,
                        split.invoice,
                        &payment.reference,
                        payment.on,
                        at,
                    );
                    let (entry, after) = book_entry!(conn, team, current, new);
                    (Some(entry), after)
                } else {
                    (None, current)
                };
                if split.credit > Decimal::ZERO {
                    let held = lock_credit!(conn, team, client, currency, at);
                    write_credit!(conn, team, client, currency, held + split.credit);
                }
                insert_receipt!(
                    conn,
                    Receipt {
                        team,
                        processor,
                        reference: &payment.reference,
                        kind: EntryKind::Payment,
                        payment: &payment.reference,
                        invoice: &after,
                        currency,
                        amount: payment.amount,
                        booked: split.invoice,
                        credited: split.credit,
                        at,
                    }
                );
                let overpaid = split.credit > Decimal::ZERO;
                record_events!(
                    conn,
                    notify::raise::card_payment_booked(entry.as_ref(), overpaid, before, &after)
                        .events(&*self.describe, at)
                );
                Ok::<_, TxError<LedgerError>>(Booked::Now {
                    entry,
                    credit: split.credit,
                    invoice: Box::new(after),
                })
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self, refund))]
    async fn book_card_refund(
        &self,
        team: TeamId,
        processor: Processor,
        refund: CardRefund,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let receipts = card_receipts::table
                    .filter(card_receipts::team_id.eq(DbUuid::of(team)))
                    .filter(card_receipts::processor.eq(processor.as_str()));
                // The payment's invoice, locked by the first statement (on SQLite a read
                // before the first write could fail after another write).
                let of_payment = invoices::id.eq_any(
                    receipts
                        .filter(card_receipts::reference.eq(refund.payment.as_str()))
                        .filter(card_receipts::kind.eq(EntryKind::Payment.as_str()))
                        .select(card_receipts::invoice_id),
                );
                let current = lock_invoice!(@which conn, team, of_payment, at);
                let rows: Vec<(String, DbDecimal, DbDecimal)> = receipts
                    .filter(card_receipts::payment.eq(refund.payment.as_str()))
                    .select((card_receipts::kind, card_receipts::amount, card_receipts::credited))
                    .load(conn)
                    .await?;
                let bookings = rows
                    .into_iter()
                    .map(|(kind, amount, credited)| {
                        let kind = <EntryKind as kernel::Words>::parse_word(&kind)
                            .map_err(|e| TxError::Refused(corrupt("card receipt kind", e).into()))?;
                        Ok(Booking { kind, amount: amount.0, credited: credited.0 })
                    })
                    .collect::<Result<Vec<_>, TxError<LedgerError>>>()?;
                let (client, currency) = (current.client_id, refund.currency);
                let held = lock_credit!(conn, team, client, currency, at);
                let booking = refund_booking(&current, &refund, &bookings, held)
                    .map_err(|rule| TxError::Refused(LedgerError::Rule(rule)))?;
                let Some(RefundBooking { amount, split }) = booking else { return Ok(Booked::Already) };
                if split.credit > Decimal::ZERO {
                    write_credit!(conn, team, client, currency, held - split.credit);
                }
                let (entry, after) = if split.invoice > Decimal::ZERO {
                    let new =
                        card_entry(entry, EntryKind::Refund, split.invoice, &refund.charge, refund.on, at);
                    let before = current.status;
                    let (entry, after) = book_entry!(conn, team, current, new);
                    record_events!(
                        conn,
                        notify::raise::entry_recorded(&entry, before, &after).events(&*self.describe, at)
                    );
                    (Some(entry), after)
                } else {
                    (None, current)
                };
                insert_receipt!(
                    conn,
                    Receipt {
                        team,
                        processor,
                        reference: &refund.key(),
                        kind: EntryKind::Refund,
                        payment: &refund.payment,
                        invoice: &after,
                        currency,
                        amount,
                        booked: split.invoice,
                        credited: split.credit,
                        at,
                    }
                );
                Ok::<_, TxError<LedgerError>>(Booked::Now {
                    entry,
                    credit: split.credit,
                    invoice: Box::new(after),
                })
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    #[tracing::instrument(skip(self))]
    async fn apply_credit(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        amount: Decimal,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let done = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_invoice!(conn, team, invoice, at);
                let (client, currency) = (current.client_id, current.currency);
                let held = lock_credit!(conn, team, client, currency, at);
                if amount > held {
                    return Err(TxError::Refused(LedgerError::Rule(LedgerRule::CreditShort {
                        available: held,
                    })));
                }
                let before = current.status;
                let (entry, after) = book_entry!(conn, team, current, credit_entry(entry, amount, at));
                write_credit!(conn, team, client, currency, held - entry.amount);
                record_events!(
                    conn,
                    notify::raise::entry_recorded(&entry, before, &after).events(&*self.describe, at)
                );
                Ok::<_, TxError<LedgerError>>((entry, after))
            })
            .await
            .map_err(TxError::into_port));
        self.signalling(done)
    }

    async fn credit_balances(
        &self,
        team: TeamId,
        client: Option<ClientId>,
    ) -> Result<Vec<CreditBalance>, StoreError> {
        let rows: Vec<(DbUuid, String, DbDecimal)> = db_run!(self, |conn| {
            let mut query = client_credits::table
                .filter(client_credits::team_id.eq(DbUuid::of(team)))
                .select((client_credits::client_id, client_credits::currency, client_credits::balance))
                .into_boxed();
            if let Some(client) = client {
                query = query.filter(client_credits::client_id.eq(DbUuid::of(client)));
            }
            query.load(conn).await.or_store()?
        });
        let mut balances = rows
            .into_iter()
            .filter(|(_, _, balance)| balance.0 > Decimal::ZERO)
            .map(|(client, currency, balance)| {
                Ok(CreditBalance {
                    client_id: client.into_id(),
                    currency: billing::money::Currency::parse(&currency)
                        .map_err(|e| corrupt("currency", e))?,
                    amount: balance.0,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        balances.sort_by(|a, b| (a.client_id, a.currency.as_str()).cmp(&(b.client_id, b.currency.as_str())));
        Ok(balances)
    }
}
