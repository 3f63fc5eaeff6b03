//! The tracking ports' contract: tags, projects, sections and time entries, with the
//! delete rules and the references every adapter must enforce.

use crate::Ports;
use crate::{create_team, create_user};
use accounts::{Role, TeamId, UserId};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::{Id, parse_instant};
use tracking::{
    CreateSectionError, DeleteError, DurationSeconds, EntryFilter, EntryPosition, Frequency, HourlyRate,
    Project, ProjectChanges, ProjectCode, ProjectStatus, ReportGroupBy, ReportQuery, SaveEntryError,
    SaveProjectError, Section, Tag, TagRef, TaskName, TimeEntry, TimeEntryId, Title, TrackStore,
};

pub fn title(text: &str) -> Title {
    Title::parse(text).unwrap()
}

pub fn at(text: &str) -> DateTime<Utc> {
    parse_instant(text).unwrap()
}

pub fn now() -> DateTime<Utc> {
    at("2026-11-20T12:00:00Z")
}

pub struct Fixture {
    pub store: Ports,
    pub track: std::sync::Arc<dyn TrackStore>,
    pub team: TeamId,
    pub user: UserId,
}

impl std::fmt::Debug for Fixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("tracking_contract::Fixture").field("team", &self.team).finish_non_exhaustive()
    }
}

pub async fn fixture(store: Ports) -> Fixture {
    let team = create_team(&store, "Acme").await;
    let user = create_user(&store, team, Role::Member).await;
    let track = store.track();
    Fixture { store, track, team, user }
}

impl Fixture {
    pub async fn tag(&self, name: &str) -> Tag {
        let tag = Tag::new(self.team, title(name), now());
        self.track.create_tag(&tag).await.unwrap();
        tag
    }

    pub async fn project(&self, name: &str, code: Option<&str>) -> Project {
        let code = code.map(|c| ProjectCode::parse(c).unwrap());
        let project = Project::new(self.team, title(name), code, now());
        self.track.create_project(&project).await.unwrap();
        project
    }

    pub async fn section(&self, project: &Project, name: &str) -> Section {
        let section = Section::new(self.team, project.id, title(name), now());
        self.track.create_section(&section).await.unwrap();
        section
    }

    pub fn entry(&self, date: &str, tags: &[&Tag]) -> TimeEntry {
        TimeEntry {
            id: TimeEntryId::generate(),
            team_id: self.team,
            user_id: self.user,
            duration: DurationSeconds::parse(1800).unwrap(),
            task_name: TaskName::parse("Write the report").unwrap(),
            description: None,
            date: at(date),
            project_id: None,
            section_id: None,
            tags: tags.iter().map(|t| TagRef { id: t.id, title: t.title.clone() }).collect(),
            ai_generated: false,
            billable: true,
            invoice_id: None,
            created_at: now(),
            updated_at: now(),
        }
    }

    pub async fn logged(&self, entry: TimeEntry) -> TimeEntry {
        self.track.create_entry(&entry).await.unwrap();
        entry
    }

    pub async fn stored(&self, id: TimeEntryId) -> TimeEntry {
        self.track.get_entry(self.team, id).await.unwrap().unwrap()
    }
}

pub fn month_of(date: &str) -> EntryFilter {
    EntryFilter::within(Frequency::Month.period_around(at(date)))
}

fn titles(entry: &TimeEntry) -> Vec<&str> {
    entry.tags.iter().map(|t| t.title.as_str()).collect()
}

pub async fn tags_rename_and_delete_reach_every_entry(store: Ports) {
    let f = fixture(store).await;
    let (urgent, billable) = (f.tag("urgent").await, f.tag("Billable").await);
    let first = f.logged(f.entry("2026-11-20", &[&urgent, &billable])).await;
    let second = f.logged(f.entry("2026-11-21", &[&urgent])).await;
    // Entries show tags by title, case-insensitively.
    assert_eq!(titles(&f.stored(first.id).await), ["Billable", "urgent"]);

    let renamed = f.track.rename_tag(f.team, urgent.id, &title("ASAP"), now()).await.unwrap().unwrap();
    assert_eq!(renamed.title.as_str(), "ASAP");
    let listed = f.track.list_entries(f.team, &month_of("2026-11-01")).await.unwrap();
    assert_eq!(listed.iter().map(titles).collect::<Vec<_>>(), [vec!["ASAP", "Billable"], vec!["ASAP"]]);

    f.track.delete_tag(f.team, urgent.id).await.unwrap();
    assert_eq!(titles(&f.stored(first.id).await), ["Billable"]);
    assert!(f.stored(second.id).await.tags.is_empty());
    let listed = f.track.list_entries(f.team, &month_of("2026-11-01")).await.unwrap();
    assert_eq!(listed.iter().map(titles).collect::<Vec<_>>(), [vec!["Billable"], vec![]], "listings too");
    let remaining = f.track.list_tags(f.team).await.unwrap();
    assert_eq!(remaining.iter().map(|t| t.id).collect::<Vec<_>>(), [billable.id]);
    assert!(matches!(f.track.delete_tag(f.team, urgent.id).await, Err(DeleteError::NotFound)));
    assert!(f.track.rename_tag(f.team, urgent.id, &title("x"), now()).await.unwrap().is_none());
}

