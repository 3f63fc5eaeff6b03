//! Recurring invoices over diesel (the `recurring` crate's port). The schedule is kept in
//! columns, checked again by `Schedule::new` when read; the template and the unbilled time
//! as JSON, parsed back into their domain types.

use accounts::TeamId;
use async_trait::async_trait;
use billing::invoice::{Description, LineInput};
use billing::sender::Logo;
use billing::store::{BillTo, CreateInvoiceError, NewInvoice, SenderChoice, TimeToBill};
use billing::{ClientId, Invoice, Serial};
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::Replaced;
use kernel::{Email, Id, StoreError, Words};
use recurring::{
    CreateRecurringError, DayOfMonth, DueDays, Ending, Frequency, Mode, Occurrence, PassRecord, PassRecorded,
    Pattern, RecurringInvoice, RecurringInvoiceId, RecurringStatus, RecurringStore, Run, RunStatus, Schedule,
    ScheduleInput, Template, UnbilledTime, Weekday,
};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use tracking::invoicing::{GroupBy, Rounding};
use tracking::{HourlyRate, ProjectId};

use crate::accounts::{Makers, makers_for};
use crate::chasing::{record_events, refresh_reminders};
use crate::clients::details_values;
use crate::clients::insert_client;
use crate::invoice_rows::insert_lines;
use crate::invoices::{
    bill_entries, exists, insert_default_sender, insert_invoice, invoice_values, make_invoice, sender_values,
    settle_sender,
};
use crate::ledger::{balance_values, insert_entry};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

#[derive(Queryable)]
struct RecurringRow {
    team_id: DbUuid,
    id: DbUuid,
    client_id: DbUuid,
    template: String,
    frequency: String,
    interval_count: i32,
    day_of_month: Option<i32>,
    weekday: Option<String>,
    month: Option<i32>,
    starts_on: NaiveDate,
    ends_on: Option<NaiveDate>,
    period_count: Option<i32>,
    mode: String,
    unbilled_time: Option<String>,
    status: String,
    next_sequence: Option<i32>,
    next_run_on: Option<NaiveDate>,
    generated_count: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    created_by: Option<DbUuid>,
}

fn decimal_text(value: Decimal) -> Value {
    Value::String(value.normalize().to_string())
}

fn template_json(template: &Template) -> String {
    let lines: Vec<Value> = template
        .line_items
        .iter()
        .map(|line| {
            json!({
                "description": line.description.as_str(),
                "unitPrice": decimal_text(line.unit_price),
                "quantity": decimal_text(line.quantity),
                "amount": line.amount.map(decimal_text),
                "unitCode": line.unit_code.as_ref().map(billing::UnitCode::as_str),
                "vatCategory": line.vat.category.map(billing::VatCategory::as_str),
                "taxPercentage": line.vat.percentage.map(decimal_text),
                "vatExemptionReason": line.vat.exemption_reason.as_ref().map(kernel::Text::as_str),
                "discount": discount_json(line.discount),
            })
        })
        .collect();
    json!({
        "description": template.description.as_ref().map(Description::as_str),
        "lineItems": lines,
        "taxPercentage": template.tax_percentage.map(decimal_text),
        "tax": template.tax.map(decimal_text),
        "dueDays": template.due_days.map(DueDays::days),
        "vatCategory": template.vat.category().as_str(),
        "vatExemptionReason": template.vat.exemption_reason().map(kernel::Text::as_str),
        "discount": discount_json(template.discount),
    })
    .to_string()
}

/// A discount as a template stores it: `{"percentage": "10"}` or `{"amount": "5"}`.
fn discount_json(discount: Option<billing::Discount>) -> Value {
    match discount {
        Some(billing::Discount::Percentage(p)) => json!({"percentage": decimal_text(p)}),
        Some(billing::Discount::Amount(a)) => json!({"amount": decimal_text(a)}),
        None => Value::Null,
    }
}

/// A stored discount, checked again; none where the template has none (or was stored before
/// discounts).
fn discount_from(value: &Value) -> Result<Option<billing::Discount>, StoreError> {
    let percentage = decimal_of(&value["percentage"], "discount percentage")?;
    let amount = decimal_of(&value["amount"], "discount amount")?;
    match (percentage, amount) {
        (Some(p), None) => billing::Discount::percentage(p).map(Some).map_err(|e| corrupt("discount", e)),
        (None, Some(a)) => billing::Discount::amount(a).map(Some).map_err(|e| corrupt("discount", e)),
        (None, None) => Ok(None),
        (Some(_), Some(_)) => Err(corrupt("discount", value)),
    }
}

