//! Card processors' accounts, what they reported (each payment and refund booked once, by
//! its reference), and the credit each client holds per currency.

use std::collections::HashMap;

use accounts::TeamId;
use async_trait::async_trait;
use billing::cards::{
    Booked, Booking, CardAccount, CardPayment, CardRefund, CreditBalance, Processor, RefundBooking,
    TokenHash, card_entry, credit_entry, payment_split, refund_booking,
};
use billing::ledger::{EntryKind, Reference};
use billing::money::Currency;
use billing::store::LedgerError;
use billing::{CardRepository, ClientId, Invoice, InvoiceId, LedgerEntry, LedgerEntryId, LedgerRule};
use chrono::{DateTime, Utc};
use kernel::StoreError;
use rust_decimal::Decimal;

use crate::{MemoryStore, State};

#[derive(Debug)]
struct Receipt {
    team: TeamId,
    processor: Processor,
    reference: Reference,
    kind: EntryKind,
    payment: Reference,
    invoice: InvoiceId,
    amount: Decimal,
    credited: Decimal,
}

#[derive(Debug, Default)]
pub(crate) struct Cards {
    accounts: Vec<CardAccount>,
    receipts: Vec<Receipt>,
    credits: HashMap<(TeamId, ClientId, Currency), Decimal>,
}

impl Cards {
    fn booked(&self, team: TeamId, processor: Processor, reference: &Reference) -> bool {
        self.receipts.iter().any(|r| r.team == team && r.processor == processor && &r.reference == reference)
    }

    pub(crate) fn credit(&mut self, team: TeamId, client: ClientId, currency: Currency) -> &mut Decimal {
        self.credits.entry((team, client, currency)).or_default()
    }
}

impl State {
    fn invoice_of(&self, team: TeamId, id: InvoiceId) -> Result<Invoice, LedgerError> {
        self.invoices.iter().find(|i| i.team_id == team && i.id == id).cloned().ok_or(LedgerError::NotFound)
    }
}

#[async_trait]
impl CardRepository for MemoryStore {
    async fn connect_card_account(&self, account: &CardAccount) -> Result<(), StoreError> {
        let mut state = self.state();
        let accounts = &mut state.cards.accounts;
        match accounts.iter_mut().find(|a| a.team_id == account.team_id && a.processor == account.processor) {
            Some(kept) => *kept = CardAccount { created_at: kept.created_at, ..account.clone() },
            None => accounts.push(account.clone()),
        }
        Ok(())
    }

    async fn card_account(
        &self,
        team: TeamId,
        processor: Processor,
    ) -> Result<Option<CardAccount>, StoreError> {
        Ok(self
            .state()
            .cards
            .accounts
            .iter()
            .find(|a| a.team_id == team && a.processor == processor)
            .cloned())
    }

    async fn card_account_by_token(&self, hash: TokenHash) -> Result<Option<CardAccount>, StoreError> {
        Ok(self.state().cards.accounts.iter().find(|a| a.token_hash == hash).cloned())
    }

    async fn disconnect_card_account(&self, team: TeamId, processor: Processor) -> Result<bool, StoreError> {
        let accounts = &mut self.state().cards.accounts;
        let before = accounts.len();
        accounts.retain(|a| !(a.team_id == team && a.processor == processor));
        Ok(accounts.len() < before)
    }

