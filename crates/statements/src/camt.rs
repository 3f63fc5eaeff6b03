//! ISO 20022 camt.053 (`BkToCstmrStmt/Stmt`) and camt.054 (`BkToCstmrDbtCdtNtfctn/Ntfctn`),
//! versions 001.02 to 001.08, streamed: each element's local name is kept on a stack and
//! the text of the few paths billable reads is taken as it passes.
//!
//! The parser expands no entity and reads no external resource; a document type
//! declaration, which no bank's statement carries, is refused outright, and so is nesting
//! deeper than [`MAX_DEPTH`].

use billing::banking::{ReadError, Statement, StatementEntry, StatementFormat};
use chrono::NaiveDate;
use quick_xml::events::{BytesStart, Event};
use rust_decimal::Decimal;

use crate::{amount, currency};

/// Deeper than any camt element (about 12 levels) with room for banks' extensions.
const MAX_DEPTH: usize = 40;

/// A balance as read: its type code (`OPBD`, `PRCD`, `CLBD`, …), amount and sign.
#[derive(Debug, Default)]
struct BalanceRead {
    code: String,
    amount: Option<Decimal>,
    debit: bool,
}

/// An entry as read so far.
#[derive(Debug, Default)]
struct EntryRead {
    amount: Option<Decimal>,
    currency: Option<String>,
    debit: bool,
    booked: Option<NaiveDate>,
    value: Option<NaiveDate>,
    bank_reference: Option<String>,
    entry_reference: Option<String>,
    debtor: Option<String>,
    debtor_iban: Option<String>,
    creditor: Option<String>,
    creditor_iban: Option<String>,
    texts: Vec<String>,
    reference: Option<String>,
    additional: Option<String>,
    /// A booking still pending (`Sts` other than `BOOK`), which is not kept.
    pending: bool,
}

/// A statement as read so far.
#[derive(Debug, Default)]
struct StatementRead {
    account: Option<String>,
    currency: Option<String>,
    opening: Option<Decimal>,
    closing: Option<Decimal>,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    entries: Vec<StatementEntry>,
}

/// The day of a `Dt` (`2026-11-20`) or a `DtTm` (`2026-11-20T10:00:00+01:00`).
fn day(text: &str) -> Result<NaiveDate, ReadError> {
    let text = text.trim();
    text.get(..10)
        .and_then(|day| NaiveDate::parse_from_str(day, "%Y-%m-%d").ok())
        .ok_or_else(|| ReadError::new(format!("{text:?} is not a date")))
}

fn ends(path: &[String], tail: &[&str]) -> bool {
    path.len() >= tail.len() && path[path.len() - tail.len()..].iter().zip(tail).all(|(a, b)| a == b)
}

fn local(name: &[u8]) -> String {
    let name = String::from_utf8_lossy(name);
    match name.rsplit_once(':') {
        Some((_, local)) => local.to_owned(),
        None => name.into_owned(),
    }
}

fn attribute(start: &BytesStart<'_>, wanted: &str) -> Option<String> {
    start.attributes().flatten().find(|a| local(a.key.as_ref()) == wanted).map(|a| {
        a.unescape_value()
            .map_or_else(|_| String::from_utf8_lossy(&a.value).into_owned(), std::borrow::Cow::into_owned)
    })
}