pub async fn projects_keep_codes_unique_per_team(store: Ports) {
    let f = fixture(store).await;
    let website = f.project("Website", Some("WEB")).await;
    f.project("No code", None).await;
    f.project("No code either", None).await;
    let clash = Project::new(f.team, title("Other"), ProjectCode::parse("WEB").ok(), now());
    assert!(matches!(f.track.create_project(&clash).await, Err(SaveProjectError::CodeTaken)));
    let other = f.project("Other", Some("APP")).await;
    let changes = ProjectChanges { code: Some(ProjectCode::parse("WEB").ok()), ..Default::default() };
    let result = f.track.update_project(f.team, other.id, &changes, now()).await;
    assert!(matches!(result, Err(SaveProjectError::CodeTaken)));
    // Another team may use the same code.
    let elsewhere = create_team(&f.store, "Elsewhere").await;
    let theirs = Project::new(elsewhere, title("Website"), ProjectCode::parse("WEB").ok(), now());
    f.track.create_project(&theirs).await.unwrap();
    // Keeping its own code is no clash.
    let same = ProjectChanges { code: Some(website.code.clone()), ..Default::default() };
    f.track.update_project(f.team, website.id, &same, now()).await.unwrap();
    let listed: Vec<_> = f.track.list_projects(f.team).await.unwrap().into_iter().map(|p| p.title).collect();
    assert_eq!(listed, ["No code", "No code either", "Other", "Website"].map(title));
}

pub async fn project_updates_change_only_what_they_name(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", Some("WEB")).await;
    let later = now() + TimeDelta::minutes(5);
    let archive = ProjectChanges { status: Some(ProjectStatus::Archived), ..Default::default() };
    let archived = f.track.update_project(f.team, project.id, &archive, later).await.unwrap();
    assert_eq!(archived, project.clone().changed(&archive, later));
    assert_eq!(f.track.get_project(f.team, project.id).await.unwrap(), Some(archived.clone()));
    let rate = |cents| Some(tracking::HourlyRate::parse(billing::money::Decimal::new(cents, 2)).unwrap());
    let uncode = ProjectChanges {
        title: Some(title("Site")),
        code: Some(None),
        status: None,
        rate: Some(rate(9550)),
        client_id: None,
    };
    let changed = f.track.update_project(f.team, project.id, &uncode, later).await.unwrap();
    assert_eq!(
        (changed.title.as_str(), &changed.code, changed.status, changed.rate),
        ("Site", &None, ProjectStatus::Archived, rate(9550))
    );
    assert_eq!(f.track.get_project(f.team, project.id).await.unwrap(), Some(changed));
    let unrate = ProjectChanges { rate: Some(None), ..Default::default() };
    assert_eq!(f.track.update_project(f.team, project.id, &unrate, later).await.unwrap().rate, None);
    let rated = Project::new(f.team, title("Rated"), None, now()).with_rate(rate(12_345_678));
    f.track.create_project(&rated).await.unwrap();
    assert_eq!(f.track.get_project(f.team, rated.id).await.unwrap(), Some(rated));
    let missing = f.track.update_project(f.team, tracking::ProjectId::generate(), &uncode, later).await;
    assert!(matches!(missing, Err(SaveProjectError::NotFound)));
}

pub async fn projects_belong_to_a_client_of_their_team_which_keeps_them(store: Ports) {
    let f = fixture(store).await;
    let invoices = super::invoices::fixture_for(f.store.clone(), f.team).await;
    let client = Some(invoices.client);
    let website = Project::new(f.team, title("Website"), None, now()).for_client(client);
    f.track.create_project(&website).await.unwrap();
    assert_eq!(f.track.get_project(f.team, website.id).await.unwrap().unwrap().client_id, client);

    // A client of no team, or of another, is refused, and nothing is written.
    let elsewhere =
        super::invoices::fixture_for(f.store.clone(), create_team(&f.store, "Elsewhere").await).await;
    for stranger in [billing::ClientId::generate(), elsewhere.client] {
        let project = Project::new(f.team, title("Stray"), None, now()).for_client(Some(stranger));
        assert!(matches!(f.track.create_project(&project).await, Err(SaveProjectError::UnknownClient)));
        assert_eq!(f.track.get_project(f.team, project.id).await.unwrap(), None);
        let move_there = ProjectChanges { client_id: Some(Some(stranger)), ..Default::default() };
        let moved = f.track.update_project(f.team, website.id, &move_there, now()).await;
        assert!(matches!(moved, Err(SaveProjectError::UnknownClient)));
    }
    assert_eq!(f.track.get_project(f.team, website.id).await.unwrap().unwrap().client_id, client);

    // A client with projects is kept; once they are no client's, it may go.
    let deleted = invoices.billing.delete(f.team, invoices.client, now()).await;
    assert!(matches!(deleted, Err(billing::DeleteClientError::HasProjects)), "{deleted:?}");
    let unfiled = ProjectChanges { client_id: Some(None), ..Default::default() };
    let project = f.track.update_project(f.team, website.id, &unfiled, now()).await.unwrap();
    assert_eq!(project.client_id, None);
    invoices.billing.delete(f.team, invoices.client, now()).await.unwrap();
    assert_eq!(f.track.get_project(f.team, website.id).await.unwrap(), Some(project));
}

