//! How each team numbers its documents over diesel: its patterns, and the counts of its
//! series, each a row whose lock keeps it gapless.

use accounts::TeamId;
use async_trait::async_trait;
use billing::NumberingRepository;
use billing::numbering::{Numbering, NumberingChange, NumberingPattern, Series};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, RunQueryDsl};
use kernel::StoreError;

use crate::types::DbUuid;
use crate::{OrStoreError, SqlStore, corrupt, db_run};

/// A stored pattern, checked again.
pub(crate) fn pattern_of(text: &str) -> Result<NumberingPattern, StoreError> {
    NumberingPattern::parse(text).map_err(|e| corrupt("numbering pattern", e))
}

/// The number the team's next document of `$series` issued at `$issue_date` takes, inside
/// the transaction of `$conn` (whose error converts from `diesel`'s and from a
/// `StoreError`): the pattern the team has now, and the next counter of the count it
/// takes, whose row stays locked until the transaction ends.
macro_rules! next_number {
    ($conn:ident, $team:expr, $series:expr, $issue_date:expr) => {{
        let series: billing::numbering::Series = $series;
        let issue_date: chrono::DateTime<chrono::Utc> = $issue_date;
        let stored: Option<String> = numbering_patterns::table
            .filter(numbering_patterns::team_id.eq(DbUuid::of($team)))
            .filter(numbering_patterns::series.eq(series.key()))
            .select(numbering_patterns::pattern)
            .first($conn)
            .await
            .optional()?;
        let pattern = match stored {
            Some(text) => {
                $crate::numbering::pattern_of(text.as_str()).map_err(|e| TxError::Refused(e.into()))?
            }
            None => series.default_pattern(),
        };
        let counter: i32 = diesel::insert_into(numbering_counts::table)
            .values((
                numbering_counts::team_id.eq(DbUuid::of($team)),
                numbering_counts::series.eq(series.key()),
                numbering_counts::year.eq(pattern.count_for(issue_date).key()),
                numbering_counts::last_counter.eq(1),
            ))
            .on_conflict((numbering_counts::team_id, numbering_counts::series, numbering_counts::year))
            .do_update()
            .set(numbering_counts::last_counter.eq(numbering_counts::last_counter + 1))
            .returning(numbering_counts::last_counter)
            .get_result($conn)
            .await?;
        let Some(counter) = u32::try_from(counter).ok() else {
            return Err(TxError::Refused($crate::corrupt("number counter", counter).into()));
        };
        pattern.number(counter, issue_date)
    }};
}
pub(crate) use next_number;

#[async_trait]
impl NumberingRepository for SqlStore {
    async fn numbering(&self, team: TeamId) -> Result<Numbering, StoreError> {
        let rows: Vec<(String, String)> = db_run!(self, |conn| numbering_patterns::table
            .filter(numbering_patterns::team_id.eq(DbUuid::of(team)))
            .select((numbering_patterns::series, numbering_patterns::pattern))
            .load(conn)
            .await
            .or_store()?);
        let mut numbering = Numbering::default();
        for (series, pattern) in rows {
            let series = Series::ALL
                .into_iter()
                .find(|s| s.key() == series)
                .ok_or_else(|| corrupt("numbering series", &series))?;
            numbering.set(series, pattern_of(&pattern)?);
        }
        Ok(numbering)
    }

    async fn set_numbering(&self, team: TeamId, change: &NumberingChange) -> Result<(), StoreError> {
        db_run!(self, |conn| conn
            .transaction(async |conn| {
                for (series, pattern) in change.patterns() {
                    diesel::insert_into(numbering_patterns::table)
                        .values((
                            numbering_patterns::team_id.eq(DbUuid::of(team)),
                            numbering_patterns::series.eq(series.key()),
                            numbering_patterns::pattern.eq(pattern.as_str()),
                        ))
                        .on_conflict((numbering_patterns::team_id, numbering_patterns::series))
                        .do_update()
                        .set(numbering_patterns::pattern.eq(pattern.as_str()))
                        .execute(conn)
                        .await?;
                }
                Ok::<_, diesel::result::Error>(())
            })
            .await
            .or_store())
    }
}
