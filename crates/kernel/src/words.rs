//! Enums written as one of a fixed set of words (`PENDING`, `week`, `accepted`).

use crate::InvalidValue;

/// An enum that is read and written as one of a fixed set of words. `ALL` is the one list
/// of them: parsing, the error message and an API description's `enum` all read it.
pub trait Words: Copy + Sized + 'static {
    /// Every value, in the order they are listed to people.
    const ALL: &'static [Self];

    fn as_str(self) -> &'static str;

    /// The value written as `text`, exactly.
    fn from_word(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|value| value.as_str() == text)
    }

    /// Like [`Words::from_word`], with the error a field reports: `must be one of A, B, C`.
    fn parse_word(text: &str) -> Result<Self, InvalidValue> {
        Self::from_word(text).ok_or_else(|| {
            let words: Vec<&str> = Self::ALL.iter().map(|value| value.as_str()).collect();
            InvalidValue::new(format!("must be one of {}", words.join(", ")))
        })
    }
}

/// Implements [`Words`] (and an inherent `as_str`, so callers need not import the trait)
/// for an enum from its variants' words.
#[macro_export]
macro_rules! words {
    ($name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $crate::Words for $name {
            const ALL: &'static [Self] = &[$(Self::$variant),+];

            fn as_str(self) -> &'static str {
                Self::as_str(self)
            }
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
        }
    };
}

#[cfg(test)]
#[expect(unreachable_pub, reason = "`words!` makes `as_str` public, as its users need")]
mod tests {
    use super::Words;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Speed {
        Slow,
        Fast,
    }

    crate::words!(Speed { Slow => "slow", Fast => "fast" });

    #[test]
    fn words_parse_exactly_and_name_the_choices() {
        assert_eq!(Speed::from_word("fast"), Some(Speed::Fast));
        assert_eq!(Speed::from_word("Fast"), None);
        assert_eq!(Speed::parse_word("slow").ok(), Some(Speed::Slow));
        assert_eq!(Speed::parse_word("").unwrap_err().to_string(), "must be one of slow, fast");
    }
}
