//! PostgreSQL's pool, in one part per tokio runtime.
//!
//! tokio-postgres drives each connection from a task on the runtime that opened it: the
//! task writes the queries and reads the rows. actix-web runs one single-threaded
//! runtime per worker, so with one pool shared by all of them a query sent on a
//! connection another worker opened wakes that worker's thread to send it, and its rows
//! come back the same way: about half of all queries crossed threads, a wake-up and a
//! context switch each way. Here each runtime has a part of the pool of its own and takes
//! its connections from it, so it drives them itself.
//!
//! The parts split the configured size evenly, one per runtime the server runs (its main
//! runtime and one per HTTP worker); each runtime takes the next part without an owner
//! the first time it asks, and runtimes that come after every part has one share them.
//! A runtime whose part stays busy for [`BORROW_AFTER`] takes an idle connection of
//! another part, so a burst of slow queries on one worker still gets every idle
//! connection; failing that it waits on its own part, and the wait timeout ends in
//! [`PoolError::Timeout`] as with one pool.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use deadpool::managed::{Manager, Object, Pool, PoolError, Status, TimeoutType, Timeouts};
use tokio::runtime::{Handle, Id as RuntimeId};

/// How long a runtime waits for a connection of its own part before it borrows another
/// part's. Under load its own connections come free within about a query's time (well
/// under a millisecond to a few); borrowing at once, when its part is merely busy, would
/// put a share of its queries back on other threads.
const BORROW_AFTER: Duration = Duration::from_millis(5);

/// Tells apart the pools in the per-thread cache of [`RuntimePool::local`].
static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The part this thread last used: (pool, the thread's runtime then, part index).
    static LOCAL_PART: Cell<Option<(u64, RuntimeId, usize)>> = const { Cell::new(None) };
}

pub(crate) struct RuntimePool<M: Manager> {
    id: u64,
    parts: Vec<Pool<M>>,
    /// The runtime that owns each part, in the order they came.
    owners: Mutex<Vec<RuntimeId>>,
    /// Picks a part for the threads of runtimes that came after every part had an owner.
    overflow: AtomicUsize,
}

impl<M: Manager> RuntimePool<M> {
    /// `max_size` connections in `runtimes` parts (at most one part per connection),
    /// each built by `new_part` with its size.
    pub(crate) fn new(
        max_size: usize,
        runtimes: usize,
        new_part: impl Fn(usize) -> anyhow::Result<Pool<M>>,
    ) -> anyhow::Result<Self> {
        let max_size = max_size.max(1);
        let count = runtimes.clamp(1, max_size);
        let parts = (0..count)
            .map(|index| new_part(max_size / count + usize::from(index < max_size % count)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self {
            id: NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed),
            parts,
            owners: Mutex::new(Vec::new()),
            overflow: AtomicUsize::new(0),
        })
    }

    /// A connection: from the calling runtime's part, waiting up to [`BORROW_AFTER`] for
    /// one to come free there; then an idle one of another part; else the first to come
    /// free in its own part within the rest of the wait timeout.
    pub(crate) async fn get(&self) -> Result<Object<M>, PoolError<M::Error>> {
        let local = self.local();
        let timeouts = local.timeouts();
        let patience = timeouts.wait.map_or(BORROW_AFTER, |wait| wait.min(BORROW_AFTER));
        match local.timeout_get(&Timeouts { wait: Some(patience), ..timeouts }).await {
            Err(PoolError::Timeout(TimeoutType::Wait)) => {}
            got => return got,
        }
        // Only parts with an idle connection: a free slot alone would open a connection
        // on this runtime and leave it in a part another runtime uses.
        let at_once = Timeouts { wait: Some(Duration::ZERO), ..timeouts };
        for part in
            self.parts.iter().filter(|part| !std::ptr::eq(*part, local) && part.status().available > 0)
        {
            if let Ok(borrowed) = part.timeout_get(&at_once).await {
                return Ok(borrowed);
            }
        }
        let rest = timeouts.wait.map(|wait| wait.saturating_sub(patience));
        local.timeout_get(&Timeouts { wait: rest, ..timeouts }).await
    }

    /// Every part together.
    pub(crate) fn status(&self) -> Status {
        self.parts.iter().map(Pool::status).fold(
            Status { max_size: 0, size: 0, available: 0, waiting: 0 },
            |total, part| Status {
                max_size: total.max_size + part.max_size,
                size: total.size + part.size,
                available: total.available + part.available,
                waiting: total.waiting + part.waiting,
            },
        )
    }

    /// The calling runtime's part. Outside any runtime, the first part.
    fn local(&self) -> &Pool<M> {
        let Ok(handle) = Handle::try_current() else {
            return &self.parts[0];
        };
        let runtime = handle.id();
        let cached = LOCAL_PART.get().filter(|&(pool, owner, _)| pool == self.id && owner == runtime);
        let index = if let Some((_, _, index)) = cached {
            index
        } else {
            let index = self.assign(runtime);
            LOCAL_PART.set(Some((self.id, runtime, index)));
            index
        };
        &self.parts[index]
    }

