//! Deliveries of the repository trigger: the log of every verified delivery, the durable
//! queue of accepted ones, and the rules the queue's worker follows (which delivery runs
//! next, when a failed one is retried).

use std::fmt;
use std::time::Duration;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{StoreError, define_id};

use crate::run::{ConversationKey, RunId};

define_id!(
    /// One entry of the delivery log. Minted time-ordered, so ids sort in arrival order.
    DeliveryEntryId
);

/// Longest `X-GitHub-Delivery` accepted (GitHub sends a 36-character GUID).
pub const MAX_DELIVERY_ID_CHARS: usize = 100;

/// The platform's id of a delivery (`X-GitHub-Delivery`): kept on a redelivery.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeliveryId(String);

impl DeliveryId {
    /// 1–100 visible ASCII characters.
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("must not be empty".into());
        }
        if text.len() > MAX_DELIVERY_ID_CHARS {
            return Err(format!("must be at most {MAX_DELIVERY_ID_CHARS} characters"));
        }
        if !text.chars().all(|c| c.is_ascii_graphic()) {
            return Err("must be visible ASCII characters".into());
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for DeliveryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the trigger made of a verified delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Stored and queued for the agent.
    Accepted,
    /// A ping, or filtered out by `events` or `repos`.
    Ignored,
    /// Its id or its exact body was accepted within the dedupe window: not run again.
    Duplicate,
}

/// Where an accepted delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Waiting for its turn, or for its next attempt.
    Queued,
    Running,
    /// The agent ran it.
    Done,
    /// Every attempt failed.
    Failed,
}

text_enum!(Verdict { Accepted => "accepted", Ignored => "ignored", Duplicate => "duplicate" });
text_enum!(DeliveryState { Queued => "queued", Running => "running", Done => "done", Failed => "failed" });

/// A verified delivery as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryEntry {
    pub id: DeliveryEntryId,
    pub team_id: TeamId,
    pub delivery: DeliveryId,
    pub event: String,
    pub action: Option<String>,
    pub repository: Option<String>,
    pub conversation: Option<ConversationKey>,
    /// One line naming the event ([`crate::github::render::EventFacts::summary`]): what
    /// the log and the run history show of it.
    pub summary: String,
    pub verdict: Verdict,
    /// Why it was ignored, or what it duplicates.
    pub note: Option<String>,
    /// Lowercase hex SHA-256 of the raw body.
    pub body_sha256: String,
    pub received_at: DateTime<Utc>,
    /// For accepted deliveries only: where the run stands.
    pub progress: Option<DeliveryProgress>,
}

/// How far an accepted delivery got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryProgress {
    pub state: DeliveryState,
    /// Runs started (an attempt a stopped process interrupted counts).
    pub attempts: u32,
    /// The last run of the delivery.
    pub run: Option<RunId>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// An accepted delivery, as the queue stores it: its log entry and what the agent will
/// be given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    pub entry: DeliveryEntry,
    /// The framed rendering of the event, the run's input.
    pub input: String,
}

/// What storing an accepted delivery came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acceptance {
    Accepted,
    /// Logged as a duplicate instead; nothing was queued.
    Duplicate,
}

/// A queued or running delivery, as the worker plans with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDelivery {
    pub id: DeliveryEntryId,
    pub conversation: Option<ConversationKey>,
    pub state: DeliveryState,
    pub next_attempt_at: DateTime<Utc>,
}

/// A delivery the worker has claimed and runs now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimedDelivery {
    pub id: DeliveryEntryId,
    pub delivery: DeliveryId,
    pub conversation: Option<ConversationKey>,
    pub input: String,
    /// The delivery's [`DeliveryEntry::summary`], which its run's record keeps.
    pub summary: String,
    /// Including this one.
    pub attempts: u32,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    Done {
        run: Option<RunId>,
    },
    /// Failed; queued again for `at`.
    Retry {
        run: Option<RunId>,
        error: String,
        at: DateTime<Utc>,
    },
    /// Failed for the last time.
    Failed {
        run: Option<RunId>,
        error: String,
    },
}

