//! Money that arrives at the bank: statements as read from the bank's files, each
//! transaction kept once, and the rules that match a credit to the invoices it pays.
//!
//! Reading camt.053/054, MT940 and CSV is an adapter's ([`StatementReader`]); what a
//! statement must hold (its balances add up), how a transaction is recognised when it comes
//! again, and what settles an invoice by itself and what only suggests one, are here.

use std::collections::HashMap;

use accounts::{Currency, TeamId};
use chrono::{DateTime, NaiveDate, Utc};
use kernel::{InvalidValue, StoreError, define_id, words};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use crate::ledger::LedgerEntryId;
use crate::numbering::DocumentNumber;
use crate::reference::PaymentReference;
use crate::{ClientId, InvoiceId};

define_id!(
    /// A statement imported (one of a file's, when it holds several).
    BankStatementId
);
define_id!(
    /// A transaction of a statement, kept once however often it is imported.
    BankTransactionId
);

/// The formats a statement is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatementFormat {
    /// ISO 20022 bank-to-customer statement (end of day, with balances).
    Camt053,
    /// ISO 20022 debit/credit notification (no balances).
    Camt054,
    /// SWIFT MT940 customer statement.
    Mt940,
    /// A CSV export, read by the team's column mapping.
    Csv,
}

words!(StatementFormat { Camt053 => "camt.053", Camt054 => "camt.054", Mt940 => "mt940", Csv => "csv" });

/// One booking a statement lists, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementEntry {
    pub booked_on: NaiveDate,
    pub value_on: Option<NaiveDate>,
    /// Money in is positive, money out negative.
    pub amount: Decimal,
    pub currency: Currency,
    pub counterparty_name: Option<String>,
    pub counterparty_iban: Option<String>,
    /// The remittance information, as the payer wrote it (lines joined by spaces).
    pub text: String,
    /// The structured creditor reference given with it (RF or QR reference), as written.
    pub reference: Option<String>,
    /// The bank's own reference of the booking, where it gives one.
    pub bank_reference: Option<String>,
}

impl StatementEntry {
    pub fn is_credit(&self) -> bool {
        self.amount > Decimal::ZERO
    }
}

/// One statement as read: its account, currency, balances, period and entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The account's IBAN (or the bank's account identification where it gives no IBAN).
    pub account: Option<String>,
    pub currency: Currency,
    /// The balance before its first entry and after its last, where the format gives them.
    pub opening: Option<Decimal>,
    pub closing: Option<Decimal>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub entries: Vec<StatementEntry>,
}

/// Why a statement read is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatementRule {
    /// The opening balance and the entries do not come to the closing balance.
    #[error(
        "statement {statement}: the opening balance {opening} and the entries ({entries}) do not come to the closing balance {closing}"
    )]
    Unbalanced { statement: usize, opening: Decimal, entries: Decimal, closing: Decimal },
    /// An entry in another currency than its statement's.
    #[error("statement {statement}: entry {entry} is in {found}, the statement in {expected}")]
    MixedCurrencies { statement: usize, entry: usize, found: Currency, expected: Currency },
    /// More entries than a file may hold.
    #[error("the file holds more than {limit} entries")]
    TooManyEntries { limit: usize },
    /// A file without a statement.
    #[error("the file holds no statement")]
    NoStatement,
}

/// The most entries one file may hold.
pub const MAX_ENTRIES: usize = 100_000;

/// Checks what a file read holds: at least one statement, at most [`MAX_ENTRIES`] entries,
/// each statement in one currency, and its balances adding up where both are given
/// (statements are numbered from 1, as people count them).
pub fn check_statements(statements: &[Statement]) -> Result<(), StatementRule> {
    if statements.is_empty() {
        return Err(StatementRule::NoStatement);
    }
    if statements.iter().map(|s| s.entries.len()).sum::<usize>() > MAX_ENTRIES {
        return Err(StatementRule::TooManyEntries { limit: MAX_ENTRIES });
    }
    for (index, statement) in statements.iter().enumerate() {
        let number = index + 1;
        if let Some((entry, found)) =
            statement.entries.iter().enumerate().find(|(_, e)| e.currency != statement.currency)
        {
            return Err(StatementRule::MixedCurrencies {
                statement: number,
                entry: entry + 1,
                found: found.currency,
                expected: statement.currency,
            });
        }
        if let (Some(opening), Some(closing)) = (statement.opening, statement.closing) {
            let entries: Decimal = statement.entries.iter().map(|e| e.amount).sum();
            if opening + entries != closing {
                return Err(StatementRule::Unbalanced { statement: number, opening, entries, closing });
            }
        }
    }
    Ok(())
}

