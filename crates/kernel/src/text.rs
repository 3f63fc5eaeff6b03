use crate::InvalidValue;

/// A string of `MIN..=MAX` characters (Unicode scalar values, not bytes) with no NUL
/// character, which no database text column accepts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<const MIN: usize, const MAX: usize>(String);

impl<const MIN: usize, const MAX: usize> Text<MIN, MAX> {
    pub fn parse(value: impl Into<String>) -> Result<Self, InvalidValue> {
        let value = value.into();
        let length = value.chars().count();
        if length < MIN {
            return Err(if MIN == 1 {
                InvalidValue::new("must not be empty")
            } else {
                InvalidValue::new(format!("must be at least {MIN} characters"))
            });
        }
        if length > MAX {
            return Err(InvalidValue::new(format!("must be at most {MAX} characters")));
        }
        if value.contains('\0') {
            return Err(InvalidValue::new("must not contain NUL characters"));
        }
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// The same text, where empty text would also do.
    pub fn or_empty(self) -> Text<0, MAX> {
        Text(self.0)
    }
}

impl<const MAX: usize> Text<0, MAX> {
    /// The empty text, where empty is allowed.
    pub fn empty() -> Self {
        Self(String::new())
    }
}

impl<const MIN: usize, const MAX: usize> AsRef<str> for Text<MIN, MAX> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl<const MIN: usize, const MAX: usize> std::fmt::Display for Text<MIN, MAX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Text;

    type Title = Text<1, 5>;

    #[test]
    fn counts_characters_not_bytes() {
        assert!(Title::parse("ΑΒΓΔΕ").is_ok());
        assert_eq!(Title::parse("ΑΒΓΔΕΖ").unwrap_err().0, "must be at most 5 characters");
    }

    #[test]
    fn refuses_empty_and_nul() {
        assert_eq!(Title::parse("").unwrap_err().0, "must not be empty");
        assert_eq!(Title::parse("a\0b").unwrap_err().0, "must not contain NUL characters");
        assert_eq!(Text::<0, 3>::parse("").map(Text::into_string), Ok(String::new()));
    }

    proptest! {
        #[test]
        fn accepts_exactly_the_strings_within_bounds(value in "\\PC{0,8}") {
            let length = value.chars().count();
            prop_assert_eq!(Title::parse(value.clone()).is_ok(), (1..=5).contains(&length));
        }
    }
}
