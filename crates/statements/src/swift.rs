//! SWIFT MT940 by the `mt940` crate's tag grammar: strictly first, then, for banks whose
//! files stray from it (characters outside SWIFT's set, text between messages, overlong
//! `:86:` fields), through its sanitiser. A German bank's structured `:86:` (`?20` to
//! `?29` purpose, `?31` IBAN, `?32`/`?33` name) gives the remittance text and the payer.

use billing::banking::{ReadError, Statement, StatementEntry};
use chrono::{Datelike, NaiveDate};
use mt940::{DebitOrCredit, ExtDebitOrCredit, InformationToAccountOwner};

use crate::currency;

/// Reads every message of `bytes` as a statement.
pub(crate) fn read(bytes: &[u8]) -> Result<Vec<Statement>, ReadError> {
    let text = String::from_utf8_lossy(bytes);
    let messages = match mt940::parse_mt940(&text) {
        Ok(messages) => messages,
        Err(strict) => mt940::parse_mt940(&mt940::sanitizers::sanitize(&text))
            .map_err(|_| ReadError::new(format!("not an MT940 statement: {strict}")))?,
    };
    messages.into_iter().map(statement).collect()
}

/// The SEPA keywords German banks write in a purpose, each before its part.
const SEPA_KEYWORDS: [&str; 12] = [
    "EREF+", "KREF+", "MREF+", "CRED+", "DEBT+", "ABWA+", "ABWE+", "IBAN+", "BIC+", "COAM+", "OAMT+", "SVWZ+",
];

/// The remittance text of a purpose: its `SVWZ+` part (Verwendungszweck) where it is
/// keyed by SEPA's keywords, else the whole purpose.
fn sepa_purpose(purpose: &str) -> String {
    let Some(start) = purpose.find("SVWZ+") else { return purpose.to_owned() };
    let rest = &purpose[start + "SVWZ+".len()..];
    let end = SEPA_KEYWORDS.iter().filter_map(|keyword| rest.find(keyword)).min().unwrap_or(rest.len());
    rest[..end].trim().to_owned()
}

/// `:61:` gives the booking date as month and day only: it is of the year that puts it
/// nearest its value date (booked on 31 December for value on 2 January is of the year
/// before), whichever year the grammar gave it.
fn nearest(booked: NaiveDate, value: NaiveDate) -> NaiveDate {
    let in_year = |year: i32| booked.with_year(year);
    [in_year(value.year() - 1), in_year(value.year()), in_year(value.year() + 1)]
        .into_iter()
        .flatten()
        .min_by_key(|day| (*day - value).num_days().abs())
        .unwrap_or(booked)
}

fn signed(debit: bool, amount: rust_decimal::Decimal) -> rust_decimal::Decimal {
    if debit { -amount } else { amount }
}

fn statement(message: mt940::Message) -> Result<Statement, ReadError> {
    let opening = &message.opening_balance;
    let account_currency = currency(&opening.iso_currency_code)?;
    let entries = message
        .statement_lines
        .into_iter()
        .map(|line| {
            let debit = matches!(
                line.ext_debit_credit_indicator,
                ExtDebitOrCredit::Debit | ExtDebitOrCredit::ReverseCredit
            );
            let (text, name, iban) = match line.information_to_account_owner {
                Some(InformationToAccountOwner::Plain(text)) => (text.replace('\n', " "), None, None),
                Some(InformationToAccountOwner::Structured {
                    purpose,
                    applicant_name,
                    applicant_iban,
                    additional_purpose,
                    posting_text,
                    ..
                }) => {
                    let text =
                        [purpose, additional_purpose].into_iter().flatten().collect::<Vec<_>>().join(" ");
                    let text = sepa_purpose(&text);
                    let text = if text.is_empty() { posting_text.unwrap_or_default() } else { text };
                    (text, applicant_name, applicant_iban)
                }
                None => (String::new(), None, None),
            };
            let bank_reference = line
                .bank_ref
                .filter(|r| !r.trim().is_empty())
                .or_else(|| Some(line.customer_ref.clone()).filter(|r| !r.is_empty() && r != "NONREF"));
            StatementEntry {
                booked_on: line.entry_date.map_or(line.value_date, |entry| nearest(entry, line.value_date)),
                value_on: Some(line.value_date),
                amount: signed(debit, line.amount),
                currency: account_currency,
                counterparty_name: name.filter(|n| !n.trim().is_empty()),
                counterparty_iban: iban.filter(|i| !i.trim().is_empty()),
                text: text.trim().to_owned(),
                reference: None,
                bank_reference,
            }
        })
        .collect();
    let closing = &message.closing_balance;
    Ok(Statement {
        account: Some(message.account_id.trim().to_owned()),
        currency: account_currency,
        opening: Some(signed(opening.debit_credit_indicator == DebitOrCredit::Debit, opening.amount)),
        closing: Some(signed(closing.debit_credit_indicator == DebitOrCredit::Debit, closing.amount)),
        from: Some(opening.date),
        to: Some(closing.date),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GERMAN: &str = ":20:STARTUMS\r\n:25:10020030/1234567890\r\n:28C:00001/001\r\n\
        :60F:C261119EUR100,00\r\n\
        :61:2611201120CR119,00NTRFNONREF//B-0001\r\n\
        :86:166?00GUTSCHRIFT?20EREF+NOTPROVIDED?21SVWZ+Rechnung INV-0001?31DE02120300000000202051?32Mueller GmbH\r\n\
        :61:2611201120DR28,50NDDTNONREF\r\n\
        :86:105?00LASTSCHRIFT?20Server November?32Hosting AG\r\n\
        :62F:C261120EUR190,50\r\n-\r\n";

    #[test]
    fn a_german_banks_statement_reads_its_purpose_and_payer() {
        let [statement] = read(GERMAN.as_bytes()).unwrap().try_into().unwrap();
        assert_eq!(statement.account.as_deref(), Some("10020030/1234567890"));
        assert_eq!(statement.closing, Some("190.50".parse().unwrap()));
        let [paid, spent] = statement.entries.try_into().unwrap();
        assert_eq!(paid.amount, "119.00".parse::<rust_decimal::Decimal>().unwrap());
        assert!(paid.text.contains("Rechnung INV-0001"), "{}", paid.text);
        assert_eq!(paid.counterparty_name.as_deref(), Some("Mueller GmbH"));
        assert_eq!(paid.bank_reference.as_deref(), Some("B-0001"));
        assert_eq!(spent.amount, "-28.50".parse::<rust_decimal::Decimal>().unwrap());
    }

    #[test]
    fn a_booking_date_takes_the_year_nearest_its_value_date() {
        let day = |text: &str| text.parse::<NaiveDate>().unwrap();
        assert_eq!(nearest(day("2027-12-31"), day("2027-01-02")), day("2026-12-31"));
        assert_eq!(nearest(day("2026-01-02"), day("2026-12-31")), day("2027-01-02"));
        assert_eq!(nearest(day("2026-11-20"), day("2026-11-21")), day("2026-11-20"));
    }
}
