//! CSV exports by the team's column mapping: a header row naming the columns, one booking
//! per row. A CSV carries no balances and no account; each row's currency is its currency
//! column's, or the team's where the mapping names none.

use billing::banking::{CsvMapping, ReadError, Statement, StatementEntry};
use chrono::NaiveDate;
use rust_decimal::Decimal;

use crate::currency;

/// Reads `bytes` as one statement by `mapping`, in `team_currency` where it names none.
pub(crate) fn read(
    bytes: &[u8],
    mapping: &CsvMapping,
    team_currency: accounts::Currency,
) -> Result<Vec<Statement>, ReadError> {
    let mut reader = csv::ReaderBuilder::new().delimiter(mapping.delimiter).flexible(true).from_reader(bytes);
    let headers = reader.headers().map_err(|e| ReadError::new(format!("the header row: {e}")))?.clone();
    let column = |name: &str| {
        headers.iter().position(|header| header.trim() == name).ok_or_else(|| {
            ReadError::new(format!("no column {name:?} in the header row; the mapping names it"))
        })
    };
    let optional = |name: &Option<String>| name.as_deref().map(column).transpose();
    let columns = &mapping.columns;
    let (date, amount, text) = (column(&columns.date)?, column(&columns.amount)?, column(&columns.text)?);
    let (code, name, iban, reference) = (
        optional(&columns.currency)?,
        optional(&columns.counterparty_name)?,
        optional(&columns.counterparty_iban)?,
        optional(&columns.reference)?,
    );
    let mut entries = Vec::new();
    for (index, record) in reader.records().enumerate() {
        let row = index + 2;
        let record = record.map_err(|e| ReadError::new(format!("row {row}: {e}")))?;
        let cell = |at: usize| record.get(at).map_or("", str::trim);
        let present = |at: Option<usize>| at.map(cell).filter(|text| !text.is_empty()).map(str::to_owned);
        if record.iter().all(|cell| cell.trim().is_empty()) {
            continue;
        }
        let booked_on = NaiveDate::parse_from_str(cell(date), &mapping.date_format).map_err(|_| {
            ReadError::new(format!(
                "row {row}: {:?} is not a date as {} writes one",
                cell(date),
                mapping.date_format
            ))
        })?;
        let row_currency = match code {
            Some(at) => currency(cell(at)).map_err(|e| ReadError::new(format!("row {row}: {e}")))?,
            None => team_currency,
        };
        entries.push(StatementEntry {
            booked_on,
            value_on: None,
            amount: money(cell(amount), mapping.decimal_separator)
                .map_err(|problem| ReadError::new(format!("row {row}: {problem}")))?,
            currency: row_currency,
            counterparty_name: present(name),
            counterparty_iban: present(iban).map(|i| i.replace(' ', "")),
            text: cell(text).to_owned(),
            reference: present(reference),
            bank_reference: None,
        });
    }
    let statement_currency = entries.first().map_or(team_currency, |e| e.currency);
    Ok(vec![Statement {
        account: None,
        currency: statement_currency,
        opening: None,
        closing: None,
        from: entries.iter().map(|e| e.booked_on).min(),
        to: entries.iter().map(|e| e.booked_on).max(),
        entries,
    }])
}

/// An amount as a bank's CSV writes it: `1.234,56` or `-1234.56`, a thousands separator
/// (the other of `.` and `,`, or a space) allowed.
fn money(text: &str, decimal_separator: char) -> Result<Decimal, String> {
    let thousands = if decimal_separator == ',' { '.' } else { ',' };
    let plain: String = text
        .chars()
        .filter(|c| *c != thousands && !c.is_whitespace() && *c != '\u{a0}')
        .map(|c| if c == decimal_separator { '.' } else { c })
        .collect();
    plain
        .parse()
        .map_err(|_| format!("{text:?} is not an amount with {decimal_separator} before its decimals"))
}

#[cfg(test)]
mod tests {
    use billing::banking::CsvColumns;

    use super::*;

    #[test]
    fn rows_read_by_the_mapping_in_german_notation() {
        let mapping = CsvMapping {
            delimiter: b';',
            decimal_separator: ',',
            date_format: "%d.%m.%Y".into(),
            columns: CsvColumns {
                date: "Buchungstag".into(),
                amount: "Betrag".into(),
                currency: Some("Währung".into()),
                counterparty_name: Some("Name".into()),
                counterparty_iban: None,
                text: "Verwendungszweck".into(),
                reference: None,
            },
        };
        let file = "Buchungstag;Name;Verwendungszweck;Betrag;Währung\n\
            20.11.2026;Müller GmbH;Rechnung INV-0001;1.190,00;EUR\n\
            21.11.2026;Hosting AG;Server;-28,50;EUR\n";
        let eur = accounts::Currency::parse("EUR").unwrap();
        let [statement] = read(file.as_bytes(), &mapping, eur).unwrap().try_into().unwrap();
        assert_eq!(statement.entries[0].amount, "1190.00".parse::<Decimal>().unwrap());
        assert_eq!(statement.entries[1].amount, "-28.50".parse::<Decimal>().unwrap());
        assert_eq!((statement.opening, statement.from), (None, NaiveDate::from_ymd_opt(2026, 11, 20)));
        let error = read(b"Datum;Betrag\n", &mapping, eur).unwrap_err();
        assert!(error.problem.contains("Buchungstag"), "{error}");
    }
}
