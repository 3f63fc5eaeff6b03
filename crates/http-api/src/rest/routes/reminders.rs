//! `/v1/reminder-policy`: when the team's payment reminders go out, and what they say.

use actix_web::{get, put, web};
use kernel::FieldError;
use notify::ReminderPolicy;
use notify::reminders::{MAX_DAYS, MAX_STEPS, PolicyRule};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::conventions::body::{Json, whole_in};
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite};
use crate::rest::routes::messages::policy_wording;
use crate::rest::routes::{BodyErrors, KeyedErrors};
use crate::rest::state::ApiState;

/// One reminder of the policy.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReminderStepBody {
    /// Days after the due date (before it when negative; 0 on the day), -365 to 365.
    #[schema(value_type = i32, minimum = -365, maximum = 365, example = 7)]
    days_after_due: serde_json::Number,
}

/// The team's reminder policy. Each open invoice with a due date (something due, not
/// written off, its client taking reminders) gets one reminder per step, at most once; a
/// job pass that finds several steps come (after a pause) sends the latest only.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReminderPolicyBody {
    enabled: bool,
    /// In order.
    steps: Vec<ReminderStepBody>,
    /// With placeholders `{serial}`, `{amountDue}`, `{dueDate}`, `{client}`, `{pdfUrl}`.
    subject: String,
    body: String,
}

impl From<ReminderPolicy> for ReminderPolicyBody {
    fn from(policy: ReminderPolicy) -> Self {
        Self {
            enabled: policy.enabled,
            steps: policy
                .steps()
                .iter()
                .map(|s| ReminderStepBody { days_after_due: s.days_after_due().into() })
                .collect(),
            subject: policy.subject.as_str().to_owned(),
            body: policy.body.as_str().to_owned(),
        }
    }
}

/// A whole policy: what is left out takes its default (no steps, the default wording).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"enabled": true,
    "steps": [{"daysAfterDue": -3}, {"daysAfterDue": 0}, {"daysAfterDue": 7}],
    "subject": "Reminder: invoice {serial}, {amountDue} due {dueDate}",
    "body": "Hello {client},\n\n{amountDue} of invoice {serial} is still open.\nView it: {pdfUrl}\n"}))]
pub(crate) struct ReminderPolicyInput {
    enabled: bool,
    /// 0 to 10 steps, in any order, no two on one day; an enabled policy needs one.
    #[serde(default)]
    #[schema(max_items = 10)]
    steps: Vec<ReminderStepBody>,
    /// With placeholders; at most 255 characters once filled in (longer is cut).
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000A-\u001F\uFFFE\uFFFF]*$", min_length = 1, max_length = 255)]
    subject: Option<String>,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 20000
    )]
    body: Option<String>,
}

/// A policy rule in the REST API's words.
fn policy_rule(rule: &PolicyRule) -> FieldError {
    match rule {
        PolicyRule::StepOutOfRange { index } => FieldError::new(
            format!("steps[{index}].daysAfterDue"),
            format!("must be between -{MAX_DAYS} and {MAX_DAYS}"),
        ),
        PolicyRule::RepeatedStep { index } => {
            FieldError::new(format!("steps[{index}].daysAfterDue"), "repeats an earlier step")
        }
        PolicyRule::TooManySteps => FieldError::new("steps", format!("must have at most {MAX_STEPS} steps")),
        PolicyRule::NoSteps => FieldError::new("steps", "an enabled policy needs at least one step"),
        PolicyRule::Subject(rule) => FieldError::new("subject", rule.to_string()),
        PolicyRule::Body(rule) => FieldError::new("body", rule.to_string()),
    }
}

/// Get the reminder policy
///
/// The team's policy; one never set is off, with no steps and the default wording. Needs
/// `invoices:read`.
#[utoipa::path(
    tag = "Reminders",
    responses((status = 200, description = "The team's reminder policy", body = ReminderPolicyBody), KeyedErrors)
)]
#[get("")]
pub(crate) async fn get_policy(
    auth: Auth<InvoicesRead>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ReminderPolicyBody>, ApiError> {
    Ok(web::Json(state.stores.notify.reminder_policy(auth.principal.team_id).await?.into()))
}

/// Set the reminder policy
///
/// Replaces the team's policy. Every open invoice's `nextReminderAt` follows at once;
/// steps an invoice already had sent stay sent. Needs `invoices:write`.
#[utoipa::path(
    tag = "Reminders",
    request_body = ReminderPolicyInput,
    responses(
        (status = 200, description = "The policy as set", body = ReminderPolicyBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[put("")]
pub(crate) async fn put_policy(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<ReminderPolicyInput>,
    state: web::Data<ApiState>,
) -> Result<web::Json<ReminderPolicyBody>, ApiError> {
    let days = i64::from(MAX_DAYS);
    let steps = (input.steps.iter().enumerate())
        .map(|(index, step)| {
            let field = format!("steps[{index}].daysAfterDue");
            let whole = whole_in(&step.days_after_due, &field, -days, days)?;
            Ok(i32::try_from(whole).unwrap_or(i32::MAX))
        })
        .collect::<Result<Vec<i32>, FieldError>>()?;
    let (subject, body) = policy_wording(input.subject, input.body)?;
    let policy =
        ReminderPolicy::new(input.enabled, &steps, subject, body).map_err(|rule| policy_rule(&rule))?;
    let now = state.clock.now();
    let set = state.stores.notify.set_reminder_policy(auth.principal.team_id, &policy, now).await?;
    Ok(web::Json(set.into()))
}
