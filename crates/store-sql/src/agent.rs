//! The agent runtime's ports over diesel: conversation memory and run history.
//!
//! Messages are numbered per conversation. The runtime runs one turn of a conversation at
//! a time, so the next number is read before the insert; should two writers ever race on
//! one conversation, the primary key refuses the second instead of interleaving.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;
use triggers::{
    ConversationKey, ConversationMemory, Message, Role, RunFilter, RunHistory, RunId, RunRecord, RunStatus,
    ToolCallRecord, TriggerKind, Usage,
};

use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

/// Rows of one `INSERT` into `agent_runs`: 15 bind parameters each, well under
/// PostgreSQL's 65,535 and SQLite's 32,766.
const RUNS_PER_STATEMENT: usize = 1_000;

#[derive(Queryable)]
struct RunRow {
    team_id: DbUuid,
    id: DbUuid,
    trigger: String,
    conversation_key: Option<String>,
    input_excerpt: String,
    status: String,
    steps: i32,
    input_tokens: i64,
    output_tokens: i64,
    started_at: DateTime<Utc>,
    finished_at: DateTime<Utc>,
    error: Option<String>,
    tool_calls: String,
    model_input: Option<String>,
    reply: Option<String>,
}

impl TryFrom<RunRow> for RunRecord {
    type Error = StoreError;
    fn try_from(row: RunRow) -> Result<Self, StoreError> {
        let count = |what: &str, value: i64| u64::try_from(value).map_err(|e| corrupt(what, e));
        Ok(RunRecord {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            trigger: TriggerKind::parse(&row.trigger).ok_or_else(|| corrupt("run trigger", &row.trigger))?,
            conversation: row
                .conversation_key
                .map(|key| ConversationKey::parse(&key).map_err(|e| corrupt("conversation key", e)))
                .transpose()?,
            input_excerpt: row.input_excerpt,
            status: RunStatus::parse(&row.status).ok_or_else(|| corrupt("run status", &row.status))?,
            steps: u32::try_from(row.steps).map_err(|e| corrupt("run steps", e))?,
            usage: Usage {
                input_tokens: count("input tokens", row.input_tokens)?,
                output_tokens: count("output tokens", row.output_tokens)?,
            },
            started_at: row.started_at,
            finished_at: row.finished_at,
            error: row.error,
            tool_calls: serde_json::from_str(&row.tool_calls).map_err(|e| corrupt("run tool calls", e))?,
            model_input: row.model_input,
            reply: row.reply,
        })
    }
}

/// The stored form of a run's tool calls: a JSON array.
fn tool_calls_text(calls: &[ToolCallRecord]) -> String {
    // Serializing plain strings, numbers and booleans cannot fail.
    serde_json::to_string(calls).unwrap_or_else(|_| "[]".to_owned())
}

/// Token counts beyond `i64` are clamped: no model reports that many.
fn stored_count(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

#[async_trait]
impl ConversationMemory for SqlStore {
    #[tracing::instrument(skip(self))]
    async fn recent_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        limit: u32,
    ) -> Result<Vec<Message>, StoreError> {
        let mut rows: Vec<(String, String)> = db_run!(self, |conn| agent_messages::table
            .filter(agent_messages::team_id.eq(DbUuid::of(team)))
            .filter(agent_messages::conversation_key.eq(conversation.as_str()))
            .order(agent_messages::position.desc())
            .limit(i64::from(limit))
            .select((agent_messages::role, agent_messages::content))
            .load(conn)
            .await
            .or_store()?);
        rows.reverse();
        rows.into_iter()
            .map(|(role, content)| {
                let role = Role::parse(&role).ok_or_else(|| corrupt("message role", &role))?;
                Ok(Message { role, content })
            })
            .collect()
    }

    #[tracing::instrument(skip(self, messages), fields(count = messages.len()))]
    async fn append_messages(
        &self,
        team: TeamId,
        conversation: &ConversationKey,
        messages: &[Message],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        db_run!(self, |conn| {
            // Read before the transaction: on SQLite a transaction that reads before it
            // writes fails at once, unretried, when another connection wrote meanwhile.
            let first = next_position!(conn, team, conversation).or_store()?;
            conn.transaction(async |conn| insert_messages!(conn, team, conversation, first, messages, at))
                .await
                .or_store()
        })
    }
}

/// The position of the conversation's next message on `$conn`. A macro, as those below,
/// to run with either backend's tables in scope.
macro_rules! next_position {
    ($conn:ident, $team:expr, $conversation:expr) => {{
        let (team, conversation): (TeamId, &ConversationKey) = ($team, $conversation);
        agent_messages::table
            .filter(agent_messages::team_id.eq(DbUuid::of(team)))
            .filter(agent_messages::conversation_key.eq(conversation.as_str()))
            .select(diesel::dsl::max(agent_messages::position))
            .first::<Option<i64>>($conn)
            .await
            .map(|last| last.unwrap_or(0) + 1)
    }};
}
pub(crate) use next_position;