/// What recognises each of `statement`'s entries when it comes again, in order: the bank's
/// reference on the account, or, where the bank gives none, the account, day, amount and
/// text with the entry's occurrence among the same (two equal transfers on one day are
/// two). A hex SHA-256, so that no text of the payer's is a key.
pub fn entry_keys(statement: &Statement) -> Vec<String> {
    let account = statement.account.as_deref().unwrap_or("");
    let mut seen: HashMap<String, u32> = HashMap::new();
    statement
        .entries
        .iter()
        .map(|entry| {
            let reference =
                entry.bank_reference.as_deref().filter(|r| !r.trim().is_empty() && *r != "NONREF");
            let identity = if let Some(reference) = reference {
                format!("ref\u{1f}{account}\u{1f}{}\u{1f}{reference}", entry.booked_on)
            } else {
                let plain = format!(
                    "entry\u{1f}{account}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
                    entry.booked_on,
                    entry.amount.normalize(),
                    entry.currency.as_str(),
                    entry.text
                );
                let occurrence = seen.entry(plain.clone()).or_default();
                *occurrence += 1;
                format!("{plain}\u{1f}{occurrence}")
            };
            Sha256::digest(identity.as_bytes()).iter().fold(String::with_capacity(64), |mut hex, byte| {
                use std::fmt::Write as _;
                let _ = write!(hex, "{byte:02x}");
                hex
            })
        })
        .collect()
}

/// Where a transaction stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionStatus {
    /// Money in that nothing settled yet.
    Unmatched,
    /// Money in that one open invoice probably is for: waits for a person (or the agent).
    Suggested,
    /// Booked as payments (and the client's credit).
    Matched,
    /// Money out: kept, never matched to invoices.
    Ignored,
}

words!(TransactionStatus {
    Unmatched => "unmatched",
    Suggested => "suggested",
    Matched => "matched",
    Ignored => "ignored",
});

/// A payment a transaction made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankPayment {
    pub entry_id: LedgerEntryId,
    pub invoice_id: InvoiceId,
    pub amount: Decimal,
}

/// A transaction as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BankTransaction {
    pub id: BankTransactionId,
    pub team_id: TeamId,
    pub statement_id: BankStatementId,
    pub account: Option<String>,
    pub entry: StatementEntry,
    pub status: TransactionStatus,
    /// The open invoice it probably pays, while `Suggested`.
    pub suggested_invoice: Option<InvoiceId>,
    /// The payments it made, while `Matched`.
    pub payments: Vec<BankPayment>,
    /// What went to the client's credit, while `Matched`.
    pub credited: Decimal,
    /// The client whose credit it went to.
    pub credited_client: Option<ClientId>,
    pub created_at: DateTime<Utc>,
}

/// A statement as imported: what it said and what became of its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedStatement {
    pub id: BankStatementId,
    pub format: StatementFormat,
    pub account: Option<String>,
    pub currency: Currency,
    pub opening: Option<Decimal>,
    pub closing: Option<Decimal>,
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    /// Its entries, and those of them kept before (by an earlier import).
    pub entries: usize,
    pub duplicates: usize,
    /// Its new transactions booked, and those suggested.
    pub matched: usize,
    pub suggested: usize,
    pub imported_at: DateTime<Utc>,
}

/// A statement to keep, with its entries' keys ([`entry_keys`]) and their ids.
#[derive(Debug, Clone)]
pub struct NewStatement {
    pub id: BankStatementId,
    pub format: StatementFormat,
    pub statement: Statement,
    pub keys: Vec<String>,
    pub ids: Vec<BankTransactionId>,
    pub imported_at: DateTime<Utc>,
}

