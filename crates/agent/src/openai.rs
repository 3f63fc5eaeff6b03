//! The `openai` provider: any server that speaks the Chat Completions API (`OpenAI`, Ollama,
//! vLLM, llama.cpp, LM Studio…). Each request has a timeout; a 429, a 5xx, a timeout or a
//! connection failure is retried with exponential backoff, honouring `Retry-After`.

use std::time::Duration;

use async_trait::async_trait;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use serde::Deserialize;
use serde_json::{Value, json};
use triggers::{ChatMessage, Model, ModelError, ModelReply, ModelRequest, ToolCall, ToolSpec, Usage};

/// The longest wait between attempts, whatever `Retry-After` asks for.
const MAX_BACKOFF: Duration = Duration::from_mins(1);

/// An OpenAI-compatible Chat Completions endpoint, and how to call it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiSettings {
    /// Up to and including the version segment, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key; `None` for servers without keys.
    pub api_key_env: Option<String>,
    /// Per HTTP request to the model.
    pub request_timeout: Duration,
    /// Further attempts after a 429, a 5xx or a connection failure.
    pub max_retries: u32,
}

#[derive(Debug, Clone)]
pub struct OpenAiModel {
    client: reqwest::Client,
    url: String,
    model: String,
    api_key: Option<String>,
    max_retries: u32,
    first_backoff: Duration,
}

impl OpenAiModel {
    pub fn new(settings: &OpenAiSettings, api_key: Option<String>) -> Result<Self, ModelError> {
        let client = reqwest::Client::builder()
            .timeout(settings.request_timeout)
            .connect_timeout(settings.request_timeout.min(Duration::from_secs(10)))
            .user_agent(concat!("billable/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ModelError(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            client,
            url: format!("{}/chat/completions", settings.base_url),
            model: settings.model.clone(),
            api_key,
            max_retries: settings.max_retries,
            first_backoff: Duration::from_millis(500),
        })
    }

    /// Sets the wait before the first retry (doubling after each); for tests.
    #[must_use]
    pub fn with_first_backoff(mut self, backoff: Duration) -> Self {
        self.first_backoff = backoff;
        self
    }

    fn body(&self, request: ModelRequest<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages.iter().map(message_json).collect::<Vec<_>>(),
        });
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(tool_json).collect();
        }
        body
    }

    /// One attempt: `Ok` with the reply, or the error and whether another attempt may help
    /// (with the wait the server asked for).
    async fn attempt(&self, body: &Value) -> Result<ModelReply, Attempt> {
        let mut request = self.client.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                let retry = error.is_timeout() || error.is_connect() || error.is_request();
                let what = if error.is_timeout() { "timed out" } else { "could not be reached" };
                return Err(Attempt {
                    error: format!("the model endpoint {what}: {error}"),
                    retry,
                    wait: None,
                });
            }
        };
        let status = response.status();
        if !status.is_success() {
            let wait = retry_after(response.headers());
            let text = response.text().await.unwrap_or_default();
            let retry = status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
            let error = format!("the model endpoint answered {status}: {}", clip(&text, 300));
            return Err(Attempt { error, retry, wait });
        }
        let completion: Completion = response.json().await.map_err(|e| Attempt {
            error: format!("the model endpoint's answer is not a chat completion: {e}"),
            retry: false,
            wait: None,
        })?;
        completion.into_reply().map_err(|error| Attempt { error, retry: false, wait: None })
    }
}

struct Attempt {
    error: String,
    retry: bool,
    wait: Option<Duration>,
}

#[async_trait]
impl Model for OpenAiModel {
    async fn complete(&self, request: ModelRequest<'_>) -> Result<ModelReply, ModelError> {
        let body = self.body(request);
        let mut backoff = self.first_backoff;
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.attempt(&body).await {
                Ok(reply) => return Ok(reply),
                Err(attempt) if attempt.retry && attempts <= self.max_retries => {
                    let wait = attempt.wait.unwrap_or(backoff).min(MAX_BACKOFF);
                    tracing::warn!(error = %attempt.error, attempt = attempts, wait_ms = wait.as_millis(), "model call failed; retrying");
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Err(attempt) if attempts > 1 => {
                    return Err(ModelError(format!("{} (after {attempts} attempts)", attempt.error)));
                }
                Err(attempt) => return Err(ModelError(attempt.error)),
            }
        }
    }
}

/// `Retry-After` in whole seconds (the HTTP-date form is not used by model servers).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers.get(RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds.min(MAX_BACKOFF.as_secs_f64())))
}

fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

fn message_json(message: &ChatMessage) -> Value {
    match message {
        ChatMessage::System(content) => json!({"role": "system", "content": content}),
        ChatMessage::User(content) => json!({"role": "user", "content": content}),
        ChatMessage::Assistant { content, tool_calls } if tool_calls.is_empty() => {
            json!({"role": "assistant", "content": content})
        }
        ChatMessage::Assistant { content, tool_calls } => json!({
            "role": "assistant",
            "content": content,
            "tool_calls": tool_calls.iter().map(|call| json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            })).collect::<Vec<_>>(),
        }),
        ChatMessage::Tool { call_id, content } => {
            json!({"role": "tool", "tool_call_id": call_id, "content": content})
        }
    }
}

fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
    })
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<CompletionUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: AnswerMessage,
}

#[derive(Deserialize)]
struct AnswerMessage {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<AnswerToolCall>,
}

#[derive(Deserialize)]
struct AnswerToolCall {
    id: String,
    function: AnswerFunction,
}

#[derive(Deserialize)]
struct AnswerFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

#[derive(Deserialize)]
struct CompletionUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

impl Completion {
    fn into_reply(self) -> Result<ModelReply, String> {
        let usage = self.usage.map_or_else(Usage::default, |usage| Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        });
        let choice = self.choices.into_iter().next().ok_or("the model endpoint's answer has no choices")?;
        let tool_calls = choice
            .message
            .tool_calls
            .into_iter()
            .map(|call| ToolCall {
                id: call.id,
                name: call.function.name,
                arguments: call.function.arguments,
            })
            .collect();
        Ok(ModelReply { content: choice.message.content, tool_calls, usage })
    }
}
