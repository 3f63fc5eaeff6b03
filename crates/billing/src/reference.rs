//! Payment references: what a client quotes with a transfer so that its money finds its
//! invoice without anyone reading the remittance text.
//!
//! An invoice's reference follows from its serial alone, so it never changes and needs no
//! storage: an ISO 11649 creditor reference (`RF97INV0042`), or, where the team is paid to
//! a Swiss QR-IBAN (which takes no other kind), the 27-digit QR reference of the SIX
//! Implementation Guidelines. Check digits are right by construction: a value of this type
//! is only ever made here.

use sha2::{Digest as _, Sha256};

use crate::party::Iban;

/// A structured payment reference, in its electronic form (no spaces).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PaymentReference {
    /// ISO 11649: `RF`, two check digits (ISO 7064 MOD 97-10), and up to 21 letters and
    /// digits.
    Creditor(String),
    /// The QR reference: 26 digits and a check digit (modulo 10, recursive).
    Qr(String),
}

/// The longest body of a creditor reference.
const CREDITOR_BODY: usize = 21;
/// The digits of a QR reference before its check digit.
const QR_BODY: usize = 26;

impl PaymentReference {
    /// The reference of the invoice numbered `serial`, paid to `account`: a QR reference
    /// when the account is a QR-IBAN, a creditor reference otherwise.
    pub fn of_invoice(serial: &str, account: Option<&Iban>) -> Self {
        if account.is_some_and(Iban::is_qr_iban) { Self::qr(serial) } else { Self::creditor(serial) }
    }

    /// `RF` + check digits + the serial's letters and digits in capitals (`INV-0042` →
    /// `RF97INV0042`); a serial of more than 21 of them is represented by 21 digits of its
    /// SHA-256 instead, as is one without any.
    pub fn creditor(serial: &str) -> Self {
        let mut body: String =
            serial.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect();
        if body.is_empty() || body.len() > CREDITOR_BODY {
            body = hashed_digits(serial, CREDITOR_BODY);
        }
        // ISO 7064 MOD 97-10 over the body, then "RF00", letters as 10 to 35.
        let remainder = mod97(&format!("{body}RF00"));
        Self::Creditor(format!("RF{:02}{body}", 98 - remainder))
    }

    /// 26 digits that stand for the serial, then its check digit. Each letter or digit of
    /// the serial is two digits (`0`–`9` as 00–09, `A`–`Z` as 10–35), padded on the left
    /// with 9s (which no such pair starts with), so that two serials never share one; a
    /// serial of more than 13 letters and digits is represented by 26 digits of its
    /// SHA-256 instead.
    pub fn qr(serial: &str) -> Self {
        let pairs: String = serial
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .filter_map(|c| c.to_ascii_uppercase().to_digit(36))
            .flat_map(|value| [value / 10, value % 10])
            .filter_map(|digit| char::from_digit(digit, 10))
            .collect();
        let body = if pairs.is_empty() || pairs.len() > QR_BODY {
            hashed_digits(serial, QR_BODY)
        } else {
            format!("{}{pairs}", "9".repeat(QR_BODY - pairs.len()))
        };
        let check = mod10_recursive(&body);
        Self::Qr(format!("{body}{check}"))
    }

    /// A reference as [`PaymentReference::as_str`] wrote it (spaces allowed, as printed),
    /// its check digits checked: an `RF` creditor reference or a 27-digit QR reference.
    pub fn parse(text: &str) -> Result<Self, kernel::InvalidValue> {
        let compact: String =
            text.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_uppercase();
        let invalid = || {
            kernel::InvalidValue::new(
                "must be an ISO 11649 creditor reference (RF, 2 check digits, up to 21 letters and digits) or a 27-digit QR reference",
            )
        };
        if let Some(body) = compact.strip_prefix("RF") {
            let shaped = (3..=23).contains(&body.len()) && body.chars().all(|c| c.is_ascii_alphanumeric());
            let rotated = format!("{}{}", &compact[4.min(compact.len())..], &compact[..4.min(compact.len())]);
            if shaped && body[..2].chars().all(|c| c.is_ascii_digit()) && mod97(&rotated) == 1 {
                return Ok(Self::Creditor(compact));
            }
            return Err(invalid());
        }
        let digits = compact.len() == QR_BODY + 1 && compact.chars().all(|c| c.is_ascii_digit());
        if digits && mod10_recursive(&compact[..QR_BODY]) == compact[QR_BODY..].parse::<u32>().unwrap_or(10) {
            Ok(Self::Qr(compact))
        } else {
            Err(invalid())
        }
    }

