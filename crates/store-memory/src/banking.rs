//! Bank statements and their transactions in memory: each entry kept once by its key, and
//! bookings checked whole before anything changes (the state's lock is the transaction).

use std::collections::{HashMap, HashSet};

use accounts::TeamId;
use async_trait::async_trait;
use billing::banking::{
    Allocation, BankError, BankPayment, BankRepository, BankStatementId, BankTransaction, BankTransactionId,
    CsvMapping, ImportedStatement, NewStatement, OpenInvoice, TransactionFilter, TransactionStatus,
    check_booking, payment_entry,
};
use billing::cards::split_payment;
use billing::ledger::LedgerEntryId;
use billing::{InvoiceId, InvoiceStatus};
use chrono::{DateTime, Utc};
use kernel::StoreError;
use rust_decimal::Decimal;

use crate::{MemoryStore, State};

/// What the memory store keeps of banking.
#[derive(Debug, Default)]
pub(crate) struct Banking {
    statements: Vec<(TeamId, ImportedStatement)>,
    transactions: Vec<BankTransaction>,
    keys: HashSet<(TeamId, String)>,
    mappings: HashMap<TeamId, CsvMapping>,
}

impl State {
    fn transaction_mut(&mut self, team: TeamId, id: BankTransactionId) -> Option<&mut BankTransaction> {
        self.banking.transactions.iter_mut().find(|t| t.team_id == team && t.id == id)
    }
}

fn is_open(status: InvoiceStatus) -> bool {
    matches!(status, InvoiceStatus::Pending | InvoiceStatus::PaidPartial | InvoiceStatus::Overdue)
}

#[async_trait]
impl BankRepository for MemoryStore {
    async fn import_statement(
        &self,
        team: TeamId,
        new: &NewStatement,
    ) -> Result<(ImportedStatement, Vec<BankTransaction>), StoreError> {
        let mut state = self.state();
        let mut added = Vec::new();
        for (index, key) in new.keys.iter().enumerate() {
            if state.banking.keys.insert((team, key.clone()))
                && let Some(transaction) = new.transaction(team, index)
            {
                state.banking.transactions.push(transaction.clone());
                added.push(transaction);
            }
        }
        let imported = new.imported(added.len());
        state.banking.statements.push((team, imported.clone()));
        Ok((imported, added))
    }

    async fn get_statement(
        &self,
        team: TeamId,
        id: BankStatementId,
    ) -> Result<Option<ImportedStatement>, StoreError> {
        let state = self.state();
        Ok(state.banking.statements.iter().find(|(t, s)| *t == team && s.id == id).map(|(_, s)| s.clone()))
    }

    async fn finish_import(
        &self,
        team: TeamId,
        statement: BankStatementId,
        (matched, suggested): (usize, usize),
        left: &[BankTransaction],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let describe = self.describe.clone();
        let mut state = self.state();
        if let Some((_, kept)) =
            state.banking.statements.iter_mut().find(|(t, s)| *t == team && s.id == statement)
        {
            kept.matched = matched;
            kept.suggested = suggested;
        }
        for transaction in left {
            state.record(notify::raise::bank_transaction_unmatched(transaction).events(&*describe, at));
        }
        Ok(())
    }

    async fn open_invoices(&self, team: TeamId) -> Result<Vec<OpenInvoice>, StoreError> {
        let state = self.state();
        let name_of = |client| {
            state
                .clients
                .iter()
                .find(|c| c.team_id == team && c.id == client)
                .map(|c| c.details.name.to_string())
        };
        Ok(state
            .invoices
            .iter()
            .filter(|i| i.team_id == team && is_open(i.status) && i.balance.due() > Decimal::ZERO)
            .map(|i| OpenInvoice {
                id: i.id,
                number: i.number.clone(),
                client_name: name_of(i.client_id).unwrap_or_default(),
                currency: i.currency,
                due: i.balance.due(),
            })
            .collect())
    }