impl NewStatement {
    /// The transaction its entry `index` becomes, as kept by `team`: money in waits to be
    /// matched, money out is ignored.
    pub fn transaction(&self, team: TeamId, index: usize) -> Option<BankTransaction> {
        let entry = self.statement.entries.get(index)?;
        Some(BankTransaction {
            id: *self.ids.get(index)?,
            team_id: team,
            statement_id: self.id,
            account: self.statement.account.clone(),
            entry: entry.clone(),
            status: if entry.is_credit() { TransactionStatus::Unmatched } else { TransactionStatus::Ignored },
            suggested_invoice: None,
            payments: Vec::new(),
            credited: Decimal::ZERO,
            credited_client: None,
            created_at: self.imported_at,
        })
    }

    /// What it says once imported with `added` of its entries new, before matching.
    pub fn imported(&self, added: usize) -> ImportedStatement {
        let statement = &self.statement;
        ImportedStatement {
            id: self.id,
            format: self.format,
            account: statement.account.clone(),
            currency: statement.currency,
            opening: statement.opening,
            closing: statement.closing,
            from: statement.from,
            to: statement.to,
            entries: statement.entries.len(),
            duplicates: statement.entries.len().saturating_sub(added),
            matched: 0,
            suggested: 0,
            imported_at: self.imported_at,
        }
    }
}

/// An open invoice as matching sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenInvoice {
    pub id: InvoiceId,
    pub number: DocumentNumber,
    pub client_name: String,
    pub currency: Currency,
    /// What is due on it now.
    pub due: Decimal,
}

/// A share of a transaction booked on one invoice (what is above its due going to its
/// client's credit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allocation {
    pub invoice: InvoiceId,
    pub amount: Decimal,
}

/// What matching decided of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Settle these invoices with it, now.
    Book(Vec<Allocation>),
    /// Suggest this invoice; book nothing.
    Suggest(InvoiceId),
    /// Nothing found.
    Leave,
}

/// What matching does with a transaction it found something for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Book,
    Suggest,
}

words!(Placement { Book => "book", Suggest => "suggest" });

impl Decision {
    /// What it does, unless it leaves the transaction as it is.
    pub fn placement(&self) -> Option<Placement> {
        match self {
            Self::Book(_) => Some(Placement::Book),
            Self::Suggest(_) => Some(Placement::Suggest),
            Self::Leave => None,
        }
    }
}

/// A serial or a reference compared as people mistype them least: letters and digits only,
/// in capitals (`inv-0042` and `INV0042` are `INV0042`).
fn compact(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_uppercase()).collect()
}

