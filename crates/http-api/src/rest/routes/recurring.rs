//! `/v1/recurring-invoices`: invoices that bill themselves once per period (retainers,
//! hosting, maintenance), their schedules, pauses, the next dates and what became of each
//! period.

use accounts::{Permission, Principal};
use actix_web::{HttpResponse, delete, get, patch, post, web};
use billing::invoice::Description;
use billing::money::{AMOUNT, TAX_PERCENTAGE};
use chrono::NaiveDate;
use kernel::{FieldError, Id, Words};
use recurring::service::{self as recurring_service, RecurringError};
use recurring::{
    DueDays, Ending, Frequency, Mode, NewRecurringInvoice, Pattern, RecurringChanges, RecurringInvoice,
    RecurringInvoiceId, RecurringRule, Run, Schedule, ScheduleInput, ScheduleRule, Template, UnbilledTime,
    Weekday,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};
use tracking::Actor;
use tracking::invoicing::GroupBy;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::conventions::body::{Json, Patch};
use crate::conventions::error::{ApiError, ErrorBody};
use crate::rest::auth::{Auth, InvoicesRead, InvoicesWrite, require};
use crate::rest::openapi::{
    GroupBy as GroupBySchema, RecurringFrequency, RecurringMode, RecurringRunStatus, RecurringStatus,
    VatCategory as VatCategorySchema, Weekday as WeekdaySchema,
};
use crate::rest::paging::{self, Page};
use crate::rest::routes::billed_time::{RoundingInput, project_ids, rounding, time_billing_rule};
use crate::rest::routes::discounts::{DiscountBody, DiscountInput};
use crate::rest::routes::invoices::{LineItemInput, invoice_rule, lines, vat};
use crate::rest::routes::numbers::{Exact, number};
use crate::rest::routes::track::projects::rate;
use crate::rest::routes::{
    BodyErrors, Deleted, KeyedErrors, NotFound, QueryErrors, Timestamp, body_id, created, not_found, path_id,
    query_day,
};
use crate::rest::state::ApiState;

/// The most dates a preview lists.
const MAX_PREVIEW: usize = 100;

/// What every invoice of a recurring invoice starts from. Its lines are priced when each
/// invoice is made, in the team's currency.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TemplateInput {
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$", max_length = 1000)]
    description: Option<String>,
    /// The lines of every invoice (0 to 1000); none when the period's unbilled time is
    /// all it bills.
    #[serde(default)]
    #[schema(max_items = 1000)]
    line_items: Vec<LineItemInput>,
    /// 0 to 100, at most 4 decimal places. When greater than 0 each invoice's tax is
    /// computed from it.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 100, default = 0)]
    tax_percentage: Option<Number>,
    /// A flat tax, rounded to the minor unit, when `taxPercentage` is 0 or left out; with
    /// `taxPercentage` above 0 it must equal the computed tax.
    #[serde(default)]
    #[schema(value_type = f64, minimum = 0, maximum = 1e21)]
    tax: Option<Number>,
    /// Each invoice is due this many days after its issue date (0 to 365); no due date
    /// when left out.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 365)]
    due_days: Option<Number>,
    /// Each invoice's VAT category, as on `POST /v1/invoices`; default `S`.
    #[serde(default)]
    #[schema(value_type = VatCategorySchema)]
    vat_category: Option<String>,
    /// Why no VAT is charged, where the category needs it (as on `POST /v1/invoices`).
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]*$",
        min_length = 1,
        max_length = 1000
    )]
    vat_exemption_reason: Option<String>,
    /// Each invoice's discount of the whole, as on `POST /v1/invoices`.
    #[serde(default)]
    discount: Option<DiscountInput>,
}

/// Which days a recurring invoice bills on.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ScheduleBody {
    #[schema(value_type = RecurringFrequency)]
    frequency: String,
    /// Every `interval`-th week, month or year (1 to 100; default 1).
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 100)]
    interval: Option<Number>,
    /// Monthly and yearly (required there): the day of the month, 1 to 28, or -1 for the
    /// last day (31 January, 28 or 29 February, 30 April …).
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = -1, maximum = 28)]
    day_of_month: Option<Number>,
    /// Weekly only; default the weekday of `startsOn`.
    #[serde(default)]
    #[schema(value_type = Option<WeekdaySchema>)]
    weekday: Option<String>,
    /// Yearly only, 1 to 12; default the month of `startsOn`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 12)]
    month: Option<Number>,
}

