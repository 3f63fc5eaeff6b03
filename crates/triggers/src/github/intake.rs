//! What the repository trigger makes of a delivery whose signature has been verified:
//! a ping is answered, a delivery outside `events` or `repos` is ignored, and anything
//! else is rendered for the agent and stored in the durable queue before it is
//! acknowledged. Every verdict is logged.

use std::sync::Arc;
use std::time::Duration;

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::{Clock, Id, StoreError};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::delivery::{
    Acceptance, DeliveryEntry, DeliveryEntryId, DeliveryId, DeliveryQueue, NewDelivery, Verdict,
};
use super::filter::{EventFilter, RepoPatterns};
use super::render::{EventFacts, model_input};

/// What the trigger answers for a verified delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Receipt {
    /// The handshake GitHub sends when the webhook is created.
    Pong,
    Ignored {
        note: String,
    },
    /// Stored; the agent runs it afterwards.
    Accepted {
        delivery: DeliveryId,
    },
    /// Accepted before: not run again.
    Duplicate {
        delivery: DeliveryId,
    },
}

/// Why a verified delivery could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// What came is not what GitHub sends.
    #[error(transparent)]
    Malformed(#[from] Malformed),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What of a delivery is not as GitHub sends it, in the domain's words; the HTTP trigger
/// names the header or the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("the delivery names no event")]
    NoEvent,
    /// The event's name, which is not one.
    #[error("{0:?} is not an event name")]
    EventName(String),
    #[error("the delivery has no id")]
    NoDeliveryId,
    /// The delivery id is not one; says why.
    #[error("the delivery id {0}")]
    DeliveryId(String),
    /// The payload is no JSON; the parser's words.
    #[error("the payload is not JSON: {0}")]
    NotJson(String),
    #[error("the payload is not a JSON object, as GitHub sends every event")]
    NotAnObject,
}

/// What a repository trigger takes, and how it keeps what it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubRules {
    pub events: EventFilter,
    pub repos: RepoPatterns,
    /// Bound on the rendered event text the agent receives, in bytes.
    pub text_limit: usize,
    /// How long an accepted delivery's id and body hash are remembered to refuse repeats.
    pub dedupe_window: Duration,
}

/// One repository trigger's intake, over the delivery queue.
pub struct Intake {
    team: TeamId,
    rules: GithubRules,
    queue: Arc<dyn DeliveryQueue>,
    clock: Arc<dyn Clock>,
    /// Told of every accepted delivery, so the worker starts it without polling.
    on_accept: Box<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for Intake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intake").field("team", &self.team).field("rules", &self.rules).finish_non_exhaustive()
    }
}

impl Intake {
    pub fn new(
        team: TeamId,
        rules: GithubRules,
        queue: Arc<dyn DeliveryQueue>,
        clock: Arc<dyn Clock>,
        on_accept: Box<dyn Fn() + Send + Sync>,
    ) -> Self {
        Self { team, rules, queue, clock, on_accept }
    }

    /// Takes a delivery whose signature was verified: its event's name and its id (as sent,
    /// if sent) and the raw body.
    pub async fn receive(
        &self,
        event: Option<&str>,
        delivery: Option<&str>,
        body: &[u8],
    ) -> Result<Receipt, IntakeError> {
        let event = event_name(event)?;
        let delivery =
            DeliveryId::parse(delivery.ok_or(Malformed::NoDeliveryId)?).map_err(Malformed::DeliveryId)?;
        let payload: Value = serde_json::from_slice(body).map_err(|e| Malformed::NotJson(e.to_string()))?;
        // GitHub sends every event as an object; anything else is no event to run on.
        if !payload.is_object() {
            return Err(Malformed::NotAnObject.into());
        }
        let now = self.clock.now();
        let facts = EventFacts::of(&event, &payload);
        let entry = |verdict, note: Option<String>| DeliveryEntry {
            id: DeliveryEntryId::generate(),
            team_id: self.team,
            delivery: delivery.clone(),
            event: event.clone(),
            action: facts.action.as_deref().map(|a| bounded(a, 100)),
            repository: facts.repository.as_deref().map(|r| bounded(r, 300)),
            conversation: facts.conversation_key(),
            summary: facts.summary(&payload),
            verdict,
            note,
            body_sha256: sha256_hex(body),
            received_at: now,
            progress: None,
        };
        if let Some(note) = self.ignored_because(&facts) {
            let receipt =
                if event == "ping" { Receipt::Pong } else { Receipt::Ignored { note: note.clone() } };
            // The answer does not depend on the log: a failed write is only worth a warning.
            if let Err(error) = self.queue.log_delivery(&entry(Verdict::Ignored, Some(note))).await {
                tracing::warn!(%delivery, error = ?error, "cannot log an ignored delivery");
            }
            return Ok(receipt);
        }
        let accepted = NewDelivery {
            entry: entry(Verdict::Accepted, None),
            input: model_input(&facts, &payload, self.rules.text_limit),
        };
        Ok(match self.queue.accept(&accepted, self.dedupe_since(now)).await? {
            Acceptance::Accepted => {
                (self.on_accept)();
                Receipt::Accepted { delivery }
            }
            Acceptance::Duplicate => Receipt::Duplicate { delivery },
        })
    }

    /// Why the delivery does not wake the agent, if it does not.
    fn ignored_because(&self, facts: &EventFacts) -> Option<String> {
        if facts.event == "ping" {
            return Some("ping: the webhook is set up; nothing to run".into());
        }
        let action = facts.action.as_deref();
        if !self.rules.events.matches(&facts.event, action) {
            let name =
                action.map_or_else(|| facts.event.clone(), |action| format!("{}.{action}", facts.event));
            return Some(format!("event {name} is not in the trigger's events"));
        }
        if !self.rules.repos.matches(facts.repository.as_deref()) {
            return Some(match &facts.repository {
                Some(repository) => format!("repository {repository} matches none of the trigger's repos"),
                None => "the event names no repository and the trigger lists repos".into(),
            });
        }
        None
    }

    /// The oldest a dedupe record may be to still refuse a repeat.
    fn dedupe_since(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        super::delivery::before(now, self.rules.dedupe_window)
    }
}

fn event_name(given: Option<&str>) -> Result<String, Malformed> {
    let name = given.ok_or(Malformed::NoEvent)?;
    let valid =
        (1..=100).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid { Ok(name.to_ascii_lowercase()) } else { Err(Malformed::EventName(name.to_owned())) }
}

/// `text` cut to `max` characters, as the log's columns hold them.
fn bounded(text: &str, max: usize) -> String {
    text.chars().filter(|c| *c != '\0').take(max).collect()
}

/// Lowercase hex SHA-256 of `body`.
pub fn sha256_hex(body: &[u8]) -> String {
    use std::fmt::Write;
    Sha256::digest(body).iter().fold(String::with_capacity(64), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

#[cfg(test)]
mod tests {
    use super::sha256_hex;

    #[test]
    fn body_hashes_are_lowercase_hex_sha256() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
