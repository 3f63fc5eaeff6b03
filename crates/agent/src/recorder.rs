//! Group commit of run records. A run answers only once its record is stored, and a commit
//! costs far more than a row, so concurrent runs hand their records to one writer task,
//! which stores everything waiting in one write and then releases each run of the group.
//! While groups commit the next ones gather, so under load groups grow and commits per run
//! fall; a lone run is written at once, with no timer to wait for.

use std::sync::{Arc, OnceLock};

use tokio::runtime::Handle;
use tokio::sync::{Semaphore, mpsc, oneshot};
use triggers::{RunHistory, RunRecord};

/// Most records in one write: enough to amortise a commit, small enough that one group's
/// failure, retried row by row, stays cheap.
const MAX_GROUP: usize = 256;

/// Groups being written at once. With one, the cores idle during each group's round trip
/// to the database; with more, groups shrink and commits multiply. Two measured best on
/// PostgreSQL and on SQLite alike (scripts/bench-agent.sh).
const WRITES_IN_FLIGHT: usize = 2;

/// Records waiting for the writer before new runs wait to hand theirs over.
const BACKLOG: usize = 4 * MAX_GROUP;

struct Pending {
    record: RunRecord,
    stored: oneshot::Sender<()>,
}

/// The runtime's handle on its writer task, started by the first record and stopped when
/// the runtime is dropped.
pub(crate) struct RunRecorder {
    store: Arc<dyn RunHistory>,
    /// Where the writer runs: the runtime the recorder was made on, which lives as long as
    /// the process; not an HTTP worker's, which stops with its worker. `None` when made
    /// outside any runtime: then the first record's.
    home: Option<Handle>,
    writer: OnceLock<mpsc::Sender<Pending>>,
}

impl RunRecorder {
    pub(crate) fn new(store: Arc<dyn RunHistory>) -> Self {
        Self { store, home: Handle::try_current().ok(), writer: OnceLock::new() }
    }

    /// Returns once `record` is stored, or once storing it failed, which is logged: a run
    /// that was carried out still answers.
    pub(crate) async fn record(&self, record: RunRecord) {
        let writer = self.writer.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(BACKLOG);
            let writing = write_groups(self.store.clone(), receiver);
            match &self.home {
                Some(home) => drop(home.spawn(writing)),
                None => drop(tokio::spawn(writing)),
            }
            sender
        });
        let (stored, done) = oneshot::channel();
        // Kept for a write of its own should the writer be gone.
        let fallback = record.clone();
        if writer.send(Pending { record, stored }).await.is_err() || done.await.is_err() {
            // The writer's runtime is shutting down: store the record here. If its group was
            // stored after all, the repeat is refused and logged, which is harmless.
            if let Err(error) = self.store.record_run(&fallback).await {
                tracing::error!(run = %fallback.id, error = ?error, "cannot record the run");
            }
        }
    }
}

async fn write_groups(store: Arc<dyn RunHistory>, mut receiver: mpsc::Receiver<Pending>) {
    let slots = Arc::new(Semaphore::new(WRITES_IN_FLIGHT));
    // Never closed, so acquiring only waits.
    while let Ok(slot) = slots.clone().acquire_owned().await {
        let mut group = Vec::with_capacity(MAX_GROUP);
        if receiver.recv_many(&mut group, MAX_GROUP).await == 0 {
            break;
        }
        let store = store.clone();
        tokio::spawn(async move {
            write_group(&*store, group).await;
            drop(slot);
        });
    }
}

