//! Where the time went: a span's time summed per project, task, user, tag or day (Toggl's
//! and Harvest's summary reports). Storage adds the sums up ([`ReportRow`]); these rules
//! name the groups, price their billable hours and order them.

use std::collections::BTreeMap;
use std::fmt;

use accounts::{Currency, UserId};
use billing::money::UNIT_PRICE;
use kernel::{InvalidValue, Words};
use num_bigint::BigUint;

use crate::{HourlyRate, Period};

/// The longest span a report covers, in days.
pub const MAX_REPORT_DAYS: i64 = 366;

/// What a report's groups are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportGroupBy {
    Project,
    Task,
    User,
    /// An entry with two tags counts under both.
    Tag,
    /// The UTC day of each entry's `date`.
    Day,
}

kernel::words!(ReportGroupBy {
    Project => "project",
    Task => "task",
    User => "user",
    Tag => "tag",
    Day => "day",
});

impl ReportGroupBy {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::parse_word(text)
    }
}

/// The time a report sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportQuery {
    /// Entries whose `date` lies in it.
    pub period: Period,
    /// Only this user's time; the team's when `None`.
    pub user: Option<UserId>,
    pub group_by: ReportGroupBy,
}

/// One group's time at one hourly rate, as storage sums it: a group whose entries are on
/// projects of different rates comes in one row per rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// The project, user or tag id, the task name, or the day `YYYY-MM-DD`; `None` for
    /// time on no project or with no tag.
    pub key: Option<String>,
    /// The hourly rate of the entries' project; `None` for none.
    pub rate: Option<HourlyRate>,
    pub seconds: u128,
    /// Of entries marked billable, billed or not.
    pub billable_seconds: u128,
    /// Of entries billed on an invoice.
    pub invoiced_seconds: u128,
}

/// One group of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportGroup {
    pub key: Option<String>,
    pub title: String,
    pub seconds: u128,
    pub billable_seconds: u128,
    pub invoiced_seconds: u128,
    /// The billable hours times their rate, at the currency's minor unit; `None` when no
    /// entry of the group has a rate.
    pub amount: Option<ReportAmount>,
}

/// A report's amount: exact, at the currency's minor unit, and of any size. Tracked time
/// has no bound a sum could overflow (a duration may be 2^53 − 1 s and a team may log any
/// number of them), so amounts are summed in a big integer rather than a decimal, and a
/// report never fails for its size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportAmount {
    minor_units: BigUint,
    minor_unit: u32,
}

impl fmt::Display for ReportAmount {
    /// The amount as a decimal number with the currency's minor unit: `950.00`, `1235`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.minor_units.to_string();
        let decimals = self.minor_unit as usize;
        if decimals == 0 {
            return f.write_str(&digits);
        }
        let digits = format!("{digits:0>width$}", width = decimals + 1);
        let (units, fraction) = digits.split_at(digits.len() - decimals);
        write!(f, "{units}.{fraction}")
    }
}

/// A group's billable time priced so far, unrounded: the sum of `seconds × rate`, the rate
/// as a whole number of its smallest step (a rate has at most [`UNIT_PRICE`]'s decimals).
#[derive(Debug, Default)]
struct Priced(Option<BigUint>);

impl Priced {
    fn add(&mut self, seconds: u128, rate: HourlyRate) {
        let mut rate = rate.amount();
        rate.rescale(UNIT_PRICE.decimals);
        let steps = BigUint::from(rate.mantissa().unsigned_abs());
        let sum = self.0.take().unwrap_or_default() + BigUint::from(seconds) * steps;
        self.0 = Some(sum);
    }

    /// `Σ seconds × rate ÷ 3600` at `currency`'s minor unit, half away from zero; `None`
    /// when nothing had a rate.
    fn amount(self, currency: Currency) -> Option<ReportAmount> {
        let minor_unit = currency.minor_unit();
        let numerator = self.0? * BigUint::from(10_u32).pow(minor_unit);
        let denominator = BigUint::from(3600_u32) * BigUint::from(10_u32).pow(UNIT_PRICE.decimals);
        // Half up, which is half away from zero for amounts that are never negative.
        let minor_units = (numerator * 2_u32 + &denominator) / (denominator * 2_u32);
        Some(ReportAmount { minor_units, minor_unit })
    }
}

/// A report: its groups in order, and the time of all of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub groups: Vec<ReportGroup>,
    /// The team's, which the amounts are in.
    pub currency: Currency,
    /// The time of the span's entries, each counted once (a tag report's groups may add up
    /// to more).
    pub total_seconds: u128,
}

