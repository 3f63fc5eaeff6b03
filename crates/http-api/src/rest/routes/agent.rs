//! `/v1/agent/runs` and `/v1/agent/deliveries`: the agent's run history and the
//! repository trigger's delivery log, for keys with `agent:read`.

use actix_web::{get, web};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use triggers::{
    ConversationKey, DeliveryEntry, DeliveryFilter, RunFilter, RunId, RunRecord, ToolCallRecord, Verdict,
};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::error::ApiError;
use crate::rest::auth::{AgentRead, Auth};
use crate::rest::openapi::{
    DeliveryState as DeliveryStateSchema, RunStatus as RunStatusSchema, TriggerKind as TriggerKindSchema,
    Verdict as VerdictSchema,
};
use crate::rest::routes::{KeyedErrors, NotFound, Timestamp, not_found, path_id};
use crate::rest::state::ApiState;

/// Runs listed when `limit` is not given.
const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;

/// One run of the agent, as its trigger started it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunBody {
    id: Uuid,
    #[schema(value_type = TriggerKindSchema)]
    trigger: &'static str,
    /// The conversation the run continued (`conversation_id` of the webhook, or
    /// `github:<owner>/<repo>#<number>`); `null` for a one-shot run.
    conversation_id: Option<String>,
    /// The first 200 characters of the input.
    input: String,
    #[schema(value_type = RunStatusSchema)]
    status: &'static str,
    /// Model calls made.
    steps: u32,
    /// Prompt tokens, as the model reported them.
    input_tokens: u64,
    /// Completion tokens, as the model reported them.
    output_tokens: u64,
    started_at: Timestamp,
    finished_at: Timestamp,
    duration_ms: i64,
    /// Why the run did not reply; `null` for `ok`.
    error: Option<String>,
    /// The tools the model called, in order.
    tool_calls: Vec<ToolCallBody>,
}

/// One tool call of a run.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCallBody {
    /// The tool's name.
    name: String,
    /// The arguments as the model wrote them (JSON text), the first 2,000 characters.
    arguments: String,
    /// The start of the tool's answer, or of its error: the first 500 characters.
    result: String,
    /// Whether the tool did what was asked; `false` when it refused or failed.
    ok: bool,
    duration_ms: u64,
}

impl From<ToolCallRecord> for ToolCallBody {
    fn from(call: ToolCallRecord) -> Self {
        Self {
            name: call.name,
            arguments: call.arguments,
            result: call.result,
            ok: call.ok,
            duration_ms: call.duration_ms,
        }
    }
}

