//! Payment QR codes: what a banking app scans to pay an invoice without typing an IBAN, an
//! amount or a reference.
//!
//! Two formats: the Swiss QR-bill (SIX, Swiss Implementation Guidelines for the QR-bill
//! 2.3), for CHF or EUR paid to a Swiss or Liechtenstein account; and the EPC QR code
//! (European Payments Council, EPC069-12 version 002, `GiroCode`), for a SEPA credit
//! transfer in EUR. Each carries what is due on the invoice now, and its payment reference;
//! a paid invoice carries none. This module makes the payload, the bytes the code encodes;
//! drawing it is a renderer's.

use rust_decimal::Decimal;

use crate::money::{Currency, round_to_minor};
pub use crate::qr_choice::{QrChoice, QrFormat};
use crate::{Client, Invoice, PaymentReference, SenderAddress};

/// A part of an address a payment QR code carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressPart {
    Name,
    Street,
    PostalCode,
    City,
    Country,
}

/// What a payment QR code of a format needs and the invoice lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QrRefusal {
    /// Nothing is due: there is nothing to pay.
    NothingDue,
    /// The format does not take the invoice's currency.
    Currency { format: QrFormat, currency: Currency },
    /// The sender has no IBAN.
    NoAccount { format: QrFormat },
    /// The sender's IBAN is of a country the format does not pay to.
    AccountCountry { format: QrFormat, country: String },
    /// A part of the sender's address the format needs is empty.
    SenderMissing { format: QrFormat, part: AddressPart },
    /// A part of the sender's address is longer than the format takes.
    SenderTooLong { format: QrFormat, part: AddressPart, max: usize },
    /// A part of the sender's address holds characters the format cannot carry.
    SenderUnwritable { format: QrFormat, part: AddressPart },
}

/// A payment QR code's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentQr {
    pub format: QrFormat,
    /// The bytes the code encodes: UTF-8, or ISO 8859-1 for an EPC code whose text fits it.
    pub payload: Vec<u8>,
    /// What it asks to be paid: the invoice's amount due.
    pub amount: Decimal,
    /// The reference it carries: a QR reference to a QR-IBAN, else a creditor reference.
    pub reference: PaymentReference,
}

/// The countries of the SEPA scheme (EPC409-09, as of 2025), whose IBANs an EPC QR code
/// pays to.
const SEPA: [&str; 41] = [
    "AD", "AL", "AT", "BE", "BG", "CH", "CY", "CZ", "DE", "DK", "EE", "ES", "FI", "FR", "GB", "GI", "GR",
    "HR", "HU", "IE", "IS", "IT", "LI", "LT", "LU", "LV", "MC", "MD", "ME", "MK", "MT", "NL", "NO", "PL",
    "PT", "RO", "RS", "SE", "SI", "SK", "SM",
];

/// The payment QR code of `format` for what `invoice` has due, paid to `sender` by
/// `client`.
pub fn payment_qr(
    format: QrFormat,
    invoice: &Invoice,
    client: &Client,
    sender: &SenderAddress,
) -> Result<PaymentQr, QrRefusal> {
    let due = round_to_minor(invoice.balance.due(), invoice.currency);
    if due <= Decimal::ZERO {
        return Err(QrRefusal::NothingDue);
    }
    let account = sender.details.iban.as_ref().ok_or(QrRefusal::NoAccount { format })?;
    let reference = PaymentReference::of_invoice(invoice.number.as_str(), Some(account));
    match format {
        QrFormat::Epc => {
            if invoice.currency.as_str() != "EUR" {
                return Err(QrRefusal::Currency { format, currency: invoice.currency });
            }
            if !SEPA.contains(&account.country()) {
                return Err(QrRefusal::AccountCountry { format, country: account.country().to_owned() });
            }
            // The EPC code's structured reference is ISO 11649's, whatever the account.
            let reference = PaymentReference::creditor(invoice.number.as_str());
            let payload = epc_payload(sender, account.as_str(), due, &reference);
            Ok(PaymentQr { format, payload, amount: due, reference })
        }
        QrFormat::Swiss => {
            if !matches!(invoice.currency.as_str(), "CHF" | "EUR") {
                return Err(QrRefusal::Currency { format, currency: invoice.currency });
            }
            if !account.is_swiss() {
                return Err(QrRefusal::AccountCountry { format, country: account.country().to_owned() });
            }
            let creditor = creditor_address(sender)?;
            let debtor = debtor_address(client);
            let payload =
                swiss_payload(account.as_str(), &creditor, debtor.as_ref(), due, invoice, &reference);
            Ok(PaymentQr { format, payload: payload.into_bytes(), amount: due, reference })
        }
    }
}

