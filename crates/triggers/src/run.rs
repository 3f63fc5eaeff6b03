//! A run of the agent: the request that starts it, how it ended, and the record kept of it.

use std::fmt;

use accounts::TeamId;
use chrono::{DateTime, Utc};
use kernel::define_id;
use serde::{Deserialize, Serialize};

use crate::tools::ToolChoice;

define_id!(
    /// One run of the agent.
    RunId
);

/// Longest `input`, in characters.
pub const MAX_INPUT_CHARS: usize = 100_000;
/// Longest `conversation_id`, in characters.
pub const MAX_CONVERSATION_ID_CHARS: usize = 200;
/// How much of the input a run record keeps.
pub const INPUT_EXCERPT_CHARS: usize = 200;

/// Which trigger started a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerKind {
    Webhook,
    Github,
    /// An event of the team's books (the `events` trigger).
    Events,
}

text_enum!(TriggerKind { Webhook => "webhook", Github => "github", Events => "events" });

impl fmt::Display for TriggerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The key of a conversation: runs that share it share memory and run one at a time.
/// Non-empty, at most 200 characters, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversationKey(String);

impl ConversationKey {
    pub fn parse(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            return Err("must not be empty".into());
        }
        if text.chars().count() > MAX_CONVERSATION_ID_CHARS {
            return Err(format!("must be at most {MAX_CONVERSATION_ID_CHARS} characters"));
        }
        if text.chars().any(char::is_control) {
            return Err("must not contain control characters".into());
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConversationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a trigger asks the agent to do: the input as the runtime renders it for the
/// model, the conversation it continues, if any, and which of the agent's tools it may
/// call (the trigger's `tools`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRequest {
    pub input: String,
    pub conversation: Option<ConversationKey>,
    pub tools: ToolChoice,
    /// What the run's record keeps of the input: its first [`INPUT_EXCERPT_CHARS`]
    /// characters when `None`. A trigger whose input is a framed rendering names it here.
    pub summary: Option<String>,
}

/// Why a run request was refused, in the domain's words; each trigger words it for its
/// callers (the webhook names its body's fields).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunRequestError {
    #[error("the input is empty")]
    EmptyInput,
    #[error("the input contains NUL characters")]
    NulInInput,
    #[error("the input is longer than {MAX_INPUT_CHARS} characters")]
    InputTooLong,
    /// The conversation id is not one; says why.
    #[error("the conversation id {0}")]
    Conversation(String),
}

impl RunRequest {
    /// Checks the fields of a run request as a caller sent them.
    pub fn parse(input: String, conversation_id: Option<&str>) -> Result<Self, RunRequestError> {
        if input.trim().is_empty() {
            return Err(RunRequestError::EmptyInput);
        }
        if input.contains('\0') {
            return Err(RunRequestError::NulInInput);
        }
        if input.chars().count() > MAX_INPUT_CHARS {
            return Err(RunRequestError::InputTooLong);
        }
        let conversation =
            conversation_id.map(ConversationKey::parse).transpose().map_err(RunRequestError::Conversation)?;
        Ok(Self { input, conversation, tools: ToolChoice::All, summary: None })
    }

    /// The same request, limited to the tools `tools` allows.
    #[must_use]
    pub fn with_tools(self, tools: ToolChoice) -> Self {
        Self { tools, ..self }
    }
}

/// How a run ended, as the trigger reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    Replied {
        run: RunId,
        reply: String,
        steps: u32,
    },
    /// The conversation's queue was full; nothing ran.
    Rejected {
        retry_after_secs: u64,
    },
    /// The model failed or the agent could not finish within its limits.
    Failed {
        run: RunId,
        error: String,
    },
    /// `limits.run_timeout` passed.
    TimedOut {
        run: RunId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    Rejected,
    Failed,
    Timeout,
}

text_enum!(RunStatus { Ok => "ok", Rejected => "rejected", Failed => "failed", Timeout => "timeout" });

/// Token counts as the model reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// The run history's record of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRecord {
    pub id: RunId,
    pub team_id: TeamId,
    pub trigger: TriggerKind,
    pub conversation: Option<ConversationKey>,
    /// The first [`INPUT_EXCERPT_CHARS`] characters of the input.
    pub input_excerpt: String,
    pub status: RunStatus,
    /// Model calls made.
    pub steps: u32,
    pub usage: Usage,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub error: Option<String>,
    /// The tools the model called, in order.
    pub tool_calls: Vec<ToolCallRecord>,
    /// The text the model read: the input as rendered for it (a GitHub event in its
    /// untrusted-content frame), [`RUN_TEXT_CHARS`] characters at most; `None` for runs
    /// recorded before it was kept.
    pub model_input: Option<String>,
    /// The final reply, [`RUN_TEXT_CHARS`] characters at most; `None` when there was none.
    pub reply: Option<String>,
}

