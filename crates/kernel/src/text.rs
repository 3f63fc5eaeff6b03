use crate::InvalidValue;

/// A string of `MIN..=MAX` characters (Unicode scalar values, not bytes) that XML 1.0 can
/// carry: no control character but tab, line feed and carriage return (NUL, which no
/// database text column accepts, among them), and neither U+FFFE nor U+FFFF. Every text
/// an invoice holds goes into its e-invoices, which must stay well-formed.
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
        if let Some(refused) = value.chars().find(|c| !is_xml_char(*c)) {
            return Err(InvalidValue::new(format!(
                "must not contain the control character U+{:04X}; only tab and line breaks may be used",
                u32::from(refused)
            )));
        }
        Ok(Self(value))
    }

    /// Text as storage holds it, read back: the characters an earlier release let in that
    /// [`Text::parse`] now refuses (those XML cannot carry) are dropped, then the bounds are
    /// checked. Only for what was stored; a request's text goes through [`Text::parse`].
    pub fn from_stored(value: impl Into<String>) -> Result<Self, InvalidValue> {
        let value = value.into();
        match xml_safe(&value) {
            std::borrow::Cow::Borrowed(_) => Self::parse(value),
            std::borrow::Cow::Owned(clean) => Self::parse(clean),
        }
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

/// Whether XML 1.0 may carry `c` (its `Char` production; a Rust `char` is never a
/// surrogate).
pub fn is_xml_char(c: char) -> bool {
    !matches!(c, '\0'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

/// `text` without the characters XML 1.0 cannot carry: what text stored before they were
/// refused becomes when written as XML.
pub fn xml_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().all(is_xml_char) {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(text.chars().filter(|c| is_xml_char(*c)).collect())
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
    fn refuses_empty_and_what_xml_cannot_carry() {
        assert_eq!(Title::parse("").unwrap_err().0, "must not be empty");
        assert_eq!(
            Title::parse("a\0b").unwrap_err().0,
            "must not contain the control character U+0000; only tab and line breaks may be used"
        );
        for refused in
            ["\u{1}", "\u{8}", "\u{b}", "\u{c}", "\u{e}", "\u{1b}", "\u{1f}", "\u{fffe}", "\u{ffff}"]
        {
            assert!(Title::parse(format!("a{refused}")).is_err(), "{refused:?}");
        }
        for kept in ["a\tb", "a\nb", "a\r\nb", "\u{7f}", "\u{85}", "\u{fffd}", "\u{10ffff}"] {
            assert!(Title::parse(kept).is_ok(), "{kept:?}");
        }
        assert_eq!(Text::<0, 3>::parse("").map(Text::into_string), Ok(String::new()));
    }

    #[test]
    fn stored_text_is_read_without_what_xml_cannot_carry() {
        assert_eq!(Title::from_stored("Zo\u{1b}ë").map(Text::into_string), Ok("Zoë".to_owned()));
        assert!(Title::from_stored("\u{1b}\u{1b}").is_err(), "nothing left of it");
        assert!(Title::from_stored("ΑΒΓΔΕΖ").is_err(), "bounds still hold");
    }

    #[test]
    fn xml_safe_text_drops_only_what_xml_cannot_carry() {
        assert_eq!(super::xml_safe("Zo\u{1b}ë\tA\u{ffff}\n"), "Zoë\tA\n");
        assert!(matches!(super::xml_safe("plain"), std::borrow::Cow::Borrowed("plain")));
    }

    proptest! {
        #[test]
        fn accepts_exactly_the_strings_within_bounds(value in "\\PC{0,8}") {
            let length = value.chars().count();
            prop_assert_eq!(Title::parse(value.clone()).is_ok(), (1..=5).contains(&length));
        }

        #[test]
        fn what_it_accepts_xml_can_carry(value in "(\\PC|[\\x00-\\x1f\\u{fffe}\\u{ffff}]){0,5}") {
            let accepted = Title::parse(value.clone()).is_ok();
            let carried = value.chars().all(super::is_xml_char);
            prop_assert_eq!(accepted, carried && !value.is_empty());
        }
    }
}
