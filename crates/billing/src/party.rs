//! What identifies the parties of an invoice the way structured e-invoices (EN 16931) carry
//! them: the country (ISO 3166-1 alpha-2), and the seller's account (IBAN, with its check
//! digits, and BIC). Each is valid by construction.

use iban::IbanLike;
use kernel::InvalidValue;

/// An ISO 3166-1 alpha-2 country code that the standard assigns: `DE`, `CH`, `FR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CountryCode(isocountry::CountryCode);

impl CountryCode {
    /// Two capital letters that ISO 3166-1 assigns to a country.
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        let shaped = text.len() == 2 && text.bytes().all(|b| b.is_ascii_uppercase());
        shaped.then(|| isocountry::CountryCode::for_alpha2(text).ok()).flatten().map(Self).ok_or_else(|| {
            InvalidValue::new("must be an ISO 3166-1 alpha-2 country code in capitals, such as DE or CH")
        })
    }

    /// Its English short name in capitals, as the last line of an address abroad has it
    /// (`GERMANY`).
    pub fn address_name(self) -> String {
        self.0.name().to_uppercase()
    }

    pub fn as_str(self) -> &'static str {
        self.0.alpha2()
    }
}

/// An IBAN whose check digits and national format hold, kept in its electronic form
/// (no spaces): `DE44500105175407324931`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iban(String);

impl Iban {
    /// An IBAN in its electronic or printed form (groups of four separated by spaces).
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        let iban: iban::Iban = text
            .parse()
            .map_err(|_| InvalidValue::new("must be a valid IBAN (its country's format and check digits), such as DE44500105175407324931"))?;
        Ok(Self(iban.electronic_str().to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Its country: the first two letters.
    pub fn country(&self) -> &str {
        &self.0[..2]
    }

    /// Whether it is a Swiss or Liechtenstein account, which a Swiss QR-bill pays to.
    pub fn is_swiss(&self) -> bool {
        matches!(self.country(), "CH" | "LI")
    }

    /// Whether it is a QR-IBAN: a Swiss or Liechtenstein IBAN whose institution
    /// identification (its 5th to 9th characters) is 30000 to 31999. Payments to one
    /// carry a QR reference, and only one.
    pub fn is_qr_iban(&self) -> bool {
        self.is_swiss()
            && self
                .0
                .get(4..9)
                .and_then(|iid| iid.parse::<u32>().ok())
                .is_some_and(|iid| (30000..=31999).contains(&iid))
    }
}

/// A BIC (ISO 9362): four letters of the institution, the two of its country, two
/// letters or digits of its location, and optionally three of its branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bic(String);

impl Bic {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        let bytes = text.as_bytes();
        let alphanumeric = |part: &[u8]| part.iter().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        // ASCII first: the slices below cut bytes.
        let shaped = text.is_ascii()
            && matches!(bytes.len(), 8 | 11)
            && bytes[..4].iter().all(u8::is_ascii_uppercase)
            && CountryCode::parse(&text[4..6]).is_ok()
            && alphanumeric(&bytes[6..]);
        if shaped {
            Ok(Self(text.to_owned()))
        } else {
            Err(InvalidValue::new(
                "must be a BIC of 8 or 11 capitals and digits with an ISO 3166-1 country, such as COBADEFFXXX",
            ))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The unit a line's quantity counts (UN/ECE Recommendation 20, as EN 16931 BT-130 takes
/// it): two or three capitals and digits, such as `HUR` (hours), `DAY`, `C62` (one, a piece).
/// The shape is checked here; membership in the code list is the e-invoice validators'.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnitCode(String);

impl UnitCode {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        let shaped =
            matches!(text.len(), 2 | 3) && text.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if shaped {
            Ok(Self(text.to_owned()))
        } else {
            Err(InvalidValue::new(
                "must be a UN/ECE Recommendation 20 unit code of 2 or 3 capitals and digits, such as HUR or C62",
            ))
        }
    }

    /// Hours: the unit of lines billed from tracked time.
    pub fn hour() -> Self {
        Self("HUR".to_owned())
    }

    /// One (a piece): the unit of a line that names none.
    pub fn one() -> Self {
        Self("C62".to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countries_are_the_assigned_codes_in_capitals() {
        assert_eq!(CountryCode::parse("DE").map(CountryCode::as_str), Ok("DE"));
        assert_eq!(CountryCode::parse("CH").map(CountryCode::as_str), Ok("CH"));
        for refused in ["de", "XX", "D", "DEU", "", "ÄÖ"] {
            assert!(CountryCode::parse(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn an_iban_keeps_its_electronic_form_and_needs_its_check_digits() {
        let iban = Iban::parse("DE44 5001 0517 5407 3249 31").unwrap();
        assert_eq!(iban.as_str(), "DE44500105175407324931");
        assert!(Iban::parse("DE45500105175407324931").is_err(), "a wrong check digit");
        assert!(Iban::parse("not an iban").is_err());
        // SIX's example QR-IBAN, and an ordinary Swiss IBAN.
        let qr = Iban::parse("CH44 3199 9123 0008 8901 2").unwrap();
        assert!(qr.is_swiss() && qr.is_qr_iban());
        let plain = Iban::parse("CH93 0076 2011 6238 5295 7").unwrap();
        assert!(plain.is_swiss() && !plain.is_qr_iban());
        assert!(!iban.is_swiss() && !iban.is_qr_iban());
    }

    #[test]
    fn a_unit_code_has_two_or_three_capitals_and_digits() {
        for code in ["HUR", "C62", "DAY", "KG"] {
            assert_eq!(UnitCode::parse(code).map(|c| c.as_str().to_owned()), Ok(code.to_owned()));
        }
        for refused in ["hur", "H", "HOUR", "", "H-R"] {
            assert!(UnitCode::parse(refused).is_err(), "{refused}");
        }
        assert_eq!((UnitCode::hour().as_str(), UnitCode::one().as_str()), ("HUR", "C62"));
    }

    #[test]
    fn a_bic_has_eight_or_eleven_characters_and_a_country() {
        for bic in ["COBADEFF", "COBADEFFXXX", "UBSWCHZH80A"] {
            assert_eq!(Bic::parse(bic).map(|b| b.as_str().to_owned()), Ok(bic.to_owned()));
        }
        for refused in ["COBADEF", "cobadeff", "COBAXXFF", "COBADEFFXX", "1OBADEFF"] {
            assert!(Bic::parse(refused).is_err(), "{refused}");
        }
    }
}