/// The code `choice` puts on `invoice`'s PDF: none for a paid invoice, or when `Auto`
/// finds no format the invoice has what it needs for.
pub fn chosen(
    choice: QrChoice,
    invoice: &Invoice,
    client: &Client,
    sender: &SenderAddress,
) -> Result<Option<PaymentQr>, QrRefusal> {
    let formats: &[QrFormat] = match choice {
        QrChoice::None => return Ok(None),
        QrChoice::Epc => &[QrFormat::Epc],
        QrChoice::Swiss => &[QrFormat::Swiss],
        QrChoice::Auto => &[QrFormat::Swiss, QrFormat::Epc],
    };
    let mut refusal = None;
    for format in formats {
        match payment_qr(*format, invoice, client, sender) {
            Ok(qr) => return Ok(Some(qr)),
            Err(QrRefusal::NothingDue) => return Ok(None),
            Err(error) => refusal = refusal.or(Some(error)),
        }
    }
    match (choice, refusal) {
        (QrChoice::Auto, _) | (_, None) => Ok(None),
        (_, Some(refusal)) => Err(refusal),
    }
}

/// `EUR1190`, `EUR12.5`: two decimals at most, trailing zeros left out, as EPC069-12's
/// examples and segno write it.
fn epc_amount(amount: Decimal) -> String {
    let fixed = format!("{amount:.2}");
    let trimmed = fixed.trim_end_matches('0').trim_end_matches('.');
    format!("EUR{trimmed}")
}

/// The EPC QR code's lines (version 002, SEPA credit transfer), encoded as ISO 8859-1
/// (character set 2) where every character fits it, else as UTF-8 (1).
fn epc_payload(sender: &SenderAddress, iban: &str, due: Decimal, reference: &PaymentReference) -> Vec<u8> {
    let name: String = sender.details.name.as_str().trim().chars().take(70).collect();
    let bic = sender.details.bic.as_ref().map_or("", |bic| bic.as_str());
    let lines = |charset: &str| {
        ["BCD", "002", charset, "SCT", bic, &name, iban, &epc_amount(due), "", reference.as_str()].join("\n")
    };
    let latin: Option<Vec<u8>> = lines("2").chars().map(|c| u8::try_from(u32::from(c)).ok()).collect();
    latin.unwrap_or_else(|| lines("1").into_bytes())
}

/// A structured address ("S") of the QR-bill: name, street, building number (left empty:
/// the street line carries it), postal code, town, country.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QrAddress {
    pub name: String,
    pub street: String,
    pub postal_code: String,
    pub city: String,
    pub country: String,
}

impl QrAddress {
    fn lines(&self) -> [&str; 7] {
        ["S", &self.name, &self.street, "", &self.postal_code, &self.city, &self.country]
    }
}

/// The longest name, street, postal code and town the QR-bill takes.
const LIMITS: [(AddressPart, usize); 4] = [
    (AddressPart::Name, 70),
    (AddressPart::Street, 70),
    (AddressPart::PostalCode, 16),
    (AddressPart::City, 35),
];

/// Whether the QR-bill can carry `text`: the Latin characters of SIX's character set
/// (Basic Latin, Latin-1 Supplement, Latin Extended-A, Ș ș Ț ț and €).
fn writable(text: &str) -> bool {
    text.chars().all(|c| matches!(u32::from(c), 0x20..=0x7E | 0xA0..=0x17F | 0x218..=0x21B | 0x20AC))
}

/// Why an address cannot be a QR-bill's.
enum Unfit {
    Missing(AddressPart),
    TooLong(AddressPart, usize),
    Unwritable(AddressPart),
}

/// The parts of an address, checked against the QR-bill's limits and character set.
fn address_parts(
    name: &str,
    street: &str,
    postal_code: &str,
    city: &str,
    country: Option<crate::party::CountryCode>,
) -> Result<QrAddress, Unfit> {
    let address = QrAddress {
        name: name.trim().to_owned(),
        street: street.trim().to_owned(),
        postal_code: postal_code.trim().to_owned(),
        city: city.trim().to_owned(),
        country: country.map(|code| code.as_str().to_owned()).unwrap_or_default(),
    };
    for (part, value) in [
        (AddressPart::Name, &address.name),
        (AddressPart::PostalCode, &address.postal_code),
        (AddressPart::City, &address.city),
        (AddressPart::Country, &address.country),
    ] {
        if value.is_empty() {
            return Err(Unfit::Missing(part));
        }
    }
    for (part, max) in LIMITS {
        let value = match part {
            AddressPart::Name => &address.name,
            AddressPart::Street => &address.street,
            AddressPart::PostalCode => &address.postal_code,
            AddressPart::City => &address.city,
            AddressPart::Country => &address.country,
        };
        if value.chars().count() > max {
            return Err(Unfit::TooLong(part, max));
        }
        if !writable(value) {
            return Err(Unfit::Unwritable(part));
        }
    }
    Ok(address)
}