/// The period's unbilled time, added to each invoice: the billable time not yet invoiced
/// from the previous scheduled day to the day before this one (for the first invoice, one
/// interval before its day), billed as `POST /v1/invoices/from-time` bills it.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct UnbilledTimeInput {
    /// Only time on these projects of the team (1 to 1000), each the client's or no
    /// client's. Default: all the time of the period the client may be billed for: on its
    /// projects, on projects of no client, and on no project. Time on another client's
    /// project is never billed.
    #[serde(default)]
    #[schema(value_type = Option<Vec<uuid::Uuid>>, min_items = 1, max_items = 1000)]
    project_ids: Option<Vec<String>>,
    /// Only time on the client's own projects: none on projects of no client, nor on no
    /// project. Default `false`.
    #[serde(default)]
    client_projects_only: bool,
    /// One line per project (default), per task name (and rate), or per entry.
    #[serde(default)]
    #[schema(value_type = Option<GroupBySchema>)]
    group_by: Option<String>,
    #[serde(default)]
    rounding: Option<RoundingInput>,
    /// An hourly rate for every line instead of each project's `rate`; without it, time
    /// on a project with no rate fails the period (its run says why).
    #[serde(default)]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 1_000_000_000_000_i64)]
    rate: Option<Number>,
}

/// A new recurring invoice. It bills from its first scheduled day on or after today:
/// a `startsOn` in the past bills no period before today.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({
    "clientId": "0193a5c4-7d2e-7c41-9a3b-5f1e2d3c4b5a",
    "template": {"description": "Monthly retainer", "lineItems": [
        {"description": "Retainer", "unitPrice": 1500, "quantity": 1}], "taxPercentage": 19, "dueDays": 14},
    "schedule": {"frequency": "monthly", "dayOfMonth": -1},
    "startsOn": "2027-01-01", "count": 12, "mode": "issue",
    "includeUnbilledTime": {"groupBy": "project", "rate": 95}}))]
pub(crate) struct RecurringInput {
    #[schema(value_type = Uuid)]
    client_id: String,
    template: TemplateInput,
    schedule: ScheduleBody,
    /// The schedule's first possible day, `YYYY-MM-DD` (UTC).
    #[schema(value_type = String, format = Date)]
    starts_on: String,
    /// The last day it may bill on (included). Not with `count`.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date)]
    ends_on: Option<String>,
    /// How many periods it bills, counted from `startsOn` (1 to 1000). Not with `endsOn`.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000)]
    count: Option<Number>,
    /// `issue` makes each invoice; `issue_and_send` e-mails it too, as
    /// `POST /v1/invoices/{id}/send` does. Default `issue`.
    #[serde(default)]
    #[schema(value_type = Option<RecurringMode>)]
    mode: Option<String>,
    #[serde(default)]
    include_unbilled_time: Option<UnbilledTimeInput>,
}

/// A change. Only the fields given change; it applies to the periods still to come. A new
/// schedule (any of `schedule`, `startsOn`, `endsOn`, `count`) starts over from its first
/// day after today (today, when today's period is still to be made).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schema(example = json!({"template": {"lineItems": [
    {"description": "Retainer", "unitPrice": 1650, "quantity": 1}], "taxPercentage": 19, "dueDays": 14}}))]
pub(crate) struct RecurringPatch {
    #[serde(default)]
    #[schema(value_type = Uuid)]
    client_id: Patch<String>,
    #[serde(default)]
    #[schema(value_type = TemplateInput)]
    template: Patch<TemplateInput>,
    #[serde(default)]
    #[schema(value_type = ScheduleBody)]
    schedule: Patch<ScheduleBody>,
    #[serde(default)]
    #[schema(value_type = String, format = Date)]
    starts_on: Patch<String>,
    /// `null` removes the end.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Date, nullable)]
    ends_on: Patch<String>,
    /// `null` removes the count.
    #[serde(default)]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000, nullable)]
    count: Patch<Number>,
    #[serde(default)]
    #[schema(value_type = RecurringMode)]
    mode: Patch<String>,
    /// `null` stops adding unbilled time.
    #[serde(default)]
    #[schema(value_type = Option<UnbilledTimeInput>, nullable)]
    include_unbilled_time: Patch<UnbilledTimeInput>,
}

/// A template as answers show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TemplateBody {
    #[schema(required = true)]
    description: Option<String>,
    line_items: Vec<TemplateLineBody>,
    #[schema(required = true)]
    tax_percentage: Option<Exact>,
    #[schema(required = true)]
    tax: Option<Exact>,
    #[schema(required = true)]
    due_days: Option<u16>,
    #[schema(value_type = VatCategorySchema)]
    vat_category: &'static str,
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
    /// Each invoice's discount of the whole, as given; null for none.
    #[schema(required = true)]
    discount: Option<DiscountBody>,
}

/// A template's line, as given.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TemplateLineBody {
    description: String,
    unit_price: Exact,
    quantity: Exact,
    #[schema(required = true)]
    amount: Option<Exact>,
    /// The unit given; null counts ones (`C62`).
    #[schema(required = true)]
    unit_code: Option<String>,
    /// The line's own VAT category, as given; null takes the template's.
    #[schema(required = true, value_type = Option<VatCategorySchema>)]
    vat_category: Option<&'static str>,
    /// The line's own rate, as given; null takes the template's (see the invoice's lines).
    #[schema(required = true)]
    tax_percentage: Option<Exact>,
    /// The line's own exemption reason, as given.
    #[schema(required = true)]
    vat_exemption_reason: Option<String>,
    /// The line's discount, as given; null for none.
    #[schema(required = true)]
    discount: Option<DiscountBody>,
}