    async fn get_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
    ) -> Result<Option<BankTransaction>, StoreError> {
        Ok(self.state().banking.transactions.iter().find(|t| t.team_id == team && t.id == id).cloned())
    }

    async fn list_transactions(
        &self,
        team: TeamId,
        filter: &TransactionFilter,
    ) -> Result<Vec<BankTransaction>, StoreError> {
        let state = self.state();
        let mut listed: Vec<BankTransaction> = state
            .banking
            .transactions
            .iter()
            .filter(|t| t.team_id == team)
            .filter(|t| filter.statuses.is_empty() || filter.statuses.contains(&t.status))
            .filter(|t| filter.statement.is_none_or(|statement| t.statement_id == statement))
            .filter(|t| filter.after.is_none_or(|after| (t.entry.booked_on, t.id) < after))
            .cloned()
            .collect();
        listed.sort_by_key(|t| std::cmp::Reverse((t.entry.booked_on, t.id)));
        listed.truncate(filter.limit as usize);
        Ok(listed)
    }

    async fn book_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        allocations: &[Allocation],
        entries: &[LedgerEntryId],
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let transaction =
                state.banking.transactions.iter().find(|t| t.team_id == team && t.id == id).cloned();
            let transaction = transaction.ok_or(BankError::NotFound)?;
            check_booking(&transaction, allocations)?;
            // Everything is checked before anything changes: this store has no rollback.
            let mut invoices = Vec::with_capacity(allocations.len());
            for allocation in allocations {
                let invoice = state
                    .invoices
                    .iter()
                    .find(|i| i.team_id == team && i.id == allocation.invoice)
                    .cloned()
                    .ok_or(BankError::InvoiceNotFound(allocation.invoice))?;
                if invoice.currency != transaction.entry.currency {
                    return Err(BankError::OtherCurrency {
                        invoice: invoice.number,
                        currency: invoice.currency,
                    });
                }
                invoices.push(invoice);
            }
            let mut payments = Vec::new();
            let mut credited = Decimal::ZERO;
            let mut credited_client = None;
            for ((allocation, invoice), entry_id) in allocations.iter().zip(&invoices).zip(entries) {
                // The invoice as it stands now: an earlier allocation may have paid it.
                let current = state
                    .invoices
                    .iter()
                    .find(|i| i.id == invoice.id)
                    .cloned()
                    .unwrap_or_else(|| invoice.clone());
                let split = split_payment(current.balance.due(), allocation.amount);
                if split.invoice > Decimal::ZERO {
                    let new = payment_entry(*entry_id, split.invoice, &transaction, at);
                    let before = current.status;
                    let (entry, after) = state.book(&current, new)?;
                    state
                        .record(notify::raise::entry_recorded(&entry, before, &after).events(&*describe, at));
                    payments.push(BankPayment {
                        entry_id: entry.id,
                        invoice_id: current.id,
                        amount: entry.amount,
                    });
                }
                if split.credit > Decimal::ZERO {
                    *state.cards.credit(team, current.client_id, transaction.entry.currency) += split.credit;
                    credited += split.credit;
                    credited_client = Some(current.client_id);
                }
            }
            let kept = state.transaction_mut(team, id).ok_or(BankError::NotFound)?;
            kept.status = TransactionStatus::Matched;
            kept.suggested_invoice = None;
            kept.payments = payments;
            kept.credited = credited;
            kept.credited_client = credited_client;
            Ok(kept.clone())
        })
    }

    async fn suggest(
        &self,
        team: TeamId,
        id: BankTransactionId,
        invoice: InvoiceId,
    ) -> Result<Option<BankTransaction>, StoreError> {
        let mut state = self.state();
        let Some(kept) = state.transaction_mut(team, id) else { return Ok(None) };
        if matches!(kept.status, TransactionStatus::Unmatched | TransactionStatus::Suggested) {
            kept.status = TransactionStatus::Suggested;
            kept.suggested_invoice = Some(invoice);
        }
        Ok(Some(kept.clone()))
    }

    async fn unmatch_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let transaction =
                state.banking.transactions.iter().find(|t| t.team_id == team && t.id == id).cloned();
            let transaction = transaction.ok_or(BankError::NotFound)?;
            if transaction.status != TransactionStatus::Matched {
                return Err(BankError::NotMatched);
            }
            if let Some(client) = transaction.credited_client
                && *state.cards.credit(team, client, transaction.entry.currency) < transaction.credited
            {
                return Err(BankError::CreditUsed);
            }
            // Each void is checked before any is made.
            for payment in &transaction.payments {
                let invoice =
                    state.invoices.iter().find(|i| i.team_id == team && i.id == payment.invoice_id).cloned();
                let invoice = invoice.ok_or(BankError::InvoiceNotFound(payment.invoice_id))?;
                let (entries, credits) = state.books_of(invoice.id);
                billing::store::void(&invoice, &entries, &credits, payment.entry_id, at)?;
            }
            for payment in &transaction.payments {
                let reason = billing::ledger::Notes::parse("bank transaction unmatched").ok();
                state.void(team, payment.entry_id, reason, at, &*describe)?;
            }
            if let Some(client) = transaction.credited_client {
                *state.cards.credit(team, client, transaction.entry.currency) -= transaction.credited;
            }
            let kept = state.transaction_mut(team, id).ok_or(BankError::NotFound)?;
            kept.status = TransactionStatus::Unmatched;
            kept.payments.clear();
            kept.credited = Decimal::ZERO;
            kept.credited_client = None;
            Ok(kept.clone())
        })
    }

    async fn csv_mapping(&self, team: TeamId) -> Result<Option<CsvMapping>, StoreError> {
        Ok(self.state().banking.mappings.get(&team).cloned())
    }

    async fn save_csv_mapping(
        &self,
        team: TeamId,
        mapping: &CsvMapping,
        _at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.state().banking.mappings.insert(team, mapping.clone());
        Ok(())
    }
}