pub async fn projects_and_sections_with_entries_cannot_be_deleted(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", None).await;
    let section = f.section(&project, "Design").await;
    let entry = f
        .logged(TimeEntry {
            project_id: Some(project.id),
            section_id: Some(section.id),
            ..f.entry("2026-11-20", &[])
        })
        .await;
    assert!(matches!(f.track.delete_section(f.team, section.id).await, Err(DeleteError::HasTimeEntries)));
    assert!(matches!(f.track.delete_project(f.team, project.id).await, Err(DeleteError::HasTimeEntries)));
    // Nothing went: the section, the project and the entry are all still there.
    assert!(f.track.get_section(f.team, section.id).await.unwrap().is_some());
    assert!(f.track.get_project(f.team, project.id).await.unwrap().is_some());
    f.track.delete_entry(f.team, entry.id, chrono::Utc::now()).await.unwrap();
    f.track.delete_section(f.team, section.id).await.unwrap();
    f.track.delete_project(f.team, project.id).await.unwrap();
    assert!(matches!(f.track.delete_project(f.team, project.id).await, Err(DeleteError::NotFound)));
    assert!(matches!(
        f.track.delete_entry(f.team, entry.id, chrono::Utc::now()).await,
        Err(DeleteError::NotFound)
    ));
}

pub async fn deleting_a_project_takes_its_sections(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", None).await;
    let section = f.section(&project, "Design").await;
    f.track.delete_project(f.team, project.id).await.unwrap();
    assert_eq!(f.track.get_section(f.team, section.id).await.unwrap(), None);
    assert!(f.track.list_sections(f.team, project.id).await.unwrap().is_empty());
}

pub async fn sections_need_a_project_of_the_team(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", None).await;
    let other = f.project("App", None).await;
    let (design, build) = (f.section(&project, "design").await, f.section(&project, "Build").await);
    f.section(&other, "Elsewhere").await;
    let listed = f.track.list_sections(f.team, project.id).await.unwrap();
    assert_eq!(listed, [build.clone(), design.clone()]);
    let orphan = Section::new(f.team, tracking::ProjectId::generate(), title("Orphan"), now());
    assert!(matches!(f.track.create_section(&orphan).await, Err(CreateSectionError::ProjectNotFound)));
    let later = now() + TimeDelta::seconds(1);
    let renamed = f.track.rename_section(f.team, design.id, &title("Design"), later).await.unwrap().unwrap();
    assert_eq!(
        (renamed.title.as_str(), renamed.project_id, renamed.updated_at),
        ("Design", project.id, later)
    );
    assert_eq!(f.track.get_section(f.team, design.id).await.unwrap(), Some(renamed));
}

pub async fn entries_round_trip_with_their_tags(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", None).await;
    let section = f.section(&project, "Design").await;
    let tag = f.tag("urgent").await;
    let entry = TimeEntry {
        description: Some(tracking::Description::parse("Ёлка — ΑΒΓ ".repeat(50)).unwrap()),
        date: at("2026-11-20T09:30:00.123Z"),
        project_id: Some(project.id),
        section_id: Some(section.id),
        duration: DurationSeconds::parse(i128::from(DurationSeconds::MAX)).unwrap(),
        ai_generated: true,
        billable: false,
        ..f.entry("2026-11-20", &[&tag])
    };
    f.logged(entry.clone()).await;
    assert_eq!(f.stored(entry.id).await, entry);
    assert_eq!(
        f.track.list_entries(f.team, &month_of("2026-11-20")).await.unwrap(),
        std::slice::from_ref(&entry)
    );
    let bare = f.logged(f.entry("2026-11-21", &[])).await;
    assert_eq!(f.stored(bare.id).await, bare);
}