/// Reads every statement (camt.053) or notification (camt.054) of `bytes`.
pub(crate) fn read(format: StatementFormat, bytes: &[u8]) -> Result<Vec<Statement>, ReadError> {
    let container = if format == StatementFormat::Camt054 { "Ntfctn" } else { "Stmt" };
    let mut reader = quick_xml::Reader::from_reader(bytes);
    reader.config_mut().trim_text(false);
    let mut path: Vec<String> = Vec::new();
    let mut statements = Vec::new();
    let mut statement: Option<StatementRead> = None;
    let mut balance: Option<BalanceRead> = None;
    let mut entry: Option<EntryRead> = None;
    let mut buffer = Vec::new();
    // The text of the element being read, as its events come.
    let mut text = String::new();
    let at = |reader: &quick_xml::Reader<&[u8]>| reader.buffer_position();
    loop {
        let event = reader
            .read_event_into(&mut buffer)
            .map_err(|e| ReadError::new(format!("not well-formed XML at byte {}: {e}", at(&reader))))?;
        match event {
            Event::DocType(_) => {
                return Err(ReadError::new(
                    "the file declares a document type (<!DOCTYPE>), which a bank statement has none of: refused, with its entities",
                ));
            }
            Event::Start(start) => {
                text.clear();
                let name = local(start.name().as_ref());
                if path.len() >= MAX_DEPTH {
                    return Err(ReadError::new(format!("elements nest deeper than {MAX_DEPTH} levels")));
                }
                match name.as_str() {
                    n if n == container && statement.is_none() => statement = Some(StatementRead::default()),
                    "Bal" if statement.is_some() && entry.is_none() => balance = Some(BalanceRead::default()),
                    "Ntry" if statement.is_some() => entry = Some(EntryRead::default()),
                    "Amt" => {
                        if let Some(entry) = entry.as_mut().filter(|_| ends(&path, &["Ntry"])) {
                            entry.currency = attribute(&start, "Ccy");
                        }
                    }
                    _ => {}
                }
                path.push(name);
            }
            Event::End(_) => {
                // An element's text, however many events it came in (`&amp;` is one of
                // its own), is read once the element ends.
                if !text.is_empty() {
                    take_text(&path, &text, statement.as_mut(), balance.as_mut(), entry.as_mut())?;
                    text.clear();
                }
                let Some(name) = path.pop() else { continue };
                match name.as_str() {
                    n if n == container => {
                        if let Some(read) = statement.take() {
                            statements.push(finish_statement(read, statements.len() + 1)?);
                        }
                    }
                    "Bal" => end_balance(balance.take(), statement.as_mut()),
                    "Ntry" => end_entry(entry.take(), statement.as_mut())?,
                    _ => {}
                }
            }
            Event::Text(part) => {
                let part = part
                    .decode()
                    .map_err(|e| ReadError::new(format!("text at byte {} is not UTF-8: {e}", at(&reader))))?;
                text.push_str(&part);
            }
            Event::GeneralRef(reference) => {
                // Only the five predefined entities and character references are XML's own.
                let name = String::from_utf8_lossy(&reference);
                let known =
                    matches!(name.as_ref(), "amp" | "lt" | "gt" | "quot" | "apos") || name.starts_with('#');
                if !known {
                    return Err(ReadError::new(format!(
                        "the entity &{name}; is not one XML defines: refused"
                    )));
                }
                let written = format!("&{name};");
                let resolved = quick_xml::escape::unescape(&written)
                    .map_err(|e| ReadError::new(format!("text at byte {}: {e}", at(&reader))))?;
                text.push_str(&resolved);
            }
            Event::Eof => break,
            _ => {}
        }
        buffer.clear();
    }
    Ok(statements)
}

/// A balance read, kept on its statement as its opening or closing balance.
fn end_balance(read: Option<BalanceRead>, statement: Option<&mut StatementRead>) {
    let (Some(read), Some(statement)) = (read, statement) else { return };
    let signed = read.amount.map(|a| if read.debit { -a } else { a });
    match read.code.as_str() {
        "OPBD" | "PRCD" if statement.opening.is_none() => statement.opening = signed,
        "CLBD" => statement.closing = signed,
        _ => {}
    }
}

/// An entry read, kept on its statement unless it is still pending.
fn end_entry(read: Option<EntryRead>, statement: Option<&mut StatementRead>) -> Result<(), ReadError> {
    let (Some(read), Some(statement)) = (read, statement) else { return Ok(()) };
    if !read.pending {
        let number = statement.entries.len() + 1;
        statement.entries.push(finish_entry(read, statement.currency.as_deref(), number)?);
    }
    Ok(())
}

