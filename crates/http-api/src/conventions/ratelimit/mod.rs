//! Per-key and per-IP rate limits (GCRA): in the process, through `governor`, or shared by
//! every replica in Redis ([`SharedCounter`]).

mod shared;

use std::fmt::Display;
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use accounts::ApiKeyId;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
pub use shared::SharedCounter;
use shared::SharedLimiter;

use crate::conventions::error::ApiError;

/// A limit written `BURST/PERIOD`: up to `burst` requests at once, refilling `burst`
/// requests per `period` evenly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub burst: NonZeroU32,
    pub period: Duration,
}

impl Rate {
    fn quota(self) -> Quota {
        let interval = self.period / self.burst.get();
        Quota::with_period(interval.max(Duration::from_nanos(1)))
            .unwrap_or_else(|| Quota::per_second(self.burst))
            .allow_burst(self.burst)
    }

    fn refill_interval(self) -> Duration {
        self.period / self.burst.get()
    }
}

/// Where a caller stands after a request was let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    pub limit: u32,
    pub remaining: u32,
    /// Whole seconds until the allowance is full again.
    pub reset_secs: u64,
}

/// A refused request: when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub limit: u32,
    /// Whole seconds, at least 1.
    pub retry_after_secs: u64,
}

struct Limiter<K: Hash + Eq + Clone> {
    rate: Rate,
    inner: RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>,
    clock: DefaultClock,
}

impl<K: Hash + Eq + Clone> Limiter<K> {
    fn new(rate: Rate) -> Self {
        let clock = DefaultClock::default();
        Self {
            rate,
            inner: RateLimiter::new(rate.quota(), DefaultKeyedStateStore::default(), clock.clone()),
            clock,
        }
    }

    fn check(&self, key: &K) -> Result<Allowance, Exceeded> {
        let limit = self.rate.burst.get();
        match self.inner.check_key(key) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let missing = limit.saturating_sub(remaining);
                let reset = self.rate.refill_interval() * missing;
                Ok(Allowance { limit, remaining, reset_secs: ceil_secs(reset) })
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                Err(Exceeded { limit, retry_after_secs: ceil_secs(wait).max(1) })
            }
        }
    }

    fn sweep(&self) {
        self.inner.retain_recent();
        self.inner.shrink_to_fit();
    }
}

fn ceil_secs(duration: Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// One kind of limit: counted in this process, or in Redis with this process's counter
/// standing in while Redis does not answer.
struct Counted<K: Hash + Eq + Clone> {
    local: Limiter<K>,
    shared: Option<SharedLimiter<K>>,
}

impl<K> Counted<K>
where
    K: Hash + Eq + Clone + Display + Send + Sync + 'static,
{
    fn new(rate: Rate, kind: &'static str, shared: Option<&Arc<SharedCounter>>) -> Self {
        Self {
            local: Limiter::new(rate),
            shared: shared.map(|counter| SharedLimiter::new(rate, kind, counter.clone())),
        }
    }

    async fn check(&self, key: &K) -> Result<Allowance, Exceeded> {
        if let Some(shared) = &self.shared {
            match shared.check(key).await {
                Ok(allowance) => return Ok(allowance),
                Err(Some(exceeded)) => return Err(exceeded),
                Err(None) => {}
            }
        }
        self.local.check(key)
    }

    fn sweep(&self) {
        self.local.sweep();
        if let Some(shared) = &self.shared {
            shared.sweep();
        }
    }
}

/// The service's two limiters.
pub struct RateLimits {
    per_key: Counted<ApiKeyId>,
    per_ip: Counted<IpAddr>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("per_key", &self.per_key.local.rate)
            .field("per_ip", &self.per_ip.local.rate)
            .field("shared", &self.per_key.shared.is_some())
            .finish()
    }
}

impl RateLimits {
    /// Limits counted in this process, or, with `shared`, in Redis across replicas.
    pub fn new(per_key: Rate, per_ip: Rate, shared: Option<&Arc<SharedCounter>>) -> Self {
        Self { per_key: Counted::new(per_key, "key", shared), per_ip: Counted::new(per_ip, "ip", shared) }
    }

    /// Counts one request of an authenticated key.
    pub async fn check_key(&self, key: ApiKeyId) -> Result<Allowance, Exceeded> {
        self.per_key.check(&key).await
    }

    /// Counts one unauthenticated request (or failed key check) from an address.
    pub async fn check_ip(&self, ip: IpAddr) -> Result<Allowance, Exceeded> {
        self.per_ip.check(&ip).await
    }