/// A schedule as answers show it, every part spelled out.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScheduleAnswer {
    #[schema(value_type = RecurringFrequency)]
    frequency: &'static str,
    interval: u32,
    #[schema(required = true)]
    day_of_month: Option<i64>,
    #[schema(value_type = Option<WeekdaySchema>, required = true)]
    weekday: Option<&'static str>,
    #[schema(required = true)]
    month: Option<u32>,
    /// RFC 5545's rule of the same days: `FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1`.
    rrule: String,
}

/// The unbilled time each invoice adds, as answers show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct UnbilledTimeBody {
    #[schema(required = true)]
    project_ids: Option<Vec<Uuid>>,
    #[schema(value_type = GroupBySchema)]
    group_by: &'static str,
    #[schema(required = true)]
    rounding: Option<RoundingBody>,
    #[schema(required = true)]
    rate: Option<Exact>,
    client_projects_only: bool,
}

#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct RoundingBody {
    minutes: i64,
    #[schema(value_type = crate::rest::openapi::RoundingMode)]
    mode: &'static str,
}

/// A recurring invoice.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecurringBody {
    id: Uuid,
    client_id: Uuid,
    template: TemplateBody,
    schedule: ScheduleAnswer,
    #[schema(value_type = String, format = Date)]
    starts_on: String,
    #[schema(value_type = Option<String>, format = Date, required = true)]
    ends_on: Option<String>,
    #[schema(required = true)]
    count: Option<u32>,
    #[schema(value_type = RecurringMode)]
    mode: &'static str,
    #[schema(required = true)]
    include_unbilled_time: Option<UnbilledTimeBody>,
    /// `active`: its periods are made as they come; `paused`: nothing is made (resuming
    /// does not make the paused periods); `completed`: its schedule has no day left.
    #[schema(value_type = RecurringStatus)]
    status: &'static str,
    /// The next day it bills on; null unless active.
    #[schema(value_type = Option<String>, format = Date, required = true)]
    next_run_on: Option<String>,
    /// The invoices it made so far: the last one's `recurringSequence`.
    generated_count: u32,
    /// The user who made it: with `includeUnbilledTime` each period bills the time that
    /// user may bill then (a member's own, the team's for owners and admins).
    created_by: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
}

