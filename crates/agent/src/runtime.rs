//! The run loop and everything around it: the conversation's turn, the global bound on
//! concurrent runs, the run timeout, memory, and the run record.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Clock, Id};
use tokio::sync::{Semaphore, oneshot};
use triggers::run::excerpt;
use triggers::{
    Admission, Agent, AgentDefinition, AgentStore, ConversationKey, ConversationQueues, Limits, MemoryScope,
    MemorySettings, Message, RunId, RunOutcome, RunRecord, RunRequest, RunStatus, TriggerKind, Usage,
};

use crate::model::{ChatMessage, Model, ModelRequest};
use crate::recorder::RunRecorder;
use crate::tools::ToolRegistry;

/// Seconds a refused caller is told to wait: a conversation's queue drains one run at a
/// time, so a short wait with the caller's own backoff is the honest hint.
const REJECTED_RETRY_AFTER_SECS: u64 = 1;

type Queues = Mutex<ConversationQueues<oneshot::Sender<()>>>;

/// The agent, ready to run. Cheap to clone.
#[derive(Clone)]
pub struct AgentRuntime {
    inner: Arc<Inner>,
}

struct Inner {
    team: TeamId,
    instructions: String,
    memory: MemorySettings,
    limits: Limits,
    model: Arc<dyn Model>,
    tools: ToolRegistry,
    store: Arc<dyn AgentStore>,
    recorder: RunRecorder,
    clock: Arc<dyn Clock>,
    queues: Arc<Queues>,
    slots: Semaphore,
}

impl std::fmt::Debug for AgentRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntime")
            .field("team", &self.inner.team)
            .field("limits", &self.inner.limits)
            .field("tools", &self.inner.tools)
            .finish_non_exhaustive()
    }
}

impl AgentRuntime {
    pub fn new(
        definition: &AgentDefinition,
        team: TeamId,
        model: Arc<dyn Model>,
        tools: ToolRegistry,
        store: Arc<dyn AgentStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let limits = definition.limits;
        Self {
            inner: Arc::new(Inner {
                team,
                instructions: definition.instructions.clone(),
                memory: definition.memory,
                limits,
                model,
                tools,
                recorder: RunRecorder::new(store.clone()),
                store,
                clock,
                queues: Arc::new(Mutex::new(ConversationQueues::new(limits.queue_depth as usize))),
                slots: Semaphore::new(limits.max_concurrent_runs as usize),
            }),
        }
    }

    pub fn team(&self) -> TeamId {
        self.inner.team
    }

    /// Conversations with a run in progress or waiting (idle ones are forgotten).
    pub fn active_conversations(&self) -> usize {
        lock(&self.inner.queues).active()
    }
}

#[async_trait]
impl Agent for AgentRuntime {
    async fn run(&self, trigger: TriggerKind, request: RunRequest) -> RunOutcome {
        // The run goes on, and is recorded, even if the caller stops waiting for it.
        let inner = self.inner.clone();
        let run = tokio::spawn(async move { inner.run(trigger, request).await });
        run.await.unwrap_or_else(|error| {
            tracing::error!(%error, "agent run panicked");
            RunOutcome::Failed { run: RunId::generate(), error: "the run failed unexpectedly".into() }
        })
    }
}

fn lock(queues: &Queues) -> MutexGuard<'_, ConversationQueues<oneshot::Sender<()>>> {
    queues.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Holding a conversation's turn; dropping it hands the turn to the next waiting request.
struct Turn {
    queues: Arc<Queues>,
    key: ConversationKey,
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut queues = lock(&self.queues);
        // A waiter that is gone cannot take the turn: offer it to the next one.
        while let Some(next) = queues.finish(self.key.as_str()) {
            if next.send(()).is_ok() {
                break;
            }
        }
    }
}

struct QueueFull;

/// What a run did before it ended, kept even when the timeout cuts it short.
#[derive(Default)]
struct Progress {
    steps: u32,
    usage: Usage,
}

