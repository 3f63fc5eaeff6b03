//! [`IdempotencyStore`] over diesel. A claim inserts the key unless it exists; a key that
//! exists but is free (expired, or unanswered past its lease) is taken over by a
//! compare-and-set on its `claimed_at`, so of two racing claims exactly one wins.

use accounts::{Claimed, IdempotencyStore, KeptResponse, KeyClaim};
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use kernel::StoreError;

use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

/// A stored key as a claim reads it.
#[derive(Queryable)]
struct KeyRow {
    fingerprint: Vec<u8>,
    claimed_at: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    status: Option<i32>,
    headers: Option<String>,
    body: Option<Vec<u8>>,
}

impl KeyRow {
    fn is_free_at(&self, now: DateTime<Utc>) -> bool {
        self.expires_at <= now || (self.status.is_none() && self.lease_until <= now)
    }

    fn answer(self) -> Result<Option<KeptResponse>, StoreError> {
        let (Some(status), Some(body)) = (self.status, self.body) else { return Ok(None) };
        let status = u16::try_from(status).map_err(|e| corrupt("kept status", e))?;
        let headers = self.headers.unwrap_or_default();
        let headers = headers
            .lines()
            .map(|line| {
                let (name, value) = line.split_once(": ").ok_or_else(|| corrupt("kept header", line))?;
                Ok((name.to_owned(), value.to_owned()))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(Some(KeptResponse { status, headers, body }))
    }
}

/// Header lines, `name: value` each; names and values never hold a line break.
fn header_lines(headers: &[(String, String)]) -> String {
    headers.iter().flat_map(|(name, value)| [name, ": ", value, "\n"]).collect()
}

/// The key of `$claim`, as a filter on `idempotency_keys`.
macro_rules! the_key {
    ($claim:expr) => {
        idempotency_keys::table
            .filter(idempotency_keys::team_id.eq(DbUuid::of($claim.team)))
            .filter(idempotency_keys::key.eq($claim.key.as_str()))
    };
}

/// The key of `$claim` while the attempt that made it holds it unanswered.
macro_rules! held_unanswered {
    ($claim:expr) => {
        the_key!($claim)
            .filter(idempotency_keys::claimed_at.eq($claim.at))
            .filter(idempotency_keys::status.is_null())
    };
}

/// The columns a claim sets.
macro_rules! claim_values {
    ($claim:expr) => {
        (
            idempotency_keys::fingerprint.eq(&$claim.fingerprint.0[..]),
            idempotency_keys::claimed_at.eq($claim.at),
            idempotency_keys::lease_until.eq($claim.lease_until),
            idempotency_keys::expires_at.eq($claim.expires_at),
        )
    };
}

#[async_trait]
impl IdempotencyStore for SqlStore {
    #[tracing::instrument(skip_all)]
    async fn claim(&self, claim: &KeyClaim) -> Result<Claimed, StoreError> {
        db_run!(self, |conn| {
            // Each turn either decides or lost a race to a claim that changed the row; a
            // row changes at most twice (taken over, answered) before it decides.
            for _ in 0..4 {
                let inserted = diesel::insert_into(idempotency_keys::table)
                    .values((
                        idempotency_keys::team_id.eq(DbUuid::of(claim.team)),
                        idempotency_keys::key.eq(claim.key.as_str()),
                        claim_values!(claim),
                    ))
                    .on_conflict_do_nothing()
                    .execute(conn)
                    .await
                    .or_store()?;
                if inserted == 1 {
                    return Ok(Claimed::Granted);
                }
                let Some(row): Option<KeyRow> = the_key!(claim)
                    .select((
                        idempotency_keys::fingerprint,
                        idempotency_keys::claimed_at,
                        idempotency_keys::lease_until,
                        idempotency_keys::expires_at,
                        idempotency_keys::status,
                        idempotency_keys::headers,
                        idempotency_keys::body,
                    ))
                    .first(conn)
                    .await
                    .optional()
                    .or_store()?
                else {
                    continue; // purged in between: insert again
                };
                if !row.is_free_at(claim.at) {
                    if row.fingerprint != claim.fingerprint.0 {
                        return Ok(Claimed::Mismatch);
                    }
                    return Ok(row.answer()?.map_or(Claimed::InFlight, Claimed::Answered));
                }
                let taken =
                    diesel::update(the_key!(claim).filter(idempotency_keys::claimed_at.eq(row.claimed_at)))
                        .set((
                            claim_values!(claim),
                            idempotency_keys::status.eq(None::<i32>),
                            idempotency_keys::headers.eq(None::<String>),
                            idempotency_keys::body.eq(None::<Vec<u8>>),
                        ))
                        .execute(conn)
                        .await
                        .or_store()?;
                if taken == 1 {
                    return Ok(Claimed::Granted);
                }
            }
            Err(StoreError::Unexpected(anyhow::anyhow!("idempotency key claim kept losing races")))
        })
    }

    #[tracing::instrument(skip_all)]
    async fn answer(&self, claim: &KeyClaim, response: &KeptResponse) -> Result<(), StoreError> {
        db_run!(self, |conn| {
            diesel::update(held_unanswered!(claim))
                .set((
                    idempotency_keys::status.eq(i32::from(response.status)),
                    idempotency_keys::headers.eq(header_lines(&response.headers)),
                    idempotency_keys::body.eq(&response.body),
                ))
                .execute(conn)
                .await
                .or_store()?;
            Ok(())
        })
    }

    #[tracing::instrument(skip_all)]
    async fn release(&self, claim: &KeyClaim) -> Result<(), StoreError> {
        db_run!(self, |conn| {
            diesel::delete(held_unanswered!(claim)).execute(conn).await.or_store()?;
            Ok(())
        })
    }

    #[tracing::instrument(skip_all)]
    async fn purge_idempotency_keys(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        db_run!(self, |conn| {
            let purged = diesel::delete(idempotency_keys::table.filter(idempotency_keys::expires_at.le(now)))
                .execute(conn)
                .await
                .or_store()?;
            Ok(purged as u64)
        })
    }
}
