//! A recurring invoice: what it bills (a template of lines, and optionally the period's
//! unbilled time), to whom, on which schedule, and where it stands.
//!
//! Its life: **active** (its next period is generated when a job pass finds it due),
//! **paused** (nothing is generated; resuming starts at the first day from the resume on,
//! so paused periods are never billed afterwards), **completed** (its schedule has no day
//! left). Invoices carry the ordinal of their recurring invoice's invoices
//! (`recurring_sequence`), which therefore runs 1, 2, 3 … with no gap, however many periods
//! were skipped.

use accounts::{TeamId, UserId};
pub use billing::RecurringInvoiceId;
use billing::invoice::{Description, LineInput};
use billing::service::InvoiceDraft;
use billing::store::BillTo;
use billing::{ClientId, InvoiceId};
use chrono::{DateTime, Days, NaiveDate, NaiveTime, Utc};
use kernel::words;
use rust_decimal::Decimal;
use tracking::invoicing::{GroupBy, Rounding};
use tracking::{Actor, HourlyRate, Period, ProjectId};

use crate::schedule::{LAST_DAY, Occurrence, Pass, Schedule, ScheduleRule};

/// What each period does with the invoice it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Make the invoice.
    #[default]
    Issue,
    /// Make it and e-mail it to the client, as sending an invoice does.
    IssueAndSend,
}

words!(Mode { Issue => "issue", IssueAndSend => "issue_and_send" });

/// Where a recurring invoice stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecurringStatus {
    Active,
    Paused,
    /// Its schedule has no day left.
    Completed,
}

words!(RecurringStatus { Active => "active", Paused => "paused", Completed => "completed" });

/// What became of one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Its invoice was made.
    Generated,
    /// It was missed (the service was down) and a later period was billed instead, or there
    /// was nothing to bill.
    Skipped,
    /// Its invoice could not be made; the reason says why.
    Failed,
}

words!(RunStatus { Generated => "generated", Skipped => "skipped", Failed => "failed" });

/// What became of one period of a recurring invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The period's day.
    pub period_start: NaiveDate,
    /// Its invoice while it exists: `None` for a period that made none, or whose invoice
    /// was deleted.
    pub invoice_id: Option<InvoiceId>,
    pub status: RunStatus,
    /// Why it was skipped or failed; for a generated one, which entries of its time were
    /// left out as they cannot be billed.
    pub reason: Option<String>,
    pub ran_at: DateTime<Utc>,
}

/// The longest reason a run keeps.
pub const MAX_RUN_REASON: usize = 1000;

impl Run {
    /// A run of `period` that made nothing, for `reason` (cut to [`MAX_RUN_REASON`] chars).
    pub fn without_invoice(
        period: Occurrence,
        status: RunStatus,
        reason: &str,
        ran_at: DateTime<Utc>,
    ) -> Self {
        Self {
            period_start: period.on,
            invoice_id: None,
            status,
            reason: Some(reason.chars().take(MAX_RUN_REASON).collect()),
            ran_at,
        }
    }
}

/// Days from an invoice's issue to its due date: 0 (due on issue) to 365.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DueDays(u16);

impl DueDays {
    pub const MAX: i64 = 365;

    pub fn new(days: i64) -> Result<Self, RecurringRule> {
        if (0..=Self::MAX).contains(&days) {
            u16::try_from(days).map(Self).map_err(|_| RecurringRule::DueDays)
        } else {
            Err(RecurringRule::DueDays)
        }
    }

    pub fn days(self) -> u16 {
        self.0
    }
}

/// What every invoice of a recurring invoice starts from. Its lines are priced when each
/// invoice is made, so a changed template bills from the next period on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub description: Option<Description>,
    pub line_items: Vec<LineInput>,
    pub tax_percentage: Option<Decimal>,
    pub tax: Option<Decimal>,
    /// No due date when `None`.
    pub due_days: Option<DueDays>,
    /// Each invoice's VAT category (standard by default).
    pub vat: billing::Vat,
    /// Each invoice's discount of the whole, beside its lines'.
    pub discount: Option<billing::Discount>,
}

