use validator::ValidateEmail;

use crate::InvalidValue;

/// An email address in the HTML5 / WHATWG sense (what browsers accept), at most 254
/// characters. Kept as given; compare with [`Email::normalized`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

impl Email {
    pub fn parse(value: impl Into<String>) -> Result<Self, InvalidValue> {
        let value = value.into();
        if value.chars().count() > 254 {
            return Err(InvalidValue::new("must be at most 254 characters"));
        }
        if !value.validate_email() {
            return Err(InvalidValue::new("must be a valid email address"));
        }
        Ok(Self(value))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The form used to compare addresses: lowercased.
    pub fn normalized(&self) -> String {
        self.0.to_lowercase()
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl std::fmt::Display for Email {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::Email;

    #[test]
    fn accepts_ordinary_addresses() {
        for address in ["ada@example.com", "first.last@example.co.uk", "a+tag@sub.example.org"] {
            assert_eq!(Email::parse(address).map(Email::into_string), Ok(address.to_owned()));
        }
    }

    #[test]
    fn refuses_what_is_not_an_address() {
        for address in ["", "plain", "@example.com", "a@", "a b@example.com", "a@b@c"] {
            assert_eq!(Email::parse(address).unwrap_err().0, "must be a valid email address", "{address:?}");
        }
    }

    #[test]
    fn refuses_overlong_addresses() {
        let address = format!("{}@example.com", "a".repeat(250));
        assert_eq!(Email::parse(address).unwrap_err().0, "must be at most 254 characters");
    }
}
