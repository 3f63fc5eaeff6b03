//! What every handler can reach: the ports and the HTTP-side services.

use std::sync::Arc;
use std::time::Duration;

use accounts::{AccountStore, IdempotencyStore};
use billing::BillingStore;
use billing::issue::Printer;
use kernel::{Clock, StoreHealth};
use tracking::TrackStore;
use triggers::AgentStore;

use crate::conventions::ratelimit::{Rate, RateLimits, SharedCounter};
use crate::rest::keys::Authenticator;
use crate::rest::listings::ListingCache;
use crate::rest::metrics::{DiskRoom, Metrics};
use crate::rest::revisions::RevisionReads;

/// HTTP-side settings.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Per API key.
    pub key_rate: Rate,
    /// Per client IP, for unauthenticated traffic and failed key checks.
    pub ip_rate: Rate,
    /// Where replicas count both limits together; `None`: each process counts its own.
    pub shared_limits: Option<Arc<SharedCounter>>,
    /// How long a key check is cached (the bound on how late a revocation bites).
    pub key_cache_ttl: Duration,
    /// Take the client IP from `Forwarded`/`X-Forwarded-For` (only behind a trusted proxy).
    pub trust_forwarded: bool,
    /// Bytes of rendered time-entry listings kept for repeated requests; 0 keeps none.
    pub listing_cache_bytes: u64,
    /// The largest bank statement file taken, in bytes.
    pub statement_limit: usize,
    /// How long an `Idempotency-Key` and its answer are kept.
    pub idempotency_ttl: Duration,
    /// Browser origins allowed to call `/mcp`; none by default.
    pub mcp_origins: crate::conventions::origins::AllowedOrigins,
    /// What e-mail and webhooks need.
    pub sending: Sending,
}

/// What sending e-mail and webhooks needs of the HTTP side.
#[derive(Debug, Clone)]
pub struct Sending {
    /// The `From` of every message; `None` when no SMTP server is configured (sending is
    /// then refused, 409).
    pub mail_from: Option<kernel::Email>,
    /// The public links of documents (`{pdfUrl}`), on where people reach this server.
    pub links: notify::service::Links,
    /// Whether webhook endpoints may be on loopback, private or link-local addresses.
    pub allow_private_webhooks: bool,
}

/// The storage ports the API serves from.
#[derive(Clone)]
pub struct Stores {
    pub accounts: Arc<dyn AccountStore>,
    /// Clients, invoices and sender addresses.
    pub billing: Arc<dyn BillingStore>,
    pub track: Arc<dyn TrackStore>,
    /// The agent's run history and delivery log.
    pub agent: Arc<dyn AgentStore>,
    pub health: Arc<dyn StoreHealth>,
    /// Idempotency keys and their kept answers.
    pub idempotency: Arc<dyn IdempotencyStore>,
    /// Events, jobs, messages, reminders and webhooks.
    pub notify: Arc<dyn notify::NotifyStore>,
    /// Recurring invoices and their runs.
    pub recurring: Arc<dyn recurring::RecurringStore>,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stores")
    }
}

/// Shared by all workers.
pub struct ApiState {
    pub stores: Stores,
    /// Makes the PDFs (in process, or through a renderer service) and e-invoices of
    /// documents.
    pub printer: Printer,
    pub clock: Arc<dyn Clock>,
    pub settings: HttpSettings,
    pub authenticator: Authenticator,
    pub limits: RateLimits,
    pub metrics: Metrics,
    /// Whether the database's disk had room for the last write.
    pub room: DiskRoom,
    pub listings: ListingCache,
    /// Listing revision reads, shared by concurrent requests of a team.
    pub revisions: RevisionReads,
    /// The card processor pages' "Pay by card" and its webhooks go through; none, no card
    /// payments.
    pub cards: Option<Arc<dyn billing::cards::CardProcessor>>,
    /// Reads banks' statement files.
    pub statements: Arc<dyn billing::banking::StatementReader>,
}

impl std::fmt::Debug for ApiState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiState").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl ApiState {
    /// The same state, taking card payments through `processor`.
    #[must_use]
    pub fn with_cards(self, processor: Arc<dyn billing::cards::CardProcessor>) -> Self {
        Self { cards: Some(processor), ..self }
    }

    pub fn new(stores: Stores, printer: Printer, clock: Arc<dyn Clock>, settings: HttpSettings) -> Self {
        let authenticator =
            Authenticator::new(stores.accounts.clone(), clock.clone(), settings.key_cache_ttl);
        Self {
            limits: RateLimits::new(settings.key_rate, settings.ip_rate, settings.shared_limits.as_ref()),
            listings: ListingCache::new(settings.listing_cache_bytes),
            revisions: RevisionReads::of(stores.track.clone()),
            cards: None,
            statements: Arc::new(statements::Reader),
            metrics: Metrics::new(),
            room: DiskRoom::default(),
            authenticator,
            stores,
            printer,
            clock,
            settings,
        }
    }
}