/// The unbilled time a period adds to its invoice: the billable time not yet billed of the
/// days the period bills ([`Schedule::billed_days`]), as billing time makes lines of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnbilledTime {
    /// Every project's time (and time on no project) when `None`.
    pub projects: Option<Vec<ProjectId>>,
    pub group_by: GroupBy,
    pub rounding: Option<Rounding>,
    /// Every line at this rate instead of its project's.
    pub rate: Option<HourlyRate>,
    /// Only time on the client's own projects: none on projects of no client, nor on no
    /// project. Time on another client's project is never billed.
    pub client_projects_only: bool,
}

/// A rule of recurring invoices that a request broke, in the domain's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecurringRule {
    #[error(transparent)]
    Schedule(#[from] ScheduleRule),
    #[error("the days to the due date must be 0 to {}", DueDays::MAX)]
    DueDays,
    #[error("a recurring invoice bills at least one line item, or the period's unbilled time")]
    NothingToBill,
    #[error("the schedule has no day left from today on")]
    NoDayLeft,
    #[error("a completed recurring invoice cannot be paused or resumed")]
    Completed,
}

/// A recurring invoice as a caller asks for it, each part valid on its own.
#[derive(Debug, Clone)]
pub struct NewRecurringInvoice {
    /// Who makes it: the user whose right to bill time its periods bill time by.
    pub created_by: UserId,
    pub client_id: ClientId,
    pub template: Template,
    pub schedule: Schedule,
    pub mode: Mode,
    pub unbilled_time: Option<UnbilledTime>,
}

/// A partial change; `None` leaves a part as it is. It applies to the periods still to come.
#[derive(Debug, Clone, Default)]
pub struct RecurringChanges {
    pub client_id: Option<ClientId>,
    pub template: Option<Template>,
    pub schedule: Option<Schedule>,
    pub mode: Option<Mode>,
    /// `Some(None)` stops adding unbilled time.
    pub unbilled_time: Option<Option<UnbilledTime>>,
}

/// A recurring invoice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecurringInvoice {
    pub id: RecurringInvoiceId,
    pub team_id: TeamId,
    pub client_id: ClientId,
    pub template: Template,
    pub schedule: Schedule,
    pub mode: Mode,
    pub unbilled_time: Option<UnbilledTime>,
    pub status: RecurringStatus,
    /// The period to generate next; `None` once completed.
    pub next: Option<Occurrence>,
    /// The invoices made so far.
    pub generated_count: u32,
    /// The user who made it. Its periods bill the time that user may bill, as the team has
    /// them when each period is made: a member's own, the team's for owners and admins.
    pub created_by: UserId,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Refuses a template with nothing to bill.
fn check_billing(template: &Template, unbilled_time: Option<&UnbilledTime>) -> Result<(), RecurringRule> {
    if template.line_items.is_empty() && unbilled_time.is_none() {
        return Err(RecurringRule::NothingToBill);
    }
    Ok(())
}

/// The first period of `schedule` on `today` or later: a schedule that started in the past
/// does not bill the periods before it was made (or resumed).
fn next_from(schedule: &Schedule, today: NaiveDate) -> Result<Occurrence, RecurringRule> {
    schedule.first_on_or_after(today).ok_or(RecurringRule::NoDayLeft)
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(NaiveTime::MIN).and_utc()
}