fn day_text(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

fn exact(value: billing::money::Decimal) -> Exact {
    Exact(value.normalize())
}

impl From<&RecurringInvoice> for RecurringBody {
    fn from(recurring: &RecurringInvoice) -> Self {
        let schedule = recurring.schedule;
        let (day_of_month, weekday, month) = match schedule.pattern() {
            Pattern::Weekly { weekday } => (None, Some(weekday.as_str()), None),
            Pattern::Monthly { day } => (Some(day.number()), None, None),
            Pattern::Yearly { month, day } => (Some(day.number()), None, Some(month)),
        };
        let (ends_on, count) = match schedule.ending() {
            Ending::Never => (None, None),
            Ending::On(day) => (Some(day_text(day)), None),
            Ending::After(count) => (None, Some(count)),
        };
        let template = &recurring.template;
        Self {
            id: recurring.id.as_uuid(),
            client_id: recurring.client_id.as_uuid(),
            template: TemplateBody {
                description: template.description.as_ref().map(|d| d.as_str().to_owned()),
                line_items: template
                    .line_items
                    .iter()
                    .map(|line| TemplateLineBody {
                        description: line.description.as_str().to_owned(),
                        unit_price: exact(line.unit_price),
                        quantity: exact(line.quantity),
                        amount: line.amount.map(exact),
                        unit_code: line.unit_code.as_ref().map(|code| code.as_str().to_owned()),
                        vat_category: line.vat.category.map(billing::VatCategory::as_str),
                        tax_percentage: line.vat.percentage.map(exact),
                        vat_exemption_reason: line
                            .vat
                            .exemption_reason
                            .as_ref()
                            .map(|r| r.as_str().to_owned()),
                        discount: line.discount.map(DiscountBody::as_given),
                    })
                    .collect(),
                tax_percentage: template.tax_percentage.map(exact),
                tax: template.tax.map(exact),
                due_days: template.due_days.map(DueDays::days),
                vat_category: template.vat.category().as_str(),
                vat_exemption_reason: template.vat.exemption_reason().map(|r| r.as_str().to_owned()),
                discount: template.discount.map(DiscountBody::as_given),
            },
            schedule: ScheduleAnswer {
                frequency: schedule.pattern().frequency().as_str(),
                interval: schedule.interval(),
                day_of_month,
                weekday,
                month,
                rrule: schedule.rrule(),
            },
            starts_on: day_text(schedule.starts_on()),
            ends_on,
            count,
            mode: recurring.mode.as_str(),
            include_unbilled_time: recurring.unbilled_time.as_ref().map(|time| UnbilledTimeBody {
                project_ids: time.projects.as_ref().map(|ids| ids.iter().map(Id::as_uuid).collect()),
                group_by: time.group_by.as_str(),
                rounding: time
                    .rounding
                    .map(|r| RoundingBody { minutes: r.minutes(), mode: r.mode().as_str() }),
                rate: time.rate.map(|rate| exact(rate.amount())),
                client_projects_only: time.client_projects_only,
            }),
            status: recurring.status.as_str(),
            next_run_on: recurring.next_run().map(|next| day_text(next.on)),
            generated_count: recurring.generated_count,
            created_by: recurring.created_by.as_uuid(),
            created_at: Timestamp(recurring.created_at),
            updated_at: Timestamp(recurring.updated_at),
        }
    }
}

/// A whole number field within `range`.
fn whole(value: &Number, field: &str, range: std::ops::RangeInclusive<i64>) -> Result<i64, FieldError> {
    let refused = || {
        FieldError::new(field, format!("must be a whole number from {} to {}", range.start(), range.end()))
    };
    let whole = kernel::number::whole_number(&value.to_string()).ok_or_else(refused)?;
    i64::try_from(whole).ok().filter(|n| range.contains(n)).ok_or_else(refused)
}

/// The template's field of a rule its lines broke.
fn in_template(error: FieldError) -> FieldError {
    FieldError::new(format!("template.{}", error.field), error.message)
}

impl TemplateInput {
    fn parse(self) -> Result<Template, FieldError> {
        let vat = vat(self.vat_category.as_deref(), self.vat_exemption_reason).map_err(in_template)?;
        Ok(Template {
            discount: self.discount.map(|d| d.parse("template.discount")).transpose()?,
            vat: vat.unwrap_or_default(),
            description: self
                .description
                .map(|d| Description::parse(d).map_err(|e| e.at("template.description")))
                .transpose()?,
            line_items: lines(self.line_items).map_err(in_template)?,
            tax_percentage: self
                .tax_percentage
                .map(|n| number(&n, "template.taxPercentage", TAX_PERCENTAGE))
                .transpose()?,
            tax: self.tax.map(|n| number(&n, "template.tax", AMOUNT)).transpose()?,
            due_days: self
                .due_days
                .map(|n| {
                    let days = whole(&n, "template.dueDays", 0..=DueDays::MAX)?;
                    DueDays::new(days).map_err(recurring_rule)
                })
                .transpose()?,
        })
    }
}

impl UnbilledTimeInput {
    fn parse(self) -> Result<UnbilledTime, FieldError> {
        let at = |field: &str| format!("includeUnbilledTime.{field}");
        Ok(UnbilledTime {
            projects: project_ids(self.project_ids, &at("projectIds"))?,
            group_by: self
                .group_by
                .as_deref()
                .map(GroupBy::parse)
                .transpose()
                .map_err(|e| e.at(at("groupBy")))?
                .unwrap_or_default(),
            rounding: self
                .rounding
                .map(|r| rounding(&r).map_err(|e| FieldError::new(at(&e.field), e.message)))
                .transpose()?,
            rate: self.rate.as_ref().map(|r| rate(r, &at("rate"))).transpose()?,
            client_projects_only: self.client_projects_only,
        })
    }
}

/// The parts of a schedule as given: what a create gives, or a change merges with the
/// stored schedule.
struct ScheduleParts {
    body: ScheduleBody,
    starts_on: NaiveDate,
    ends_on: Option<NaiveDate>,
    count: Option<i64>,
}

impl ScheduleParts {
    fn parse(self) -> Result<Schedule, FieldError> {
        let body = self.body;
        let frequency = Frequency::parse_word(&body.frequency).map_err(|e| e.at("schedule.frequency"))?;
        let input = ScheduleInput {
            interval: body
                .interval
                .as_ref()
                .map(|n| whole(n, "schedule.interval", 1..=Schedule::MAX_INTERVAL))
                .transpose()?
                .unwrap_or(1),
            day_of_month: body
                .day_of_month
                .as_ref()
                .map(|n| whole(n, "schedule.dayOfMonth", -1..=28))
                .transpose()?,
            weekday: body
                .weekday
                .as_deref()
                .map(|w| Weekday::parse_word(w).map_err(|e| e.at("schedule.weekday")))
                .transpose()?,
            month: body.month.as_ref().map(|n| whole(n, "schedule.month", 1..=12)).transpose()?,
            ends_on: self.ends_on,
            count: self.count,
            ..ScheduleInput::starting(frequency, self.starts_on)
        };
        Schedule::new(&input).map_err(|rule| recurring_rule(RecurringRule::Schedule(rule)))
    }
}

fn count(value: &Number) -> Result<i64, FieldError> {
    whole(value, "count", 1..=Schedule::MAX_COUNT)
}

fn mode(text: &str) -> Result<Mode, FieldError> {
    Mode::parse_word(text).map_err(|e| e.at("mode"))
}

/// A rule of recurring invoices in the REST API's words: the field, then what to send.
fn recurring_rule(rule: RecurringRule) -> FieldError {
    let field = match rule {
        RecurringRule::Schedule(rule) => match rule {
            ScheduleRule::Interval => "schedule.interval",
            ScheduleRule::DayOfMonth
            | ScheduleRule::DayOfMonthMissing
            | ScheduleRule::DayOfMonthNotWeekly => "schedule.dayOfMonth",
            ScheduleRule::WeekdayNotWeekly => "schedule.weekday",
            ScheduleRule::Month | ScheduleRule::MonthNotYearly => "schedule.month",
            ScheduleRule::TwoEndings | ScheduleRule::Count => "count",
            ScheduleRule::EndsBeforeStart | ScheduleRule::NoDay => "endsOn",
        },
        RecurringRule::DueDays => "template.dueDays",
        RecurringRule::NothingToBill => "template.lineItems",
        RecurringRule::NoDayLeft => "startsOn",
        RecurringRule::Completed => "status",
    };
    let advice = match rule {
        RecurringRule::Schedule(ScheduleRule::TwoEndings) => "; give endsOn or count",
        RecurringRule::NothingToBill => "; give a line item, or includeUnbilledTime",
        RecurringRule::NoDayLeft => "; move startsOn, endsOn or count on",
        _ => "",
    };
    FieldError::new(field, format!("{rule}{advice}"))
}

impl From<RecurringError> for ApiError {
    fn from(error: RecurringError) -> Self {
        match error {
            RecurringError::Rule(RecurringRule::Completed) => ApiError::conflict(
                "recurring invoice: it is completed (its schedule has no day left); change its schedule to start it again",
            ),
            RecurringError::Rule(rule) => recurring_rule(rule).into(),
            RecurringError::UnknownClient => FieldError::new("clientId", "no such client in the team").into(),
            RecurringError::NotFound => not_found("recurring invoice"),
            RecurringError::TimeOfAnother => ApiError::new(
                actix_web::http::StatusCode::FORBIDDEN,
                "includeUnbilledTime: a member bills only their own time, and another user made this \
                 recurring invoice; ask an owner or admin",
            ),
            RecurringError::Conflict => ApiError::conflict(
                "recurring invoice: it changed while this request was applied; read it and try again",
            ),
            RecurringError::NoMail => ApiError::conflict(
                "mode: issue_and_send e-mails each invoice, and e-mail is not configured on this server: set BILLABLE_SMTP_URL and BILLABLE_MAIL_FROM, or use issue",
            ),
            RecurringError::ClientCurrency { client, team } => FieldError::new(
                "clientId",
                format!(
                    "the client is billed in {client}: a recurring invoice bills in the team's currency, \
                     {team}, as it states no exchange rate"
                ),
            )
            .into(),
            RecurringError::Template(rule) => in_template(invoice_rule(&rule)).into(),
            RecurringError::Projects(rule) => {
                let error = time_billing_rule(&rule);
                FieldError::new(format!("includeUnbilledTime.{}", error.field), error.message).into()
            }
            RecurringError::Billing(error) => error.into(),
            RecurringError::Store(error) => error.into(),
        }
    }
}

/// The ports recurring invoices are kept with.
fn ports(state: &ApiState) -> recurring_service::Ports<'_> {
    let stores = &state.stores;
    recurring_service::Ports {
        recurring: &*stores.recurring,
        billing: &*stores.billing,
        accounts: &*stores.accounts,
        tracking: &*stores.track,
    }
}

