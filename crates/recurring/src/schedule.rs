//! The schedule of a recurring invoice: the days it bills on, which are the days of the
//! RFC 5545 recurrence rule of the same pattern ([`Schedule::rrule`]), the periods a job
//! pass generates or skips, and the span of time each period bills.
//!
//! Dates are UTC calendar days. Every pattern has exactly one day in each of its periods (a
//! week, a month, a year): a day of the month is 1 to 28 or the last day, so that no month
//! lacks it. The periods are counted from the one that holds `starts_on`, every `interval`
//! of them, as RFC 5545 counts them (weeks start on Monday); the first day is the pattern's
//! day in that period when it is not before `starts_on`, else in the next counted period.

use chrono::{Datelike, Days, NaiveDate};
use kernel::words;

/// How often a schedule's periods come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Frequency {
    Weekly,
    Monthly,
    Yearly,
}

words!(Frequency { Weekly => "weekly", Monthly => "monthly", Yearly => "yearly" });

/// A day of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Weekday {
    Monday,
    Tuesday,
    Wednesday,
    Thursday,
    Friday,
    Saturday,
    Sunday,
}

words!(Weekday {
    Monday => "monday",
    Tuesday => "tuesday",
    Wednesday => "wednesday",
    Thursday => "thursday",
    Friday => "friday",
    Saturday => "saturday",
    Sunday => "sunday",
});

impl Weekday {
    /// The weekday of `day`.
    pub fn of(day: NaiveDate) -> Self {
        Self::from(day.weekday())
    }

    /// Days after Monday: 0 for Monday, 6 for Sunday.
    fn offset(self) -> u32 {
        chrono::Weekday::from(self).num_days_from_monday()
    }
}

impl From<chrono::Weekday> for Weekday {
    fn from(day: chrono::Weekday) -> Self {
        match day {
            chrono::Weekday::Mon => Self::Monday,
            chrono::Weekday::Tue => Self::Tuesday,
            chrono::Weekday::Wed => Self::Wednesday,
            chrono::Weekday::Thu => Self::Thursday,
            chrono::Weekday::Fri => Self::Friday,
            chrono::Weekday::Sat => Self::Saturday,
            chrono::Weekday::Sun => Self::Sunday,
        }
    }
}

impl From<Weekday> for chrono::Weekday {
    fn from(day: Weekday) -> Self {
        match day {
            Weekday::Monday => Self::Mon,
            Weekday::Tuesday => Self::Tue,
            Weekday::Wednesday => Self::Wed,
            Weekday::Thursday => Self::Thu,
            Weekday::Friday => Self::Fri,
            Weekday::Saturday => Self::Sat,
            Weekday::Sunday => Self::Sun,
        }
    }
}

/// The day of the month a monthly or yearly schedule bills on: one that every month has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DayOfMonth {
    /// 1 to 28.
    Day(u8),
    /// The month's last day: 31 January, 28 or 29 February, 30 April.
    Last,
}

impl DayOfMonth {
    /// The highest day every month has.
    pub const MAX_DAY: i64 = 28;

    /// 1 to 28, or -1 for the last day.
    pub fn new(day: i64) -> Result<Self, ScheduleRule> {
        match day {
            -1 => Ok(Self::Last),
            1..=Self::MAX_DAY => Ok(Self::Day(u8::try_from(day).map_err(|_| ScheduleRule::DayOfMonth)?)),
            _ => Err(ScheduleRule::DayOfMonth),
        }
    }

    /// As written: 1 to 28, or -1.
    pub fn number(self) -> i64 {
        match self {
            Self::Day(day) => i64::from(day),
            Self::Last => -1,
        }
    }

    /// This day in `month` (1–12) of `year`; `None` outside the calendar's range.
    fn in_month(self, year: i32, month: u32) -> Option<NaiveDate> {
        match self {
            Self::Day(day) => NaiveDate::from_ymd_opt(year, month, u32::from(day)),
            Self::Last => {
                let (next_year, next_month) =
                    if month == 12 { (year.checked_add(1)?, 1) } else { (year, month + 1) };
                NaiveDate::from_ymd_opt(next_year, next_month, 1)?.pred_opt()
            }
        }
    }
}

