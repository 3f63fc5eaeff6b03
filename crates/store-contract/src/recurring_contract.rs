//! The contract of `RecurringStore`: a recurring invoice comes back as it was stored (its
//! schedule, template and unbilled time included), stays in its team, lists in the order it
//! was made, is replaced only from what was read, and is due when active and its day came.

use accounts::AccountStore;
use billing::ClientId;
use billing::money::Decimal;
use chrono::{NaiveDate, TimeDelta};
use kernel::Id;
use kernel::Replaced;
use recurring::{
    CreateRecurringError, DueDays, Frequency, Mode, NewRecurringInvoice, PassRecord, PassRecorded,
    RecurringInvoice, RecurringInvoiceId, RecurringStore, Run, RunStatus, Schedule, ScheduleInput, Template,
    UnbilledTime, Weekday, service,
};
use std::sync::Arc;
use tracking::invoicing::{GroupBy, Rounding};
use tracking::{HourlyRate, ProjectId, TrackStore};

use crate::invoices::{Fixture, at, fixture, lines};
use crate::{Ports, create_team};

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn monthly(starts_on: &str, count: Option<i64>) -> Schedule {
    Schedule::new(&ScheduleInput {
        day_of_month: Some(-1),
        count,
        ..ScheduleInput::starting(Frequency::Monthly, day(starts_on))
    })
    .unwrap()
}

/// A recurring invoice of the fixture's client with every part given.
fn retainer(f: &Fixture, schedule: Schedule, today: &str) -> RecurringInvoice {
    let mut line_items = lines(&[("Hosting", "49.9", "1"), ("Support", "80", "2.5")]);
    line_items[1].discount = Some(billing::Discount::Amount(Decimal::new(1250, 2)));
    let template = Template {
        discount: Some(billing::Discount::Percentage(Decimal::new(25, 1))),
        description: Some(billing::invoice::Description::parse("Retainer — Ёлка").unwrap()),
        line_items,
        tax_percentage: Some(Decimal::new(19, 0)),
        tax: None,
        due_days: Some(DueDays::new(14).unwrap()),
        vat: billing::Vat::new(
            billing::VatCategory::ReverseCharge,
            Some(billing::invoice::ExemptionReason::parse("Reverse charge").unwrap()),
        )
        .unwrap(),
    };
    let unbilled = UnbilledTime {
        projects: Some(vec![ProjectId::generate()]),
        group_by: GroupBy::Task,
        rounding: Some(Rounding::parse(15, "up").unwrap()),
        rate: Some(HourlyRate::parse(Decimal::new(9550, 2)).unwrap()),
        client_projects_only: true,
    };
    let new = NewRecurringInvoice {
        created_by: accounts::UserId::generate(),
        client_id: f.client,
        template,
        schedule,
        mode: Mode::IssueAndSend,
        unbilled_time: Some(unbilled),
    };
    RecurringInvoice::new(RecurringInvoiceId::generate(), f.team, new, day(today), at("2026-11-20T10:00:00Z"))
        .unwrap()
}

pub async fn recurring_invoices_round_trip_and_stay_in_their_team(store: Ports) {
    let f = fixture(store).await;
    let recurring = f.store.recurring();
    let made = retainer(&f, monthly("2027-01-01", Some(12)), "2026-11-20");
    recurring.create_recurring(&made).await.unwrap();
    assert_eq!(recurring.get_recurring(f.team, made.id).await.unwrap(), Some(made.clone()));
    let weekly = Schedule::new(&ScheduleInput {
        interval: 2,
        weekday: Some(Weekday::Friday),
        ends_on: Some(day("2027-12-31")),
        ..ScheduleInput::starting(Frequency::Weekly, day("2027-01-01"))
    })
    .unwrap();
    let plain = RecurringInvoice {
        id: RecurringInvoiceId::generate(),
        schedule: weekly,
        unbilled_time: None,
        mode: Mode::Issue,
        template: Template {
            description: None,
            tax_percentage: None,
            due_days: None,
            ..made.template.clone()
        },
        ..made.clone()
    };
    recurring.create_recurring(&plain).await.unwrap();
    assert_eq!(recurring.get_recurring(f.team, plain.id).await.unwrap(), Some(plain.clone()));

    let other = create_team(&f.store, "Other").await;
    assert_eq!(recurring.get_recurring(other, made.id).await.unwrap(), None);
    assert!(recurring.list_recurring(other, None, 10).await.unwrap().is_empty());
    assert!(!recurring.delete_recurring(other, made.id).await.unwrap());
    let stranger = RecurringInvoice {
        id: RecurringInvoiceId::generate(),
        client_id: ClientId::generate(),
        ..made.clone()
    };
    assert!(matches!(recurring.create_recurring(&stranger).await, Err(CreateRecurringError::UnknownClient)));
    let elsewhere = RecurringInvoice { id: RecurringInvoiceId::generate(), team_id: other, ..made.clone() };
    assert!(
        matches!(recurring.create_recurring(&elsewhere).await, Err(CreateRecurringError::UnknownClient)),
        "another team's client"
    );
    assert!(recurring.delete_recurring(f.team, made.id).await.unwrap());
    assert_eq!(recurring.get_recurring(f.team, made.id).await.unwrap(), None);
    assert_eq!(recurring.list_recurring(f.team, None, 10).await.unwrap(), [plain]);
}

