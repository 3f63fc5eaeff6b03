//! Bank statements read into billing's terms ([`billing::banking::Statement`]): ISO 20022
//! camt.053 and camt.054 (streamed with quick-xml, which expands no entity; a document
//! type declaration is refused, as is nesting deeper than any statement has), SWIFT MT940
//! (the `mt940` crate's grammar, with its sanitiser for banks that stray from it), and CSV
//! by the team's column mapping.

mod camt;
mod swift;
mod table;

use billing::banking::{CsvMapping, ReadError, Statement, StatementFormat, StatementReader};

/// Reads every format billable takes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reader;

impl StatementReader for Reader {
    fn read(
        &self,
        format: StatementFormat,
        bytes: &[u8],
        csv: Option<&CsvMapping>,
        team_currency: accounts::Currency,
    ) -> Result<Vec<Statement>, ReadError> {
        match format {
            StatementFormat::Camt053 | StatementFormat::Camt054 => camt::read(format, bytes),
            StatementFormat::Mt940 => swift::read(bytes),
            StatementFormat::Csv => match csv {
                Some(mapping) => table::read(bytes, mapping, team_currency),
                None => Err(ReadError::new(
                    "a CSV file is read by the team's column mapping: save one with PUT /v1/bank-statements/csv-mapping first",
                )),
            },
        }
    }
}

/// A currency code as a statement gives it.
fn currency(code: &str) -> Result<accounts::Currency, ReadError> {
    accounts::Currency::parse(code.trim())
        .map_err(|_| ReadError::new(format!("{:?} is not an ISO 4217 currency code", code.trim())))
}

/// An amount as a statement gives it, `.` before its decimals.
fn amount(text: &str) -> Result<rust_decimal::Decimal, ReadError> {
    text.trim().parse().map_err(|_| ReadError::new(format!("{:?} is not an amount", text.trim())))
}
