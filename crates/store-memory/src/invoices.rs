//! The invoice and sender-address ports in memory.

use accounts::TeamId;
use async_trait::async_trait;
use billing::credit::{CreditNote, CreditNoteFilter, CreditNoteId, CreditSerial, NewCreditNote};
use billing::ledger::NewEntry;
use billing::ledger::{CreditApplication, EntryFilter, Notes, Position};
use billing::numbering::Series;
use billing::receivables::Receivable;
use billing::store::{
    BillTo, CreateInvoiceError, DeleteInvoiceError, LedgerError, NewInvoice, SaveInvoiceError, SenderChoice,
    StatusWrite,
};
use billing::{
    Balance, Invoice, InvoiceFilter, InvoiceId, InvoiceRepository, LedgerEntry, LedgerEntryId,
    LedgerRepository, SenderAddress, SenderAddressId, SenderDetails, SenderRepository, Serial,
};
use chrono::{DateTime, NaiveDate, Utc};
use kernel::StoreError;

use crate::{MemoryStore, State};

impl State {
    fn has_client(&self, team: TeamId, id: billing::ClientId) -> bool {
        self.clients.iter().any(|c| c.team_id == team && c.id == id)
    }

    fn has_sender(&self, team: TeamId, id: SenderAddressId) -> bool {
        self.senders.iter().any(|s| s.team_id == team && s.id == id)
    }

    /// The ledger entries and credit notes of an invoice, as the ledger plays them.
    pub(crate) fn books_of(
        &self,
        invoice: InvoiceId,
    ) -> (Vec<LedgerEntry>, Vec<(CreditApplication, Position)>) {
        let entries = self.ledger.iter().filter(|e| e.invoice_id == invoice).cloned().collect();
        let credits = self
            .credit_notes
            .iter()
            .filter(|n| n.invoice_id == invoice)
            .map(|n| (n.application, n.position))
            .collect();
        (entries, credits)
    }

    /// Voids the team's entry `entry` by the ledger's rules: it stays, and no longer counts.
    pub(crate) fn void(
        &mut self,
        team: TeamId,
        entry: LedgerEntryId,
        reason: Option<Notes>,
        at: DateTime<Utc>,
        describe: &dyn notify::Describe,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let target = self.ledger.iter().find(|e| e.team_id == team && e.id == entry).cloned();
        let target = target.ok_or(LedgerError::NotFound)?;
        let current = self.invoices.iter().find(|i| i.team_id == team && i.id == target.invoice_id).cloned();
        let current = current.ok_or(LedgerError::NotFound)?;
        let (entries, credits) = self.books_of(target.invoice_id);
        let balance = billing::store::void(&current, &entries, &credits, entry, at)?;
        let stored = self.invoice_mut(team, target.invoice_id).ok_or(LedgerError::NotFound)?;
        balanced(stored, balance, at);
        let voided = self.ledger.iter_mut().find(|e| e.id == entry).ok_or(LedgerError::NotFound)?;
        voided.voided_at = Some(at);
        voided.void_reason = reason;
        let voided = voided.clone();
        let invoice = self.rebalanced(&current);
        self.record(notify::raise::entry_voided(&voided).events(describe, at));
        Ok((voided, invoice))
    }

    /// Records `entry` on `current` (the invoice as it stands): the entry, the balance and
    /// the next reminder; answers the entry and the invoice after it.
    pub(crate) fn book(
        &mut self,
        current: &Invoice,
        entry: NewEntry,
    ) -> Result<(LedgerEntry, Invoice), billing::LedgerRule> {
        let at = entry.created_at;
        let (entry, balance) = billing::store::record(current, entry)?;
        if let Some(stored) = self.invoice_mut(current.team_id, current.id) {
            balanced(stored, balance, at);
        }
        self.ledger.push(entry.clone());
        Ok((entry, self.rebalanced(current)))
    }

    fn invoice_mut(&mut self, team: TeamId, id: InvoiceId) -> Option<&mut Invoice> {
        self.invoices.iter_mut().find(|i| i.team_id == team && i.id == id)
    }

