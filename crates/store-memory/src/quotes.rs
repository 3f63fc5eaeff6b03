//! The quote port in memory: every write runs under the state's lock, checked on the quote
//! as it stands before the first change.

use accounts::TeamId;
use async_trait::async_trait;
use billing::numbering::Series;
use billing::quote::{Decision, Quote, QuoteId, QuoteStatus};
use billing::quoting::{
    Conversion, QuoteFilter, QuoteRepository, QuoteStoreError, check_conversion, converted,
};
use billing::{Invoice, InvoiceId};
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::invoices::{Keep, make_invoice};
use crate::{MemoryStore, State};

impl State {
    fn quote_mut(&mut self, team: TeamId, id: QuoteId) -> Result<&mut Quote, QuoteStoreError> {
        self.quotes.iter_mut().find(|q| q.team_id == team && q.id == id).ok_or(QuoteStoreError::NotFound)
    }

    fn check_client(&self, quote: &Quote) -> Result<(), QuoteStoreError> {
        let known = self.clients.iter().any(|c| c.team_id == quote.team_id && c.id == quote.client_id);
        if known { Ok(()) } else { Err(QuoteStoreError::UnknownClient) }
    }

    /// Raises `quote.expired`, once, for up to `limit` sent quotes undecided past their
    /// date at `now`; answers how many.
    pub(crate) fn mark_expired_quotes(
        &mut self,
        describe: &dyn notify::Describe,
        now: DateTime<Utc>,
        limit: u32,
    ) -> u32 {
        let mut expired: Vec<Quote> = self
            .quotes
            .iter()
            .filter(|q| q.status_at(now) == QuoteStatus::Expired && !self.expiries_announced.contains(&q.id))
            .cloned()
            .collect();
        expired.sort_by_key(|q| (q.valid_until, q.id));
        expired.truncate(limit as usize);
        for quote in &expired {
            self.expiries_announced.insert(quote.id);
            self.record(notify::raise::quote_expired(quote).events(describe, now));
        }
        u32::try_from(expired.len()).unwrap_or(u32::MAX)
    }

    /// Forgets a deleted invoice among its quote's invoices, as the SQL stores' foreign key
    /// does.
    pub(crate) fn drop_quote_invoice(&mut self, id: InvoiceId) {
        for quote in &mut self.quotes {
            quote.invoices.retain(|invoice| invoice.invoice_id != id);
        }
    }
}

#[async_trait]
impl QuoteRepository for MemoryStore {
    async fn create_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError> {
        self.changed(|state| {
            state.check_client(quote)?;
            state.quotes.push(quote.clone());
            Ok(quote.clone())
        })
    }

    async fn get_quote(&self, team: TeamId, id: QuoteId) -> Result<Option<Quote>, StoreError> {
        Ok(self.state().quotes.iter().find(|q| q.team_id == team && q.id == id).cloned())
    }

    async fn find_quote(&self, id: QuoteId) -> Result<Option<Quote>, StoreError> {
        Ok(self.state().quotes.iter().find(|q| q.id == id).cloned())
    }

    async fn list_quotes(&self, team: TeamId, filter: &QuoteFilter) -> Result<Vec<Quote>, StoreError> {
        let mut quotes: Vec<Quote> =
            self.state().quotes.iter().filter(|q| q.team_id == team && filter.matches(q)).cloned().collect();
        billing::quoting::sort_for_listing(&mut quotes);
        quotes.truncate(filter.limit.map_or(usize::MAX, |limit| limit as usize));
        Ok(quotes)
    }

    async fn replace_quote(&self, quote: &Quote) -> Result<Quote, QuoteStoreError> {
        self.changed(|state| {
            state.check_client(quote)?;
            let stored = state.quote_mut(quote.team_id, quote.id)?;
            stored.check_draft(quote.updated_at)?;
            *stored = Quote {
                id: stored.id,
                team_id: stored.team_id,
                number: stored.number.clone(),
                sent_at: stored.sent_at,
                decision: stored.decision.clone(),
                supersedes: stored.supersedes,
                invoices: stored.invoices.clone(),
                created_at: stored.created_at,
                ..quote.clone()
            };
            Ok(stored.clone())
        })
    }

    async fn delete_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        at: DateTime<Utc>,
    ) -> Result<(), QuoteStoreError> {
        self.changed(|state| {
            state.quote_mut(team, id)?.check_draft(at)?;
            state.quotes.retain(|q| !(q.team_id == team && q.id == id));
            Ok(())
        })
    }

    async fn finalize_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        at: DateTime<Utc>,
    ) -> Result<(Quote, bool), QuoteStoreError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.quote_mut(team, id)?.clone();
            if current.number.is_some() {
                return Ok((current, false));
            }
            let (number, count, counter) = state.next_number(team, Series::Quotes, at, |number| {
                state.quotes.iter().any(|q| q.team_id == team && q.number.as_ref() == Some(number))
            })?;
            let quote = Quote { number: Some(number), sent_at: Some(at), updated_at: at, ..current };
            state.counted(count, counter);
            state.record(notify::raise::quote_sent(&quote).events(&*describe, at));
            *state.quote_mut(team, id)? = quote.clone();
            Ok((quote, true))
        })
    }

    async fn decide_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        decision: &Decision,
    ) -> Result<Quote, QuoteStoreError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.quote_mut(team, id)?.clone();
            current.check_decidable(decision.at)?;
            let quote = Quote { decision: Some(decision.clone()), updated_at: decision.at, ..current };
            state.record(notify::raise::quote_decided(&quote).events(&*describe, decision.at));
            *state.quote_mut(team, id)? = quote.clone();
            Ok(quote)
        })
    }

    async fn convert_quote(
        &self,
        team: TeamId,
        id: QuoteId,
        conversion: &Conversion,
        at: DateTime<Utc>,
    ) -> Result<(Quote, Invoice), QuoteStoreError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let current = state.quote_mut(team, id)?.clone();
            check_conversion(&current, conversion, at)?;
            // The invoice records its own events; the quote's follow it.
            let invoice = make_invoice(state, &*describe, &conversion.invoice, Keep::Commit)?;
            let mut quote = current;
            quote.invoices.push(converted(conversion, &invoice));
            quote.updated_at = at;
            let Some(stored) = state.quotes.iter_mut().find(|q| q.team_id == team && q.id == id) else {
                return Err(QuoteStoreError::NotFound);
            };
            *stored = quote.clone();
            if quote.final_invoice().is_some() {
                let raised = notify::raise::quote_converted(&quote);
                state.record(raised.events(&*describe, at));
            }
            Ok((quote, invoice))
        })
    }
}