    /// The part of `runtime`: its own, the next one without an owner, or once every part
    /// has one, each of them in turn.
    fn assign(&self, runtime: RuntimeId) -> usize {
        let mut owners = self.owners.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = owners.iter().position(|owner| *owner == runtime) {
            return index;
        }
        if owners.len() == self.parts.len() {
            return self.overflow.fetch_add(1, Ordering::Relaxed) % self.parts.len();
        }
        owners.push(runtime);
        owners.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deadpool::managed::{Metrics, RecycleResult};

    /// Numbers the objects it makes: 0, 1, …
    struct Counter(AtomicUsize);

    impl Manager for Counter {
        type Type = usize;
        type Error = std::convert::Infallible;

        async fn create(&self) -> Result<usize, Self::Error> {
            Ok(self.0.fetch_add(1, Ordering::Relaxed))
        }

        async fn recycle(&self, _: &mut usize, _: &Metrics) -> RecycleResult<Self::Error> {
            Ok(())
        }
    }

    fn pool(max_size: usize, runtimes: usize) -> RuntimePool<Counter> {
        RuntimePool::new(max_size, runtimes, |size| {
            Pool::builder(Counter(AtomicUsize::new(0)))
                .max_size(size)
                .wait_timeout(Some(Duration::from_millis(50)))
                .runtime(deadpool::Runtime::Tokio1)
                .build()
                .map_err(anyhow::Error::new)
        })
        .unwrap()
    }

    /// Runs `work` on a runtime of its own, on a thread of its own.
    fn on_new_runtime<T: Send>(work: impl std::future::Future<Output = T> + Send) -> T {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                    runtime.block_on(work)
                })
                .join()
                .unwrap()
        })
    }

    fn sizes<M: Manager>(pool: &RuntimePool<M>) -> Vec<usize> {
        pool.parts.iter().map(|part| part.status().max_size).collect()
    }

    fn local_index<M: Manager>(pool: &RuntimePool<M>) -> usize {
        pool.parts.iter().position(|part| std::ptr::eq(part, pool.local())).unwrap()
    }

    #[test]
    fn the_parts_split_the_size_and_are_never_more_than_the_connections() {
        assert_eq!(sizes(&pool(16, 3)), [6, 5, 5]);
        assert_eq!(sizes(&pool(16, 3)).iter().sum::<usize>(), 16);
        assert_eq!(sizes(&pool(2, 5)), [1, 1]);
        assert_eq!(sizes(&pool(4, 0)), [4]);
        assert_eq!(pool(16, 3).status().max_size, 16);
    }

    #[test]
    fn each_runtime_keeps_a_part_of_its_own_and_later_ones_share() {
        let pool = pool(4, 2);
        let first = on_new_runtime(async {
            let a = *pool.get().await.unwrap();
            let b = *pool.get().await.unwrap();
            (local_index(&pool), a, b)
        });
        assert_eq!(first, (0, 0, 0), "the connection handed back is handed out again");
        let second = on_new_runtime(async { (local_index(&pool), *pool.get().await.unwrap()) });
        assert_eq!(second, (1, 0), "the next part, with a first connection of its own");
        let later: Vec<usize> = (0..2).map(|_| on_new_runtime(async { local_index(&pool) })).collect();
        assert_eq!(later, [0, 1], "runtimes beyond the parts take them in turn");
    }

    #[test]
    fn a_runtime_whose_part_stays_busy_borrows_an_idle_connection() {
        let pool = pool(2, 2);
        // Part 0 opens its connection and leaves it idle.
        on_new_runtime(async { drop(pool.get().await.unwrap()) });
        on_new_runtime(async {
            let own = pool.get().await.unwrap();
            let started = std::time::Instant::now();
            let borrowed = pool.get().await.expect("part 0's idle connection");
            assert!(started.elapsed() >= BORROW_AFTER, "it waited for its own part first");
            assert_eq!(pool.parts[0].status().available, 0, "the idle connection of part 0 is out");
            assert_eq!((*own, *borrowed), (0, 0), "one connection of each part");
            let waited = pool.get().await;
            assert!(
                matches!(waited, Err(PoolError::Timeout(TimeoutType::Wait))),
                "with every connection in use, the wait times out"
            );
            drop(borrowed);
            assert_eq!(pool.parts[0].status().available, 1, "a borrowed connection goes back to its part");
        });
    }

    #[test]
    fn a_free_slot_of_another_part_is_not_borrowed() {
        let pool = pool(2, 2);
        on_new_runtime(async { local_index(&pool) });
        on_new_runtime(async {
            let _own = pool.get().await.unwrap();
            let waited = pool.get().await;
            assert!(
                matches!(waited, Err(PoolError::Timeout(TimeoutType::Wait))),
                "part 0 has no connection to lend"
            );
            assert_eq!(pool.parts[0].status().size, 0, "and none was opened there for this runtime");
        });
    }
}
