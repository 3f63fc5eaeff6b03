//! Rate limits counted in Redis, so that N replicas grant a caller its limit, not N times
//! it.
//!
//! Redis keeps one GCRA bucket per caller (`<prefix>rl:<kind>:<id>`: the time at which the
//! bucket is full again), changed by one Lua script that takes up to `n` tokens at once,
//! on Redis's clock. A replica takes a *slice* of a caller's tokens at a time (about 3 % of
//! the burst, at least 1) and spends them on that caller's next requests, so a request
//! waits for Redis only when its replica's slice is spent: a busy key costs a round trip
//! per slice, not per request. Tokens a replica holds were taken from the shared bucket,
//! so over any stretch of time the replicas spend at most what the bucket granted plus
//! what they held at its start, one slice each: across N replicas a caller gets its
//! limit within N slices, and never fewer than its limit less the N slices the replicas
//! may be holding unspent. A refusal is remembered until the next token is due, so a
//! flood of refused requests does not become a flood of round trips.

use std::fmt::Display;
use std::hash::Hash;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use redis::aio::ConnectionManager;
use tokio::sync::OnceCell;

use super::{Allowance, Exceeded, Rate, ceil_secs};

/// Takes up to ARGV[3] tokens from the bucket KEYS[1] with refill interval ARGV[1] and
/// burst ARGV[2] (microseconds and tokens). Returns {granted, remaining, wait}: `wait` is
/// the microseconds until the bucket is full again, or, when nothing was granted, until
/// the next token is due. The level is kept as "full at" time (TAT), so an idle bucket
/// needs no write to refill and expires from Redis once full.
const TAKE: &str = r"
local now = redis.call('TIME')
now = tonumber(now[1]) * 1000000 + tonumber(now[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local full_at = tonumber(redis.call('GET', KEYS[1]) or now)
if full_at < now then full_at = now end
local available = math.floor((now + burst * interval - full_at) / interval)
if available < 1 then
  return {0, 0, full_at - (burst - 1) * interval - now}
end
local granted = math.min(wanted, available)
full_at = full_at + granted * interval
redis.call('SET', KEYS[1], string.format('%d', full_at), 'PX', math.ceil((full_at - now) / 1000) + 1)
return {granted, available - granted, full_at - now}
";

/// How long a request waits for Redis before its replica counts alone.
const REDIS_TIMEOUT: Duration = Duration::from_millis(250);
/// After Redis failed to answer, how long replicas count alone before asking again, so
/// that an outage does not add a timeout to every request.
const REDIS_BACKOFF: Duration = Duration::from_secs(1);

/// The Redis side: where the buckets are, and the script that changes them.
pub struct SharedCounter {
    client: redis::Client,
    connection: OnceCell<ConnectionManager>,
    script: redis::Script,
    prefix: String,
    /// Until when Redis is not asked, after it failed.
    resting_until: Mutex<Option<Instant>>,
}

impl std::fmt::Debug for SharedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedCounter").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

/// What the script answered.
struct Taken {
    granted: u32,
    remaining: u32,
    wait: Duration,
}

impl SharedCounter {
    /// A counter on the Redis at `url` (`redis://host:port/db`), its keys under `prefix`.
    /// Connects on first use; see [`SharedCounter::ping`] to learn at start that it answers.
    pub fn new(url: &str, prefix: &str) -> anyhow::Result<Self> {
        Ok(Self {
            client: redis::Client::open(url).map_err(|e| anyhow::anyhow!("BILLABLE_REDIS_URL: {e}"))?,
            connection: OnceCell::new(),
            script: redis::Script::new(TAKE),
            prefix: prefix.to_owned(),
            resting_until: Mutex::new(None),
        })
    }

    async fn connection(&self) -> redis::RedisResult<ConnectionManager> {
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(REDIS_TIMEOUT))
            .set_response_timeout(Some(REDIS_TIMEOUT))
            .set_number_of_retries(1);
        self.connection
            .get_or_try_init(|| self.client.get_connection_manager_with_config(config))
            .await
            .cloned()
    }

    /// Whether Redis failed within the last [`REDIS_BACKOFF`].
    fn resting(&self) -> bool {
        let resting_until = self.resting_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        resting_until.is_some_and(|until| Instant::now() < until)
    }

    fn rest(&self) {
        *self.resting_until.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
            Some(Instant::now() + REDIS_BACKOFF);
    }

    /// Asks Redis once, so that a wrong address stops startup rather than the first request.
    pub async fn ping(&self) -> anyhow::Result<()> {
        let mut connection = self.connection().await?;
        redis::cmd("PING").query_async::<String>(&mut connection).await?;
        Ok(())
    }

    async fn take(&self, key: &str, rate: Rate, wanted: u32) -> redis::RedisResult<Taken> {
        let mut connection = self.connection().await?;
        let interval = u64::try_from(rate.refill_interval().as_micros()).unwrap_or(u64::MAX).max(1);
        let (granted, remaining, wait): (i64, i64, i64) = self
            .script
            .key(key)
            .arg(interval)
            .arg(rate.burst.get())
            .arg(wanted)
            .invoke_async(&mut connection)
            .await?;
        let clamp = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        Ok(Taken {
            granted: clamp(granted),
            remaining: clamp(remaining),
            wait: Duration::from_micros(u64::try_from(wait.max(0)).unwrap_or_default()),
        })
    }
}

/// A replica's share of one caller's allowance. Atomics, so that spending a token from it
/// (nearly every request) takes no lock; times are microseconds since the limiter began.
#[derive(Debug, Default)]
struct Lease {
    /// Tokens taken from Redis and not yet spent.
    tokens: AtomicU32,
    /// What Redis said was left beside them.
    remaining: AtomicU32,
    /// When the bucket is full again, as Redis said.
    full_at: AtomicU64,
    /// Until when a refusal is remembered (0: none).
    refused_until: AtomicU64,
    /// When the lease was last used, for the sweep.
    used_at: AtomicU64,
}

/// One kind of limit (per key, per IP) counted in Redis.
pub(super) struct SharedLimiter<K> {
    rate: Rate,
    kind: &'static str,
    slice: u32,
    counter: Arc<SharedCounter>,
    leases: DashMap<K, Lease>,
    /// The origin of the leases' times.
    began: Instant,
}

impl<K> SharedLimiter<K>
where
    K: Hash + Eq + Clone + Display + Send + Sync + 'static,
{
    pub(super) fn new(rate: Rate, kind: &'static str, counter: Arc<SharedCounter>) -> Self {
        Self { rate, kind, slice: slice_of(rate), counter, leases: DashMap::new(), began: Instant::now() }
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.began).as_micros()).unwrap_or(u64::MAX)
    }

    /// Counts one request of `key`; `Err(None)` when Redis could not be asked.
    pub(super) async fn check(&self, key: &K) -> Result<Allowance, Option<Exceeded>> {
        let limit = self.rate.burst.get();
        let now = self.micros(Instant::now());
        if let Some(lease) = self.leases.get(key)
            && let Some(spent) = spend(&lease, now, limit)
        {
            return spent.map_err(Some);
        }
        if self.counter.resting() {
            return Err(None);
        }
        let redis_key = format!("{}rl:{}:{key}", self.counter.prefix, self.kind);
        let taken = self.counter.take(&redis_key, self.rate, self.slice).await.map_err(|error| {
            tracing::warn!(%error, "rate limits: Redis did not answer; counting in this process for a second");
            self.counter.rest();
        });
        let taken = taken.map_err(|()| None)?;
        let wait = u64::try_from(taken.wait.as_micros()).unwrap_or(u64::MAX);
        let lease = self.leases.entry(key.clone()).or_default();
        lease.used_at.store(now, Relaxed);
        if taken.granted == 0 {
            lease.refused_until.store(now.saturating_add(wait), Relaxed);
            return Err(Some(Exceeded { limit, retry_after_secs: ceil_secs(taken.wait).max(1) }));
        }
        lease.refused_until.store(0, Relaxed);
        lease.remaining.store(taken.remaining, Relaxed);
        lease.full_at.store(now.saturating_add(wait), Relaxed);
        // Concurrent requests that each took a slice keep every token they took.
        let held = lease.tokens.fetch_add(taken.granted - 1, Relaxed) + taken.granted - 1;
        Ok(Allowance { limit, remaining: taken.remaining + held, reset_secs: ceil_secs(taken.wait) })
    }

    /// Forgets the leases of callers idle for a whole period (and their unspent tokens).
    pub(super) fn sweep(&self) {
        let idle =
            u64::try_from(self.rate.period.max(Duration::from_secs(1)).as_micros()).unwrap_or(u64::MAX);
        let now = self.micros(Instant::now());
        self.leases.retain(|_, lease| now.saturating_sub(lease.used_at.load(Relaxed)) < idle);
        self.leases.shrink_to_fit();
    }
}