impl From<RunRecord> for RunBody {
    fn from(run: RunRecord) -> Self {
        Self {
            id: run.id.as_uuid(),
            trigger: run.trigger.as_str(),
            conversation_id: run.conversation.map(|key| key.as_str().to_owned()),
            input: run.input_excerpt,
            status: run.status.as_str(),
            steps: run.steps,
            input_tokens: run.usage.input_tokens,
            output_tokens: run.usage.output_tokens,
            duration_ms: (run.finished_at - run.started_at).num_milliseconds(),
            started_at: Timestamp(run.started_at),
            finished_at: Timestamp(run.finished_at),
            error: run.error,
            tool_calls: run.tool_calls.into_iter().map(ToolCallBody::from).collect(),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct RunsQuery {
    /// Only the runs of this conversation.
    #[param(min_length = 1, max_length = 200, pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$")]
    conversation_id: Option<String>,
    /// How many runs, newest first: 1 to 500.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500, default = 50)]
    limit: Option<String>,
}

impl RunsQuery {
    fn filter(self) -> Result<RunFilter, FieldError> {
        let conversation = self
            .conversation_id
            .map(|id| ConversationKey::parse(&id))
            .transpose()
            .map_err(|message| FieldError::new("conversationId", message))?;
        Ok(RunFilter { conversation, limit: limit(self.limit)? })
    }
}

/// The `limit` query parameter: 1 to 500, 50 when not given.
fn limit(text: Option<String>) -> Result<u32, FieldError> {
    match text {
        None => Ok(DEFAULT_LIMIT),
        Some(text) => {
            text.parse().ok().filter(|limit| (1..=MAX_LIMIT).contains(limit)).ok_or_else(|| {
                FieldError::new("limit", format!("must be a whole number from 1 to {MAX_LIMIT}"))
            })
        }
    }
}

/// List agent runs
///
/// Lists the agent's runs, newest first, optionally only those of one `conversationId`;
/// `limit` (1 to 500, default 50) caps how many. Needs `agent:read`.
#[utoipa::path(
    tag = "Agent runs",
    params(RunsQuery),
    responses(
        (status = 200, description = "The runs, newest first", body = [RunBody]),
        (status = 400, description = "`conversationId` or `limit` invalid", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_runs(
    auth: Auth<AgentRead>,
    query: web::Query<RunsQuery>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<RunBody>>, ApiError> {
    let filter = query.into_inner().filter()?;
    let runs = state.stores.agent.list_runs(auth.principal.team_id, &filter).await?;
    Ok(web::Json(runs.into_iter().map(RunBody::from).collect()))
}

/// One run with the text its model read and the reply it gave.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunDetailBody {
    #[serde(flatten)]
    run: RunBody,
    /// The text the model read: the input as the trigger rendered it (a GitHub event inside
    /// its untrusted-content frame), the first 4,000 characters; `null` for runs recorded
    /// before it was kept, and for a run that never reached the model.
    #[schema(required = true)]
    model_input: Option<String>,
    /// The final reply, the first 4,000 characters; `null` when the run did not reply.
    #[schema(required = true)]
    reply: Option<String>,
}

impl From<RunRecord> for RunDetailBody {
    fn from(mut run: RunRecord) -> Self {
        let (model_input, reply) = (run.model_input.take(), run.reply.take());
        Self { run: run.into(), model_input, reply }
    }
}

/// Get an agent run
///
/// Returns one run of the agent, with the text its model read and its reply. Needs
/// `agent:read`.
#[utoipa::path(
    tag = "Agent runs",
    params(("id" = Uuid, Path, description = "Run id")),
    responses(
        (status = 200, description = "The run", body = RunDetailBody),
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}")]
pub(crate) async fn get_run(
    auth: Auth<AgentRead>,
    id: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RunDetailBody>, ApiError> {
    let id: RunId = path_id(&id, "run")?;
    let run =
        state.stores.agent.find_run(auth.principal.team_id, id).await?.ok_or_else(|| not_found("run"))?;
    Ok(web::Json(run.into()))
}

/// A delivery the repository trigger verified, and what became of it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeliveryBody {
    /// The log entry's id.
    id: Uuid,
    /// GitHub's delivery id (`X-GitHub-Delivery`).
    delivery: String,
    /// `X-GitHub-Event`.
    event: String,
    action: Option<String>,
    /// `owner/name`.
    repository: Option<String>,
    /// `github:<owner>/<repo>#<number>`; `null` for an event that runs one-shot.
    conversation_id: Option<String>,
    /// One line naming the event: `pull_request.opened octo-org/hello-world#42: Fix the
    /// parser`, or as much of it as the payload has. Its run's `input` is this line too.
    summary: String,
    #[schema(value_type = VerdictSchema)]
    verdict: &'static str,
    /// Why it was ignored, or what it duplicates.
    note: Option<String>,
    /// Hex SHA-256 of the body as received.
    body_sha256: String,
    received_at: Timestamp,
    /// For accepted deliveries; `null` for the others.
    #[schema(value_type = Option<DeliveryStateSchema>)]
    state: Option<&'static str>,
    /// Runs started for it.
    attempts: u32,
    /// The last run (see `/v1/agent/runs/{id}`).
    run_id: Option<Uuid>,
    /// Why the last attempt failed.
    error: Option<String>,
    finished_at: Option<Timestamp>,
}

impl From<DeliveryEntry> for DeliveryBody {
    fn from(entry: DeliveryEntry) -> Self {
        let progress = entry.progress;
        Self {
            id: entry.id.as_uuid(),
            delivery: entry.delivery.as_str().to_owned(),
            event: entry.event,
            action: entry.action,
            repository: entry.repository,
            conversation_id: entry.conversation.map(|key| key.as_str().to_owned()),
            summary: entry.summary,
            verdict: entry.verdict.as_str(),
            note: entry.note,
            body_sha256: entry.body_sha256,
            received_at: Timestamp(entry.received_at),
            state: progress.as_ref().map(|p| p.state.as_str()),
            attempts: progress.as_ref().map_or(0, |p| p.attempts),
            run_id: progress.as_ref().and_then(|p| p.run).map(|run| run.as_uuid()),
            error: progress.as_ref().and_then(|p| p.error.clone()),
            finished_at: progress.and_then(|p| p.finished_at).map(Timestamp),
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct DeliveriesQuery {
    /// Only deliveries with this verdict.
    #[param(value_type = Option<VerdictSchema>)]
    verdict: Option<String>,
    /// How many deliveries, newest first: 1 to 500.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 500, default = 50)]
    limit: Option<String>,
}

impl DeliveriesQuery {
    fn filter(self) -> Result<DeliveryFilter, FieldError> {
        let verdict = self
            .verdict
            .map(|text| {
                Verdict::parse(&text)
                    .ok_or_else(|| FieldError::new("verdict", "must be accepted, ignored or duplicate"))
            })
            .transpose()?;
        Ok(DeliveryFilter { verdict, limit: limit(self.limit)? })
    }
}

/// List repository trigger deliveries
///
/// Lists the deliveries the repository trigger verified, newest first, optionally only those
/// with one `verdict`; `limit` (1 to 500, default 50) caps how many. Needs `agent:read`.
#[utoipa::path(
    tag = "Agent runs",
    params(DeliveriesQuery),
    responses(
        (status = 200, description = "The deliveries, newest first", body = [DeliveryBody]),
        (status = 400, description = "`verdict` or `limit` invalid", body = crate::conventions::error::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_deliveries(
    auth: Auth<AgentRead>,
    query: web::Query<DeliveriesQuery>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<DeliveryBody>>, ApiError> {
    let filter = query.into_inner().filter()?;
    let deliveries = state.stores.agent.list_deliveries(auth.principal.team_id, &filter).await?;
    Ok(web::Json(deliveries.into_iter().map(DeliveryBody::from).collect()))
}
