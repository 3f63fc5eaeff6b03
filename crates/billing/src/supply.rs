//! What an invoice states of the supply beside its lines: when the service was rendered
//! (EN 16931 BT-72, the actual delivery date, or BG-14, the invoicing period) and the
//! buyer's purchase order (BT-13). German law (`UStG` § 14 (4) 6.) asks for the date or
//! period of the service on every invoice; without one, the invoice says it is the issue
//! date.

use chrono::NaiveDate;

/// The buyer's purchase order number (BT-13): 1 to 200 characters.
pub type PurchaseOrder = kernel::Text<1, 200>;

/// When the service was rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceTime {
    /// On one day (BT-72).
    Date(NaiveDate),
    /// Over a span of days, both included (BG-14).
    Period(ServicePeriod),
}

impl ServiceTime {
    /// Its first and last day: the same day for a date.
    pub fn days(self) -> (NaiveDate, NaiveDate) {
        match self {
            Self::Date(day) => (day, day),
            Self::Period(period) => (period.from, period.to),
        }
    }
}

/// Days from `from` to `to`, both included; never reversed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServicePeriod {
    from: NaiveDate,
    to: NaiveDate,
}

/// A period that ends before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the service period ends before it starts")]
pub struct PeriodReversed;

impl ServicePeriod {
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<Self, PeriodReversed> {
        if to < from { Err(PeriodReversed) } else { Ok(Self { from, to }) }
    }

    pub fn from(self) -> NaiveDate {
        self.from
    }

    pub fn to(self) -> NaiveDate {
        self.to
    }
}

/// The supply an invoice states: each part optional.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Supply {
    pub service: Option<ServiceTime>,
    pub purchase_order: Option<PurchaseOrder>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        text.parse().unwrap()
    }

    #[test]
    fn a_period_never_ends_before_it_starts() {
        let period = ServicePeriod::new(day("2026-11-01"), day("2026-11-30")).unwrap();
        assert_eq!(ServiceTime::Period(period).days(), (day("2026-11-01"), day("2026-11-30")));
        assert!(ServicePeriod::new(day("2026-11-02"), day("2026-11-02")).is_ok());
        assert_eq!(ServicePeriod::new(day("2026-11-02"), day("2026-11-01")), Err(PeriodReversed));
        assert_eq!(ServiceTime::Date(day("2026-11-05")).days(), (day("2026-11-05"), day("2026-11-05")));
    }

    #[test]
    fn a_purchase_order_is_1_to_200_characters() {
        assert!(PurchaseOrder::parse("PO-4711").is_ok());
        assert!(PurchaseOrder::parse("").is_err());
        assert!(PurchaseOrder::parse("x".repeat(201)).is_err());
    }
}