pub async fn entries_list_by_period_and_user_in_order(store: Ports) {
    let f = fixture(store).await;
    let colleague = create_user(&f.store, f.team, Role::Member).await;
    let later = now() + TimeDelta::seconds(1);
    // Logged out of order; the second of two at the same time was created later.
    let sunday = f.logged(f.entry("2026-11-22T23:59:59.999Z", &[])).await;
    let monday_late = f.logged(TimeEntry { created_at: later, ..f.entry("2026-11-16", &[]) }).await;
    let monday = f.logged(f.entry("2026-11-16", &[])).await;
    let theirs =
        f.logged(TimeEntry { user_id: colleague, ..f.entry("2026-11-18T08:00:00+02:00", &[]) }).await;
    // Just outside the week on either side.
    f.logged(f.entry("2026-11-15T23:59:59.999Z", &[])).await;
    f.logged(f.entry("2026-11-23", &[])).await;

    let week = Frequency::Week.period_around(at("2026-11-20"));
    let ids = |entries: Vec<TimeEntry>| entries.into_iter().map(|e| e.id).collect::<Vec<_>>();
    let all = f.track.list_entries(f.team, &EntryFilter::within(week)).await.unwrap();
    assert_eq!(ids(all), [monday.id, monday_late.id, theirs.id, sunday.id]);
    let mine = f
        .track
        .list_entries(f.team, &EntryFilter { user: Some(f.user), ..EntryFilter::within(week) })
        .await
        .unwrap();
    assert_eq!(ids(mine), [monday.id, monday_late.id, sunday.id]);
    let day = Frequency::Day.period_around(at("2026-11-18"));
    let that_day = f.track.list_entries(f.team, &EntryFilter::within(day)).await.unwrap();
    assert_eq!(ids(that_day), [theirs.id]);
    let month = f.track.list_entries(f.team, &month_of("2026-11-30")).await.unwrap();
    assert_eq!(month.len(), 6);
}

pub async fn entries_filter_by_project_section_and_tag_and_page_in_order(store: Ports) {
    let f = fixture(store).await;
    let (urgent, other) = (f.tag("urgent").await, f.tag("other").await);
    let website = f.project("Website", None).await;
    let design = f.section(&website, "Design").await;
    let placed = |entry: TimeEntry, section: Option<&Section>| TimeEntry {
        project_id: Some(website.id),
        section_id: section.map(|s| s.id),
        ..entry
    };
    // Three entries at one date, told apart by creation time, then by id.
    let same_time =
        |n: i64| TimeEntry { created_at: now() + TimeDelta::seconds(n), ..f.entry("2026-11-10", &[&urgent]) };
    let mut entries = vec![
        f.logged(placed(f.entry("2026-11-02", &[&urgent, &other]), Some(&design))).await,
        f.logged(placed(f.entry("2026-11-03", &[]), None)).await,
        f.logged(same_time(1)).await,
        f.logged(same_time(1)).await,
        f.logged(same_time(2)).await,
        f.logged(f.entry("2026-11-20", &[&other])).await,
    ];
    entries[2..4].sort_by_key(|e| e.id);
    let ids = |listed: &[TimeEntry]| listed.iter().map(|e| e.id).collect::<Vec<_>>();
    let list = async |filter: EntryFilter| f.track.list_entries(f.team, &filter).await.unwrap();
    let month = month_of("2026-11-01");
    let all = list(month).await;
    assert_eq!(ids(&all), ids(&entries));
    assert_eq!(ids(&list(EntryFilter { project: Some(website.id), ..month }).await), ids(&entries[..2]));
    assert_eq!(ids(&list(EntryFilter { section: Some(design.id), ..month }).await), ids(&entries[..1]));
    let tagged = list(EntryFilter { tag: Some(urgent.id), ..month }).await;
    assert_eq!(ids(&tagged), [entries[0].id, entries[2].id, entries[3].id, entries[4].id]);
    assert_eq!(titles(&tagged[0]), ["other", "urgent"], "a tag filter keeps the entries' other tags");
    let both = EntryFilter { tag: Some(other.id), project: Some(website.id), ..month };
    assert_eq!(ids(&list(both).await), ids(&entries[..1]));

    // Pages of two, each after the last of the one before, add up to the whole listing.
    let mut paged = Vec::new();
    let mut after = None;
    loop {
        let page = list(EntryFilter { limit: Some(2), after, ..month }).await;
        assert!(page.len() <= 2);
        let Some(final_entry) = page.last() else { break };
        after = Some(EntryPosition::of(final_entry));
        paged.extend(page);
    }
    assert_eq!(paged, all, "pages hold the same entries, tags and all");
    let tagged_page = list(EntryFilter {
        tag: Some(urgent.id),
        limit: Some(2),
        after: Some(EntryPosition::of(&entries[2])),
        ..month
    })
    .await;
    assert_eq!(ids(&tagged_page), [entries[3].id, entries[4].id]);
}

