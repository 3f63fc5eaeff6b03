//! From tracked time to invoice lines: which entries may be billed, how each entry's
//! duration is rounded, how entries group into lines, and at what rate each line bills.
//! What Harvest calls "create an invoice from tracked time", as pure rules; the use case
//! that reads the entries and stores the invoice wires them to the ports.

use std::collections::BTreeMap;

use billing::LineInput;
use billing::invoice::Description as LineDescription;
use billing::money::{Decimal, MAX_LINE_ITEMS, QUANTITY, RoundingStrategy};
use kernel::{InvalidValue, Words};

use crate::{HourlyRate, Project, ProjectId, TimeEntry, TimeEntryId};

/// Checks the projects a billing of time names (`wanted`) against the team's `projects`:
/// each must be the team's, and one an invoice of `client` may bill
/// ([`Project::billable_for`]).
pub fn check_wanted(
    projects: &[Project],
    wanted: &[ProjectId],
    client: Option<billing::ClientId>,
    client_projects_only: bool,
) -> Result<(), TimeBillingRule> {
    for id in wanted {
        let project = projects.iter().find(|p| p.id == *id).ok_or(TimeBillingRule::UnknownProject(*id))?;
        if !project.billable_for(client, client_projects_only) {
            return Err(TimeBillingRule::NotTheClientsProject(*id));
        }
    }
    Ok(())
}

/// Whether `entry` may be billed now: marked billable and not billed yet.
pub fn is_billable(entry: &TimeEntry) -> bool {
    entry.billable && entry.invoice_id.is_none()
}

/// Which way a duration goes to a whole step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    Up,
    Down,
    /// To the nearer step; a duration halfway goes up.
    Nearest,
}

kernel::words!(RoundingMode {
    Up => "up",
    Down => "down",
    Nearest => "nearest",
});

/// How each entry's duration is rounded before a line sums it (Kimai's, Harvest's and
/// Toggl's rounding). The entries keep their own durations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounding {
    step_seconds: u64,
    mode: RoundingMode,
}

impl Rounding {
    /// Rounding to steps of `minutes` (1 to 60) in `mode` (`up`, `down`, `nearest`).
    pub fn parse(minutes: i64, mode: &str) -> Result<Self, TimeBillingRule> {
        let minutes = u64::try_from(minutes)
            .ok()
            .filter(|m| (1..=60).contains(m))
            .ok_or(TimeBillingRule::RoundingStep)?;
        let mode = RoundingMode::parse_word(mode).map_err(TimeBillingRule::RoundingMode)?;
        Ok(Self { step_seconds: minutes * 60, mode })
    }

    /// Its step in minutes, as [`Rounding::parse`] takes it.
    pub fn minutes(self) -> i64 {
        i64::try_from(self.step_seconds / 60).unwrap_or(i64::MAX)
    }

    pub fn mode(self) -> RoundingMode {
        self.mode
    }

    /// `seconds` rounded to a whole number of steps.
    pub fn apply(self, seconds: u64) -> u64 {
        let step = self.step_seconds;
        let (whole, rest) = (seconds / step, seconds % step);
        let up = match self.mode {
            RoundingMode::Up => rest > 0,
            RoundingMode::Down => false,
            RoundingMode::Nearest => rest * 2 >= step,
        };
        (whole + u64::from(up)).saturating_mul(step)
    }
}

/// What makes one line of billed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupBy {
    /// One line per project (the default).
    #[default]
    Project,
    /// One line per task name (and rate, when a task's time is billed at several).
    Task,
    /// One line per entry, named by its date and task.
    Entry,
}

kernel::words!(GroupBy {
    Project => "project",
    Task => "task",
    Entry => "entry",
});

impl GroupBy {
    pub fn parse(text: &str) -> Result<Self, InvalidValue> {
        Self::parse_word(text)
    }
}

/// A group's hours as a line's quantity: `seconds ÷ 3600` to 6 decimals (the most a
/// quantity has), half away from zero. The line's amount is then `unitPrice × quantity`
/// rounded once, so the line rule of every invoice, and EN 16931's, holds for it.
pub fn hours(seconds: u64) -> Decimal {
    (Decimal::from(seconds) / Decimal::from(3600))
        .round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero)
}

