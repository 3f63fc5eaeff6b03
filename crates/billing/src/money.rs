//! Exact money: decimals (never binary floating point), rounded to the currency's minor
//! unit half away from zero, and the bounds every money input must keep.

pub use accounts::Currency;
use kernel::InvalidValue;
pub use rust_decimal::Decimal;
use rust_decimal::RoundingStrategy;

/// The largest price, amount or flat tax accepted: 10¹⁵ in major units. With at most
/// [`MAX_LINE_ITEMS`] items nothing a client can send overflows the 96-bit decimal.
pub const MAX_MONEY: Decimal = Decimal::from_parts(0xA4C6_8000, 0x0003_8D7E, 0, false, 0);
/// The largest quantity accepted: 10⁹.
pub const MAX_QUANTITY: Decimal = Decimal::from_parts(1_000_000_000, 0, 0, false, 0);
/// The largest tax percentage accepted.
pub const MAX_TAX_PERCENTAGE: Decimal = Decimal::ONE_HUNDRED;
/// The most line items one invoice holds.
pub const MAX_LINE_ITEMS: usize = 1000;

/// Parses a number as JSON writes it (`12`, `0.1`, `1.5e3`) into an exact decimal.
pub fn parse_decimal(text: &str) -> Result<Decimal, InvalidValue> {
    let parsed = if text.contains(['e', 'E']) {
        Decimal::from_scientific(text)
    } else {
        Decimal::from_str_exact(text).or_else(|_| text.parse::<Decimal>())
    };
    parsed.map_err(|_| InvalidValue::new("must be a number of at most 28 significant digits"))
}

/// `value` rounded to `currency`'s minor unit, half away from zero, and written with
/// exactly that many decimals (`10.5` → `10.50` in EUR, `1234.5` → `1235` in JPY).
pub fn round_to_minor(value: Decimal, currency: Currency) -> Decimal {
    let mut rounded =
        value.round_dp_with_strategy(currency.minor_unit(), RoundingStrategy::MidpointAwayFromZero);
    rounded.rescale(currency.minor_unit());
    rounded
}

/// A decimal in `0..=max`; `greater_than_zero` excludes 0.
fn bounded(value: Decimal, max: Decimal, greater_than_zero: bool) -> Result<Decimal, InvalidValue> {
    if greater_than_zero && value <= Decimal::ZERO {
        return Err(InvalidValue::new("must be greater than 0"));
    }
    if value.is_sign_negative() && !value.is_zero() {
        return Err(InvalidValue::new("must be at least 0"));
    }
    if value > max {
        return Err(InvalidValue::new(format!("must be at most {max}")));
    }
    // `-0` reads back as 0 everywhere.
    Ok(value.abs())
}

/// A price, amount or flat tax: `0..=10¹⁵`, as precise as given.
pub fn money_input(value: Decimal) -> Result<Decimal, InvalidValue> {
    bounded(value, MAX_MONEY, false)
}

/// A quantity: greater than 0, at most 10⁹, as precise as given.
pub fn quantity_input(value: Decimal) -> Result<Decimal, InvalidValue> {
    bounded(value, MAX_QUANTITY, true)
}

/// A tax percentage: `0..=100`.
pub fn tax_percentage_input(value: Decimal) -> Result<Decimal, InvalidValue> {
    bounded(value, MAX_TAX_PERCENTAGE, false)
}

/// `amount` for display in `currency`: rounded to the minor unit, thousands separated,
/// with the code (`1,234.50 EUR`, `120,000 JPY`).
pub fn format_money(amount: Decimal, currency: Currency) -> String {
    grouped(&round_to_minor(amount, currency), currency)
}

/// A unit price for display: like [`format_money`], but a price finer than the minor
/// unit keeps its digits (`0.125 EUR`).
pub fn format_price(price: Decimal, currency: Currency) -> String {
    let mut shown = price.normalize();
    if shown.scale() < currency.minor_unit() {
        shown.rescale(currency.minor_unit());
    }
    grouped(&shown, currency)
}

fn grouped(value: &Decimal, currency: Currency) -> String {
    let text = value.to_string();
    let (sign, digits) = text.strip_prefix('-').map_or(("", text.as_str()), |rest| ("-", rest));
    let (whole, fraction) = digits.split_once('.').map_or((digits, None), |(w, f)| (w, Some(f)));
    let mut out = String::with_capacity(text.len() + whole.len() / 3 + 4);
    out.push_str(sign);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    if let Some(fraction) = fraction {
        out.push('.');
        out.push_str(fraction);
    }
    out.push(' ');
    out.push_str(currency.as_str());
    out
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
        assert_eq!(MAX_MONEY, dec("1000000000000000"));
        assert_eq!(MAX_QUANTITY, dec("1000000000"));
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
        assert_eq!(quantity_input(Decimal::ZERO).unwrap_err().0, "must be greater than 0");
        assert_eq!(money_input(dec("-0.01")).unwrap_err().0, "must be at least 0");
        assert_eq!(money_input(dec("-0")).unwrap(), Decimal::ZERO);
        assert!(money_input(MAX_MONEY).is_ok());
        assert_eq!(tax_percentage_input(dec("100.01")).unwrap_err().0, "must be at most 100");
    }

    #[test]
    fn formats_for_the_currency() {
        assert_eq!(format_money(dec("1234.5"), currency("EUR")), "1,234.50 EUR");
        assert_eq!(format_money(dec("120000"), currency("JPY")), "120,000 JPY");
        assert_eq!(format_money(dec("0.1"), currency("KWD")), "0.100 KWD");
        assert_eq!(format_money(dec("999"), currency("USD")), "999.00 USD");
        assert_eq!(format_money(dec("1000000"), currency("USD")), "1,000,000.00 USD");
        assert_eq!(format_price(dec("0.125"), currency("EUR")), "0.125 EUR");
        assert_eq!(format_price(dec("1500.10"), currency("EUR")), "1,500.10 EUR");
        assert_eq!(format_price(dec("7"), currency("JPY")), "7 JPY");
    }
}
