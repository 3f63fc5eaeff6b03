//! `POST /v1/invoices/from-time`: an invoice made of a span of tracked time.

use accounts::Principal;
use actix_web::{HttpResponse, post, web};
use billing::money::{MAX_LINE_ITEMS, QUANTITY};
use kernel::{FieldError, Id};
use serde::{Deserialize, Serialize};
use serde_json::Number;
use tracking::invoicing::{GroupBy, Rounding, TimeBillingRule};
use tracking::report::MAX_REPORT_DAYS;
use tracking::{Actor, BillTimeError, TimeBilling};
use utoipa::ToSchema;

use crate::conventions::body::Json;
use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, BillTime};
use crate::rest::openapi::{
    GroupBy as GroupBySchema, InstantInput, RoundingMode as RoundingModeSchema,
    VatCategory as VatCategorySchema,
};
use crate::rest::routes::invoices::{
    InlineClientInput, InvoiceBody, InvoiceHead, ServicePeriodBody, invoice_body,
};
use crate::rest::routes::track::projects::rate;
use crate::rest::routes::{BodyErrors, KeyedErrors, body_id, created, days};
use crate::rest::state::ApiState;

/// The most projects `projectIds` may name.
const MAX_PROJECT_IDS: usize = 1000;

/// How each entry's duration is rounded before its line sums it; the entries keep their
/// own durations.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RoundingInput {
    /// The step, in whole minutes (`15`; `15.0` is the same number).
    #[schema(value_type = i64, minimum = 1, maximum = 60)]
    minutes: Number,
    #[schema(value_type = RoundingModeSchema)]
    mode: String,
}

invoice_body! {
    /// The time to bill and the invoice to make of it. Exactly one of `clientId` and
    /// `client`. The example previews (and writes nothing) the invoice of November 2026's
    /// billable time at 95 an hour, in quarter hours: log some first (the example of
    /// `POST /v1/track/time` does), else the answer is a 400 naming `from`.
    #[schema(example = json!({
        "client": {"email": "zoe@example.com", "name": "Zoë Łukasiewicz"},
        "from": "2026-11-01", "to": "2026-11-30", "rate": 95,
        "rounding": {"minutes": 15, "mode": "up"}, "groupBy": "project", "preview": true}))]
    pub(crate) struct TimeInvoiceInput {
        /// The first UTC day whose entries are billed, `YYYY-MM-DD`.
        #[schema(value_type = String, format = Date)]
        from: String,
        /// The last UTC day whose entries are billed (included), `YYYY-MM-DD`; at most 366
    /// days after `from`'s.
        #[schema(value_type = String, format = Date)]
        to: String,
        /// Only time on these projects of the team, each the client's or no client's.
        /// Default: all the time of the days the client may be billed for: on its projects,
        /// on projects of no client, and on no project. Time on another client's project is
        /// never billed; a client given inline has no projects yet.
        #[serde(default)]
        #[schema(value_type = Option<Vec<uuid::Uuid>>, min_items = 1, max_items = 1000)]
        project_ids: Option<Vec<String>>,
        /// Only time on the client's own projects: none on projects of no client, nor on no
        /// project.
        #[serde(default)]
        #[schema(default = false)]
        client_projects_only: bool,
        /// One line per project (default), per task name (and rate), or per entry.
        #[serde(default)]
        #[schema(value_type = Option<GroupBySchema>)]
        group_by: Option<String>,
        /// An hourly rate for every line, instead of each project's `rate`: 0 to 10¹², at
        /// most 6 decimal places. Required when some time to bill has no project rate.
        #[serde(default)]
        #[schema(value_type = Option<f64>, minimum = 0, maximum = 1_000_000_000_000_i64)]
        rate: Option<Number>,
        #[serde(default)]
        rounding: Option<RoundingInput>,
        /// `true` answers 200 with the invoice that would be made now, its serial included,
        /// and writes nothing.
        #[serde(default)]
        #[schema(default = false)]
        preview: bool,
    }
}

