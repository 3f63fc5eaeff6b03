//! Outbound webhooks, signed per Standard Webhooks (<https://www.standardwebhooks.com>):
//! endpoints a team subscribes to events, the signature every delivery carries, what a
//! receiver's answer means, and the port that keeps endpoints and deliveries.
//!
//! A delivery's `webhook-id` is its event's id: the same on every attempt and every
//! redelivery, so a receiver that has seen it may drop it. Its body is fixed when the event
//! is recorded; its timestamp and signature are made anew at each attempt.

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use accounts::{TeamId, UserId};
use async_trait::async_trait;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, SecondsFormat, Utc};
use hmac::{Hmac, KeyInit, Mac};
use kernel::{Id, Replaced, StoreError, Text, define_id, words};
use sha2::Sha256;
use tracking::Actor;

use crate::event::{Event, EventFilter, EventId, EventType};
use crate::jobs::{ClaimedJob, Finish};
pub use crate::reachable::is_public;

define_id!(
    /// A webhook endpoint.
    WebhookEndpointId
);

define_id!(
    /// One event's delivery to one endpoint (however many attempts it takes).
    WebhookDeliveryId
);

/// The most endpoints a team may have: each event is one delivery per endpoint.
pub const MAX_ENDPOINTS: usize = 20;

/// The longest URL an endpoint may have.
pub const MAX_URL_CHARS: usize = 2_048;

/// Why an endpoint's URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlRule {
    #[error("must be an absolute http or https URL")]
    NotHttp,
    #[error("must be at most {MAX_URL_CHARS} characters")]
    TooLong,
    #[error("must not carry a user name or password")]
    Credentials,
    #[error("must not have a fragment")]
    Fragment,
    /// It is, or resolves to, a loopback, private, link-local or otherwise non-public
    /// address.
    #[error("{host} is not a public address")]
    NotPublic { host: String },
    #[error("{host} does not resolve: {reason}")]
    Unresolved { host: String, reason: String },
}

/// Where an endpoint's deliveries go: an absolute `http` or `https` URL without
/// credentials or fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl(url::Url);

impl WebhookUrl {
    pub fn parse(text: &str) -> Result<Self, UrlRule> {
        if text.chars().count() > MAX_URL_CHARS {
            return Err(UrlRule::TooLong);
        }
        let url = url::Url::parse(text).map_err(|_| UrlRule::NotHttp)?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(UrlRule::NotHttp);
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlRule::Credentials);
        }
        if url.fragment().is_some() {
            return Err(UrlRule::Fragment);
        }
        Ok(Self(url))
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The host to resolve, or the address the URL names itself.
    pub fn host(&self) -> Host {
        match self.0.host() {
            Some(url::Host::Ipv4(ip)) => Host::Address(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Host::Address(IpAddr::V6(ip)),
            Some(url::Host::Domain(name)) => Host::Name(name.to_owned()),
            None => Host::Name(String::new()),
        }
    }

    /// The host as the URL writes it.
    pub fn host_text(&self) -> &str {
        self.0.host_str().unwrap_or_default()
    }

    /// The port deliveries connect to.
    pub fn port(&self) -> u16 {
        self.0.port_or_known_default().unwrap_or(443)
    }
}

impl fmt::Display for WebhookUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a URL's host is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Address(IpAddr),
}

/// The secret an endpoint's deliveries are signed with: `whsec_` and the base64 of 32
/// random bytes. Shown once, when made; its `Debug` shows none of it.
#[derive(Clone, PartialEq, Eq)]
pub struct SigningSecret(Vec<u8>);

/// Bytes of a new secret.
const SECRET_BYTES: usize = 32;
const SECRET_PREFIX: &str = "whsec_";

impl SigningSecret {
    pub fn generate() -> Self {
        let mut bytes = vec![0; SECRET_BYTES];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
        Self(bytes)
    }

    /// A secret as [`SigningSecret::expose`] wrote it: `whsec_` and base64 of 24 to 64 bytes.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = BASE64.decode(text.strip_prefix(SECRET_PREFIX)?).ok()?;
        (24..=64).contains(&bytes.len()).then_some(Self(bytes))
    }

    /// The secret as its owner configures a verifier with.
    pub fn expose(&self) -> String {
        format!("{SECRET_PREFIX}{}", BASE64.encode(&self.0))
    }

    /// `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &str) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body.as_bytes());
        format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for SigningSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningSecret(…)")
    }
}

/// An endpoint's description: up to 500 characters.
pub type EndpointDescription = Text<0, 500>;

/// How long the previous secret still signs after a rotation, by default.
pub const DEFAULT_OVERLAP: Duration = Duration::from_hours(24);
/// The longest overlap a rotation may ask for.
pub const MAX_OVERLAP: Duration = Duration::from_hours(7 * 24);

