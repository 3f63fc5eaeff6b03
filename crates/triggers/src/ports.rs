//! The ports of the agent runtime: the agent as triggers see it, and the two stores it
//! keeps (conversation memory, run history).

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::github::delivery::DeliveryQueue;
use crate::run::{
    ConversationKey, Message, RunFilter, RunId, RunOutcome, RunRecord, RunRequest, TriggerKind,
};

/// The agent, as a trigger calls it: queueing, limits, model calls and the run record are
/// behind this port.
#[async_trait]
pub trait Agent: Send + Sync {
    /// Runs `request` to its end. Dropping the future stops the run where it is: its
    /// conversation's turn passes on and no record is kept. A trigger whose run must go on
    /// when its caller leaves runs it in a task of its own.
    async fn run(&self, trigger: TriggerKind, request: RunRequest) -> RunOutcome;
}

/// The messages of conversations, kept across restarts.
#[async_trait]
pub trait ConversationMemory: Send + Sync {
    /// The last `limit` messages of the conversation, oldest first.
    async fn recent_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        limit: u32,
    ) -> Result<Vec<Message>, StoreError>;

    /// Appends `messages`, in order, after the conversation's earlier ones, all at once.
    async fn append_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
}

/// The record of every run.
#[async_trait]
pub trait RunHistory: Send + Sync {
    /// Records `runs` all at once: every one is stored, or on an error none is. The runtime
    /// records concurrent runs in groups, so that many runs share one commit.
    async fn record_runs(&self, runs: &[RunRecord]) -> Result<(), StoreError>;

    async fn record_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.record_runs(std::slice::from_ref(run)).await
    }

    /// The team's runs, newest first.
    async fn list_runs(&self, team: TeamId, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError>;

    async fn find_run(&self, team: TeamId, id: RunId) -> Result<Option<RunRecord>, StoreError>;
}

/// Everything the runtime stores, as one adapter provides it.
pub trait AgentStore: ConversationMemory + RunHistory + DeliveryQueue {}

impl<T: ConversationMemory + RunHistory + DeliveryQueue> AgentStore for T {}
