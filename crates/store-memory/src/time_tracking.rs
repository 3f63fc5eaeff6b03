//! The tracking ports in memory. Entries keep their tag ids; titles are looked up on
//! every read, so a renamed tag shows its new title everywhere, as in the SQL adapter.

use std::collections::HashMap;

use accounts::{TeamId, UserId};
use async_trait::async_trait;
use billing::money::Decimal;
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError};
use tracking::{
    CreateSectionError, DeleteError, EntryFilter, HourlyRate, Project, ProjectChanges, ProjectId,
    ProjectRepository, ReportGroupBy, ReportQuery, ReportRow, RunningTimer, SaveEntryError, SaveProjectError,
    Section, SectionId, SectionRepository, StartTimerError, StopTimerError, Tag, TagId, TagRef,
    TagRepository, TimeEntry, TimeEntryId, TimeEntryRepository, TimerRepository, Title,
};

use crate::{MemoryStore, State};

impl State {
    pub(crate) fn bump_revision(&mut self, team: TeamId) {
        *self.revisions.entry(team).or_default() += 1;
    }

    fn project(&self, team: TeamId, id: ProjectId) -> Option<&Project> {
        self.projects.iter().find(|p| p.team_id == team && p.id == id)
    }

    fn section(&self, team: TeamId, id: SectionId) -> Option<&Section> {
        self.sections.iter().find(|s| s.team_id == team && s.id == id)
    }

    fn tag(&self, team: TeamId, id: TagId) -> Option<&Tag> {
        self.tags.iter().find(|t| t.team_id == team && t.id == id)
    }

    /// The entry as a read shows it: tags with their current titles, in order.
    fn shown(&self, entry: &TimeEntry) -> TimeEntry {
        TimeEntry { tags: self.current_tags(entry.team_id, &entry.tags), ..entry.clone() }
    }

    /// `tags` that still exist, with their current titles, in order.
    fn current_tags(&self, team: TeamId, tags: &[TagRef]) -> Vec<TagRef> {
        let mut current: Vec<TagRef> = tags
            .iter()
            .filter_map(|t| self.tag(team, t.id))
            .map(|t| TagRef { id: t.id, title: t.title.clone() })
            .collect();
        TimeEntry::order_tags(&mut current);
        current
    }

    /// Whether time (an entry or a running timer) is filed under the project or section.
    fn has_time(&self, team: TeamId, project: Option<ProjectId>, section: Option<SectionId>) -> bool {
        let on = |p: Option<ProjectId>, s: Option<SectionId>| {
            project.is_some_and(|id| p == Some(id)) || section.is_some_and(|id| s == Some(id))
        };
        self.entries.iter().any(|e| e.team_id == team && on(e.project_id, e.section_id))
            || self.timers.iter().any(|t| t.team_id == team && on(t.project_id, t.section_id))
    }

    /// What the SQL adapter's foreign keys check.
    fn references_hold(&self, entry: &TimeEntry) -> bool {
        let team = entry.team_id;
        let user = self.users.iter().any(|u| u.team_id == team && u.id == entry.user_id);
        let project = entry.project_id.is_none_or(|p| self.project(team, p).is_some());
        let section = match (entry.section_id, entry.project_id) {
            (None, _) => true,
            (Some(s), project) => self.section(team, s).is_some_and(|s| Some(s.project_id) == project),
        };
        let tags = entry.tags.iter().all(|t| self.tag(team, t.id).is_some());
        user && project && section && tags
    }

    fn code_taken(&self, project: &Project) -> bool {
        project.code.as_ref().is_some_and(|code| {
            self.projects
                .iter()
                .any(|p| p.team_id == project.team_id && p.id != project.id && p.code.as_ref() == Some(code))
        })
    }

    /// Whether the project's client, if any, is one of its team's.
    fn client_known(&self, project: &Project) -> bool {
        project
            .client_id
            .is_none_or(|id| self.clients.iter().any(|c| c.team_id == project.team_id && c.id == id))
    }
}

#[async_trait]
impl TagRepository for MemoryStore {
    async fn list_tags(&self, team: TeamId) -> Result<Vec<Tag>, StoreError> {
        let mut tags: Vec<Tag> = self.state().tags.iter().filter(|t| t.team_id == team).cloned().collect();
        tracking::tag::sort_for_listing(&mut tags);
        Ok(tags)
    }

