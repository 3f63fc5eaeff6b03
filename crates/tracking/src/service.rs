//! The time-entry use cases: the rules that need more than one entity (who the entry is
//! for, how its project, section and tags fit together) applied over the ports.
//!
//! The checks read before they write; storage enforces the same references with foreign
//! keys, so a reference deleted in between makes the write fail
//! ([`SaveEntryError::MissingReference`]) rather than leave a dangling entry.

use std::collections::{HashMap, HashSet};

use accounts::{AccountStore, TeamId, UserId};
use billing::invoice::LineInput;
use billing::service::{BillingError, InvoiceDraft};
use billing::store::{BillTo, TimeToBill};
use billing::{BillingStore, ClientId, Invoice, ServiceTime};
use chrono::{DateTime, Utc};
use kernel::{Id, StoreError};

use crate::invoicing::{
    GroupBy, NO_PROJECT, Rounding, SkippedEntry, TimeBillingRule, TimeLine, check_wanted, is_billable,
    time_lines,
};
use crate::report::{Report, ReportGroupBy, ReportQuery, report_groups};
use crate::{
    Actor, DeleteError, Description, DurationSeconds, EntryFilter, HourlyRate, Period, ProjectId,
    RunningTimer, SaveEntryError, SectionId, StartTimerError, StopTimerError, TagId, TagRef, TaskName,
    TimeEntry, TimeEntryId, TimerId, TrackStore,
};

