//! Reads of a team's listing revision, shared by the requests that wait for one.
//!
//! Every listing request reads its team's revision before it may serve a kept listing. The
//! read is tiny, but it is a round trip: under load a database process wakes for each one,
//! and those wakes cost more than the listing they guard. A request must see every change
//! committed before it arrived, so it may not take a read that began before it; it may take
//! any read that begins after. So at most one read per team is under way: a request that
//! arrives while one is takes the next, which starts as soon as the current one ends and
//! serves everyone who arrived meanwhile. Under load a handful of reads serve hundreds of
//! requests; a lone request reads at once, as it would alone.
//!
//! Reads are shared within a thread (an HTTP worker), not across: a read of its own per
//! worker costs less than waking another worker's requests when one ends.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use accounts::TeamId;
use kernel::StoreError;
use tokio::sync::watch;
use tracking::TimeEntryRepository;

type Read = Pin<Box<dyn Future<Output = Result<u64, StoreError>> + Send>>;

/// The reads of one team: which is under way, and the result of the last one.
struct Slot {
    /// The number of the read under way (the first is 1).
    started: u64,
    /// The highest read number a request waits for; above `started`, another read follows.
    wanted: u64,
    published: watch::Sender<Published>,
}

/// The outcome of the last read to finish.
#[derive(Clone, Copy)]
struct Published {
    read: u64,
    /// `None` when the read failed: each waiter then reads for itself, to report its error.
    revision: Option<u64>,
}

/// Shares revision reads between concurrent requests of a team. Cheap to clone.
#[derive(Clone)]
pub struct RevisionReads {
    inner: Arc<Inner>,
}

struct Inner {
    read: Box<dyn Fn(TeamId) -> Read + Send + Sync>,
    /// Per thread, only teams with a read under way: a slot goes when its last read ends.
    slots: Mutex<HashMap<(ThreadId, TeamId), Slot>>,
}

impl std::fmt::Debug for RevisionReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RevisionReads").finish_non_exhaustive()
    }
}

impl RevisionReads {
    /// Shares the reads of `store`'s listing revision.
    pub fn of(store: Arc<dyn TimeEntryRepository>) -> Self {
        Self::new(move |team| {
            let store = store.clone();
            Box::pin(async move { store.listing_revision(team).await })
        })
    }

    fn new(read: impl Fn(TeamId) -> Read + Send + Sync + 'static) -> Self {
        Self { inner: Arc::new(Inner { read: Box::new(read), slots: Mutex::new(HashMap::new()) }) }
    }

    /// The team's revision, from a read that began after this call.
    pub async fn read(&self, team: TeamId) -> Result<u64, StoreError> {
        let key = (std::thread::current().id(), team);
        let (mut published, wanted) = {
            let mut slots = self.inner.slots.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(slot) = slots.get_mut(&key) {
                // The read under way began before this request: wait for the next.
                slot.wanted = slot.started + 1;
                (slot.published.subscribe(), slot.wanted)
            } else {
                let (sender, receiver) = watch::channel(Published { read: 0, revision: None });
                slots.insert(key, Slot { started: 1, wanted: 1, published: sender });
                // A task of its own, so a request that goes away does not strand its waiters;
                // on an HTTP worker's runtime, it stays on this thread.
                tokio::spawn(self.clone().read_while_wanted(key));
                (receiver, 1)
            }
        };
        // A later read than the one waited for serves as well: it began later still.
        let revision =
            published.wait_for(|last| last.read >= wanted).await.ok().and_then(|last| last.revision);
        match revision {
            Some(revision) => Ok(revision),
            // The read failed, or its task was stopped with the runtime.
            None => (self.inner.read)(team).await,
        }
    }