impl RecurringInvoice {
    /// A new, active recurring invoice made on `today`.
    pub fn new(
        id: RecurringInvoiceId,
        team_id: TeamId,
        new: NewRecurringInvoice,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<Self, RecurringRule> {
        check_billing(&new.template, new.unbilled_time.as_ref())?;
        let next = next_from(&new.schedule, today)?;
        Ok(Self {
            id,
            team_id,
            client_id: new.client_id,
            template: new.template,
            schedule: new.schedule,
            mode: new.mode,
            unbilled_time: new.unbilled_time,
            status: RecurringStatus::Active,
            next: Some(next),
            generated_count: 0,
            created_by: new.created_by,
            created_at: now,
            updated_at: now,
        })
    }

    /// Whether `actor` may choose which time it bills: as billing time, only for themselves
    /// when a member, for anyone when an owner or admin; the time billed is its maker's.
    pub fn may_bill_time_as(&self, actor: &Actor) -> bool {
        actor.may_act_for(self.created_by)
    }

    /// Applies `changes` on `today`. A new schedule starts over from its first day after
    /// today (on today, when today's period was due and is not generated yet); periods
    /// already generated stay as they are.
    pub fn changed(
        &self,
        changes: RecurringChanges,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<Self, RecurringRule> {
        let mut next_state = self.clone();
        if let Some(client_id) = changes.client_id {
            next_state.client_id = client_id;
        }
        if let Some(template) = changes.template {
            next_state.template = template;
        }
        if let Some(mode) = changes.mode {
            next_state.mode = mode;
        }
        if let Some(unbilled_time) = changes.unbilled_time {
            next_state.unbilled_time = unbilled_time;
        }
        check_billing(&next_state.template, next_state.unbilled_time.as_ref())?;
        if let Some(schedule) = changes.schedule {
            next_state.schedule = schedule;
            // Today's period may have been generated already (the next one is then later):
            // the new schedule starts tomorrow, unless today's is still to come.
            let from = match self.next {
                Some(next) if next.on <= today => today,
                _ => today.succ_opt().unwrap_or(today),
            };
            let next = next_from(&next_state.schedule, from)?;
            next_state.next = Some(next);
            if next_state.status == RecurringStatus::Completed {
                next_state.status = RecurringStatus::Active;
            }
        }
        next_state.updated_at = now;
        Ok(next_state)
    }

    /// Paused: no period is generated until it is resumed. Pausing a paused one changes
    /// nothing.
    pub fn paused(&self, now: DateTime<Utc>) -> Result<Self, RecurringRule> {
        match self.status {
            RecurringStatus::Completed => Err(RecurringRule::Completed),
            RecurringStatus::Paused => Ok(self.clone()),
            RecurringStatus::Active => {
                Ok(Self { status: RecurringStatus::Paused, updated_at: now, ..self.clone() })
            }
        }
    }

    /// Active again from `today`: the next period is the first on `today` or later (and not
    /// before the one it was paused at), so the periods of the pause are not billed;
    /// completed when none is left. Resuming an active
    /// one changes nothing.
    pub fn resumed(&self, today: NaiveDate, now: DateTime<Utc>) -> Result<Self, RecurringRule> {
        match self.status {
            RecurringStatus::Completed => Err(RecurringRule::Completed),
            RecurringStatus::Active => Ok(self.clone()),
            RecurringStatus::Paused => {
                // Never before the period it stopped at: that one's day may be today, its
                // invoice made already.
                let from = self.next.map_or(today, |stopped_at| today.max(stopped_at.on));
                let next = self.schedule.first_on_or_after(from.max(self.schedule.starts_on()));
                let status =
                    if next.is_some() { RecurringStatus::Active } else { RecurringStatus::Completed };
                Ok(Self { status, next, updated_at: now, ..self.clone() })
            }
        }
    }

    /// What a job pass on `today` does: `None` unless it is active with a period due.
    pub fn pass(&self, today: NaiveDate) -> Option<Pass> {
        let pass = self.schedule.pass(self.next_run()?, today);
        pass.generate.is_some().then_some(pass)
    }

    /// After `pass`: its next period, completed when there is none; one more invoice when
    /// `generated`.
    #[must_use]
    pub fn passed(&self, pass: &Pass, generated: bool, now: DateTime<Utc>) -> Self {
        let status = if pass.next.is_some() { self.status } else { RecurringStatus::Completed };
        Self {
            next: pass.next,
            status,
            generated_count: self.generated_count + u32::from(generated),
            updated_at: now,
            ..self.clone()
        }
    }

    /// The invoice of `period`: the template's lines, issued on the period's day and due
    /// `due_days` later (or after the client's payment terms), for the service of the days
    /// before it ([`Schedule::billed_days`]). The unbilled time, when it is included, is
    /// added by billing time ([`Self::billed_time`]).
    pub fn draft(&self, period: Occurrence) -> InvoiceDraft {
        let issue_date = midnight(period.on);
        // A due date past the calendar's last day (a period late in 9999) is that day.
        let due_date = self
            .template
            .due_days
            .map(|due| {
                period.on.checked_add_days(Days::new(u64::from(due.days()))).unwrap_or(LAST_DAY).min(LAST_DAY)
            })
            .map(midnight);
        InvoiceDraft {
            bill_to: BillTo::Existing(self.client_id),
            issue_date: Some(issue_date),
            due_date,
            description: self.template.description.clone(),
            status: None,
            sender_id: None,
            tax_percentage: self.template.tax_percentage,
            tax: self.template.tax,
            line_items: self.template.line_items.clone(),
            time_entries: Vec::new(),
            vat: Some(self.template.vat.clone()),
            discount: self.template.discount,
            // A recurring invoice bills a client in the team's currency (its create refuses
            // others), so there is no rate to state.
            exchange_rate: None,
            // Its service period is the days the period covers, those whose time it bills.
            supply: billing::Supply {
                service: self
                    .schedule
                    .billed_days(period)
                    .and_then(|days| billing::ServicePeriod::new(days.first, days.last).ok())
                    .map(billing::ServiceTime::Period),
                purchase_order: None,
            },
        }
    }

    /// The days whose unbilled time `period` bills, as a span of time; `None` when it
    /// includes none.
    pub fn billed_time(&self, period: Occurrence) -> Option<Period> {
        self.unbilled_time.as_ref()?;
        let days = self.schedule.billed_days(period)?;
        let end = days.last.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, midnight);
        Some(Period::new(midnight(days.first), end))
    }

    /// The next period it will bill: its next one, unless it is paused or completed.
    pub fn next_run(&self) -> Option<Occurrence> {
        self.next.filter(|_| self.status == RecurringStatus::Active)
    }

    /// The next `count` days it will bill on, from its next period; none unless active.
    pub fn preview(&self, count: usize) -> Vec<Occurrence> {
        match self.next_run() {
            Some(next) => self.schedule.occurrences_from(next.sequence).take(count).collect(),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::{Frequency, ScheduleInput};
    use kernel::Id;

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    fn now() -> DateTime<Utc> {
        midnight(day("2027-01-01"))
    }

    fn monthly(starts_on: &str, day_of_month: i64) -> Schedule {
        Schedule::new(&ScheduleInput {
            day_of_month: Some(day_of_month),
            ..ScheduleInput::starting(Frequency::Monthly, day(starts_on))
        })
        .unwrap()
    }

    fn line() -> LineInput {
        LineInput {
            discount: None,
            description: Description::parse("Retainer").unwrap(),
            unit_price: Decimal::new(150_000, 2),
            quantity: Decimal::ONE,
            amount: None,
            unit_code: None,
            vat: billing::LineVat::default(),
        }
    }

    fn template(due_days: Option<i64>) -> Template {
        Template {
            discount: None,
            description: None,
            line_items: vec![line()],
            tax_percentage: None,
            tax: None,
            due_days: due_days.map(|d| DueDays::new(d).unwrap()),
            vat: billing::Vat::default(),
        }
    }

    fn retainer(schedule: Schedule, today: &str) -> RecurringInvoice {
        let new = NewRecurringInvoice {
            created_by: UserId::generate(),
            client_id: ClientId::generate(),
            template: template(Some(14)),
            schedule,
            mode: Mode::Issue,
            unbilled_time: None,
        };
        RecurringInvoice::new(RecurringInvoiceId::generate(), TeamId::generate(), new, day(today), now())
            .unwrap()
    }

    #[test]
    fn a_schedule_that_started_earlier_bills_from_today_on() {
        let made = retainer(monthly("2026-06-01", 1), "2027-01-15");
        assert_eq!(made.next.map(|n| n.on), Some(day("2027-02-01")));
        assert_eq!(made.status, RecurringStatus::Active);
        let later = retainer(monthly("2027-03-01", 1), "2027-01-15");
        assert_eq!(later.next.map(|n| n.on), Some(day("2027-03-01")));
    }

    #[test]
    fn nothing_to_bill_and_no_day_left_are_refused() {
        let new = NewRecurringInvoice {
            created_by: UserId::generate(),
            client_id: ClientId::generate(),
            template: Template { line_items: vec![], ..template(None) },
            schedule: monthly("2027-01-01", 1),
            mode: Mode::Issue,
            unbilled_time: None,
        };
        let made = RecurringInvoice::new(
            RecurringInvoiceId::generate(),
            TeamId::generate(),
            new.clone(),
            day("2027-01-01"),
            now(),
        );
        assert_eq!(made.unwrap_err(), RecurringRule::NothingToBill);
        let ended = Schedule::new(&ScheduleInput {
            count: Some(1),
            day_of_month: Some(1),
            ..ScheduleInput::starting(Frequency::Monthly, day("2026-01-01"))
        })
        .unwrap();
        let new = NewRecurringInvoice { template: template(None), schedule: ended, ..new };
        let made = RecurringInvoice::new(
            RecurringInvoiceId::generate(),
            TeamId::generate(),
            new,
            day("2027-01-01"),
            now(),
        );
        assert_eq!(made.unwrap_err(), RecurringRule::NoDayLeft);
        assert_eq!(DueDays::new(366), Err(RecurringRule::DueDays));
    }

    #[test]
    fn a_pause_bills_nothing_and_resuming_does_not_backfill() {
        let made = retainer(monthly("2027-01-01", 1), "2027-01-01");
        let paused = made.paused(now()).unwrap();
        assert_eq!(paused.pass(day("2027-05-10")), None);
        assert_eq!(paused.preview(3), vec![]);
        let resumed = paused.resumed(day("2027-05-10"), now()).unwrap();
        assert_eq!(resumed.status, RecurringStatus::Active);
        assert_eq!(resumed.next.map(|n| n.on), Some(day("2027-06-01")));
        let pass = resumed.pass(day("2027-06-01")).unwrap();
        assert_eq!(pass.generate.map(|g| g.on), Some(day("2027-06-01")));
        assert!(pass.skip.is_empty());
    }

    #[test]
    fn a_pass_moves_on_and_completes_the_schedule_at_its_end() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(-1),
            count: Some(2),
            ..ScheduleInput::starting(Frequency::Monthly, day("2027-01-01"))
        })
        .unwrap();
        let made = retainer(schedule, "2027-01-01");
        let first = made.pass(day("2027-01-31")).unwrap();
        let after_first = made.passed(&first, true, now());
        assert_eq!((after_first.generated_count, after_first.status), (1, RecurringStatus::Active));
        assert_eq!(after_first.pass(day("2027-02-27")), None);
        let second = after_first.pass(day("2027-02-28")).unwrap();
        let after_second = after_first.passed(&second, true, now());
        assert_eq!((after_second.generated_count, after_second.status), (2, RecurringStatus::Completed));
        assert_eq!(after_second.next, None);
        assert_eq!(after_second.paused(now()).unwrap_err(), RecurringRule::Completed);
    }