/// Why a time-entry use case refused.
#[derive(Debug, thiserror::Error)]
pub enum TrackError {
    /// Input that breaks a rule of time entries.
    #[error(transparent)]
    Rule(#[from] EntryRule),
    /// The actor may not act for another user so.
    #[error(transparent)]
    Forbidden(#[from] NotAllowed),
    /// No such entry, or one the actor may not see.
    #[error("time entry not found")]
    NotFound,
    /// The actor has no running timer.
    #[error("no timer is running")]
    NoTimer,
    /// The write lost a race, or met a lock; nothing was written.
    #[error(transparent)]
    Conflict(#[from] TrackConflict),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A rule of time entries (and timers) that a request broke, in the domain's words; each
/// front end words it for its callers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryRule {
    #[error("a section needs its project: the project cannot be cleared while a section is set")]
    ProjectClearedBesideSection,
    #[error("no such user in the team")]
    UnknownUser,
    #[error("no such section in the team")]
    UnknownSection,
    /// A project other than the section's was given beside it.
    #[error("section {section} is in project {project}: give that project, or none")]
    NotTheSectionsProject { section: SectionId, project: ProjectId },
    #[error("no such project in the team")]
    UnknownProject,
    #[error("the project is archived; no time can be logged on it")]
    ArchivedProject,
    /// The tag at `index` of those given is not the team's.
    #[error("tag {index}: no such tag in the team")]
    UnknownTag { index: usize },
}

/// What only owners and admins may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotAllowed {
    #[error("only owners and admins may list another user's time")]
    ListOthersTime,
    #[error("only owners and admins may log or move time for another user")]
    ActForOthers,
}

/// Why a write changed nothing though its request was sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TrackConflict {
    #[error("a user, project, section or tag of the entry was deleted meanwhile; retry")]
    EntryReferenceGone,
    /// The entry is billed: locked until its invoice is deleted.
    #[error("the entry is billed and its time is locked; deleting the invoice releases it")]
    Billed,
    #[error("a timer is already running; stop it first")]
    TimerRunning,
    #[error("a project, section or tag of the timer was deleted meanwhile; retry")]
    TimerReferenceGone,
}

impl From<SaveEntryError> for TrackError {
    fn from(error: SaveEntryError) -> Self {
        match error {
            SaveEntryError::NotFound => Self::NotFound,
            SaveEntryError::MissingReference => TrackConflict::EntryReferenceGone.into(),
            SaveEntryError::Billed => TrackConflict::Billed.into(),
            SaveEntryError::Store(error) => Self::Store(error),
        }
    }
}

/// A new time entry as the caller gave it, each field valid on its own.
#[derive(Debug, Clone)]
pub struct EntryDraft {
    pub duration: DurationSeconds,
    pub task_name: TaskName,
    pub description: Option<Description>,
    pub date: DateTime<Utc>,
    /// Whose time; the actor's when `None`.
    pub user_id: Option<UserId>,
    pub project_id: Option<ProjectId>,
    pub section_id: Option<SectionId>,
    pub tags: Vec<TagId>,
    pub ai_generated: bool,
    pub billable: bool,
}

/// A timer to start, each field valid on its own. It measures the actor's time.
#[derive(Debug, Clone)]
pub struct TimerDraft {
    pub task_name: TaskName,
    pub description: Option<Description>,
    pub project_id: Option<ProjectId>,
    pub section_id: Option<SectionId>,
    pub tags: Vec<TagId>,
}

/// A partial update: `None` leaves a field as it is; `Some(None)` clears a nullable one.
#[derive(Debug, Clone, Default)]
pub struct EntryChanges {
    pub duration: Option<DurationSeconds>,
    pub task_name: Option<TaskName>,
    pub description: Option<Option<Description>>,
    pub date: Option<DateTime<Utc>>,
    pub user_id: Option<UserId>,
    pub project_id: Option<Option<ProjectId>>,
    pub section_id: Option<Option<SectionId>>,
    /// Replaces the whole set.
    pub tags: Option<Vec<TagId>>,
    pub billable: Option<bool>,
}

/// Which entries `actor` may list in `period` (`requested_user` narrows to one user), or why
/// it refuses. Pass it to [`crate::TimeEntryRepository::list_entries`]; callers that keep
/// copies of listings check [`crate::TimeEntryRepository::listing_revision`] first.
pub fn listing_filter(
    actor: &Actor,
    period: crate::Period,
    requested_user: Option<UserId>,
) -> Result<EntryFilter, TrackError> {
    let user = actor.listing_user(requested_user).map_err(|_| NotAllowed::ListOthersTime)?;
    Ok(EntryFilter { user, ..EntryFilter::within(period) })
}

/// One entry, if `actor` may see it.
pub async fn get_time(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
    id: TimeEntryId,
) -> Result<TimeEntry, TrackError> {
    let entry = store.get_entry(team, id).await?.ok_or(TrackError::NotFound)?;
    if actor.sees(&entry) { Ok(entry) } else { Err(TrackError::NotFound) }
}

/// Logs time: for the actor, or for `draft.user_id` when the actor may act for them.
pub async fn log_time(
    store: &dyn TrackStore,
    users: &dyn AccountStore,
    actor: &Actor,
    team: TeamId,
    draft: EntryDraft,
    now: DateTime<Utc>,
) -> Result<TimeEntry, TrackError> {
    let user_id = draft.user_id.unwrap_or(actor.user_id);
    check_user(users, actor, team, user_id).await?;
    let (project_id, section_id) = place(store, team, draft.project_id, draft.section_id).await?;
    let tags = resolve_tags(store, team, &draft.tags).await?;
    let entry = TimeEntry {
        id: TimeEntryId::generate(),
        team_id: team,
        user_id,
        duration: draft.duration,
        task_name: draft.task_name,
        description: draft.description,
        date: draft.date,
        project_id,
        section_id,
        tags,
        ai_generated: draft.ai_generated,
        billable: draft.billable,
        invoice_id: None,
        created_at: now,
        updated_at: now,
    };
    store.create_entry(&entry).await?;
    Ok(entry)
}

/// Changes the fields `changes` names of an entry the actor may see.
///
/// Moving an entry to another project leaves its section behind unless `changes` also
/// names a section of that project; clearing the project clears the section. The time of
/// an archived project is frozen: an entry that would end up on one is refused.
pub async fn change_time(
    store: &dyn TrackStore,
    users: &dyn AccountStore,
    actor: &Actor,
    team: TeamId,
    id: TimeEntryId,
    changes: EntryChanges,
    now: DateTime<Utc>,
) -> Result<TimeEntry, TrackError> {
    let entry = get_time(store, actor, team, id).await?;
    refuse_billed(&entry)?;
    let user_id = changes.user_id.unwrap_or(entry.user_id);
    if user_id != entry.user_id {
        check_user(users, actor, team, user_id).await?;
    }
    let (project_id, section_id) = match (changes.project_id, changes.section_id) {
        // A new section decides the project; a `projectId` beside it must agree.
        (None, Some(Some(section))) => (None, Some(section)),
        (Some(Some(project)), Some(Some(section))) => (Some(project), Some(section)),
        (Some(None), Some(Some(_))) => {
            return Err(EntryRule::ProjectClearedBesideSection.into());
        }
        (project, Some(None)) => (project.unwrap_or(entry.project_id), None),
        (Some(None), None) => (None, None),
        (Some(Some(project)), None) => {
            let section = match entry.section_id {
                Some(section) => store.get_section(team, section).await?.filter(|s| s.project_id == project),
                None => None,
            };
            (Some(project), section.map(|s| s.id))
        }
        (None, None) => (entry.project_id, entry.section_id),
    };
    let (project_id, section_id) = place(store, team, project_id, section_id).await?;
    let tags = match &changes.tags {
        Some(ids) => resolve_tags(store, team, ids).await?,
        None => entry.tags.clone(),
    };
    let updated = TimeEntry {
        user_id,
        duration: changes.duration.unwrap_or(entry.duration),
        task_name: changes.task_name.unwrap_or(entry.task_name.clone()),
        description: changes.description.unwrap_or(entry.description.clone()),
        date: changes.date.unwrap_or(entry.date),
        project_id,
        section_id,
        tags,
        billable: changes.billable.unwrap_or(entry.billable),
        updated_at: now,
        ..entry
    };
    store.replace_entry(&updated).await?;
    Ok(updated)
}

/// Deletes an entry the actor may see.
pub async fn delete_time(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
    id: TimeEntryId,
    now: DateTime<Utc>,
) -> Result<(), TrackError> {
    let entry = get_time(store, actor, team, id).await?;
    refuse_billed(&entry)?;
    store.delete_entry(team, id, now).await.map_err(|error| match error {
        DeleteError::NotFound | DeleteError::HasTimeEntries => TrackError::NotFound,
        DeleteError::Billed => TrackConflict::Billed.into(),
        DeleteError::Store(error) => TrackError::Store(error),
    })
}

/// Billed time is locked: its invoice shows it as it was billed.
fn refuse_billed(entry: &TimeEntry) -> Result<(), TrackError> {
    if entry.invoice_id.is_some() { Err(TrackConflict::Billed.into()) } else { Ok(()) }
}

/// Starts a timer for the actor, filed as a new entry would be (the section decides the
/// project, no archived project, tags of the team). A second running timer is refused.
pub async fn start_timer(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
    draft: TimerDraft,
    now: DateTime<Utc>,
) -> Result<RunningTimer, TrackError> {
    let (project_id, section_id) = place(store, team, draft.project_id, draft.section_id).await?;
    let tags = resolve_tags(store, team, &draft.tags).await?;
    let timer = RunningTimer {
        id: TimerId::generate(),
        team_id: team,
        user_id: actor.user_id,
        task_name: draft.task_name,
        description: draft.description,
        project_id,
        section_id,
        tags,
        started_at: now,
    };
    store.start_timer(&timer).await.map_err(|error| match error {
        StartTimerError::AlreadyRunning => TrackConflict::TimerRunning.into(),
        StartTimerError::MissingReference => TrackConflict::TimerReferenceGone.into(),
        StartTimerError::Store(error) => TrackError::Store(error),
    })?;
    Ok(timer)
}

/// The actor's running timer.
pub async fn running_timer(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
) -> Result<RunningTimer, TrackError> {
    store.running_timer(team, actor.user_id).await?.ok_or(TrackError::NoTimer)
}

/// Stops the actor's running timer into a time entry of the whole seconds it ran (at
/// least 1), dated at its start. The entry's rules hold at the stop: a timer whose
/// project was archived while it ran is refused, and stays running until discarded.
pub async fn stop_timer(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
    now: DateTime<Utc>,
) -> Result<TimeEntry, TrackError> {
    let timer = running_timer(store, actor, team).await?;
    place(store, team, timer.project_id, timer.section_id).await?;
    let entry = timer.clone().into_entry(TimeEntryId::generate(), now);
    store.stop_timer(&timer, &entry).await.map_err(timer_error)?;
    Ok(entry)
}

/// Why billing time refused.
#[derive(Debug, thiserror::Error)]
pub enum BillTimeError {
    /// The time to bill breaks a rule of billing time.
    #[error(transparent)]
    Rule(#[from] TimeBillingRule),
    /// The invoice made of it breaks a rule of invoices, or could not be made.
    #[error(transparent)]
    Invoice(#[from] BillingError),
}

impl From<StoreError> for BillTimeError {
    fn from(error: StoreError) -> Self {
        Self::Invoice(error.into())
    }
}

/// What to bill: the time logged on a span of days, and the invoice to make of it.
#[derive(Debug, Clone)]
pub struct TimeBilling {
    /// The days whose entries are billed, by each entry's `date`.
    pub days: Period,
    /// Only time on these projects; all of it (time on no project too) when `None`.
    pub projects: Option<Vec<ProjectId>>,
    pub group_by: GroupBy,
    /// Bills every line at this rate instead of its project's.
    pub rate: Option<HourlyRate>,
    pub rounding: Option<Rounding>,
    /// Only time on the client's own projects: none on projects of no client, nor on no
    /// project.
    pub client_projects_only: bool,
    /// The invoice's own fields; its lines and time entries are the billing's to fill.
    pub invoice: InvoiceDraft,
    /// Answers the invoice that would be made, and makes nothing.
    pub preview: bool,
}

/// The unbilled time an invoice bills.
#[derive(Debug, Clone)]
pub struct TimeToInvoice {
    /// The days whose entries are billed, by each entry's `date`.
    pub days: Period,
    /// Only time on these projects; all of it (time on no project too) when `None`.
    pub projects: Option<Vec<ProjectId>>,
    pub group_by: GroupBy,
    /// Bills every line at this rate instead of its project's.
    pub rate: Option<HourlyRate>,
    pub rounding: Option<Rounding>,
    /// Only this user's time; the team's when `None`.
    pub user: Option<UserId>,
    /// The client billed: time on another client's project is never billed. `None` for a
    /// client the invoice makes, which has no project yet.
    pub client: Option<ClientId>,
    /// Only time on the client's own projects: none on projects of no client, nor on no
    /// project.
    pub client_projects_only: bool,
}

/// What unbilled time comes to on an invoice.
#[derive(Debug, Clone)]
pub struct BillableTime {
    /// The invoice lines of the time.
    pub lines: Vec<LineInput>,
    /// The entries they bill, each as it was read, so that the invoice's transaction bills
    /// it only if it is unchanged.
    pub entries: Vec<TimeToBill>,
    /// The entries left out, which stay unbilled, and why.
    pub skipped: Vec<SkippedEntry>,
}

/// An invoice of time, and the entries it left out.
#[derive(Debug, Clone)]
pub struct BilledTime {
    pub invoice: Invoice,
    pub skipped: Vec<SkippedEntry>,
}

/// The invoice lines of the billable, not yet billed time `time` names, the entries they
/// bill, and those that cannot be billed.
pub async fn unbilled_time(
    tracking: &dyn TrackStore,
    team: TeamId,
    time: &TimeToInvoice,
) -> Result<BillableTime, BillTimeError> {
    let projects = tracking.list_projects(team).await?;
    let wanted: Option<HashSet<ProjectId>> = time.projects.as_ref().map(|ids| ids.iter().copied().collect());
    if let Some(wanted) = &time.projects {
        check_wanted(&projects, wanted, time.client, time.client_projects_only)?;
    }
    let billable_projects: HashSet<ProjectId> = projects
        .iter()
        .filter(|p| p.billable_for(time.client, time.client_projects_only))
        .map(|p| p.id)
        .collect();
    let filter = EntryFilter { user: time.user, ..EntryFilter::within(time.days) };
    let entries: Vec<TimeEntry> = tracking
        .list_entries(team, &filter)
        .await?
        .into_iter()
        .filter(is_billable)
        .filter(|entry| match entry.project_id {
            Some(project) => {
                billable_projects.contains(&project) && wanted.as_ref().is_none_or(|w| w.contains(&project))
            }
            None => wanted.is_none() && !time.client_projects_only,
        })
        .collect();
    let made = time_lines(&entries, &projects, time.group_by, time.rate, time.rounding)?;
    let left_out: HashSet<TimeEntryId> = made.skipped.iter().map(|skipped| skipped.id).collect();
    Ok(BillableTime {
        lines: made.lines.iter().map(TimeLine::line_input).collect(),
        entries: entries
            .iter()
            .filter(|entry| !left_out.contains(&entry.id))
            .map(|entry| TimeToBill { id: entry.id.as_uuid(), updated_at: entry.updated_at })
            .collect(),
        skipped: made.skipped,
    })
}

/// Makes one invoice of the billable, not yet billed time of `request.days`: one line per
/// group, each entry billed by the invoice in the invoice's own transaction, so that no
/// entry is billed twice however requests race. Members bill their own time; owners and
/// admins the team's. Entries that cannot be billed are left out and named.
pub async fn bill_time(
    tracking: &dyn TrackStore,
    billing: &dyn BillingStore,
    accounts: &dyn AccountStore,
    actor: &Actor,
    team: TeamId,
    request: TimeBilling,
    now: DateTime<Utc>,
) -> Result<BilledTime, BillTimeError> {
    // An exchange rate means a client in another currency, whose lines the projects'
    // rates (in the team's currency) cannot price.
    if request.invoice.exchange_rate.is_some() && request.rate.is_none() {
        return Err(TimeBillingRule::RateInClientCurrency.into());
    }
    let user = actor.billed_user();
    let time = TimeToInvoice {
        days: request.days,
        projects: request.projects,
        group_by: request.group_by,
        rate: request.rate,
        rounding: request.rounding,
        user,
        client: match &request.invoice.bill_to {
            BillTo::Existing(client) => Some(*client),
            BillTo::Inline { .. } => None,
        },
        client_projects_only: request.client_projects_only,
    };
    let time = unbilled_time(tracking, team, &time).await?;
    // Without a service time of its own, the invoice states the days it bills.
    let mut invoice = request.invoice;
    invoice.supply.service = invoice.supply.service.or_else(|| request.days.days().map(ServiceTime::Period));
    let draft = InvoiceDraft { line_items: time.lines, time_entries: time.entries, ..invoice };
    let invoice = if request.preview {
        billing::service::preview_invoice(billing, accounts, team, draft, now).await?
    } else {
        billing::service::create_invoice(billing, accounts, team, draft, now).await?
    };
    Ok(BilledTime { invoice, skipped: time.skipped })
}

/// Where the time of `period` went, grouped by `group_by`: the actor's own time, or, for
/// owners and admins, the team's (or `user`'s). Summed by storage; titled, priced in the
/// team's currency and ordered here.
pub async fn time_report(
    store: &dyn TrackStore,
    accounts: &dyn AccountStore,
    actor: &Actor,
    team: TeamId,
    query: ReportQuery,
) -> Result<Report, TrackError> {
    let query = ReportQuery { user: listing_filter(actor, query.period, query.user)?.user, ..query };
    let rows = store.report(team, &query).await?;
    let currency = accounts
        .get_team(team)
        .await?
        .ok_or_else(|| StoreError::Unexpected(anyhow::anyhow!("team {team} does not exist")))?
        .currency;
    let names: HashMap<String, String> = match query.group_by {
        ReportGroupBy::Project => store
            .list_projects(team)
            .await?
            .into_iter()
            .map(|p| (p.id.to_string(), p.title.into_string()))
            .collect(),
        ReportGroupBy::Tag => store
            .list_tags(team)
            .await?
            .into_iter()
            .map(|t| (t.id.to_string(), t.title.into_string()))
            .collect(),
        ReportGroupBy::User => accounts
            .list_users(team)
            .await?
            .into_iter()
            // A user may have no name: then their email says who they are.
            .map(|u| {
                let title = if u.name.as_str().is_empty() { u.email.to_string() } else { u.name.to_string() };
                (u.id.to_string(), title)
            })
            .collect(),
        ReportGroupBy::Task | ReportGroupBy::Day => HashMap::new(),
    };
    let none = match query.group_by {
        ReportGroupBy::Tag => "Time without a tag",
        _ => NO_PROJECT,
    };
    // A key without a name is of something deleted between the two reads: shown as is.
    let title = |key: Option<&str>| {
        key.map_or(none.to_owned(), |key| names.get(key).map_or(key, String::as_str).to_owned())
    };
    let total_seconds = if query.group_by == ReportGroupBy::Tag {
        // An entry counts under each of its tags: the total is summed apart, by project
        // (the grouping with the fewest rows), so that each entry counts once.
        let once = ReportQuery { group_by: ReportGroupBy::Project, ..query };
        let rows = store.report(team, &once).await?;
        rows.iter().fold(0_u128, |sum, row| sum.saturating_add(row.seconds))
    } else {
        rows.iter().fold(0_u128, |sum, row| sum.saturating_add(row.seconds))
    };
    let groups = report_groups(rows, query.group_by, currency, title);
    Ok(Report { groups, currency, total_seconds })
}

/// Discards the actor's running timer without logging its time.
pub async fn discard_timer(
    store: &dyn TrackStore,
    actor: &Actor,
    team: TeamId,
    now: DateTime<Utc>,
) -> Result<RunningTimer, TrackError> {
    let timer = running_timer(store, actor, team).await?;
    store.discard_timer(&timer, now).await.map_err(timer_error)?;
    Ok(timer)
}

fn timer_error(error: StopTimerError) -> TrackError {
    match error {
        StopTimerError::NotRunning => TrackError::NoTimer,
        StopTimerError::MissingReference => TrackConflict::TimerReferenceGone.into(),
        StopTimerError::Store(error) => TrackError::Store(error),
    }
}

async fn check_user(
    users: &dyn AccountStore,
    actor: &Actor,
    team: TeamId,
    user: UserId,
) -> Result<(), TrackError> {
    if !actor.may_act_for(user) {
        return Err(NotAllowed::ActForOthers.into());
    }
    if user != actor.user_id && !users.has_user(team, user).await? {
        return Err(EntryRule::UnknownUser.into());
    }
    Ok(())
}

/// Checks where an entry is filed: the section (if any) must be the team's and decides
/// the project; a different `projectId` beside it is refused; the project must be the
/// team's and accept time.
async fn place(
    store: &dyn TrackStore,
    team: TeamId,
    project: Option<ProjectId>,
    section: Option<SectionId>,
) -> Result<(Option<ProjectId>, Option<SectionId>), TrackError> {
    let project = match section {
        None => project,
        Some(id) => {
            let section = store.get_section(team, id).await?.ok_or(EntryRule::UnknownSection)?;
            if project.is_some_and(|p| p != section.project_id) {
                return Err(
                    EntryRule::NotTheSectionsProject { section: id, project: section.project_id }.into()
                );
            }
            Some(section.project_id)
        }
    };
    if let Some(id) = project {
        let project = store.get_project(team, id).await?.ok_or(EntryRule::UnknownProject)?;
        if !project.status.accepts_time() {
            return Err(EntryRule::ArchivedProject.into());
        }
    }
    Ok((project, section))
}

/// The tags named by `ids`, with their titles, in entry order; refused naming the index of
/// the first id that is not a tag of the team.
async fn resolve_tags(
    store: &dyn TrackStore,
    team: TeamId,
    ids: &[TagId],
) -> Result<Vec<TagRef>, TrackError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let unique: Vec<TagId> = ids.iter().copied().collect::<HashSet<_>>().into_iter().collect();
    let found = store.find_tags(team, &unique).await?;
    let known: HashSet<TagId> = found.iter().map(|t| t.id).collect();
    if let Some(index) = ids.iter().position(|id| !known.contains(id)) {
        return Err(EntryRule::UnknownTag { index }.into());
    }
    let mut tags: Vec<TagRef> = found.into_iter().map(|t| TagRef { id: t.id, title: t.title }).collect();
    TimeEntry::order_tags(&mut tags);
    Ok(tags)
}