/// The day of each period a schedule bills on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    Weekly { weekday: Weekday },
    Monthly { day: DayOfMonth },
    Yearly { month: u32, day: DayOfMonth },
}

impl Pattern {
    pub fn frequency(self) -> Frequency {
        match self {
            Self::Weekly { .. } => Frequency::Weekly,
            Self::Monthly { .. } => Frequency::Monthly,
            Self::Yearly { .. } => Frequency::Yearly,
        }
    }
}

/// When a schedule ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// It runs until it is deleted.
    Never,
    /// Its last day is on or before this one.
    On(NaiveDate),
    /// After this many periods (generated or skipped), as RFC 5545's `COUNT`.
    After(u32),
}

/// A schedule as a caller writes it, before its rules are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleInput {
    pub frequency: Frequency,
    pub interval: i64,
    pub day_of_month: Option<i64>,
    /// Weekly only; the weekday of `starts_on` when `None`.
    pub weekday: Option<Weekday>,
    /// Yearly only; the month of `starts_on` when `None`.
    pub month: Option<i64>,
    pub starts_on: NaiveDate,
    pub ends_on: Option<NaiveDate>,
    pub count: Option<i64>,
}

impl ScheduleInput {
    /// Every `interval`-th period from `starts_on`, with the other parts left out: the
    /// start of a schedule written field by field.
    pub fn starting(frequency: Frequency, starts_on: NaiveDate) -> Self {
        Self {
            frequency,
            interval: 1,
            day_of_month: None,
            weekday: None,
            month: None,
            starts_on,
            ends_on: None,
            count: None,
        }
    }
}

/// A rule of a schedule that a request broke, in the domain's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleRule {
    #[error("the interval must be a whole number from 1 to {}", Schedule::MAX_INTERVAL)]
    Interval,
    #[error("the day of the month must be 1 to 28, or -1 for the last day")]
    DayOfMonth,
    #[error("a monthly or yearly schedule needs the day of the month")]
    DayOfMonthMissing,
    #[error("the day of the month is for monthly and yearly schedules; a weekly one takes a weekday")]
    DayOfMonthNotWeekly,
    #[error("a weekday is for weekly schedules")]
    WeekdayNotWeekly,
    #[error("the month must be 1 to 12")]
    Month,
    #[error("a month is for yearly schedules")]
    MonthNotYearly,
    #[error("a schedule ends on a day or after a count of periods, not both")]
    TwoEndings,
    #[error("the end is before the start")]
    EndsBeforeStart,
    #[error("the count must be a whole number from 1 to {}", Schedule::MAX_COUNT)]
    Count,
    #[error("the schedule has no day between its start and its end")]
    NoDay,
}

/// One day of a schedule: its place in the schedule (1 for the first) and the day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Occurrence {
    pub sequence: u32,
    pub on: NaiveDate,
}

/// The days whose time a period bills, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BilledDays {
    pub first: NaiveDate,
    pub last: NaiveDate,
}

/// What a job pass does with a schedule on a day.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pass {
    /// The latest period due, to generate.
    pub generate: Option<Occurrence>,
    /// The periods due before it, missed (the service was down): recorded, not generated.
    pub skip: Vec<Occurrence>,
    /// The schedule's next period after the pass, `None` once it has ended.
    pub next: Option<Occurrence>,
}

/// The first and the last day a schedule may land on: the years 0001 to 9999, which every
/// date the API answers stays within.
pub const FIRST_DAY: NaiveDate = calendar_day(1, 1, 1);
pub const LAST_DAY: NaiveDate = calendar_day(9999, 12, 31);

const fn calendar_day(year: i32, month: u32, day: u32) -> NaiveDate {
    match NaiveDate::from_ymd_opt(year, month, day) {
        Some(day) => day,
        None => unreachable!(),
    }
}

/// A recurring invoice's schedule, valid by construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Schedule {
    pattern: Pattern,
    interval: u32,
    starts_on: NaiveDate,
    ending: Ending,
}

impl Schedule {
    /// At most this many weeks, months or years between two periods.
    pub const MAX_INTERVAL: i64 = 100;
    /// At most this many periods in a schedule with a count.
    pub const MAX_COUNT: i64 = 1000;

