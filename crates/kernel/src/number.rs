//! Numbers as JSON writes them (`12`, `-0.5`, `1.5e3`), read exactly from their text: the
//! API keeps a number's text as it came (`serde_json`'s `arbitrary_precision`), so nothing
//! is lost to binary floating point before a rule looks at it. A number's text has no
//! bound on its digits or its exponent; none of the arithmetic here can overflow.

/// Exponents beyond this are read as this: every bound a number meets is many orders of
/// magnitude inside it, so the number keeps its verdict (too large, too many places) while
/// the arithmetic on it stays far from `i64`'s limits.
const EXPONENT_LIMIT: i64 = 1 << 40;

/// A JSON number read exactly: its sign, its significant digits (no leading or trailing
/// zeros) and a power of ten, `digits × 10^exponent`: `-1.50e2` is `-`, `"15"`, `1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonNumber {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl JsonNumber {
    /// `None` unless `text` is a JSON number.
    pub fn read(text: &str) -> Option<Self> {
        let (negative, rest) = text.strip_prefix('-').map_or((false, text), |rest| (true, rest));
        let (mantissa, exponent) = rest.split_once(['e', 'E']).map_or((rest, None), |(m, e)| (m, Some(e)));
        let (whole, fraction) = mantissa.split_once('.').map_or((mantissa, ""), |(w, f)| (w, f));
        let is_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if !is_digits(whole) || (mantissa.contains('.') && !is_digits(fraction)) {
            return None;
        }
        let exponent = match exponent {
            Some(exponent) => read_exponent(exponent)?,
            None => 0,
        };
        let all = format!("{whole}{fraction}");
        let trimmed = all.trim_end_matches('0');
        let digits = trimmed.trim_start_matches('0').to_owned();
        if digits.is_empty() {
            return Some(Self { negative: false, digits, exponent: 0 });
        }
        let dropped = count(all.len() - trimmed.len());
        Some(Self { negative, digits, exponent: exponent - count(fraction.len()) + dropped })
    }

    /// Whether the number is 0 (`-0` and `0e5` included).
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the number is below 0.
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// Digits after the decimal point, the trailing zeros left out: `1.50` has 1, `15e1` 0.
    pub fn decimal_places(&self) -> i64 {
        (-self.exponent).max(0)
    }

    /// Digits before the decimal point: `123.4` has 3, `0.05` has -1 (its first digit is
    /// the second after the point), `1e3` has 4.
    pub fn whole_digits(&self) -> i64 {
        count(self.digits.len()) + self.exponent
    }

    /// The number with the digits past `places` decimal places cut, toward zero.
    #[must_use]
    pub fn cut_to_places(self, places: i64) -> Self {
        if self.decimal_places() <= places {
            return self;
        }
        let cut = usize::try_from(self.decimal_places() - places).unwrap_or(usize::MAX);
        let kept = &self.digits[..self.digits.len().saturating_sub(cut)];
        let digits = kept.trim_end_matches('0');
        if digits.is_empty() {
            return Self { negative: false, digits: String::new(), exponent: 0 };
        }
        let exponent = -places + count(kept.len() - digits.len());
        Self { negative: self.negative, digits: digits.to_owned(), exponent }
    }

    /// The number as `mantissa × 10^-scale` with a scale of at least 0, when its digits fit
    /// an `i128` (38 of them).
    pub fn to_scaled(&self) -> Option<(i128, u32)> {
        if self.is_zero() {
            return Some((0, 0));
        }
        if self.whole_digits() > 38 || count(self.digits.len()) > 38 {
            return None;
        }
        let (text, scale) = if self.exponent >= 0 {
            let zeros = "0".repeat(usize::try_from(self.exponent).ok()?);
            (format!("{}{zeros}", self.digits), 0)
        } else {
            (self.digits.clone(), u32::try_from(-self.exponent).ok()?)
        };
        let magnitude: i128 = text.parse().ok()?;
        Some((if self.negative { -magnitude } else { magnitude }, scale))
    }
}

