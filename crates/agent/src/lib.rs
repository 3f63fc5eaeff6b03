//! The agent runtime: instructions + memory + input → model → tool calls → model … until
//! the model replies or `limits.max_steps` model calls were made. Implements the
//! [`triggers::Agent`] port the triggers call, with one run at a time per conversation,
//! a global bound on concurrent runs, a run timeout, and a record of every run; and the
//! worker that runs the repository trigger's durable queue of deliveries.

pub mod deliveries;
pub mod echo;
pub mod mcp;
pub mod model;
pub mod openai;
mod recorder;
pub mod runtime;
pub mod tools;
pub mod turns;

pub use deliveries::{DeliveryWorker, WorkerSettings};
pub use echo::EchoModel;
pub use model::{ChatMessage, Model, ModelError, ModelReply, ModelRequest, ToolCall};
pub use openai::OpenAiModel;
pub use runtime::AgentRuntime;
pub use tools::{Tool, ToolRegistry, ToolSpec};
pub use turns::LocalTurns;

use std::sync::Arc;

use triggers::ModelSettings;

/// The model the settings name; `api_key` is the value of `api_key_env`, if any.
pub fn model_for(settings: &ModelSettings, api_key: Option<String>) -> Result<Arc<dyn Model>, ModelError> {
    Ok(match settings {
        ModelSettings::Echo => Arc::new(EchoModel),
        ModelSettings::OpenAi(settings) => Arc::new(OpenAiModel::new(settings, api_key)?),
    })
}
