//! The `echo` provider: no model at all. It answers with the last user message, that is
//! the input as the runtime rendered it, and reports no tokens — for trying triggers out,
//! for tests, and for measuring the runtime's own overhead.

use async_trait::async_trait;

use triggers::{ChatMessage, Model, ModelError, ModelReply, ModelRequest};

#[derive(Debug, Clone, Copy, Default)]
pub struct EchoModel;

#[async_trait]
impl Model for EchoModel {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let input = request.messages.iter().rev().find_map(|message| match message {
            ChatMessage::User(text) => Some(text.clone()),
            _ => None,
        });
        Ok(ModelReply { content: Some(input.unwrap_or_default()), ..ModelReply::default() })
    }
}