/// How much of the text a run's model read, and of its reply, the run history keeps.
pub const RUN_TEXT_CHARS: usize = 4_000;

/// One tool call of a run: what the model asked for and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub name: String,
    /// The arguments as the model wrote them (JSON text), cut to
    /// [`TOOL_ARGUMENTS_CHARS`] characters.
    pub arguments: String,
    /// The start of what the tool answered (or the error), [`TOOL_RESULT_CHARS`] characters.
    pub result: String,
    /// Whether the tool did what was asked; `false` when it refused or failed.
    pub ok: bool,
    pub duration_ms: u64,
}

/// How much of a tool call's arguments the run history keeps.
pub const TOOL_ARGUMENTS_CHARS: usize = 2_000;
/// How much of a tool's answer the run history keeps.
pub const TOOL_RESULT_CHARS: usize = 500;

impl ToolCallRecord {
    /// The record of a call of `name` with `arguments` that answered `result`.
    pub fn new(name: &str, arguments: &str, result: &str, ok: bool, duration_ms: u64) -> Self {
        Self {
            name: name.to_owned(),
            arguments: clip(arguments, TOOL_ARGUMENTS_CHARS),
            result: clip(result, TOOL_RESULT_CHARS),
            ok,
            duration_ms,
        }
    }
}

/// The start of `input`, cut on a character boundary.
pub fn excerpt(input: &str) -> String {
    clip(input, INPUT_EXCERPT_CHARS)
}

/// The start of a run's text (what its model read, its reply), as the history keeps it.
pub fn run_text(text: &str) -> String {
    clip(text, RUN_TEXT_CHARS)
}

/// The first `chars` characters of `text`, marked with `…` when cut, [`storable`].
pub(crate) fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", storable(&text[..end])),
        None => storable(text),
    }
}

/// `text` as every database can keep it: PostgreSQL's text refuses U+0000, so each one
/// becomes U+FFFD. For text that cannot be refused (a model's reply, a tool's answer, an
/// error), which a run must still record and a conversation still remember.
pub fn storable(text: &str) -> String {
    text.replace('\0', "\u{FFFD}")
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFilter {
    pub conversation: Option<ConversationKey>,
    pub limit: u32,
}

/// Who wrote a remembered message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

text_enum!(Role { User => "user", Assistant => "assistant" });

/// A message of a conversation's memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Self {
        Self { role: Role::User, content: storable(&content.into()) }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self { role: Role::Assistant, content: storable(&content.into()) }
    }
}

#[cfg(test)]
mod tests {
    use super::{ConversationKey, RunRequest, RunRequestError, ToolCallRecord, excerpt};
    use crate::Message;

    #[test]
    fn run_requests_name_the_refused_field() {
        assert_eq!(RunRequest::parse("  ".into(), None).unwrap_err(), RunRequestError::EmptyInput);
        let long = "x".repeat(super::MAX_INPUT_CHARS + 1);
        assert_eq!(RunRequest::parse(long, None).unwrap_err(), RunRequestError::InputTooLong);
        let error = RunRequest::parse("hi".into(), Some("")).unwrap_err();
        assert_eq!(error, RunRequestError::Conversation("must not be empty".into()));
        assert!(RunRequest::parse("hi".into(), Some("a\nb")).is_err());
        let request = RunRequest::parse("hi".into(), Some("ticket-42")).unwrap();
        assert_eq!(request.conversation, Some(ConversationKey::parse("ticket-42").unwrap()));
    }

    #[test]
    fn nul_is_refused_in_input_and_kept_as_a_replacement_character_elsewhere() {
        let error = RunRequest::parse("a\0b".into(), None).unwrap_err();
        assert_eq!(error, RunRequestError::NulInInput);
        assert_eq!(Message::assistant("a\0b").content, "a\u{FFFD}b");
        let record = ToolCallRecord::new("t", "{\"x\": \"\0\"}", "\0", true, 1);
        assert_eq!(
            (record.arguments.as_str(), record.result.as_str()),
            ("{\"x\": \"\u{FFFD}\"}", "\u{FFFD}")
        );
        assert_eq!(excerpt("\0"), "\u{FFFD}");
    }

    #[test]
    fn excerpts_cut_on_character_boundaries() {
        assert_eq!(excerpt("short"), "short");
        let long = "é".repeat(300);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), super::INPUT_EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