    /// Reads the team's revision again and again while requests wait for a newer read.
    async fn read_while_wanted(self, key: (ThreadId, TeamId)) {
        loop {
            let revision = (self.inner.read)(key.1).await.ok();
            let mut slots = self.inner.slots.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(slot) = slots.get_mut(&key) else { return };
            slot.published.send_replace(Published { read: slot.started, revision });
            if slot.wanted > slot.started {
                slot.started = slot.wanted;
            } else {
                // Dropping the sender leaves the last result readable to those still waking.
                slots.remove(&key);
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    use kernel::Id;
    use tokio::sync::Semaphore;

    use super::*;

    /// A store whose revision is the number of reads begun so far; each read waits for a
    /// permit, so a test decides when reads end.
    struct Gated {
        begun: AtomicU64,
        permits: Semaphore,
        fail: AtomicBool,
    }

    fn gated() -> (Arc<Gated>, RevisionReads) {
        let store = Arc::new(Gated {
            begun: AtomicU64::new(0),
            permits: Semaphore::new(0),
            fail: AtomicBool::new(false),
        });
        let reads = RevisionReads::new({
            let store = store.clone();
            move |_team| {
                let store = store.clone();
                Box::pin(async move {
                    let number = store.begun.fetch_add(1, Ordering::SeqCst) + 1;
                    store.permits.acquire().await.expect("never closed").forget();
                    if store.fail.load(Ordering::SeqCst) {
                        Err(StoreError::Unavailable(anyhow::anyhow!("down")))
                    } else {
                        Ok(number)
                    }
                })
            }
        });
        (store, reads)
    }

    /// A request reading the team's revision, as a task of its own.
    fn request(reads: &RevisionReads, team: TeamId) -> tokio::task::JoinHandle<Result<u64, StoreError>> {
        let reads = reads.clone();
        tokio::spawn(async move { reads.read(team).await })
    }

    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn requests_arriving_during_a_read_share_the_next_one() {
        let (store, reads) = gated();
        let team = TeamId::generate();
        let first = request(&reads, team);
        settle().await;
        assert_eq!(store.begun.load(Ordering::SeqCst), 1);
        let later: Vec<_> = (0..10).map(|_| request(&reads, team)).collect();
        settle().await;
        assert_eq!(store.begun.load(Ordering::SeqCst), 1, "the next read waits for the current one");
        store.permits.add_permits(1);
        assert_eq!(first.await.unwrap().unwrap(), 1);
        settle().await;
        assert_eq!(store.begun.load(Ordering::SeqCst), 2, "one read for the ten");
        store.permits.add_permits(1);
        for request in later {
            // Not the read under way when they arrived: the one after.
            assert_eq!(request.await.unwrap().unwrap(), 2);
        }
        settle().await;
        assert_eq!(store.begun.load(Ordering::SeqCst), 2);
        assert!(reads.inner.slots.lock().unwrap().is_empty(), "no slot left once nobody reads");
    }

    #[tokio::test]
    async fn a_lone_request_reads_afresh_every_time() {
        let (store, reads) = gated();
        let team = TeamId::generate();
        store.permits.add_permits(3);
        for expected in 1..=3 {
            assert_eq!(reads.read(team).await.unwrap(), expected);
        }
    }

    #[tokio::test]
    async fn teams_do_not_share_reads() {
        let (store, reads) = gated();
        let (one, other) = (TeamId::generate(), TeamId::generate());
        let (first, second) = (request(&reads, one), request(&reads, other));
        settle().await;
        assert_eq!(store.begun.load(Ordering::SeqCst), 2);
        store.permits.add_permits(2);
        let mut revisions = [first.await.unwrap().unwrap(), second.await.unwrap().unwrap()];
        revisions.sort_unstable();
        assert_eq!(revisions, [1, 2]);
    }

    #[tokio::test]
    async fn a_failed_read_is_reported_to_each_waiter_by_a_read_of_its_own() {
        let (store, reads) = gated();
        let team = TeamId::generate();
        store.fail.store(true, Ordering::SeqCst);
        let waiting: Vec<_> = (0..3).map(|_| request(&reads, team)).collect();
        settle().await;
        store.permits.add_permits(10);
        for request in waiting {
            assert!(matches!(request.await.unwrap(), Err(StoreError::Unavailable(_))));
        }
    }
}