/// A name compared without case, punctuation or runs of spaces.
fn plain_name(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first payment reference written in `text` that `known` knows, as printed (in
/// groups) or not: words joined from where one starts, until their check digits hold.
fn reference_in(text: &str, known: impl Fn(&PaymentReference) -> bool) -> Option<PaymentReference> {
    let words: Vec<&str> = text.split_whitespace().collect();
    (0..words.len()).find_map(|start| {
        let mut joined = String::new();
        words[start..].iter().take(7).find_map(|word| {
            joined.push_str(word);
            PaymentReference::parse(&joined).ok().filter(&known)
        })
    })
}

/// Matches transactions to a team's open invoices, as the rules say:
///
/// 1. a structured reference (RF or QR) of an open invoice in the transaction's currency
///    books the transaction's amount on it (what is above its due goes to the client's
///    credit);
/// 2. else, the serial of one open invoice in the remittance text, with an amount not
///    above what is due on it, books the amount; several serials whose dues the amount
///    equals book each its due;
/// 3. else, an amount equal to what is due on exactly one open invoice, from a payer
///    named as its client, suggests it, and books nothing.
///
/// Debits are never matched. Each decision that books lowers the dues the next one sees.
#[derive(Debug, Clone)]
pub struct Matcher {
    invoices: Vec<OpenInvoice>,
    by_reference: HashMap<String, usize>,
    by_serial: HashMap<String, usize>,
}

impl Matcher {
    pub fn new(invoices: Vec<OpenInvoice>) -> Self {
        let mut by_reference = HashMap::new();
        let mut by_serial = HashMap::new();
        for (index, invoice) in invoices.iter().enumerate() {
            let serial = invoice.number.as_str();
            for reference in [PaymentReference::creditor(serial), PaymentReference::qr(serial)] {
                by_reference.insert(reference.as_str().to_owned(), index);
            }
            let key = compact(serial);
            if !key.is_empty() {
                by_serial.insert(key, index);
            }
        }
        Self { invoices, by_reference, by_serial }
    }

    /// What to do with `entry`.
    pub fn decide(&mut self, entry: &StatementEntry) -> Decision {
        if !entry.is_credit() {
            return Decision::Leave;
        }
        let decision =
            self.by_reference(entry).or_else(|| self.by_serials(entry)).or_else(|| self.by_amount(entry));
        let decision = decision.unwrap_or(Decision::Leave);
        if let Decision::Book(allocations) = &decision {
            for allocation in allocations {
                if let Some(invoice) = self.invoices.iter_mut().find(|i| i.id == allocation.invoice) {
                    invoice.due = (invoice.due - allocation.amount).max(Decimal::ZERO);
                }
            }
        }
        decision
    }

    fn open(&self, index: usize, entry: &StatementEntry) -> Option<&OpenInvoice> {
        self.invoices.get(index).filter(|i| i.currency == entry.currency && i.due > Decimal::ZERO)
    }

    fn by_reference(&self, entry: &StatementEntry) -> Option<Decision> {
        let given = entry.reference.as_deref().and_then(|r| PaymentReference::parse(r).ok());
        let reference =
            given.or_else(|| reference_in(&entry.text, |r| self.by_reference.contains_key(r.as_str())))?;
        let invoice = self.open(*self.by_reference.get(reference.as_str())?, entry)?;
        Some(Decision::Book(vec![Allocation { invoice: invoice.id, amount: entry.amount }]))
    }

    /// The invoice whose serial `word` is, or starts with where a bank glued the next part
    /// of the purpose on (`INV-0005KUNDENNR.`), but never a longer serial's start
    /// (`INV-00051` is not `INV-0005`).
    fn serial_in(&self, word: &str) -> Option<usize> {
        let word = compact(word);
        if let Some(&index) = self.by_serial.get(&word) {
            return Some(index);
        }
        let bytes = word.as_bytes();
        (1..bytes.len())
            .rev()
            .filter(|&end| bytes[end - 1].is_ascii_digit() && !bytes[end].is_ascii_digit())
            .find_map(|end| self.by_serial.get(&word[..end]).copied())
    }

    fn by_serials(&self, entry: &StatementEntry) -> Option<Decision> {
        let mut found: Vec<&OpenInvoice> = Vec::new();
        for token in entry.text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | '(' | ')'))
        {
            let Some(index) = self.serial_in(token) else { continue };
            if let Some(invoice) = self.open(index, entry).filter(|i| !found.iter().any(|f| f.id == i.id)) {
                found.push(invoice);
            }
        }
        match found.as_slice() {
            [] => None,
            [invoice] if entry.amount <= invoice.due => {
                Some(Decision::Book(vec![Allocation { invoice: invoice.id, amount: entry.amount }]))
            }
            [invoice] => Some(Decision::Suggest(invoice.id)),
            several if several.iter().map(|i| i.due).sum::<Decimal>() == entry.amount => Some(
                Decision::Book(several.iter().map(|i| Allocation { invoice: i.id, amount: i.due }).collect()),
            ),
            _ => None,
        }
    }

    fn by_amount(&self, entry: &StatementEntry) -> Option<Decision> {
        let payer = plain_name(entry.counterparty_name.as_deref()?);
        if payer.is_empty() {
            return None;
        }
        let mut same = self.invoices.iter().filter(|i| {
            i.currency == entry.currency && i.due == entry.amount && {
                let client = plain_name(&i.client_name);
                !client.is_empty() && (payer.contains(&client) || client.contains(&payer))
            }
        });
        match (same.next(), same.next()) {
            (Some(invoice), None) => Some(Decision::Suggest(invoice.id)),
            _ => None,
        }
    }
}

/// The ledger entry of a payment of `amount` a transaction makes: by bank transfer, on the
/// day the bank booked it, with the bank's reference (else the transaction's id).
pub fn payment_entry(
    id: LedgerEntryId,
    amount: Decimal,
    transaction: &BankTransaction,
    at: DateTime<Utc>,
) -> crate::ledger::NewEntry {
    let reference = transaction.entry.bank_reference.clone().unwrap_or_else(|| transaction.id.to_string());
    let reference: String = reference.chars().take(200).collect();
    crate::ledger::NewEntry {
        id,
        kind: crate::ledger::EntryKind::Payment,
        amount: crate::ledger::EntryAmount::Exactly(amount),
        on: transaction.entry.booked_on,
        method: crate::ledger::PaymentMethod::BankTransfer,
        reference: crate::ledger::Reference::parse(reference).ok(),
        notes: crate::ledger::Notes::parse(format!("bank transaction {}", transaction.id)).ok(),
        created_at: at,
    }
}

