//! The agent runtime's ports in memory: conversation memory and run history.

use std::cmp::Reverse;
use std::collections::HashSet;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::StoreError;
use triggers::{ConversationKey, ConversationMemory, Message, RunFilter, RunHistory, RunId, RunRecord};

use crate::MemoryStore;

#[async_trait]
impl ConversationMemory for MemoryStore {
    async fn recent_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        limit: u32,
    ) -> Result<Vec<Message>, StoreError> {
        let state = self.state();
        let messages: Vec<&Message> = state
            .messages
            .iter()
            .filter(|(t, key, _)| *t == team && key == conversation)
            .map(|(_, _, message)| message)
            .collect();
        let skip = messages.len().saturating_sub(limit as usize);
        Ok(messages.into_iter().skip(skip).cloned().collect())
    }

    async fn append_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        messages: &[Message],
        _at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut state = self.state();
        state.messages.extend(messages.iter().map(|message| (team, conversation.clone(), message.clone())));
        Ok(())
    }
}

#[async_trait]
impl RunHistory for MemoryStore {
    async fn record_runs(&self, runs: &[RunRecord]) -> Result<(), StoreError> {
        let mut state = self.state();
        // All or none, as the databases' primary key makes it: a repeated id refuses the batch.
        let mut ids = HashSet::new();
        let repeated = runs
            .iter()
            .map(|run| (run.team_id, run.id))
            .find(|key| state.runs.contains_key(key) || !ids.insert(*key));
        if let Some((_, id)) = repeated {
            return Err(StoreError::Unexpected(anyhow::anyhow!("run {id} is already recorded")));
        }
        state.runs.extend(runs.iter().map(|run| ((run.team_id, run.id), run.clone())));
        Ok(())
    }

    async fn list_runs(&self, team: TeamId, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError> {
        let state = self.state();
        let mut runs: Vec<RunRecord> = state
            .runs
            .values()
            .filter(|run| run.team_id == team)
            .filter(|run| filter.conversation.is_none() || run.conversation == filter.conversation)
            .cloned()
            .collect();
        runs.sort_by_key(|run| Reverse((run.started_at, run.id)));
        runs.truncate(filter.limit as usize);
        Ok(runs)
    }

    async fn find_run(&self, team: TeamId, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        Ok(self.state().runs.get(&(team, id)).cloned())
    }
}