    /// The invoice `before` was, as its books now leave it, with its next reminder kept:
    /// none once nothing is due, the policy's again when something is due once more.
    fn rebalanced(&mut self, before: &Invoice) -> Invoice {
        let open = |i: &Invoice| notify::reminders::is_open(i.balance.due().is_zero(), i.status);
        let now_open = self.invoice(before.team_id, before.id).is_some_and(open);
        if open(before) != now_open {
            self.refresh_reminders(before.team_id, |i| i.id == before.id);
        }
        self.invoice(before.team_id, before.id).cloned().unwrap_or_else(|| before.clone())
    }
}

/// `invoice` with the ledger's balance, and the status it gives.
fn balanced(invoice: &mut Invoice, balance: Balance, at: DateTime<Utc>) {
    invoice.balance = balance;
    invoice.status = balance.status();
    invoice.updated_at = invoice.updated_at.max(at);
}

#[async_trait]
impl InvoiceRepository for MemoryStore {
    async fn list_invoices(&self, team: TeamId, filter: &InvoiceFilter) -> Result<Vec<Invoice>, StoreError> {
        let state = self.state();
        let client_name = |id: billing::ClientId| {
            state
                .clients
                .iter()
                .find(|c| c.team_id == team && c.id == id)
                .map_or("", |c| c.details.name.as_str())
        };
        let mut invoices: Vec<Invoice> = state
            .invoices
            .iter()
            .filter(|i| i.team_id == team && filter.matches(i, client_name(i.client_id)))
            .cloned()
            .collect();
        billing::invoice::sort_for_listing(&mut invoices);
        invoices.truncate(filter.limit.map_or(usize::MAX, |limit| limit as usize));
        Ok(invoices)
    }

    async fn get_invoice(&self, team: TeamId, id: InvoiceId) -> Result<Option<Invoice>, StoreError> {
        Ok(self.state().invoices.iter().find(|i| i.team_id == team && i.id == id).cloned())
    }

    async fn find_invoice(&self, id: InvoiceId) -> Result<Option<Invoice>, StoreError> {
        Ok(self.state().invoices.iter().find(|i| i.id == id).cloned())
    }

    async fn create_invoice(&self, new: NewInvoice) -> Result<Invoice, CreateInvoiceError> {
        self.store_invoice(&new, Keep::Commit)
    }

    async fn preview_invoice(&self, new: NewInvoice) -> Result<Invoice, CreateInvoiceError> {
        self.store_invoice(&new, Keep::RollBack)
    }

    async fn replace_invoice(
        &self,
        invoice: &Invoice,
        _lines_changed: bool,
        status: StatusWrite,
    ) -> Result<Invoice, SaveInvoiceError> {
        let describe = self.describe.clone();
        self.changed(|state| replace(state, &*describe, invoice, status))
    }

    async fn delete_invoice(
        &self,
        team: TeamId,
        id: InvoiceId,
        at: DateTime<Utc>,
    ) -> Result<(), DeleteInvoiceError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let has_books = state.ledger.iter().any(|e| e.team_id == team && e.invoice_id == id)
                || state.credit_notes.iter().any(|n| n.team_id == team && n.invoice_id == id);
            if has_books {
                return Err(DeleteInvoiceError::HasMoney);
            }
            if let Some(by) = deducted_by(state, team, id) {
                return Err(DeleteInvoiceError::Deducted { by });
            }
            let index = state
                .invoices
                .iter()
                .position(|i| i.team_id == team && i.id == id)
                .ok_or(DeleteInvoiceError::NotFound)?;
            let gone = state.invoices.remove(index);
            state.drop_quote_invoice(id);
            // Its messages go with it, as the SQL stores' foreign keys take them.
            state.drop_messages_of(id);
            // Its runs keep their period without it, as the SQL stores' foreign key does.
            for (_, _, run) in
                state.recurring_runs.iter_mut().filter(|(t, _, run)| *t == team && run.invoice_id == Some(id))
            {
                run.invoice_id = None;
            }
            // The time it billed is released with it, as the SQL stores' foreign key does.
            let mut released = false;
            for entry in state.entries.iter_mut().filter(|e| e.team_id == team && e.invoice_id == Some(id)) {
                entry.invoice_id = None;
                released = true;
            }
            if released {
                state.bump_revision(team);
            }
            state.record(notify::raise::invoice_deleted(&gone).events(&*describe, at));
            Ok(())
        })
    }
}

