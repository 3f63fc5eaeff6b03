//! `/v1/agent/runs`: the agent's run history, for keys with `agent:read`.

use actix_web::{get, web};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use triggers::{ConversationKey, RunFilter, RunId, RunRecord};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::auth::{AgentRead, Auth};
use crate::error::ApiError;
use crate::routes::{KeyedErrors, NotFound, Timestamp, not_found, path_id};
use crate::state::ApiState;

/// Runs listed when `limit` is not given.
const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;

/// One run of the agent, as its trigger started it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunBody {
    id: Uuid,
    /// `webhook` or `github`.
    trigger: &'static str,
    /// The conversation the run continued (`conversation_id` of the webhook, or
    /// `github:<owner>/<repo>#<number>`); `null` for a one-shot run.
    conversation_id: Option<String>,
    /// The first 200 characters of the input.
    input: String,
    /// `ok`, `rejected` (the conversation's queue was full), `failed` or `timeout`.
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
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct RunsQuery {
    /// Only the runs of this conversation.
    conversation_id: Option<String>,
    /// How many runs, newest first: 1 to 500.
    #[param(minimum = 1, maximum = 500, default = 50)]
    limit: Option<String>,
}

impl RunsQuery {
    fn filter(self) -> Result<RunFilter, FieldError> {
        let conversation = self
            .conversation_id
            .map(|id| ConversationKey::parse(&id))
            .transpose()
            .map_err(|message| FieldError::new("conversationId", message))?;
        let limit = match self.limit {
            None => DEFAULT_LIMIT,
            Some(text) => {
                text.parse().ok().filter(|limit| (1..=MAX_LIMIT).contains(limit)).ok_or_else(|| {
                    FieldError::new("limit", format!("must be a whole number from 1 to {MAX_LIMIT}"))
                })?
            }
        };
        Ok(RunFilter { conversation, limit })
    }
}

/// List the agent's runs, newest first.
#[utoipa::path(
    tag = "Agent runs",
    params(RunsQuery),
    responses(
        (status = 200, description = "The runs, newest first", body = [RunBody]),
        (status = 400, description = "`conversationId` or `limit` invalid", body = crate::ErrorBody),
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
    let runs = state.stores.runs.list_runs(auth.principal.team_id, &filter).await?;
    Ok(web::Json(runs.into_iter().map(RunBody::from).collect()))
}

/// Get one run.
#[utoipa::path(
    tag = "Agent runs",
    params(("id" = Uuid, Path, description = "Run id")),
    responses(
        (status = 200, description = "The run", body = RunBody),
        NotFound,
        KeyedErrors,
    )
)]
#[get("/{id}")]
pub(crate) async fn get_run(
    auth: Auth<AgentRead>,
    id: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RunBody>, ApiError> {
    let id: RunId = path_id(&id, "run")?;
    let run =
        state.stores.runs.find_run(auth.principal.team_id, id).await?.ok_or_else(|| not_found("run"))?;
    Ok(web::Json(run.into()))
}