    async fn find_tags(&self, team: TeamId, ids: &[TagId]) -> Result<Vec<Tag>, StoreError> {
        Ok(self.state().tags.iter().filter(|t| t.team_id == team && ids.contains(&t.id)).cloned().collect())
    }

    async fn create_tag(&self, tag: &Tag) -> Result<(), StoreError> {
        self.state().tags.push(tag.clone());
        Ok(())
    }

    async fn rename_tag(
        &self,
        team: TeamId,
        id: TagId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Tag>, StoreError> {
        let mut state = self.state();
        let tag = state.tags.iter_mut().find(|t| t.team_id == team && t.id == id).map(|tag| {
            tag.title = title.clone();
            tag.updated_at = now;
            tag.clone()
        });
        if tag.is_some() {
            state.bump_revision(team);
        }
        Ok(tag)
    }

    async fn delete_tag(&self, team: TeamId, id: TagId) -> Result<(), DeleteError> {
        let mut state = self.state();
        if state.tag(team, id).is_none() {
            return Err(DeleteError::NotFound);
        }
        state.tags.retain(|t| !(t.team_id == team && t.id == id));
        for entry in state.entries.iter_mut().filter(|e| e.team_id == team) {
            entry.tags.retain(|t| t.id != id);
        }
        state.bump_revision(team);
        Ok(())
    }
}

#[async_trait]
impl ProjectRepository for MemoryStore {
    async fn list_projects(&self, team: TeamId) -> Result<Vec<Project>, StoreError> {
        let mut projects: Vec<Project> =
            self.state().projects.iter().filter(|p| p.team_id == team).cloned().collect();
        tracking::project::sort_for_listing(&mut projects);
        Ok(projects)
    }

    async fn get_project(&self, team: TeamId, id: ProjectId) -> Result<Option<Project>, StoreError> {
        Ok(self.state().project(team, id).cloned())
    }

    async fn create_project(&self, project: &Project) -> Result<(), SaveProjectError> {
        let mut state = self.state();
        if state.code_taken(project) {
            return Err(SaveProjectError::CodeTaken);
        }
        if !state.client_known(project) {
            return Err(SaveProjectError::UnknownClient);
        }
        state.projects.push(project.clone());
        Ok(())
    }

    async fn update_project(
        &self,
        team: TeamId,
        id: ProjectId,
        changes: &ProjectChanges,
        now: DateTime<Utc>,
    ) -> Result<Project, SaveProjectError> {
        let mut state = self.state();
        let updated =
            state.project(team, id).ok_or(SaveProjectError::NotFound)?.clone().changed(changes, now);
        if state.code_taken(&updated) {
            return Err(SaveProjectError::CodeTaken);
        }
        if !state.client_known(&updated) {
            return Err(SaveProjectError::UnknownClient);
        }
        if let Some(project) = state.projects.iter_mut().find(|p| p.team_id == team && p.id == id) {
            *project = updated.clone();
        }
        Ok(updated)
    }

    async fn delete_project(&self, team: TeamId, id: ProjectId) -> Result<(), DeleteError> {
        let mut state = self.state();
        if state.project(team, id).is_none() {
            return Err(DeleteError::NotFound);
        }
        if state.has_time(team, Some(id), None) {
            return Err(DeleteError::HasTimeEntries);
        }
        state.projects.retain(|p| !(p.team_id == team && p.id == id));
        state.sections.retain(|s| !(s.team_id == team && s.project_id == id));
        Ok(())
    }
}

#[async_trait]
impl SectionRepository for MemoryStore {
    async fn list_sections(&self, team: TeamId, project: ProjectId) -> Result<Vec<Section>, StoreError> {
        let mut sections: Vec<Section> = self
            .state()
            .sections
            .iter()
            .filter(|s| s.team_id == team && s.project_id == project)
            .cloned()
            .collect();
        tracking::section::sort_for_listing(&mut sections);
        Ok(sections)
    }

    async fn get_section(&self, team: TeamId, id: SectionId) -> Result<Option<Section>, StoreError> {
        Ok(self.state().section(team, id).cloned())
    }

    async fn create_section(&self, section: &Section) -> Result<(), CreateSectionError> {
        let mut state = self.state();
        if state.project(section.team_id, section.project_id).is_none() {
            return Err(CreateSectionError::ProjectNotFound);
        }
        state.sections.push(section.clone());
        Ok(())
    }