/// Joins the rows of each key into one group titled by `title`, prices it in `currency`,
/// and orders the groups: days in order, the others by title, with the group of time on
/// no project (or no tag) last. Nothing in it can overflow: seconds are `u128` (a row's are
/// at most 2^53 × 2^63) and amounts big integers.
pub fn report_groups(
    rows: Vec<ReportRow>,
    group_by: ReportGroupBy,
    currency: Currency,
    title: impl Fn(Option<&str>) -> String,
) -> Vec<ReportGroup> {
    let mut groups: BTreeMap<Option<String>, (ReportGroup, Priced)> = BTreeMap::new();
    for row in rows {
        let (group, priced) = groups.entry(row.key.clone()).or_insert_with(|| {
            let group = ReportGroup {
                title: title(row.key.as_deref()),
                key: row.key.clone(),
                seconds: 0,
                billable_seconds: 0,
                invoiced_seconds: 0,
                amount: None,
            };
            (group, Priced::default())
        });
        group.seconds = group.seconds.saturating_add(row.seconds);
        group.billable_seconds = group.billable_seconds.saturating_add(row.billable_seconds);
        group.invoiced_seconds = group.invoiced_seconds.saturating_add(row.invoiced_seconds);
        if let Some(rate) = row.rate {
            // Summed unrounded per rate, rounded once: seconds × rate ÷ 3600.
            priced.add(row.billable_seconds, rate);
        }
    }
    let mut groups: Vec<ReportGroup> = groups
        .into_values()
        .map(|(group, priced)| ReportGroup { amount: priced.amount(currency), ..group })
        .collect();
    if group_by != ReportGroupBy::Day {
        groups.sort_by_cached_key(|g| (g.key.is_none(), g.title.to_lowercase(), g.key.clone()));
    }
    groups
}

#[cfg(test)]
mod tests {
    use billing::money::parse_decimal;

    use super::*;

    fn row(key: Option<&str>, rate: Option<&str>, seconds: u128, billable: u128) -> ReportRow {
        ReportRow {
            key: key.map(str::to_owned),
            rate: rate.map(|r| HourlyRate::parse(parse_decimal(r).unwrap()).unwrap()),
            seconds,
            billable_seconds: billable,
            invoiced_seconds: billable / 2,
        }
    }

    #[test]
    fn groups_join_their_rates_and_price_billable_hours_once() {
        let rows = vec![
            row(Some("b"), Some("100"), 3600, 1800),
            row(None, Some("10"), 60, 60),
            row(Some("a"), None, 600, 600),
            row(Some("b"), Some("33.333333"), 7200, 7200),
        ];
        let eur = Currency::parse("EUR").unwrap();
        let title = |key: Option<&str>| key.map_or("none".to_owned(), str::to_uppercase);
        let groups = report_groups(rows, ReportGroupBy::Project, eur, title);
        let titles: Vec<&str> = groups.iter().map(|g| g.title.as_str()).collect();
        assert_eq!(titles, ["A", "B", "none"], "by title, no project last");
        let b = &groups[1];
        assert_eq!((b.seconds, b.billable_seconds, b.invoiced_seconds), (10_800, 9000, 900 + 3600));
        // 0.5 h × 100 + 2 h × 33.333333 = 116.666666 → 116.67
        assert_eq!(b.amount.as_ref().unwrap().to_string(), "116.67");
        assert_eq!(groups[0].amount, None, "no rate, no amount");
        assert_eq!(groups[2].amount.as_ref().unwrap().to_string(), "0.17");

        let days = vec![row(Some("2026-11-02"), None, 1, 1), row(Some("2026-11-01"), None, 1, 1)];
        let groups = report_groups(days, ReportGroupBy::Day, eur, |k| k.unwrap().to_owned());
        assert_eq!(groups[0].key.as_deref(), Some("2026-11-01"), "days in order");
    }

    #[test]
    fn the_longest_durations_at_the_highest_rate_sum_exactly() {
        // 1,025 entries of 2^53 − 1 s (past what a signed 64-bit sum holds) in each of two
        // rows, at the highest rate, 10^12: far past what a 96-bit decimal holds.
        let max = (1_u128 << 53) - 1;
        let seconds = max * 1025;
        let rows = vec![
            row(Some("a"), Some("1000000000000"), seconds, seconds),
            row(Some("a"), Some("0.000001"), seconds, seconds),
        ];
        for (currency, shown) in [
            // (2^53 − 1) × 1,025 × (10^12 + 10^-6) ÷ 3600, to the minor unit.
            ("EUR", "2564549787808198828953438676.70"),
            ("JPY", "2564549787808198828953438677"),
            ("KWD", "2564549787808198828953438676.697"),
        ] {
            let groups = report_groups(
                rows.clone(),
                ReportGroupBy::Project,
                Currency::parse(currency).unwrap(),
                |_| String::new(),
            );
            assert_eq!(groups[0].seconds, seconds * 2);
            assert_eq!(groups[0].amount.as_ref().unwrap().to_string(), shown, "{currency}");
        }
    }

    #[test]
    fn amounts_round_half_away_from_zero_and_show_their_minor_unit() {
        let eur = Currency::parse("EUR").unwrap();
        let priced = |seconds: u128, rate: &str| {
            let groups = report_groups(
                vec![row(Some("a"), Some(rate), seconds, seconds)],
                ReportGroupBy::Task,
                eur,
                |_| String::new(),
            );
            groups[0].amount.as_ref().unwrap().to_string()
        };
        assert_eq!(priced(18, "1"), "0.01", "0.005 rounds up");
        assert_eq!(priced(17, "1"), "0.00");
        assert_eq!(priced(0, "1"), "0.00");
        assert_eq!(priced(3600, "95"), "95.00");
    }
}
