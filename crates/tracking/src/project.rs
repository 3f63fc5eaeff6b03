//! Projects: what time is logged against, with an optional code and a status.

use accounts::TeamId;
use async_trait::async_trait;
use billing::ClientId;
use billing::money::{Decimal, UNIT_PRICE};
use chrono::{DateTime, Utc};
use kernel::{Id, InvalidValue, SearchText, StoreError, Words, define_id};

use crate::{DeleteError, ProjectCode, Title};

define_id!(
    /// Identifies a project of a team.
    ProjectId
);

/// Where a project stands. Set directly by an update; any status may follow any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProjectStatus {
    Pending,
    /// The status of a new project.
    #[default]
    Active,
    Completed,
    /// No time may be logged on an archived project.
    Archived,
}

kernel::words!(ProjectStatus {
    Pending => "PENDING",
    Active => "ACTIVE",
    Completed => "COMPLETED",
    Archived => "ARCHIVED",
});

impl ProjectStatus {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::parse_word(text)
    }

    pub fn accepts_time(self) -> bool {
        self != Self::Archived
    }
}

/// What an hour of a project's time is billed at, in the team's currency. It becomes the
/// unit price of the invoice line billing that time, so it keeps a unit price's bounds
/// ([`billing::money::UNIT_PRICE`]: 0 to 10¹², at most 6 decimals).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HourlyRate(Decimal);

impl HourlyRate {
    pub fn parse(value: Decimal) -> Result<Self, InvalidValue> {
        UNIT_PRICE.check(value).map(Self)
    }

    pub fn amount(self) -> Decimal {
        self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: ProjectId,
    pub team_id: TeamId,
    pub title: Title,
    /// Unique in the team when present.
    pub code: Option<ProjectCode>,
    pub status: ProjectStatus,
    /// What its time is billed at; `None` for no rate.
    pub rate: Option<HourlyRate>,
    /// The client its work is for: only that client's invoices bill its time. `None` for
    /// a project of no client in particular, whose time any client's invoice may bill.
    pub client_id: Option<ClientId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Project {
    pub fn new(team_id: TeamId, title: Title, code: Option<ProjectCode>, now: DateTime<Utc>) -> Self {
        Self {
            id: ProjectId::generate(),
            team_id,
            title,
            code,
            status: ProjectStatus::default(),
            rate: None,
            client_id: None,
            created_at: now,
            updated_at: now,
        }
    }

    /// The project billed at `rate`.
    #[must_use]
    pub fn with_rate(self, rate: Option<HourlyRate>) -> Self {
        Self { rate, ..self }
    }

    /// The project of `client`'s work (or of no client in particular, for `None`).
    #[must_use]
    pub fn for_client(self, client_id: Option<ClientId>) -> Self {
        Self { client_id, ..self }
    }

    /// Whether an invoice of `client` may bill the project's time: the project is that
    /// client's, or, unless `client_projects_only`, no client's in particular. An invoice
    /// of a client made with it (`None`) has no project of its own yet.
    pub fn billable_for(&self, client: Option<ClientId>, client_projects_only: bool) -> bool {
        match self.client_id {
            Some(own) => client == Some(own),
            None => !client_projects_only,
        }
    }

    /// Whether a search for `text` finds the project: in its title or its code.
    pub fn is_found_by(&self, text: &SearchText) -> bool {
        text.found_in(self.title.as_str())
            || self.code.as_ref().is_some_and(|code| text.found_in(code.as_str()))
    }

    /// The project with `changes` applied.
    #[must_use]
    pub fn changed(self, changes: &ProjectChanges, now: DateTime<Utc>) -> Self {
        Self {
            title: changes.title.clone().unwrap_or(self.title),
            code: changes.code.clone().unwrap_or(self.code),
            status: changes.status.unwrap_or(self.status),
            rate: changes.rate.unwrap_or(self.rate),
            client_id: changes.client_id.unwrap_or(self.client_id),
            updated_at: now,
            ..self
        }
    }
}

/// An update of a project: `None` leaves a field as it is; `code: Some(None)` removes the
/// code, `rate: Some(None)` the rate, `client_id: Some(None)` the client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectChanges {
    pub title: Option<Title>,
    pub code: Option<Option<ProjectCode>>,
    pub status: Option<ProjectStatus>,
    pub rate: Option<Option<HourlyRate>>,
    pub client_id: Option<Option<ClientId>>,
}

/// Puts projects in listing order: by title, case-insensitively, then by id.
pub fn sort_for_listing(projects: &mut [Project]) {
    crate::sort_by_title(projects, |p| (&p.title, p.id));
}

#[derive(Debug, thiserror::Error)]
pub enum SaveProjectError {
    #[error("project not found")]
    NotFound,
    #[error("another project of the team has this code")]
    CodeTaken,
    /// The client it is to be filed under is not the team's.
    #[error("no such client in the team")]
    UnknownClient,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of projects, scoped to a team like every port.
#[async_trait]
pub trait ProjectRepository: Send + Sync {
    /// The team's projects in [`sort_for_listing`] order.
    async fn list_projects(&self, team: TeamId) -> Result<Vec<Project>, StoreError>;