/// An update of `invoice` under the lock, as `replace_invoice` promises.
fn replace(
    state: &mut State,
    describe: &dyn notify::Describe,
    invoice: &Invoice,
    status: StatusWrite,
) -> Result<Invoice, SaveInvoiceError> {
    {
        let team = invoice.team_id;
        let Some(index) = state.invoices.iter().position(|i| i.team_id == team && i.id == invoice.id) else {
            return Err(SaveInvoiceError::NotFound);
        };
        if !state.has_client(team, invoice.client_id) {
            return Err(SaveInvoiceError::UnknownClient);
        }
        if !state.has_sender(team, invoice.sender_id) {
            return Err(SaveInvoiceError::UnknownSender);
        }
        let stored = &state.invoices[index];
        billing::store::rate_may_change(
            &stored.exchange,
            &invoice.exchange,
            stored.balance.recorded() + stored.balance.refundable,
            stored.chasing.sent_at.is_some(),
        )?;
        let before = stored.status;
        let due_changed = stored.due_date != invoice.due_date;
        // Identity, serial, currency, creation time, the books and the chasing stay as stored.
        let mut updated = Invoice {
            id: stored.id,
            team_id: stored.team_id,
            serial: stored.serial,
            currency: stored.currency,
            created_at: stored.created_at,
            balance: stored.balance,
            status: stored.status,
            chasing: stored.chasing,
            ..invoice.clone()
        };
        let (entries, credits) = state.books_of(invoice.id);
        let (balance, entry) =
            billing::store::rebalance(&updated, stored.balance.recorded(), &entries, &credits, status)?;
        balanced(&mut updated, balance, invoice.updated_at);
        state.ledger.extend(entry.clone());
        state.invoices[index] = updated;
        if due_changed {
            state.forget_overdue(invoice.id);
        }
        state.refresh_reminders(team, |i| i.id == invoice.id);
        let saved = state.invoices[index].clone();
        let raised = notify::raise::invoice_replaced(before, &saved, entry.as_ref());
        state.record(raised.events(describe, invoice.updated_at));
        Ok(saved)
    }
}

#[async_trait]
impl SenderRepository for MemoryStore {
    async fn get_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
    ) -> Result<Option<SenderAddress>, StoreError> {
        Ok(self.state().senders.iter().find(|s| s.team_id == team && s.id == id).cloned())
    }

    async fn default_sender(&self, team: TeamId) -> Result<Option<SenderAddress>, StoreError> {
        // The first sender address of a team is its default; no other is made yet.
        Ok(self.state().senders.iter().find(|s| s.team_id == team).cloned())
    }

    async fn ensure_default_sender(&self, sender: &SenderAddress) -> Result<SenderAddress, StoreError> {
        let mut state = self.state();
        if let Some(existing) = state.senders.iter().find(|s| s.team_id == sender.team_id) {
            return Ok(existing.clone());
        }
        state.senders.push(sender.clone());
        Ok(sender.clone())
    }

    async fn update_sender(
        &self,
        team: TeamId,
        id: SenderAddressId,
        details: &SenderDetails,
        now: DateTime<Utc>,
    ) -> Result<Option<SenderAddress>, StoreError> {
        let mut state = self.state();
        let Some(sender) = state.senders.iter_mut().find(|s| s.team_id == team && s.id == id) else {
            return Ok(None);
        };
        sender.details = details.clone();
        sender.updated_at = now;
        Ok(Some(sender.clone()))
    }
}

/// Whether a create keeps what it did, or only answers what it would have made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    Commit,
    RollBack,
}

impl MemoryStore {
    /// A create, all checked before the first change: the lock makes it one transaction.
    fn store_invoice(&self, new: &NewInvoice, keep: Keep) -> Result<Invoice, CreateInvoiceError> {
        let mut state = self.state();
        let invoice = make_invoice(&mut state, &*self.describe, new, keep)?;
        drop(state);
        if keep == Keep::Commit {
            self.signal.notify_one();
        }
        Ok(invoice)
    }
}

