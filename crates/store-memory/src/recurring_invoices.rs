//! Recurring invoices in memory.

use accounts::TeamId;
use async_trait::async_trait;
use billing::store::CreateInvoiceError;
use chrono::{DateTime, NaiveDate, Utc};
use kernel::Replaced;
use kernel::StoreError;
use recurring::{
    CreateRecurringError, PassRecord, PassRecorded, RecurringInvoice, RecurringInvoiceId, RecurringStatus,
    RecurringStore, Run,
};

use crate::MemoryStore;
use crate::invoices::{Keep, make_invoice};

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
        state.recurring_runs.retain(|(t, recurring, _)| !(*t == team && *recurring == id));
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

    async fn record_pass(&self, record: &PassRecord) -> Result<PassRecorded, CreateInvoiceError> {
        let recurring = &record.recurring;
        let (team, id) = (recurring.team_id, recurring.id);
        let mut state = self.state();
        let Some(index) = state.recurring.iter().position(|r| r.team_id == team && r.id == id) else {
            return Ok(PassRecorded::Stale);
        };
        if state.recurring[index].updated_at != record.read_at {
            return Ok(PassRecorded::Stale);
        }
        let taken = |run: &Run| {
            state
                .recurring_runs
                .iter()
                .any(|(t, r, kept)| *t == team && *r == id && kept.period_start == run.period_start)
        };
        if record.runs.iter().any(taken) {
            return Err(CreateInvoiceError::Store(StoreError::Unexpected(anyhow::anyhow!(
                "a period of recurring invoice {id} has a run already"
            ))));
        }
        let invoice = match &record.invoice {
            Some(new) => Some(make_invoice(&mut state, &*self.describe, new, Keep::Commit)?),
            None => None,
        };
        let created_at = state.recurring[index].created_at;
        state.recurring[index] = RecurringInvoice { created_at, ..recurring.clone() };
        state.recurring_runs.extend(record.runs.iter().map(|run| (team, id, run.clone())));
        drop(state);
        self.signal.notify_one();
        Ok(PassRecorded::Written(invoice.map(Box::new)))
    }

    async fn list_runs(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
        before: Option<NaiveDate>,
        limit: u32,
    ) -> Result<Vec<Run>, StoreError> {
        let mut runs: Vec<Run> = self
            .state()
            .recurring_runs
            .iter()
            .filter(|(t, r, run)| *t == team && *r == id && before.is_none_or(|b| run.period_start < b))
            .map(|(_, _, run)| run.clone())
            .collect();
        runs.sort_by_key(|run| std::cmp::Reverse(run.period_start));
        runs.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(runs)
    }
}