fn creditor_address(sender: &SenderAddress) -> Result<QrAddress, QrRefusal> {
    let s = &sender.details;
    let format = QrFormat::Swiss;
    address_parts(s.name.as_str(), s.line1.as_str(), s.postal_code.as_str(), s.city.as_str(), s.country_code)
        .map_err(|unfit| match unfit {
            Unfit::Missing(part) => QrRefusal::SenderMissing { format, part },
            Unfit::Unwritable(part) => QrRefusal::SenderUnwritable { format, part },
            Unfit::TooLong(part, max) => QrRefusal::SenderTooLong { format, part, max },
        })
}

/// The client as the QR-bill's debtor; none where its address is incomplete or cannot be
/// carried (the payer then writes it in, as the QR-bill allows).
fn debtor_address(client: &Client) -> Option<QrAddress> {
    let c = &client.details;
    address_parts(c.name.as_str(), c.line1.as_str(), c.postal_code.as_str(), c.city.as_str(), c.country_code)
        .ok()
}

/// The QR-bill's lines (SIX IG 2.3, section 4.3), CR LF between them: the account, the
/// creditor, seven empty lines of the ultimate creditor (reserved), the amount and
/// currency, the debtor (or seven empty lines), the reference (QRR to a QR-IBAN, SCOR
/// else), the invoice's number as the unstructured message, and the trailer.
fn swiss_payload(
    iban: &str,
    creditor: &QrAddress,
    debtor: Option<&QrAddress>,
    due: Decimal,
    invoice: &Invoice,
    reference: &PaymentReference,
) -> String {
    let amount = format!("{due:.2}");
    let kind = match reference {
        PaymentReference::Qr(_) => "QRR",
        PaymentReference::Creditor(_) => "SCOR",
    };
    let number = invoice.number.as_str().chars().filter(|c| !c.is_control()).take(140).collect::<String>();
    let mut lines: Vec<&str> = vec!["SPC", "0200", "1", iban];
    lines.extend(creditor.lines());
    lines.extend([""; 7]);
    lines.extend([amount.as_str(), invoice.currency.as_str()]);
    lines.extend(debtor.map_or([""; 7], QrAddress::lines));
    lines.extend([kind, reference.as_str(), number.as_str(), "EPD"]);
    lines.join("\r\n")
}

/// The parts of the QR-bill a person reads beside its code (the receipt and the payment
/// part), from the same data as its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwissSlip {
    pub iban: String,
    pub creditor: QrAddress,
    pub debtor: Option<QrAddress>,
    pub reference: PaymentReference,
    pub additional_information: String,
    pub currency: Currency,
    pub amount: Decimal,
}

impl SwissSlip {
    /// The slip of `qr`, a Swiss QR-bill's code of `invoice`.
    pub fn of(qr: &PaymentQr, invoice: &Invoice, client: &Client, sender: &SenderAddress) -> Option<Self> {
        if qr.format != QrFormat::Swiss {
            return None;
        }
        Some(Self {
            iban: sender.details.iban.as_ref()?.as_str().to_owned(),
            creditor: creditor_address(sender).ok()?,
            debtor: debtor_address(client),
            reference: qr.reference.clone(),
            additional_information: invoice.number.to_string(),
            currency: invoice.currency,
            amount: qr.amount,
        })
    }
}

#[cfg(test)]
mod tests {
    use accounts::TeamId;
    use kernel::Id;

    use super::*;
    use crate::einvoice::tests::{invoice, parties};
    use crate::{TaxRule, Vat};

    fn due_invoice(team: TeamId) -> Invoice {
        invoice(team, Vat::default(), TaxRule::Percentage(Decimal::from(19)), Decimal::ZERO)
    }

