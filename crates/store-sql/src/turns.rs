//! Conversation turns shared by every replica on one PostgreSQL database.
//!
//! A line is the rows of `agent_turns` for one conversation, numbered in arrival order; the
//! smallest live number holds the turn. Joining, looking and leaving are one function call
//! each (migration `000009`), committed without waiting for the disk. A replica renews the
//! leases of all its tickets in one statement every third of the lease; a ticket whose
//! replica died is dropped by the next one to look at its line once its lease ended.
//!
//! Leaving a line with others in it sends `NOTIFY billable_turns`; every replica listens on
//! a connection of its own and rings the tickets waiting in that line, which look again.
//! They also look every third of the lease unrung, which is how they learn that a dead
//! replica's lease ended, and how they carry on should the listening connection drop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool::managed::Object;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use kernel::{Id, StoreError};
use tokio::sync::Notify;
use tokio_postgres::AsyncMessage;
use triggers::{ConversationKey, ConversationTurns, Joined, Message, Ticket, TurnError};
use uuid::Uuid;

use crate::agent::{insert_messages, next_position};
use crate::pool::{Pools, Recycler, checkout};
use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore};
use sql::{billable_join_turn, billable_leave_turn, billable_renew_turns, billable_turn_state};

/// The channel leaving replicas notify, with `team/conversation` as the payload.
const CHANNEL: &str = "billable_turns";
/// How long the listener waits before it connects again after losing its connection.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// The functions of migration `000009`.
mod sql {
    use diesel::sql_types::{BigInt, Integer, Text, Uuid as PgUuid};