pub async fn replacing_an_entry_replaces_its_tags(store: Ports) {
    let f = fixture(store).await;
    let (a, b, c) = (f.tag("a").await, f.tag("b").await, f.tag("c").await);
    let entry = f.logged(f.entry("2026-11-20", &[&a, &b])).await;
    let colleague = create_user(&f.store, f.team, Role::Member).await;
    let changed = TimeEntry {
        user_id: colleague,
        task_name: TaskName::parse("Review").unwrap(),
        tags: vec![TagRef { id: c.id, title: c.title.clone() }],
        updated_at: now() + TimeDelta::minutes(1),
        ..entry.clone()
    };
    f.track.replace_entry(&changed).await.unwrap();
    assert_eq!(f.stored(entry.id).await, changed);
    let untagged = TimeEntry { tags: Vec::new(), billable: false, ..changed };
    f.track.replace_entry(&untagged).await.unwrap();
    assert_eq!(f.stored(entry.id).await, untagged);
    // Only billing sets the invoice: neither a new entry nor a replacement carries one in.
    let claimed = TimeEntry { invoice_id: Some(billing::InvoiceId::generate()), ..untagged.clone() };
    f.track.replace_entry(&claimed).await.unwrap();
    assert_eq!(f.stored(entry.id).await.invoice_id, None);
    let born_billed =
        f.logged(TimeEntry { invoice_id: claimed.invoice_id, ..f.entry("2026-11-22", &[]) }).await;
    assert_eq!(f.stored(born_billed.id).await.invoice_id, None);
    let missing = TimeEntry { id: TimeEntryId::generate(), ..untagged };
    assert!(matches!(f.track.replace_entry(&missing).await, Err(SaveEntryError::NotFound)));
}

pub async fn entries_refuse_references_outside_the_team(store: Ports) {
    let f = fixture(store).await;
    let other = fixture(f.store.clone()).await;
    let project = f.project("Website", None).await;
    let elsewhere = f.project("App", None).await;
    let section = f.section(&project, "Design").await;
    let (their_tag, their_project) = (other.tag("theirs").await, other.project("Theirs", None).await);
    let base = f.entry("2026-11-20", &[]);
    let refused = [
        TimeEntry { user_id: other.user, ..base.clone() },
        TimeEntry { project_id: Some(their_project.id), ..base.clone() },
        TimeEntry { tags: vec![TagRef { id: their_tag.id, title: their_tag.title.clone() }], ..base.clone() },
        // A section must sit in the entry's project.
        TimeEntry { project_id: Some(elsewhere.id), section_id: Some(section.id), ..base.clone() },
    ];
    for entry in refused {
        assert!(
            matches!(f.track.create_entry(&entry).await, Err(SaveEntryError::MissingReference)),
            "{entry:?}"
        );
    }
    let stored = f.logged(base.clone()).await;
    let moved = TimeEntry { project_id: Some(their_project.id), ..stored.clone() };
    assert!(matches!(f.track.replace_entry(&moved).await, Err(SaveEntryError::MissingReference)));
    // Nothing was written by the refusals.
    assert_eq!(f.track.list_entries(f.team, &month_of("2026-11-20")).await.unwrap(), [stored]);
}

pub async fn tracking_is_invisible_to_other_teams(store: Ports) {
    let f = fixture(store).await;
    let project = f.project("Website", Some("WEB")).await;
    let section = f.section(&project, "Design").await;
    let tag = f.tag("urgent").await;
    let entry = f.logged(f.entry("2026-11-20", &[&tag])).await;
    let stranger = create_team(&f.store, "Strangers").await;
    let t = &f.track;
    assert!(t.list_tags(stranger).await.unwrap().is_empty());
    assert!(t.find_tags(stranger, &[tag.id]).await.unwrap().is_empty());
    assert!(t.list_projects(stranger).await.unwrap().is_empty());
    assert!(t.get_project(stranger, project.id).await.unwrap().is_none());
    assert!(t.list_sections(stranger, project.id).await.unwrap().is_empty());
    assert!(t.get_section(stranger, section.id).await.unwrap().is_none());
    assert!(t.get_entry(stranger, entry.id).await.unwrap().is_none());
    assert!(t.list_entries(stranger, &month_of("2026-11-20")).await.unwrap().is_empty());
    assert!(t.rename_tag(stranger, tag.id, &title("x"), now()).await.unwrap().is_none());
    assert!(t.rename_section(stranger, section.id, &title("x"), now()).await.unwrap().is_none());
    let changes = ProjectChanges { title: Some(title("x")), ..Default::default() };
    assert!(matches!(
        t.update_project(stranger, project.id, &changes, now()).await,
        Err(SaveProjectError::NotFound)
    ));
    assert!(matches!(t.delete_tag(stranger, tag.id).await, Err(DeleteError::NotFound)));
    assert!(matches!(t.delete_section(stranger, section.id).await, Err(DeleteError::NotFound)));
    assert!(matches!(t.delete_project(stranger, project.id).await, Err(DeleteError::NotFound)));
    assert!(matches!(
        t.delete_entry(stranger, entry.id, chrono::Utc::now()).await,
        Err(DeleteError::NotFound)
    ));
    let hijack = TimeEntry { team_id: stranger, ..entry.clone() };
    assert!(matches!(t.replace_entry(&hijack).await, Err(SaveEntryError::NotFound)));
    // All still there for their own team.
    assert_eq!(f.stored(entry.id).await, entry);
}

