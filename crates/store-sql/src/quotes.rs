//! The quote port over diesel.
//!
//! Every write starts by touching the quote's row (SQLite's write lock, PostgreSQL's lock of
//! the row), then reads the quote as locked and checks its rule on it: concurrent writes of
//! one quote are played one after the other. A conversion makes its invoice in the same
//! transaction, as a create does ([`crate::invoices::make_invoice`]), so a quote is
//! converted in full once however many race.

use accounts::TeamId;
use async_trait::async_trait;
use billing::invoice::Description;
use billing::numbering::Series;
use billing::quote::{
    ConversionKind, Decision, DecisionSource, DeclineReason, Quote, QuoteId, QuoteInvoice, QuoteNotes,
    QuoteStatus, SignerName, Verdict,
};
use billing::quoting::{
    Conversion, QuoteFilter, QuoteRepository, QuoteStoreError, check_conversion, converted,
};
use billing::sender::Logo;
use billing::store::{BillTo, CreateInvoiceError, NewInvoice, SenderChoice, TimeToBill};
use billing::{ClientId, Invoice, LineItem, Serial, TaxRule};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::{Email, StoreError};

use crate::chasing::{record_events, refresh_reminders};
use crate::clients::{details_values, insert_client};
use crate::invoice_rows::{
    LineRow, discount_columns, discount_of, exchange_of, exchange_text, insert_lines, number_of, totals_of,
    vat_of,
};
use crate::invoices::{
    bill_entries, exists, insert_default_sender, insert_invoice, invoice_values, make_invoice, sender_values,
    settle_sender,
};
use crate::ledger::{balance_values, insert_entry};
use crate::types::{DbDecimal, DbUuid};
use crate::{OrStoreError, SqlStore, TxError, corrupt, db_run};

