//! Exact money: decimals (never binary floating point), rounded to the currency's minor
//! unit half away from zero, and the bounds every money input must keep. Within those
//! bounds no sum or product of an invoice is ever rounded except to the minor unit.

pub use accounts::Currency;
use kernel::InvalidValue;
use kernel::number::JsonNumber;
use locale::Language;
pub use rust_decimal::{Decimal, RoundingStrategy};

/// What one money or quantity field accepts: a largest value and a most decimal places,
/// chosen so that every sum and product of an invoice is exact (see [`line_amount`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub max: Decimal,
    /// Most digits after the decimal point.
    pub decimals: u32,
    /// Whether 0 itself is refused.
    pub above_zero: bool,
    /// Whether the value is rounded to the currency's minor unit before use, so that it
    /// takes any number of decimals: [`Bound::parse`] cuts those past 28 significant digits
    /// (what a decimal holds), toward zero, which never changes a rounding to 4 places at
    /// most (at most 22 whole digits leave 6 places, and a half of the 4th place survives).
    pub rounded_to_minor_unit: bool,
}

/// A line's `unitPrice`: `0..=10¹²`, at most 6 decimals.
pub const UNIT_PRICE: Bound = Bound {
    max: Decimal::from_parts(0xD4A5_1000, 0xE8, 0, false, 0),
    decimals: 6,
    above_zero: false,
    rounded_to_minor_unit: false,
};
/// A line's `quantity`: greater than 0, at most 10⁹, at most 6 decimals.
pub const QUANTITY: Bound = Bound {
    max: Decimal::from_parts(1_000_000_000, 0, 0, false, 0),
    decimals: 6,
    above_zero: true,
    rounded_to_minor_unit: false,
};
/// A given line `amount` or flat `tax`: `0..=10²¹` (the largest price times the largest
/// quantity). Both are rounded to the minor unit, the one rounding the contract asks for,
/// so they take any number of decimals (a float-minded client's `0.30000000000000004` is
/// `0.30`): [`Bound::parse`] cuts those past what a decimal holds, which never changes
/// that rounding.
pub const AMOUNT: Bound = Bound {
    max: Decimal::from_parts(0xDEA0_0000, 0x35C9_ADC5, 0x36, false, 0),
    decimals: 28,
    above_zero: false,
    rounded_to_minor_unit: true,
};
/// A `taxPercentage`: `0..=100`, at most 4 decimals.
pub const TAX_PERCENTAGE: Bound =
    Bound { max: Decimal::ONE_HUNDRED, decimals: 4, above_zero: false, rounded_to_minor_unit: false };
/// The most line items one invoice holds.
pub const MAX_LINE_ITEMS: usize = 1000;

/// An exchange rate: units of the team's currency per unit of an invoice's, greater than
/// 0, at most 10 decimal places, at most 10⁹.
pub const EXCHANGE_RATE: Bound = Bound {
    max: Decimal::from_parts(1_000_000_000, 0, 0, false, 0),
    decimals: 10,
    above_zero: true,
    rounded_to_minor_unit: false,
};

impl Bound {
    /// `value` if it keeps this bound; `-0` reads back as 0.
    pub fn check(self, value: Decimal) -> Result<Decimal, InvalidValue> {
        if self.above_zero && value <= Decimal::ZERO {
            return Err(InvalidValue::new("must be greater than 0"));
        }
        if value.is_sign_negative() && !value.is_zero() {
            return Err(InvalidValue::new("must be at least 0"));
        }
        if value > self.max {
            return Err(InvalidValue::new(format!("must be at most {}", self.max)));
        }
        let value = value.abs().normalize();
        if value.scale() > self.decimals {
            return Err(InvalidValue::new(format!("must have at most {} decimal places", self.decimals)));
        }
        Ok(value)
    }

    /// Parses a number as JSON writes it (`12`, `0.1`, `1.5e3`) and checks this bound,
    /// naming the rule a refused number breaks (`must have at most 6 decimal places`,
    /// `must be at most 1000000000`) rather than what a decimal can hold.
    pub fn parse(self, text: &str) -> Result<Decimal, InvalidValue> {
        let number = JsonNumber::read(text).ok_or_else(|| InvalidValue::new("must be a number"))?;
        if number.is_zero() {
            return self.check(Decimal::ZERO);
        }
        if number.is_negative() {
            let rule = if self.above_zero { "must be greater than 0" } else { "must be at least 0" };
            return Err(InvalidValue::new(rule));
        }
        let number = if self.rounded_to_minor_unit {
            // Past 28 significant digits, cut: see `rounded_to_minor_unit`.
            let places = (28 - number.whole_digits().max(0)).clamp(0, 28);
            number.cut_to_places(places)
        } else {
            number
        };
        if number.decimal_places() > i64::from(self.decimals) {
            return Err(InvalidValue::new(format!("must have at most {} decimal places", self.decimals)));
        }
        let max_digits = i64::try_from(self.max.trunc().to_string().len()).unwrap_or(i64::MAX);
        if number.whole_digits() > max_digits {
            return Err(InvalidValue::new(format!("must be at most {}", self.max)));
        }
        let value = decimal_of(&number).ok_or_else(|| {
            InvalidValue::new(format!(
                "must have at most {} significant digits",
                Decimal::MAX.to_string().len() - 1
            ))
        })?;
        self.check(value)
    }

