//! What a team files for a period: per currency, VAT category and rate, the taxable amount
//! and the VAT of the invoices issued in it, less those of the credit notes issued in it (a
//! correction counts in the period it is made, as VAT returns take it).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use rust_decimal::Decimal;

use crate::credit::CreditNote;
use crate::money::Currency;
use crate::{Invoice, VatCategory};

/// The longest period one return sums, in days: a year, leap day included.
pub const MAX_DAYS: i64 = 366;

/// The days a return sums, both included, at most [`MAX_DAYS`] of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReturnPeriod {
    from: NaiveDate,
    to: NaiveDate,
}

/// Why days make no return period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PeriodRule {
    #[error("the period ends before it starts")]
    Reversed,
    #[error("the period spans more than {MAX_DAYS} days")]
    TooLong,
}

impl ReturnPeriod {
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<Self, PeriodRule> {
        if to < from {
            return Err(PeriodRule::Reversed);
        }
        if (to - from).num_days() >= MAX_DAYS {
            return Err(PeriodRule::TooLong);
        }
        Ok(Self { from, to })
    }

    pub fn from(self) -> NaiveDate {
        self.from
    }

    pub fn to(self) -> NaiveDate {
        self.to
    }

    /// Whether `day` (an issue date in UTC) lies in it.
    pub fn holds(self, day: NaiveDate) -> bool {
        (self.from..=self.to).contains(&day)
    }
}

/// One line of a return: the sums of one currency, category and rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnLine {
    pub currency: Currency,
    pub category: VatCategory,
    pub percentage: Decimal,
    pub taxable_amount: Decimal,
    pub tax_amount: Decimal,
}

/// The return of `period` from a team's `invoices` and `credit_notes` (any others are left
/// out): one line per currency, category and rate that any of them has, in that order,
/// each the invoices' VAT groups less the notes'. Only `currency`'s when given.
pub fn vat_return(
    period: ReturnPeriod,
    currency: Option<Currency>,
    invoices: &[Invoice],
    credit_notes: &[CreditNote],
) -> Vec<ReturnLine> {
    type Key = (&'static str, &'static str, Decimal);
    let mut sums: BTreeMap<Key, ReturnLine> = BTreeMap::new();
    let wanted = |document_currency: Currency, issued: NaiveDate| {
        period.holds(issued) && currency.is_none_or(|currency| currency == document_currency)
    };
    let mut add = |document_currency: Currency, groups: Vec<crate::VatGroup>, sign: Decimal| {
        for group in groups {
            let rate = group.rate;
            let key = (document_currency.as_str(), rate.category.as_str(), rate.percentage);
            let line = sums.entry(key).or_insert(ReturnLine {
                currency: document_currency,
                category: rate.category,
                percentage: rate.percentage,
                taxable_amount: Decimal::ZERO,
                tax_amount: Decimal::ZERO,
            });
            line.taxable_amount += sign * group.taxable_amount;
            line.tax_amount += sign * group.tax_amount;
        }
    };
    for invoice in invoices.iter().filter(|i| wanted(i.currency, i.issue_date.date_naive())) {
        add(invoice.currency, invoice.vat_breakdown(), Decimal::ONE);
    }
    for note in credit_notes.iter().filter(|n| wanted(n.currency, n.issue_date.date_naive())) {
        add(note.currency, note.vat_breakdown(), Decimal::NEGATIVE_ONE);
    }
    sums.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_period_holds_its_days_both_included_and_a_year_at_most() {
        let period = ReturnPeriod::new(day("2024-01-01"), day("2024-12-31")).unwrap();
        assert!(period.holds(day("2024-01-01")) && period.holds(day("2024-12-31")));
        assert!(!period.holds(day("2023-12-31")) && !period.holds(day("2025-01-01")));
        assert_eq!(ReturnPeriod::new(day("2024-01-01"), day("2025-01-01")), Err(PeriodRule::TooLong));
        assert_eq!(ReturnPeriod::new(day("2024-01-02"), day("2024-01-01")), Err(PeriodRule::Reversed));
        assert!(ReturnPeriod::new(day("2024-01-01"), day("2024-01-01")).is_ok());
    }
}
