//! What each client owes: what is due on its invoices, by how long it is past due.

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use rust_decimal::Decimal;

use crate::ClientId;
use crate::money::Currency;

/// How long what is due has been past its due date, on a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Age {
    /// Not due yet, or no due date.
    Current,
    Days1To30,
    Days31To60,
    Days61To90,
    Over90,
}

impl Age {
    pub const ALL: [Self; 5] =
        [Self::Current, Self::Days1To30, Self::Days31To60, Self::Days61To90, Self::Over90];

    /// The age, on day `as_of`, of what fell due at `due` (its day in UTC counts).
    pub fn of(due: Option<DateTime<Utc>>, as_of: NaiveDate) -> Self {
        let Some(due) = due else { return Self::Current };
        let days = (as_of - due.date_naive()).num_days();
        match days {
            ..=0 => Self::Current,
            1..=30 => Self::Days1To30,
            31..=60 => Self::Days31To60,
            61..=90 => Self::Days61To90,
            _ => Self::Over90,
        }
    }

    /// The due dates of this age on day `as_of`, as instants: from (inclusive), before
    /// (exclusive); what storage compares due dates with to sum by age.
    pub fn due_between(self, as_of: NaiveDate) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
        let day = |days_ago: i64| {
            as_of
                .checked_sub_signed(TimeDelta::days(days_ago))
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|d| d.and_utc())
        };
        match self {
            Self::Current => (day(0), None),
            Self::Days1To30 => (day(30), day(0)),
            Self::Days31To60 => (day(60), day(30)),
            Self::Days61To90 => (day(90), day(60)),
            Self::Over90 => (None, day(90)),
        }
    }
}

/// What one client owes in one currency, by age.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receivable {
    pub client_id: ClientId,
    pub currency: Currency,
    /// Indexed by [`Age`], in [`Age::ALL`] order.
    pub by_age: [Decimal; 5],
}

impl Receivable {
    pub fn new(client_id: ClientId, currency: Currency) -> Self {
        Self { client_id, currency, by_age: [Decimal::ZERO; 5] }
    }

    pub fn add(&mut self, age: Age, due: Decimal) {
        self.by_age[age as usize] += due;
    }

    pub fn of(&self, age: Age) -> Decimal {
        self.by_age[age as usize]
    }

    pub fn total(&self) -> Decimal {
        self.by_age.iter().sum()
    }
}

/// Sums `dues` (client, currency, due date, amount due) by client and age, clients in
/// the order of `(client, currency)`.
pub fn sum_by_age(
    dues: impl IntoIterator<Item = (ClientId, Currency, Option<DateTime<Utc>>, Decimal)>,
    as_of: NaiveDate,
) -> Vec<Receivable> {
    let mut sums: std::collections::BTreeMap<(kernel::uuid::Uuid, String), Receivable> =
        std::collections::BTreeMap::new();
    for (client, currency, due_date, due) in dues {
        use kernel::Id;
        let key = (client.as_uuid(), currency.as_str().to_owned());
        sums.entry(key)
            .or_insert_with(|| Receivable::new(client, currency))
            .add(Age::of(due_date, as_of), due);
    }
    sums.into_values().collect()
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn ages_are_whole_days_past_the_due_day() {
        let as_of = NaiveDate::from_ymd_opt(2026, 11, 25).unwrap();
        let due = |text: &str| Some(text.parse::<DateTime<Utc>>().unwrap());
        assert_eq!(Age::of(None, as_of), Age::Current);
        assert_eq!(Age::of(due("2026-11-25T23:00:00Z"), as_of), Age::Current);
        assert_eq!(Age::of(due("2026-11-24T23:59:59Z"), as_of), Age::Days1To30);
        assert_eq!(Age::of(due("2026-10-26T00:00:00Z"), as_of), Age::Days1To30);
        assert_eq!(Age::of(due("2026-10-25T12:00:00Z"), as_of), Age::Days31To60);
        assert_eq!(Age::of(due("2026-08-27T00:00:00Z"), as_of), Age::Days61To90);
        assert_eq!(Age::of(due("2026-08-26T00:00:00Z"), as_of), Age::Over90);
        for age in Age::ALL {
            let (from, before) = age.due_between(as_of);
            for probe in [
                "2026-11-25T00:00:00Z",
                "2026-11-24T10:00:00Z",
                "2026-10-26T00:00:00Z",
                "2026-10-25T23:59:59Z",
                "2026-08-26T00:00:00Z",
                "2026-08-25T23:00:00Z",
            ] {
                let at = probe.parse::<DateTime<Utc>>().unwrap();
                let inside = from.is_none_or(|from| at >= from) && before.is_none_or(|before| at < before);
                assert_eq!(inside, Age::of(Some(at), as_of) == age, "{age:?} {probe}");
            }
        }
    }
}
