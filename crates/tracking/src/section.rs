//! Sections: parts of a project that time entries can be filed under.

use accounts::TeamId;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError, define_id};

use crate::{DeleteError, ProjectId, Title};

define_id!(
    /// Identifies a section of a project.
    SectionId
);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub id: SectionId,
    pub team_id: TeamId,
    /// A section belongs to one project for good.
    pub project_id: ProjectId,
    pub title: Title,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Section {
    pub fn new(team_id: TeamId, project_id: ProjectId, title: Title, now: DateTime<Utc>) -> Self {
        Self { id: SectionId::generate(), team_id, project_id, title, created_at: now, updated_at: now }
    }
}

/// Puts sections in listing order: by title, case-insensitively, then by id.
pub fn sort_for_listing(sections: &mut [Section]) {
    crate::sort_by_title(sections, |s| (&s.title, s.id));
}

#[derive(Debug, thiserror::Error)]
pub enum CreateSectionError {
    #[error("project not found")]
    ProjectNotFound,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of sections, scoped to a team like every port.
#[async_trait]
pub trait SectionRepository: Send + Sync {
    /// The sections of one project of the team, in [`sort_for_listing`] order.
    async fn list_sections(&self, team: TeamId, project: ProjectId) -> Result<Vec<Section>, StoreError>;

    async fn get_section(&self, team: TeamId, id: SectionId) -> Result<Option<Section>, StoreError>;

    /// MUST return `ProjectNotFound` when the section's project is not the team's.
    async fn create_section(&self, section: &Section) -> Result<(), CreateSectionError>;

    /// `None` when the section is not the team's.
    async fn rename_section(
        &self,
        team: TeamId,
        id: SectionId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Section>, StoreError>;

    /// MUST return `HasTimeEntries`, deleting nothing, while any time entry is filed under
    /// the section.
    async fn delete_section(&self, team: TeamId, id: SectionId) -> Result<(), DeleteError>;
}