/// Make a recurring invoice
///
/// Bills the client on each day of the schedule with an invoice of the template (and,
/// with `includeUnbilledTime`, the period's unbilled time), issued on that day and due
/// `dueDays` later. A job pass makes each invoice once its day comes, exactly once however
/// many replicas run it; after downtime only the latest period due is made and the missed
/// ones are recorded `skipped`. Needs `invoices:write`, and `track:read` with
/// `includeUnbilledTime`, whose time is billed as `POST /v1/invoices/from-time` bills it for
/// the caller: a member's own, the team's for owners and admins (`createdBy`), checked
/// again at each period against that user as the team has them then (a period they may no
/// longer bill fails and bills nothing).
#[utoipa::path(
    tag = "Recurring invoices",
    request_body = RecurringInput,
    responses(
        (status = 201, description = "Created", body = RecurringBody,
         headers(("Location" = String, description = "URL of the recurring invoice"))),
        BodyErrors,
        KeyedErrors,
    )
)]
#[post("")]
pub(crate) async fn create_recurring_invoice(
    auth: Auth<InvoicesWrite>,
    Json(input): Json<RecurringInput>,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let made = create(&state, &auth.principal, input).await?;
    Ok(created(format!("/v1/recurring-invoices/{}", made.id), made))
}

pub(crate) async fn create(
    state: &ApiState,
    who: &Principal,
    input: RecurringInput,
) -> Result<RecurringBody, ApiError> {
    let client_id = body_id(&input.client_id, "clientId", "client")?;
    let template = input.template.parse()?;
    let schedule = ScheduleParts {
        body: input.schedule,
        starts_on: query_day(&input.starts_on, "startsOn")?,
        ends_on: input.ends_on.as_deref().map(|d| query_day(d, "endsOn")).transpose()?,
        count: input.count.as_ref().map(count).transpose()?,
    }
    .parse()?;
    let mode = input.mode.as_deref().map(mode).transpose()?.unwrap_or_default();
    if input.include_unbilled_time.is_some() {
        require(who, Permission::TrackRead, "includeUnbilledTime")?;
    }
    let unbilled_time = input.include_unbilled_time.map(UnbilledTimeInput::parse).transpose()?;
    let new =
        NewRecurringInvoice { created_by: who.user_id, client_id, template, schedule, mode, unbilled_time };
    let (ports, mail) = (ports(state), state.settings.sending.mail_from.is_some());
    let recurring = recurring_service::create(ports, mail, who.team_id, new, state.clock.now()).await?;
    Ok(RecurringBody::from(&recurring))
}

