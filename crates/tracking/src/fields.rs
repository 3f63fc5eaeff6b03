//! The bounds of every tracking field, as types.

use kernel::{InvalidValue, Text};

/// A tag, project or section title: 1 to 255 characters.
pub type Title = Text<1, 255>;
/// A time entry's task name: 1 to 255 characters.
pub type TaskName = Text<1, 255>;
/// A time entry's description: at most 1000 characters (characters, not bytes).
pub type Description = Text<0, 1000>;
/// A project's code: 1 to 50 characters. A project without one has `None`; the API reads an
/// empty string as "no code".
pub type ProjectCode = Text<1, 50>;

/// A positive number of seconds, at most 2^53 − 1 so that it survives a JSON number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DurationSeconds(u64);

impl DurationSeconds {
    pub const MAX: u64 = 9_007_199_254_740_991;

    pub fn parse(seconds: i128) -> Result<Self, InvalidValue> {
        match u64::try_from(seconds) {
            Ok(s) if (1..=Self::MAX).contains(&s) => Ok(Self(s)),
            _ if seconds < 1 => Err(InvalidValue::new("must be greater than 0")),
            _ => Err(InvalidValue::new(format!("must be at most {}", Self::MAX))),
        }
    }

    /// `seconds` brought into the bounds: below 1 is 1, above [`Self::MAX`] is the maximum.
    pub fn clamped(seconds: i64) -> Self {
        Self(u64::try_from(seconds).unwrap_or(0).clamp(1, Self::MAX))
    }

    pub fn get(self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Description, DurationSeconds, ProjectCode};

    #[test]
    fn duration_bounds() {
        assert!(DurationSeconds::parse(0).is_err());
        assert!(DurationSeconds::parse(-5).is_err());
        assert_eq!(DurationSeconds::parse(1).map(DurationSeconds::get), Ok(1));
        assert!(DurationSeconds::parse(i128::from(DurationSeconds::MAX)).is_ok());
        assert!(DurationSeconds::parse(i128::from(DurationSeconds::MAX) + 1).is_err());
        assert_eq!(DurationSeconds::clamped(-3).get(), 1);
        assert_eq!(DurationSeconds::clamped(42).get(), 42);
        assert_eq!(DurationSeconds::clamped(i64::MAX).get(), DurationSeconds::MAX);
    }

    #[test]
    fn description_counts_characters() {
        assert!(Description::parse("é".repeat(1000)).is_ok());
        assert!(Description::parse("é".repeat(1001)).is_err());
        assert!(ProjectCode::parse("").is_err());
        assert!(ProjectCode::parse("ü".repeat(50)).is_ok());
    }

    proptest! {
        #[test]
        fn duration_accepts_exactly_its_range(seconds in any::<i128>()) {
            let expected = (1..=i128::from(DurationSeconds::MAX)).contains(&seconds);
            prop_assert_eq!(DurationSeconds::parse(seconds).is_ok(), expected);
        }

        #[test]
        fn duration_round_trips(seconds in 1..=DurationSeconds::MAX) {
            prop_assert_eq!(DurationSeconds::parse(i128::from(seconds)).map(DurationSeconds::get), Ok(seconds));
        }
    }
}
