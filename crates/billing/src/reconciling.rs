//! The use cases of bank statements: a file imported and matched, the pending
//! transactions matched again (or only previewed), a transaction booked by hand over
//! several invoices, and a booking undone. The REST routes and the tools all go through
//! here.

use accounts::{Currency, TeamId};
use chrono::{DateTime, Utc};
use futures_util::{StreamExt as _, TryStreamExt as _, stream};
use kernel::{Id, StoreError};

use crate::banking::{
    Allocation, BankError, BankRepository, BankTransaction, BankTransactionId, Decision, ImportedStatement,
    Matcher, NewStatement, ReadError, StatementFormat, StatementReader, StatementRule, TransactionFilter,
    TransactionStatus, check_statements, entry_keys,
};
use crate::ledger::LedgerEntryId;

/// Why a file was not imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file is not one of its format.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// What it holds breaks a rule of statements.
    #[error(transparent)]
    Rule(#[from] StatementRule),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What matching did with one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched {
    pub transaction: BankTransactionId,
    pub decision: Decision,
}

/// Books `decision` of `transaction` (a booking found matched meanwhile stays as the other
/// request left it), or suggests its invoice; answers whether it booked or suggested.
async fn apply(
    store: &dyn BankRepository,
    team: TeamId,
    transaction: &BankTransaction,
    decision: &Decision,
    now: DateTime<Utc>,
) -> Result<Decision, StoreError> {
    match decision {
        Decision::Book(allocations) => {
            let entries: Vec<LedgerEntryId> = allocations.iter().map(|_| LedgerEntryId::generate()).collect();
            match store.book_transaction(team, transaction.id, allocations, &entries, now).await {
                Ok(_) => Ok(decision.clone()),
                Err(BankError::Store(error)) => Err(error),
                // Matched meanwhile, or a rule of the books refused it: it waits for a person.
                Err(refused) => {
                    tracing::info!(transaction = %transaction.id, %refused, "left unmatched");
                    Ok(Decision::Leave)
                }
            }
        }
        Decision::Suggest(invoice) => {
            store.suggest(team, transaction.id, *invoice).await?;
            Ok(decision.clone())
        }
        Decision::Leave => Ok(Decision::Leave),
    }
}

/// How many of one pass's bookings run at once. Each takes its own invoice's lock, so
/// bookings of different invoices go side by side and the database, not a round trip after
/// another, sets the pace; two of one invoice wait for each other.
const BOOKINGS_AT_ONCE: usize = 8;

/// Applies each decision (made in order, each seeing the dues the ones before it left),
/// [`BOOKINGS_AT_ONCE`] at a time; answers each transaction with what was done, in order.
async fn apply_all(
    store: &dyn BankRepository,
    team: TeamId,
    decided: Vec<(BankTransaction, Decision)>,
    now: DateTime<Utc>,
) -> Result<Vec<(BankTransaction, Decision)>, StoreError> {
    stream::iter(decided)
        .map(|(transaction, decision)| async move {
            let done = apply(store, team, &transaction, &decision, now).await?;
            Ok::<_, StoreError>((transaction, done))
        })
        .buffered(BOOKINGS_AT_ONCE)
        .try_collect()
        .await
}

/// Imports the statements `bytes` hold in `format` into the team's books: each new
/// transaction kept (those kept before counted as duplicates), then every new credit
/// matched to the team's open invoices as [`Matcher`] says, at `now`.
pub async fn import(
    store: &dyn BankRepository,
    reader: &dyn StatementReader,
    team: TeamId,
    format: StatementFormat,
    bytes: &[u8],
    team_currency: Currency,
    now: DateTime<Utc>,
) -> Result<Vec<ImportedStatement>, ImportError> {
    let mapping = match format {
        StatementFormat::Csv => store.csv_mapping(team).await?,
        _ => None,
    };
    let statements = reader.read(format, bytes, mapping.as_ref(), team_currency)?;
    check_statements(&statements)?;
    let mut imported = Vec::with_capacity(statements.len());
    let mut matcher = Matcher::new(store.open_invoices(team).await?);
    for statement in statements {
        let keys = entry_keys(&statement);
        let ids = statement.entries.iter().map(|_| BankTransactionId::generate()).collect();
        let new = NewStatement {
            id: crate::banking::BankStatementId::generate(),
            format,
            statement,
            keys,
            ids,
            imported_at: now,
        };
        let (mut kept, added) = store.import_statement(team, &new).await?;
        let decided = added
            .into_iter()
            .filter(|t| t.status == TransactionStatus::Unmatched)
            .map(|transaction| {
                let decision = matcher.decide(&transaction.entry);
                (transaction, decision)
            })
            .collect();
        let mut left = Vec::new();
        for (transaction, done) in apply_all(store, team, decided, now).await? {
            match done {
                Decision::Book(_) => kept.matched += 1,
                Decision::Suggest(invoice) => {
                    kept.suggested += 1;
                    let status = TransactionStatus::Suggested;
                    left.push(BankTransaction { status, suggested_invoice: Some(invoice), ..transaction });
                }
                Decision::Leave => left.push(transaction),
            }
        }
        store.finish_import(team, kept.id, (kept.matched, kept.suggested), &left, now).await?;
        imported.push(kept);
    }
    Ok(imported)
}

/// The most pending transactions one matching pass reads.
pub const MATCH_LIMIT: u32 = 10_000;

/// Matches the team's pending transactions (unmatched, and suggested ones again) to its
/// open invoices; with `dry_run`, answers what it would do and books nothing.
pub async fn match_pending(
    store: &dyn BankRepository,
    team: TeamId,
    dry_run: bool,
    now: DateTime<Utc>,
) -> Result<Vec<Matched>, StoreError> {
    let filter = TransactionFilter {
        statuses: vec![TransactionStatus::Unmatched, TransactionStatus::Suggested],
        statement: None,
        after: None,
        limit: MATCH_LIMIT,
    };
    let mut pending = store.list_transactions(team, &filter).await?;
    // Oldest first, as the money arrived.
    pending.reverse();
    let mut matcher = Matcher::new(store.open_invoices(team).await?);
    let decided: Vec<(BankTransaction, Decision)> = pending
        .into_iter()
        .map(|transaction| {
            let decision = matcher.decide(&transaction.entry);
            (transaction, decision)
        })
        .collect();
    let done = if dry_run { decided } else { apply_all(store, team, decided, now).await? };
    Ok(done
        .into_iter()
        .filter(|(_, decision)| *decision != Decision::Leave)
        .map(|(transaction, decision)| Matched { transaction: transaction.id, decision })
        .collect())
}

/// Books the team's transaction `id` over `allocations` by hand (a person or the agent
/// confirming a suggestion, or splitting a transfer).
pub async fn match_by_hand(
    store: &dyn BankRepository,
    team: TeamId,
    id: BankTransactionId,
    allocations: &[Allocation],
    now: DateTime<Utc>,
) -> Result<BankTransaction, BankError> {
    let entries: Vec<LedgerEntryId> = allocations.iter().map(|_| LedgerEntryId::generate()).collect();
    store.book_transaction(team, id, allocations, &entries, now).await
}