/// Which log entries to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFilter {
    pub verdict: Option<Verdict>,
    pub limit: u32,
}

/// The delivery log and the durable queue of accepted deliveries.
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Stores an accepted delivery, its dedupe record and its queue entry in one
    /// transaction, unless its delivery id or body hash was accepted at or after
    /// `dedupe_since`: then it is logged as a duplicate and nothing is queued.
    async fn accept(
        &self,
        delivery: &NewDelivery,
        dedupe_since: DateTime<Utc>,
    ) -> Result<Acceptance, StoreError>;

    /// Logs a delivery that is not queued (ignored).
    async fn log_delivery(&self, entry: &DeliveryEntry) -> Result<(), StoreError>;

    /// The team's oldest `limit` queued and running deliveries, in arrival order.
    async fn pending_deliveries(&self, team: TeamId, limit: u32) -> Result<Vec<PendingDelivery>, StoreError>;

    /// Marks a queued delivery running, counts the attempt, and leases it to the caller
    /// until `lease_until`; `None` if it is no longer queued.
    async fn claim_delivery(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        lease_until: DateTime<Utc>,
    ) -> Result<Option<ClaimedDelivery>, StoreError>;

    /// Extends the lease of attempt `attempt` of a running delivery; `false` when that
    /// attempt no longer holds it (its lease ended and the delivery was queued again).
    async fn renew_lease(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        lease_until: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Records how attempt `attempt` of a running delivery ended; nothing when that attempt
    /// no longer holds it (its lease ended and another process took the delivery).
    async fn finish_attempt(
        &self,
        team: TeamId,
        id: DeliveryEntryId,
        attempt: u32,
        result: &AttemptResult,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// Queues again the running deliveries whose lease ended before `now` (their process
    /// stopped, or lost touch with the database); returns how many.
    async fn requeue_expired(&self, team: TeamId, now: DateTime<Utc>) -> Result<u64, StoreError>;

    /// Forgets dedupe records accepted before `dedupe_before`, and finished log entries
    /// received before `log_before`; returns how many rows went.
    async fn prune_deliveries(
        &self,
        team: TeamId,
        dedupe_before: DateTime<Utc>,
        log_before: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// The team's log, newest first.
    async fn list_deliveries(
        &self,
        team: TeamId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<DeliveryEntry>, StoreError>;
}

/// The queued deliveries to start now, in arrival order: per conversation only its
/// oldest pending delivery, and only when none of the conversation runs and it is due;
/// at most `max_running` running in all.
pub fn ready_to_run(
    pending: &[PendingDelivery],
    now: DateTime<Utc>,
    max_running: usize,
) -> Vec<DeliveryEntryId> {
    let mut ordered: Vec<&PendingDelivery> = pending.iter().collect();
    ordered.sort_by_key(|delivery| delivery.id);
    let running = ordered.iter().filter(|d| d.state == DeliveryState::Running).count();
    let mut budget = max_running.saturating_sub(running);
    let mut seen = std::collections::HashSet::new();
    let mut ready = Vec::new();
    for delivery in ordered {
        // Only the head of a conversation may go; a later one waits for it, even when the
        // head waits for a retry, so the conversation keeps its order.
        let head = delivery.conversation.as_ref().is_none_or(|key| seen.insert(key));
        if budget > 0 && head && delivery.state == DeliveryState::Queued && delivery.next_attempt_at <= now {
            ready.push(delivery.id);
            budget -= 1;
        }
    }
    ready
}

/// The instant `span` before `now` (the earliest one representable if that is earlier).
pub fn before(now: DateTime<Utc>, span: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(span)
        .ok()
        .and_then(|span| now.checked_sub_signed(span))
        .unwrap_or(DateTime::<Utc>::MIN_UTC)
}

/// How a failed delivery is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The wait after the first failure; it doubles with each further one.
    pub first_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_attempts: 5, first_backoff: Duration::from_secs(10), max_backoff: Duration::from_mins(10) }
    }
}

