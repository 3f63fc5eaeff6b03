//! Conversation turns shared by every replica on one PostgreSQL database.
//!
//! A line is the rows of `agent_turns` for one conversation, numbered in arrival order; the
//! smallest live number holds the turn. Joining, looking and leaving are PL/pgSQL functions
//! (migration `000009`), committed without waiting for the disk. Concurrent joins of this
//! process go to the database together, in one call, and so do leaves: a replica's runs
//! share round trips as its run records share commits. A replica renews the leases of all
//! its tickets in one statement every third of the lease; a ticket whose replica died is
//! dropped by the next one to look at its line once its lease ended.
//!
//! A line whose head changed is told with `NOTIFY billable_turns`, the payload the new
//! head's number; every replica listens on a connection of its own and rings that ticket,
//! which looks again. Waiting tickets also look every third of the lease unrung, which is
//! how they learn that a dead replica's lease ended, and how they carry on should the
//! listening connection drop.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool::managed::Object;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use kernel::StoreError;
use tokio::sync::{Notify, Semaphore, mpsc, oneshot};
use triggers::{ConversationKey, ConversationTurns, Joined, Message, Ticket, TurnError};
use uuid::Uuid;

use crate::agent::{insert_messages, next_position};
use crate::pool::{Pools, Recycler, checkout};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore};
use sql::{billable_join_turns, billable_leave_turns, billable_renew_turns, billable_turn_state};

/// The channel told of lines whose head changed, with the head's number as the payload.
const CHANNEL: &str = "billable_turns";
/// How long the listener waits before it connects again after losing its connection.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);
/// Most joins (or leaves) in one call.
const MAX_GROUP: usize = 256;
/// Calls of each kind under way at once: while one is out, the next group gathers.
const CALLS_IN_FLIGHT: usize = 2;

/// The functions of migration `000009`.
mod sql {
    use diesel::sql_types::{Array, BigInt, Integer, Text, Uuid as PgUuid};

    diesel::define_sql_function! {
        fn billable_join_turns(teams: Array<PgUuid>, conversations: Array<Text>, depths: Array<Integer>, replica: PgUuid, lease_ms: BigInt) -> Array<Nullable<BigInt>>;
    }
    diesel::define_sql_function! {
        fn billable_turn_state(team: PgUuid, conversation: Text, ticket: BigInt) -> Text;
    }
    diesel::define_sql_function! {
        fn billable_leave_turns(teams: Array<PgUuid>, conversations: Array<Text>, tickets: Array<BigInt>) -> Nullable<Text>;
    }
    diesel::define_sql_function! {
        fn billable_renew_turns(replica: PgUuid, lease_ms: BigInt) -> BigInt;
    }
}

diesel::table! {
    agent_turns (team_id, conversation_key, number) {
        team_id -> Uuid,
        conversation_key -> Text,
        number -> BigInt,
        replica -> Uuid,
        lease_until -> Timestamptz,
    }
}

/// A request to join a line, waiting for its group's call.
struct Joining {
    team: TeamId,
    conversation: ConversationKey,
    depth: u32,
    answer: oneshot::Sender<Result<Joined, StoreError>>,
}

/// A ticket leaving its line, waiting for its group's call.
struct Leaving {
    ticket: Ticket,
    done: oneshot::Sender<Result<(), StoreError>>,
}

/// The lines of conversations in PostgreSQL. Made with [`SharedTurns::start`].
pub struct SharedTurns {
    store: Arc<SqlStore>,
    /// Whose tickets these are: one id per process.
    replica: Uuid,
    lease: Duration,
    /// Tickets of this process not yet left: renewals are skipped while there are none.
    held: AtomicUsize,
    /// The bell of each ticket of this process that waits, rung when it may hold the turn.
    bells: Mutex<HashMap<u64, Arc<Notify>>>,
    joins: mpsc::Sender<Joining>,
    leaves: mpsc::Sender<Leaving>,
}

impl std::fmt::Debug for SharedTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTurns")
            .field("replica", &self.replica)
            .field("lease", &self.lease)
            .field("held", &self.held)
            .finish_non_exhaustive()
    }
}

