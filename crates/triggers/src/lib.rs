//! The agent runtime's domain: how the agent behaves (instructions, memory, limits), the
//! queueing policy of conversations, runs and their records, the credentials triggers
//! check, the repository events' rules, and the ports of the runtime: agent, model, tools
//! and their registry, conversation memory and turns, run history, delivery queue.
//!
//! Pure: no HTTP framework, database or async runtime types, and no configuration format:
//! the agent definition file is read by `app`. The runtime itself (model calls, the run
//! loop) lives in the `agent` crate; the triggers' HTTP side in `http-api`.

/// [`kernel::Words`], `as_str` and an Option-returning `parse` for an enum stored and
/// shown as fixed words.
macro_rules! text_enum {
    ($name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        kernel::words!($name { $($variant => $text),+ });

        impl $name {
            pub fn parse(text: &str) -> Option<Self> {
                <Self as kernel::Words>::from_word(text)
            }
        }
    };
}

pub mod books;
pub mod github;
pub mod model;
pub mod ports;
pub mod queue;
pub mod run;
pub mod secrets;
pub mod settings;
pub mod tools;
pub mod turns;

pub use github::delivery::{
    Acceptance, AttemptResult, ClaimedDelivery, DeliveryEntry, DeliveryEntryId, DeliveryFilter, DeliveryId,
    DeliveryProgress, DeliveryQueue, DeliveryState, NewDelivery, PendingDelivery, RetryPolicy, Verdict,
};
pub use github::filter::{EventFilter, RepoPatterns};
pub use github::intake::{GithubRules, Intake, IntakeError, Malformed, Receipt};
pub use github::render::EventFacts;
pub use model::{ChatMessage, Model, ModelError, ModelReply, ModelRequest};
pub use ports::{Agent, AgentStore, ConversationMemory, RunHistory};
pub use queue::{Admission, ConversationQueues};
pub use run::{
    ConversationKey, Message, Role, RunFilter, RunId, RunOutcome, RunRecord, RunRequest, RunRequestError,
    RunStatus, ToolCallRecord, TriggerKind, Usage,
};
pub use secrets::Secrets;
pub use settings::{AgentSettings, Limits, MemoryScope, MemorySettings};
pub use tools::{Tool, ToolAnswer, ToolCall, ToolChoice, ToolRegistry, ToolSpec};
pub use turns::{ConversationTurns, Joined, Ticket, TurnError};