/// Makes `new` under the lock held on `state`, all checked before the first change; with
/// `Keep::RollBack`, only answers what it would make.
pub(crate) fn make_invoice(
    state: &mut State,
    describe: &dyn notify::Describe,
    new: &NewInvoice,
    keep: Keep,
) -> Result<Invoice, CreateInvoiceError> {
    let team = new.team_id;
    // The invoice is in the currency the team has, not one it left while it was priced.
    if state.teams.iter().find(|t| t.id == team).is_some_and(|t| t.currency != new.exchange.team_currency) {
        return Err(CreateInvoiceError::TeamCurrencyChanged);
    }
    let (client_id, new_client) = match &new.bill_to {
        BillTo::Existing(id) => {
            let client = state
                .clients
                .iter()
                .find(|c| c.team_id == team && c.id == *id)
                .ok_or(CreateInvoiceError::UnknownClient)?;
            new.suits(client.details.currency)?;
            (*id, None)
        }
        BillTo::Inline { email, new_client } => {
            let key = email.normalized();
            let matched = state
                .clients
                .iter()
                .filter(|c| c.team_id == team && c.details.email.normalized() == key)
                .min_by_key(|c| (c.created_at, c.id));
            match matched {
                Some(client) => {
                    new.suits(client.details.currency)?;
                    (client.id, None)
                }
                None => (new_client.id, Some(new_client.as_ref().clone())),
            }
        }
    };
    let (sender_id, new_sender) = match &new.sender {
        SenderChoice::Given(id) if state.has_sender(team, *id) => (*id, None),
        SenderChoice::Given(_) => return Err(CreateInvoiceError::UnknownSender),
        SenderChoice::TeamDefault { fallback } => match state.senders.iter().find(|s| s.team_id == team) {
            Some(default) => (default.id, None),
            None => (fallback.id, Some(fallback.as_ref().clone())),
        },
    };
    let wanted: std::collections::HashMap<_, _> =
        new.distinct_time_entries().into_iter().map(|entry| (entry.id, entry.updated_at)).collect();
    let billable = |e: &tracking::TimeEntry| {
        e.team_id == team
            && wanted.get(&kernel::Id::as_uuid(&e.id)) == Some(&e.updated_at)
            && e.billable
            && e.invoice_id.is_none()
    };
    if state.entries.iter().filter(|e| billable(e)).count() != wanted.len() {
        return Err(CreateInvoiceError::TimeTaken);
    }
    if let Some(recurrence) = new.recurrence
        && state.invoices.iter().any(|i| i.team_id == team && i.recurrence == Some(recurrence))
    {
        return Err(CreateInvoiceError::RecurrenceTaken);
    }
    let serial = state.serials.get(&team).map_or(Serial::FIRST, |last| last.next());
    let (number, count, counter) = state.next_number(team, Series::Invoices, new.issue_date, |number| {
        state.invoices.iter().any(|i| i.team_id == team && i.number.as_str() == number.as_str())
    })?;
    let (mut invoice, opening) = new.clone().into_invoice(serial, number, client_id, sender_id)?;
    if invoice.due_date.is_some() {
        let policy = state.chasing_policy(team);
        let takes = new_client.as_ref().map_or_else(
            || state.clients.iter().any(|c| c.id == client_id && c.details.reminders_enabled),
            |client| client.details.reminders_enabled,
        );
        invoice.chasing.next_reminder_at = notify::Schedule::of(&invoice, takes, None).next_at(&policy);
    }
    if keep == Keep::RollBack {
        return Ok(invoice);
    }
    let raised = notify::raise::invoice_created(&invoice, new_client.as_ref(), opening.as_ref());
    let events = raised.events(describe, invoice.created_at);
    state.record(events);
    for entry in state.entries.iter_mut().filter(|e| billable(e)) {
        entry.invoice_id = Some(invoice.id);
    }
    if !wanted.is_empty() {
        state.bump_revision(team);
    }
    state.serials.insert(team, serial);
    state.counted(count, counter);
    state.clients.extend(new_client);
    state.senders.extend(new_sender);
    state.ledger.extend(opening);
    state.invoices.push(invoice.clone());
    Ok(invoice)
}

