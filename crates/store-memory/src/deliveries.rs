//! The repository trigger's delivery log and queue in memory, with the same rules as the
//! SQL adapter: one lock stands for its transaction.

use std::cmp::Reverse;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;
use triggers::{
    Acceptance, AttemptResult, ClaimedDelivery, DeliveryEntry, DeliveryEntryId, DeliveryFilter, DeliveryId,
    DeliveryProgress, DeliveryQueue, DeliveryState, NewDelivery, PendingDelivery, Verdict,
};

use crate::MemoryStore;

#[derive(Debug)]
pub(crate) struct StoredDelivery {
    entry: DeliveryEntry,
    input: Option<String>,
    next_attempt_at: DateTime<Utc>,
    /// While running: until when the process running it holds it.
    lease_until: Option<DateTime<Utc>>,
}

#[derive(Debug)]
pub(crate) struct DedupeRecord {
    team: TeamId,
    delivery: DeliveryId,
    body_sha256: String,
    accepted_at: DateTime<Utc>,
}

impl StoredDelivery {
    fn is(&self, team: TeamId, id: DeliveryEntryId) -> bool {
        self.entry.team_id == team && self.entry.id == id
    }

    fn state(&self) -> Option<DeliveryState> {
        self.entry.progress.as_ref().map(|p| p.state)
    }

    fn is_pending(&self) -> bool {
        matches!(self.state(), Some(DeliveryState::Queued | DeliveryState::Running))
    }
}

#[async_trait]
impl DeliveryQueue for MemoryStore {
    async fn accept(
        &self,
        delivery: &NewDelivery,
        dedupe_since: DateTime<Utc>,
    ) -> Result<Acceptance, StoreError> {
        let entry = &delivery.entry;
        let mut state = self.state();
        let same = |record: &DedupeRecord| {
            record.team == entry.team_id
                && (record.delivery == entry.delivery || record.body_sha256 == entry.body_sha256)
        };
        state.dedupe.retain(|record| !(same(record) && record.accepted_at < dedupe_since));
        if let Some(earlier) = state.dedupe.iter().find(|record| same(record)) {
            let note = if earlier.delivery == entry.delivery {
                "this delivery id was already accepted".to_owned()
            } else {
                format!("the same body was already accepted as delivery {}", earlier.delivery)
            };
            let duplicate = DeliveryEntry {
                verdict: Verdict::Duplicate,
                note: Some(note),
                progress: None,
                ..entry.clone()
            };
            state.deliveries.push(StoredDelivery {
                entry: duplicate,
                input: None,
                next_attempt_at: entry.received_at,
                lease_until: None,
            });
            return Ok(Acceptance::Duplicate);
        }
        state.dedupe.push(DedupeRecord {
            team: entry.team_id,
            delivery: entry.delivery.clone(),
            body_sha256: entry.body_sha256.clone(),
            accepted_at: entry.received_at,
        });
        let progress = DeliveryProgress {
            state: DeliveryState::Queued,
            attempts: 0,
            run: None,
            error: None,
            finished_at: None,
        };
        let accepted =
            DeliveryEntry { verdict: Verdict::Accepted, progress: Some(progress), ..entry.clone() };
        state.deliveries.push(StoredDelivery {
            entry: accepted,
            input: Some(delivery.input.clone()),
            next_attempt_at: entry.received_at,
            lease_until: None,
        });
        Ok(Acceptance::Accepted)
    }

    async fn log_delivery(&self, entry: &DeliveryEntry) -> Result<(), StoreError> {
        let logged = DeliveryEntry { progress: None, ..entry.clone() };
        self.state().deliveries.push(StoredDelivery {
            entry: logged,
            input: None,
            next_attempt_at: entry.received_at,
            lease_until: None,
        });
        Ok(())
    }

    async fn pending_deliveries(&self, team: TeamId, limit: u32) -> Result<Vec<PendingDelivery>, StoreError> {
        let state = self.state();
        let mut pending: Vec<PendingDelivery> = state
            .deliveries
            .iter()
            .filter(|d| d.entry.team_id == team && d.is_pending())
            .filter_map(|d| {
                Some(PendingDelivery {
                    id: d.entry.id,
                    conversation: d.entry.conversation.clone(),
                    state: d.state()?,
                    next_attempt_at: d.next_attempt_at,
                })
            })
            .collect();
        pending.sort_by_key(|d| d.id);
        pending.truncate(limit as usize);
        Ok(pending)
    }