    /// Checks `input`'s rules. A schedule without any day (it ends before its first) is
    /// refused.
    pub fn new(input: &ScheduleInput) -> Result<Self, ScheduleRule> {
        if !(1..=Self::MAX_INTERVAL).contains(&input.interval) {
            return Err(ScheduleRule::Interval);
        }
        let interval = u32::try_from(input.interval).map_err(|_| ScheduleRule::Interval)?;
        let day = input.day_of_month.map(DayOfMonth::new).transpose()?;
        let pattern = match input.frequency {
            Frequency::Weekly => {
                if day.is_some() {
                    return Err(ScheduleRule::DayOfMonthNotWeekly);
                }
                if input.month.is_some() {
                    return Err(ScheduleRule::MonthNotYearly);
                }
                Pattern::Weekly { weekday: input.weekday.unwrap_or_else(|| Weekday::of(input.starts_on)) }
            }
            Frequency::Monthly => {
                if input.weekday.is_some() {
                    return Err(ScheduleRule::WeekdayNotWeekly);
                }
                if input.month.is_some() {
                    return Err(ScheduleRule::MonthNotYearly);
                }
                Pattern::Monthly { day: day.ok_or(ScheduleRule::DayOfMonthMissing)? }
            }
            Frequency::Yearly => {
                if input.weekday.is_some() {
                    return Err(ScheduleRule::WeekdayNotWeekly);
                }
                let month = match input.month {
                    Some(month) => u32::try_from(month)
                        .ok()
                        .filter(|m| (1..=12).contains(m))
                        .ok_or(ScheduleRule::Month)?,
                    None => input.starts_on.month(),
                };
                Pattern::Yearly { month, day: day.ok_or(ScheduleRule::DayOfMonthMissing)? }
            }
        };
        let ending = match (input.ends_on, input.count) {
            (Some(_), Some(_)) => return Err(ScheduleRule::TwoEndings),
            (Some(ends_on), None) if ends_on < input.starts_on => return Err(ScheduleRule::EndsBeforeStart),
            (Some(ends_on), None) => Ending::On(ends_on),
            (None, Some(count)) if (1..=Self::MAX_COUNT).contains(&count) => {
                Ending::After(u32::try_from(count).map_err(|_| ScheduleRule::Count)?)
            }
            (None, Some(_)) => return Err(ScheduleRule::Count),
            (None, None) => Ending::Never,
        };
        let schedule = Self { pattern, interval, starts_on: input.starts_on, ending };
        if schedule.occurrence(1).is_none() {
            return Err(ScheduleRule::NoDay);
        }
        Ok(schedule)
    }

    pub fn pattern(&self) -> Pattern {
        self.pattern
    }

    pub fn interval(&self) -> u32 {
        self.interval
    }

    pub fn starts_on(&self) -> NaiveDate {
        self.starts_on
    }

    pub fn ending(&self) -> Ending {
        self.ending
    }

    /// The RFC 5545 recurrence rule of the same days, with `starts_on` as its `DTSTART`:
    /// `FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1;COUNT=12`.
    pub fn rrule(&self) -> String {
        use std::fmt::Write as _;
        let frequency = self.pattern.frequency().as_str().to_uppercase();
        let mut rule = format!("FREQ={frequency};INTERVAL={}", self.interval);
        // Writing to a String cannot fail.
        let _ = match self.pattern {
            Pattern::Weekly { weekday } => {
                write!(rule, ";WKST=MO;BYDAY={}", weekday.as_str()[..2].to_uppercase())
            }
            Pattern::Monthly { day } => write!(rule, ";BYMONTHDAY={}", day.number()),
            Pattern::Yearly { month, day } => write!(rule, ";BYMONTH={month};BYMONTHDAY={}", day.number()),
        };
        let _ = match self.ending {
            Ending::Never => Ok(()),
            Ending::On(day) => write!(rule, ";UNTIL={}", day.format("%Y%m%d")),
            Ending::After(count) => write!(rule, ";COUNT={count}"),
        };
        rule
    }

    /// The pattern's day in the period `index` periods after the one holding `starts_on`
    /// (negative: before it), counting every `interval`-th; `None` outside the years 0001
    /// to 9999, where every schedule ends: no answer carries a date beyond them.
    fn day_of_period(&self, index: i64) -> Option<NaiveDate> {
        self.day_of_period_in_calendar(index).filter(|day| (FIRST_DAY..=LAST_DAY).contains(day))
    }

