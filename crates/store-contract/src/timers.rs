//! The timer port's contract: one running timer per user, a stop that makes exactly one
//! entry, and the references and delete rules of entries.

use std::sync::Arc;

use crate::Ports;
use crate::{create_team, create_user};
use accounts::{Role, TeamId, UserId};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::{Id, parse_instant};
use tracking::{
    DeleteError, Frequency, Project, RunningTimer, Section, StartTimerError, StopTimerError, Tag, TagRef,
    TaskName, TimeEntryId, TimerId, Title, TrackStore,
};

fn at(text: &str) -> DateTime<Utc> {
    parse_instant(text).unwrap()
}

struct Fixture {
    track: Arc<dyn TrackStore>,
    team: TeamId,
    user: UserId,
    store: Ports,
}

async fn fixture(store: Ports) -> Fixture {
    let team = create_team(&store, "Acme").await;
    let user = create_user(&store, team, Role::Member).await;
    Fixture { track: store.track(), team, user, store }
}

impl Fixture {
    fn timer(&self, tags: &[&Tag]) -> RunningTimer {
        RunningTimer {
            id: TimerId::generate(),
            team_id: self.team,
            user_id: self.user,
            task_name: TaskName::parse("Review the contract").unwrap(),
            description: None,
            project_id: None,
            section_id: None,
            tags: tags.iter().map(|t| TagRef { id: t.id, title: t.title.clone() }).collect(),
            started_at: at("2026-11-24T09:00:00.250Z"),
        }
    }

    async fn tag(&self, name: &str) -> Tag {
        let tag = Tag::new(self.team, Title::parse(name).unwrap(), at("2026-11-24"));
        self.track.create_tag(&tag).await.unwrap();
        tag
    }

    async fn running(&self) -> Option<RunningTimer> {
        self.track.running_timer(self.team, self.user).await.unwrap()
    }
}

pub async fn a_timer_round_trips_with_its_tags_current(store: Ports) {
    let f = fixture(store).await;
    assert_eq!(f.running().await, None);
    let (urgent, billable) = (f.tag("urgent").await, f.tag("Billable").await);
    let mut timer = f.timer(&[&billable, &urgent]);
    timer.description = Some(tracking::Description::parse("Clause 4 — Ünterschrift").unwrap());
    f.track.start_timer(&timer).await.unwrap();
    assert_eq!(f.running().await.as_ref(), Some(&timer));

    let renamed =
        f.track.rename_tag(f.team, urgent.id, &Title::parse("ASAP").unwrap(), at("2026-11-24")).await;
    renamed.unwrap().unwrap();
    f.track.delete_tag(f.team, billable.id).await.unwrap();
    let shown = f.running().await.unwrap();
    assert_eq!(shown.tags.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["ASAP"]);
}

pub async fn a_user_has_one_running_timer_even_when_starts_race(store: Ports) {
    let f = fixture(store).await;
    let (first, second) = (f.timer(&[]), f.timer(&[]));
    let (a, b) = tokio::join!(f.track.start_timer(&first), f.track.start_timer(&second));
    let refused = [a, b].into_iter().filter(|r| matches!(r, Err(StartTimerError::AlreadyRunning))).count();
    assert_eq!(refused, 1, "exactly one of two racing starts is refused");
    let running = f.running().await.unwrap();
    assert!(running.id == first.id || running.id == second.id);

    // Another user of the team has a timer of their own.
    let colleague = create_user(&f.store, f.team, Role::Member).await;
    let theirs = RunningTimer { id: TimerId::generate(), user_id: colleague, ..f.timer(&[]) };
    f.track.start_timer(&theirs).await.unwrap();
    assert_eq!(f.track.running_timer(f.team, colleague).await.unwrap(), Some(theirs));
}

pub async fn a_stop_makes_one_entry_and_ends_the_timer(store: Ports) {
    let f = fixture(store).await;
    let tag = f.tag("Billable").await;
    let timer = f.timer(&[&tag]);
    f.track.start_timer(&timer).await.unwrap();
    let revision = f.track.listing_revision(f.team).await.unwrap();
    let now = timer.started_at + TimeDelta::milliseconds(90_500);
    let entry = |timer: &RunningTimer| timer.clone().into_entry(TimeEntryId::generate(), now);
    let (first, second) = (entry(&timer), entry(&timer));
    let (a, b) = tokio::join!(f.track.stop_timer(&timer, &first), f.track.stop_timer(&timer, &second));
    let stopped = [a, b].into_iter().flatten().count();
    assert_eq!(stopped, 1, "two racing stops make one entry");
    assert_eq!(f.running().await, None);
    assert!(matches!(f.track.stop_timer(&timer, &entry(&timer)).await, Err(StopTimerError::NotRunning)));

    let filter = tracking::EntryFilter::within(Frequency::Day.period_around(timer.started_at));
    let listed = f.track.list_entries(f.team, &filter).await.unwrap();
    assert_eq!(listed.len(), 1);
    let logged = &listed[0];
    assert!(logged.id == first.id || logged.id == second.id);
    assert_eq!((logged.duration.get(), logged.date, logged.user_id), (90, timer.started_at, f.user));
    assert_eq!(logged.tags, timer.tags);
    assert!(f.track.listing_revision(f.team).await.unwrap() > revision, "listings see the new entry");
}

