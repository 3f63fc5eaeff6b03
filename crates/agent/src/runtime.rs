//! The run loop and everything around it: the conversation's turn, the global bound on
//! concurrent runs, the run timeout, memory, and the run record.

use std::sync::Arc;

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Clock, Id};
use tokio::sync::Semaphore;
use triggers::run::excerpt;
use triggers::{
    Agent, AgentSettings, AgentStore, ChatMessage, ConversationKey, ConversationTurns, Joined, Limits,
    MemoryScope, MemorySettings, Message, Model, ModelRequest, RunId, RunOutcome, RunRecord, RunRequest,
    RunStatus, Ticket, ToolCallRecord, ToolRegistry, TriggerKind, Usage,
};

use crate::recorder::RunRecorder;

/// Seconds a refused caller is told to wait: a conversation's queue drains one run at a
/// time, so a short wait with the caller's own backoff is the honest hint.
const REJECTED_RETRY_AFTER_SECS: u64 = 1;

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
    turns: Arc<dyn ConversationTurns>,
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
    /// The agent `settings` describe, acting for `team`; `turns` keeps its conversations'
    /// lines (in this process, or shared with the other replicas).
    pub fn new(
        settings: AgentSettings,
        team: TeamId,
        model: Arc<dyn Model>,
        tools: ToolRegistry,
        store: Arc<dyn AgentStore>,
        turns: Arc<dyn ConversationTurns>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let AgentSettings { instructions, memory, limits } = settings;
        Self {
            inner: Arc::new(Inner {
                team,
                instructions,
                memory,
                limits,
                model,
                tools,
                recorder: RunRecorder::new(store.clone()),
                store,
                clock,
                turns,
                slots: Semaphore::new(limits.max_concurrent_runs as usize),
            }),
        }
    }

    pub fn team(&self) -> TeamId {
        self.inner.team
    }
}

#[async_trait]
impl Agent for AgentRuntime {
    async fn run(&self, trigger: TriggerKind, request: RunRequest) -> RunOutcome {
        self.inner.run(trigger, request).await
    }
}

/// A place in a conversation's line. Left explicitly when the run ends; a run dropped
/// midway (its caller stopped it) leaves it from a task of its own.
struct Turn {
    turns: Arc<dyn ConversationTurns>,
    ticket: Option<Ticket>,
}

impl Turn {
    fn ticket(&self) -> Option<&Ticket> {
        self.ticket.as_ref()
    }

    async fn leave(mut self) {
        if let Some(ticket) = self.ticket.take() {
            leave(self.turns.as_ref(), &ticket).await;
        }
    }
}

async fn leave(turns: &dyn ConversationTurns, ticket: &Ticket) {
    // Should this fail, the ticket's lease ends on its own and the line moves on then.
    if let Err(error) = turns.leave(ticket).await {
        tracing::warn!(conversation = %ticket.conversation, error = ?error, "cannot leave the conversation's line");
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let turns = self.turns.clone();
            runtime.spawn(async move { leave(turns.as_ref(), &ticket).await });
        }
    }
}

/// Why a run did not get its conversation's turn.
enum NoTurn {
    Full,
    Failed(String),
}

/// What a run did before it ended, kept even when the timeout cuts it short.
#[derive(Default)]
struct Progress {
    steps: u32,
    usage: Usage,
    tool_calls: Vec<ToolCallRecord>,
}

impl Inner {
    async fn run(&self, trigger: TriggerKind, request: RunRequest) -> RunOutcome {
        let arrived = self.clock.now();
        let turn = match &request.conversation {
            Some(key) => self.take_turn(key).await,
            None => Ok(Turn { turns: self.turns.clone(), ticket: None }),
        };
        let turn = match turn {
            Ok(turn) => turn,
            Err(NoTurn::Full) => {
                let error = format!(
                    "the conversation already has limits.queue_depth ({}) requests waiting",
                    self.limits.queue_depth
                );
                self.record(
                    trigger,
                    &request,
                    RunStatus::Rejected,
                    &Progress::default(),
                    arrived,
                    Err(&error),
                )
                .await;
                return RunOutcome::Rejected { retry_after_secs: REJECTED_RETRY_AFTER_SECS };
            }
            Err(NoTurn::Failed(error)) => {
                let progress = Progress::default();
                let run =
                    self.record(trigger, &request, RunStatus::Failed, &progress, arrived, Err(&error)).await;
                return RunOutcome::Failed { run, error };
            }
        };
        let outcome = self.run_turn(trigger, &request, turn.ticket()).await;
        turn.leave().await;
        outcome
    }