fn millis(span: Duration) -> i64 {
    i64::try_from(span.as_millis()).unwrap_or(i64::MAX)
}

fn stored_number(ticket: &Ticket) -> i64 {
    i64::try_from(ticket.number).unwrap_or(i64::MAX)
}

/// The same failure, for each request of a group that failed as one.
fn again(error: &StoreError) -> StoreError {
    match error {
        StoreError::Unavailable(e) => StoreError::Unavailable(anyhow::anyhow!("{e:#}")),
        StoreError::Full(e) => StoreError::Full(anyhow::anyhow!("{e:#}")),
        StoreError::Unexpected(e) => StoreError::Unexpected(anyhow::anyhow!("{e:#}")),
    }
}

impl SharedTurns {
    /// The lines of `store`'s conversations, leased for `lease`; starts the tasks that
    /// make the calls of grouped joins and leaves, renew this process's leases and listen
    /// for lines that moved. Fails on SQLite.
    pub fn start(store: Arc<SqlStore>, lease: Duration) -> anyhow::Result<Arc<Self>> {
        let Some(target) = store.postgres.clone() else {
            anyhow::bail!("conversation turns are shared through PostgreSQL only");
        };
        let replica = Uuid::now_v7();
        let joining = store.clone();
        let joins = in_groups(move |group| join_group(joining.clone(), replica, lease, group));
        let leaving = store.clone();
        let leaves = in_groups(move |group| leave_group(leaving.clone(), group));
        let turns = Arc::new(Self {
            store,
            replica,
            lease,
            held: AtomicUsize::new(0),
            bells: Mutex::new(HashMap::new()),
            joins,
            leaves,
        });
        tokio::spawn(renew(Arc::downgrade(&turns)));
        tokio::spawn(listen(Arc::downgrade(&turns), target));
        Ok(turns)
    }

    fn bells(&self) -> MutexGuard<'_, HashMap<u64, Arc<Notify>>> {
        self.bells.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Rings ticket `number`'s bell, or every bell when `None` (the listener may have
    /// missed some). A ring while nobody waits is kept for the next wait.
    fn ring(&self, number: Option<u64>) {
        let bells = self.bells();
        match number {
            Some(number) => bells.get(&number).iter().for_each(|bell| bell.notify_one()),
            None => bells.values().for_each(|bell| bell.notify_one()),
        }
    }

    /// A pooled connection. `start` refuses SQLite, so the pool is PostgreSQL's.
    async fn connection(&self) -> Result<Object<Recycler<AsyncPgConnection>>, StoreError> {
        self.store.pg_connection().await
    }

    async fn state(&self, ticket: &Ticket) -> Result<String, StoreError> {
        let mut conn = self.connection().await?;
        let (team, conversation) = (DbUuid::of(ticket.team), ticket.conversation.as_str());
        diesel::select(billable_turn_state(team, conversation, stored_number(ticket)))
            .get_result(&mut *conn)
            .await
            .or_store()
    }
}

impl SqlStore {
    /// A pooled PostgreSQL connection; only for code that runs on PostgreSQL alone.
    async fn pg_connection(&self) -> Result<Object<Recycler<AsyncPgConnection>>, StoreError> {
        match &self.pools {
            Pools::Postgres(pool) => checkout(pool.get()).await,
            Pools::Sqlite(_) => unreachable!("SharedTurns::start refuses SQLite"),
        }
    }
}

/// Hands what is sent to the returned sender to `call` in groups: whatever waits when a
/// call can start, up to [`MAX_GROUP`], with [`CALLS_IN_FLIGHT`] calls under way at most.
/// Ends when the sender is dropped.
fn in_groups<T, F, Fut>(call: F) -> mpsc::Sender<T>
where
    T: Send + 'static,
    F: Fn(Vec<T>) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (sender, mut receiver) = mpsc::channel(4 * MAX_GROUP);
    tokio::spawn(async move {
        let slots = Arc::new(Semaphore::new(CALLS_IN_FLIGHT));
        // Never closed, so acquiring only waits.
        while let Ok(slot) = slots.clone().acquire_owned().await {
            let mut group = Vec::with_capacity(MAX_GROUP);
            if receiver.recv_many(&mut group, MAX_GROUP).await == 0 {
                return;
            }
            let calling = call(group);
            tokio::spawn(async move {
                calling.await;
                drop(slot);
            });
        }
    });
    sender
}

