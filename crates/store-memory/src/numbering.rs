//! How each team numbers its documents, and the counts its series have reached.

use accounts::TeamId;
use async_trait::async_trait;
use billing::NumberingRepository;
use billing::numbering::{DocumentNumber, NumberTaken, Numbering, NumberingChange, Series};
use chrono::{DateTime, Utc};
use kernel::StoreError;

use crate::{MemoryStore, State};

/// A count of a team's series: the year's for a yearly pattern (see
/// [`billing::numbering::Count`]).
pub(crate) type CountKey = (TeamId, Series, i32);

impl State {
    /// The number the team's next document of `series` issued at `issue_date` takes, and
    /// the count to [`State::counted`] once it is kept; refused when a document of the
    /// series has that number already (`taken` tells).
    pub(crate) fn next_number(
        &self,
        team: TeamId,
        series: Series,
        issue_date: DateTime<Utc>,
        taken: impl Fn(&DocumentNumber) -> bool,
    ) -> Result<(DocumentNumber, CountKey, u32), NumberTaken> {
        let numbering = self.numbering.get(&team).cloned().unwrap_or_default();
        let pattern = numbering.of(series);
        let key = (team, series, pattern.count_for(issue_date).key());
        let counter = self.counts.get(&key).map_or(1, |last| last.saturating_add(1));
        let number = pattern.number(counter, issue_date);
        if taken(&number) {
            return Err(NumberTaken { number });
        }
        Ok((number, key, counter))
    }

    /// Records that `key` reached `counter`.
    pub(crate) fn counted(&mut self, key: CountKey, counter: u32) {
        self.counts.insert(key, counter);
    }
}

#[async_trait]
impl NumberingRepository for MemoryStore {
    async fn numbering(&self, team: TeamId) -> Result<Numbering, StoreError> {
        Ok(self.state().numbering.get(&team).cloned().unwrap_or_default())
    }

    async fn set_numbering(&self, team: TeamId, change: &NumberingChange) -> Result<(), StoreError> {
        let mut state = self.state();
        let numbering = state.numbering.remove(&team).unwrap_or_default();
        state.numbering.insert(team, change.applied_to(numbering));
        Ok(())
    }
}
