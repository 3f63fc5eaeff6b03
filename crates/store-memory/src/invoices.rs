//! The invoice and sender-address ports in memory.

use accounts::TeamId;
use async_trait::async_trait;
use billing::store::{
    BillTo, CreateInvoiceError, DeleteInvoiceError, NewInvoice, SaveInvoiceError, SenderChoice,
};
use billing::{
    Invoice, InvoiceFilter, InvoiceId, InvoiceRepository, SenderAddress, SenderAddressId, SenderDetails,
    SenderRepository, Serial,
};
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::{MemoryStore, State};

impl State {
    fn has_client(&self, team: TeamId, id: billing::ClientId) -> bool {
        self.clients.iter().any(|c| c.team_id == team && c.id == id)
    }

    fn has_sender(&self, team: TeamId, id: SenderAddressId) -> bool {
        self.senders.iter().any(|s| s.team_id == team && s.id == id)
    }
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
        self.store_invoice(new, Keep::Commit)
    }

    async fn preview_invoice(&self, new: NewInvoice) -> Result<Invoice, CreateInvoiceError> {
        self.store_invoice(new, Keep::RollBack)
    }

    async fn replace_invoice(&self, invoice: &Invoice, _lines_changed: bool) -> Result<(), SaveInvoiceError> {
        let mut state = self.state();
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
        let stored = &mut state.invoices[index];
        // Identity, serial, currency and creation time stay as stored.
        *stored = Invoice {
            id: stored.id,
            team_id: stored.team_id,
            serial: stored.serial,
            currency: stored.currency,
            created_at: stored.created_at,
            ..invoice.clone()
        };
        Ok(())
    }

    async fn delete_invoice(&self, team: TeamId, id: InvoiceId) -> Result<(), DeleteInvoiceError> {
        let mut state = self.state();
        let before = state.invoices.len();
        state.invoices.retain(|i| !(i.team_id == team && i.id == id));
        if state.invoices.len() == before {
            return Err(DeleteInvoiceError::NotFound);
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
        Ok(())
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
enum Keep {
    Commit,
    RollBack,
}

impl MemoryStore {
    /// A create, all checked before the first change: the lock makes it one transaction.
    fn store_invoice(&self, new: NewInvoice, keep: Keep) -> Result<Invoice, CreateInvoiceError> {
        let mut state = self.state();
        let team = new.team_id;
        let (client_id, new_client) = match &new.bill_to {
            BillTo::Existing(id) if state.has_client(team, *id) => (*id, None),
            BillTo::Existing(_) => return Err(CreateInvoiceError::UnknownClient),
            BillTo::Inline { email, new_client } => {
                let key = email.normalized();
                let matched = state
                    .clients
                    .iter()
                    .filter(|c| c.team_id == team && c.details.email.normalized() == key)
                    .min_by_key(|c| (c.created_at, c.id));
                match matched {
                    Some(client) => (client.id, None),
                    None => (new_client.id, Some(new_client.as_ref().clone())),
                }
            }
        };
        let (sender_id, new_sender) = match &new.sender {
            SenderChoice::Given(id) if state.has_sender(team, *id) => (*id, None),
            SenderChoice::Given(_) => return Err(CreateInvoiceError::UnknownSender),
            SenderChoice::TeamDefault { fallback } => {
                match state.senders.iter().find(|s| s.team_id == team) {
                    Some(default) => (default.id, None),
                    None => (fallback.id, Some(fallback.as_ref().clone())),
                }
            }
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
        let serial = state.serials.get(&team).map_or(Serial::FIRST, |last| last.next());
        if keep == Keep::RollBack {
            return Ok(new.into_invoice(serial, client_id, sender_id));
        }
        for entry in state.entries.iter_mut().filter(|e| billable(e)) {
            entry.invoice_id = Some(new.id);
        }
        if !wanted.is_empty() {
            state.bump_revision(team);
        }
        state.serials.insert(team, serial);
        state.clients.extend(new_client);
        state.senders.extend(new_sender);
        let invoice = new.into_invoice(serial, client_id, sender_id);
        state.invoices.push(invoice.clone());
        Ok(invoice)
    }
}
