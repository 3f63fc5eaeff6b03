use crate::{InvalidValue, Text};

/// What a listing's `q` looks for: 1 to 100 characters, found anywhere in a field,
/// whatever the case of its letters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchText {
    text: Text<1, 100>,
    folded: String,
}

impl SearchText {
    pub fn parse(value: impl Into<String>) -> Result<Self, InvalidValue> {
        let text = Text::parse(value)?;
        let folded = text.as_str().to_lowercase();
        Ok(Self { text, folded })
    }

    /// The text as it was given.
    pub fn as_str(&self) -> &str {
        self.text.as_str()
    }

    /// Whether `field` holds the text, ignoring case.
    pub fn found_in(&self, field: &str) -> bool {
        field.to_lowercase().contains(&self.folded)
    }
}

#[cfg(test)]
mod tests {
    use super::SearchText;

    #[test]
    fn finds_the_text_anywhere_in_any_case() {
        let q = SearchText::parse("ACME").unwrap();
        assert!(q.found_in("Invoices of acme Ltd"));
        assert!(!q.found_in("ACM E"));
        assert!(SearchText::parse("élan").unwrap().found_in("ÉLAN"));
    }

    #[test]
    fn refuses_empty_long_and_nul_text() {
        assert!(SearchText::parse("").is_err());
        assert!(SearchText::parse("a".repeat(101)).is_err());
        assert!(SearchText::parse("a\0").is_err());
        assert_eq!(SearchText::parse("a".repeat(100)).unwrap().as_str().len(), 100);
    }
}
