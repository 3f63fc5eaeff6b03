//! The contract of `RecurringStore`: a recurring invoice comes back as it was stored (its
//! schedule, template and unbilled time included), stays in its team, lists in the order it
//! was made, is replaced only from what was read, and is due when active and its day came.

use billing::ClientId;
use billing::money::Decimal;
use chrono::{NaiveDate, TimeDelta};
use kernel::Id;
use kernel::Replaced;
use recurring::{
    CreateRecurringError, DueDays, Frequency, Mode, NewRecurringInvoice, RecurringInvoice,
    RecurringInvoiceId, Schedule, ScheduleInput, Template, UnbilledTime, Weekday,
};
use tracking::invoicing::{GroupBy, Rounding};
use tracking::{HourlyRate, ProjectId};

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
    let template = Template {
        description: Some(billing::invoice::Description::parse("Retainer — Ёлка").unwrap()),
        line_items: lines(&[("Hosting", "49.9", "1"), ("Support", "80", "2.5")]),
        tax_percentage: Some(Decimal::new(19, 0)),
        tax: None,
        due_days: Some(DueDays::new(14).unwrap()),
    };
    let unbilled = UnbilledTime {
        projects: Some(vec![ProjectId::generate()]),
        group_by: GroupBy::Task,
        rounding: Some(Rounding::parse(15, "up").unwrap()),
        rate: Some(HourlyRate::parse(Decimal::new(9550, 2)).unwrap()),
    };
    let new = NewRecurringInvoice {
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
