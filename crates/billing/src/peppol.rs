//! A party's address in the Peppol network (EN 16931 BT-34, BT-49): an Electronic Address
//! Scheme (EAS) code and the identifier under it, `0208:0123456749`. The schemes are the
//! code list of Peppol BIS Billing 3.0.19; the identifiers whose check digits Peppol's rules
//! verify (PEPPOL-COMMON-R040 to R050: GLN, Norwegian, Danish, Belgian, Swedish and
//! Australian numbers) are verified here, so no e-invoice can carry one its receiver's
//! access point refuses.

use kernel::InvalidValue;

/// The Electronic Address Scheme codes of Peppol BIS Billing 3.0.19 (its rule
/// PEPPOL-EN16931-CL008, `$eaid`).
pub const EAS_CODES: &[&str] = &[
    "0002", "0007", "0009", "0037", "0060", "0088", "0096", "0097", "0106", "0130", "0135", "0142", "0151",
    "0177", "0183", "0184", "0188", "0190", "0191", "0192", "0193", "0195", "0196", "0198", "0199", "0200",
    "0201", "0202", "0204", "0208", "0209", "0210", "0211", "0212", "0213", "0215", "0216", "0218", "0221",
    "0230", "0235", "9910", "9913", "9914", "9915", "9918", "9919", "9920", "9922", "9923", "9924", "9925",
    "9926", "9927", "9928", "9929", "9930", "9931", "9932", "9933", "9934", "9935", "9936", "9937", "9938",
    "9939", "9940", "9941", "9942", "9943", "9944", "9945", "9946", "9947", "9948", "9949", "9950", "9951",
    "9952", "9953", "9957", "9959", "0147", "0154", "0158", "0170", "0194", "0203", "0205", "0217", "0225",
    "0240",
];

/// The longest identifier Peppol's participant identifiers allow after the scheme.
const MAX_ID_LENGTH: usize = 135;

/// A Peppol participant: its scheme and its identifier under it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PeppolId {
    scheme: &'static str,
    id: String,
}

impl PeppolId {
    /// `scheme:id`: a scheme of [`EAS_CODES`], and an identifier of 1 to 135 letters,
    /// digits and `-._`, whose check digits hold where Peppol's rules check them.
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        let shape =
            || InvalidValue::new("must be scheme:identifier, such as 0208:0123456749 or 9930:DE123456789");
        let (scheme, id) = text.split_once(':').ok_or_else(shape)?;
        let scheme = EAS_CODES
            .iter()
            .find(|code| **code == scheme)
            .ok_or_else(|| {
                InvalidValue::new(format!(
                    "the scheme {scheme:?} is not an Electronic Address Scheme of Peppol BIS Billing 3.0, such as 0208 (Belgium), 0088 (GLN) or 9930 (German VAT number)"
                ))
            })?;
        let shaped = !id.is_empty()
            && id.len() <= MAX_ID_LENGTH
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
        if !shaped {
            return Err(shape());
        }
        if let Some(rule) = check_digits(scheme, id) {
            return Err(InvalidValue::new(format!("{id} is not a valid {rule}")));
        }
        Ok(Self { scheme, id: id.to_owned() })
    }

    /// The scheme (the `schemeID` of BT-34 and BT-49).
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// The identifier under it.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl std::fmt::Display for PeppolId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.scheme, self.id)
    }
}

/// What `id` under `scheme` breaks of its check digits, as Peppol's rules check them; `None`
/// where it holds or the scheme has none Peppol checks.
fn check_digits(scheme: &str, id: &str) -> Option<&'static str> {
    let digits: Option<Vec<u32>> = id.chars().map(|c| c.to_digit(10)).collect();
    let digits = digits.as_deref();
    let holds = match scheme {
        // PEPPOL-COMMON-R040: a GS1 GLN, its last digit the mod-10 check.
        "0088" => digits.is_some_and(|d| d.len() > 1 && gs1_check(&d[..d.len() - 1]) == d[d.len() - 1]),
        // R041: a Norwegian organisation number, nine digits, mod 11.
        "0192" => digits.is_some_and(|d| d.len() == 9 && id != "000000000" && mod11(d)),
        // R042: a Danish CVR number, 8 digits, or DK and 8 digits.
        "0184" => {
            let number = id.strip_prefix("DK").unwrap_or(id);
            number.len() == 8 && number.bytes().all(|b| b.is_ascii_digit())
        }
        // R043: a Belgian enterprise number, ten digits, the last two 97 less the first
        // eight mod 97.
        "0208" => digits.is_some_and(|d| d.len() == 10 && mod97(d)),
        // R049: a Swedish organisation number, ten digits, Luhn.
        "0007" => digits.is_some_and(|d| d.len() == 10 && luhn(d)),
        // R050: an Australian Business Number, eleven digits, mod 89.
        "0151" => digits.is_some_and(|d| d.len() == 11 && abn(d)),
        _ => true,
    };
    if holds {
        return None;
    }
    Some(match scheme {
        "0088" => "GLN (its check digit, GS1)",
        "0192" => "Norwegian organisation number (nine digits, mod 11)",
        "0184" => "Danish CVR number (8 digits, or DK and 8 digits)",
        "0208" => "Belgian enterprise number (ten digits, mod 97)",
        "0007" => "Swedish organisation number (ten digits, Luhn)",
        _ => "Australian Business Number (eleven digits, mod 89)",
    })
}

