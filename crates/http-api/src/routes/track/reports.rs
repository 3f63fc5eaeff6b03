//! `/v1/track/reports`: where a span's time went, summed by the database.

use accounts::Principal;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use tracking::report::MAX_REPORT_DAYS;
use tracking::service;
use tracking::{Actor, Report, ReportGroupBy, ReportQuery};
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Auth, TrackRead};
use crate::csv;
use crate::error::ApiError;
use crate::openapi::ReportGroupBy as ReportGroupBySchema;
use crate::paging::{self, Listing};
use crate::routes::invoices::Exact;
use crate::routes::{KeyedErrors, days, query_id};
use crate::state::ApiState;

/// What a report sums.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub(crate) struct ReportParams {
    /// The first UTC day, `YYYY-MM-DD`.
    #[param(required = true, value_type = String, format = Date)]
    from: Option<String>,
    /// The last UTC day (included), `YYYY-MM-DD`; at most 366 days after `from`'s.
    #[param(required = true, value_type = String, format = Date)]
    to: Option<String>,
    #[param(required = true, value_type = ReportGroupBySchema)]
    group_by: Option<String>,
    /// Only this user's time (owners and admins; a member's report is of their own time).
    #[param(format = Uuid)]
    user_id: Option<String>,
}

/// One group of a report.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportGroupBody {
    /// The project, user or tag id (`null` for time on no project, or with no tag), the
    /// task name, or the day `YYYY-MM-DD`.
    #[schema(required = true)]
    key: Option<String>,
    /// The project's or tag's title, the user's name (their email when they have none), the task name, or the day.
    title: String,
    #[schema(value_type = u64)]
    seconds: u128,
    /// Of the entries marked billable, billed or not.
    #[schema(value_type = u64)]
    billable_seconds: u128,
    /// Of the entries billed on an invoice.
    #[schema(value_type = u64)]
    invoiced_seconds: u128,
    /// The billable hours times each entry's project rate, at the currency's minor unit;
    /// `null` when no entry of the group has a rate.
    #[schema(required = true, value_type = Option<f64>)]
    amount: Option<Exact>,
}

/// Where the time of a span of days went.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReportBody {
    #[schema(format = Date)]
    from: String,
    #[schema(format = Date)]
    to: String,
    #[schema(value_type = ReportGroupBySchema)]
    group_by: &'static str,
    /// The team's currency, which `amount`s are in.
    #[schema(example = "EUR")]
    currency: &'static str,
    groups: Vec<ReportGroupBody>,
    /// Every entry's time once (a report by tag counts an entry under each of its tags, so
    /// its groups may add up to more).
    #[schema(value_type = u64)]
    total_seconds: u128,
}

/// Report tracked time
///
/// Sums the time entries dated `from` to `to` (UTC days, both included, at most 366) per
/// project, task, user, tag or day: each group's time, its billable and invoiced part,
/// and the amount its billable hours come to at their projects' rates. An entry with two
/// tags counts under both. Members see their own time; owners and admins the team's, or
/// one user's with `userId`. Groups come by title (days in order), time on no project or
/// with no tag last. Needs `track:read`.
#[utoipa::path(
    tag = "Reports",
    params(ReportParams),
    responses(
        (status = 200, description = "The report; with `Accept: text/csv`, its groups as CSV", content((ReportBody = "application/json"), (String = "text/csv"))),
        (status = 400, description = "A query parameter missing or invalid (the message names it)", body = crate::ErrorBody),
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn get_report(
    auth: Auth<TrackRead>,
    request: HttpRequest,
    listing: Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let report = report(&state, &auth.principal, listing.parameters).await?;
    if !csv::wanted(&request) {
        return Ok(HttpResponse::Ok().insert_header((header::VARY, csv::VARY)).json(report));
    }
    let mut rows = csv::Rows::new();
    rows.row(["key", "title", "seconds", "hours", "billableSeconds", "invoicedSeconds", "amount"])?;
    for group in &report.groups {
        rows.row([
            group.key.clone().unwrap_or_default(),
            group.title.clone(),
            group.seconds.to_string(),
            hours(group.seconds),
            group.billable_seconds.to_string(),
            group.invoiced_seconds.to_string(),
            group.amount.map(|amount| amount.0.to_string()).unwrap_or_default(),
        ])?;
    }
    let name = format!("report-{}-{}-{}.csv", report.from, report.to, report.group_by);
    Ok(csv::answer(&name, rows.take()?))
}

/// Seconds as hours to 4 decimals, as invoices bill them.
fn hours(seconds: u128) -> String {
    u64::try_from(seconds)
        .map_or_else(|_| String::new(), |s| tracking::invoicing::hours(s).normalize().to_string())
}

/// The report `parameters` ask for, of the time the caller may see.
pub(crate) async fn report(
    state: &ApiState,
    who: &Principal,
    parameters: serde_json::Map<String, serde_json::Value>,
) -> Result<ReportBody, ApiError> {
    let params: ReportParams = paging::read_query(parameters)?;
    let required =
        |value: Option<String>, name: &str| value.ok_or_else(|| kernel::FieldError::new(name, "is required"));
    let (from, to) = (required(params.from, "from")?, required(params.to, "to")?);
    let period = days(&from, &to, Some(MAX_REPORT_DAYS))?;
    let group_by =
        ReportGroupBy::parse(&required(params.group_by, "groupBy")?).map_err(|e| e.at("groupBy"))?;
    let query = ReportQuery { period, user: query_id(params.user_id.as_deref(), "userId")?, group_by };
    let stores = &state.stores;
    let Report { groups, currency, total_seconds } =
        service::time_report(&*stores.track, &*stores.accounts, &Actor::from(who), who.team_id, query)
            .await?;
    let groups = groups
        .into_iter()
        .map(|group| ReportGroupBody {
            key: group.key,
            title: group.title,
            seconds: group.seconds,
            billable_seconds: group.billable_seconds,
            invoiced_seconds: group.invoiced_seconds,
            amount: group.amount.map(Exact),
        })
        .collect();
    Ok(ReportBody {
        from,
        to,
        group_by: group_by.as_str(),
        currency: currency.as_str(),
        groups,
        total_seconds,
    })
}
