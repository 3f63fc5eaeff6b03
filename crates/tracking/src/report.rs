//! Where the time went: a span's time summed per project, task, user, tag or day (Toggl's
//! and Harvest's summary reports). Storage adds the sums up ([`ReportRow`]); these rules
//! name the groups, price their billable hours and order them.

use std::collections::BTreeMap;

use accounts::{Currency, UserId};
use billing::money::{Decimal, round_to_minor};
use kernel::{FieldError, InvalidValue, Words};

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
    pub amount: Option<Decimal>,
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
/// no project (or no tag) last.
pub fn report_groups(
    rows: Vec<ReportRow>,
    group_by: ReportGroupBy,
    currency: Currency,
    title: impl Fn(Option<&str>) -> String,
) -> Result<Vec<ReportGroup>, FieldError> {
    let mut groups: BTreeMap<Option<String>, (ReportGroup, Decimal)> = BTreeMap::new();
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
            (group, Decimal::ZERO)
        });
        group.seconds += row.seconds;
        group.billable_seconds += row.billable_seconds;
        group.invoiced_seconds += row.invoiced_seconds;
        if let Some(rate) = row.rate {
            // Summed unrounded per rate, rounded once: seconds × rate ÷ 3600.
            let value = u64::try_from(row.billable_seconds)
                .ok()
                .map(Decimal::from)
                .and_then(|seconds| seconds.checked_mul(rate.amount()))
                .and_then(|value| value.checked_div(Decimal::from(3600)))
                .and_then(|value| priced.checked_add(value))
                .ok_or_else(|| {
                    FieldError::new("from", "the range's amount is too large to sum; report fewer days")
                })?;
            *priced = value;
            group.amount = Some(value);
        }
    }
    let mut groups: Vec<ReportGroup> = groups
        .into_values()
        .map(|(group, _)| ReportGroup { amount: group.amount.map(|a| round_to_minor(a, currency)), ..group })
        .collect();
    if group_by != ReportGroupBy::Day {
        groups.sort_by_cached_key(|g| (g.key.is_none(), g.title.to_lowercase(), g.key.clone()));
    }
    Ok(groups)
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
        let groups = report_groups(rows, ReportGroupBy::Project, eur, title).unwrap();
        let titles: Vec<&str> = groups.iter().map(|g| g.title.as_str()).collect();
        assert_eq!(titles, ["A", "B", "none"], "by title, no project last");
        let b = &groups[1];
        assert_eq!((b.seconds, b.billable_seconds, b.invoiced_seconds), (10_800, 9000, 900 + 3600));
        // 0.5 h × 100 + 2 h × 33.333333 = 116.666666 → 116.67
        assert_eq!(b.amount.unwrap().to_string(), "116.67");
        assert_eq!(groups[0].amount, None, "no rate, no amount");
        assert_eq!(groups[2].amount.unwrap().to_string(), "0.17");

        let days = vec![row(Some("2026-11-02"), None, 1, 1), row(Some("2026-11-01"), None, 1, 1)];
        let groups = report_groups(days, ReportGroupBy::Day, eur, |k| k.unwrap().to_owned()).unwrap();
        assert_eq!(groups[0].key.as_deref(), Some("2026-11-01"), "days in order");
    }
}