/// List the recurring invoices
///
/// The team's recurring invoices, oldest first. With `limit`, a page. Needs `invoices:read`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(paging::PageQuery),
    responses(
        (status = 200, description = "The team's recurring invoices", body = Vec<RecurringBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors,
        KeyedErrors,
    )
)]
#[get("")]
pub(crate) async fn list_recurring_invoices(
    auth: Auth<InvoicesRead>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    listing.respond(list(&state, &auth.principal, listing.parameters.clone()).await)
}

pub(crate) async fn list(
    state: &ApiState,
    who: &Principal,
    query: Map<String, Value>,
) -> Result<Page<RecurringBody>, ApiError> {
    let page = paging::read_query::<paging::PageQuery>(query)?;
    let position = |cursor: &str| {
        let parts = paging::decode_cursor(cursor)?;
        match parts.as_slice() {
            [id] => RecurringInvoiceId::parse(id).ok_or_else(paging::not_a_cursor),
            _ => Err(paging::not_a_cursor()),
        }
    };
    let cursor = |recurring: &RecurringInvoice| paging::encode_cursor(&[recurring.id.to_string()]);
    let page = paging::page_from_store(&page, position, cursor, |after, limit| async move {
        let limit = limit.unwrap_or(paging::MAX_LIMIT * 10);
        Ok(state.stores.recurring.list_recurring(who.team_id, after, limit).await?)
    })
    .await?;
    Ok(page.map(|recurring| RecurringBody::from(&recurring)))
}

fn recurring_id(text: &str) -> Result<RecurringInvoiceId, ApiError> {
    path_id(text, "recurring invoice")
}

/// Get a recurring invoice
///
/// Needs `invoices:read`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id")),
    responses((status = 200, description = "The recurring invoice", body = RecurringBody), NotFound, KeyedErrors)
)]
#[get("/{id}")]
pub(crate) async fn get_recurring_invoice(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RecurringBody>, ApiError> {
    let id = recurring_id(&path)?;
    let recurring = recurring_service::get(&*state.stores.recurring, auth.principal.team_id, id).await?;
    Ok(web::Json(RecurringBody::from(&recurring)))
}

/// Change a recurring invoice
///
/// Only the fields given change, and only for the periods still to come: the invoices
/// made stay as they are. Needs `invoices:write`, and `track:read` to set
/// `includeUnbilledTime`, which a member may set only on a recurring invoice of their own
/// (403 otherwise).
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id")),
    request_body = RecurringPatch,
    responses(
        (status = 200, description = "The changed recurring invoice", body = RecurringBody),
        (status = 409, description = "It kept changing meanwhile (job passes); nothing was written", body = ErrorBody),
        BodyErrors, NotFound, KeyedErrors
    )
)]
#[patch("/{id}")]
pub(crate) async fn update_recurring_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    Json(input): Json<RecurringPatch>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RecurringBody>, ApiError> {
    let who = &auth.principal;
    let team = who.team_id;
    let id = recurring_id(&path)?;
    if matches!(input.include_unbilled_time, Patch::Value(_)) {
        require(who, Permission::TrackRead, "includeUnbilledTime")?;
    }
    let current = recurring_service::get(&*state.stores.recurring, team, id).await?;
    let asked = changes(&current, input)?;
    let (ports, mail) = (ports(&state), state.settings.sending.mail_from.is_some());
    let changed =
        recurring_service::change(ports, mail, &Actor::from(who), team, id, asked, state.clock.now()).await?;
    Ok(web::Json(RecurringBody::from(&changed)))
}