/// The GS1 check digit of `digits`: weights 3 and 1 from the right.
fn gs1_check(digits: &[u32]) -> u32 {
    let sum: u32 = digits.iter().rev().enumerate().map(|(i, d)| if i % 2 == 0 { d * 3 } else { *d }).sum();
    (10 - sum % 10) % 10
}

fn mod11(digits: &[u32]) -> bool {
    let (body, check) = digits.split_at(digits.len() - 1);
    let sum: u32 =
        body.iter().rev().enumerate().map(|(i, d)| d * (u32::try_from(i % 6).unwrap_or(0) + 2)).sum();
    (11 - sum % 11) % 11 == check[0]
}

fn mod97(digits: &[u32]) -> bool {
    let number = |part: &[u32]| part.iter().fold(0_u64, |n, d| n * 10 + u64::from(*d));
    97 - number(&digits[..8]) % 97 == number(&digits[8..])
}

fn luhn(digits: &[u32]) -> bool {
    let (body, check) = digits.split_at(digits.len() - 1);
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| if i % 2 == 0 { (d * 2) % 10 + (d * 2) / 10 } else { *d })
        .sum();
    (10 - sum % 10) % 10 == check[0]
}

fn abn(digits: &[u32]) -> bool {
    const WEIGHTS: [u32; 11] = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    let first = digits[0].checked_sub(1);
    first.is_some_and(|first| {
        let sum: u32 =
            std::iter::once(first).chain(digits[1..].iter().copied()).zip(WEIGHTS).map(|(d, w)| d * w).sum();
        sum.is_multiple_of(89)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peppol_id_is_a_known_scheme_and_an_identifier_whose_check_digits_hold() {
        for valid in [
            "0208:0123456749",
            "0088:7300010000001",
            "0192:974760673",
            "0184:DK12345678",
            "0007:5567321707",
            "0151:51824753556",
            "9930:DE123456789",
            "0204:991-1234512345-06",
        ] {
            let id = PeppolId::parse(valid).unwrap();
            assert_eq!(id.to_string(), valid);
        }
        let id = PeppolId::parse("9930:DE123456789").unwrap();
        assert_eq!((id.scheme(), id.id()), ("9930", "DE123456789"));
        for (refused, why) in [
            ("0208:0123456789", "Belgian enterprise number"),
            ("0088:7300010000002", "GLN"),
            ("0192:974760674", "Norwegian"),
            ("0007:5567321708", "Swedish"),
            ("0151:51824753557", "Australian"),
            ("1234:ABC", "not an Electronic Address Scheme"),
            ("0000:ABC", "not an Electronic Address Scheme"),
            ("0208", "scheme:identifier"),
            ("9930:", "scheme:identifier"),
            ("9930:DE 123", "scheme:identifier"),
        ] {
            let error = PeppolId::parse(refused).unwrap_err().to_string();
            assert!(error.contains(why), "{refused}: {error}");
        }
    }

    #[test]
    fn the_schemes_are_those_of_the_vendored_peppol_rules() {
        let rules = include_str!("../../../tests/einvoice/rules/peppol/PEPPOL-EN16931-UBL.sch");
        let list =
            rules.split("<let name=\"eaid\" value=\"tokenize('").nth(1).unwrap().split('\'').next().unwrap();
        let listed: Vec<&str> = list.split_whitespace().collect();
        assert_eq!(EAS_CODES, listed);
    }
}
