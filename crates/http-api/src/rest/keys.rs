//! The cached check of presented API keys: found by hash, kept for a while, forgotten when
//! any process revokes a key. What the key middleware and the trigger listeners ask.

use std::sync::Arc;
use std::time::Duration;

use accounts::{AccountStore, ApiKeySecret, Credential, KeyHash, Principal, Refusal};
use kernel::{Clock, StoreError};

/// Checks presented keys against the store, caching what it finds for `ttl`.
///
/// At steady state a key costs no database round trip. A revocation or expiry made
/// elsewhere (the CLI, another instance) takes effect within `ttl`; expiry recorded on a
/// cached key is checked on every request. `last_used_at` is written on each cache miss,
/// so it is accurate to `ttl`.
pub struct Authenticator {
    accounts: Arc<dyn AccountStore>,
    clock: Arc<dyn Clock>,
    cache: moka::sync::Cache<[u8; 32], Arc<Credential>>,
    /// Moves on every [`Authenticator::forget_keys`]: a lookup that began before it keeps
    /// its answer out of the cache, lest a key read before a revocation outlive it there.
    forgotten: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator").field("cached", &self.cache.entry_count()).finish_non_exhaustive()
    }
}

/// Why a request was not authenticated.
#[derive(Debug)]
pub enum AuthFailure {
    Missing,
    Refused(Refusal),
    Store(StoreError),
}

impl Authenticator {
    pub fn new(accounts: Arc<dyn AccountStore>, clock: Arc<dyn Clock>, ttl: Duration) -> Self {
        let cache = moka::sync::Cache::builder().max_capacity(100_000).time_to_live(ttl).build();
        Self { accounts, clock, cache, forgotten: std::sync::atomic::AtomicU64::new(0) }
    }

    /// Forgets every cached key check, so the next use of each key reads the database.
    pub fn forget_keys(&self) {
        self.forgotten.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.cache.invalidate_all();
    }

    /// Forgets the cached key checks whenever the store's count of revoked keys moves,
    /// looking every `interval`: a key revoked by any process (another replica, `billable
    /// keys revoke`) stops working here within that time and one query. Runs until the
    /// task holding it is dropped.
    pub async fn watch_revocations(&self, interval: Duration) {
        let mut seen: Option<u64> = None;
        // Whether a count could not be read since the last one that could.
        let mut lost = false;
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            match self.accounts.revoked_key_count().await {
                Ok(count) => {
                    if seen.is_some_and(|seen| seen != count) {
                        tracing::info!(revoked = count, "a key was revoked: cached key checks forgotten");
                        self.forget_keys();
                    } else if lost {
                        // A revocation may have come and gone unseen while the count could
                        // not be read.
                        self.forget_keys();
                    }
                    (seen, lost) = (Some(count), false);
                }
                // Forgotten once when the count is lost, not on every tick: while the
                // database struggles, looking every key up again would only add load.
                Err(error) => {
                    if !lost {
                        tracing::warn!(
                            error = format!("{error:#}"),
                            "could not read the revoked keys' count"
                        );
                        self.forget_keys();
                    }
                    lost = true;
                }
            }
        }
    }

    pub async fn authenticate(&self, presented: Option<&str>) -> Result<Principal, AuthFailure> {
        let presented = presented.ok_or(AuthFailure::Missing)?;
        let secret = ApiKeySecret::parse(presented).ok_or(AuthFailure::Refused(Refusal::Unknown))?;
        let KeyHash(hash) = secret.hash();
        let (credential, cache_miss) = if let Some(credential) = self.cache.get(&hash) {
            (credential, false)
        } else {
            let generation = self.forgotten.load(std::sync::atomic::Ordering::SeqCst);
            let found = self.accounts.find_credential(&KeyHash(hash)).await.map_err(AuthFailure::Store)?;
            let credential = Arc::new(found.ok_or(AuthFailure::Refused(Refusal::Unknown))?);
            self.cache.insert(hash, credential.clone());
            // Checked after the insert, so a forgetting at any point since the lookup began
            // takes this entry out again.
            if self.forgotten.load(std::sync::atomic::Ordering::SeqCst) != generation {
                self.cache.invalidate(&hash);
            }
            (credential, true)
        };
        let principal = credential.authenticate(self.clock.now()).map_err(AuthFailure::Refused)?;
        // Only a use that was let through counts as a use.
        if cache_miss {
            self.record_use(&credential);
        }
        Ok(principal)
    }

    fn record_use(&self, credential: &Credential) {
        let (accounts, now) = (self.accounts.clone(), self.clock.now());
        let (team, key) = (credential.key.team_id, credential.key.id);
        actix_web::rt::spawn(async move {
            if let Err(error) = accounts.record_key_use(team, key, now).await {
                tracing::warn!(error = format!("{error:#}"), %key, "could not record key use");
            }
        });
    }
}