    /// Forgets callers whose allowance is full again, so memory stays bounded.
    pub fn sweep(&self) {
        self.per_key.sweep();
        self.per_ip.sweep();
    }
}

/// Throttles failed authentication per client IP: after `rate.burst` failures within the
/// rate's period, the address gets 429 for every request (before its credentials are
/// looked at) until its allowance refills, so guessing costs time even when it succeeds.
pub struct FailureThrottle {
    failures: Limiter<IpAddr>,
    /// Blocked addresses and until when.
    blocked: moka::sync::Cache<IpAddr, std::time::Instant>,
}

impl std::fmt::Debug for FailureThrottle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FailureThrottle").field("rate", &self.failures.rate).finish_non_exhaustive()
    }
}

impl FailureThrottle {
    pub fn new(rate: Rate) -> Self {
        let blocked = moka::sync::Cache::builder().max_capacity(100_000).time_to_live(rate.period).build();
        Self { failures: Limiter::new(rate), blocked }
    }

    /// Refuses an address that is blocked.
    pub fn check(&self, ip: IpAddr) -> Result<(), Exceeded> {
        let Some(until) = self.blocked.get(&ip) else { return Ok(()) };
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            self.blocked.invalidate(&ip);
            return Ok(());
        }
        Err(Exceeded { limit: self.failures.rate.burst.get(), retry_after_secs: ceil_secs(left).max(1) })
    }

    /// Counts a failure; `Err` when it was one too many, and the address is now blocked.
    pub fn fail(&self, ip: IpAddr) -> Result<(), Exceeded> {
        self.failures.check(&ip).map(drop).inspect_err(|exceeded| {
            let until = std::time::Instant::now() + Duration::from_secs(exceeded.retry_after_secs);
            self.blocked.insert(ip, until);
        })
    }

    /// Forgets addresses whose allowance is full again.
    pub fn sweep(&self) {
        self.failures.sweep();
        self.blocked.run_pending_tasks();
    }
}

/// The `RateLimit-*` headers of `allowance` on `error`.
fn rate_headers(error: ApiError, allowance: &Allowance) -> ApiError {
    error
        .with_header(HeaderName::from_static("ratelimit-limit"), allowance.limit)
        .with_header(HeaderName::from_static("ratelimit-remaining"), allowance.remaining)
        .with_header(HeaderName::from_static("ratelimit-reset"), allowance.reset_secs)
}

/// 429, saying when to come back.
pub(crate) fn too_many_requests(exceeded: Exceeded) -> ApiError {
    let error = ApiError::new(StatusCode::TOO_MANY_REQUESTS, "rate limit exceeded")
        .with_header(header::RETRY_AFTER, exceeded.retry_after_secs);
    rate_headers(
        error,
        &Allowance { limit: exceeded.limit, remaining: 0, reset_secs: exceeded.retry_after_secs },
    )
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use accounts::ApiKeyId;
    use kernel::Id;

    use super::{FailureThrottle, Rate, RateLimits};

    #[tokio::test]
    async fn burst_then_refusal_with_retry_after() {
        let rate = Rate { burst: NonZeroU32::new(3).unwrap(), period: Duration::from_secs(30) };
        let limits = RateLimits::new(rate, rate, None);
        let key = ApiKeyId::generate();
        let mut remaining = Vec::new();
        for _ in 0..3 {
            remaining.push(limits.check_key(key).await.unwrap().remaining);
        }
        assert_eq!(remaining, [2, 1, 0]);
        let refused = limits.check_key(key).await.unwrap_err();
        assert_eq!(refused.limit, 3);
        assert!((1..=10).contains(&refused.retry_after_secs), "{refused:?}");
        // Another key has its own allowance.
        assert_eq!(limits.check_key(ApiKeyId::generate()).await.unwrap().remaining, 2);
    }

    #[test]
    fn failures_past_the_limit_block_the_address() {
        let rate = Rate { burst: NonZeroU32::new(2).unwrap(), period: Duration::from_mins(1) };
        let throttle = FailureThrottle::new(rate);
        let (ip, other) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        assert!(throttle.check(ip).is_ok());
        assert!(throttle.fail(ip).is_ok());
        assert!(throttle.fail(ip).is_ok());
        assert!(throttle.check(ip).is_ok(), "two failures are allowed");
        let blocked = throttle.fail(ip).unwrap_err();
        assert!((1..=30).contains(&blocked.retry_after_secs), "{blocked:?}");
        assert!(throttle.check(ip).is_err(), "blocked before credentials are looked at");
        assert!(throttle.check(other).is_ok());
    }
}
