//! Discounts: a percentage or an amount off a line (EN 16931 BG-27, a line allowance) or off
//! the whole document (BG-20, a document allowance). A document's discount is allocated to
//! its VAT groups, so each group's taxable amount carries its share and nothing goes below
//! zero.

use kernel::InvalidValue;
use rust_decimal::Decimal;

use crate::money::{AMOUNT, Bound, Currency, percentage_of, round_to_minor};

/// A discount's `percentage`: greater than 0, at most 100, at most 4 decimals.
pub const DISCOUNT_PERCENTAGE: Bound =
    Bound { max: Decimal::ONE_HUNDRED, decimals: 4, above_zero: true, rounded_to_minor_unit: false };
/// A discount's `amount`: greater than 0, within [`AMOUNT`], rounded to the minor unit when
/// applied.
pub const DISCOUNT_AMOUNT: Bound = Bound { above_zero: true, ..AMOUNT };

/// A discount as a caller states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discount {
    /// This percentage of what it applies to.
    Percentage(Decimal),
    /// This amount, at the currency's minor unit.
    Amount(Decimal),
}

impl Discount {
    /// A percentage discount within [`DISCOUNT_PERCENTAGE`].
    pub fn percentage(percentage: Decimal) -> Result<Self, InvalidValue> {
        Ok(Self::Percentage(DISCOUNT_PERCENTAGE.check(percentage)?))
    }

    /// An amount discount within [`DISCOUNT_AMOUNT`].
    pub fn amount(amount: Decimal) -> Result<Self, InvalidValue> {
        Ok(Self::Amount(DISCOUNT_AMOUNT.check(amount)?))
    }

    /// What it takes off `base` (at the minor unit), as an allowance; `None` when that is
    /// more than `base`.
    pub fn off(self, base: Decimal, currency: Currency) -> Option<Allowance> {
        let (percentage, amount) = match self {
            Self::Percentage(percentage) => (Some(percentage), percentage_of(base, percentage, currency)?),
            Self::Amount(amount) => (None, round_to_minor(amount, currency)),
        };
        (amount <= base).then_some(Allowance { percentage, amount })
    }
}

/// A discount taken off what it applies to: the amount (BT-136, BT-92) and, for a
/// percentage discount, the percentage (BT-138, BT-94).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    pub percentage: Option<Decimal>,
    /// At the minor unit; never more than what it applies to.
    pub amount: Decimal,
}

impl Allowance {
    /// The discount it was made of.
    pub fn discount(self) -> Discount {
        match self.percentage {
            Some(percentage) => Discount::Percentage(percentage),
            None => Discount::Amount(self.amount),
        }
    }
}