    /// Runs `request`, which holds its conversation's turn through `ticket` if it has one.
    async fn run_turn(
        &self,
        trigger: TriggerKind,
        request: &RunRequest,
        ticket: Option<&Ticket>,
    ) -> RunOutcome {
        // Never closed, so acquiring only waits.
        let _slot = self.slots.acquire().await.ok();
        let started = self.clock.now();
        let mut progress = Progress::default();
        let result =
            tokio::time::timeout(self.limits.run_timeout, self.execute(request, ticket, &mut progress)).await;
        let (status, ended) = match result {
            Ok(Ok(reply)) => (RunStatus::Ok, Ok(reply)),
            Ok(Err(error)) => (RunStatus::Failed, Err(error)),
            Err(_elapsed) => {
                let error =
                    format!("the run took longer than limits.run_timeout ({:?})", self.limits.run_timeout);
                (RunStatus::Timeout, Err(error))
            }
        };
        let run = self
            .record(trigger, request, status, &progress, started, ended.as_deref().map_err(String::as_str))
            .await;
        match (status, ended) {
            (_, Ok(reply)) => RunOutcome::Replied { run, reply, steps: progress.steps },
            (RunStatus::Timeout, Err(_)) => RunOutcome::TimedOut { run },
            (_, Err(error)) => RunOutcome::Failed { run, error },
        }
    }

    /// Waits for the conversation's turn, in arrival order.
    async fn take_turn(&self, key: &ConversationKey) -> Result<Turn, NoTurn> {
        let failed = |error: &dyn std::fmt::Display| NoTurn::Failed(format!("cannot queue the run: {error}"));
        let joined =
            self.turns.join(self.team, key, self.limits.queue_depth).await.map_err(|e| failed(&e))?;
        let (ticket, waits) = match joined {
            Joined::Full => return Err(NoTurn::Full),
            Joined::Turn(ticket) => (ticket, false),
            Joined::Waiting { ticket, .. } => (ticket, true),
        };
        let turn = Turn { turns: self.turns.clone(), ticket: Some(ticket) };
        if waits && let Some(ticket) = turn.ticket() {
            self.turns.wait_turn(ticket).await.map_err(|e| failed(&e))?;
        }
        Ok(turn)
    }

    async fn execute(
        &self,
        request: &RunRequest,
        ticket: Option<&Ticket>,
        progress: &mut Progress,
    ) -> Result<String, String> {
        let thread = match (ticket, self.memory.scope) {
            (Some(ticket), MemoryScope::Thread) => Some(ticket),
            _ => None,
        };
        let mut messages = Vec::new();
        if !self.instructions.trim().is_empty() {
            messages.push(ChatMessage::System(self.instructions.clone()));
        }
        if let Some(ticket) = thread {
            let earlier = self
                .store
                .recent_messages(self.team, &ticket.conversation, self.memory.max_messages)
                .await
                .map_err(|e| format!("cannot read the conversation's memory: {e}"))?;
            messages.extend(earlier.into_iter().map(ChatMessage::from));
        }
        messages.push(ChatMessage::User(request.input.clone()));
        let offered = self.tools.specs_for(&request.tools);
        loop {
            if progress.steps >= self.limits.max_steps {
                return Err(format!(
                    "the agent gave no final reply within limits.max_steps ({}) model calls",
                    self.limits.max_steps
                ));
            }
            // Counted before the call: a call the timeout cuts short was made all the same.
            progress.steps += 1;
            let reply = self.model.complete(ModelRequest { messages: &messages, tools: &offered }).await;
            let reply = reply.map_err(|e| format!("model call failed: {e}"))?;
            progress.usage += reply.usage;
            if reply.tool_calls.is_empty() {
                let text = reply.content.unwrap_or_default();
                if let Some(ticket) = thread {
                    let turn = [Message::user(request.input.clone()), Message::assistant(text.clone())];
                    self.turns
                        .remember(ticket, &turn, self.clock.now())
                        .await
                        .map_err(|e| format!("cannot save the conversation's memory: {e}"))?;
                }
                return Ok(text);
            }
            let calls = reply.tool_calls;
            messages.push(ChatMessage::Assistant { content: reply.content, tool_calls: calls.clone() });
            for call in calls {
                let started = std::time::Instant::now();
                let answer = self.tools.call_within(&request.tools, &call).await;
                let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                progress.tool_calls.push(ToolCallRecord::new(
                    &call.name,
                    &call.arguments,
                    &answer.content,
                    answer.ok,
                    duration_ms,
                ));
                messages.push(ChatMessage::Tool { call_id: call.id, content: answer.content });
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
        ended: Result<&str, &str>,
    ) -> RunId {
        let (reply, error) = match ended {
            Ok(reply) => (Some(triggers::run::run_text(reply)), None),
            Err(error) => (None, Some(triggers::run::storable(error))),
        };
        let record = RunRecord {
            id: RunId::generate(),
            team_id: self.team,
            trigger,
            conversation: request.conversation.clone(),
            input_excerpt: excerpt(request.summary.as_deref().unwrap_or(&request.input)),
            status,
            steps: progress.steps,
            usage: progress.usage,
            started_at,
            finished_at: self.clock.now(),
            error,
            tool_calls: progress.tool_calls.clone(),
            // Only what a model was given: a rejected run never reached one.
            model_input: (progress.steps > 0).then(|| triggers::run::run_text(&request.input)),
            reply,
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
