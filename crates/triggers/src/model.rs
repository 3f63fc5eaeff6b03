//! The model port: one chat completion, with the tools the model may call.

use async_trait::async_trait;

use crate::run::Usage;
use crate::tools::{ToolCall, ToolSpec};

/// A message of the conversation given to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatMessage {
    System(String),
    User(String),
    Assistant {
        content: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's answer to the call with id `call_id`.
    Tool {
        call_id: String,
        content: String,
    },
}

impl From<crate::Message> for ChatMessage {
    fn from(message: crate::Message) -> Self {
        match message.role {
            crate::Role::User => Self::User(message.content),
            crate::Role::Assistant => {
                Self::Assistant { content: Some(message.content), tool_calls: Vec::new() }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    pub messages: &'a [ChatMessage],
    pub tools: &'a [ToolSpec],
}

/// The model's answer: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelReply {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
}

/// The model could not answer (after any retries).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ModelError(pub String);

#[async_trait]
pub trait Model: Send + Sync {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError>;
}