/// A document's `discount` spread over `bases` (each group's sum of line net amounts, at the
/// minor unit, in order): one amount per base, never above it, summing to what the discount
/// takes off their total. A percentage takes its share of each base, rounded once per base,
/// as each group's allowance states it (BT-92 = BT-93 × BT-94 / 100); an amount is split in
/// proportion to the bases, the units rounding leaves going to the largest remainders
/// (first in order on a tie). `None` when the discount is more than the bases' total.
pub fn allocate(discount: Discount, bases: &[Decimal], currency: Currency) -> Option<Vec<Decimal>> {
    match discount {
        Discount::Percentage(percentage) => {
            bases.iter().map(|base| percentage_of(*base, percentage, currency)).collect()
        }
        Discount::Amount(amount) => {
            let minor = currency.minor_unit();
            let units = |value: Decimal| -> Option<i128> {
                let mut value = round_to_minor(value, currency);
                value.rescale(minor);
                Some(value.mantissa())
            };
            let amount = units(amount)?;
            let bases: Vec<i128> = bases.iter().map(|base| units(*base)).collect::<Option<_>>()?;
            let total: i128 = bases.iter().sum();
            if amount > total {
                return None;
            }
            if total == 0 {
                return Some(vec![Decimal::new(0, minor); bases.len()]);
            }
            let mut shares: Vec<(i128, i128)> = bases
                .iter()
                .map(|base| {
                    let product = amount.checked_mul(*base)?;
                    Some((product / total, product % total))
                })
                .collect::<Option<_>>()?;
            let mut left = amount - shares.iter().map(|(share, _)| share).sum::<i128>();
            let mut order: Vec<usize> = (0..shares.len()).collect();
            order.sort_by_key(|index| std::cmp::Reverse(shares[*index].1));
            for index in order {
                if left == 0 {
                    break;
                }
                shares[index].0 += 1;
                left -= 1;
            }
            shares.iter().map(|(share, _)| Decimal::try_from_i128_with_scale(*share, minor).ok()).collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::money::parse_decimal;

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap()
    }

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    fn texts(values: &[Decimal]) -> Vec<String> {
        values.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_discount_is_above_zero_and_a_percentage_at_most_a_hundred() {
        assert!(Discount::percentage(dec("10")).is_ok());
        assert!(Discount::percentage(dec("100")).is_ok());
        assert!(Discount::percentage(Decimal::ZERO).is_err());
        assert!(Discount::percentage(dec("100.01")).is_err());
        assert!(Discount::percentage(dec("12.34567")).is_err());
        assert!(Discount::amount(dec("0.01")).is_ok());
        assert!(Discount::amount(Decimal::ZERO).is_err());
        assert!(Discount::amount(dec("-1")).is_err());
    }

    #[test]
    fn a_discount_takes_no_more_than_its_base() {
        let eur = currency("EUR");
        let ten_percent = Discount::Percentage(dec("10")).off(dec("19.99"), eur).unwrap();
        assert_eq!(
            (ten_percent.percentage, ten_percent.amount.to_string()),
            (Some(dec("10")), "2.00".into())
        );
        let five = Discount::Amount(dec("5.004")).off(dec("19.99"), eur).unwrap();
        assert_eq!((five.percentage, five.amount.to_string()), (None, "5.00".into()));
        assert_eq!(Discount::Amount(dec("20")).off(dec("19.99"), eur), None);
        assert_eq!(Discount::Amount(dec("19.99")).off(dec("19.99"), eur).unwrap().amount, dec("19.99"));
        assert_eq!(Discount::Percentage(dec("100")).off(dec("19.99"), eur).unwrap().amount, dec("19.99"));
        assert_eq!(ten_percent.discount(), Discount::Percentage(dec("10")));
        assert_eq!(five.discount(), Discount::Amount(dec("5.00")));
    }

    #[test]
    fn an_amount_is_split_by_the_bases_and_sums_exactly() {
        let eur = currency("EUR");
        let split = allocate(Discount::Amount(dec("10")), &[dec("20.00"), dec("40.00"), dec("40.00")], eur);
        assert_eq!(texts(&split.unwrap()), ["2.00", "4.00", "4.00"]);
        // 1.00 over three equal bases: 0.33 each and the cent left to the first.
        let split = allocate(Discount::Amount(dec("1")), &[dec("5.00"), dec("5.00"), dec("5.00")], eur);
        assert_eq!(texts(&split.unwrap()), ["0.34", "0.33", "0.33"]);
        let yen = allocate(Discount::Amount(dec("100")), &[dec("150"), dec("50")], currency("JPY"));
        assert_eq!(texts(&yen.unwrap()), ["75", "25"]);
        assert_eq!(allocate(Discount::Amount(dec("15.01")), &[dec("5.00"), dec("10.00")], eur), None);
        let percent = allocate(Discount::Percentage(dec("10")), &[dec("20.05"), dec("0.05")], eur);
        assert_eq!(texts(&percent.unwrap()), ["2.01", "0.01"]);
    }

    proptest! {
        #[test]
        fn allocations_sum_to_the_discount_and_stay_within_each_base(
            bases in prop::collection::vec(0_i64..1_000_000, 1..6),
            part in 0_u32..=1000,
            code in prop::sample::select(vec!["EUR", "JPY", "KWD"]),
        ) {
            let currency = currency(code);
            let minor = currency.minor_unit();
            let bases: Vec<Decimal> = bases.iter().map(|units| Decimal::new(*units, minor)).collect();
            let total: Decimal = bases.iter().sum();
            let amount = round_to_minor(total * Decimal::from(part) / Decimal::from(1000), currency);
            let shares = allocate(Discount::Amount(amount), &bases, currency).unwrap();
            prop_assert_eq!(shares.iter().sum::<Decimal>(), amount);
            for (share, base) in shares.iter().zip(&bases) {
                prop_assert!(*share >= Decimal::ZERO && share <= base);
                // In proportion, within one minor unit.
                if !total.is_zero() {
                    let exact = amount * base / total;
                    prop_assert!((*share - exact).abs() < Decimal::new(1, minor));
                }
            }
        }
    }
}