/// Seconds as hours the way reports show them (4 decimals, half away from zero), written
/// out with trailing zeros dropped: for any number of seconds a report can sum (below
/// 2^110), where a decimal would overflow.
pub fn hours_text(seconds: u128) -> String {
    let Some(ten_thousandths) = seconds.checked_mul(20_000).map(|twice| twice.saturating_add(3600) / 7200)
    else {
        return String::new();
    };
    let (whole, fraction) = (ten_thousandths / 10_000, ten_thousandths % 10_000);
    let fraction = format!("{fraction:04}");
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() { whole.to_string() } else { format!("{whole}.{fraction}") }
}

/// A rule of billing time that a request broke, in the domain's words; each front end
/// words it for its callers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeBillingRule {
    #[error("a rounding step is 1 to 60 minutes")]
    RoundingStep,
    #[error("the rounding mode {0}")]
    RoundingMode(InvalidValue),
    /// A project asked for is not the team's.
    #[error("no such project in the team: {0}")]
    UnknownProject(ProjectId),
    /// A project asked for is another client's, or, where only the client's own projects
    /// are billed, no client's in particular.
    #[error("the project {0} is not the invoice's client's")]
    NotTheClientsProject(ProjectId),
    #[error("no billable time that is not billed yet in the days")]
    NoTime,
    /// Time to bill on projects without an hourly rate, and no rate given for all.
    #[error("a rate is needed: no hourly rate is set on {}", .projects.join(", "))]
    Unrated { projects: Vec<String> },
    #[error("the rounding leaves no time to bill")]
    RoundedAway,
    /// More lines than an invoice holds.
    #[error("the grouping makes {lines} lines, and an invoice holds at most {MAX_LINE_ITEMS}")]
    TooManyLines { lines: usize },
    /// One line's hours past what a line's quantity holds.
    #[error("the time of the line {description:?} is more hours than a line holds")]
    LineTooLong { description: String },
    /// Time billed to a client in another currency than the team's, at the projects'
    /// rates, which are in the team's: the rate in the client's currency is given.
    #[error("a rate in the client's currency is needed: the projects' rates are in the team's")]
    RateInClientCurrency,
    /// A line's description (a project's title, a task name) is not one a line takes.
    #[error("a line's description {0}")]
    LineDescription(InvalidValue),
    /// Every entry to bill was left out: none can be billed ([`SkippedEntry`]).
    #[error("none of the {entries} entries to bill can be billed: each is more hours than a line holds")]
    NothingBillable { entries: usize },
}

/// An entry left out of the invoice, and why; it stays unbilled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedEntry {
    pub id: TimeEntryId,
    pub reason: SkipReason,
}

/// Why an entry cannot be billed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    /// Its own time is more hours than a line's quantity holds.
    #[error("its {hours} hours are more than an invoice line holds (at most {} hours)", QUANTITY.max)]
    LongerThanALine { hours: Decimal },
    /// Its line holds as many hours as a line can without it.
    #[error(
        "its line \"{description}\" would come to more hours than a line holds (at most {} hours); bill it \
         with groupBy entry, or bill fewer days",
        QUANTITY.max
    )]
    LineFull { description: String },
}

/// The lines that bill the time, and the entries left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeLines {
    pub lines: Vec<TimeLine>,
    /// In the order of the entries given.
    pub skipped: Vec<SkippedEntry>,
}

/// The name of the line of time logged on no project.
pub const NO_PROJECT: &str = "Time without a project";

/// One line of billed time: what it says, its hours, its rate, and the entries it bills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeLine {
    pub description: LineDescription,
    pub hours: Decimal,
    pub rate: HourlyRate,
    pub entries: Vec<TimeEntryId>,
}