async fn write_group(store: &dyn RunHistory, group: Vec<Pending>) {
    let (records, waiting): (Vec<RunRecord>, Vec<_>) =
        group.into_iter().map(|pending| (pending.record, pending.stored)).unzip();
    if let Err(error) = store.record_runs(&records).await {
        tracing::warn!(error = ?error, runs = records.len(), "cannot record a group of runs; one by one");
        // One bad record must not cost the others theirs.
        for record in &records {
            if let Err(error) = store.record_run(record).await {
                tracing::error!(run = %record.id, error = ?error, "cannot record the run");
            }
        }
    }
    for stored in waiting {
        // The run's task may be gone (aborted at shutdown); its record is stored anyway.
        let _ = stored.send(());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use accounts::TeamId;
    use async_trait::async_trait;
    use chrono::Utc;
    use kernel::{Id, StoreError};
    use store_memory::MemoryStore;
    use tokio::sync::Semaphore;
    use tokio::task::JoinHandle;
    use triggers::{RunFilter, RunId, RunStatus, TriggerKind, Usage};

    use super::*;

    /// The memory store, with each write's size noted and writes held until released.
    struct Gated {
        store: MemoryStore,
        started: AtomicUsize,
        writes: Mutex<Vec<usize>>,
        open: Semaphore,
    }

    #[async_trait]
    impl RunHistory for Gated {
        async fn record_runs(&self, runs: &[RunRecord]) -> Result<(), StoreError> {
            self.started.fetch_add(1, Ordering::SeqCst);
            self.open.acquire().await.expect("never closed").forget();
            self.writes.lock().unwrap().push(runs.len());
            self.store.record_runs(runs).await
        }
        async fn list_runs(&self, team: TeamId, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError> {
            self.store.list_runs(team, filter).await
        }
        async fn find_run(&self, team: TeamId, id: RunId) -> Result<Option<RunRecord>, StoreError> {
            self.store.find_run(team, id).await
        }
    }

    struct Setup {
        history: Arc<Gated>,
        recorder: Arc<RunRecorder>,
        team: TeamId,
    }

    impl Setup {
        fn new() -> Self {
            let history = Arc::new(Gated {
                store: MemoryStore::new(),
                started: AtomicUsize::new(0),
                writes: Mutex::default(),
                open: Semaphore::new(0),
            });
            Self { recorder: Arc::new(RunRecorder::new(history.clone())), history, team: TeamId::generate() }
        }

        fn run(&self) -> RunRecord {
            let now = Utc::now();
            RunRecord {
                id: RunId::generate(),
                team_id: self.team,
                trigger: TriggerKind::Webhook,
                conversation: None,
                input_excerpt: "hello".into(),
                status: RunStatus::Ok,
                steps: 1,
                usage: Usage::default(),
                started_at: now,
                finished_at: now,
                error: None,
                tool_calls: Vec::new(),
                model_input: Some("hello".into()),
                reply: Some("hi".into()),
            }
        }

        /// Records `runs` from tasks of their own, and returns once all of them wait in the
        /// writer's queue behind as many runs as there are writes in flight, each written
        /// alone and held by the store.
        async fn queue_behind_held_writes(&self, runs: Vec<RunRecord>) -> Vec<JoinHandle<()>> {
            let mut tasks = Vec::new();
            for started in 1..=WRITES_IN_FLIGHT {
                tasks.push(self.spawn(self.run()));
                while self.history.started.load(Ordering::SeqCst) < started {
                    tokio::task::yield_now().await;
                }
            }
            let count = runs.len();
            tasks.extend(runs.into_iter().map(|run| self.spawn(run)));
            let writer = self.recorder.writer.get().expect("started by the first run");
            while writer.capacity() > BACKLOG - count {
                tokio::task::yield_now().await;
            }
            tasks
        }

        fn spawn(&self, run: RunRecord) -> JoinHandle<()> {
            let recorder = self.recorder.clone();
            tokio::spawn(async move { recorder.record(run).await })
        }

        async fn stored(&self) -> usize {
            let all = RunFilter { conversation: None, limit: 1_000 };
            self.history.list_runs(self.team, &all).await.unwrap().len()
        }
    }

    #[tokio::test]
    async fn runs_waiting_while_a_group_commits_share_the_next_commit() {
        let setup = Setup::new();
        let tasks = setup.queue_behind_held_writes((0..40).map(|_| setup.run()).collect()).await;
        assert_eq!(setup.stored().await, 0);
        assert!(tasks.iter().all(|task| !task.is_finished()), "a run waits for its record");
        setup.history.open.add_permits(WRITES_IN_FLIGHT + 1);
        for task in tasks {
            task.await.unwrap();
        }
        let mut writes = vec![1; WRITES_IN_FLIGHT];
        writes.push(40);
        assert_eq!(*setup.history.writes.lock().unwrap(), writes, "the 40 waiting runs share one commit");
        assert_eq!(setup.stored().await, WRITES_IN_FLIGHT + 40);
    }

    #[tokio::test]
    async fn a_group_that_fails_is_stored_row_by_row() {
        let setup = Setup::new();
        let already = setup.run();
        setup.history.store.record_run(&already).await.unwrap();
        // A group of the run already stored, which the store refuses, and two new ones.
        let tasks = setup.queue_behind_held_writes(vec![already, setup.run(), setup.run()]).await;
        setup.history.open.add_permits(WRITES_IN_FLIGHT + 4);
        for task in tasks {
            task.await.unwrap();
        }
        let mut writes = vec![1; WRITES_IN_FLIGHT];
        writes.extend([3, 1, 1, 1]);
        assert_eq!(*setup.history.writes.lock().unwrap(), writes, "the group, then each run alone");
        assert_eq!(setup.stored().await, WRITES_IN_FLIGHT + 3);
    }
}