/// What `input` changes of `current`.
fn changes(current: &RecurringInvoice, input: RecurringPatch) -> Result<RecurringChanges, FieldError> {
    let client_id =
        input.client_id.required("clientId")?.map(|id| body_id(&id, "clientId", "client")).transpose()?;
    let template = input.template.required("template")?.map(TemplateInput::parse).transpose()?;
    let mode = input.mode.required("mode")?.as_deref().map(mode).transpose()?;
    let unbilled_time = input
        .include_unbilled_time
        .nullable()
        .map(|time| time.map(UnbilledTimeInput::parse).transpose())
        .transpose()?;
    let body = input.schedule.required("schedule")?;
    let starts_on = input.starts_on.required("startsOn")?;
    let (ends_on, count_given) = (input.ends_on.nullable(), input.count.nullable());
    let schedule = if body.is_none() && starts_on.is_none() && ends_on.is_none() && count_given.is_none() {
        None
    } else {
        let stored = current.schedule;
        let (stored_ends_on, stored_count) = match stored.ending() {
            Ending::Never => (None, None),
            Ending::On(day) => (Some(day), None),
            Ending::After(count) => (None, Some(i64::from(count))),
        };
        // An end given replaces the other kind of end.
        let (ends_on, count) = match (ends_on, count_given) {
            (None, None) => (stored_ends_on, stored_count),
            (Some(ends_on), None) => (ends_on.as_deref().map(|d| query_day(d, "endsOn")).transpose()?, None),
            (None, Some(count_given)) => (None, count_given.as_ref().map(count).transpose()?),
            (Some(ends_on), Some(count_given)) => (
                ends_on.as_deref().map(|d| query_day(d, "endsOn")).transpose()?,
                count_given.as_ref().map(count).transpose()?,
            ),
        };
        let body = body.unwrap_or_else(|| stored_body(&stored));
        let starts_on = match starts_on {
            Some(day) => query_day(&day, "startsOn")?,
            None => stored.starts_on(),
        };
        Some(ScheduleParts { body, starts_on, ends_on, count }.parse()?)
    };
    Ok(RecurringChanges { client_id, template, schedule, mode, unbilled_time })
}

/// The stored schedule's pattern as a request would give it.
fn stored_body(schedule: &Schedule) -> ScheduleBody {
    let (day_of_month, weekday, month) = match schedule.pattern() {
        Pattern::Weekly { weekday } => (None, Some(weekday.as_str().to_owned()), None),
        Pattern::Monthly { day } => (Some(day.number()), None, None),
        Pattern::Yearly { month, day } => (Some(day.number()), None, Some(i64::from(month))),
    };
    ScheduleBody {
        frequency: schedule.pattern().frequency().as_str().to_owned(),
        interval: Some(Number::from(schedule.interval())),
        day_of_month: day_of_month.map(Number::from),
        weekday,
        month: month.map(Number::from),
    }
}

/// End a recurring invoice
///
/// Deletes it and its runs; the invoices it made stay. Needs `invoices:write`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id")),
    responses((status = 200, description = "Deleted", body = Deleted), NotFound, KeyedErrors)
)]
#[delete("/{id}")]
pub(crate) async fn delete_recurring_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Deleted>, ApiError> {
    let id = recurring_id(&path)?;
    if !state.stores.recurring.delete_recurring(auth.principal.team_id, id).await? {
        return Err(not_found("recurring invoice"));
    }
    Ok(Deleted::new("recurring invoice"))
}

/// Pause a recurring invoice
///
/// Nothing is made until it is resumed. Pausing a paused one changes nothing; a completed
/// one answers 409. Needs `invoices:write`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id")),
    responses(
        (status = 200, description = "The paused recurring invoice", body = RecurringBody),
        (status = 409, description = "It is completed, or kept changing meanwhile", body = ErrorBody),
        NotFound, KeyedErrors
    )
)]
#[post("/{id}/pause")]
pub(crate) async fn pause_recurring_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RecurringBody>, ApiError> {
    Ok(web::Json(pause(&state, &auth.principal, &path).await?))
}

pub(crate) async fn pause(state: &ApiState, who: &Principal, id: &str) -> Result<RecurringBody, ApiError> {
    let id = recurring_id(id)?;
    let paused =
        recurring_service::pause(&*state.stores.recurring, who.team_id, id, state.clock.now()).await?;
    Ok(RecurringBody::from(&paused))
}

/// Resume a recurring invoice
///
/// Active again: its next period is the first on or after today, so the periods of the
/// pause are never billed (no backfill). Completed when its schedule has no day left.
/// Resuming an active one changes nothing; a completed one answers 409. Needs
/// `invoices:write`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id")),
    responses(
        (status = 200, description = "The resumed recurring invoice", body = RecurringBody),
        (status = 409, description = "It is completed, or kept changing meanwhile", body = ErrorBody),
        NotFound, KeyedErrors
    )
)]
#[post("/{id}/resume")]
pub(crate) async fn resume_recurring_invoice(
    auth: Auth<InvoicesWrite>,
    path: web::Path<String>,
    state: web::Data<ApiState>,
) -> Result<web::Json<RecurringBody>, ApiError> {
    Ok(web::Json(resume(&state, &auth.principal, &path).await?))
}

pub(crate) async fn resume(state: &ApiState, who: &Principal, id: &str) -> Result<RecurringBody, ApiError> {
    let id = recurring_id(id)?;
    let resumed =
        recurring_service::resume(&*state.stores.recurring, who.team_id, id, state.clock.now()).await?;
    Ok(RecurringBody::from(&resumed))
}

/// How many dates a preview lists.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PreviewQuery {
    /// 1 to 100; default 12.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 100)]
    count: Option<String>,
}