async fn join_group(store: Arc<SqlStore>, replica: Uuid, lease: Duration, group: Vec<Joining>) {
    let teams: Vec<DbUuid> = group.iter().map(|j| DbUuid::of(j.team)).collect();
    let conversations: Vec<&str> = group.iter().map(|j| j.conversation.as_str()).collect();
    let depths: Vec<i32> = group.iter().map(|j| i32::try_from(j.depth).unwrap_or(i32::MAX)).collect();
    let answer = async {
        let mut conn = store.pg_connection().await?;
        let call = billable_join_turns(teams, conversations, depths, DbUuid(replica), millis(lease));
        diesel::select(call).get_result::<Vec<Option<i64>>>(&mut *conn).await.or_store()
    };
    let answer = match answer.await {
        Ok(answer) if answer.len() == 2 * group.len() => Ok(answer),
        Ok(answer) => Err(crate::corrupt("conversation turns", format!("{} numbers", answer.len()))),
        Err(error) => Err(error),
    };
    for (i, joining) in group.into_iter().enumerate() {
        let joined = match &answer {
            Err(error) => Err(again(error)),
            Ok(answer) => joined(&joining, answer[2 * i], answer[2 * i + 1]),
        };
        // A caller that stopped waiting left no one to tell; its ticket's lease ends.
        let _ = joining.answer.send(joined);
    }
}

/// What one request's two numbers of `billable_join_turns` say.
fn joined(joining: &Joining, number: Option<i64>, ahead: Option<i64>) -> Result<Joined, StoreError> {
    let bad = || crate::corrupt("conversation turn", format!("{number:?}, {ahead:?}"));
    let ahead = ahead.and_then(|ahead| usize::try_from(ahead).ok()).ok_or_else(bad)?;
    let Some(number) = number else { return Ok(Joined::Full) };
    let number = u64::try_from(number).map_err(|_| bad())?;
    let ticket = Ticket { team: joining.team, conversation: joining.conversation.clone(), number };
    Ok(if ahead == 0 { Joined::Turn(ticket) } else { Joined::Waiting { ticket, position: ahead } })
}

async fn leave_group(store: Arc<SqlStore>, group: Vec<Leaving>) {
    let teams: Vec<DbUuid> = group.iter().map(|l| DbUuid::of(l.ticket.team)).collect();
    let conversations: Vec<&str> = group.iter().map(|l| l.ticket.conversation.as_str()).collect();
    let numbers: Vec<i64> = group.iter().map(|l| stored_number(&l.ticket)).collect();
    let result = async {
        let mut conn = store.pg_connection().await?;
        diesel::select(billable_leave_turns(teams, conversations, numbers))
            .execute(&mut *conn)
            .await
            .or_store()
    };
    let result = result.await.map(drop);
    for leaving in group {
        let _ = leaving.done.send(result.as_ref().map_err(again).copied());
    }
}

/// A group's task that ended without answering: the process is stopping.
fn stopping() -> StoreError {
    StoreError::Unavailable(anyhow::anyhow!("the process is stopping"))
}

#[async_trait]
impl ConversationTurns for SharedTurns {
    #[tracing::instrument(skip(self))]
    async fn join(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        depth: u32,
    ) -> Result<Joined, StoreError> {
        let (answer, joined) = oneshot::channel();
        let joining = Joining { team, conversation: conversation.clone(), depth, answer };
        self.joins.send(joining).await.map_err(|_| stopping())?;
        let joined = joined.await.map_err(|_| stopping())??;
        match &joined {
            Joined::Full => {}
            Joined::Turn(_) => {
                self.held.fetch_add(1, Ordering::Relaxed);
            }
            Joined::Waiting { ticket, .. } => {
                self.held.fetch_add(1, Ordering::Relaxed);
                self.bells().insert(ticket.number, Arc::new(Notify::new()));
            }
        }
        Ok(joined)
    }