    fn day_of_period_in_calendar(&self, index: i64) -> Option<NaiveDate> {
        let step = index.checked_mul(i64::from(self.interval))?;
        match self.pattern {
            Pattern::Weekly { weekday } => {
                let monday = self.starts_on.checked_sub_days(Days::new(u64::from(
                    self.starts_on.weekday().num_days_from_monday(),
                )))?;
                let days = step.checked_mul(7)?.checked_add(i64::from(weekday.offset()))?;
                let shift = Days::new(days.unsigned_abs());
                if days >= 0 { monday.checked_add_days(shift) } else { monday.checked_sub_days(shift) }
            }
            Pattern::Monthly { day } => {
                let months =
                    i64::from(self.starts_on.year()) * 12 + i64::from(self.starts_on.month0()) + step;
                let year = i32::try_from(months.div_euclid(12)).ok()?;
                let month = u32::try_from(months.rem_euclid(12)).ok()? + 1;
                day.in_month(year, month)
            }
            Pattern::Yearly { month, day } => {
                let year = i32::try_from(i64::from(self.starts_on.year()).checked_add(step)?).ok()?;
                day.in_month(year, month)
            }
        }
    }

    /// The index of the period of the first day: the one holding `starts_on`, or the next
    /// counted one when its day is before `starts_on`.
    fn first_period(&self) -> i64 {
        match self.day_of_period(0) {
            Some(day) if day >= self.starts_on => 0,
            _ => 1,
        }
    }

    /// The schedule's `sequence`-th day (1 for the first), `None` past its end.
    pub fn occurrence(&self, sequence: u32) -> Option<Occurrence> {
        let index = i64::from(sequence.checked_sub(1)?);
        let on = self.day_of_period(self.first_period().checked_add(index)?)?;
        let within = match self.ending {
            Ending::Never => true,
            Ending::On(last) => on <= last,
            Ending::After(count) => sequence <= count,
        };
        within.then_some(Occurrence { sequence, on })
    }

    /// The days from the `sequence`-th on, in order, until the schedule ends.
    pub fn occurrences_from(&self, sequence: u32) -> impl Iterator<Item = Occurrence> + '_ {
        (sequence.max(1)..=u32::MAX).map_while(move |n| self.occurrence(n))
    }

    /// The first day on or after `day`, `None` when the schedule ends before it.
    pub fn first_on_or_after(&self, day: NaiveDate) -> Option<Occurrence> {
        // Jump near `day` by the periods between, then walk: at most a few steps.
        let from = self.occurrence(1)?;
        let estimate = match self.pattern {
            Pattern::Weekly { .. } => (day - from.on).num_days() / (7 * i64::from(self.interval)),
            Pattern::Monthly { .. } => months_between(from.on, day) / i64::from(self.interval),
            Pattern::Yearly { .. } => i64::from(day.year() - from.on.year()) / i64::from(self.interval),
        };
        let start = u32::try_from(estimate.saturating_sub(1).max(0)).unwrap_or(u32::MAX).saturating_add(1);
        self.occurrences_from(start).find(|occurrence| occurrence.on >= day)
    }

    /// What a pass on `today` does when the schedule's next period is `next`: the latest
    /// period due is generated, the ones due before it skipped (no catch-up flood after
    /// downtime), and the one after them comes next.
    pub fn pass(&self, next: Occurrence, today: NaiveDate) -> Pass {
        let mut due: Vec<Occurrence> =
            self.occurrences_from(next.sequence).take_while(|occurrence| occurrence.on <= today).collect();
        let Some(generate) = due.pop() else {
            return Pass { generate: None, skip: Vec::new(), next: Some(next) };
        };
        let after = generate.sequence.checked_add(1).and_then(|sequence| self.occurrence(sequence));
        Pass { generate: Some(generate), skip: due, next: after }
    }

    /// The days whose time the `sequence`-th period bills: from the schedule's day before
    /// it (for the first, the pattern's day one interval earlier) to the day before its own.
    pub fn billed_days(&self, occurrence: Occurrence) -> Option<BilledDays> {
        let index = self.first_period() + i64::from(occurrence.sequence) - 1;
        // A first period whose day before would fall before the year 0001 bills from then.
        let first = self.day_of_period(index - 1).unwrap_or(FIRST_DAY);
        let last = occurrence.on.pred_opt()?;
        Some(BilledDays { first, last })
    }
}

