//! Per-key and per-IP rate limits (GCRA, through `governor`).

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use accounts::ApiKeyId;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

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

/// The service's two limiters.
pub struct RateLimits {
    per_key: Limiter<ApiKeyId>,
    per_ip: Limiter<IpAddr>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("per_key", &self.per_key.rate)
            .field("per_ip", &self.per_ip.rate)
            .finish()
    }
}

impl RateLimits {
    pub fn new(per_key: Rate, per_ip: Rate) -> Self {
        Self { per_key: Limiter::new(per_key), per_ip: Limiter::new(per_ip) }
    }

    /// Counts one request of an authenticated key.
    pub fn check_key(&self, key: ApiKeyId) -> Result<Allowance, Exceeded> {
        self.per_key.check(&key)
    }

    /// Counts one unauthenticated request (or failed key check) from an address.
    pub fn check_ip(&self, ip: IpAddr) -> Result<Allowance, Exceeded> {
        self.per_ip.check(&ip)
    }

    /// Forgets callers whose allowance is full again, so memory stays bounded.
    pub fn sweep(&self) {
        self.per_key.sweep();
        self.per_ip.sweep();
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use accounts::ApiKeyId;
    use kernel::Id;

    use super::{Rate, RateLimits};

    #[test]
    fn burst_then_refusal_with_retry_after() {
        let rate = Rate { burst: NonZeroU32::new(3).unwrap(), period: Duration::from_secs(30) };
        let limits = RateLimits::new(rate, rate);
        let key = ApiKeyId::generate();
        let remaining: Vec<u32> = (0..3).map(|_| limits.check_key(key).unwrap().remaining).collect();
        assert_eq!(remaining, [2, 1, 0]);
        let refused = limits.check_key(key).unwrap_err();
        assert_eq!(refused.limit, 3);
        assert!((1..=10).contains(&refused.retry_after_secs), "{refused:?}");
        // Another key has its own allowance.
        assert_eq!(limits.check_key(ApiKeyId::generate()).unwrap().remaining, 2);
    }
}