/// What booking `allocations` of `transaction` checks before anything is written: a
/// transaction in, not matched yet, fully allocated.
pub fn check_booking(transaction: &BankTransaction, allocations: &[Allocation]) -> Result<(), BankError> {
    if transaction.status == TransactionStatus::Matched {
        return Err(BankError::AlreadyMatched);
    }
    if !transaction.entry.is_credit() {
        return Err(BankError::Debit);
    }
    let allocated: Decimal = allocations.iter().map(|a| a.amount).sum();
    if allocated != transaction.entry.amount || allocations.iter().any(|a| a.amount <= Decimal::ZERO) {
        return Err(BankError::Unallocated { allocated, amount: transaction.entry.amount });
    }
    Ok(())
}

/// How a team's CSV exports are read: which column holds what, by its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvMapping {
    pub delimiter: u8,
    /// `.` or `,`.
    pub decimal_separator: char,
    /// A chrono format such as `%d.%m.%Y`.
    pub date_format: String,
    pub columns: CsvColumns,
}

/// The headers of the columns a CSV export holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvColumns {
    pub date: String,
    pub amount: String,
    pub currency: Option<String>,
    pub counterparty_name: Option<String>,
    pub counterparty_iban: Option<String>,
    pub text: String,
    pub reference: Option<String>,
}

impl CsvMapping {
    /// Checks the parts that must make sense together: a delimiter that is one ASCII
    /// character other than the decimal separator and a quote, and a date format that
    /// writes a day and reads it back.
    pub fn check(&self) -> Result<(), (&'static str, InvalidValue)> {
        if !self.delimiter.is_ascii() || matches!(self.delimiter, b'"' | b'\n' | b'\r') {
            return Err(("delimiter", InvalidValue::new("must be one character such as ; , or a tab")));
        }
        if !matches!(self.decimal_separator, '.' | ',') {
            return Err(("decimalSeparator", InvalidValue::new("must be . or ,")));
        }
        if char::from(self.delimiter) == self.decimal_separator {
            return Err(("delimiter", InvalidValue::new("must differ from decimalSeparator")));
        }
        let day = NaiveDate::from_ymd_opt(2026, 11, 29).unwrap_or_default();
        let mut written = String::new();
        let shown = {
            use std::fmt::Write as _;
            write!(
                written,
                "{}",
                day.format_with_items(chrono::format::StrftimeItems::new(&self.date_format))
            )
        };
        if shown.is_err() || NaiveDate::parse_from_str(&written, &self.date_format).ok() != Some(day) {
            return Err((
                "dateFormat",
                InvalidValue::new(
                    "must be a chrono date format that names day, month and year, such as %d.%m.%Y",
                ),
            ));
        }
        Ok(())
    }
}

/// What went wrong reading a file: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct ReadError {
    pub problem: String,
}

impl ReadError {
    pub fn new(problem: impl Into<String>) -> Self {
        Self { problem: problem.into() }
    }
}

/// Reads a bank's file into its statements: the adapter that knows the formats.
pub trait StatementReader: Send + Sync {
    /// The statements `bytes` hold in `format`; `csv` is the team's mapping, which a CSV
    /// file needs, and `team_currency` the currency of rows that name none.
    fn read(
        &self,
        format: StatementFormat,
        bytes: &[u8],
        csv: Option<&CsvMapping>,
        team_currency: Currency,
    ) -> Result<Vec<Statement>, ReadError>;
}

/// Which transactions to list, newest booking first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TransactionFilter {
    pub statuses: Vec<TransactionStatus>,
    /// Only those this statement added.
    pub statement: Option<BankStatementId>,
    /// Only those booked before this one (newest first: day, then id).
    pub after: Option<(NaiveDate, BankTransactionId)>,
    pub limit: u32,
}

