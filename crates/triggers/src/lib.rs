//! The agent runtime's domain: the agent definition and its triggers' settings, the
//! queueing policy of conversations, runs and their records, the credentials triggers
//! check, and the ports of the runtime (agent, conversation memory and turns, run history).
//!
//! Pure: no HTTP framework, database or async runtime types. The runtime itself (model
//! calls, the run loop) lives in the `agent` crate; the triggers' HTTP side in `http-api`.

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

pub mod definition;
pub mod github;
pub mod ports;
pub mod queue;
pub mod run;
pub mod secrets;
pub mod tools;
pub mod turns;

pub use definition::{
    AgentDefinition, DefinitionError, GithubTrigger, Limits, MemoryScope, MemorySettings, ModelSettings,
    OpenAiSettings, TriggerSettings, WebhookTrigger,
};
pub use github::delivery::{
    Acceptance, AttemptResult, ClaimedDelivery, DeliveryEntry, DeliveryEntryId, DeliveryFilter, DeliveryId,
    DeliveryProgress, DeliveryQueue, DeliveryState, NewDelivery, PendingDelivery, RetryPolicy, Verdict,
};
pub use github::filter::{EventFilter, RepoPatterns};
pub use github::intake::{Intake, IntakeError, Malformed, Receipt};
pub use github::render::EventFacts;
pub use ports::{Agent, AgentStore, ConversationMemory, RunHistory};
pub use queue::{Admission, ConversationQueues};
pub use run::{
    ConversationKey, Message, Role, RunFilter, RunId, RunOutcome, RunRecord, RunRequest, RunRequestError,
    RunStatus, ToolCallRecord, TriggerKind, Usage,
};
pub use secrets::Secrets;
pub use tools::{
    BUILTIN_TOOLS, BillableTools, BuiltinTool, MCP_SEPARATOR, McpConnection, McpServerSettings, ToolChoice,
    builtin_tool, mcp_server_of,
};
pub use turns::{ConversationTurns, Joined, Ticket, TurnError};
