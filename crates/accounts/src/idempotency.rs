//! Idempotency keys: a client's name for one attempt at a write, so that a retry of the
//! same attempt gets the first answer instead of making a second write.
//!
//! A key belongs to a team. The first request that names it claims it; until its answer is
//! kept, a retry is told the attempt is still in flight; afterwards a retry with the same
//! request gets the kept answer, and a request that reuses the key for anything else is
//! refused. What "the same request" means is the adapter's [`RequestFingerprint`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{InvalidValue, StoreError};

use crate::TeamId;

/// A client-chosen key: 1 to 255 visible ASCII characters (no spaces, which header
/// parsers trim).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    pub const MAX_LEN: usize = 255;

    pub fn parse(value: &str) -> Result<Self, InvalidValue> {
        if value.is_empty() {
            return Err(InvalidValue::new("must not be empty"));
        }
        if value.len() > Self::MAX_LEN {
            return Err(InvalidValue::new(format!("must be at most {} characters", Self::MAX_LEN)));
        }
        if !value.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(InvalidValue::new("must be visible ASCII characters without spaces"));
        }
        Ok(Self(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A digest of everything that makes a request the same request (for the HTTP API: the
/// API key, method, path, query and body).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestFingerprint(pub [u8; 32]);

/// The answer kept for a key: what a retry is given back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptResponse {
    pub status: u16,
    /// Header names (lowercase) and values, in the order they were sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A claim on a key: who asks, and how long each stage lasts.
#[derive(Debug, Clone)]
pub struct KeyClaim {
    pub team: TeamId,
    pub key: IdempotencyKey,
    pub fingerprint: RequestFingerprint,
    /// When the claim is made; it also names the attempt, so that only the attempt holding
    /// the key can answer or release it.
    pub at: DateTime<Utc>,
    /// Until when an unanswered claim holds the key. A claim whose process died before it
    /// answered is taken over after this.
    pub lease_until: DateTime<Utc>,
    /// When the key is forgotten, answered or not.
    pub expires_at: DateTime<Utc>,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// The key was free (never used, expired, or its lease ended): this attempt holds it.
    Granted,
    /// Another attempt with the same request holds the key and has not answered yet.
    InFlight,
    /// The key was used for a different request.
    Mismatch,
    /// The same request was answered already: this is its answer.
    Answered(KeptResponse),
}

/// Storage of idempotency keys. Every adapter MUST make [`IdempotencyStore::claim`]
/// atomic: of two claims racing for a free key, exactly one is `Granted`. Keys live in
/// storage so that every replica sees them.
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Claims `claim.key` for `claim.team`. An expired key, or an unanswered one whose
    /// lease ended, counts as free. Otherwise a different fingerprint is a `Mismatch`
    /// (checked first), an unanswered key is `InFlight`, and an answered one is `Answered`.
    async fn claim(&self, claim: &KeyClaim) -> Result<Claimed, StoreError>;

    /// Keeps `response` as the answer of the attempt that made `claim`, if it still holds
    /// the key (a lost lease keeps nothing).
    async fn answer(&self, claim: &KeyClaim, response: &KeptResponse) -> Result<(), StoreError>;

    /// Frees the key of the attempt that made `claim`, if it still holds it unanswered, so
    /// that a retry runs again (for an attempt that wrote nothing).
    async fn release(&self, claim: &KeyClaim) -> Result<(), StoreError>;

    /// Forgets the keys that expired before `now`; returns how many.
    async fn purge_idempotency_keys(&self, now: DateTime<Utc>) -> Result<u64, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::IdempotencyKey;

    #[test]
    fn keys_are_visible_ascii_up_to_255() {
        assert!(IdempotencyKey::parse("0b7c8d2e-retry_1").is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
        assert_eq!(IdempotencyKey::parse(&"k".repeat(256)).unwrap_err().0, "must be at most 255 characters");
        assert_eq!(IdempotencyKey::parse("").unwrap_err().0, "must not be empty");
        for bad in ["a b", "tab\there", "é", "nul\0"] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
