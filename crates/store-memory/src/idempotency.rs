//! [`IdempotencyStore`] in memory: the reference the SQL adapter's claims are held to.

use accounts::{
    Claimed, IdempotencyKey, IdempotencyStore, KeptResponse, KeyClaim, RequestFingerprint, TeamId,
};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::MemoryStore;

#[derive(Debug)]
pub(crate) struct KeyRecord {
    team: TeamId,
    key: IdempotencyKey,
    fingerprint: RequestFingerprint,
    claimed_at: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    answer: Option<KeptResponse>,
}

impl KeyRecord {
    fn is_free_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at <= now || (self.answer.is_none() && self.lease_until <= now)
    }

    fn held_by(&self, claim: &KeyClaim) -> bool {
        self.team == claim.team && self.key == claim.key && self.claimed_at == claim.at
    }
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn claim(&self, claim: &KeyClaim) -> Result<Claimed, StoreError> {
        let mut state = self.state();
        let records = &mut state.idempotency_keys;
        let granted = KeyRecord {
            team: claim.team,
            key: claim.key.clone(),
            fingerprint: claim.fingerprint,
            claimed_at: claim.at,
            lease_until: claim.lease_until,
            expires_at: claim.expires_at,
            answer: None,
        };
        let Some(record) = records.iter_mut().find(|r| r.team == claim.team && r.key == claim.key) else {
            records.push(granted);
            return Ok(Claimed::Granted);
        };
        Ok(if record.is_free_at(claim.at) {
            *record = granted;
            Claimed::Granted
        } else if record.fingerprint != claim.fingerprint {
            Claimed::Mismatch
        } else {
            record.answer.clone().map_or(Claimed::InFlight, Claimed::Answered)
        })
    }

    async fn answer(&self, claim: &KeyClaim, response: &KeptResponse) -> Result<(), StoreError> {
        let mut state = self.state();
        if let Some(record) =
            state.idempotency_keys.iter_mut().find(|r| r.held_by(claim) && r.answer.is_none())
        {
            record.answer = Some(response.clone());
        }
        Ok(())
    }

    async fn release(&self, claim: &KeyClaim) -> Result<(), StoreError> {
        self.state().idempotency_keys.retain(|r| !(r.held_by(claim) && r.answer.is_none()));
        Ok(())
    }

    async fn purge_idempotency_keys(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let records = &mut self.state().idempotency_keys;
        let before = records.len();
        records.retain(|r| r.expires_at > now);
        Ok((before - records.len()) as u64)
    }
}