impl TimeLine {
    /// The invoice line: `hours` at `rate`; the amount follows the invoice's rule.
    pub fn line_input(&self) -> LineInput {
        LineInput {
            discount: None,
            description: self.description.clone(),
            unit_price: self.rate.amount(),
            quantity: self.hours,
            amount: None,
            unit_code: Some(billing::UnitCode::hour()),
            vat: billing::LineVat::default(),
        }
    }
}

/// The lines that bill `entries` (already chosen: billable, in range, of the projects
/// asked for), grouped by `group_by`, each entry's duration rounded by `rounding` first.
/// Each line bills at `rate` when given, else at its project's rate. `projects` holds at
/// least the projects the entries are on.
///
/// Refused, naming the field: no entry (`from`); an entry whose project has no rate while
/// no `rate` is given (`rate`, listing those projects). A group whose rounded time is
/// nothing makes no line (its entries are billed all the same, at nothing); when no line
/// is left, the refusal says the rounding took it.
///
/// An entry that cannot be billed is left out, and named with why, so that it does not
/// hold up the rest: one of more hours than a line's quantity holds, or one that would
/// take its line past that (entries join their line in the order given). When every entry
/// is left out, nothing is made.
pub fn time_lines(
    entries: &[TimeEntry],
    projects: &[Project],
    group_by: GroupBy,
    rate: Option<HourlyRate>,
    rounding: Option<Rounding>,
) -> Result<TimeLines, TimeBillingRule> {
    if entries.is_empty() {
        return Err(TimeBillingRule::NoTime);
    }
    let project = |id: Option<ProjectId>| id.and_then(|id| projects.iter().find(|p| p.id == id));
    let project_name = |id: Option<ProjectId>| project(id).map_or(NO_PROJECT, |p| p.title.as_str());
    let mut unrated: Vec<&str> = entries
        .iter()
        .filter(|entry| rate.is_none() && project(entry.project_id).and_then(|p| p.rate).is_none())
        .map(|entry| project_name(entry.project_id))
        .collect();
    if !unrated.is_empty() {
        unrated.sort_unstable();
        unrated.dedup();
        return Err(TimeBillingRule::Unrated { projects: unrated.into_iter().map(str::to_owned).collect() });
    }
    // Ordered keys make the lines' order: by project title, task name, or entry date.
    let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
    let mut skipped = Vec::new();
    for entry in entries {
        let line_rate = rate.or_else(|| project(entry.project_id).and_then(|p| p.rate));
        let Some(line_rate) = line_rate else { continue };
        let (key, description) = match group_by {
            GroupBy::Project => {
                let name = project_name(entry.project_id);
                // Time on no project comes last.
                let order =
                    if entry.project_id.is_some() { name.to_lowercase() } else { "\u{10FFFF}".to_owned() };
                (
                    (order, entry.project_id.map(|id| id.to_string()).unwrap_or_default(), String::new()),
                    name.to_owned(),
                )
            }
            GroupBy::Task => {
                let name = entry.task_name.as_str();
                ((name.to_lowercase(), name.to_owned(), line_rate.amount().to_string()), name.to_owned())
            }
            GroupBy::Entry => {
                let day = entry.date.format("%Y-%m-%d").to_string();
                let order = format!("{day} {} {}", entry.created_at.to_rfc3339(), entry.id);
                ((order, String::new(), String::new()), format!("{day} {}", entry.task_name.as_str()))
            }
        };
        let seconds = rounding.map_or(entry.duration.get(), |r| r.apply(entry.duration.get()));
        if hours(seconds) > QUANTITY.max {
            skipped.push(SkippedEntry {
                id: entry.id,
                reason: SkipReason::LongerThanALine { hours: hours(seconds) },
            });
            continue;
        }
        let group = groups.entry(key).or_insert_with(|| Group {
            description,
            rate: line_rate,
            seconds: 0,
            entries: Vec::new(),
        });
        let summed = group.seconds.saturating_add(seconds);
        if hours(summed) > QUANTITY.max {
            let reason = SkipReason::LineFull { description: group.description.clone() };
            skipped.push(SkippedEntry { id: entry.id, reason });
            continue;
        }
        group.seconds = summed;
        group.entries.push(entry.id);
    }
    groups.retain(|_, group| !group.entries.is_empty());
    if groups.is_empty() {
        return Err(TimeBillingRule::NothingBillable { entries: skipped.len() });
    }
    let lines: Vec<TimeLine> =
        groups.into_values().filter(|group| group.seconds > 0).map(Group::line).collect::<Result<_, _>>()?;
    if lines.is_empty() {
        return Err(TimeBillingRule::RoundedAway);
    }
    if lines.len() > MAX_LINE_ITEMS {
        return Err(TimeBillingRule::TooManyLines { lines: lines.len() });
    }
    Ok(TimeLines { lines, skipped })
}