pub async fn the_listing_revision_grows_with_every_change_a_listing_shows(store: Ports) {
    let f = fixture(store).await;
    let other = fixture(f.store.clone()).await;
    let revision = async || f.track.listing_revision(f.team).await.unwrap();
    assert_eq!(revision().await, 0, "nothing changed yet");
    // A new tag, project or section is on no entry yet: listings stay as they were.
    let tag = f.tag("urgent").await;
    f.project("Website", None).await;
    assert_eq!(revision().await, 0);

    let mut seen = 0;
    let mut grew = async |change: &str| {
        let now = revision().await;
        assert!(now > seen, "{change}: revision {now} after {seen}");
        seen = now;
    };
    let entry = f.logged(f.entry("2026-11-20", &[&tag])).await;
    grew("an entry logged").await;
    f.track.replace_entry(&TimeEntry { tags: Vec::new(), ..entry.clone() }).await.unwrap();
    grew("an entry replaced").await;
    f.track.rename_tag(f.team, tag.id, &title("ASAP"), now()).await.unwrap();
    grew("a tag renamed").await;
    f.track.delete_tag(f.team, tag.id).await.unwrap();
    grew("a tag deleted").await;
    f.track.delete_entry(f.team, entry.id, chrono::Utc::now()).await.unwrap();
    grew("an entry deleted").await;

    // What changed nothing leaves it: reads, refusals, and another team's changes.
    f.track.list_entries(f.team, &month_of("2026-11-20")).await.unwrap();
    assert!(f.track.delete_entry(f.team, entry.id, chrono::Utc::now()).await.is_err());
    assert!(f.track.replace_entry(&entry).await.is_err());
    let refused = TimeEntry { user_id: other.user, ..f.entry("2026-11-20", &[]) };
    assert!(f.track.create_entry(&refused).await.is_err());
    other.logged(other.entry("2026-11-20", &[])).await;
    assert_eq!(revision().await, seen);
    assert!(other.track.listing_revision(other.team).await.unwrap() > 0);
}

/// `entries` as billing takes them: each by id, as of its last change.
fn to_bill(entries: &[&TimeEntry]) -> Vec<billing::store::TimeToBill> {
    entries
        .iter()
        .map(|e| billing::store::TimeToBill { id: e.id.as_uuid(), updated_at: e.updated_at })
        .collect()
}

/// Makes an invoice of `invoices`' team that bills `entries`, as the from-time use case does.
async fn invoice_billing(
    invoices: &super::invoices::Fixture,
    entries: &[&TimeEntry],
) -> Result<billing::Invoice, billing::store::CreateInvoiceError> {
    let draft = invoices.draft(
        billing::store::BillTo::Existing(invoices.client),
        "2026-11-20",
        &[("Time", "100", "1")],
    );
    let time_entries = to_bill(entries);
    invoices.billing.create_invoice(billing::store::NewInvoice { time_entries, ..draft }).await
}

pub async fn billed_time_is_locked_and_released_with_its_invoice(store: Ports) {
    let f = fixture(store).await;
    let invoices = super::invoices::fixture_for(f.store.clone(), f.team).await;
    let a = f.logged(f.entry("2026-11-02", &[])).await;
    let b = f.logged(f.entry("2026-11-03", &[])).await;
    let c = f.logged(f.entry("2026-11-04", &[])).await;
    let invoice = invoice_billing(&invoices, &[&a, &b]).await.unwrap();
    let other = invoice_billing(&invoices, &[&c]).await.unwrap();
    let billed_on = async |entry: &TimeEntry| f.stored(entry.id).await.invoice_id;

    // Billed time is locked.
    let edited = TimeEntry { task_name: TaskName::parse("Other").unwrap(), ..f.stored(a.id).await };
    assert!(matches!(f.track.replace_entry(&edited).await, Err(SaveEntryError::Billed)));
    assert!(matches!(f.track.delete_entry(f.team, a.id, chrono::Utc::now()).await, Err(DeleteError::Billed)));
    assert_eq!(f.stored(a.id).await.task_name, a.task_name);

    // Deleting the invoice releases its time, and only its time.
    invoices.billing.delete_invoice(f.team, invoice.id, chrono::Utc::now()).await.unwrap();
    assert_eq!((billed_on(&a).await, billed_on(&b).await, billed_on(&c).await), (None, None, Some(other.id)));
    f.track.replace_entry(&edited).await.unwrap();
    f.track.delete_entry(f.team, b.id, chrono::Utc::now()).await.unwrap();
}

