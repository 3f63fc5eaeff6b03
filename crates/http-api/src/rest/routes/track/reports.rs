//! `/v1/track/reports`: where a span's time went, summed by the database.

use accounts::Principal;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::{Deserialize, Serialize};
use tracking::report::MAX_REPORT_DAYS;
use tracking::service;
use tracking::{Actor, Report, ReportGroupBy, ReportQuery};
use utoipa::{IntoParams, ToSchema};

use crate::conventions::error::ApiError;
use crate::rest::auth::{Auth, TrackRead};
use crate::rest::csv;
use crate::rest::openapi::ReportGroupBy as ReportGroupBySchema;
use crate::rest::paging::{self, Listing};
use crate::rest::routes::{KeyedErrors, days, query_id};
use crate::rest::state::ApiState;

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
    /// The time of the group's entries; a whole number that may exceed 2^63.
    #[schema(schema_with = summed_seconds)]
    seconds: u128,
    /// Of the entries marked billable, billed or not.
    #[schema(schema_with = summed_seconds)]
    billable_seconds: u128,
    /// Of the entries billed on an invoice.
    #[schema(schema_with = summed_seconds)]
    invoiced_seconds: u128,
    /// The billable hours times each entry's project rate, at the currency's minor unit;
    /// `null` when no entry of the group has a rate.
    #[schema(required = true, value_type = Option<f64>)]
    amount: Option<Amount>,
}

/// A sum of seconds: a whole number that may pass 2^63 (and 2^53, past which a JavaScript
/// number is no longer exact), so it declares no 64-bit format. The fields' own comments
/// describe it.
fn summed_seconds() -> utoipa::openapi::schema::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .minimum(Some(0))
        .build()
}

/// A report's amount as a JSON number, written with every digit whatever its size.
#[derive(Debug)]
struct Amount(tracking::ReportAmount);

impl Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde_json keeps a number's text exactly (`arbitrary_precision`).
        let number: serde_json::Number = self.0.to_string().parse().map_err(serde::ser::Error::custom)?;
        number.serialize(serializer)
    }
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
    #[schema(schema_with = summed_seconds)]
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
        (status = 400, description = "A query parameter missing or invalid (the message names it)", body = crate::conventions::error::ErrorBody),
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
            tracking::invoicing::hours_text(group.seconds),
            group.billable_seconds.to_string(),
            group.invoiced_seconds.to_string(),
            group.amount.as_ref().map(|amount| amount.0.to_string()).unwrap_or_default(),
        ])?;
    }
    let name = format!("report-{}-{}-{}.csv", report.from, report.to, report.group_by);
    Ok(csv::answer(&name, rows.take()?))
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
            amount: group.amount.map(Amount),
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