/// The entries of one line as they are summed.
struct Group {
    description: String,
    rate: HourlyRate,
    seconds: u64,
    entries: Vec<TimeEntryId>,
}

impl Group {
    fn line(self) -> Result<TimeLine, TimeBillingRule> {
        // Entries that would take it past a line's hours were left out.
        let hours = QUANTITY
            .check(hours(self.seconds))
            .map_err(|_| TimeBillingRule::LineTooLong { description: self.description.clone() })?;
        let description =
            LineDescription::parse(self.description).map_err(TimeBillingRule::LineDescription)?;
        Ok(TimeLine { description, hours, rate: self.rate, entries: self.entries })
    }
}

#[cfg(test)]
mod tests {
    use accounts::{TeamId, UserId};
    use chrono::{DateTime, TimeDelta, Utc};
    use kernel::Id;

    use super::*;

    #[test]
    fn report_hours_are_written_to_four_decimals_for_any_sum() {
        for seconds in [0_u64, 1, 18, 36_000, 5400, 3601, 9_007_199_254_740_991] {
            let four = (Decimal::from(seconds) / Decimal::from(3600))
                .round_dp_with_strategy(4, RoundingStrategy::MidpointAwayFromZero);
            assert_eq!(hours_text(u128::from(seconds)), four.normalize().to_string(), "{seconds}");
        }
        let beyond = u128::from(9_007_199_254_740_991_u64) * 1025;
        assert_eq!(hours_text(beyond), "2564549787808198.8264");
    }
    use crate::{DurationSeconds, TaskName, Title};

    fn rate(text: &str) -> Option<HourlyRate> {
        HourlyRate::parse(billing::money::parse_decimal(text).ok()?).ok()
    }

    fn project(title: &str, hourly: Option<HourlyRate>) -> Project {
        Project::new(TeamId::generate(), Title::parse(title).unwrap(), None, Utc::now()).with_rate(hourly)
    }

    fn entry(day: u32, minutes: u64, task: &str, project: Option<&Project>) -> TimeEntry {
        let date: DateTime<Utc> = format!("2026-11-{day:02}T09:00:00Z").parse().unwrap();
        TimeEntry {
            id: TimeEntryId::generate(),
            team_id: TeamId::generate(),
            user_id: UserId::generate(),
            duration: DurationSeconds::parse(i128::from(minutes * 60)).unwrap(),
            task_name: TaskName::parse(task).unwrap(),
            description: None,
            date,
            project_id: project.map(|p| p.id),
            section_id: None,
            tags: Vec::new(),
            ai_generated: false,
            billable: true,
            invoice_id: None,
            created_at: date + TimeDelta::hours(1),
            updated_at: date,
        }
    }

    /// Each line as (description, hours, rate).
    fn shown(lines: &[TimeLine]) -> Vec<(String, String, String)> {
        lines
            .iter()
            .map(|l| (l.description.as_str().to_owned(), l.hours.to_string(), l.rate.amount().to_string()))
            .collect()
    }

    fn row(description: &str, hours: &str, rate: &str) -> (String, String, String) {
        (description.to_owned(), hours.to_owned(), rate.to_owned())
    }