/// Whole months from `a` to `b` by their months alone (negative when `b` is earlier).
fn months_between(a: NaiveDate, b: NaiveDate) -> i64 {
    (i64::from(b.year()) * 12 + i64::from(b.month0())) - (i64::from(a.year()) * 12 + i64::from(a.month0()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    fn input(frequency: Frequency, starts_on: &str) -> ScheduleInput {
        ScheduleInput::starting(frequency, day(starts_on))
    }

    fn days(schedule: &Schedule, count: usize) -> Vec<String> {
        schedule.occurrences_from(1).take(count).map(|o| o.on.to_string()).collect()
    }

    #[test]
    fn the_last_day_of_the_month_is_the_last_of_each() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(-1),
            ..input(Frequency::Monthly, "2027-01-01")
        })
        .unwrap();
        assert_eq!(days(&schedule, 4), ["2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30"]);
        let leap = Schedule::new(&ScheduleInput {
            day_of_month: Some(-1),
            ..input(Frequency::Monthly, "2028-02-01")
        })
        .unwrap();
        assert_eq!(days(&leap, 1), ["2028-02-29"]);
        assert_eq!(schedule.rrule(), "FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=-1");
    }

    #[test]
    fn schedules_end_in_the_year_9999() {
        // Every 100 years on 29 February, as often as a count allows: it ends after the
        // last such day before the year 10000, not in the year 19600.
        let leap_days = Schedule::new(&ScheduleInput {
            interval: 100,
            day_of_month: Some(-1),
            month: Some(2),
            count: Some(Schedule::MAX_COUNT),
            ..input(Frequency::Yearly, "2028-02-01")
        })
        .unwrap();
        let all: Vec<Occurrence> = leap_days.occurrences_from(1).collect();
        assert_eq!(all.len(), 80);
        assert_eq!(all.last().unwrap().on, day("9928-02-29"));
        assert_eq!(leap_days.occurrence(81), None);
        // Weekly, every 100 weeks from near the end: the last Friday it reaches is in 9999.
        let weekly =
            Schedule::new(&ScheduleInput { interval: 100, ..input(Frequency::Weekly, "9990-01-05") })
                .unwrap();
        let last = weekly.occurrences_from(1).last().unwrap();
        assert!(last.on <= LAST_DAY && last.on > day("9998-01-01"), "{last:?}");
        // A schedule whose first day would be past 9999 has none.
        let too_late = ScheduleInput { day_of_month: Some(-1), ..input(Frequency::Monthly, "9999-12-31") };
        assert!(Schedule::new(&too_late).is_ok(), "31 December 9999 is still a day");
        let never =
            ScheduleInput { interval: 100, day_of_month: Some(1), ..input(Frequency::Yearly, "9999-12-02") };
        assert_eq!(Schedule::new(&never), Err(ScheduleRule::NoDay));
    }

    #[test]
    fn a_day_before_the_start_waits_for_the_next_counted_period() {
        let schedule = Schedule::new(&ScheduleInput {
            interval: 2,
            day_of_month: Some(15),
            ..input(Frequency::Monthly, "2027-01-20")
        })
        .unwrap();
        assert_eq!(days(&schedule, 3), ["2027-03-15", "2027-05-15", "2027-07-15"]);
    }

    #[test]
    fn weekly_defaults_to_the_weekday_of_the_start_and_counts_weeks_from_monday() {
        let schedule = Schedule::new(&input(Frequency::Weekly, "2027-01-06")).unwrap();
        assert_eq!(schedule.pattern(), Pattern::Weekly { weekday: Weekday::Wednesday });
        assert_eq!(days(&schedule, 2), ["2027-01-06", "2027-01-13"]);
        let fortnightly = Schedule::new(&ScheduleInput {
            interval: 2,
            weekday: Some(Weekday::Monday),
            ..input(Frequency::Weekly, "2027-01-06")
        })
        .unwrap();
        assert_eq!(days(&fortnightly, 2), ["2027-01-18", "2027-02-01"]);
        assert_eq!(fortnightly.rrule(), "FREQ=WEEKLY;INTERVAL=2;WKST=MO;BYDAY=MO");
    }

    #[test]
    fn yearly_defaults_to_the_month_of_the_start() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(1),
            count: Some(2),
            ..input(Frequency::Yearly, "2027-03-10")
        })
        .unwrap();
        assert_eq!(days(&schedule, 5), ["2028-03-01", "2029-03-01"]);
        assert_eq!(schedule.rrule(), "FREQ=YEARLY;INTERVAL=1;BYMONTH=3;BYMONTHDAY=1;COUNT=2");
    }

    #[test]
    fn an_end_day_is_included() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(5),
            ends_on: Some(day("2027-03-05")),
            ..input(Frequency::Monthly, "2027-01-01")
        })
        .unwrap();
        assert_eq!(days(&schedule, 9), ["2027-01-05", "2027-02-05", "2027-03-05"]);
    }

    #[test]
    fn rules_are_named() {
        let monthly = input(Frequency::Monthly, "2027-01-01");
        let refused = |input: ScheduleInput| Schedule::new(&input).unwrap_err();
        assert_eq!(refused(ScheduleInput { interval: 0, ..monthly.clone() }), ScheduleRule::Interval);
        assert_eq!(refused(monthly.clone()), ScheduleRule::DayOfMonthMissing);
        assert_eq!(
            refused(ScheduleInput { day_of_month: Some(29), ..monthly.clone() }),
            ScheduleRule::DayOfMonth
        );
        assert_eq!(
            refused(ScheduleInput { day_of_month: Some(0), ..monthly.clone() }),
            ScheduleRule::DayOfMonth
        );
        let monthly = ScheduleInput { day_of_month: Some(1), ..monthly };
        assert_eq!(
            refused(ScheduleInput { weekday: Some(Weekday::Monday), ..monthly.clone() }),
            ScheduleRule::WeekdayNotWeekly
        );
        assert_eq!(
            refused(ScheduleInput { month: Some(2), ..monthly.clone() }),
            ScheduleRule::MonthNotYearly
        );
        assert_eq!(
            refused(ScheduleInput { ends_on: Some(day("2027-02-01")), count: Some(2), ..monthly.clone() }),
            ScheduleRule::TwoEndings
        );
        assert_eq!(
            refused(ScheduleInput { ends_on: Some(day("2026-12-31")), ..monthly.clone() }),
            ScheduleRule::EndsBeforeStart
        );
        assert_eq!(refused(ScheduleInput { count: Some(0), ..monthly.clone() }), ScheduleRule::Count);
        assert_eq!(
            refused(ScheduleInput { day_of_month: Some(20), ends_on: Some(day("2027-01-10")), ..monthly }),
            ScheduleRule::NoDay
        );
        let weekly = input(Frequency::Weekly, "2027-01-01");
        assert_eq!(
            refused(ScheduleInput { day_of_month: Some(1), ..weekly.clone() }),
            ScheduleRule::DayOfMonthNotWeekly
        );
        let yearly = ScheduleInput { day_of_month: Some(1), ..input(Frequency::Yearly, "2027-01-01") };
        assert_eq!(refused(ScheduleInput { month: Some(13), ..yearly }), ScheduleRule::Month);
    }

    fn monthly_on_the_first() -> Schedule {
        Schedule::new(&ScheduleInput { day_of_month: Some(1), ..input(Frequency::Monthly, "2027-01-01") })
            .unwrap()
    }

    #[test]
    fn a_pass_generates_the_latest_due_period_and_skips_the_ones_missed() {
        let schedule = monthly_on_the_first();
        let first = schedule.occurrence(1).unwrap();
        let before = schedule.pass(first, day("2026-12-31"));
        assert_eq!(before, Pass { generate: None, skip: vec![], next: Some(first) });
        let on_time = schedule.pass(first, day("2027-01-01"));
        assert_eq!(on_time.generate, Some(first));
        assert!(on_time.skip.is_empty());
        assert_eq!(on_time.next, schedule.occurrence(2));
        // Down from January to mid-April: April is generated, February and March skipped.
        let after_a_gap = schedule.pass(schedule.occurrence(2).unwrap(), day("2027-04-15"));
        assert_eq!(after_a_gap.generate.map(|o| o.on), Some(day("2027-04-01")));
        assert_eq!(after_a_gap.skip.iter().map(|o| o.sequence).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(after_a_gap.next.map(|o| o.on), Some(day("2027-05-01")));
    }

    #[test]
    fn a_pass_past_the_end_completes_the_schedule() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(1),
            count: Some(2),
            ..input(Frequency::Monthly, "2027-01-01")
        })
        .unwrap();
        let pass = schedule.pass(schedule.occurrence(1).unwrap(), day("2028-01-01"));
        assert_eq!(pass.generate.map(|o| o.sequence), Some(2));
        assert_eq!(pass.skip.len(), 1);
        assert_eq!(pass.next, None);
    }

    #[test]
    fn the_first_period_bills_the_interval_before_it() {
        let schedule = Schedule::new(&ScheduleInput {
            day_of_month: Some(-1),
            ..input(Frequency::Monthly, "2027-03-01")
        })
        .unwrap();
        let first = schedule.occurrence(1).unwrap();
        assert_eq!(
            schedule.billed_days(first),
            Some(BilledDays { first: day("2027-02-28"), last: day("2027-03-30") })
        );
        let second = schedule.occurrence(2).unwrap();
        assert_eq!(
            schedule.billed_days(second),
            Some(BilledDays { first: day("2027-03-31"), last: day("2027-04-29") })
        );
    }

    #[test]
    fn the_first_day_on_or_after_any_day_is_found() {
        let schedule = Schedule::new(&ScheduleInput {
            interval: 3,
            day_of_month: Some(10),
            ..input(Frequency::Monthly, "2027-01-01")
        })
        .unwrap();
        assert_eq!(schedule.first_on_or_after(day("2027-01-10")).map(|o| o.sequence), Some(1));
        assert_eq!(schedule.first_on_or_after(day("2027-01-11")).map(|o| o.on), Some(day("2027-04-10")));
        assert_eq!(schedule.first_on_or_after(day("2031-06-30")).map(|o| o.on), Some(day("2031-07-10")));
        assert_eq!(schedule.first_on_or_after(day("2020-01-01")).map(|o| o.sequence), Some(1));
    }

    fn any_schedule() -> impl proptest::strategy::Strategy<Value = Schedule> {
        use proptest::prelude::*;
        let frequency =
            prop_oneof![Just(Frequency::Weekly), Just(Frequency::Monthly), Just(Frequency::Yearly)];
        (frequency, 1..=12_i64, 0..7_usize, prop_oneof![1..=28_i64, Just(-1_i64)], 1..=12_i64, 0..3000_u64)
            .prop_map(|(frequency, interval, weekday, day_of_month, month, offset)| {
                let starts_on = day("2026-01-01") + Days::new(offset);
                let weekly = frequency == Frequency::Weekly;
                Schedule::new(&ScheduleInput {
                    interval,
                    day_of_month: (!weekly).then_some(day_of_month),
                    weekday: weekly.then(|| <Weekday as kernel::Words>::ALL[weekday]),
                    month: (frequency == Frequency::Yearly).then_some(month),
                    ..ScheduleInput::starting(frequency, starts_on)
                })
                .unwrap()
            })
    }

    proptest::proptest! {
        /// The jump of `first_on_or_after` lands where walking from the first day does.
        #[test]
        fn the_first_day_on_or_after_is_the_walk_s(schedule in any_schedule(), offset in 0..6000_u64) {
            let target = day("2025-06-01") + Days::new(offset);
            let walked = schedule.occurrences_from(1).find(|occurrence| occurrence.on >= target);
            proptest::prop_assert_eq!(schedule.first_on_or_after(target), walked);
        }

        /// Each period bills the days from the one before it up to its own, with no gap and
        /// no overlap between two periods.
        #[test]
        fn billed_days_tile_the_calendar(schedule in any_schedule(), sequence in 1..40_u32) {
            let this = schedule.occurrence(sequence).unwrap();
            let next = schedule.occurrence(sequence + 1).unwrap();
            let (this_days, next_days) = (schedule.billed_days(this).unwrap(), schedule.billed_days(next).unwrap());
            proptest::prop_assert_eq!(next_days.first, this.on);
            proptest::prop_assert_eq!(this_days.last.succ_opt().unwrap(), this.on);
            proptest::prop_assert!(this_days.first <= this_days.last);
        }
    }
}