/// `rounding.minutes` as a whole number: JSON Schema's integers include `15.0`.
fn whole_minutes(minutes: &Number) -> Result<i64, FieldError> {
    let refused = || FieldError::new("rounding.minutes", "must be a whole number of minutes from 1 to 60");
    kernel::number::whole_number(&minutes.to_string())
        .map(|whole| i64::try_from(whole).unwrap_or(i64::MAX))
        .ok_or_else(refused)
}

/// `projectIds` (named `field`): 1 to 1000 of the team's projects, or left out for all.
pub(crate) fn project_ids(
    ids: Option<Vec<String>>,
    field: &str,
) -> Result<Option<Vec<tracking::ProjectId>>, FieldError> {
    ids.map(|ids| {
        if ids.len() > MAX_PROJECT_IDS {
            return Err(FieldError::new(field, format!("must name at most {MAX_PROJECT_IDS} projects")));
        }
        if ids.is_empty() {
            return Err(FieldError::new(field, "must name at least one project, or be left out"));
        }
        ids.iter().map(|id| body_id(id, field, "project")).collect::<Result<Vec<tracking::ProjectId>, _>>()
    })
    .transpose()
}

/// `rounding` as given: its fields are named `rounding.minutes` and `rounding.mode`.
pub(crate) fn rounding(input: &RoundingInput) -> Result<Rounding, FieldError> {
    Rounding::parse(whole_minutes(&input.minutes)?, &input.mode).map_err(|rule| time_billing_rule(&rule))
}

impl TimeInvoiceInput {
    fn parse(
        mut self,
        team: accounts::TeamId,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<TimeBilling, FieldError> {
        let head = self.head();
        let days = days(&self.from, &self.to, Some(MAX_REPORT_DAYS))?;
        let projects = project_ids(self.project_ids, "projectIds")?;
        let group_by =
            self.group_by.as_deref().map(GroupBy::parse).transpose().map_err(|e| e.at("groupBy"))?;
        let rounding = self.rounding.as_ref().map(rounding).transpose()?;
        let invoice = head.parse(team, now)?;
        Ok(TimeBilling {
            days,
            projects,
            group_by: group_by.unwrap_or_default(),
            rate: self.rate.as_ref().map(|r| rate(r, "rate")).transpose()?,
            rounding,
            client_projects_only: self.client_projects_only,
            invoice,
            preview: self.preview,
        })
    }
}

/// An invoice of tracked time, and the entries it left out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TimeInvoiceBody {
    #[serde(flatten)]
    invoice: InvoiceBody,
    /// The entries of the time that could not be billed, left out and unbilled: each one
    /// of more hours than a line holds, or that would take its line past that. Empty when
    /// all was billed.
    skipped_entries: Vec<SkippedEntryBody>,
}

/// A time entry left out of an invoice of time.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct SkippedEntryBody {
    /// The time entry's id.
    id: uuid::Uuid,
    /// Why it cannot be billed.
    #[schema(
        example = "its 2501999792983.608611 hours are more than an invoice line holds (at most 1000000000 hours)"
    )]
    reason: String,
}

