//! Conversation turns: a conversation's runs go one at a time, in arrival order, and
//! conversation memory is written only by the run holding the turn. One process keeps the
//! line in memory; replicas keep it where they all see it, in the database.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::run::{ConversationKey, Message};

/// A request's place in its conversation's line, from admission until it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub team: TeamId,
    pub conversation: ConversationKey,
    /// Unique among the tickets of the adapter that issued it; later arrivals get larger
    /// numbers.
    pub number: u64,
}

/// What became of a request that joined its conversation's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Joined {
    /// Nothing was running: the ticket holds the turn.
    Turn(Ticket),
    /// Others are ahead: `position` of them, counting the one running.
    Waiting { ticket: Ticket, position: usize },
    /// The line already holds `depth` waiting requests: refused.
    Full,
}

/// Why a ticket cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The ticket left the line without its holder's say: its lease ended (its process
    /// stopped renewing it), so the line moved on without it.
    #[error("the run lost its place in the conversation's line (its lease ended)")]
    Lost,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The lines of every conversation. Every ticket that joined must leave, once its run is
/// over or abandoned; a ticket of a stopped process leaves by the end of its lease.
#[async_trait]
pub trait ConversationTurns: Send + Sync {
    /// Joins the line of `conversation`, unless `depth` requests wait in it already.
    async fn join(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        depth: u32,
    ) -> Result<Joined, StoreError>;

    /// Returns once `ticket` holds its conversation's turn.
    async fn wait_turn(&self, ticket: &Ticket) -> Result<(), TurnError>;

    /// Appends `messages` to the conversation's memory, all at once, if `ticket` still
    /// holds the turn: a run that lost its place writes nothing.
    async fn remember(
        &self,
        ticket: &Ticket,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), TurnError>;

    /// Leaves the line; when `ticket` held the turn, the next one takes it.
    async fn leave(&self, ticket: &Ticket) -> Result<(), StoreError>;
}
