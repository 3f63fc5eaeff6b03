//! Conversation turns kept in this process: for a single process (SQLite, the in-memory
//! store), where no other process shares the conversations.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;
use tokio::sync::Notify;
use triggers::{
    Admission, ConversationKey, ConversationMemory, ConversationQueues, ConversationTurns, Joined, Message,
    Ticket, TurnError,
};

/// The lines of conversations in memory, and the memory they guard.
pub struct LocalTurns {
    memory: Arc<dyn ConversationMemory>,
    next_number: AtomicU64,
    state: Mutex<State>,
}

struct State {
    queues: ConversationQueues<u64>,
    /// The bell of each ticket that joined a line behind another, rung when the turn
    /// reaches it, kept until the ticket leaves.
    bells: HashMap<u64, Arc<Notify>>,
}

impl std::fmt::Debug for LocalTurns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalTurns").field("active", &self.active()).finish_non_exhaustive()
    }
}

/// One line per team and conversation.
fn line(team: TeamId, conversation: &ConversationKey) -> String {
    format!("{team}/{conversation}")
}

impl LocalTurns {
    pub fn new(memory: Arc<dyn ConversationMemory>) -> Self {
        Self {
            memory,
            next_number: AtomicU64::new(1),
            state: Mutex::new(State { queues: ConversationQueues::new(), bells: HashMap::new() }),
        }
    }

    /// Conversations with a run in progress or waiting (idle ones are forgotten).
    pub fn active(&self) -> usize {
        self.lock().queues.active()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl ConversationTurns for LocalTurns {
    async fn join(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        depth: u32,
    ) -> Result<Joined, StoreError> {
        let ticket = Ticket {
            team,
            conversation: conversation.clone(),
            number: self.next_number.fetch_add(1, Ordering::Relaxed),
        };
        let mut state = self.lock();
        Ok(match state.queues.admit(&line(team, conversation), ticket.number, depth as usize) {
            Admission::Run => Joined::Turn(ticket),
            Admission::Rejected(_) => Joined::Full,
            Admission::Wait { position } => {
                state.bells.insert(ticket.number, Arc::new(Notify::new()));
                Joined::Waiting { ticket, position }
            }
        })
    }

    async fn wait_turn(&self, ticket: &Ticket) -> Result<(), TurnError> {
        let line = line(ticket.team, &ticket.conversation);
        loop {
            let bell = {
                let state = self.lock();
                if state.queues.holds(&line, &ticket.number) {
                    return Ok(());
                }
                // A ticket that waits has a bell until it leaves.
                state.bells.get(&ticket.number).cloned().ok_or(TurnError::Lost)?
            };
            // A ring before this wait is kept as a permit, so none is missed.
            bell.notified().await;
        }
    }

    async fn remember(
        &self,
        ticket: &Ticket,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), TurnError> {
        // In one process only its holder's `leave` ends a turn, so the turn still held now
        // is held until the messages are written.
        if !self.lock().queues.holds(&line(ticket.team, &ticket.conversation), &ticket.number) {
            return Err(TurnError::Lost);
        }
        Ok(self.memory.append_messages(ticket.team, &ticket.conversation, messages, at).await?)
    }

    async fn leave(&self, ticket: &Ticket) -> Result<(), StoreError> {
        let mut state = self.lock();
        state.bells.remove(&ticket.number);
        let next = state.queues.leave(&line(ticket.team, &ticket.conversation), &ticket.number).copied();
        if let Some(bell) = next.and_then(|next| state.bells.get(&next)) {
            bell.notify_one();
        }
        Ok(())
    }
}