pub async fn recurring_invoices_list_in_order_and_page(store: Ports) {
    let f = fixture(store).await;
    let recurring = f.store.recurring();
    let mut made = Vec::new();
    for _ in 0..5 {
        let one = retainer(&f, monthly("2027-01-01", None), "2026-11-20");
        recurring.create_recurring(&one).await.unwrap();
        made.push(one.id);
    }
    let first = recurring.list_recurring(f.team, None, 3).await.unwrap();
    assert_eq!(first.iter().map(|r| r.id).collect::<Vec<_>>(), made[..3]);
    let rest = recurring.list_recurring(f.team, Some(first[2].id), 3).await.unwrap();
    assert_eq!(rest.iter().map(|r| r.id).collect::<Vec<_>>(), made[3..]);
}

pub async fn a_replacement_never_undoes_a_change_made_meanwhile(store: Ports) {
    let f = fixture(store).await;
    let recurring = f.store.recurring();
    let made = retainer(&f, monthly("2027-01-01", None), "2026-11-20");
    recurring.create_recurring(&made).await.unwrap();
    let paused = made.paused(made.updated_at + TimeDelta::minutes(1)).unwrap();
    assert_eq!(recurring.replace_recurring(&paused, made.updated_at).await.unwrap(), Replaced::Written);
    // A pass that read it before the pause would make it active again: refused.
    let first = made.next.unwrap();
    let pass = made.pass(first.on).unwrap();
    let after_pass = made.passed(&pass, true, made.updated_at + TimeDelta::minutes(2));
    assert_eq!(recurring.replace_recurring(&after_pass, made.updated_at).await.unwrap(), Replaced::Stale);
    assert_eq!(recurring.get_recurring(f.team, made.id).await.unwrap(), Some(paused.clone()));
    let gone = RecurringInvoice { id: RecurringInvoiceId::generate(), ..paused.clone() };
    assert_eq!(recurring.replace_recurring(&gone, paused.updated_at).await.unwrap(), Replaced::Missing);
}

pub async fn the_due_ones_of_every_team_are_the_active_ones_whose_day_came(store: Ports) {
    let f = fixture(store.clone()).await;
    let g = crate::invoices::fixture_for(store, create_team(&f.store, "Other").await).await;
    let recurring = f.store.recurring();
    // Next periods on 31 January (two teams), 28 February, and a paused one on 31 January.
    let january = retainer(&f, monthly("2027-01-01", None), "2026-11-20");
    let theirs = retainer(&g, monthly("2027-01-01", None), "2026-11-20");
    let february = retainer(&f, monthly("2027-02-01", None), "2026-11-20");
    let paused = retainer(&f, monthly("2027-01-01", None), "2026-11-20").paused(at("2026-11-21")).unwrap();
    for one in [&january, &theirs, &february, &paused] {
        recurring.create_recurring(one).await.unwrap();
    }
    let ids = |due: Vec<RecurringInvoice>| due.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert!(recurring.due_recurring(day("2027-01-30"), 10).await.unwrap().is_empty());
    let mut january_ones = vec![january.id, theirs.id];
    january_ones.sort();
    assert_eq!(ids(recurring.due_recurring(day("2027-01-31"), 10).await.unwrap()), january_ones);
    let all = ids(recurring.due_recurring(day("2027-03-01"), 10).await.unwrap());
    assert_eq!(all, [january_ones.clone(), vec![february.id]].concat(), "the earliest first");
    assert_eq!(ids(recurring.due_recurring(day("2027-03-01"), 1).await.unwrap()), january_ones[..1]);
}

/// A retainer of the fixture's client billing 1500 on the last day of each month from
/// January 2027, made on 20 November 2026.
async fn stored_retainer(f: &Fixture) -> RecurringInvoice {
    let made = retainer(f, monthly("2027-01-01", None), "2026-11-20");
    let plain = RecurringInvoice {
        template: Template {
            line_items: lines(&[("Retainer", "1500", "1")]),
            vat: billing::Vat::default(),
            ..made.template.clone()
        },
        unbilled_time: None,
        mode: Mode::Issue,
        ..made
    };
    f.store.recurring().create_recurring(&plain).await.unwrap();
    plain
}

fn ports(f: &Fixture) -> (Arc<dyn RecurringStore>, Arc<dyn AccountStore>, Arc<dyn TrackStore>) {
    (f.store.recurring(), f.store.accounts(), f.store.track())
}

/// Passes every due recurring invoice at `instant`.
async fn pass_at(f: &Fixture, instant: &str) -> service::PassReport {
    let (recurring, accounts, tracking) = ports(f);
    let billing = f.store.billing();
    let ports = service::Ports {
        recurring: &*recurring,
        billing: &*billing,
        accounts: &*accounts,
        tracking: &*tracking,
    };
    service::run_due(ports, at(instant)).await.unwrap()
}