#[async_trait]
impl LedgerRepository for MemoryStore {
    async fn record_entry(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        entry: NewEntry,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.invoices.iter().find(|i| i.team_id == team && i.id == invoice).cloned();
            let current = current.ok_or(LedgerError::NotFound)?;
            let at = entry.created_at;
            let (entry, balance) = billing::store::record(&current, entry)?;
            let stored = state.invoice_mut(team, invoice).ok_or(LedgerError::NotFound)?;
            balanced(stored, balance, at);
            state.ledger.push(entry.clone());
            let after = state.rebalanced(&current);
            state
                .record(notify::raise::entry_recorded(&entry, current.status, &after).events(&*describe, at));
            Ok((entry, after))
        })
    }

    async fn void_entry(
        &self,
        team: TeamId,
        entry: LedgerEntryId,
        reason: Option<Notes>,
        at: DateTime<Utc>,
    ) -> Result<(LedgerEntry, Invoice), LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| state.void(team, entry, reason, at, &*describe))
    }

    async fn get_entry(&self, team: TeamId, id: LedgerEntryId) -> Result<Option<LedgerEntry>, StoreError> {
        Ok(self.state().ledger.iter().find(|e| e.team_id == team && e.id == id).cloned())
    }

    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<LedgerEntry>, StoreError> {
        let state = self.state();
        let client_of =
            |invoice: InvoiceId| state.invoices.iter().find(|i| i.id == invoice).map(|i| i.client_id);
        let mut entries: Vec<LedgerEntry> = state
            .ledger
            .iter()
            .filter(|e| e.team_id == team && client_of(e.invoice_id).is_some_and(|c| filter.matches(e, c)))
            .cloned()
            .collect();
        billing::ledger::sort_for_listing(&mut entries);
        entries.truncate(filter.limit.map_or(usize::MAX, |limit| limit as usize));
        Ok(entries)
    }

    async fn issue_credit_note(
        &self,
        team: TeamId,
        invoice: InvoiceId,
        note: NewCreditNote,
    ) -> Result<(CreditNote, Invoice), LedgerError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.invoices.iter().find(|i| i.team_id == team && i.id == invoice).cloned();
            let current = current.ok_or(LedgerError::NotFound)?;
            let serial = state.credit_serials.get(&team).map_or(CreditSerial::FIRST, |last| last.next());
            let (number, count, counter) =
                state.next_number(team, Series::CreditNotes, note.created_at, |number| {
                    state
                        .credit_notes
                        .iter()
                        .any(|n| n.team_id == team && n.number.as_str() == number.as_str())
                })?;
            let (note, balance) = billing::store::credit(&current, note, serial, number)?;
            state.credit_serials.insert(team, serial);
            state.counted(count, counter);
            let stored = state.invoice_mut(team, invoice).ok_or(LedgerError::NotFound)?;
            balanced(stored, balance, note.created_at);
            state.credit_notes.push(note.clone());
            let invoice = state.rebalanced(&current);
            state.record(notify::raise::credit_issued(&note).events(&*describe, note.created_at));
            Ok((note, invoice))
        })
    }

    async fn get_credit_note(
        &self,
        team: TeamId,
        id: CreditNoteId,
    ) -> Result<Option<CreditNote>, StoreError> {
        Ok(self.state().credit_notes.iter().find(|n| n.team_id == team && n.id == id).cloned())
    }

    async fn find_credit_note(&self, id: CreditNoteId) -> Result<Option<CreditNote>, StoreError> {
        Ok(self.state().credit_notes.iter().find(|n| n.id == id).cloned())
    }

    async fn list_credit_notes(
        &self,
        team: TeamId,
        filter: &CreditNoteFilter,
    ) -> Result<Vec<CreditNote>, StoreError> {
        let state = self.state();
        let mut notes: Vec<CreditNote> =
            state.credit_notes.iter().filter(|n| n.team_id == team && filter.matches(n)).cloned().collect();
        notes.sort_by_key(|n| std::cmp::Reverse(n.serial));
        notes.truncate(filter.limit.map_or(usize::MAX, |limit| limit as usize));
        Ok(notes)
    }

    async fn receivables(&self, team: TeamId, as_of: NaiveDate) -> Result<Vec<Receivable>, StoreError> {
        let state = self.state();
        let dues = state
            .invoices
            .iter()
            .filter(|i| i.team_id == team && i.balance.due() > billing::money::Decimal::ZERO)
            .map(|i| (i.client_id, i.currency, i.due_date, i.balance.due()));
        Ok(billing::receivables::sum_by_age(dues, as_of))
    }
}

/// The final invoice that deducts the team's deposit invoice `id`, if one does.
fn deducted_by(state: &State, team: TeamId, id: InvoiceId) -> Option<billing::DocumentNumber> {
    state
        .invoices
        .iter()
        .filter(|i| i.team_id == team)
        .find(|i| i.from_quote.as_ref().is_some_and(|link| link.deposit_invoices.contains(&id)))
        .map(|i| i.number.clone())
}