    #[test]
    fn each_invoice_is_issued_on_its_day_and_due_after_the_template_s_days() {
        let made = retainer(monthly("2027-01-01", 28), "2027-01-01");
        let period = made.next.unwrap();
        let draft = made.draft(period);
        assert_eq!(draft.issue_date, Some(midnight(day("2027-01-28"))));
        assert_eq!(draft.due_date, Some(midnight(day("2027-02-11"))));
        assert!(matches!(draft.bill_to, BillTo::Existing(client) if client == made.client_id));
        assert_eq!(draft.line_items, vec![line()]);
        assert_eq!(draft.vat, Some(billing::Vat::default()), "the template's VAT category");
        assert_eq!(made.billed_time(period), None);
        let with_time = RecurringInvoice {
            unbilled_time: Some(UnbilledTime {
                projects: None,
                group_by: GroupBy::Project,
                rounding: None,
                rate: None,
                client_projects_only: false,
            }),
            ..made
        };
        // The month before the 28th: from 28 December to the 27th, both included.
        assert_eq!(
            with_time.billed_time(period),
            Some(Period::new(midnight(day("2026-12-28")), midnight(day("2027-01-28"))))
        );
    }

    #[test]
    fn a_new_schedule_starts_over_from_today() {
        let made = retainer(monthly("2027-01-01", 1), "2027-01-01");
        let weekly = Schedule::new(&ScheduleInput::starting(Frequency::Weekly, day("2027-01-01"))).unwrap();
        let to_weekly = RecurringChanges { schedule: Some(weekly), ..RecurringChanges::default() };
        let weekly_from_march = made.changed(to_weekly, day("2027-03-03"), now()).unwrap();
        // Fridays (the weekday of 1 January 2027), from 3 March on.
        assert_eq!(weekly_from_march.next.map(|n| n.on), Some(day("2027-03-05")));
        let emptied = RecurringChanges {
            template: Some(Template { line_items: vec![], ..template(None) }),
            ..RecurringChanges::default()
        };
        assert_eq!(
            made.changed(emptied, day("2027-03-03"), now()).unwrap_err(),
            RecurringRule::NothingToBill
        );
    }
}