impl Inner {
    async fn run(&self, trigger: TriggerKind, request: RunRequest) -> RunOutcome {
        let turn = match &request.conversation {
            Some(key) => self.take_turn(key).await.map(Some),
            None => Ok(None),
        };
        let Ok(_turn) = turn else {
            let error = format!(
                "the conversation already has limits.queue_depth ({}) requests waiting",
                self.limits.queue_depth
            );
            let now = self.clock.now();
            self.record(trigger, &request, RunStatus::Rejected, &Progress::default(), now, Some(error)).await;
            return RunOutcome::Rejected { retry_after_secs: REJECTED_RETRY_AFTER_SECS };
        };
        // Never closed, so acquiring only waits.
        let _slot = self.slots.acquire().await.ok();
        let started = self.clock.now();
        let mut progress = Progress::default();
        let result =
            tokio::time::timeout(self.limits.run_timeout, self.execute(&request, &mut progress)).await;
        let (status, error, outcome) = match result {
            Ok(Ok(reply)) => (RunStatus::Ok, None, Ok(reply)),
            Ok(Err(error)) => (RunStatus::Failed, Some(error.clone()), Err(Some(error))),
            Err(_elapsed) => {
                let error =
                    format!("the run took longer than limits.run_timeout ({:?})", self.limits.run_timeout);
                (RunStatus::Timeout, Some(error), Err(None))
            }
        };
        let run = self.record(trigger, &request, status, &progress, started, error).await;
        match outcome {
            Ok(reply) => RunOutcome::Replied { run, reply, steps: progress.steps },
            Err(Some(error)) => RunOutcome::Failed { run, error },
            Err(None) => RunOutcome::TimedOut { run },
        }
    }

    /// Waits for the conversation's turn in arrival order; `Err` when the queue is full.
    async fn take_turn(&self, key: &ConversationKey) -> Result<Turn, QueueFull> {
        let (wake, woken) = oneshot::channel();
        let admission = lock(&self.queues).admit(key.as_str(), wake);
        match admission {
            Admission::Rejected(_) => return Err(QueueFull),
            Admission::Run => {}
            // The sender is only dropped unsent when the turn passed over this request,
            // which cannot happen while it waits here.
            Admission::Wait { .. } => drop(woken.await),
        }
        Ok(Turn { queues: self.queues.clone(), key: key.clone() })
    }

    async fn execute(&self, request: &RunRequest, progress: &mut Progress) -> Result<String, String> {
        let thread = match (&request.conversation, self.memory.scope) {
            (Some(key), MemoryScope::Thread) => Some(key),
            _ => None,
        };
        let mut messages = Vec::new();
        if !self.instructions.trim().is_empty() {
            messages.push(ChatMessage::System(self.instructions.clone()));
        }
        if let Some(key) = thread {
            let earlier = self
                .store
                .recent_messages(self.team, key, self.memory.max_messages)
                .await
                .map_err(|e| format!("cannot read the conversation's memory: {e}"))?;
            messages.extend(earlier.into_iter().map(ChatMessage::from));
        }
        messages.push(ChatMessage::User(request.input.clone()));
        loop {
            if progress.steps >= self.limits.max_steps {
                return Err(format!(
                    "the agent gave no final reply within limits.max_steps ({}) model calls",
                    self.limits.max_steps
                ));
            }
            // Counted before the call: a call the timeout cuts short was made all the same.
            progress.steps += 1;
            let reply =
                self.model.complete(ModelRequest { messages: &messages, tools: self.tools.specs() }).await;
            let reply = reply.map_err(|e| format!("model call failed: {e}"))?;
            progress.usage += reply.usage;
            if reply.tool_calls.is_empty() {
                let text = reply.content.unwrap_or_default();
                if let Some(key) = thread {
                    let turn = [Message::user(request.input.clone()), Message::assistant(text.clone())];
                    self.store
                        .append_messages(self.team, key, &turn, self.clock.now())
                        .await
                        .map_err(|e| format!("cannot save the conversation's memory: {e}"))?;
                }
                return Ok(text);
            }
            let calls = reply.tool_calls;
            messages.push(ChatMessage::Assistant { content: reply.content, tool_calls: calls.clone() });
            for call in calls {
                let content = self.tools.call(&call).await;
                messages.push(ChatMessage::Tool { call_id: call.id, content });
            }
        }
    }

    async fn record(
        &self,
        trigger: TriggerKind,
        request: &RunRequest,
        status: RunStatus,
        progress: &Progress,
        started_at: DateTime<Utc>,
        error: Option<String>,
    ) -> RunId {
        let record = RunRecord {
            id: RunId::generate(),
            team_id: self.team,
            trigger,
            conversation: request.conversation.clone(),
            input_excerpt: excerpt(&request.input),
            status,
            steps: progress.steps,
            usage: progress.usage,
            started_at,
            finished_at: self.clock.now(),
            error,
        };
        if let Some(error) = &record.error {
            tracing::warn!(run = %record.id, status = status.as_str(), %error, "agent run did not reply");
        } else {
            tracing::info!(run = %record.id, steps = record.steps, "agent run replied");
        }
        let id = record.id;
        self.recorder.record(record).await;
        id
    }
}
