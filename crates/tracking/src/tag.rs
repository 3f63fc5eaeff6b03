//! Tags: labels put on time entries.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError, define_id};

use crate::{DeleteError, Title};

define_id!(
    /// Identifies a tag of a team.
    TagId
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag {
    pub id: TagId,
    pub team_id: TeamId,
    pub title: Title,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Tag {
    pub fn new(team_id: TeamId, title: Title, now: DateTime<Utc>) -> Self {
        Self { id: TagId::generate(), team_id, title, created_at: now, updated_at: now }
    }
}

/// Puts tags in listing order: by title, case-insensitively, then by id.
pub fn sort_for_listing(tags: &mut [Tag]) {
    crate::sort_by_title(tags, |t| (&t.title, t.id));
}

/// Storage of tags. Every method is scoped to a team; another team's tag is
/// indistinguishable from a missing one.
#[async_trait]
pub trait TagRepository: Send + Sync {
    /// The team's tags in [`sort_for_listing`] order.
    async fn list_tags(&self, team: TeamId) -> Result<Vec<Tag>, StoreError>;

    /// Those of `ids` that are tags of the team, in any order.
    async fn find_tags(&self, team: TeamId, ids: &[TagId]) -> Result<Vec<Tag>, StoreError>;

    async fn create_tag(&self, tag: &Tag) -> Result<(), StoreError>;

    /// Renames the tag; every entry carrying it shows the new title. `None` when the tag is
    /// not the team's.
    async fn rename_tag(
        &self,
        team: TeamId,
        id: TagId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Tag>, StoreError>;

    /// Deletes the tag and takes it off every entry carrying it. MUST return `NotFound`
    /// when the tag is not the team's.
    async fn delete_tag(&self, team: TeamId, id: TagId) -> Result<(), DeleteError>;
}