/// An exponent's text (`+5`, `-007`), clamped to [`EXPONENT_LIMIT`]; `None` unless digits.
fn read_exponent(text: &str) -> Option<i64> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = digits.trim_start_matches('0');
    let magnitude = if digits.len() > 13 {
        EXPONENT_LIMIT
    } else {
        digits.parse::<i64>().unwrap_or(0).min(EXPONENT_LIMIT)
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// A length as a signed count (texts are far shorter than `i64::MAX`).
fn count(length: usize) -> i64 {
    i64::try_from(length).unwrap_or(i64::MAX)
}

/// A JSON number that is a whole number, however it is written (`60`, `60.0`, `6e1`), as
/// JSON Schema's `integer` counts them: `None` for one with a fraction (`1.5`) or for what
/// is no number. Beyond `i128` it saturates, so that a bound refuses it as too large.
pub fn whole_number(text: &str) -> Option<i128> {
    let number = JsonNumber::read(text)?;
    if number.decimal_places() > 0 {
        return None;
    }
    let saturated = if number.negative { -i128::MAX } else { i128::MAX };
    Some(number.to_scaled().map_or(saturated, |(value, _)| value))
}

#[cfg(test)]
mod tests {
    use super::{JsonNumber, whole_number};

    #[test]
    fn numbers_read_to_their_digits_and_power_of_ten() {
        let read = |text: &str| JsonNumber::read(text).map(|n| (n.negative, n.digits, n.exponent));
        assert_eq!(read("-1.50e2"), Some((true, "15".to_owned(), 1)));
        assert_eq!(read("0.050"), Some((false, "5".to_owned(), -2)));
        assert_eq!(read("1200"), Some((false, "12".to_owned(), 2)));
        assert_eq!(read("-0"), Some((false, String::new(), 0)));
        assert_eq!(read("0e-5"), Some((false, String::new(), 0)));
        for bad in ["", "-", ".5", "5.", "1e", "1e+", "x", "1.2.3", "1e5.5", "--1", "+1"] {
            assert_eq!(read(bad), None, "{bad:?}");
        }
    }

    /// A number's exponent has no bound in its text: none of it can overflow.
    #[test]
    fn the_largest_exponents_keep_their_verdict() {
        for text in ["1e9223372036854775807", "10e9223372036854775807", "1e+99999999999999999999999"] {
            let number = JsonNumber::read(text).unwrap();
            assert!(number.whole_digits() > 1_000_000, "{text}");
            assert_eq!(number.to_scaled(), None, "{text}");
            assert_eq!(whole_number(text), Some(i128::MAX), "{text}");
        }
        for text in ["1.5e-9223372036854775807", "1e-9223372036854775808", "1e-99999999999999999999"] {
            let number = JsonNumber::read(text).unwrap();
            assert!(number.decimal_places() > 1_000_000, "{text}");
            assert_eq!(number.to_scaled(), None, "{text}");
            assert_eq!(whole_number(text), None, "{text}");
            assert!(number.cut_to_places(28).is_zero(), "{text}");
        }
        assert_eq!(whole_number("0e9223372036854775807"), Some(0));
        assert_eq!(whole_number("-1e400"), Some(-i128::MAX));
    }

    #[test]
    fn whole_numbers_are_whole_however_written() {
        for (text, whole) in [
            ("60", Some(60)),
            ("60.0", Some(60)),
            ("6e1", Some(60)),
            ("6.0E+1", Some(60)),
            ("-3", Some(-3)),
            ("0.0", Some(0)),
            ("0e-5", Some(0)),
            ("0.00e-3", Some(0)),
            ("1.5", None),
            ("1e-1", None),
            ("x", None),
            ("1e400", Some(i128::MAX)),
        ] {
            assert_eq!(whole_number(text), whole, "{text}");
        }
    }

    #[test]
    fn cutting_places_goes_toward_zero() {
        let cut = |text: &str, places| JsonNumber::read(text).unwrap().cut_to_places(places).to_scaled();
        assert_eq!(cut("1.23456", 2), Some((123, 2)));
        assert_eq!(cut("-1.239", 2), Some((-123, 2)));
        assert_eq!(cut("1.2000001", 3), Some((12, 1)));
        assert_eq!(cut("0.0004", 3), Some((0, 0)));
        assert_eq!(cut("12", 0), Some((12, 0)));
    }
}