fn unbilled_json(unbilled: &UnbilledTime) -> String {
    json!({
        "projectIds": unbilled.projects.as_ref().map(|ids| ids.iter().map(ToString::to_string).collect::<Vec<_>>()),
        "groupBy": unbilled.group_by.as_str(),
        "rounding": unbilled.rounding.map(|r| json!({"minutes": r.minutes(), "mode": r.mode().as_str()})),
        "rate": unbilled.rate.map(|rate| decimal_text(rate.amount())),
        "clientProjectsOnly": unbilled.client_projects_only,
    })
    .to_string()
}

/// A stored decimal of `what`, or `None` when null.
fn decimal_of(value: &Value, what: &str) -> Result<Option<Decimal>, StoreError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => text.parse().map(Some).map_err(|e| corrupt(what, e)),
        other => Err(corrupt(what, other)),
    }
}

fn template_from(text: &str) -> Result<Template, StoreError> {
    let value: Value = serde_json::from_str(text).map_err(|e| corrupt("recurring template", e))?;
    let description = match &value["description"] {
        Value::String(text) => {
            Some(Description::from_stored(text.clone()).map_err(|e| corrupt("template description", e))?)
        }
        _ => None,
    };
    let mut line_items = Vec::new();
    for line in value["lineItems"].as_array().ok_or_else(|| corrupt("template lines", &value))? {
        let text = line["description"].as_str().ok_or_else(|| corrupt("template line", line))?;
        line_items.push(LineInput {
            description: Description::from_stored(text.to_owned())
                .map_err(|e| corrupt("template line", e))?,
            unit_price: decimal_of(&line["unitPrice"], "unit price")?
                .ok_or_else(|| corrupt("unit price", line))?,
            quantity: decimal_of(&line["quantity"], "quantity")?.ok_or_else(|| corrupt("quantity", line))?,
            amount: decimal_of(&line["amount"], "amount")?,
            unit_code: line["unitCode"]
                .as_str()
                .map(billing::UnitCode::parse)
                .transpose()
                .map_err(|e| corrupt("unit code", e))?,
            vat: billing::LineVat {
                category: line["vatCategory"]
                    .as_str()
                    .map(|word| {
                        billing::VatCategory::from_word(word)
                            .ok_or_else(|| corrupt("line VAT category", word))
                    })
                    .transpose()?,
                percentage: decimal_of(&line["taxPercentage"], "line tax percentage")?,
                exemption_reason: line["vatExemptionReason"]
                    .as_str()
                    .map(|text| billing::invoice::ExemptionReason::from_stored(text.to_owned()))
                    .transpose()
                    .map_err(|e| corrupt("line VAT exemption reason", e))?,
            },
            discount: discount_from(&line["discount"])?,
        });
    }
    let due_days =
        value["dueDays"].as_i64().map(DueDays::new).transpose().map_err(|e| corrupt("due days", e))?;
    let vat_category = match value["vatCategory"].as_str() {
        Some(word) => billing::VatCategory::from_word(word).ok_or_else(|| corrupt("VAT category", word))?,
        None => billing::VatCategory::default(),
    };
    let vat_reason = value["vatExemptionReason"]
        .as_str()
        .map(|reason| billing::invoice::ExemptionReason::from_stored(reason.to_owned()))
        .transpose()
        .map_err(|e| corrupt("VAT exemption reason", e))?;
    let vat = billing::Vat::new(vat_category, vat_reason).map_err(|e| corrupt("template VAT", e))?;
    Ok(Template {
        vat,
        discount: discount_from(&value["discount"])?,
        description,
        line_items,
        tax_percentage: decimal_of(&value["taxPercentage"], "tax percentage")?,
        tax: decimal_of(&value["tax"], "tax")?,
        due_days,
    })
}

