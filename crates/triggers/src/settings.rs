//! How the agent behaves, whatever its configuration is written in: its instructions, what
//! it remembers, and the limits of its runs.

use std::time::Duration;

/// What the runtime needs to run the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// The system prompt.
    pub instructions: String,
    pub memory: MemorySettings,
    pub limits: Limits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryScope {
    /// Runs sharing a conversation id share their messages.
    Thread,
    /// Every run is one-shot.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemorySettings {
    pub scope: MemoryScope,
    /// How many earlier messages of the conversation are given to the model.
    pub max_messages: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Requests that may wait per conversation while one runs.
    pub queue_depth: u32,
    /// Model calls per run.
    pub max_steps: u32,
    /// Runs in progress at once, across conversations.
    pub max_concurrent_runs: u32,
    /// How long one run may take, from its first model call to its reply.
    pub run_timeout: Duration,
}