/// Takes the text of the element at `path` where billable reads it.
fn take_text(
    path: &[String],
    text: &str,
    statement: Option<&mut StatementRead>,
    balance: Option<&mut BalanceRead>,
    entry: Option<&mut EntryRead>,
) -> Result<(), ReadError> {
    if let Some(entry) = entry {
        return take_entry_text(path, text, entry);
    }
    if let Some(balance) = balance {
        if ends(path, &["Tp", "CdOrPrtry", "Cd"]) {
            text.trim().clone_into(&mut balance.code);
        } else if ends(path, &["Bal", "Amt"]) {
            balance.amount = Some(amount(text)?);
        } else if ends(path, &["Bal", "CdtDbtInd"]) {
            balance.debit = text.trim() == "DBIT";
        }
        return Ok(());
    }
    let Some(statement) = statement else { return Ok(()) };
    if ends(path, &["Acct", "Id", "IBAN"])
        || (ends(path, &["Acct", "Id", "Othr", "Id"]) && statement.account.is_none())
    {
        statement.account = Some(text.trim().to_owned());
    } else if ends(path, &["Acct", "Ccy"]) {
        statement.currency = Some(text.trim().to_owned());
    } else if ends(path, &["FrToDt", "FrDtTm"]) {
        statement.from = Some(day(text)?);
    } else if ends(path, &["FrToDt", "ToDtTm"]) {
        statement.to = Some(day(text)?);
    }
    Ok(())
}

fn take_entry_text(path: &[String], text: &str, entry: &mut EntryRead) -> Result<(), ReadError> {
    let text = text.trim();
    let in_details = path.iter().any(|p| p == "NtryDtls");
    if ends(path, &["Ntry", "Amt"]) {
        entry.amount = Some(amount(text)?);
    } else if ends(path, &["Ntry", "CdtDbtInd"]) {
        entry.debit = text == "DBIT";
    } else if ends(path, &["Ntry", "Sts"]) || ends(path, &["Ntry", "Sts", "Cd"]) {
        entry.pending = text != "BOOK";
    } else if ends(path, &["BookgDt", "Dt"]) || ends(path, &["BookgDt", "DtTm"]) {
        entry.booked = Some(day(text)?);
    } else if ends(path, &["ValDt", "Dt"]) || ends(path, &["ValDt", "DtTm"]) {
        entry.value = Some(day(text)?);
    } else if ends(path, &["Ntry", "AcctSvcrRef"]) {
        entry.bank_reference = Some(text.to_owned());
    } else if ends(path, &["Ntry", "NtryRef"]) {
        entry.entry_reference = Some(text.to_owned());
    } else if ends(path, &["Refs", "AcctSvcrRef"]) && entry.bank_reference.is_none() {
        entry.bank_reference = Some(text.to_owned());
    } else if in_details && (ends(path, &["Dbtr", "Nm"]) || ends(path, &["Dbtr", "Pty", "Nm"])) {
        entry.debtor.get_or_insert_with(|| text.to_owned());
    } else if in_details && (ends(path, &["Cdtr", "Nm"]) || ends(path, &["Cdtr", "Pty", "Nm"])) {
        entry.creditor.get_or_insert_with(|| text.to_owned());
    } else if in_details && ends(path, &["DbtrAcct", "Id", "IBAN"]) {
        entry.debtor_iban.get_or_insert_with(|| text.to_owned());
    } else if in_details && ends(path, &["CdtrAcct", "Id", "IBAN"]) {
        entry.creditor_iban.get_or_insert_with(|| text.to_owned());
    } else if ends(path, &["RmtInf", "Ustrd"]) {
        entry.texts.push(text.to_owned());
    } else if ends(path, &["CdtrRefInf", "Ref"]) {
        entry.reference.get_or_insert_with(|| text.to_owned());
    } else if ends(path, &["Ntry", "AddtlNtryInf"]) {
        entry.additional = Some(text.to_owned());
    }
    Ok(())
}

fn finish_statement(read: StatementRead, number: usize) -> Result<Statement, ReadError> {
    let code = read.currency.as_deref().or_else(|| read.entries.first().map(|e| e.currency.as_str()));
    let code = code.ok_or_else(|| ReadError::new(format!("statement {number}: it names no currency")))?;
    Ok(Statement {
        account: read.account,
        currency: currency(code)?,
        opening: read.opening,
        closing: read.closing,
        from: read.from,
        to: read.to,
        entries: read.entries,
    })
}