#[derive(Queryable)]
struct QuoteRow {
    team_id: DbUuid,
    id: DbUuid,
    client_id: DbUuid,
    number: Option<String>,
    number_counter: Option<i32>,
    #[expect(dead_code, reason = "selected with the whole row; listings filter by it in SQL")]
    status: String,
    description: Option<String>,
    notes: Option<String>,
    valid_until: Option<DateTime<Utc>>,
    currency: String,
    exchange: Option<String>,
    vat_category: String,
    vat_exemption_reason: Option<String>,
    tax_percentage: DbDecimal,
    tax: DbDecimal,
    subtotal: DbDecimal,
    total: DbDecimal,
    discount_percentage: Option<DbDecimal>,
    discount_amount: Option<DbDecimal>,
    sent_at: Option<DateTime<Utc>>,
    verdict: Option<String>,
    signer: Option<String>,
    decline_reason: Option<String>,
    decided_on: Option<String>,
    decided_ip: Option<String>,
    decided_user_agent: Option<String>,
    decided_at: Option<DateTime<Utc>>,
    #[expect(dead_code, reason = "selected with the whole row; only the expiry pass reads it")]
    expiry_announced_for: Option<DateTime<Utc>>,
    supersedes: Option<DbUuid>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

/// A row of `quote_invoices`.
type QuoteInvoiceRow = (DbUuid, DbUuid, DbUuid, i32, String, String, i32, DbDecimal, DbDecimal);

fn decision_of(row: &QuoteRow) -> Result<Option<Decision>, StoreError> {
    let Some(at) = row.decided_at else { return Ok(None) };
    let verdict = match row.verdict.as_deref() {
        Some("accepted") => Verdict::Accepted {
            signer: SignerName::from_stored(row.signer.clone().unwrap_or_default())
                .map_err(|e| corrupt("quote signer", e))?,
        },
        Some("declined") => Verdict::Declined {
            reason: row
                .decline_reason
                .clone()
                .map(DeclineReason::from_stored)
                .transpose()
                .map_err(|e| corrupt("decline reason", e))?,
        },
        other => return Err(corrupt("quote verdict", format!("{other:?}"))),
    };
    let source = match row.decided_on.as_deref() {
        Some("page") => DecisionSource::Page {
            ip: row.decided_ip.clone().unwrap_or_default(),
            user_agent: row.decided_user_agent.clone().unwrap_or_default(),
        },
        Some("team") => DecisionSource::Team,
        other => return Err(corrupt("quote decided on", format!("{other:?}"))),
    };
    Ok(Some(Decision { verdict, source, at }))
}

fn quote_from(row: QuoteRow, lines: Vec<LineItem>, invoices: Vec<QuoteInvoice>) -> Result<Quote, StoreError> {
    let number = match (row.number.clone(), row.number_counter) {
        (Some(text), Some(counter)) => Some(number_of(text, counter)?),
        (None, None) => None,
        _ => return Err(corrupt("quote number", "a number without its counter")),
    };
    Ok(Quote {
        decision: decision_of(&row)?,
        id: row.id.into_id(),
        team_id: row.team_id.into_id(),
        client_id: row.client_id.into_id(),
        number,
        description: row
            .description
            .map(Description::from_stored)
            .transpose()
            .map_err(|e| corrupt("quote description", e))?,
        notes: row.notes.map(QuoteNotes::from_stored).transpose().map_err(|e| corrupt("quote notes", e))?,
        valid_until: row.valid_until,
        currency: accounts::Currency::parse(&row.currency).map_err(|e| corrupt("currency", e))?,
        exchange: exchange_of(row.exchange.as_deref(), &row.currency)?,
        vat: vat_of(&row.vat_category, row.vat_exemption_reason)?,
        tax_rule: TaxRule::from_stored(row.tax_percentage.0, row.tax.0),
        discount: discount_of(row.discount_percentage, row.discount_amount)?,
        line_items: lines,
        totals: totals_of(&row.subtotal, &row.tax, &row.total),
        sent_at: row.sent_at,
        supersedes: row.supersedes.map(DbUuid::into_id),
        invoices,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

fn quote_invoice_from(row: QuoteInvoiceRow) -> Result<(DbUuid, QuoteInvoice), StoreError> {
    let (_, invoice_id, quote_id, _, kind, number, counter, net, total) = row;
    Ok((
        quote_id,
        QuoteInvoice {
            invoice_id: invoice_id.into_id(),
            number: number_of(number, counter)?,
            kind: <ConversionKind as kernel::Words>::from_word(&kind)
                .ok_or_else(|| corrupt("quote invoice kind", &kind))?,
            net: net.0,
            total: total.0,
        },
    ))
}

/// Quotes from their rows, all their lines' rows and all their invoices' rows (each in
/// position order).
fn assemble(
    rows: Vec<QuoteRow>,
    lines: Vec<LineRow>,
    invoices: Vec<QuoteInvoiceRow>,
) -> Result<Vec<Quote>, StoreError> {
    let mut items: std::collections::HashMap<DbUuid, Vec<LineItem>> = std::collections::HashMap::new();
    for line in lines {
        items.entry(line.parent_id).or_default().push(line.try_into()?);
    }
    let mut made: std::collections::HashMap<DbUuid, Vec<QuoteInvoice>> = std::collections::HashMap::new();
    for row in invoices {
        let (quote, invoice) = quote_invoice_from(row)?;
        made.entry(quote).or_default().push(invoice);
    }
    rows.into_iter()
        .map(|row| {
            let (lines, invoices) =
                (items.remove(&row.id).unwrap_or_default(), made.remove(&row.id).unwrap_or_default());
            quote_from(row, lines, invoices)
        })
        .collect()
}

/// The status a quote's row holds: what writes decide (EXPIRED follows from the clock).
fn stored_status(quote: &Quote) -> &'static str {
    let status = match (&quote.decision, quote.number.is_some()) {
        _ if quote.final_invoice().is_some() => QuoteStatus::Converted,
        (Some(Decision { verdict: Verdict::Accepted { .. }, .. }), _) => QuoteStatus::Accepted,
        (Some(Decision { verdict: Verdict::Declined { .. }, .. }), _) => QuoteStatus::Declined,
        (None, true) => QuoteStatus::Sent,
        (None, false) => QuoteStatus::Draft,
    };
    status.as_str()
}

/// The columns of a quote that a draft's change writes.
macro_rules! quote_values {
    ($quote:expr) => {{
        let quote: &Quote = $quote;
        let (percentage, amount) = discount_columns(quote.discount);
        (
            (
                quotes::client_id.eq(DbUuid::of(quote.client_id)),
                quotes::description.eq(quote.description.as_ref().map(|d| d.as_str())),
                quotes::notes.eq(quote.notes.as_ref().map(kernel::Text::as_str)),
                quotes::valid_until.eq(quote.valid_until),
                quotes::currency.eq(quote.currency.as_str()),
                quotes::exchange.eq(exchange_text(&quote.exchange)),
                quotes::vat_category.eq(quote.vat.category().as_str()),
                quotes::vat_exemption_reason.eq(quote.vat.exemption_reason().map(|r| r.as_str())),
            ),
            (
                quotes::tax_percentage.eq(DbDecimal(quote.tax_rule.percentage())),
                quotes::tax.eq(DbDecimal(quote.totals.tax)),
                quotes::subtotal.eq(DbDecimal(quote.totals.subtotal)),
                quotes::total.eq(DbDecimal(quote.totals.total)),
                quotes::discount_percentage.eq(percentage),
                quotes::discount_amount.eq(amount),
                quotes::updated_at.eq(quote.updated_at),
            ),
        )
    }};
}

/// Touches the team's quote `$id` and reads it with its lines and invoices, in a
/// write's transaction (whose error is a `TxError<QuoteStoreError>`).
macro_rules! lock_quote {
    ($conn:ident, $team:expr, $id:expr) => {{
        let team = DbUuid::of($team);
        let row: Option<QuoteRow> = diesel::update(
            quotes::table.filter(quotes::team_id.eq(team)).filter(quotes::id.eq(DbUuid::of($id))),
        )
        .set(quotes::updated_at.eq(quotes::updated_at))
        .returning(quotes::all_columns)
        .get_result($conn)
        .await
        .optional()?;
        let Some(row) = row else { return Err(TxError::Refused(QuoteStoreError::NotFound)) };
        let lines: Vec<LineRow> = quote_lines::table
            .filter(quote_lines::team_id.eq(team))
            .filter(quote_lines::quote_id.eq(row.id))
            .order(quote_lines::position)
            .load($conn)
            .await?;
        let invoices: Vec<QuoteInvoiceRow> = quote_invoices::table
            .filter(quote_invoices::team_id.eq(team))
            .filter(quote_invoices::quote_id.eq(row.id))
            .order(quote_invoices::position)
            .load($conn)
            .await?;
        assemble(vec![row], lines, invoices).map_err(|e| TxError::Refused(e.into()))?.remove(0)
    }};
}

/// Which of the stored SENT quotes a filter takes: those still valid read SENT, those past
/// their date EXPIRED.
enum SentTaken {
    None,
    All,
    Valid,
    Expired,
}

/// The quotes of `$team` that `$filter` shows, in listing order, at most its `limit`.
macro_rules! filtered_quotes {
    ($team:expr, $filter:expr) => {{
        let filter: &QuoteFilter = $filter;
        let mut query = quotes::table
            .filter(quotes::team_id.eq(DbUuid::of($team)))
            .order((quotes::created_at.desc(), quotes::id.desc()))
            .into_boxed();
        if !filter.statuses.is_empty() {
            let wants = |status| filter.statuses.contains(&status);
            let stored: Vec<&str> = filter
                .statuses
                .iter()
                .filter(|s| !matches!(s, QuoteStatus::Sent | QuoteStatus::Expired))
                .map(|s| s.as_str())
                .collect();
            let stored = quotes::status.eq_any(stored);
            let sent = quotes::status.eq(QuoteStatus::Sent.as_str());
            let until = quotes::valid_until;
            let taken = match (wants(QuoteStatus::Sent), wants(QuoteStatus::Expired)) {
                (true, true) => SentTaken::All,
                (true, false) => SentTaken::Valid,
                (false, true) => SentTaken::Expired,
                (false, false) => SentTaken::None,
            };
            query = match taken {
                SentTaken::None => query.filter(stored),
                SentTaken::All => query.filter(stored.or(sent)),
                SentTaken::Valid => {
                    query.filter(stored.or(sent.and(until.is_null().or(until.ge(filter.now)))))
                }
                SentTaken::Expired => query.filter(stored.or(sent.and(until.lt(filter.now)))),
            };
        }
        if let Some(client) = filter.client {
            query = query.filter(quotes::client_id.eq(DbUuid::of(client)));
        }
        if let Some(after) = filter.after {
            query = query.filter(
                quotes::created_at
                    .lt(after.created_at)
                    .or(quotes::created_at.eq(after.created_at).and(quotes::id.lt(DbUuid::of(after.id)))),
            );
        }
        if let Some(limit) = filter.limit {
            query = query.limit(i64::from(limit));
        }
        query
    }};
}

/// Whether a diesel error is a foreign key's: the client is not the team's.
fn unknown_client(error: diesel::result::Error) -> TxError<QuoteStoreError> {
    match crate::violation(&error) {
        Some(diesel::result::DatabaseErrorKind::ForeignKeyViolation) => {
            TxError::Refused(QuoteStoreError::UnknownClient)
        }
        _ => TxError::Db(error),
    }
}

impl SqlStore {
    /// The team's quotes `filter` shows, or its quote `id`, read whole.
    async fn load_quotes(
        &self,
        team: TeamId,
        filter: Option<&QuoteFilter>,
        id: Option<QuoteId>,
    ) -> Result<Vec<Quote>, StoreError> {
        let (rows, lines, invoices): (Vec<QuoteRow>, Vec<LineRow>, Vec<QuoteInvoiceRow>) =
            db_run!(self, |conn| {
                let team_id = DbUuid::of(team);
                let rows: Vec<QuoteRow> = match (filter, id) {
                    (Some(filter), _) => filtered_quotes!(team, filter).load(conn).await.or_store()?,
                    (None, Some(id)) => quotes::table
                        .filter(quotes::team_id.eq(team_id))
                        .filter(quotes::id.eq(DbUuid::of(id)))
                        .load(conn)
                        .await
                        .or_store()?,
                    (None, None) => Vec::new(),
                };
                let ids: Vec<DbUuid> = rows.iter().map(|row| row.id).collect();
                let lines = quote_lines::table
                    .filter(quote_lines::team_id.eq(team_id))
                    .filter(quote_lines::quote_id.eq_any(&ids))
                    .order((quote_lines::quote_id, quote_lines::position))
                    .load(conn)
                    .await
                    .or_store()?;
                let invoices = quote_invoices::table
                    .filter(quote_invoices::team_id.eq(team_id))
                    .filter(quote_invoices::quote_id.eq_any(&ids))
                    .order((quote_invoices::quote_id, quote_invoices::position))
                    .load(conn)
                    .await
                    .or_store()?;
                (rows, lines, invoices)
            });
        assemble(rows, lines, invoices)
    }

    /// Raises `quote.expired`, once, for up to `limit` sent quotes undecided past their
    /// date at `now`; answers how many.
    pub(crate) async fn mark_expired_quotes(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<u32, StoreError> {
        let candidates: Vec<(DbUuid, DbUuid)> = db_run!(self, |conn| quotes::table
            .filter(quotes::status.eq(QuoteStatus::Sent.as_str()))
            .filter(quotes::valid_until.lt(now))
            .filter(quotes::expiry_announced_for.is_null())
            .order((quotes::valid_until, quotes::id))
            .limit(i64::from(limit))
            .select((quotes::team_id, quotes::id))
            .load(conn)
            .await
            .or_store()?);
        let mut marked = 0;
        for (team, id) in candidates {
            let raised: bool = db_run!(self, |conn| conn
                .transaction(async |conn| {
                    // Taken by the pass that marks it: a racing pass finds it marked.
                    let row: Option<QuoteRow> = diesel::update(
                        quotes::table
                            .filter(quotes::team_id.eq(team))
                            .filter(quotes::id.eq(id))
                            .filter(quotes::status.eq(QuoteStatus::Sent.as_str()))
                            .filter(quotes::expiry_announced_for.is_null()),
                    )
                    .set(quotes::expiry_announced_for.eq(quotes::valid_until))
                    .returning(quotes::all_columns)
                    .get_result(conn)
                    .await
                    .optional()?;
                    let Some(row) = row else { return Ok(false) };
                    let quote =
                        assemble(vec![row], Vec::new(), Vec::new()).map_err(TxError::Refused)?.remove(0);
                    record_events!(conn, notify::raise::quote_expired(&quote).events(&*self.describe, now));
                    Ok::<_, TxError<StoreError>>(true)
                })
                .await
                .map_err(TxError::into_port)?);
            marked += u32::from(raised);
        }
        if marked > 0 {
            self.signal.notify_one();
        }
        Ok(marked)
    }

    /// A quote write's outcome, its refusals the port's errors.
    fn quote_write<T>(&self, done: Result<T, TxError<QuoteStoreError>>) -> Result<T, QuoteStoreError> {
        self.signalling(done.map_err(TxError::into_port))
    }
}

#[async_trait]
impl QuoteRepository for SqlStore {
    #[tracing::instrument(skip_all, fields(team = %quote.team_id, quote = %quote.id))]
    async fn create_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError> {
        let done: Result<(), TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                diesel::insert_into(quotes::table)
                    .values((
                        quotes::team_id.eq(DbUuid::of(quote.team_id)),
                        quotes::id.eq(DbUuid::of(quote.id)),
                        quotes::status.eq(QuoteStatus::Draft.as_str()),
                        quotes::supersedes.eq(quote.supersedes.map(DbUuid::of)),
                        quotes::created_at.eq(quote.created_at),
                        quote_values!(quote),
                    ))
                    .execute(conn)
                    .await
                    .map_err(unknown_client)?;
                insert_lines!(conn, quote, quote_lines, quote_id);
                Ok(())
            })
            .await);
        self.quote_write(done)?;
        Ok(quote.clone())
    }

    #[tracing::instrument(skip(self))]
    async fn get_quote(&self, team: TeamId, id: QuoteId) -> Result<Option<Quote>, StoreError> {
        Ok(self.load_quotes(team, None, Some(id)).await?.pop())
    }

    #[tracing::instrument(skip(self))]
    async fn find_quote(&self, id: QuoteId) -> Result<Option<Quote>, StoreError> {
        let team: Option<DbUuid> = db_run!(self, |conn| quotes::table
            .filter(quotes::id.eq(DbUuid::of(id)))
            .select(quotes::team_id)
            .first(conn)
            .await
            .optional()
            .or_store()?);
        match team {
            Some(team) => self.get_quote(team.into_id(), id).await,
            None => Ok(None),
        }
    }

    #[tracing::instrument(skip(self))]
    async fn list_quotes(&self, team: TeamId, filter: &QuoteFilter) -> Result<Vec<Quote>, StoreError> {
        self.load_quotes(team, Some(filter), None).await
    }

    #[tracing::instrument(skip_all, fields(team = %quote.team_id, quote = %quote.id))]
    async fn replace_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError> {
        let done: Result<Quote, TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_quote!(conn, quote.team_id, quote.id);
                current.check_draft(quote.updated_at).map_err(|rule| TxError::Refused(rule.into()))?;
                let mine = quotes::table
                    .filter(quotes::team_id.eq(DbUuid::of(quote.team_id)))
                    .filter(quotes::id.eq(DbUuid::of(quote.id)));
                diesel::update(mine).set(quote_values!(quote)).execute(conn).await.map_err(unknown_client)?;
                diesel::delete(
                    quote_lines::table
                        .filter(quote_lines::team_id.eq(DbUuid::of(quote.team_id)))
                        .filter(quote_lines::quote_id.eq(DbUuid::of(quote.id))),
                )
                .execute(conn)
                .await?;
                insert_lines!(conn, quote, quote_lines, quote_id);
                Ok(Quote {
                    number: current.number,
                    sent_at: current.sent_at,
                    decision: current.decision,
                    supersedes: current.supersedes,
                    invoices: current.invoices,
                    created_at: current.created_at,
                    ..quote.clone()
                })
            })
            .await);
        self.quote_write(done)
    }

    #[tracing::instrument(skip(self))]
    async fn delete_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        at: DateTime<Utc>,
    ) -> Result<(), QuoteStoreError> {
        let done: Result<(), TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_quote!(conn, team, id);
                current.check_draft(at).map_err(|rule| TxError::Refused(rule.into()))?;
                diesel::delete(
                    quotes::table
                        .filter(quotes::team_id.eq(DbUuid::of(team)))
                        .filter(quotes::id.eq(DbUuid::of(id))),
                )
                .execute(conn)
                .await?;
                Ok(())
            })
            .await);
        self.quote_write(done)
    }

    #[tracing::instrument(skip(self))]
    async fn finalize_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        at: DateTime<Utc>,
    ) -> Result<(Quote, bool), QuoteStoreError> {
        let done: Result<(Quote, bool), TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_quote!(conn, team, id);
                if current.number.is_some() {
                    return Ok((current, false));
                }
                let number = crate::numbering::next_number!(conn, team, Series::Quotes, at);
                // The count row's lock keeps every other finalisation of the team out until
                // the commit: no other can take the number between this look and the write.
                let taken: Option<DbUuid> = quotes::table
                    .filter(quotes::team_id.eq(DbUuid::of(team)))
                    .filter(quotes::number.eq(number.as_str()))
                    .select(quotes::id)
                    .first(conn)
                    .await
                    .optional()?;
                if taken.is_some() {
                    return Err(TxError::Refused(billing::numbering::NumberTaken { number }.into()));
                }
                let quote = Quote { number: Some(number), sent_at: Some(at), updated_at: at, ..current };
                diesel::update(
                    quotes::table
                        .filter(quotes::team_id.eq(DbUuid::of(team)))
                        .filter(quotes::id.eq(DbUuid::of(id))),
                )
                .set((
                    quotes::number.eq(quote.number.as_ref().map(billing::DocumentNumber::as_str)),
                    quotes::number_counter
                        .eq(quote.number.as_ref().map(|n| i32::try_from(n.counter()).unwrap_or(i32::MAX))),
                    quotes::status.eq(stored_status(&quote)),
                    quotes::sent_at.eq(at),
                    quotes::updated_at.eq(at),
                ))
                .execute(conn)
                .await?;
                record_events!(conn, notify::raise::quote_sent(&quote).events(&*self.describe, at));
                Ok((quote, true))
            })
            .await);
        self.quote_write(done)
    }

    #[tracing::instrument(skip(self, decision))]
    async fn decide_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        decision: &Decision,
    ) -> Result<Quote, QuoteStoreError> {
        let done: Result<Quote, TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_quote!(conn, team, id);
                current.check_decidable(decision.at).map_err(|rule| TxError::Refused(rule.into()))?;
                let quote = Quote { decision: Some(decision.clone()), updated_at: decision.at, ..current };
                let (verdict, signer, reason) = match &decision.verdict {
                    Verdict::Accepted { signer } => ("accepted", Some(signer.as_str()), None),
                    Verdict::Declined { reason } => {
                        ("declined", None, reason.as_ref().map(kernel::Text::as_str))
                    }
                };
                let (on, ip, agent) = match &decision.source {
                    DecisionSource::Page { ip, user_agent } => {
                        ("page", Some(ip.as_str()), Some(user_agent.as_str()))
                    }
                    DecisionSource::Team => ("team", None, None),
                };
                diesel::update(
                    quotes::table
                        .filter(quotes::team_id.eq(DbUuid::of(team)))
                        .filter(quotes::id.eq(DbUuid::of(id))),
                )
                .set((
                    quotes::status.eq(stored_status(&quote)),
                    quotes::verdict.eq(verdict),
                    quotes::signer.eq(signer),
                    quotes::decline_reason.eq(reason),
                    quotes::decided_on.eq(on),
                    quotes::decided_ip.eq(ip),
                    quotes::decided_user_agent.eq(agent),
                    quotes::decided_at.eq(decision.at),
                    quotes::updated_at.eq(decision.at),
                ))
                .execute(conn)
                .await?;
                record_events!(
                    conn,
                    notify::raise::quote_decided(&quote).events(&*self.describe, decision.at)
                );
                Ok(quote)
            })
            .await);
        self.quote_write(done)
    }

    #[tracing::instrument(skip(self, conversion))]
    async fn convert_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        conversion: &Conversion,
        at: DateTime<Utc>,
    ) -> Result<(Quote, Invoice), QuoteStoreError> {
        let done: Result<(Quote, Invoice), TxError<QuoteStoreError>> = db_run!(self, |conn| conn
            .transaction(async |conn| {
                let current = lock_quote!(conn, team, id);
                check_conversion(&current, conversion, at).map_err(TxError::Refused)?;
                let made: Result<Invoice, TxError<CreateInvoiceError>> = async {
                    Ok(make_invoice!(self, conn, &conversion.invoice, true, TxError<CreateInvoiceError>))
                }
                .await;
                let invoice = made.map_err(|error| match error {
                    TxError::Db(error) => TxError::Db(error),
                    TxError::Refused(error) => TxError::Refused(QuoteStoreError::Invoice(error)),
                    TxError::Previewed(never) => match never {},
                })?;
                let made = converted(conversion, &invoice);
                diesel::insert_into(quote_invoices::table)
                    .values((
                        quote_invoices::team_id.eq(DbUuid::of(team)),
                        quote_invoices::invoice_id.eq(DbUuid::of(invoice.id)),
                        quote_invoices::quote_id.eq(DbUuid::of(id)),
                        quote_invoices::position
                            .eq(i32::try_from(current.invoices.len()).unwrap_or(i32::MAX)),
                        quote_invoices::kind.eq(made.kind.as_str()),
                        quote_invoices::number.eq(made.number.as_str()),
                        quote_invoices::counter.eq(i32::try_from(made.number.counter()).unwrap_or(i32::MAX)),
                        quote_invoices::net.eq(DbDecimal(made.net)),
                        quote_invoices::total.eq(DbDecimal(made.total)),
                    ))
                    .execute(conn)
                    .await?;
                let mut quote = current;
                quote.invoices.push(made);
                quote.updated_at = at;
                diesel::update(
                    quotes::table
                        .filter(quotes::team_id.eq(DbUuid::of(team)))
                        .filter(quotes::id.eq(DbUuid::of(id))),
                )
                .set((quotes::status.eq(stored_status(&quote)), quotes::updated_at.eq(at)))
                .execute(conn)
                .await?;
                if quote.final_invoice().is_some() {
                    record_events!(conn, notify::raise::quote_converted(&quote).events(&*self.describe, at));
                }
                Ok((quote, invoice))
            })
            .await);
        self.quote_write(done)
    }
}