/// Why an endpoint takes no deliveries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disabled {
    pub at: DateTime<Utc>,
    pub reason: String,
}

/// A team's webhook endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEndpoint {
    pub id: WebhookEndpointId,
    pub team_id: TeamId,
    pub url: WebhookUrl,
    pub events: EventFilter,
    pub description: EndpointDescription,
    /// The user who made it: it receives only what that user may read, as the team has
    /// them when each delivery is made (not the key that made it, which may be rotated).
    pub created_by: UserId,
    pub secret: SigningSecret,
    /// After a rotation, the secret before it, and until when it signs too.
    pub previous_secret: Option<(SigningSecret, DateTime<Utc>)>,
    /// Set when a receiver answered 410 Gone, or by hand; cleared by enabling it again.
    pub disabled: Option<Disabled>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl WebhookEndpoint {
    /// The value of `webhook-signature` for a delivery of `body` as `id` at `timestamp`:
    /// one signature per secret that signs at `now` (two while a rotation overlaps),
    /// separated by spaces.
    pub fn signature(&self, id: &str, timestamp: i64, body: &str, now: DateTime<Utc>) -> String {
        let mut signatures = vec![self.secret.sign(id, timestamp, body)];
        if let Some((previous, until)) = &self.previous_secret
            && now < *until
        {
            signatures.push(previous.sign(id, timestamp, body));
        }
        signatures.join(" ")
    }
}

/// Where one delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryStatus {
    /// Waiting for its (next) attempt, or under way.
    Pending,
    /// A receiver answered 2xx.
    Succeeded,
    /// Every attempt failed, the receiver is gone (410), or the endpoint was disabled.
    Failed,
}

words!(DeliveryStatus { Pending => "pending", Succeeded => "succeeded", Failed => "failed" });

/// One event's delivery to one endpoint, with its last attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookDelivery {
    pub id: WebhookDeliveryId,
    pub team_id: TeamId,
    pub endpoint_id: WebhookEndpointId,
    /// The `webhook-id` it carries.
    pub event_id: EventId,
    pub event_type: EventType,
    pub status: DeliveryStatus,
    pub attempts: u32,
    /// The last attempt's: the receiver's status code, how long it took, what went wrong.
    pub response_status: Option<u16>,
    pub duration_ms: Option<u64>,
    pub error: Option<String>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// While pending: when the next attempt is due.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl WebhookDelivery {
    /// A new delivery of event `event_id` (of type `event_type`) to `endpoint_id`, its first
    /// attempt due at `at`.
    pub fn pending(
        team_id: TeamId,
        endpoint_id: WebhookEndpointId,
        event_id: EventId,
        event_type: EventType,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            id: WebhookDeliveryId::generate(),
            team_id,
            endpoint_id,
            event_id,
            event_type,
            status: DeliveryStatus::Pending,
            attempts: 0,
            response_status: None,
            duration_ms: None,
            error: None,
            last_attempt_at: None,
            next_attempt_at: Some(at),
            created_at: at,
        }
    }
}

/// What a delivery job sends: the delivery, its endpoint (with the secrets) and its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingDelivery {
    pub delivery: WebhookDelivery,
    pub endpoint: WebhookEndpoint,
    pub event: Event,
    /// The endpoint's maker as the team has them now; `None` when no longer in the team.
    pub reader: Option<Actor>,
}

impl OutgoingDelivery {
    /// Why it is not to be sent, as its endpoint and its maker stand now; `None` to send.
    pub fn refusal(&self) -> Option<String> {
        if self.endpoint.disabled.is_some() {
            return Some("the endpoint is disabled".to_owned());
        }
        withheld(self.reader.as_ref(), self.event.kind, self.event.owner).map(|why| why.to_string())
    }
}

/// Why an event is withheld from an endpoint: what its maker may not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Withheld {
    /// The user who made the endpoint is no longer in the team.
    #[error("the user who made the endpoint is no longer in the team")]
    MakerGone,
    /// One user's own time, and the endpoint's maker is a member who is someone else.
    #[error("the event is another user's time, which the member who made the endpoint may not read")]
    NotTheirs,
}

/// Whether `reader` may `GET` what an event of `kind` carrying `owner`'s data shows:
/// members see their own time entries and timers, owners and admins the team's. A personal
/// event whose owner is unknown is for owners and admins only.
fn may_read(reader: &Actor, kind: EventType, owner: Option<UserId>) -> bool {
    !kind.is_personal() || reader.role.may_act_for_others() || owner == Some(reader.user_id)
}