    async fn rename_section(
        &self,
        team: TeamId,
        id: SectionId,
        title: &Title,
        now: DateTime<Utc>,
    ) -> Result<Option<Section>, StoreError> {
        let mut state = self.state();
        let section = state.sections.iter_mut().find(|s| s.team_id == team && s.id == id);
        Ok(section.map(|section| {
            section.title = title.clone();
            section.updated_at = now;
            section.clone()
        }))
    }

    async fn delete_section(&self, team: TeamId, id: SectionId) -> Result<(), DeleteError> {
        let mut state = self.state();
        if state.section(team, id).is_none() {
            return Err(DeleteError::NotFound);
        }
        if state.has_time(team, None, Some(id)) {
            return Err(DeleteError::HasTimeEntries);
        }
        state.sections.retain(|s| !(s.team_id == team && s.id == id));
        Ok(())
    }
}

#[async_trait]
impl TimeEntryRepository for MemoryStore {
    async fn list_entries(&self, team: TeamId, filter: &EntryFilter) -> Result<Vec<TimeEntry>, StoreError> {
        let state = self.state();
        let mut entries: Vec<TimeEntry> = state
            .entries
            .iter()
            .filter(|e| e.team_id == team && filter.matches(e))
            .map(|e| state.shown(e))
            .collect();
        tracking::entry::sort_for_listing(&mut entries);
        entries.truncate(filter.limit.map_or(usize::MAX, |limit| limit as usize));
        Ok(entries)
    }

    async fn listing_revision(&self, team: TeamId) -> Result<u64, StoreError> {
        Ok(self.state().revisions.get(&team).copied().unwrap_or(0))
    }

    async fn report(&self, team: TeamId, query: &ReportQuery) -> Result<Vec<ReportRow>, StoreError> {
        let state = self.state();
        let filter = EntryFilter { user: query.user, ..EntryFilter::within(query.period) };
        let rates: HashMap<ProjectId, Option<HourlyRate>> =
            state.projects.iter().filter(|p| p.team_id == team).map(|p| (p.id, p.rate)).collect();
        let mut rows: HashMap<(Option<String>, Option<Decimal>), ReportRow> = HashMap::new();
        for entry in state.entries.iter().filter(|e| e.team_id == team && filter.matches(e)) {
            let rate = entry.project_id.and_then(|id| rates.get(&id).copied().flatten());
            let keys: Vec<Option<String>> = match query.group_by {
                ReportGroupBy::Project => vec![entry.project_id.map(|id| id.to_string())],
                ReportGroupBy::Task => vec![Some(entry.task_name.to_string())],
                ReportGroupBy::User => vec![Some(entry.user_id.to_string())],
                ReportGroupBy::Tag if entry.tags.is_empty() => vec![None],
                ReportGroupBy::Tag => entry.tags.iter().map(|tag| Some(tag.id.to_string())).collect(),
                ReportGroupBy::Day => vec![Some(entry.date.format("%Y-%m-%d").to_string())],
            };
            let seconds = u128::from(entry.duration.get());
            for key in keys {
                let row = rows.entry((key.clone(), rate.map(HourlyRate::amount))).or_insert(ReportRow {
                    key,
                    rate,
                    seconds: 0,
                    billable_seconds: 0,
                    invoiced_seconds: 0,
                });
                row.seconds += seconds;
                row.billable_seconds += if entry.billable { seconds } else { 0 };
                row.invoiced_seconds += if entry.invoice_id.is_some() { seconds } else { 0 };
            }
        }
        Ok(rows.into_values().collect())
    }

    async fn get_entry(&self, team: TeamId, id: TimeEntryId) -> Result<Option<TimeEntry>, StoreError> {
        let state = self.state();
        Ok(state.entries.iter().find(|e| e.team_id == team && e.id == id).map(|e| state.shown(e)))
    }

    async fn create_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError> {
        let events = notify::raise::time_entry_created(entry).events(&*self.describe, entry.created_at);
        self.changed(|state| {
            if !state.references_hold(entry) {
                return Err(SaveEntryError::MissingReference);
            }
            state.entries.push(TimeEntry { invoice_id: None, ..entry.clone() });
            state.bump_revision(entry.team_id);
            state.record(events);
            Ok(())
        })
    }