/// Answers from the lease when it can: a token from the slice, or a remembered refusal.
fn spend(lease: &Lease, now: u64, limit: u32) -> Option<Result<Allowance, Exceeded>> {
    let refused_until = lease.refused_until.load(Relaxed);
    if now < refused_until {
        let wait = Duration::from_micros(refused_until - now);
        return Some(Err(Exceeded { limit, retry_after_secs: ceil_secs(wait).max(1) }));
    }
    let left = lease.tokens.fetch_update(Relaxed, Relaxed, |tokens| tokens.checked_sub(1)).ok()? - 1;
    lease.used_at.store(now, Relaxed);
    let reset = Duration::from_micros(lease.full_at.load(Relaxed).saturating_sub(now));
    Some(Ok(Allowance {
        limit,
        remaining: lease.remaining.load(Relaxed) + left,
        reset_secs: ceil_secs(reset),
    }))
}

/// How many tokens a replica takes at a time: about 3 % of the burst, at least 1.
fn slice_of(rate: Rate) -> u32 {
    rate.burst.get().div_ceil(32)
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::time::Duration;

    use super::{Rate, slice_of};

    #[test]
    fn slices_are_a_thirty_second_of_the_burst_and_at_least_one() {
        let slice = |burst| {
            slice_of(Rate { burst: NonZeroU32::new(burst).unwrap(), period: Duration::from_secs(10) })
        };
        assert_eq!([slice(1), slice(10), slice(32), slice(100), slice(1_000_000)], [1, 1, 1, 4, 31_250]);
    }
}