    /// Its electronic form: `RF97INV0042`, `210000000003139471430009017`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Creditor(reference) | Self::Qr(reference) => reference,
        }
    }

    /// As printed for people: a creditor reference in groups of four from the left
    /// (`RF97 INV0 042`), a QR reference in a group of two and then of five
    /// (`21 00000 00003 13947 14300 09017`), as SIX prescribes.
    pub fn printed(&self) -> String {
        let (reference, first) = match self {
            Self::Creditor(reference) => (reference, 4),
            Self::Qr(reference) => (reference, 2),
        };
        let mut out = String::with_capacity(reference.len() + reference.len() / 4 + 1);
        for (index, c) in reference.chars().enumerate() {
            let boundary = match self {
                Self::Creditor(_) => index > 0 && index % 4 == 0,
                Self::Qr(_) => index == first || (index > first && (index - first) % 5 == 0),
            };
            if boundary {
                out.push(' ');
            }
            out.push(c);
        }
        out
    }
}

impl std::fmt::Display for PaymentReference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `count` decimal digits drawn from the SHA-256 of `text`.
fn hashed_digits(text: &str, count: usize) -> String {
    let digest = Sha256::digest(text.as_bytes());
    digest
        .iter()
        .flat_map(|byte| [byte / 16 % 10, byte % 10])
        .take(count)
        .map(|d| char::from(b'0' + d))
        .collect()
}

/// The remainder of `text` (digits and capitals, letters as 10 to 35) divided by 97.
fn mod97(text: &str) -> u32 {
    text.chars().filter_map(|c| c.to_digit(36)).fold(0, |remainder, value| {
        if value < 10 { (remainder * 10 + value) % 97 } else { (remainder * 100 + value) % 97 }
    })
}

/// The check digit of modulo 10, recursive (SIX's QR reference, as the old ISR had it).
fn mod10_recursive(digits: &str) -> u32 {
    const TABLE: [u32; 10] = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5];
    let carry = digits
        .chars()
        .filter_map(|c| c.to_digit(10))
        .fold(0, |carry, digit| TABLE[usize::try_from((carry + digit) % 10).unwrap_or(0)]);
    (10 - carry) % 10
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creditor_references_carry_the_serial_and_iso_11649_check_digits() {
        // ISO 11649's own example.
        assert_eq!(PaymentReference::creditor("539007547034").as_str(), "RF18539007547034");
        assert_eq!(PaymentReference::creditor("INV-0042").as_str(), "RF97INV0042");
        let reference = PaymentReference::creditor("re-2026/0001");
        assert!(reference.as_str().starts_with("RF") && reference.as_str().ends_with("RE20260001"));
        // Any reference is 0 modulo 97 once its first four characters move to its end.
        for serial in ["INV-0042", "2026-0001", "x", "", &"A".repeat(40), "ÄÖÜ-1"] {
            let reference = PaymentReference::creditor(serial);
            let text = reference.as_str();
            assert!(text.len() <= 25, "{text}");
            assert_eq!(mod97(&format!("{}{}", &text[4..], &text[..4])), 1, "{text}");
        }
    }

    #[test]
    fn qr_references_are_27_digits_with_a_recursive_modulo_10_check_digit() {
        // SIX's example reference.
        assert_eq!(mod10_recursive("21000000000313947143000901"), 7);
        // I N V 0 0 4 2 as 18 23 31 00 00 04 02, after twelve 9s.
        assert_eq!(PaymentReference::qr("INV-0042").as_str(), "999999999999182331000004025");
        // Serials that differ in any letter or digit differ in their reference.
        assert_ne!(PaymentReference::qr("INV-10"), PaymentReference::qr("INV-A"));
        assert_ne!(PaymentReference::qr("0A"), PaymentReference::qr("A"));
        let long = PaymentReference::qr(&"A".repeat(20));
        assert_eq!(long.as_str().len(), 27);
        assert!(long.as_str().chars().all(|c| c.is_ascii_digit()));
    }

    #[test]
    fn parsing_takes_what_was_made_and_refuses_a_wrong_check_digit() {
        for serial in ["INV-0042", "2026-0001", &"Z".repeat(30)] {
            for reference in [PaymentReference::creditor(serial), PaymentReference::qr(serial)] {
                assert_eq!(PaymentReference::parse(reference.as_str()), Ok(reference.clone()));
                assert_eq!(PaymentReference::parse(&reference.printed()), Ok(reference));
            }
        }
        for refused in ["RF98INV0042", "RF97INV0043", "999999999999182331000004024", "RF", "12345", ""] {
            assert!(PaymentReference::parse(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn references_print_in_the_groups_people_read() {
        assert_eq!(
            PaymentReference::Creditor("RF18539007547034".to_owned()).printed(),
            "RF18 5390 0754 7034"
        );
        assert_eq!(
            PaymentReference::Qr("210000000003139471430009017".to_owned()).printed(),
            "21 00000 00003 13947 14300 09017"
        );
    }
}