fn unbilled_from(text: &str) -> Result<UnbilledTime, StoreError> {
    let value: Value = serde_json::from_str(text).map_err(|e| corrupt("unbilled time", e))?;
    let projects = match &value["projectIds"] {
        Value::Array(ids) => Some(
            ids.iter()
                .map(|id| {
                    id.as_str()
                        .and_then(|text| text.parse::<kernel::uuid::Uuid>().ok())
                        .map(ProjectId::from_uuid)
                        .ok_or_else(|| corrupt("project id", id))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        _ => None,
    };
    let group_by =
        GroupBy::parse(value["groupBy"].as_str().unwrap_or_default()).map_err(|e| corrupt("group by", e))?;
    let rounding = match &value["rounding"] {
        Value::Object(rounding) => Some(
            Rounding::parse(
                rounding.get("minutes").and_then(Value::as_i64).unwrap_or_default(),
                rounding.get("mode").and_then(Value::as_str).unwrap_or_default(),
            )
            .map_err(|e| corrupt("rounding", e))?,
        ),
        _ => None,
    };
    let rate = decimal_of(&value["rate"], "rate")?
        .map(HourlyRate::parse)
        .transpose()
        .map_err(|e| corrupt("rate", e))?;
    // Stored before projects had clients: absent, which is false.
    let client_projects_only = value["clientProjectsOnly"].as_bool().unwrap_or(false);
    Ok(UnbilledTime { projects, group_by, rounding, rate, client_projects_only })
}

/// The recurring invoices of `rows`, each acting for its maker.
macro_rules! recurring_of {
    ($store:expr, $rows:expr) => {{
        let rows: Vec<RecurringRow> = $rows;
        let makers = makers_for!($store, rows.iter().map(|r| (r.team_id, r.created_by)));
        rows.into_iter()
            .map(|row| row.recurring(&makers))
            .collect::<Result<Vec<RecurringInvoice>, StoreError>>()
    }};
}

impl RecurringRow {
    /// The recurring invoice, acting for its maker (`makers` holds its team's users where
    /// the row names none).
    fn recurring(self, makers: &Makers) -> Result<RecurringInvoice, StoreError> {
        let row = self;
        let created_by = makers.maker(row.team_id, row.created_by)?;
        let frequency =
            Frequency::from_word(&row.frequency).ok_or_else(|| corrupt("frequency", &row.frequency))?;
        let weekday = row
            .weekday
            .as_deref()
            .map(|day| Weekday::from_word(day).ok_or_else(|| corrupt("weekday", day)))
            .transpose()?;
        let schedule = Schedule::new(&ScheduleInput {
            frequency,
            interval: i64::from(row.interval_count),
            day_of_month: row.day_of_month.map(i64::from),
            weekday,
            month: row.month.map(i64::from),
            starts_on: row.starts_on,
            ends_on: row.ends_on,
            count: row.period_count.map(i64::from),
        })
        .map_err(|e| corrupt("schedule", e))?;
        let next = match (row.next_sequence, row.next_run_on) {
            (Some(sequence), Some(on)) => Some(Occurrence {
                sequence: u32::try_from(sequence).map_err(|e| corrupt("next sequence", e))?,
                on,
            }),
            _ => None,
        };
        Ok(RecurringInvoice {
            id: row.id.into_id(),
            team_id: row.team_id.into_id(),
            client_id: row.client_id.into_id(),
            template: template_from(&row.template)?,
            schedule,
            mode: Mode::from_word(&row.mode).ok_or_else(|| corrupt("mode", &row.mode))?,
            unbilled_time: row.unbilled_time.as_deref().map(unbilled_from).transpose()?,
            status: RecurringStatus::from_word(&row.status).ok_or_else(|| corrupt("status", &row.status))?,
            next,
            generated_count: u32::try_from(row.generated_count).map_err(|e| corrupt("generated count", e))?,
            created_by,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

/// A count as an `integer` column.
fn int(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

/// The columns a recurring invoice's replacement writes.
macro_rules! recurring_values {
    ($recurring:expr) => {{
        let recurring: &RecurringInvoice = $recurring;
        let schedule = recurring.schedule;
        let (day_of_month, weekday, month) = match schedule.pattern() {
            Pattern::Weekly { weekday } => (None, Some(weekday.as_str()), None),
            Pattern::Monthly { day } => (Some(day_number(day)), None, None),
            Pattern::Yearly { month, day } => {
                (Some(day_number(day)), None, Some(i32::try_from(month).unwrap_or(1)))
            }
        };
        let (ends_on, period_count) = match schedule.ending() {
            Ending::Never => (None, None),
            Ending::On(day) => (Some(day), None),
            Ending::After(count) => (None, Some(int(count))),
        };
        (
            recurring_invoices::client_id.eq(DbUuid::of(recurring.client_id)),
            recurring_invoices::template.eq(template_json(&recurring.template)),
            recurring_invoices::frequency.eq(schedule.pattern().frequency().as_str()),
            recurring_invoices::interval_count.eq(int(schedule.interval())),
            recurring_invoices::day_of_month.eq(day_of_month),
            recurring_invoices::weekday.eq(weekday),
            recurring_invoices::month.eq(month),
            recurring_invoices::starts_on.eq(schedule.starts_on()),
            recurring_invoices::ends_on.eq(ends_on),
            recurring_invoices::period_count.eq(period_count),
            recurring_invoices::mode.eq(recurring.mode.as_str()),
            recurring_invoices::unbilled_time.eq(recurring.unbilled_time.as_ref().map(unbilled_json)),
            recurring_invoices::status.eq(recurring.status.as_str()),
            recurring_invoices::next_sequence.eq(recurring.next.map(|next| int(next.sequence))),
            recurring_invoices::next_run_on.eq(recurring.next.map(|next| next.on)),
            recurring_invoices::generated_count.eq(int(recurring.generated_count)),
            recurring_invoices::updated_at.eq(recurring.updated_at),
        )
    }};
}

fn day_number(day: DayOfMonth) -> i32 {
    i32::try_from(day.number()).unwrap_or(-1)
}

/// The team's recurring invoice `$id` (a `DbUuid`), as a filter.
macro_rules! the_recurring {
    ($team:expr, $id:expr) => {
        recurring_invoices::table
            .filter(recurring_invoices::team_id.eq($team))
            .filter(recurring_invoices::id.eq($id))
    };
}

#[async_trait]
impl RecurringStore for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %recurring.team_id, recurring = %recurring.id))]
    async fn create_recurring(&self, recurring: &RecurringInvoice) -> Result<(), CreateRecurringError> {
        let team = recurring.team_id;
        let done: Result<(), TxError<CreateRecurringError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // A write first: SQLite's write lock, before the client is looked at.
                diesel::insert_into(recurring_invoices::table)
                    .values((
                        recurring_invoices::team_id.eq(DbUuid::of(team)),
                        recurring_invoices::id.eq(DbUuid::of(recurring.id)),
                        recurring_invoices::created_at.eq(recurring.created_at),
                        recurring_invoices::created_by.eq(Some(DbUuid::of(recurring.created_by))),
                        recurring_values!(recurring),
                    ))
                    .execute(conn)
                    .await?;
                if !crate::invoices::exists!(conn, clients, team, recurring.client_id)? {
                    return Err(TxError::Refused(CreateRecurringError::UnknownClient));
                }
                Ok(())
            })
            .await);
        match done {
            Ok(()) => Ok(()),
            Err(TxError::Refused(error)) => Err(error),
            Err(TxError::Db(error)) => Err(crate::store_error(error).into()),
            Err(TxError::Previewed(never)) => match never {},
        }
    }

    #[tracing::instrument(skip(self))]
    async fn get_recurring(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
    ) -> Result<Option<RecurringInvoice>, StoreError> {
        let row: Option<RecurringRow> =
            db_run!(self, |conn| the_recurring!(DbUuid::of(team), DbUuid::of(id))
                .first(conn)
                .await
                .optional()
                .or_store()?);
        Ok(recurring_of!(self, row.into_iter().collect())?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn list_recurring(
        &self,
        team: TeamId,
        after: Option<RecurringInvoiceId>,
        limit: u32,
    ) -> Result<Vec<RecurringInvoice>, StoreError> {
        let rows: Vec<RecurringRow> = db_run!(self, |conn| {
            let mut query = recurring_invoices::table
                .filter(recurring_invoices::team_id.eq(DbUuid::of(team)))
                .order(recurring_invoices::id)
                .limit(i64::from(limit))
                .into_boxed();
            if let Some(after) = after {
                query = query.filter(recurring_invoices::id.gt(DbUuid::of(after)));
            }
            query.load(conn).await.or_store()?
        });
        recurring_of!(self, rows)
    }

    #[tracing::instrument(skip_all, fields(team = %recurring.team_id, recurring = %recurring.id))]
    async fn replace_recurring(
        &self,
        recurring: &RecurringInvoice,
        read_at: DateTime<Utc>,
    ) -> Result<Replaced, StoreError> {
        let (team, id) = (DbUuid::of(recurring.team_id), DbUuid::of(recurring.id));
        Ok(crate::replace_if_unchanged!(
            self,
            recurring_invoices,
            the_recurring!(team, id),
            read_at,
            recurring_values!(recurring)
        ))
    }

    #[tracing::instrument(skip(self))]
    async fn delete_recurring(&self, team: TeamId, id: RecurringInvoiceId) -> Result<bool, StoreError> {
        let deleted = db_run!(self, |conn| diesel::delete(the_recurring!(DbUuid::of(team), DbUuid::of(id)))
            .execute(conn)
            .await
            .or_store()?);
        Ok(deleted == 1)
    }

    #[tracing::instrument(skip(self))]
    async fn due_recurring(&self, today: NaiveDate, limit: u32) -> Result<Vec<RecurringInvoice>, StoreError> {
        let rows: Vec<RecurringRow> = db_run!(self, |conn| recurring_invoices::table
            .filter(recurring_invoices::status.eq(RecurringStatus::Active.as_str()))
            .filter(recurring_invoices::next_run_on.le(today))
            .order((recurring_invoices::next_run_on, recurring_invoices::id))
            .limit(i64::from(limit))
            .load(conn)
            .await
            .or_store()?);
        recurring_of!(self, rows)
    }

    #[tracing::instrument(skip_all, fields(team = %record.recurring.team_id, recurring = %record.recurring.id))]
    async fn record_pass(&self, record: &PassRecord) -> Result<PassRecorded, CreateInvoiceError> {
        let recurring = &record.recurring;
        let (team, id) = (DbUuid::of(recurring.team_id), DbUuid::of(recurring.id));
        let done: Result<Option<Invoice>, TxError<CreateInvoiceError, ()>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                // The fence, and a write first: the row's lock on PostgreSQL, SQLite's write
                // lock. A pass that raced this one finds `updated_at` changed and writes nothing.
                let fenced = diesel::update(
                    the_recurring!(team, id).filter(recurring_invoices::updated_at.eq(record.read_at)),
                )
                .set(recurring_values!(recurring))
                .execute(conn)
                .await?;
                if fenced != 1 {
                    return Err(TxError::Previewed(()));
                }
                let invoice = match &record.invoice {
                    Some(new) => Some(make_invoice!(self, conn, new, true, TxError<CreateInvoiceError, ()>)),
                    None => None,
                };
                for run in &record.runs {
                    diesel::insert_into(recurring_runs::table)
                        .values((
                            recurring_runs::team_id.eq(team),
                            recurring_runs::recurring_invoice_id.eq(id),
                            recurring_runs::period_start.eq(run.period_start),
                            recurring_runs::invoice_id.eq(run.invoice_id.map(DbUuid::of)),
                            recurring_runs::status.eq(run.status.as_str()),
                            recurring_runs::reason.eq(run.reason.as_deref()),
                            recurring_runs::ran_at.eq(run.ran_at),
                        ))
                        .execute(conn)
                        .await?;
                }
                Ok(invoice)
            })
            .await);
        match done {
            Ok(invoice) => self.signalling(Ok(PassRecorded::Written(invoice.map(Box::new)))),
            Err(TxError::Previewed(())) => Ok(PassRecorded::Stale),
            Err(TxError::Refused(error)) => Err(error),
            Err(TxError::Db(error)) => Err(crate::store_error(error).into()),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn list_runs(
        &self,
        team: TeamId,
        id: RecurringInvoiceId,
        before: Option<NaiveDate>,
        limit: u32,
    ) -> Result<Vec<Run>, StoreError> {
        let rows: Vec<RunRow> = db_run!(self, |conn| {
            let mut query = recurring_runs::table
                .filter(recurring_runs::team_id.eq(DbUuid::of(team)))
                .filter(recurring_runs::recurring_invoice_id.eq(DbUuid::of(id)))
                .select((
                    recurring_runs::period_start,
                    recurring_runs::invoice_id,
                    recurring_runs::status,
                    recurring_runs::reason,
                    recurring_runs::ran_at,
                ))
                .order(recurring_runs::period_start.desc())
                .limit(i64::from(limit))
                .into_boxed();
            if let Some(before) = before {
                query = query.filter(recurring_runs::period_start.lt(before));
            }
            query.load(conn).await.or_store()?
        });
        rows.into_iter()
            .map(|(period_start, invoice_id, status, reason, ran_at)| {
                Ok(Run {
                    period_start,
                    invoice_id: invoice_id.map(DbUuid::into_id),
                    status: RunStatus::from_word(&status).ok_or_else(|| corrupt("run status", &status))?,
                    reason,
                    ran_at,
                })
            })
            .collect()
    }
}

/// A run as stored: its period, invoice, status, reason and time.
type RunRow = (NaiveDate, Option<DbUuid>, String, Option<String>, DateTime<Utc>);