impl RetryPolicy {
    /// What becomes of a delivery whose attempt number `attempts` failed with `error`.
    pub fn after_failure(
        &self,
        attempts: u32,
        run: Option<RunId>,
        error: String,
        now: DateTime<Utc>,
    ) -> AttemptResult {
        if attempts >= self.max_attempts {
            return AttemptResult::Failed { run, error };
        }
        let doubling = 2u32.saturating_pow(attempts.saturating_sub(1));
        let wait = self.first_backoff.saturating_mul(doubling).min(self.max_backoff);
        let at = chrono::Duration::from_std(wait)
            .ok()
            .and_then(|wait| now.checked_add_signed(wait))
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        AttemptResult::Retry { run, error, at }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use kernel::Id;

    use super::*;

    fn key(text: &str) -> Option<ConversationKey> {
        ConversationKey::parse(text).ok()
    }

    #[test]
    fn delivery_ids_are_bounded_visible_ascii() {
        assert!(DeliveryId::parse("72d3162e-cc78-11e3-81ab-4c9367dc0958").is_ok());
        assert!(DeliveryId::parse("").is_err());
        assert!(DeliveryId::parse("a b").is_err());
        assert!(DeliveryId::parse("é").is_err());
        assert!(DeliveryId::parse(&"x".repeat(101)).is_err());
    }

    #[test]
    fn only_the_head_of_each_conversation_runs() {
        let now = Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
        let later = now + chrono::Duration::minutes(1);
        let ids: Vec<DeliveryEntryId> = (0..7).map(|_| DeliveryEntryId::generate()).collect();
        let pending = |i: usize, conversation, state, at| PendingDelivery {
            id: ids[i],
            conversation,
            state,
            next_attempt_at: at,
        };
        let queue = vec![
            pending(3, key("a"), DeliveryState::Queued, now), // behind 0 in conversation a
            pending(0, key("a"), DeliveryState::Queued, now),
            pending(1, key("b"), DeliveryState::Running, now),
            pending(2, key("b"), DeliveryState::Queued, now), // b is busy
            pending(4, None, DeliveryState::Queued, now),
            pending(5, key("c"), DeliveryState::Queued, later), // waits for its retry
            pending(6, key("c"), DeliveryState::Queued, now),   // and holds c's order
        ];
        assert_eq!(ready_to_run(&queue, now, 16), vec![ids[0], ids[4]]);
        assert_eq!(ready_to_run(&queue, later, 16), vec![ids[0], ids[4], ids[5]]);
        // One run already uses one of the two slots.
        assert_eq!(ready_to_run(&queue, now, 2), vec![ids[0]]);
        assert!(ready_to_run(&queue, now, 1).is_empty());
    }

    #[test]
    fn failures_back_off_then_give_up() {
        let now = Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap();
        let policy = RetryPolicy {
            max_attempts: 4,
            first_backoff: Duration::from_secs(10),
            max_backoff: Duration::from_secs(25),
        };
        let waits: Vec<_> = (1..=3)
            .map(|attempt| match policy.after_failure(attempt, None, "boom".into(), now) {
                AttemptResult::Retry { at, .. } => (at - now).num_seconds(),
                other => panic!("attempt {attempt}: {other:?}"),
            })
            .collect();
        assert_eq!(waits, [10, 20, 25]);
        assert_eq!(
            policy.after_failure(4, None, "boom".into(), now),
            AttemptResult::Failed { run: None, error: "boom".into() }
        );
    }

    #[test]
    fn verdicts_and_states_round_trip_through_text() {
        for verdict in [Verdict::Accepted, Verdict::Ignored, Verdict::Duplicate] {
            assert_eq!(Verdict::parse(verdict.as_str()), Some(verdict));
        }
        for state in
            [DeliveryState::Queued, DeliveryState::Running, DeliveryState::Done, DeliveryState::Failed]
        {
            assert_eq!(DeliveryState::parse(state.as_str()), Some(state));
        }
        assert_eq!(Verdict::parse("pong"), None);
    }
}
