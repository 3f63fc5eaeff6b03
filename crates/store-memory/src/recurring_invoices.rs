//! Recurring invoices in memory.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::Replaced;
use kernel::StoreError;
use recurring::{
    CreateRecurringError, RecurringInvoice, RecurringInvoiceId, RecurringStatus, RecurringStore,
};

use crate::MemoryStore;

#[async_trait]
impl RecurringStore for MemoryStore {
    async fn create_recurring(&self, recurring: &RecurringInvoice) -> Result<(), CreateRecurringError> {
        let mut state = self.state();
        if !state.clients.iter().any(|c| c.team_id == recurring.team_id && c.id == recurring.client_id) {
            return Err(CreateRecurringError::UnknownClient);
        }
        state.recurring.push(recurring.clone());
        Ok(())
    }

    async fn get_recurring(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
    ) -> Result<Option<RecurringInvoice>, StoreError> {
        Ok(self.state().recurring.iter().find(|r| r.team_id == team && r.id == id).cloned())
    }

    async fn list_recurring(
        &self,
        team: TeamId,
        after: Option<RecurringInvoiceId>,
        limit: u32,
    ) -> Result<Vec<RecurringInvoice>, StoreError> {
        let mut listed: Vec<RecurringInvoice> = self
            .state()
            .recurring
            .iter()
            .filter(|r| r.team_id == team && after.is_none_or(|after| r.id > after))
            .cloned()
            .collect();
        listed.sort_by_key(|r| r.id);
        listed.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(listed)
    }

    async fn replace_recurring(
        &self,
        recurring: &RecurringInvoice,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError> {
        let mut state = self.state();
        let stored =
            state.recurring.iter_mut().find(|r| r.team_id == recurring.team_id && r.id == recurring.id);
        Ok(match stored {
            None => Replaced::Missing,
            Some(stored) if stored.updated_at != read_at => Replaced::Stale,
            Some(stored) => {
                *stored = RecurringInvoice { created_at: stored.created_at, ..recurring.clone() };
                Replaced::Written
            }
        })
    }

    async fn delete_recurring(&self, team: TeamId, id: RecurringInvoiceId) -> Result<bool, StoreError> {
        let mut state = self.state();
        let before = state.recurring.len();
        state.recurring.retain(|r| !(r.team_id == team && r.id == id));
        Ok(state.recurring.len() < before)
    }

    async fn due_recurring(&self, today: NaiveDate, limit: u32) -> Result<Vec<RecurringInvoice>, StoreError> {
        let mut due: Vec<RecurringInvoice> = self
            .state()
            .recurring
            .iter()
            .filter(|r| r.status == RecurringStatus::Active && r.next.is_some_and(|next| next.on <= today))
            .cloned()
            .collect();
        due.sort_by_key(|r| (r.next.map(|next| next.on), r.id));
        due.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(due)
    }
}