/// Why a booking of a transaction was refused.
#[derive(Debug, thiserror::Error)]
pub enum BankError {
    #[error("transaction not found")]
    NotFound,
    /// An invoice of an allocation is not the team's.
    #[error("invoice {0} not found")]
    InvoiceNotFound(InvoiceId),
    /// Booked already (by an import, a match, or another request meanwhile).
    #[error("the transaction is matched already")]
    AlreadyMatched,
    /// Money out, which pays no invoice.
    #[error("the transaction is money out")]
    Debit,
    /// The allocations do not add up to the transaction's amount.
    #[error("the allocations come to {allocated}, the transaction to {amount}")]
    Unallocated { allocated: Decimal, amount: Decimal },
    /// An invoice in another currency than the transaction's.
    #[error("invoice {invoice} is in {currency}")]
    OtherCurrency { invoice: DocumentNumber, currency: Currency },
    /// Unmatching a transaction not matched.
    #[error("the transaction is not matched")]
    NotMatched,
    /// The client's credit it gave was used meanwhile.
    #[error("the client's credit from it was used")]
    CreditUsed,
    /// A payment it made cannot be voided (a later entry needs it).
    #[error(transparent)]
    Books(#[from] crate::ledger::LedgerRule),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The bank port: statements kept, transactions kept once, and their bookings through the
/// ledger's rules and lock.
#[async_trait::async_trait]
pub trait BankRepository: Send + Sync {
    /// Keeps `new`'s statement and those of its entries not kept before (by key), in one
    /// transaction; answers the statement and the transactions it added.
    async fn import_statement(
        &self,
        team: TeamId,
        new: &NewStatement,
    ) -> Result<(ImportedStatement, Vec<BankTransaction>), StoreError>;

    async fn get_statement(
        &self,
        team: TeamId,
        id: BankStatementId,
    ) -> Result<Option<ImportedStatement>, StoreError>;

    /// Writes what matching made of an import (its counts), and tells of each new credit it
    /// left for a person (`left`: unmatched or suggested) with `bank_transaction.unmatched`.
    async fn finish_import(
        &self,
        team: TeamId,
        statement: BankStatementId,
        counts: (usize, usize),
        left: &[BankTransaction],
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// The team's open invoices (something due), as matching sees them.
    async fn open_invoices(&self, team: TeamId) -> Result<Vec<OpenInvoice>, StoreError>;

    async fn get_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
    ) -> Result<Option<BankTransaction>, StoreError>;

    async fn list_transactions(
        &self,
        team: TeamId,
        filter: &TransactionFilter,
    ) -> Result<Vec<BankTransaction>, StoreError>;

    /// Books the team's transaction `id` as `allocations` say, once: locks it, refuses a
    /// matched one or a debit, then records each allocation as a `bank_transfer` payment
    /// on its invoice under the invoice's lock (what is above its due going to its
    /// client's credit), all in one transaction.
    async fn book_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        allocations: &[Allocation],
        entries: &[LedgerEntryId],
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError>;

    /// Marks the team's unmatched transaction `id` as probably paying `invoice`; a matched
    /// one stays as it is.
    async fn suggest(
        &self,
        team: TeamId,
        id: BankTransactionId,
        invoice: InvoiceId,
    ) -> Result<Option<BankTransaction>, StoreError>;

    /// Voids the payments the team's matched transaction `id` made and takes back the
    /// credit it gave: unmatched again.
    async fn unmatch_transaction(
        &self,
        team: TeamId,
        id: BankTransactionId,
        at: DateTime<Utc>,
    ) -> Result<BankTransaction, BankError>;

    /// Reads the team's saved CSV mapping.
    async fn csv_mapping(&self, team: TeamId) -> Result<Option<CsvMapping>, StoreError>;

    async fn save_csv_mapping(
        &self,
        team: TeamId,
        mapping: &CsvMapping,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    fn eur() -> Currency {
        Currency::parse("EUR").unwrap()
    }

    fn entry(amount: &str, text: &str) -> StatementEntry {
        StatementEntry {
            booked_on: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            value_on: None,
            amount: d(amount),
            currency: eur(),
            counterparty_name: Some("Müller GmbH".into()),
            counterparty_iban: None,
            text: text.into(),
            reference: None,
            bank_reference: None,
        }
    }

    fn open(serial: &str, due: &str, client: &str) -> OpenInvoice {
        OpenInvoice {
            id: InvoiceId::generate(),
            number: DocumentNumber::stored(serial.into(), 1),
            client_name: client.into(),
            currency: eur(),
            due: d(due),
        }
    }

    use kernel::Id as _;

    #[test]
    fn a_reference_books_the_amount_and_a_serial_only_what_is_due() {
        let (a, b) = (open("INV-0042", "100.00", "Müller GmbH"), open("INV-0043", "50.00", "Zoë"));
        let mut matcher = Matcher::new(vec![a.clone(), b.clone()]);
        let mut paid = entry("120.00", "thanks");
        paid.reference = Some(PaymentReference::creditor("INV-0042").printed());
        assert_eq!(
            matcher.decide(&paid),
            Decision::Book(vec![Allocation { invoice: a.id, amount: d("120.00") }])
        );
        // Its due is spent: the serial no longer books it.
        assert_eq!(matcher.decide(&entry("10.00", "INV-0042")), Decision::Leave);
        assert_eq!(
            matcher.decide(&entry("20.00", "Rechnung inv0043")),
            Decision::Book(vec![Allocation { invoice: b.id, amount: d("20.00") }])
        );
        assert_eq!(matcher.decide(&entry("31.00", "INV-0043")), Decision::Suggest(b.id), "above what is due");
        assert_eq!(matcher.decide(&entry("5.00", "INV-00431")), Decision::Leave, "another serial");
        assert_eq!(
            matcher.decide(&entry("5.00", "RECHNUNG NR. INV-0043KUNDENNR. 20417")),
            Decision::Book(vec![Allocation { invoice: b.id, amount: d("5.00") }]),
            "the next subfield glued on"
        );
        assert_eq!(matcher.decide(&entry("-30.00", "INV-0043")), Decision::Leave, "money out");
    }

    #[test]
    fn a_reference_written_in_the_text_counts_as_given() {
        let a = open("INV-0042", "100.00", "Müller GmbH");
        let mut matcher = Matcher::new(vec![a.clone()]);
        let printed = PaymentReference::creditor("INV-0042").printed();
        assert_eq!(
            matcher.decide(&entry("100.00", &format!("Zahlung {printed} danke"))),
            Decision::Book(vec![Allocation { invoice: a.id, amount: d("100.00") }])
        );
    }

    #[test]
    fn several_serials_book_their_dues_and_an_equal_amount_from_the_client_only_suggests() {
        let (a, b) = (open("INV-1", "100.00", "Müller GmbH"), open("INV-2", "50.00", "Müller GmbH"));
        let mut matcher = Matcher::new(vec![a.clone(), b.clone()]);
        assert_eq!(matcher.decide(&entry("149.00", "INV-1, INV-2")), Decision::Leave);
        assert_eq!(
            matcher.decide(&entry("150.00", "INV-1, INV-2")),
            Decision::Book(vec![
                Allocation { invoice: a.id, amount: d("100.00") },
                Allocation { invoice: b.id, amount: d("50.00") }
            ])
        );
        let c = open("INV-3", "75.00", "MÜLLER gmbh");
        let mut matcher = Matcher::new(vec![c.clone(), open("INV-4", "75.00", "Someone else")]);
        assert_eq!(matcher.decide(&entry("75.00", "payment")), Decision::Suggest(c.id));
        let mut stranger = entry("75.00", "payment");
        stranger.counterparty_name = Some("Nobody Ltd".into());
        assert_eq!(matcher.decide(&stranger), Decision::Leave);
    }

    #[test]
    fn balances_add_up_and_entries_are_recognised_again() {
        let statement = Statement {
            account: Some("DE44500105175407324931".into()),
            currency: eur(),
            opening: Some(d("10.00")),
            closing: Some(d("40.00")),
            from: None,
            to: None,
            entries: vec![entry("20.00", "a"), entry("20.00", "a"), entry("-10.00", "b")],
        };
        assert_eq!(check_statements(std::slice::from_ref(&statement)), Ok(()));
        let keys = entry_keys(&statement);
        assert_eq!(keys.len(), 3);
        assert_ne!(keys[0], keys[1], "two equal transfers on one day are two");
        assert_eq!(keys, entry_keys(&statement.clone()));
        let off = Statement { closing: Some(d("41.00")), ..statement };
        assert!(matches!(check_statements(&[off]), Err(StatementRule::Unbalanced { statement: 1, .. })));
    }
}