    #[test]
    fn an_epc_payload_is_version_002_in_latin_1_with_the_creditor_reference() {
        let team = Id::generate();
        let (client, mut sender) = parties(team);
        sender.details.name = crate::client::RequiredText::parse("Müller & Söhne GmbH").unwrap();
        sender.details.bic = Some(crate::Bic::parse("BYLADEM1001").unwrap());
        let code = payment_qr(QrFormat::Epc, &due_invoice(team), &client, &sender).unwrap();
        let expected = "BCD\n002\n2\nSCT\nBYLADEM1001\nMüller & Söhne GmbH\nDE02120300000000202051\nEUR286.79\n\nRF40INV0001";
        let latin: Vec<u8> = expected.chars().map(|c| u8::try_from(u32::from(c)).unwrap()).collect();
        assert_eq!(code.payload, latin);
        assert_eq!((code.amount, code.reference.as_str()), (Decimal::new(28_679, 2), "RF40INV0001"));
        // A name beyond ISO 8859-1: UTF-8, character set 1.
        sender.details.name = crate::client::RequiredText::parse("Łódź Sp. z o.o.").unwrap();
        let code = payment_qr(QrFormat::Epc, &due_invoice(team), &client, &sender).unwrap();
        assert!(code.payload.starts_with(b"BCD\n002\n1\n"));
        assert!(String::from_utf8(code.payload).unwrap().contains("\nŁódź Sp. z o.o.\n"));
        assert_eq!(epc_amount(Decimal::new(119_000, 2)), "EUR1190");
        assert_eq!(epc_amount(Decimal::new(1_250, 2)), "EUR12.5");
    }

    #[test]
    fn a_swiss_payload_has_its_31_lines_and_a_qr_reference_to_a_qr_iban() {
        let team = Id::generate();
        let (mut client, mut sender) = parties(team);
        sender.details.iban = Some(crate::Iban::parse("CH4431999123000889012").unwrap());
        sender.details.country_code = Some(crate::CountryCode::parse("CH").unwrap());
        let code = payment_qr(QrFormat::Swiss, &due_invoice(team), &client, &sender).unwrap();
        let text = String::from_utf8(code.payload).unwrap();
        let lines: Vec<&str> = text.split("\r\n").collect();
        assert_eq!(lines.len(), 31, "{lines:?}");
        assert_eq!(lines[..4], ["SPC", "0200", "1", "CH4431999123000889012"]);
        assert_eq!(lines[18..20], ["286.79", "EUR"]);
        assert_eq!(lines[20..27], ["S", "Amt", "Amtsweg 2", "", "53113", "Bonn", "DE"]);
        assert_eq!((lines[27], lines[28].len(), lines[30]), ("QRR", 27, "EPD"));
        assert!(PaymentReference::parse(lines[28]).is_ok());
        // A client without a town is no debtor: the payer writes it in.
        client.details.city = crate::client::OptionalText::parse("").unwrap();
        let code = payment_qr(QrFormat::Swiss, &due_invoice(team), &client, &sender).unwrap();
        let text = String::from_utf8(code.payload).unwrap();
        assert_eq!(text.split("\r\n").skip(20).take(7).collect::<Vec<_>>(), [""; 7]);
    }

    #[test]
    fn each_format_names_what_it_lacks_and_auto_takes_what_fits() {
        let team = Id::generate();
        let (client, mut sender) = parties(team);
        let invoice = due_invoice(team);
        assert_eq!(
            payment_qr(QrFormat::Swiss, &invoice, &client, &sender),
            Err(QrRefusal::AccountCountry { format: QrFormat::Swiss, country: "DE".to_owned() })
        );
        assert_eq!(
            chosen(QrChoice::Auto, &invoice, &client, &sender).unwrap().map(|qr| qr.format),
            Some(QrFormat::Epc)
        );
        assert_eq!(chosen(QrChoice::None, &invoice, &client, &sender), Ok(None));
        sender.details.iban = Some(crate::Iban::parse("CH9300762011623852957").unwrap());
        sender.details.city = crate::client::OptionalText::parse("").unwrap();
        assert_eq!(
            payment_qr(QrFormat::Swiss, &invoice, &client, &sender),
            Err(QrRefusal::SenderMissing { format: QrFormat::Swiss, part: AddressPart::City })
        );
        // `auto`: the Swiss QR-bill cannot be made, the EPC code can (a Swiss IBAN is SEPA).
        assert_eq!(
            chosen(QrChoice::Auto, &invoice, &client, &sender).unwrap().map(|qr| qr.format),
            Some(QrFormat::Epc)
        );
        assert!(chosen(QrChoice::Swiss, &invoice, &client, &sender).is_err());
        sender.details.iban = None;
        assert_eq!(
            payment_qr(QrFormat::Epc, &invoice, &client, &sender),
            Err(QrRefusal::NoAccount { format: QrFormat::Epc })
        );
        assert_eq!(chosen(QrChoice::Auto, &invoice, &client, &sender), Ok(None));
        let paid = crate::einvoice::tests::invoice(
            team,
            Vat::default(),
            TaxRule::Percentage(Decimal::from(19)),
            Decimal::new(28_679, 2),
        );
        assert_eq!(payment_qr(QrFormat::Epc, &paid, &client, &sender), Err(QrRefusal::NothingDue));
        assert_eq!(chosen(QrChoice::Epc, &paid, &client, &sender), Ok(None), "a paid invoice carries none");
    }
}
