//! The agent runtime: instructions + memory + input → model → tool calls → model … until
//! the model replies or `limits.max_steps` model calls were made. Implements the
//! [`triggers::Agent`] port the triggers call, with one run at a time per conversation,
//! a global bound on concurrent runs, a run timeout, and a record of every run; and the
//! worker that runs the repository trigger's durable queue of deliveries.
//!
//! The adapters of the [`triggers::Model`] port (an OpenAI-compatible endpoint, the echo
//! model) and of the [`triggers::Tool`] port for MCP servers live here with their settings.

pub mod deliveries;
pub mod echo;
pub mod mcp;
pub mod openai;
mod recorder;
pub mod runtime;
pub mod turns;

pub use deliveries::{DeliveryWorker, WorkerSettings};
pub use echo::EchoModel;
pub use openai::{OpenAiModel, OpenAiSettings};
pub use runtime::AgentRuntime;
pub use turns::LocalTurns;

use std::sync::Arc;

use triggers::{Model, ModelError};

/// Which model provider runs the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSettings {
    /// Any OpenAI-compatible Chat Completions endpoint.
    OpenAi(OpenAiSettings),
    /// No model: replies with the input as the runtime rendered it.
    Echo,
}

/// The model the settings name; `api_key` is the value of `api_key_env`, if any.
pub fn model_for(settings: &ModelSettings, api_key: Option<String>) -> Result<Arc<dyn Model>, ModelError> {
    Ok(match settings {
        ModelSettings::Echo => Arc::new(EchoModel),
        ModelSettings::OpenAi(settings) => Arc::new(OpenAiModel::new(settings, api_key)?),
    })
}