/// Invoice tracked time
///
/// Makes one invoice of the billable, not yet invoiced time entries dated `from` to `to`
/// (UTC days, both included), in one transaction that sets each entry's `invoiceId`: one
/// line item per project, task or entry (`groupBy`), its `quantity` the exact hours
/// (`seconds ÷ 3600` of the rounded durations, to 6 decimals, half away from zero), its
/// `unitPrice` the `rate`, or else the project's, and its `amount` `unitPrice × quantity`
/// rounded once to the minor unit. Members bill their own time; owners and admins the
/// team's. An entry that cannot be billed (more hours than a line holds, or more than its
/// line can still take) is left out, stays unbilled, and is named in `skippedEntries`; the
/// invoice is made of the rest. An entry is never billed twice: a request that loses a race
/// for the same time is a 409 and makes nothing. `"preview": true` answers 200 with the
/// invoice that would be made and writes nothing. Needs `invoices:write` and `track:read`.
#[utoipa::path(
    tag = "Invoices",
    request_body = TimeInvoiceInput,
    responses(
        (status = 201, description = "Created, with its time billed", body = TimeInvoiceBody,
         headers(("Location" = String, description = "URL of the new invoice"))),
        (status = 200, description = "`preview`: the invoice that would be made; nothing is written", body = TimeInvoiceBody),
        (status = 409, description = "Time to bill was billed, changed or deleted meanwhile, or the team's numbering pattern repeats a serial; nothing was made", body = crate::conventions::error::ErrorBody),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn invoice_time(
    auth: Auth<BillTime>,
    Json(input): Json<TimeInvoiceInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let preview = input.preview;
    let billed = bill(&state, &auth.principal, input).await?;
    if preview {
        Ok(HttpResponse::Ok().json(billed))
    } else {
        Ok(created(format!("/v1/invoices/{}", billed.invoice.id), billed))
    }
}

impl From<BillTimeError> for ApiError {
    fn from(error: BillTimeError) -> Self {
        match error {
            BillTimeError::Rule(rule) => time_billing_rule(&rule).into(),
            BillTimeError::Invoice(error) => error.into(),
        }
    }
}

/// A rule of billing time in the REST API's words: the body field it is about, then what
/// to send.
pub(crate) fn time_billing_rule(rule: &TimeBillingRule) -> FieldError {
    match rule {
        TimeBillingRule::RoundingStep => FieldError::new("rounding.minutes", "must be from 1 to 60"),
        TimeBillingRule::RoundingMode(invalid) => invalid.clone().at("rounding.mode"),
        TimeBillingRule::UnknownProject(id) => {
            FieldError::new("projectIds", format!("{id}: no such project in the team"))
        }
        TimeBillingRule::NotTheClientsProject(id) => FieldError::new(
            "projectIds",
            format!(
                "{id}: the project is another client's, or no client's while clientProjectsOnly is true; \
                 name only projects of the invoice's client or of no client"
            ),
        ),
        TimeBillingRule::NoTime => {
            FieldError::new("from", "no billable time that is not billed yet in the range")
        }
        TimeBillingRule::Unrated { projects } => {
            FieldError::new("rate", format!("is required: no hourly rate is set on {}", projects.join(", ")))
        }
        TimeBillingRule::RoundedAway => FieldError::new("rounding", "leaves no time to bill"),
        TimeBillingRule::TooManyLines { lines } => FieldError::new(
            "groupBy",
            format!(
                "makes {lines} lines, and an invoice holds at most {MAX_LINE_ITEMS}: group by project or task, or bill fewer days"
            ),
        ),
        TimeBillingRule::LineTooLong { description } => FieldError::new(
            "to",
            format!(
                "the time of the line \"{description}\" comes to more hours than a line holds (at most {}); bill fewer days",
                QUANTITY.max
            ),
        ),
        TimeBillingRule::LineDescription(invalid) => invalid.clone().at("groupBy"),
        TimeBillingRule::NothingBillable { entries } => FieldError::new(
            "from",
            format!(
                "none of the {entries} entries to bill can be billed: each is more hours than an invoice line \
                 holds (at most {} hours); correct their durations",
                QUANTITY.max
            ),
        ),
        TimeBillingRule::RateInClientCurrency => FieldError::new(
            "rate",
            "is required with exchangeRate: the client is billed in another currency than the team's, and the projects' rates are in the team's",
        ),
    }
}

/// Bills the time `input` names in the caller's team, or previews it.
pub(crate) async fn bill(
    state: &ApiState,
    who: &Principal,
    input: TimeInvoiceInput,
) -> Result<TimeInvoiceBody, ApiError> {
    let now = state.clock.now();
    let request = input.parse(who.team_id, now)?;
    let stores = &state.stores;
    let billed = tracking::service::bill_time(
        &*stores.track,
        &*stores.billing,
        &*stores.accounts,
        &Actor::from(who),
        who.team_id,
        request,
        now,
    )
    .await?;
    let skipped_entries = billed
        .skipped
        .iter()
        .map(|skipped| SkippedEntryBody { id: skipped.id.as_uuid(), reason: skipped.reason.to_string() })
        .collect();
    Ok(TimeInvoiceBody { invoice: InvoiceBody::new(billed.invoice, now), skipped_entries })
}