    #[test]
    fn rounding_goes_by_whole_steps() {
        let quarter = |mode| Rounding::parse(15, mode).unwrap();
        let cases = [
            ("up", 1, 900),
            ("up", 900, 900),
            ("up", 901, 1800),
            ("down", 899, 0),
            ("down", 1799, 900),
            ("nearest", 449, 0),
            ("nearest", 450, 900),
            ("nearest", 1349, 900),
            ("nearest", 1350, 1800),
        ];
        for (mode, seconds, expected) in cases {
            assert_eq!(quarter(mode).apply(seconds), expected, "{mode} {seconds}");
        }
        assert_eq!(Rounding::parse(1, "up").unwrap().apply(61), 120);
        assert_eq!(Rounding::parse(0, "up").unwrap_err(), TimeBillingRule::RoundingStep);
        assert_eq!(Rounding::parse(61, "up").unwrap_err(), TimeBillingRule::RoundingStep);
        assert!(matches!(Rounding::parse(15, "sideways").unwrap_err(), TimeBillingRule::RoundingMode(_)));
    }

    #[test]
    fn hours_have_six_decimals_rounded_half_away_from_zero() {
        for (seconds, expected) in [
            (5400, "1.5"),
            (1, "0.000278"),
            (3599, "0.999722"),
            (18, "0.005"),
            (3600 * 160, "160"),
            (7, "0.001944"),
        ] {
            assert_eq!(hours(seconds).normalize().to_string(), expected, "{seconds}");
        }
    }

    #[test]
    fn time_groups_by_project_at_each_projects_rate() {
        let (site, app) = (project("Website", rate("95.5")), project("app", rate("120")));
        let entries = [
            entry(2, 90, "Design", Some(&site)),
            entry(3, 30, "Build", Some(&app)),
            entry(4, 45, "Build", Some(&site)),
        ];
        let lines =
            time_lines(&entries, &[site.clone(), app.clone()], GroupBy::Project, None, None).unwrap().lines;
        assert_eq!(shown(&lines), [row("app", "0.5", "120"), row("Website", "2.25", "95.5")]);
        assert_eq!(lines[1].entries, [entries[0].id, entries[2].id]);
        let input = lines[1].line_input();
        assert_eq!(
            (input.unit_price, input.quantity, input.amount),
            (rate("95.5").unwrap().amount(), lines[1].hours, None)
        );
        // A rate given overrides the projects'.
        let flat = time_lines(&entries, &[site, app], GroupBy::Project, rate("80"), None).unwrap().lines;
        assert_eq!(shown(&flat), [row("app", "0.5", "80"), row("Website", "2.25", "80")]);
    }

    #[test]
    fn time_groups_by_task_or_entry_and_time_without_a_project_comes_last() {
        let (site, app) = (project("Website", rate("95.5")), project("App", rate("120")));
        let entries = [
            entry(3, 60, "Build", Some(&app)),
            entry(2, 30, "Build", Some(&site)),
            entry(2, 15, "Admin", None),
            entry(4, 60, "Build", Some(&site)),
        ];
        let projects = [site, app];
        let by_task = time_lines(&entries, &projects, GroupBy::Task, rate("100"), None).unwrap().lines;
        assert_eq!(shown(&by_task), [row("Admin", "0.25", "100"), row("Build", "2.5", "100")]);
        let rated = &entries[..2];
        let by_task = time_lines(rated, &projects, GroupBy::Task, None, None).unwrap().lines;
        assert_eq!(shown(&by_task), [row("Build", "1", "120"), row("Build", "0.5", "95.5")]);
        let by_entry = time_lines(&entries, &projects, GroupBy::Entry, rate("100"), None).unwrap().lines;
        let days: Vec<String> = by_entry.iter().map(|l| l.description.as_str().to_owned()).collect();
        assert_eq!(
            days,
            ["2026-11-02 Build", "2026-11-02 Admin", "2026-11-03 Build", "2026-11-04 Build"]
                .map(String::from)
        );
        let by_project = time_lines(&entries, &projects, GroupBy::Project, rate("100"), None).unwrap().lines;
        let names: Vec<&str> = by_project.iter().map(|l| l.description.as_str()).collect();
        assert_eq!(names, ["App", "Website", NO_PROJECT]);
    }