    async fn claim_delivery(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<ClaimedDelivery>, StoreError> {
        let mut state = self.state();
        let Some(stored) = state.deliveries.iter_mut().find(|d| d.is(team, id)) else {
            return Ok(None);
        };
        let (Some(progress), Some(input)) = (stored.entry.progress.as_mut(), &stored.input) else {
            return Ok(None);
        };
        if progress.state != DeliveryState::Queued {
            return Ok(None);
        }
        progress.state = DeliveryState::Running;
        progress.attempts += 1;
        stored.lease_until = Some(lease_until);
        Ok(Some(ClaimedDelivery {
            id,
            delivery: stored.entry.delivery.clone(),
            conversation: stored.entry.conversation.clone(),
            input: input.clone(),
            summary: stored.entry.summary.clone(),
            attempts: progress.attempts,
        }))
    }

    async fn finish_attempt(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        result: &AttemptResult,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut state = self.state();
        let Some(stored) = state.deliveries.iter_mut().find(|d| d.is(team, id)) else {
            return Ok(());
        };
        let Some(progress) = stored.entry.progress.as_mut() else {
            return Ok(());
        };
        if progress.state != DeliveryState::Running || progress.attempts != attempt {
            return Ok(());
        }
        match result {
            AttemptResult::Done { run } => {
                (progress.state, progress.run, progress.error, progress.finished_at) =
                    (DeliveryState::Done, *run, None, Some(at));
            }
            AttemptResult::Retry { run, error, at: next } => {
                (progress.state, progress.run, progress.error, progress.finished_at) =
                    (DeliveryState::Queued, *run, Some(error.clone()), None);
                stored.next_attempt_at = *next;
            }
            AttemptResult::Failed { run, error } => {
                (progress.state, progress.run, progress.error, progress.finished_at) =
                    (DeliveryState::Failed, *run, Some(error.clone()), Some(at));
            }
        }
        Ok(())
    }

    async fn renew_lease(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        lease_until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let mut state = self.state();
        let Some(stored) = state.deliveries.iter_mut().find(|d| d.is(team, id)) else {
            return Ok(false);
        };
        let holds = stored
            .entry
            .progress
            .as_ref()
            .is_some_and(|p| p.state == DeliveryState::Running && p.attempts == attempt);
        if holds {
            stored.lease_until = Some(lease_until);
        }
        Ok(holds)
    }

    async fn requeue_expired(&self, team: TeamId, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut state = self.state();
        let mut count = 0;
        for stored in state.deliveries.iter_mut().filter(|d| d.entry.team_id == team) {
            let expired = stored.lease_until.is_none_or(|until| until < now);
            if let Some(progress) = stored.entry.progress.as_mut()
                && progress.state == DeliveryState::Running
                && expired
            {
                progress.state = DeliveryState::Queued;
                count += 1;
            }
        }
        Ok(count)
    }

    async fn prune_deliveries(
        &self,
        team: TeamId,
        dedupe_before: DateTime<Utc>,
        log_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut state = self.state();
        let (dedupe, log) = (state.dedupe.len(), state.deliveries.len());
        state.dedupe.retain(|r| !(r.team == team && r.accepted_at < dedupe_before));
        state
            .deliveries
            .retain(|d| !(d.entry.team_id == team && d.entry.received_at < log_before && !d.is_pending()));
        Ok((dedupe - state.dedupe.len() + log - state.deliveries.len()) as u64)
    }

    async fn list_deliveries(
        &self,
        team: TeamId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<DeliveryEntry>, StoreError> {
        let state = self.state();
        let mut entries: Vec<DeliveryEntry> = state
            .deliveries
            .iter()
            .map(|d| &d.entry)
            .filter(|entry| entry.team_id == team && filter.verdict.is_none_or(|v| entry.verdict == v))
            .cloned()
            .collect();
        entries.sort_by_key(|entry| Reverse((entry.received_at, entry.id)));
        entries.truncate(filter.limit as usize);
        Ok(entries)
    }
}