fn statuses(runs: &[Run]) -> Vec<(NaiveDate, RunStatus, bool)> {
    runs.iter().map(|run| (run.period_start, run.status, run.invoice_id.is_some())).collect()
}

pub async fn racing_passes_make_each_period_s_invoice_once_and_skip_the_missed_ones(store: Ports) {
    let f = Arc::new(fixture(store).await);
    let made = stored_retainer(&f).await;
    assert_eq!(pass_at(&f, "2027-01-30T23:00:00Z").await.generated.len(), 0, "not due yet");
    let racing: Vec<_> = (0..4)
        .map(|_| {
            let f = f.clone();
            tokio::spawn(async move { pass_at(&f, "2027-01-31T06:00:00Z").await.generated.len() })
        })
        .collect();
    let mut generated = 0;
    for task in racing {
        generated += task.await.unwrap();
    }
    assert_eq!(generated, 1, "one invoice, whoever won");
    let recurring = f.store.recurring();
    let after = recurring.get_recurring(f.team, made.id).await.unwrap().unwrap();
    assert_eq!((after.generated_count, after.next.map(|n| n.on)), (1, Some(day("2027-02-28"))));
    // Down through February and March: April's is made, the two missed are recorded.
    let report = pass_at(&f, "2027-04-30T06:00:00Z").await;
    assert_eq!((report.generated.len(), report.skipped), (1, 2));
    let april = &report.generated[0];
    assert_eq!(april.recurrence.map(|r| (r.recurring_invoice_id, r.sequence)), Some((made.id, 2)));
    assert_eq!(april.issue_date, at("2027-04-30"));
    assert_eq!(april.due_date, Some(at("2027-05-14")));
    // The template's discount of the whole reaches each invoice: 1500 less 2.5 %, and 19 % tax.
    assert_eq!(april.discount, Some(billing::Discount::Percentage(Decimal::new(25, 1))));
    assert_eq!(
        (april.totals.discount_total, april.totals.total),
        (Decimal::new(3750, 2), Decimal::new(174_038, 2))
    );
    let runs = recurring.list_runs(f.team, made.id, None, 10).await.unwrap();
    assert_eq!(
        statuses(&runs),
        [
            (day("2027-04-30"), RunStatus::Generated, true),
            (day("2027-03-31"), RunStatus::Skipped, false),
            (day("2027-02-28"), RunStatus::Skipped, false),
            (day("2027-01-31"), RunStatus::Generated, true),
        ]
    );
    assert_eq!(runs[0].invoice_id, Some(april.id));
    assert_eq!(
        statuses(&recurring.list_runs(f.team, made.id, Some(day("2027-03-31")), 1).await.unwrap()),
        [(day("2027-02-28"), RunStatus::Skipped, false)]
    );
    assert_eq!(f.serials().await, [1, 2]);
    let other = create_team(&f.store, "Other").await;
    assert!(recurring.list_runs(other, made.id, None, 10).await.unwrap().is_empty());
}

pub async fn a_pass_that_read_before_a_pause_writes_nothing(store: Ports) {
    let f = fixture(store).await;
    let recurring = f.store.recurring();
    let made = stored_retainer(&f).await;
    let paused = made.paused(made.updated_at + TimeDelta::minutes(1)).unwrap();
    recurring.replace_recurring(&paused, made.updated_at).await.unwrap();
    let pass = made.pass(day("2027-01-31")).unwrap();
    let record = PassRecord {
        recurring: made.passed(&pass, false, made.updated_at + TimeDelta::minutes(2)),
        read_at: made.updated_at,
        runs: vec![Run::without_invoice(
            pass.generate.unwrap(),
            RunStatus::Skipped,
            "nothing",
            at("2027-01-31"),
        )],
        invoice: None,
    };
    assert!(matches!(recurring.record_pass(&record).await.unwrap(), PassRecorded::Stale));
    assert_eq!(recurring.get_recurring(f.team, made.id).await.unwrap(), Some(paused));
    assert!(recurring.list_runs(f.team, made.id, None, 10).await.unwrap().is_empty());
    assert!(pass_at(&f, "2027-03-31T06:00:00Z").await.generated.is_empty(), "paused");
}

pub async fn a_run_outlives_its_invoice_and_goes_with_its_recurring_invoice(store: Ports) {
    let f = fixture(store).await;
    let recurring = f.store.recurring();
    let made = stored_retainer(&f).await;
    let invoice = pass_at(&f, "2027-01-31T06:00:00Z").await.generated.remove(0);
    f.billing.delete_invoice(f.team, invoice.id, at("2027-02-01")).await.unwrap();
    let runs = recurring.list_runs(f.team, made.id, None, 10).await.unwrap();
    assert_eq!(statuses(&runs), [(day("2027-01-31"), RunStatus::Generated, false)]);
    assert!(recurring.delete_recurring(f.team, made.id).await.unwrap());
    assert!(recurring.list_runs(f.team, made.id, None, 10).await.unwrap().is_empty());
}