    #[test]
    fn entries_too_long_to_bill_are_left_out_and_named() {
        let site = project("Website", rate("100"));
        let mut longest = entry(2, 60, "Build", Some(&site));
        longest.duration = DurationSeconds::parse(i128::from(DurationSeconds::MAX)).unwrap();
        let just_under = 3600 * 999_999_000_u64;
        let mut big = entry(3, 60, "Build", Some(&site));
        big.duration = DurationSeconds::parse(i128::from(just_under)).unwrap();
        let (small, also_small) = (entry(4, 90, "Build", Some(&site)), entry(5, 30, "Build", Some(&site)));
        let mut overflowing = entry(6, 60, "Build", Some(&site));
        overflowing.duration = DurationSeconds::parse(i128::from(3600 * 2000_u64)).unwrap();
        let entries = [longest.clone(), big.clone(), small.clone(), overflowing.clone(), also_small.clone()];
        let made = time_lines(&entries, std::slice::from_ref(&site), GroupBy::Project, None, None).unwrap();
        assert_eq!(shown(&made.lines), [row("Website", "999999002", "100")]);
        assert_eq!(made.lines[0].entries, [big.id, small.id, also_small.id]);
        assert_eq!(
            made.skipped,
            [
                SkippedEntry {
                    id: longest.id,
                    reason: SkipReason::LongerThanALine { hours: hours(DurationSeconds::MAX) }
                },
                SkippedEntry {
                    id: overflowing.id,
                    reason: SkipReason::LineFull { description: "Website".into() }
                },
            ]
        );
        assert_eq!(
            made.skipped[0].reason.to_string(),
            "its 2501999792983.608611 hours are more than an invoice line holds (at most 1000000000 hours)"
        );
        // Billed on its own line, the entry that did not fit its project's line fits.
        let by_entry =
            time_lines(&entries[1..], std::slice::from_ref(&site), GroupBy::Entry, None, None).unwrap();
        assert_eq!((by_entry.lines.len(), by_entry.skipped.len()), (4, 0));
        assert_eq!(
            time_lines(&[longest], &[site], GroupBy::Project, None, None).unwrap_err(),
            TimeBillingRule::NothingBillable { entries: 1 }
        );
    }

    #[test]
    fn each_entry_is_rounded_before_its_line_sums_it() {
        let site = project("Website", rate("100"));
        let entries =
            [entry(2, 10, "a", Some(&site)), entry(3, 10, "b", Some(&site)), entry(4, 10, "c", Some(&site))];
        let projects = [site];
        let up = Rounding::parse(15, "up").ok();
        let lines = time_lines(&entries, &projects, GroupBy::Project, None, up).unwrap().lines;
        assert_eq!(shown(&lines), [row("Website", "0.75", "100")]);
        let down = Rounding::parse(15, "down").ok();
        let error = time_lines(&entries, &projects, GroupBy::Project, None, down).unwrap_err();
        assert_eq!(error, TimeBillingRule::RoundedAway);
    }

    #[test]
    fn refusals_say_what_stops_the_billing() {
        let (unrated, other) = (project("Website", None), project("App", None));
        let entries =
            [entry(2, 60, "a", Some(&unrated)), entry(3, 60, "b", Some(&other)), entry(4, 60, "c", None)];
        let error = time_lines(&entries, &[unrated, other], GroupBy::Project, None, None).unwrap_err();
        let projects = ["App", NO_PROJECT, "Website"].map(str::to_owned).to_vec();
        assert_eq!(error, TimeBillingRule::Unrated { projects });
        let error = time_lines(&[], &[], GroupBy::Project, rate("1"), None).unwrap_err();
        assert_eq!(error, TimeBillingRule::NoTime);
        assert!(!is_billable(&TimeEntry { billable: false, ..entries[0].clone() }));
        let billed = TimeEntry { invoice_id: Some(billing::InvoiceId::generate()), ..entries[0].clone() };
        assert!(!is_billable(&billed) && is_billable(&entries[0]));
        assert_eq!(GroupBy::parse("task"), Ok(GroupBy::Task));
        assert!(GroupBy::parse("Task").is_err());
    }
}