pub async fn an_invoice_bills_its_time_in_its_own_transaction(store: Ports) {
    let f = fixture(store).await;
    let invoices = super::invoices::fixture_for(f.store.clone(), f.team).await;
    let (a, b, c) = (
        f.logged(f.entry("2026-11-02", &[])).await,
        f.logged(f.entry("2026-11-03", &[])).await,
        f.logged(f.entry("2026-11-04", &[])).await,
    );
    let unbillable = f.logged(TimeEntry { billable: false, ..f.entry("2026-11-05", &[]) }).await;

    let first = invoice_billing(&invoices, &[&a, &b, &a]).await.unwrap();
    assert_eq!(first.number.to_string(), "INV-0001");
    assert_eq!(
        (f.stored(a.id).await.invoice_id, f.stored(b.id).await.invoice_id),
        (Some(first.id), Some(first.id))
    );
    // b is billed already, time not billable is never billed, an unknown entry is none of the
    // team's: nothing is made, not even a serial.
    // So is an entry changed since it was read: its lines were made from the old version.
    let unknown = f.entry("2026-11-06", &[]);
    let changed = TimeEntry {
        duration: DurationSeconds::parse(60).unwrap(),
        updated_at: now() + TimeDelta::seconds(1),
        ..c.clone()
    };
    f.track.replace_entry(&changed).await.unwrap();
    for claim in [vec![&b, &c], vec![&unbillable], vec![&changed, &unknown], vec![&c]] {
        let refused = invoice_billing(&invoices, &claim).await;
        let ids: Vec<_> = claim.iter().map(|e| e.id).collect();
        assert!(matches!(refused, Err(billing::store::CreateInvoiceError::TimeTaken)), "{ids:?}");
    }
    let c = f.stored(c.id).await;
    // Nor does another team's invoice bill the team's time.
    let stranger = create_team(&f.store, "Stranger").await;
    let theirs = super::invoices::fixture_for(f.store.clone(), stranger).await;
    let foreign = invoice_billing(&theirs, &[&c]).await;
    assert!(matches!(foreign, Err(billing::store::CreateInvoiceError::TimeTaken)));
    assert_eq!((f.stored(c.id).await.invoice_id, f.stored(unbillable.id).await.invoice_id), (None, None));
    let next = invoice_billing(&invoices, &[&c]).await.unwrap();
    assert_eq!(next.number.to_string(), "INV-0002");
    assert_eq!(f.stored(c.id).await.invoice_id, Some(next.id));
}

pub async fn a_preview_checks_as_a_create_does_and_keeps_nothing(store: Ports) {
    let f = fixture(store).await;
    let invoices = super::invoices::fixture_for(f.store.clone(), f.team).await;
    let (a, b) = (f.logged(f.entry("2026-11-02", &[])).await, f.logged(f.entry("2026-11-03", &[])).await);
    let first = invoice_billing(&invoices, &[&a]).await.unwrap();
    let previewing = |entries: &[&TimeEntry], bill_to: billing::store::BillTo| {
        let draft = invoices.draft(bill_to, "2026-11-20", &[("Time", "100", "1")]);
        let time_entries = to_bill(entries);
        invoices.billing.preview_invoice(billing::store::NewInvoice { time_entries, ..draft })
    };

    let email = kernel::Email::parse("new@example.com").unwrap();
    let newcomer =
        billing::Client::new(f.team, super::invoices::client_details("New", "new@example.com"), now());
    let inline = billing::store::BillTo::Inline { email, new_client: Box::new(newcomer.clone()) };
    let preview = previewing(&[&b], inline).await.unwrap();
    assert_eq!((preview.number.to_string(), preview.client_id), ("INV-0002".to_owned(), newcomer.id));
    // Nothing is kept: not the invoice, its serial, its client, nor the billing of b.
    assert!(invoices.billing.get_invoice(f.team, preview.id).await.unwrap().is_none());
    assert!(invoices.billing.get(f.team, newcomer.id).await.unwrap().is_none());
    assert_eq!(f.stored(b.id).await.invoice_id, None);
    // Refused as a create is.
    let existing = billing::store::BillTo::Existing(invoices.client);
    let taken = previewing(&[&a], existing.clone()).await;
    assert!(matches!(taken, Err(billing::store::CreateInvoiceError::TimeTaken)));
    let stranger = billing::store::BillTo::Existing(billing::ClientId::generate());
    assert!(matches!(
        previewing(&[&b], stranger).await,
        Err(billing::store::CreateInvoiceError::UnknownClient)
    ));
    let made = invoice_billing(&invoices, &[&b]).await.unwrap();
    assert_eq!(
        (made.number.to_string(), first.number.to_string()),
        ("INV-0002".to_owned(), "INV-0001".to_owned())
    );
}