    async fn book_card_payment(
        &self,
        team: TeamId,
        processor: Processor,
        payment: CardPayment,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.invoice_of(team, payment.invoice_id)?;
            if state.cards.booked(team, processor, &payment.reference) {
                return Ok(Booked::Already);
            }
            let split = payment_split(&current, &payment);
            let (entry, after) = if split.invoice > Decimal::ZERO {
                let new =
                    card_entry(entry, EntryKind::Payment, split.invoice, &payment.reference, payment.on, at);
                let (entry, after) = state.book(&current, new)?;
                (Some(entry), after)
            } else {
                (None, current.clone())
            };
            if split.credit > Decimal::ZERO {
                *state.cards.credit(team, current.client_id, payment.currency) += split.credit;
            }
            state.cards.receipts.push(Receipt {
                team,
                processor,
                reference: payment.reference.clone(),
                kind: EntryKind::Payment,
                payment: payment.reference.clone(),
                invoice: current.id,
                amount: payment.amount,
                credited: split.credit,
            });
            let overpaid = split.credit > Decimal::ZERO;
            state.record(
                notify::raise::card_payment_booked(entry.as_ref(), overpaid, current.status, &after)
                    .events(&*describe, at),
            );
            Ok(Booked::Now { entry, credit: split.credit, invoice: Box::new(after) })
        })
    }

    async fn book_card_refund(
        &self,
        team: TeamId,
        processor: Processor,
        refund: CardRefund,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<Booked, LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let of_payment =
                |r: &&Receipt| r.team == team && r.processor == processor && r.payment == refund.payment;
            let invoice = state
                .cards
                .receipts
                .iter()
                .find(|r| of_payment(r) && r.kind == EntryKind::Payment)
                .map(|r| r.invoice)
                .ok_or(LedgerError::NotFound)?;
            let current = state.invoice_of(team, invoice)?;
            let bookings: Vec<Booking> = state
                .cards
                .receipts
                .iter()
                .filter(of_payment)
                .map(|r| Booking { kind: r.kind, amount: r.amount, credited: r.credited })
                .collect();
            let held = *state.cards.credit(team, current.client_id, refund.currency);
            let Some(RefundBooking { amount, split }) = refund_booking(&current, &refund, &bookings, held)?
            else {
                return Ok(Booked::Already);
            };
            let (entry, after) = if split.invoice > Decimal::ZERO {
                let new = card_entry(entry, EntryKind::Refund, split.invoice, &refund.charge, refund.on, at);
                let (entry, after) = state.book(&current, new)?;
                state.record(
                    notify::raise::entry_recorded(&entry, current.status, &after).events(&*describe, at),
                );
                (Some(entry), after)
            } else {
                (None, current.clone())
            };
            if split.credit > Decimal::ZERO {
                *state.cards.credit(team, current.client_id, refund.currency) -= split.credit;
            }
            state.cards.receipts.push(Receipt {
                team,
                processor,
                reference: refund.key(),
                kind: EntryKind::Refund,
                payment: refund.payment.clone(),
                invoice,
                amount,
                credited: split.credit,
            });
            Ok(Booked::Now { entry, credit: split.credit, invoice: Box::new(after) })
        })
    }

    async fn apply_credit(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        amount: Decimal,
        entry: LedgerEntryId,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.invoice_of(team, invoice)?;
            let held = *state.cards.credit(team, current.client_id, current.currency);
            if amount > held {
                return Err(LedgerError::Rule(LedgerRule::CreditShort { available: held }));
            }
            let (entry, after) = state.book(&current, credit_entry(entry, amount, at))?;
            *state.cards.credit(team, current.client_id, current.currency) -= entry.amount;
            state
                .record(notify::raise::entry_recorded(&entry, current.status, &after).events(&*describe, at));
            Ok((entry, after))
        })
    }

    async fn credit_balances(
        &self,
        team: TeamId,
        client: Option<ClientId>,
    ) -> Result<Vec<CreditBalance>, StoreError> {
        let state = self.state();
        let mut balances: Vec<CreditBalance> = state
            .cards
            .credits
            .iter()
            .filter(|((t, c, _), amount)| {
                *t == team && client.is_none_or(|id| id == *c) && **amount > Decimal::ZERO
            })
            .map(|((_, client_id, currency), amount)| CreditBalance {
                client_id: *client_id,
                currency: *currency,
                amount: *amount,
            })
            .collect();
        balances.sort_by(|a, b| (a.client_id, a.currency.as_str()).cmp(&(b.client_id, b.currency.as_str())));
        Ok(balances)
    }
}
