//! Which time entries a listing covers: the UTC day, ISO week or calendar month around a
//! date.

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Utc};
use kernel::{InvalidValue, Words};

/// How far a listing widens around its date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Frequency {
    /// The UTC day of the date.
    #[default]
    Day,
    /// The ISO week of the date: Monday 00:00 to the next Monday 00:00, UTC.
    Week,
    /// The calendar month of the date, UTC.
    Month,
}

kernel::words!(Frequency { Day => "day", Week => "week", Month => "month" });

impl Frequency {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::parse_word(text)
    }

    /// The period of this length that contains `at`.
    pub fn period_around(self, at: DateTime<Utc>) -> Period {
        let day = at.date_naive();
        let (first, next) = match self {
            Self::Day => (day, day + Days::new(1)),
            Self::Week => {
                let monday = day - Days::new(u64::from(day.weekday().num_days_from_monday()));
                (monday, monday + Days::new(7))
            }
            Self::Month => {
                let first = day.with_day(1).unwrap_or(day);
                (first, first + Months::new(1))
            }
        };
        Period::new(midnight(first), midnight(next))
    }
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(chrono::NaiveTime::MIN).and_utc()
}

/// A half-open span of time, `start <= t < end`; made by [`Period::new`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Period {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Period {
    /// `start` to `end`, with an `end` past the last instant of the year 9999 brought back
    /// to it: no stored instant lies later (see [`kernel::parse_instant`]), and a later one
    /// would not compare as time where instants are kept as text (SQLite).
    pub fn new(start: DateTime<Utc>, end: DateTime<Utc>) -> Self {
        Self { start, end: kernel::span_end(end) }
    }

    /// Its first and last UTC day, as a service period; `None` when it is empty.
    pub fn days(&self) -> Option<billing::ServicePeriod> {
        let last = self.end.checked_sub_signed(chrono::TimeDelta::nanoseconds(1))?;
        billing::ServicePeriod::new(self.start.date_naive(), last.date_naive()).ok()
    }

    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.start <= at && at < self.end
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta, Utc};
    use kernel::parse_instant;
    use proptest::prelude::*;

    use super::Frequency::{self, Day, Month, Week};

    fn at(text: &str) -> DateTime<Utc> {
        parse_instant(text).unwrap()
    }

    /// (frequency, instant, first day, first day after)
    const TABLE: &[(Frequency, &str, &str, &str)] = &[
        (Day, "2026-11-20T23:59:59.999Z", "2026-11-20", "2026-11-21"),
        (Day, "2026-11-20T01:00:00+02:00", "2026-11-19", "2026-11-20"),
        (Day, "2024-02-29", "2024-02-29", "2024-03-01"),
        (Day, "2026-12-31T12:00:00Z", "2026-12-31", "2027-01-01"),
        // ISO weeks run Monday to Sunday.
        (Week, "2026-11-20", "2026-11-16", "2026-11-23"),
        (Week, "2026-11-16", "2026-11-16", "2026-11-23"),
        (Week, "2026-11-22T23:59:59.999Z", "2026-11-16", "2026-11-23"),
        // 2026-12-31 is a Thursday in ISO week 53 of 2026; week 1 of 2027 starts 2027-01-04.
        (Week, "2026-12-31", "2026-12-28", "2027-01-04"),
        (Week, "2027-01-03", "2026-12-28", "2027-01-04"),
        (Week, "2027-01-04", "2027-01-04", "2027-01-11"),
        (Week, "2024-02-29", "2024-02-26", "2024-03-04"),
        (Week, "2026-03-01", "2026-02-23", "2026-03-02"),
        (Month, "2026-11-20", "2026-11-01", "2026-12-01"),
        (Month, "2026-12-31T23:59:59.999Z", "2026-12-01", "2027-01-01"),
        (Month, "2024-02-29", "2024-02-01", "2024-03-01"),
        (Month, "2025-02-28", "2025-02-01", "2025-03-01"),
        (Month, "2026-01-31", "2026-01-01", "2026-02-01"),
        (Month, "2026-03-01T00:30:00+01:00", "2026-02-01", "2026-03-01"),
    ];

    #[test]
    fn a_period_ends_at_the_last_instant_of_the_year_9999_at_the_latest() {
        let last_nano = at("9999-12-31T23:59:59.999Z") + TimeDelta::nanoseconds(999_999);
        for frequency in [Day, Week, Month] {
            let period = frequency.period_around(at("9999-12-31T23:59:59.999Z"));
            assert_eq!(period.end, last_nano, "{frequency:?}");
            assert!(period.contains(at("9999-12-31T23:59:59.999Z")));
        }
        assert_eq!(Day.period_around(at("9999-12-30")).end, at("9999-12-31"));
    }

    #[test]
    fn periods_match_the_table() {
        for &(frequency, instant, first, after) in TABLE {
            let period = frequency.period_around(at(instant));
            assert_eq!((period.start, period.end), (at(first), at(after)), "{frequency:?} around {instant}");
        }
    }

    #[test]
    fn iso_week_numbers_agree() {
        use chrono::Datelike;
        let monday = Week.period_around(at("2026-12-31")).start;
        assert_eq!((monday.iso_week().year(), monday.iso_week().week()), (2026, 53));
        let next = Week.period_around(at("2027-01-04")).start;
        assert_eq!((next.iso_week().year(), next.iso_week().week()), (2027, 1));
    }

    #[test]
    fn frequencies_parse() {
        assert_eq!(Frequency::parse("week"), Ok(Week));
        assert!(Frequency::parse("Week").is_err());
        assert!(Frequency::parse("year").is_err());
    }

    proptest! {
        #[test]
        fn every_period_contains_its_instant_and_starts_at_midnight(
            millis in 0i64..4_102_444_800_000, pick in 0usize..3
        ) {
            let instant = DateTime::<Utc>::UNIX_EPOCH + TimeDelta::milliseconds(millis);
            let frequency = [Day, Week, Month][pick];
            let period = frequency.period_around(instant);
            prop_assert!(period.contains(instant));
            prop_assert_eq!(period.start.time(), chrono::NaiveTime::MIN);
            let days = (period.end - period.start).num_days();
            match frequency {
                Day => prop_assert_eq!(days, 1),
                Week => {
                    prop_assert_eq!(days, 7);
                    prop_assert_eq!(chrono::Datelike::weekday(&period.start), chrono::Weekday::Mon);
                }
                Month => {
                    prop_assert!((28..=31).contains(&days));
                    prop_assert_eq!(chrono::Datelike::day(&period.start), 1);
                }
            }
        }
    }
}