    /// The step every accepted value is a multiple of (`0.000001` for 6 decimals).
    pub fn step(self) -> Decimal {
        Decimal::new(1, self.decimals)
    }
}

/// Parses a number as JSON writes it (`12`, `0.1`, `1.5e3`) into an exact decimal; a
/// number with more significant digits than a decimal holds (28) is refused, never rounded.
pub fn parse_decimal(text: &str) -> Result<Decimal, InvalidValue> {
    JsonNumber::read(text)
        .as_ref()
        .and_then(decimal_of)
        .ok_or_else(|| InvalidValue::new("must be a number of at most 28 significant digits"))
}

/// The exact decimal `number` is, when one holds it (28 digits, at most 28 places).
fn decimal_of(number: &JsonNumber) -> Option<Decimal> {
    let (mantissa, scale) = number.to_scaled()?;
    Decimal::try_from_i128_with_scale(mantissa, scale).ok()
}

/// `value` rounded to `currency`'s minor unit, half away from zero, and written with
/// exactly that many decimals (`10.5` → `10.50` in EUR, `1234.5` → `1235` in JPY).
pub fn round_to_minor(value: Decimal, currency: Currency) -> Decimal {
    let mut rounded =
        value.round_dp_with_strategy(currency.minor_unit(), RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(currency.minor_unit());
    rounded
}

/// `price × quantity` rounded to the minor unit, computed exactly: within [`UNIT_PRICE`]
/// and [`QUANTITY`] the full product has at most 34 digits, which a decimal (28) could
/// not hold but a 128-bit integer can. `None` past those bounds.
pub fn line_amount(price: Decimal, quantity: Decimal, currency: Currency) -> Option<Decimal> {
    let product = price.mantissa().checked_mul(quantity.mantissa())?;
    rounded_scaled(product, price.scale() + quantity.scale(), currency)
}

/// `amount × percentage / 100` rounded to the minor unit, computed exactly.
pub fn percentage_of(amount: Decimal, percentage: Decimal, currency: Currency) -> Option<Decimal> {
    let product = amount.mantissa().checked_mul(percentage.mantissa())?;
    rounded_scaled(product, amount.scale() + percentage.scale() + 2, currency)
}

/// `mantissa × 10^-scale` rounded half away from zero to the minor unit.
fn rounded_scaled(mantissa: i128, scale: u32, currency: Currency) -> Option<Decimal> {
    let minor = currency.minor_unit();
    let units = if scale <= minor {
        mantissa.checked_mul(10_i128.checked_pow(minor - scale)?)?
    } else {
        let divisor = 10_i128.checked_pow(scale - minor)?;
        let (quotient, remainder) = (mantissa / divisor, mantissa % divisor);
        let away = if remainder.unsigned_abs() * 2 >= divisor.unsigned_abs() { mantissa.signum() } else { 0 };
        quotient + away
    };
    Decimal::try_from_i128_with_scale(units, minor).ok()
}

/// `amount` for display in `currency`, as `language` writes it: rounded to the minor unit,
/// thousands separated, with the code (`1,234.50 EUR`, `120,000 JPY`).
pub fn format_money(language: Language, amount: Decimal, currency: Currency) -> String {
    grouped(language, &round_to_minor(amount, currency), currency)
}

/// A unit price for display: like [`format_money`], but a price finer than the minor
/// unit keeps its digits (`0.125 EUR`).
pub fn format_price(language: Language, price: Decimal, currency: Currency) -> String {
    let mut shown = price.normalize();
    if shown.scale() < currency.minor_unit() {
        shown.rescale(currency.minor_unit());
    }
    grouped(language, &shown, currency)
}

fn grouped(language: Language, value: &Decimal, currency: Currency) -> String {
    language.money(&value.to_string(), currency.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(text: &str) -> Decimal {
        parse_decimal(text).unwrap()
    }

    fn currency(code: &str) -> Currency {
        Currency::parse(code).unwrap()
    }

    #[test]
    fn constants_say_what_their_names_say() {
        assert_eq!(UNIT_PRICE.max, dec("1000000000000"));
        assert_eq!(QUANTITY.max, dec("1000000000"));
        assert_eq!(AMOUNT.max, UNIT_PRICE.max * QUANTITY.max);
        assert_eq!(QUANTITY.step().to_string(), "0.000001");
    }

    #[test]
    fn refuses_what_it_would_have_to_round() {
        let long = format!("1.{}1", "0".repeat(398));
        assert!(parse_decimal(&long).is_err());
        assert!(parse_decimal("123456789012345678901234567890").is_err());
        assert!(parse_decimal("1.23456789012345678901234567891e2").is_err());
        assert_eq!(dec(&format!("2.5{}", "0".repeat(400))).to_string(), "2.5");
        assert_eq!(dec("1.2500e2").to_string(), "125");
        assert_eq!(dec(&format!("1.{}e0", "0".repeat(40))), Decimal::ONE);
        assert_eq!(dec("0e5"), Decimal::ZERO);
    }

    #[test]
    fn products_are_exact_where_a_decimal_would_round() {
        // The full product, 436072499852474662333.524999965355, has 36 digits, more than a
        // decimal holds: it is worked out whole, then rounded once.
        let (price, quantity) = (dec("912702340527.064441"), dec("477781726.297155"));
        let usd = currency("USD");
        assert_eq!(line_amount(price, quantity, usd).unwrap().to_string(), "436072499852474662333.52");
        let largest = line_amount(UNIT_PRICE.max, QUANTITY.max, currency("KWD")).unwrap();
        assert_eq!(largest.to_string(), format!("1{}.000", "0".repeat(21)));
        assert_eq!(line_amount(dec("0.125"), dec("1"), currency("EUR")).unwrap().to_string(), "0.13");
        assert_eq!(line_amount(dec("0.005"), dec("1"), currency("JPY")).unwrap().to_string(), "0");
        assert_eq!(percentage_of(dec("10.00"), dec("7.25"), currency("USD")).unwrap().to_string(), "0.73");
        assert_eq!(percentage_of(dec("1"), dec("50"), currency("JPY")).unwrap().to_string(), "1");
    }

    #[test]
    fn parses_json_numbers_exactly() {
        assert_eq!(dec("0.30000000000000004").to_string(), "0.30000000000000004");
        assert_eq!(dec("1.5e3"), dec("1500"));
        assert_eq!(dec("12"), Decimal::from(12));
        assert!(parse_decimal("1e400").is_err());
        assert!(parse_decimal("abc").is_err());
    }

    #[test]
    fn rounds_half_away_from_zero_to_the_minor_unit() {
        let cases = [
            ("0.125", "EUR", "0.13"),
            ("0.124", "EUR", "0.12"),
            ("-0.125", "EUR", "-0.13"),
            ("10.5", "EUR", "10.50"),
            ("1234.5", "JPY", "1235"),
            ("1.0005", "KWD", "1.001"),
            ("0.30000000000000004", "USD", "0.30"),
        ];
        for (value, code, expected) in cases {
            assert_eq!(round_to_minor(dec(value), currency(code)).to_string(), expected, "{value} {code}");
        }
    }

    #[test]
    fn bounds_name_the_rule_broken() {
        assert_eq!(QUANTITY.check(Decimal::ZERO).unwrap_err().0, "must be greater than 0");
        assert_eq!(UNIT_PRICE.check(dec("-0.01")).unwrap_err().0, "must be at least 0");
        assert_eq!(UNIT_PRICE.check(dec("-0")).unwrap(), Decimal::ZERO);
        assert!(UNIT_PRICE.check(UNIT_PRICE.max).is_ok());
        assert_eq!(TAX_PERCENTAGE.check(dec("100.01")).unwrap_err().0, "must be at most 100");
        assert_eq!(TAX_PERCENTAGE.check(dec("8.87501")).unwrap_err().0, "must have at most 4 decimal places");
        assert_eq!(QUANTITY.check(dec("1.5000000")).unwrap().to_string(), "1.5");
    }

    #[test]
    fn parsed_bounds_name_the_rule_not_the_decimals_limit() {
        let refused = |bound: Bound, text: &str| bound.parse(text).unwrap_err().0;
        // 28 decimal places: a quantity takes 6.
        assert_eq!(refused(QUANTITY, "1.0000000000000000000000000001"), "must have at most 6 decimal places");
        assert_eq!(
            refused(QUANTITY, &format!("1.{}1", "0".repeat(398))),
            "must have at most 6 decimal places"
        );
        assert_eq!(refused(QUANTITY, "1.5e-7"), "must have at most 6 decimal places");
        assert_eq!(refused(UNIT_PRICE, "123456789012345678901234567890"), "must be at most 1000000000000");
        assert_eq!(refused(UNIT_PRICE, "1e400"), "must be at most 1000000000000");
        assert_eq!(refused(UNIT_PRICE, "1000000000000.000001"), "must be at most 1000000000000");
        assert_eq!(refused(QUANTITY, "0"), "must be greater than 0");
        assert_eq!(refused(QUANTITY, "-0.5"), "must be greater than 0");
        assert_eq!(refused(UNIT_PRICE, "-1e-9"), "must be at least 0");
        assert_eq!(refused(AMOUNT, "1.5e21"), "must be at most 1000000000000000000000");
        assert_eq!(refused(AMOUNT, "-1e-40"), "must be at least 0");
        assert_eq!(refused(AMOUNT, "abc"), "must be a number");
        // Exponents of any size keep their verdict, and nothing overflows on the way.
        assert_eq!(refused(QUANTITY, "1e9223372036854775807"), "must be at most 1000000000");
        assert_eq!(refused(QUANTITY, "10e9223372036854775807"), "must be at most 1000000000");
        assert_eq!(refused(UNIT_PRICE, "1.5e-9223372036854775807"), "must have at most 6 decimal places");
        assert_eq!(refused(AMOUNT, "1e+99999999999999999999999"), "must be at most 1000000000000000000000");
        assert_eq!(AMOUNT.parse("1e-9223372036854775808").unwrap(), Decimal::ZERO);
        assert_eq!(QUANTITY.parse("0e9223372036854775807").unwrap_err().0, "must be greater than 0");
        // Accepted numbers come back exact, however they are written.
        let parsed = |bound: Bound, text: &str| bound.parse(text).unwrap().to_string();
        assert_eq!(parsed(QUANTITY, "1.5000000000000000000000000000000"), "1.5");
        assert_eq!(parsed(QUANTITY, "2.25e2"), "225");
        assert_eq!(parsed(QUANTITY, "0.000001"), "0.000001");
        assert_eq!(parsed(UNIT_PRICE, "1E12"), "1000000000000");
        assert_eq!(parsed(UNIT_PRICE, "-0"), "0");
        assert_eq!(parsed(UNIT_PRICE, "0e5"), "0");
        assert_eq!(parsed(AMOUNT, "0.30000000000000004"), "0.30000000000000004");
        assert_eq!(parsed(AMOUNT, "1e21"), "1000000000000000000000");
        // An amount takes any decimals: those past 28 digits are cut, which rounding to the
        // minor unit (4 places at most) never notices.
        assert_eq!(parsed(AMOUNT, "1.00000000000000000000000000001"), "1");
        assert_eq!(parsed(AMOUNT, "2.204444005638664e-134"), "0");
        assert_eq!(parsed(AMOUNT, "123456789012345678901.123456789"), "123456789012345678901.1234567");
        assert_eq!(
            parsed(AMOUNT, &format!("0.00499999{}", "9".repeat(40))),
            "0.0049999999999999999999999999"
        );
        let eur = Currency::parse("EUR").unwrap();
        let rounded = |text: &str| round_to_minor(AMOUNT.parse(text).unwrap(), eur).to_string();
        assert_eq!(rounded(&format!("0.00499999{}", "9".repeat(40))), "0.00", "below a half stays below");
        assert_eq!(rounded(&format!("0.005{}1", "0".repeat(40))), "0.01");
        assert_eq!(parsed(TAX_PERCENTAGE, "19.0000"), "19");
    }

    #[test]
    fn formats_for_the_currency() {
        assert_eq!(format_money(Language::English, dec("1234.5"), currency("EUR")), "1,234.50 EUR");
        assert_eq!(format_money(Language::English, dec("120000"), currency("JPY")), "120,000 JPY");
        assert_eq!(format_money(Language::English, dec("0.1"), currency("KWD")), "0.100 KWD");
        assert_eq!(format_money(Language::English, dec("999"), currency("USD")), "999.00 USD");
        assert_eq!(format_money(Language::English, dec("1000000"), currency("USD")), "1,000,000.00 USD");
        assert_eq!(format_price(Language::English, dec("0.125"), currency("EUR")), "0.125 EUR");
        assert_eq!(format_price(Language::English, dec("1500.10"), currency("EUR")), "1,500.10 EUR");
        assert_eq!(format_price(Language::English, dec("7"), currency("JPY")), "7 JPY");
    }
}