/// A report row as `(key, rate, seconds, billable seconds, invoiced seconds)`.
type SumRow = (Option<String>, Option<String>, u128, u128, u128);

pub async fn reports_sum_time_per_group_and_rate(store: Ports) {
    let f = fixture(store).await;
    let rate = |text: &str| Some(HourlyRate::parse(billing::money::parse_decimal(text).unwrap()).unwrap());
    let rated = async |name: &str, hourly: Option<HourlyRate>| {
        let project = Project::new(f.team, title(name), None, now()).with_rate(hourly);
        f.track.create_project(&project).await.unwrap();
        project
    };
    let (website, support, internal) = (
        rated("Website", rate("100.5")).await,
        rated("Support", rate("80")).await,
        rated("Internal", None).await,
    );
    let (urgent, client) = (f.tag("urgent").await, f.tag("client").await);
    let other = create_user(&f.store, f.team, Role::Member).await;
    let on = |project: &Project, date: &str, seconds: i128, tags: &[&Tag]| TimeEntry {
        project_id: Some(project.id),
        duration: DurationSeconds::parse(seconds).unwrap(),
        ..f.entry(date, tags)
    };
    f.logged(on(&website, "2026-11-02T10:00:00Z", 3600, &[&urgent, &client])).await;
    f.logged(TimeEntry { billable: false, ..on(&website, "2026-11-02T23:59:59Z", 1800, &[&urgent]) }).await;
    f.logged(on(&support, "2026-11-03", 600, &[])).await;
    f.logged(TimeEntry { user_id: other, ..on(&internal, "2026-11-03", 1200, &[&client]) }).await;
    let billed = f.logged(f.entry("2026-11-04", &[])).await;
    f.logged(on(&website, "2026-12-01T00:00:00Z", 7200, &[])).await;
    f.logged(on(&website, "2026-10-31T23:59:59Z", 7200, &[])).await;
    let invoices = super::invoices::fixture_for(f.store.clone(), f.team).await;
    invoice_billing(&invoices, &[&billed]).await.unwrap();
    // Another team's time never counts.
    let stranger = fixture(f.store.clone()).await;
    stranger.logged(stranger.entry("2026-11-02", &[])).await;

    let report = async |group_by: ReportGroupBy, user: Option<UserId>| {
        let query = ReportQuery { period: Frequency::Month.period_around(at("2026-11-15")), user, group_by };
        let mut rows: Vec<SumRow> = f
            .track
            .report(f.team, &query)
            .await
            .unwrap()
            .into_iter()
            .map(|r| {
                (
                    r.key,
                    r.rate.map(|r| r.amount().normalize().to_string()),
                    r.seconds,
                    r.billable_seconds,
                    r.invoiced_seconds,
                )
            })
            .collect();
        rows.sort();
        rows
    };
    let id = |project: &Project| Some(project.id.to_string());
    let text = |t: &str| Some(t.to_owned());
    let mut expected = vec![
        (None, None, 1800, 1800, 1800),
        (id(&internal), None, 1200, 1200, 0),
        (id(&support), text("80"), 600, 600, 0),
        (id(&website), text("100.5"), 5400, 3600, 0),
    ];
    expected.sort();
    assert_eq!(report(ReportGroupBy::Project, None).await, expected);
    // An entry with two tags counts under both; one per rate within a group.
    let tags = report(ReportGroupBy::Tag, None).await;
    let tag_of = |tag: &Tag| Some(tag.id.to_string());
    let mut expected = vec![
        (None, None, 1800, 1800, 1800),
        (None, text("80"), 600, 600, 0),
        (tag_of(&client), None, 1200, 1200, 0),
        (tag_of(&client), text("100.5"), 3600, 3600, 0),
        (tag_of(&urgent), text("100.5"), 5400, 3600, 0),
    ];
    expected.sort();
    assert_eq!(tags, expected);
    let days = report(ReportGroupBy::Day, None).await;
    let day_totals: Vec<(Option<String>, u128)> = days.iter().map(|r| (r.0.clone(), r.2)).collect();
    let mut expected_days = vec![
        (text("2026-11-02"), 5400),
        (text("2026-11-03"), 600),
        (text("2026-11-03"), 1200),
        (text("2026-11-04"), 1800),
    ];
    expected_days.sort();
    let mut day_totals = day_totals;
    day_totals.sort();
    assert_eq!(day_totals, expected_days);
    let tasks = report(ReportGroupBy::Task, Some(other)).await;
    assert_eq!(tasks, [(text("Write the report"), None, 1200, 1200, 0)]);
    let users = report(ReportGroupBy::User, None).await;
    let user_totals: u128 = users.iter().filter(|r| r.0 == Some(f.user.to_string())).map(|r| r.2).sum();
    assert_eq!(user_totals, 5400 + 600 + 1800);
}