    async fn get_project(&self, team: TeamId, id: ProjectId) -> Result<Option<Project>, StoreError>;

    /// MUST return `CodeTaken` when another project of the team has the same code, and
    /// `UnknownClient` when its client is not one of the team's.
    async fn create_project(&self, project: &Project) -> Result<(), SaveProjectError>;

    /// Applies `changes` in one step. MUST return `NotFound` when the project is not the
    /// team's, and `CodeTaken` and `UnknownClient` as [`ProjectRepository::create_project`]
    /// does.
    async fn update_project(
        &self,
        team: TeamId,
        id: ProjectId,
        changes: &ProjectChanges,
        now: DateTime<Utc>,
    ) -> Result<Project, SaveProjectError>;

    /// Deletes the project with its sections. MUST return `HasTimeEntries`, deleting
    /// nothing, while any time entry refers to the project.
    async fn delete_project(&self, team: TeamId, id: ProjectId) -> Result<(), DeleteError>;
}

#[cfg(test)]
mod tests {
    use accounts::TeamId;
    use chrono::{TimeDelta, Utc};
    use kernel::Id;

    use super::*;

    #[test]
    fn statuses_round_trip_and_only_archived_refuses_time() {
        for &status in ProjectStatus::ALL {
            assert_eq!(ProjectStatus::parse(status.as_str()), Ok(status));
            assert_eq!(status.accepts_time(), status != ProjectStatus::Archived);
        }
        assert!(ProjectStatus::parse("archived").is_err());
        assert_eq!(ProjectStatus::default(), ProjectStatus::Active);
    }

    #[test]
    fn changes_touch_only_what_they_name() {
        let now = Utc::now();
        let code = ProjectCode::parse("ACME").ok();
        let project = Project::new(TeamId::generate(), Title::parse("Site").unwrap(), code.clone(), now);
        let later = now + TimeDelta::seconds(1);
        let archived = project
            .clone()
            .changed(&ProjectChanges { status: Some(ProjectStatus::Archived), ..Default::default() }, later);
        assert_eq!((archived.title.as_str(), &archived.code), ("Site", &code));
        assert_eq!(
            (archived.status, archived.updated_at, archived.created_at),
            (ProjectStatus::Archived, later, now)
        );
        let uncoded = project.changed(&ProjectChanges { code: Some(None), ..Default::default() }, later);
        assert_eq!((&uncoded.code, uncoded.status, uncoded.rate), (&None, ProjectStatus::Active, None));
        let rate = HourlyRate::parse(Decimal::new(9550, 2)).ok();
        let rated = uncoded.changed(&ProjectChanges { rate: Some(rate), ..Default::default() }, later);
        assert_eq!(rated.rate.map(HourlyRate::amount), Some(Decimal::new(9550, 2)));
        let unrated = rated.changed(&ProjectChanges { rate: Some(None), ..Default::default() }, later);
        assert_eq!(unrated.rate, None);
    }

    #[test]
    fn only_the_clients_invoices_bill_its_projects() {
        let (acme, globex) = (ClientId::generate(), ClientId::generate());
        let project = Project::new(TeamId::generate(), Title::parse("Site").unwrap(), None, Utc::now());
        let acmes = project.clone().for_client(Some(acme));
        assert!(acmes.billable_for(Some(acme), false) && acmes.billable_for(Some(acme), true));
        assert!(!acmes.billable_for(Some(globex), false) && !acmes.billable_for(None, false));
        assert!(project.billable_for(Some(globex), false) && project.billable_for(None, false));
        assert!(!project.billable_for(Some(globex), true));
        let moved =
            acmes.changed(&ProjectChanges { client_id: Some(None), ..Default::default() }, Utc::now());
        assert_eq!(moved.client_id, None);
    }

    #[test]
    fn rates_keep_a_unit_price_bounds() {
        assert!(HourlyRate::parse(Decimal::ZERO).is_ok());
        assert_eq!(HourlyRate::parse(Decimal::new(-1, 0)).unwrap_err().0, "must be at least 0");
        assert_eq!(
            HourlyRate::parse(Decimal::new(1, 7)).unwrap_err().0,
            "must have at most 6 decimal places"
        );
    }
}