    #[tracing::instrument(skip(self))]
    async fn wait_turn(&self, ticket: &Ticket) -> Result<(), TurnError> {
        let bell = self.bells().entry(ticket.number).or_insert_with(|| Arc::new(Notify::new())).clone();
        loop {
            match self.state(ticket).await?.as_str() {
                "turn" => return Ok(()),
                "lost" => return Err(TurnError::Lost),
                _ => {}
            }
            // A ring since the last look was kept: it ends this wait at once.
            let _ = tokio::time::timeout(self.lease / 3, bell.notified()).await;
        }
    }

    #[tracing::instrument(skip(self, messages), fields(count = messages.len()))]
    async fn remember(
        &self,
        ticket: &Ticket,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), TurnError> {
        let mut conn = self.connection().await?;
        let (team, conversation) = (ticket.team, &ticket.conversation);
        let number = stored_number(ticket);
        let held = conn
            .transaction(async |conn| {
                // The line's first ticket, locked until the commit: the ticket holds the
                // turn if it is that one, and the line cannot drop it, its lease ended or
                // not, while its messages are written.
                let first = agent_turns::table
                    .filter(agent_turns::team_id.eq(DbUuid::of(team)))
                    .filter(agent_turns::conversation_key.eq(conversation.as_str()))
                    .filter(agent_turns::number.le(number))
                    .order(agent_turns::number)
                    .select(agent_turns::number)
                    .for_update()
                    .first::<i64>(conn)
                    .await
                    .optional()?;
                let held = first == Some(number);
                if held {
                    use crate::schema::pg::agent_messages;
                    let first = next_position!(conn, team, conversation)?;
                    insert_messages!(conn, team, conversation, first, messages, at)?;
                }
                Ok::<_, diesel::result::Error>(held)
            })
            .await
            .or_store()?;
        if held { Ok(()) } else { Err(TurnError::Lost) }
    }

    #[tracing::instrument(skip(self))]
    async fn leave(&self, ticket: &Ticket) -> Result<(), StoreError> {
        self.bells().remove(&ticket.number);
        self.held.fetch_sub(1, Ordering::Relaxed);
        let (done, left) = oneshot::channel();
        self.leaves.send(Leaving { ticket: ticket.clone(), done }).await.map_err(|_| stopping())?;
        left.await.map_err(|_| stopping())?
    }
}

/// Renews the leases of this process's tickets every third of the lease, while it lives.
async fn renew(turns: Weak<SharedTurns>) {
    loop {
        let Some(every) = turns.upgrade().map(|turns| turns.lease / 3) else { return };
        tokio::time::sleep(every).await;
        let Some(turns) = turns.upgrade() else { return };
        // Spelled out: diesel's `RunQueryDsl::load` is in scope too.
        if AtomicUsize::load(&turns.held, Ordering::Relaxed) == 0 {
            continue;
        }
        let renewed = async {
            let mut conn = turns.connection().await?;
            diesel::select(billable_renew_turns(DbUuid(turns.replica), millis(turns.lease)))
                .get_result::<i64>(&mut *conn)
                .await
                .or_store()
        };
        if let Err(error) = renewed.await {
            tracing::warn!(error = ?error, "cannot renew the leases of conversation turns");
        }
    }
}

/// Listens for lines whose head changed and rings the head's bell; connects again when the
/// connection drops, ringing every bell since it may have missed some.
async fn listen(turns: Weak<SharedTurns>, target: crate::PgTarget) {
    loop {
        match target.listen(CHANNEL).await {
            Ok((client, mut notifications)) => {
                while let Some(notification) = notifications.recv().await {
                    let Some(turns) = turns.upgrade() else { return };
                    if let Ok(head) = notification.payload().parse() {
                        turns.ring(Some(head));
                    }
                }
                drop(client);
                tracing::warn!("lost the connection listening for conversation turns; connecting again");
            }
            Err(error) => tracing::warn!(%error, "cannot listen for conversation turns"),
        }
        let Some(alive) = turns.upgrade() else { return };
        alive.ring(None);
        drop(alive);
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}