/// One period to come.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PreviewPeriod {
    /// Its place in the schedule (1 for the schedule's first day).
    sequence: u32,
    /// The day its invoice is made and issued on.
    #[schema(value_type = String, format = Date)]
    period_start: String,
    /// The invoice's due date; null without `dueDays`.
    #[schema(value_type = Option<String>, format = Date, required = true)]
    due_date: Option<String>,
    /// The first day whose unbilled time it bills; null without `includeUnbilledTime`.
    #[schema(value_type = Option<String>, format = Date, required = true)]
    time_from: Option<String>,
    /// The last day whose unbilled time it bills (included).
    #[schema(value_type = Option<String>, format = Date, required = true)]
    time_to: Option<String>,
}

/// Preview the next dates
///
/// The next `count` days it bills on, from its next period, with each invoice's due date
/// and the days of time it bills; none unless active. Needs `invoices:read`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id"), PreviewQuery),
    responses(
        (status = 200, description = "The periods to come", body = Vec<PreviewPeriod>),
        QueryErrors, NotFound, KeyedErrors
    )
)]
#[get("/{id}/preview")]
pub(crate) async fn preview_recurring_invoice(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    query: web::Query<PreviewQuery>,
    state: web::Data<ApiState>,
) -> Result<web::Json<Vec<PreviewPeriod>>, ApiError> {
    let count = match query.count.as_deref() {
        None => 12,
        Some(text) => {
            text.parse::<usize>().ok().filter(|count| (1..=MAX_PREVIEW).contains(count)).ok_or_else(|| {
                FieldError::new("count", format!("must be a whole number from 1 to {MAX_PREVIEW}"))
            })?
        }
    };
    let id = recurring_id(&path)?;
    let recurring = recurring_service::get(&*state.stores.recurring, auth.principal.team_id, id).await?;
    let periods = recurring
        .preview(count)
        .into_iter()
        .map(|period| {
            let draft = recurring.draft(period);
            let days = recurring.unbilled_time.as_ref().and_then(|_| recurring.schedule.billed_days(period));
            PreviewPeriod {
                sequence: period.sequence,
                period_start: day_text(period.on),
                due_date: draft.due_date.map(|due| day_text(due.date_naive())),
                time_from: days.map(|days| day_text(days.first)),
                time_to: days.map(|days| day_text(days.last)),
            }
        })
        .collect();
    Ok(web::Json(periods))
}

/// What became of one period.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RecurringRunBody {
    #[schema(value_type = String, format = Date)]
    period_start: String,
    /// The invoice it made, while that exists.
    #[schema(required = true)]
    invoice_id: Option<Uuid>,
    /// `generated`: its invoice was made; `skipped`: missed while the service was down (a
    /// later period was billed instead), or nothing to bill; `failed`: the reason says why.
    #[schema(value_type = RecurringRunStatus)]
    status: &'static str,
    #[schema(required = true)]
    reason: Option<String>,
    ran_at: Timestamp,
}

impl From<Run> for RecurringRunBody {
    fn from(run: Run) -> Self {
        Self {
            period_start: day_text(run.period_start),
            invoice_id: run.invoice_id.map(|id| id.as_uuid()),
            status: run.status.as_str(),
            reason: run.reason,
            ran_at: Timestamp(run.ran_at),
        }
    }
}

/// List the runs
///
/// What became of each period so far, the latest first. With `limit`, a page. Needs
/// `invoices:read`.
#[utoipa::path(
    tag = "Recurring invoices",
    params(("id" = Uuid, Path, description = "Recurring invoice id"), paging::PageQuery),
    responses(
        (status = 200, description = "Its runs, the latest period first", body = Vec<RecurringRunBody>,
         headers(("Link" = String, description = "`<URL of the next page>; rel=\"next\"`, on a page with more after it"))),
        QueryErrors, NotFound, KeyedErrors
    )
)]
#[get("/{id}/runs")]
pub(crate) async fn list_recurring_runs(
    auth: Auth<InvoicesRead>,
    path: web::Path<String>,
    listing: paging::Listing,
    state: web::Data<ApiState>,
) -> Result<HttpResponse, ApiError> {
    let id = recurring_id(&path)?;
    let team = auth.principal.team_id;
    recurring_service::get(&*state.stores.recurring, team, id).await?;
    let page = async {
        let page = paging::read_query::<paging::PageQuery>(listing.parameters.clone())?;
        let position = |cursor: &str| {
            let parts = paging::decode_cursor(cursor)?;
            match parts.as_slice() {
                [day] => day.parse::<NaiveDate>().map_err(|_| paging::not_a_cursor()),
                _ => Err(paging::not_a_cursor()),
            }
        };
        let cursor = |run: &Run| paging::encode_cursor(&[day_text(run.period_start)]);
        let page = paging::page_from_store(&page, position, cursor, |before, limit| {
            let state = &state;
            async move {
                let limit = limit.unwrap_or(paging::MAX_LIMIT * 10);
                Ok(state.stores.recurring.list_runs(team, id, before, limit).await?)
            }
        })
        .await?;
        Ok(page.map(RecurringRunBody::from))
    };
    listing.respond(page.await)
}