/// Why an event of `kind` carrying `owner`'s data may not be delivered to an endpoint made by
/// `reader` (`None`: no longer in the team), as the maker stands when it would be sent;
/// `None` to send it.
pub fn withheld(reader: Option<&Actor>, kind: EventType, owner: Option<UserId>) -> Option<Withheld> {
    match reader {
        None => Some(Withheld::MakerGone),
        Some(reader) if !may_read(reader, kind, owner) => Some(Withheld::NotTheirs),
        Some(_) => None,
    }
}

/// Whether an event goes to an endpoint's delivery log at all, as its maker stands when it
/// is dispatched: another user's time never does, nor any time once the maker left the
/// team; the team's data does (and fails to deliver, saying why, while the maker is gone).
pub fn is_for(reader: Option<&Actor>, kind: EventType, owner: Option<UserId>) -> bool {
    match reader {
        None => !kind.is_personal(),
        Some(reader) => may_read(reader, kind, owner),
    }
}

/// The body of a delivery: `{"type", "timestamp", "data"}`, with `data` the event's
/// resource as recorded.
pub fn envelope(event: &Event) -> String {
    let data: serde_json::Value =
        serde_json::from_str(&event.data).unwrap_or_else(|_| serde_json::Value::String(event.data.clone()));
    serde_json::json!({
        "type": event.kind.as_str(),
        "timestamp": event.occurred_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        "data": data,
    })
    .to_string()
}

/// What one attempt came to, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptReport {
    /// The receiver's status code, when it answered.
    pub response_status: Option<u16>,
    pub duration_ms: u64,
    /// What went wrong (a status that is not 2xx, a timeout, a refused address).
    pub error: Option<String>,
}

/// What a receiver's answer means for the delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// 2xx: delivered.
    Delivered,
    /// 410 Gone: the receiver is gone for good; the endpoint is disabled.
    Gone,
    /// Anything else, or no answer: try again per the schedule, not before `at_least`
    /// (a 429's or 503's `Retry-After`).
    Retry { at_least: Option<Duration> },
}

/// The longest `Retry-After` honoured: the schedule's longest wait. A receiver asking for
/// more is tried again then, so that a delivery cannot be parked for weeks.
pub const MAX_RETRY_AFTER: Duration = Duration::from_hours(10);

/// The meaning of status `status` (`None`: no answer), with the `Retry-After` it came with.
pub fn answer(status: Option<u16>, retry_after: Option<Duration>) -> Answer {
    match status {
        Some(200..=299) => Answer::Delivered,
        Some(410) => Answer::Gone,
        Some(429 | 503) => Answer::Retry { at_least: retry_after.map(|wait| wait.min(MAX_RETRY_AFTER)) },
        _ => Answer::Retry { at_least: None },
    }
}

/// Which deliveries to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryFilter {
    pub status: Option<DeliveryStatus>,
    /// Only deliveries made before this one (the next page).
    pub before: Option<WebhookDeliveryId>,
    pub limit: u32,
}

/// Why a delivery could not be made again.
#[derive(Debug, thiserror::Error)]
pub enum RedeliverError {
    #[error("not found")]
    NotFound,
    /// Its endpoint is disabled: enable it first.
    #[error("the endpoint is disabled")]
    Disabled,
    /// It is pending already.
    #[error("the delivery is pending")]
    Pending,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The team's webhook endpoints and their deliveries.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Stores a new endpoint unless its team has [`MAX_ENDPOINTS`] already (`false`, and
    /// nothing written): counted under a lock of the team, so concurrent creates keep it.
    async fn create_endpoint(&self, endpoint: &WebhookEndpoint) -> Result<bool, StoreError>;

    async fn get_endpoint(
        &self,
        team: TeamId,
        id: WebhookEndpointId,
    ) -> Result<Option<WebhookEndpoint>, StoreError>;

    /// Oldest first.
    async fn list_endpoints(&self, team: TeamId) -> Result<Vec<WebhookEndpoint>, StoreError>;