pub async fn a_discarded_timer_logs_nothing(store: Ports) {
    let f = fixture(store).await;
    let timer = f.timer(&[]);
    f.track.start_timer(&timer).await.unwrap();
    f.track.discard_timer(&timer, timer.started_at).await.unwrap();
    assert_eq!(f.running().await, None);
    assert!(matches!(f.track.discard_timer(&timer, timer.started_at).await, Err(StopTimerError::NotRunning)));
    let entry = timer.clone().into_entry(TimeEntryId::generate(), at("2026-11-24T10:00:00Z"));
    assert!(matches!(f.track.stop_timer(&timer, &entry).await, Err(StopTimerError::NotRunning)));
    let filter = tracking::EntryFilter::within(Frequency::Day.period_around(timer.started_at));
    assert!(f.track.list_entries(f.team, &filter).await.unwrap().is_empty());
    // A new timer starts once the old one is gone.
    f.track.start_timer(&f.timer(&[])).await.unwrap();
}

pub async fn timers_refuse_references_outside_the_team_and_hold_their_project(store: Ports) {
    let f = fixture(store).await;
    let other = create_team(&f.store, "Other").await;
    let foreign_tag = Tag::new(other, Title::parse("theirs").unwrap(), at("2026-11-24"));
    f.track.create_tag(&foreign_tag).await.unwrap();
    let refused =
        |result: Result<(), StartTimerError>| matches!(result, Err(StartTimerError::MissingReference));
    assert!(refused(f.track.start_timer(&f.timer(&[&foreign_tag])).await), "a tag of another team");
    let stranger = RunningTimer { user_id: UserId::generate(), ..f.timer(&[]) };
    assert!(refused(f.track.start_timer(&stranger).await), "a user outside the team");

    let project = Project::new(f.team, Title::parse("Website").unwrap(), None, at("2026-11-24"));
    f.track.create_project(&project).await.unwrap();
    let section = Section::new(f.team, project.id, Title::parse("Design").unwrap(), at("2026-11-24"));
    f.track.create_section(&section).await.unwrap();
    let other_project = Project::new(f.team, Title::parse("Shop").unwrap(), None, at("2026-11-24"));
    f.track.create_project(&other_project).await.unwrap();
    let mismatched =
        RunningTimer { project_id: Some(other_project.id), section_id: Some(section.id), ..f.timer(&[]) };
    assert!(refused(f.track.start_timer(&mismatched).await), "a section of another project");
    assert_eq!(f.running().await, None, "nothing was written");

    let filed = RunningTimer { project_id: Some(project.id), section_id: Some(section.id), ..f.timer(&[]) };
    f.track.start_timer(&filed).await.unwrap();
    assert!(matches!(f.track.delete_section(f.team, section.id).await, Err(DeleteError::HasTimeEntries)));
    assert!(matches!(f.track.delete_project(f.team, project.id).await, Err(DeleteError::HasTimeEntries)));
    f.track.discard_timer(&filed, filed.started_at).await.unwrap();
    f.track.delete_project(f.team, project.id).await.unwrap();
}

pub async fn timers_are_invisible_to_other_teams(store: Ports) {
    let f = fixture(store).await;
    let timer = f.timer(&[]);
    f.track.start_timer(&timer).await.unwrap();
    let other = create_team(&f.store, "Other").await;
    assert_eq!(f.track.running_timer(other, f.user).await.unwrap(), None);
    let entry = timer.clone().into_entry(TimeEntryId::generate(), at("2026-11-24T10:00:00Z"));
    // The timer as another team would name it: its id, under that team.
    let theirs = RunningTimer { team_id: other, ..timer.clone() };
    assert!(matches!(f.track.stop_timer(&theirs, &entry).await, Err(StopTimerError::NotRunning)));
    assert!(matches!(
        f.track.discard_timer(&theirs, timer.started_at).await,
        Err(StopTimerError::NotRunning)
    ));
    assert_eq!(f.running().await, Some(timer));
}