fn finish_entry(
    read: EntryRead,
    account_currency: Option<&str>,
    number: usize,
) -> Result<StatementEntry, ReadError> {
    let missing = |what: &str| ReadError::new(format!("entry {number}: it has no {what}"));
    let amount = read.amount.ok_or_else(|| missing("amount (Amt)"))?;
    let code = read.currency.as_deref().or(account_currency).ok_or_else(|| missing("currency (Amt Ccy)"))?;
    let booked = read.booked.or(read.value).ok_or_else(|| missing("booking date (BookgDt)"))?;
    let (name, iban) =
        if read.debit { (read.creditor, read.creditor_iban) } else { (read.debtor, read.debtor_iban) };
    let mut text = read.texts.join(" ");
    if text.is_empty() {
        text = read.additional.unwrap_or_default();
    }
    Ok(StatementEntry {
        booked_on: booked,
        value_on: read.value,
        amount: if read.debit { -amount } else { amount },
        currency: currency(code)?,
        counterparty_name: name,
        counterparty_iban: iban,
        text,
        reference: read.reference,
        bank_reference: read.bank_reference.or(read.entry_reference),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAMT053: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">
 <BkToCstmrStmt>
  <GrpHdr><MsgId>M1</MsgId><CreDtTm>2026-11-21T06:00:00</CreDtTm></GrpHdr>
  <Stmt>
   <Id>S1</Id><CreDtTm>2026-11-21T06:00:00</CreDtTm>
   <FrToDt><FrDtTm>2026-11-20T00:00:00</FrDtTm><ToDtTm>2026-11-20T23:59:59</ToDtTm></FrToDt>
   <Acct><Id><IBAN>DE44500105175407324931</IBAN></Id><Ccy>EUR</Ccy></Acct>
   <Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">100.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-20</Dt></Dt></Bal>
   <Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">190.50</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2026-11-20</Dt></Dt></Bal>
   <Ntry>
    <Amt Ccy="EUR">119.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts>
    <BookgDt><Dt>2026-11-20</Dt></BookgDt><ValDt><Dt>2026-11-20</Dt></ValDt>
    <AcctSvcrRef>B-0001</AcctSvcrRef>
    <BkTxCd/>
    <NtryDtls><TxDtls>
      <RltdPties><Dbtr><Nm>Müller &amp; Söhne GmbH</Nm></Dbtr><DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct></RltdPties>
      <RmtInf><Strd><CdtrRefInf><Ref>RF40INV0001</Ref></CdtrRefInf></Strd></RmtInf>
    </TxDtls></NtryDtls>
   </Ntry>
   <Ntry>
    <Amt Ccy="EUR">28.50</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts>
    <BookgDt><Dt>2026-11-20</Dt></BookgDt>
    <BkTxCd/>
    <NtryDtls><TxDtls>
      <RltdPties><Cdtr><Nm>Hosting AG</Nm></Cdtr></RltdPties>
      <RmtInf><Ustrd>Server November</Ustrd></RmtInf>
    </TxDtls></NtryDtls>
   </Ntry>
  </Stmt>
 </BkToCstmrStmt>
</Document>"#;

    #[test]
    fn a_statement_reads_its_balances_entries_and_parties() {
        let [statement] = read(StatementFormat::Camt053, CAMT053.as_bytes()).unwrap().try_into().unwrap();
        assert_eq!(statement.account.as_deref(), Some("DE44500105175407324931"));
        assert_eq!(
            (statement.opening, statement.closing),
            (Some("100.00".parse().unwrap()), Some("190.50".parse().unwrap()))
        );
        let [paid, spent] = statement.entries.try_into().unwrap();
        assert_eq!(paid.amount, "119.00".parse::<Decimal>().unwrap());
        assert_eq!(paid.counterparty_name.as_deref(), Some("Müller & Söhne GmbH"));
        assert_eq!(paid.reference.as_deref(), Some("RF40INV0001"));
        assert_eq!(paid.bank_reference.as_deref(), Some("B-0001"));
        assert_eq!((spent.amount, spent.text.as_str()), ("-28.50".parse().unwrap(), "Server November"));
        assert_eq!(spent.counterparty_name.as_deref(), Some("Hosting AG"));
    }

    #[test]
    fn entities_and_deep_nesting_are_refused() {
        let entity = r#"<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><Document>&x;</Document>"#;
        let error = read(StatementFormat::Camt053, entity.as_bytes()).unwrap_err();
        assert!(error.problem.contains("<!DOCTYPE>"), "{error}");
        let deep = format!("<Document>{}{}</Document>", "<a>".repeat(100), "</a>".repeat(100));
        let error = read(StatementFormat::Camt053, deep.as_bytes()).unwrap_err();
        assert!(error.problem.contains("deeper"), "{error}");
    }
}