    /// Writes every field of `endpoint` but its identity and creation time, if the stored
    /// one was last changed at `read_at` (the `updated_at` it was read with): a change made
    /// since (a rotation, the runner disabling it on a 410) is never undone unseen.
    async fn replace_endpoint(
        &self,
        endpoint: &WebhookEndpoint,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError>;

    /// Deletes the endpoint, its deliveries and their jobs; `false` when there was none.
    async fn delete_endpoint(&self, team: TeamId, id: WebhookEndpointId) -> Result<bool, StoreError>;

    /// Records `event` (a `webhook.test`) and its delivery to the endpoint, with its job, due
    /// at once; `None` when the team has no such endpoint.
    async fn queue_test(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        event: &crate::event::NewEvent,
    ) -> Result<Option<WebhookDelivery>, StoreError>;

    /// The endpoint's deliveries `filter` shows, newest first.
    async fn list_deliveries(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        filter: &DeliveryFilter,
    ) -> Result<Vec<WebhookDelivery>, StoreError>;

    /// Queues a finished delivery again, with a new job due at `at`: the same event, the same
    /// `webhook-id`.
    async fn redeliver(
        &self,
        team: TeamId,
        endpoint: WebhookEndpointId,
        delivery: WebhookDeliveryId,
        at: DateTime<Utc>,
    ) -> Result<WebhookDelivery, RedeliverError>;

    /// What a webhook job sends; `None` when its delivery is gone.
    async fn start_delivery(&self, job: &ClaimedJob) -> Result<Option<OutgoingDelivery>, StoreError>;

    /// Records the attempt of `job` on its delivery and its job in one transaction, and, with
    /// `disable`, disables the endpoint for that reason. `false`, and nothing written, when
    /// the attempt no longer holds the job.
    async fn finish_delivery(
        &self,
        job: &ClaimedJob,
        report: &AttemptReport,
        finish: &Finish,
        disable: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError>;
}

#[cfg(test)]
mod tests {
    use std::net::Ipv6Addr;

    use super::*;

    #[test]
    fn signatures_follow_the_standard() {
        // The example of the Standard Webhooks specification.
        let secret = SigningSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert!(SigningSecret::parse("whsec_short").is_none());
        assert!(SigningSecret::parse("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").is_none());
        let fresh = SigningSecret::generate();
        assert_eq!(SigningSecret::parse(&fresh.expose()), Some(fresh.clone()));
        assert_eq!(format!("{fresh:?}"), "SigningSecret(…)");
    }

    #[test]
    fn urls_are_http_without_credentials() {
        assert!(WebhookUrl::parse("https://hooks.example.com/billable?x=1").is_ok());
        assert_eq!(WebhookUrl::parse("ftp://example.com"), Err(UrlRule::NotHttp));
        assert_eq!(WebhookUrl::parse("/relative"), Err(UrlRule::NotHttp));
        assert_eq!(WebhookUrl::parse("https://u:p@example.com"), Err(UrlRule::Credentials));
        assert_eq!(WebhookUrl::parse("https://example.com/#x"), Err(UrlRule::Fragment));
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert_eq!(WebhookUrl::parse(&long), Err(UrlRule::TooLong));
        assert_eq!(
            WebhookUrl::parse("http://[::1]:8080/x").unwrap().host(),
            Host::Address(IpAddr::V6(Ipv6Addr::LOCALHOST))
        );
    }

    #[test]
    fn an_endpoint_gets_what_its_maker_may_read() {
        use accounts::Role;
        let (me, colleague) = (UserId::generate(), UserId::generate());
        let as_role = |role| Actor { user_id: me, role };
        for role in Role::ALL {
            let reader = as_role(role);
            assert_eq!(withheld(Some(&reader), EventType::InvoicePaid, None), None, "{role:?}");
            assert_eq!(withheld(Some(&reader), EventType::TimeEntryCreated, Some(me)), None, "{role:?}");
            let others = withheld(Some(&reader), EventType::TimerStarted, Some(colleague));
            let unknown = withheld(Some(&reader), EventType::TimeEntryDeleted, None);
            let expected = if role == Role::Member { Some(Withheld::NotTheirs) } else { None };
            assert_eq!((others, unknown), (expected, expected), "{role:?}");
        }
        assert_eq!(withheld(None, EventType::InvoicePaid, None), Some(Withheld::MakerGone));
        assert!(is_for(None, EventType::InvoicePaid, None), "logged, and failed saying why");
        assert!(!is_for(None, EventType::TimeEntryCreated, Some(me)), "no one's time once gone");
        assert!(!is_for(Some(&as_role(Role::Member)), EventType::TimerStopped, Some(colleague)));
        assert!(is_for(Some(&as_role(Role::Admin)), EventType::TimerStopped, Some(colleague)));
    }

    #[test]
    fn answers_decide_the_delivery() {
        assert_eq!(answer(Some(204), None), Answer::Delivered);
        assert_eq!(answer(Some(410), None), Answer::Gone);
        let wait = Some(Duration::from_secs(30));
        assert_eq!(answer(Some(429), wait), Answer::Retry { at_least: wait });
        assert_eq!(answer(Some(500), wait), Answer::Retry { at_least: None });
        assert_eq!(answer(Some(301), None), Answer::Retry { at_least: None });
        assert_eq!(answer(None, None), Answer::Retry { at_least: None });
    }
}