    async fn replace_entry(&self, entry: &TimeEntry) -> Result<(), SaveEntryError> {
        let events = notify::raise::time_entry_updated(entry).events(&*self.describe, entry.updated_at);
        self.changed(|state| replace_entry(state, entry, events))
    }

    async fn delete_entry(
        &self,
        team: TeamId,
        id: TimeEntryId,
        at: DateTime<Utc>,
    ) -> Result<(), DeleteError> {
        let describe = self.describe.clone();
        self.changed(|state| {
            let Some(index) = state.entries.iter().position(|e| e.team_id == team && e.id == id) else {
                return Err(DeleteError::NotFound);
            };
            if state.entries[index].invoice_id.is_some() {
                return Err(DeleteError::Billed);
            }
            let gone = state.shown(&state.entries[index]);
            state.entries.remove(index);
            state.bump_revision(team);
            state.record(notify::raise::time_entry_deleted(&gone).events(&*describe, at));
            Ok(())
        })
    }
}

/// A change of `entry` under the lock, as `replace_entry` promises.
fn replace_entry(
    state: &mut State,
    entry: &TimeEntry,
    events: Vec<notify::NewEvent>,
) -> Result<(), SaveEntryError> {
    {
        let Some(index) = state.entries.iter().position(|e| e.team_id == entry.team_id && e.id == entry.id)
        else {
            return Err(SaveEntryError::NotFound);
        };
        if !state.references_hold(entry) {
            return Err(SaveEntryError::MissingReference);
        }
        if state.entries[index].invoice_id.is_some() {
            return Err(SaveEntryError::Billed);
        }
        // Like the SQL row, the creation time and the billing invoice stay as stored.
        let (created_at, invoice_id) = (state.entries[index].created_at, state.entries[index].invoice_id);
        state.entries[index] = TimeEntry { created_at, invoice_id, ..entry.clone() };
        state.bump_revision(entry.team_id);
        state.record(events);
        Ok(())
    }
}

#[async_trait]
impl TimerRepository for MemoryStore {
    async fn running_timer(&self, team: TeamId, user: UserId) -> Result<Option<RunningTimer>, StoreError> {
        let state = self.state();
        let timer = state.timers.iter().find(|t| t.team_id == team && t.user_id == user);
        Ok(timer.map(|t| RunningTimer { tags: state.current_tags(team, &t.tags), ..t.clone() }))
    }

    async fn start_timer(&self, timer: &RunningTimer) -> Result<(), StartTimerError> {
        let events = notify::raise::timer_started(timer).events(&*self.describe, timer.started_at);
        self.changed(|state| {
            if state.timers.iter().any(|t| t.team_id == timer.team_id && t.user_id == timer.user_id) {
                return Err(StartTimerError::AlreadyRunning);
            }
            // The checks of an entry filed the same way.
            let as_entry = timer.clone().into_entry(TimeEntryId::generate(), timer.started_at);
            if !state.references_hold(&as_entry) {
                return Err(StartTimerError::MissingReference);
            }
            state.timers.push(timer.clone());
            state.record(events);
            Ok(())
        })
    }

    async fn stop_timer(&self, timer: &RunningTimer, entry: &TimeEntry) -> Result<(), StopTimerError> {
        let events = notify::raise::timer_stopped(timer, entry).events(&*self.describe, entry.created_at);
        self.changed(|state| {
            let team = timer.team_id;
            let Some(index) = state.timers.iter().position(|t| t.team_id == team && t.id == timer.id) else {
                return Err(StopTimerError::NotRunning);
            };
            if !state.references_hold(entry) {
                return Err(StopTimerError::MissingReference);
            }
            state.timers.remove(index);
            state.entries.push(entry.clone());
            state.bump_revision(team);
            state.record(events);
            Ok(())
        })
    }

    async fn discard_timer(&self, timer: &RunningTimer, at: DateTime<Utc>) -> Result<(), StopTimerError> {
        let events = notify::raise::timer_stopped_unlogged(timer).events(&*self.describe, at);
        self.changed(|state| {
            let before = state.timers.len();
            state.timers.retain(|t| !(t.team_id == timer.team_id && t.id == timer.id));
            if state.timers.len() == before {
                return Err(StopTimerError::NotRunning);
            }
            state.record(events);
            Ok(())
        })
    }
}