/// Inserts `$messages` from position `$first` on `$conn`, inside a transaction; a
/// `diesel::result::Error` on failure.
macro_rules! insert_messages {
    ($conn:ident, $team:expr, $conversation:expr, $first:expr, $messages:expr, $at:expr) => {{
        let (team, conversation, at): (TeamId, &ConversationKey, DateTime<Utc>) = ($team, $conversation, $at);
        // One statement per message: diesel-async sends no multi-row insert to SQLite.
        for (position, message) in ($first..).zip($messages) {
            diesel::insert_into(agent_messages::table)
                .values((
                    agent_messages::team_id.eq(DbUuid::of(team)),
                    agent_messages::conversation_key.eq(conversation.as_str()),
                    agent_messages::position.eq(position),
                    agent_messages::role.eq(message.role.as_str()),
                    agent_messages::content.eq(&message.content),
                    agent_messages::created_at.eq(at),
                ))
                .execute($conn)
                .await?;
        }
        Ok::<_, diesel::result::Error>(())
    }};
}
pub(crate) use insert_messages;

#[async_trait]
impl RunHistory for SqlStore {
    #[tracing::instrument(skip_all, fields(count = runs.len()))]
    async fn record_runs(&self, runs: &[RunRecord]) -> Result<(), StoreError> {
        // A macro, not a function: the columns are each backend's own types.
        macro_rules! values {
            ($run:expr) => {{
                let run: &RunRecord = $run;
                (
                    agent_runs::team_id.eq(DbUuid::of(run.team_id)),
                    agent_runs::id.eq(DbUuid::of(run.id)),
                    agent_runs::trigger.eq(run.trigger.as_str()),
                    agent_runs::conversation_key.eq(run.conversation.as_ref().map(ConversationKey::as_str)),
                    agent_runs::input_excerpt.eq(&run.input_excerpt),
                    agent_runs::status.eq(run.status.as_str()),
                    agent_runs::steps.eq(i32::try_from(run.steps).unwrap_or(i32::MAX)),
                    agent_runs::input_tokens.eq(stored_count(run.usage.input_tokens)),
                    agent_runs::output_tokens.eq(stored_count(run.usage.output_tokens)),
                    agent_runs::started_at.eq(run.started_at),
                    agent_runs::finished_at.eq(run.finished_at),
                    agent_runs::error.eq(run.error.as_deref()),
                    agent_runs::tool_calls.eq(tool_calls_text(&run.tool_calls)),
                    agent_runs::model_input.eq(run.model_input.as_deref()),
                    agent_runs::reply.eq(run.reply.as_deref()),
                )
            }};
        }
        if runs.is_empty() {
            return Ok(());
        }
        db_run!(self,
            // One multi-row statement; bind parameters are limited to 65,535, so a larger
            // group is split, in one transaction.
            postgres: |conn| {
                if runs.len() <= RUNS_PER_STATEMENT {
                    let rows: Vec<_> = runs.iter().map(|run| values!(run)).collect();
                    diesel::insert_into(agent_runs::table).values(rows).execute(conn).await.or_store().map(drop)
                } else {
                    conn.transaction(async |conn| {
                        for chunk in runs.chunks(RUNS_PER_STATEMENT) {
                            let rows: Vec<_> = chunk.iter().map(|run| values!(run)).collect();
                            diesel::insert_into(agent_runs::table).values(rows).execute(conn).await?;
                        }
                        Ok::<_, diesel::result::Error>(())
                    })
                    .await
                    .or_store()
                }
            },
            // One blocking task for the whole group: through the async wrapper each statement
            // would be a thread handoff of its own.
            sqlite: |conn| {
                let runs = runs.to_vec();
                conn.spawn_blocking(move |conn| {
                    diesel::Connection::transaction(conn, |conn| {
                        for chunk in runs.chunks(RUNS_PER_STATEMENT) {
                            let rows: Vec<_> = chunk.iter().map(|run| values!(run)).collect();
                            let insert = diesel::insert_into(agent_runs::table).values(rows);
                            diesel::RunQueryDsl::execute(insert, conn)?;
                        }
                        Ok::<_, diesel::result::Error>(())
                    })
                })
                .await
                .or_store()
                .map(drop)
            }
        )
    }

    #[tracing::instrument(skip(self))]
    async fn list_runs(&self, team: TeamId, filter: &RunFilter) -> Result<Vec<RunRecord>, StoreError> {
        let rows: Vec<RunRow> = db_run!(self, |conn| {
            let mut query = agent_runs::table.filter(agent_runs::team_id.eq(DbUuid::of(team))).into_boxed();
            if let Some(key) = &filter.conversation {
                query = query.filter(agent_runs::conversation_key.eq(key.as_str()));
            }
            query
                .order((agent_runs::started_at.desc(), agent_runs::id.desc()))
                .limit(i64::from(filter.limit))
                .load(conn)
                .await
                .or_store()?
        });
        rows.into_iter().map(RunRecord::try_from).collect()
    }

    #[tracing::instrument(skip(self))]
    async fn find_run(&self, team: TeamId, id: RunId) -> Result<Option<RunRecord>, StoreError> {
        let row: Option<RunRow> = db_run!(self, |conn| agent_runs::table
            .filter(agent_runs::team_id.eq(DbUuid::of(team)))
            .filter(agent_runs::id.eq(DbUuid::of(id)))
            .first(conn)
            .await
            .optional()
            .or_store()?);
        row.map(RunRecord::try_from).transpose()
    }
}