    diesel::define_sql_function! {
        fn billable_join_turn(team: PgUuid, conversation: Text, depth: Integer, replica: PgUuid, lease_ms: BigInt) -> Array<Nullable<BigInt>>;
    }
    diesel::define_sql_function! {
        fn billable_turn_state(team: PgUuid, conversation: Text, ticket: BigInt) -> Text;
    }
    diesel::define_sql_function! {
        fn billable_leave_turn(team: PgUuid, conversation: Text, ticket: BigInt) -> Bool;
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

/// The lines of conversations in PostgreSQL. Made with [`SharedTurns::start`].
pub struct SharedTurns {
    store: Arc<SqlStore>,
    /// Whose tickets these are: one id per process.
    replica: Uuid,
    lease: Duration,
    /// Tickets of this process not yet left: renewals are skipped while there are none.
    held: AtomicUsize,
    /// The bell of each line some ticket of this process waits in.
    bells: Mutex<HashMap<String, Weak<Notify>>>,
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

/// The bell's name of a line, as the notification's payload spells it.
fn line(team: TeamId, conversation: &ConversationKey) -> String {
    format!("{}/{conversation}", team.as_uuid())
}

fn millis(span: Duration) -> i64 {
    i64::try_from(span.as_millis()).unwrap_or(i64::MAX)
}

impl SharedTurns {
    /// The lines of `store`'s conversations, leased for `lease`; starts the tasks that
    /// renew this process's leases and listen for lines that moved. Fails on SQLite.
    pub fn start(store: Arc<SqlStore>, lease: Duration) -> anyhow::Result<Arc<Self>> {
        let Some(target) = store.postgres.clone() else {
            anyhow::bail!("conversation turns are shared through PostgreSQL only");
        };
        let turns = Arc::new(Self {
            store,
            replica: Uuid::now_v7(),
            lease,
            held: AtomicUsize::new(0),
            bells: Mutex::new(HashMap::new()),
        });
        tokio::spawn(renew(Arc::downgrade(&turns)));
        tokio::spawn(listen(Arc::downgrade(&turns), target));
        Ok(turns)
    }

    fn bells(&self) -> MutexGuard<'_, HashMap<String, Weak<Notify>>> {
        self.bells.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bell of `line`, shared by every ticket of this process waiting in it.
    fn bell(&self, line: &str) -> Arc<Notify> {
        let mut bells = self.bells();
        if let Some(bell) = bells.get(line).and_then(Weak::upgrade) {
            return bell;
        }
        let bell = Arc::new(Notify::new());
        bells.insert(line.to_owned(), Arc::downgrade(&bell));
        bell
    }

    /// Rings `line`'s bell, or every bell when `None` (the listener may have missed some).
    fn ring(&self, line: Option<&str>) {
        let mut bells = self.bells();
        bells.retain(|_, bell| bell.strong_count() > 0);
        let rung = bells.iter().filter(|(name, _)| line.is_none_or(|line| line == name.as_str()));
        rung.filter_map(|(_, bell)| bell.upgrade()).for_each(|bell| bell.notify_waiters());
    }

    /// A pooled connection. `start` refuses SQLite, so the pool is PostgreSQL's.
    async fn connection(&self) -> Result<Object<Recycler<AsyncPgConnection>>, StoreError> {
        match &self.store.pools {
            Pools::Postgres(pool) => checkout(pool.get()).await,
            Pools::Sqlite(_) => unreachable!("SharedTurns::start refuses SQLite"),
        }
    }

    async fn state(&self, ticket: &Ticket) -> Result<String, StoreError> {
        let mut conn = self.connection().await?;
        let number = i64::try_from(ticket.number).unwrap_or(i64::MAX);
        diesel::select(billable_turn_state(DbUuid::of(ticket.team), ticket.conversation.as_str(), number))
            .get_result(&mut *conn)
            .await
            .or_store()
    }
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
        let mut conn = self.connection().await?;
        let depth = i32::try_from(depth).unwrap_or(i32::MAX);
        let replica = DbUuid(self.replica);
        let answer: Vec<Option<i64>> = diesel::select(billable_join_turn(
            DbUuid::of(team),
            conversation.as_str(),
            depth,
            replica,
            millis(self.lease),
        ))
        .get_result(&mut *conn)
        .await
        .or_store()?;
        let bad = || crate::corrupt("conversation turn", format!("{answer:?}"));
        let (number, ahead) = match answer.as_slice() {
            [number, Some(ahead)] => (*number, usize::try_from(*ahead).map_err(|_| bad())?),
            _ => return Err(bad()),
        };
        let Some(number) = number else { return Ok(Joined::Full) };
        self.held.fetch_add(1, Ordering::Relaxed);
        let number = u64::try_from(number).map_err(|_| bad())?;
        let ticket = Ticket { team, conversation: conversation.clone(), number };
        Ok(if ahead == 0 { Joined::Turn(ticket) } else { Joined::Waiting { ticket, position: ahead } })
    }

    #[tracing::instrument(skip(self))]
    async fn wait_turn(&self, ticket: &Ticket) -> Result<(), TurnError> {
        let name = line(ticket.team, &ticket.conversation);
        let bell = self.bell(&name);
        let result = loop {
            // Listening before looking: a ring between the two is not missed.
            let rung = bell.notified();
            tokio::pin!(rung);
            rung.as_mut().enable();
            match self.state(ticket).await?.as_str() {
                "turn" => break Ok(()),
                "lost" => break Err(TurnError::Lost),
                _ => {}
            }
            let _ = tokio::time::timeout(self.lease / 3, rung).await;
        };
        drop(bell);
        let mut bells = self.bells();
        if bells.get(&name).is_some_and(|bell| bell.strong_count() == 0) {
            bells.remove(&name);
        }
        result
    }

    #[tracing::instrument(skip(self, messages), fields(count = messages.len()))]
    async fn remember(
        &self,
        ticket: &Ticket,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), TurnError> {
        use crate::schema::pg::agent_messages;
        let mut conn = self.connection().await?;
        let (team, conversation) = (ticket.team, &ticket.conversation);
        let number = i64::try_from(ticket.number).unwrap_or(i64::MAX);
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
        self.held.fetch_sub(1, Ordering::Relaxed);
        let mut conn = self.connection().await?;
        let number = i64::try_from(ticket.number).unwrap_or(i64::MAX);
        diesel::select(billable_leave_turn(DbUuid::of(ticket.team), ticket.conversation.as_str(), number))
            .execute(&mut *conn)
            .await
            .or_store()
            .map(drop)
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

/// Listens for lines that moved and rings their bells; connects again when the
/// connection drops, ringing every bell since it may have missed some.
async fn listen(turns: Weak<SharedTurns>, target: crate::PgTarget) {
    loop {
        match target.listen(CHANNEL).await {
            Ok((client, mut notifications)) => {
                while let Some(notification) = notifications.recv().await {
                    let Some(turns) = turns.upgrade() else { return };
                    turns.ring(Some(notification.payload()));
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

/// Forwards the notifications `connection` receives until it closes.
pub(crate) fn forward_notifications<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
) -> tokio::sync::mpsc::UnboundedReceiver<tokio_postgres::Notification>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notification))) => {
                    if sender.send(notification).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::warn!(%error, "the listening connection failed");
                    return;
                }
                None => return,
            }
        }
    });
    receiver
}
