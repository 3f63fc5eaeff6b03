//! What only the PostgreSQL store does: listings served by their indexes, and
//! conversation lines shared by replicas, taken over from one that died.

mod support;

use std::time::Duration;

use accounts::Role;
use billing::store::BillTo;
use billing::{Client, InvoiceFilter, InvoiceStatus};
use chrono::TimeDelta;
use kernel::{Clock, SystemClock};
use store_contract::{Database, create_team, create_user, invoices, tracking_contract, turns};
use tracking::EntryFilter;
use triggers::{Message, TurnError};

#[tokio::test]
async fn entry_filters_are_served_by_indexes() {
    let (sql, ports) = support::open(Database::postgres().await).await;
    let f = tracking_contract::fixture(ports).await;
    let month = tracking_contract::month_of("2026-11-01");
    let (tag, project) = (f.tag("urgent").await, f.project("Website", None).await);
    let section = f.section(&project, "Design").await;
    // A year of a team's time, 600 entries: a tenth of them the fixture user's, a sixtieth
    // on the project, fewer in the section or with the tag.
    let colleague = create_user(&f.store, f.team, Role::Member).await;
    for n in 0..600_i64 {
        let tagged = [&tag];
        let mut entry = f.entry("2026-01-01", if n % 100 == 0 { &tagged } else { &[] });
        entry.date += TimeDelta::hours(14 * n);
        entry.user_id = if n % 10 == 0 { f.user } else { colleague };
        if n % 60 == 0 {
            entry.project_id = Some(project.id);
            entry.section_id = (n % 120 == 0).then_some(section.id);
        }
        f.logged(entry).await;
    }
    let cases = [
        ("time_entries_date", month),
        ("time_entries_user_date", EntryFilter { user: Some(f.user), ..month }),
        ("time_entries_project_date", EntryFilter { project: Some(project.id), ..month }),
        ("time_entries_section_date", EntryFilter { section: Some(section.id), ..month }),
        ("time_entry_tags_tag_entry", EntryFilter { tag: Some(tag.id), ..month }),
    ];
    for (index, filter) in cases {
        let plan = sql.entry_listing_plan(f.team, &filter).await.unwrap().unwrap();
        assert!(plan.contains(index), "{index} serves {filter:?}:\n{plan}");
    }
}

#[tokio::test]
async fn invoice_filters_are_served_by_indexes() {
    let (sql, ports) = support::open(Database::postgres().await).await;
    let f = invoices::fixture(ports).await;
    let all = InvoiceFilter::default();
    // 400 invoices, one a day: one in forty paid, one in forty to another client.
    let other = Client::new(
        f.team,
        invoices::client_details("Other", "other@example.com"),
        invoices::at("2026-01-01"),
    );
    f.billing.create(&other).await.unwrap();
    for n in 0..400_i64 {
        let bill_to = BillTo::Existing(if n % 40 == 1 { other.id } else { f.client });
        let mut draft = f.draft(bill_to, "2025-01-01", &[("Work", "10", "1")]);
        draft.issue_date += TimeDelta::days(n);
        draft.due_date = None;
        if n % 40 == 0 {
            let paid_now = store_contract::invoices::entry(
                billing::ledger::EntryKind::Payment,
                billing::ledger::EntryAmount::AllDue,
                "2026-01-01",
            );
            draft.opening = Some(paid_now);
        }
        f.billing.create_invoice(draft).await.unwrap();
    }
    let cases = [
        ("invoices_listing", InvoiceFilter { issued_from: Some(invoices::at("2026-01-20")), ..all.clone() }),
        ("invoices_status", InvoiceFilter { statuses: vec![InvoiceStatus::Paid], ..all.clone() }),
        ("invoices_client_listing", InvoiceFilter { client: Some(other.id), ..all.clone() }),
    ];
    for (index, filter) in cases {
        let plan = sql.invoice_listing_plan(f.team, &filter).await.unwrap().unwrap();
        assert!(plan.contains(index), "{index} serves {filter:?}:\n{plan}");
    }
}

/// Two processes' lines are one; a process that stops renewing its leases (it died) loses
/// its tickets once they end, and the next in line takes the turn.
#[tokio::test]
async fn replicas_share_lines_and_take_over_a_dead_ones_turn() {
    let store = support::open(Database::postgres().await).await.1;
    let team = create_team(&store, "Acme").await;
    let lease = Duration::from_millis(600);
    let (alive, dying) = (store.turns(lease), store.turns(lease));
    let held = turns::holder(dying.as_ref(), team, "c", 8).await;
    let next = turns::waiter(alive.as_ref(), team, "c", 1).await;
    assert!(!turns::gets_turn_soon(alive.as_ref(), &next).await, "the other replica holds the turn");
    // A live replica renews: its turn outlasts several leases.
    tokio::time::sleep(lease * 2).await;
    assert!(!turns::gets_turn_soon(alive.as_ref(), &next).await, "renewed leases keep the turn");

    drop(dying); // stops renewing, as a killed process does
    let taken = tokio::time::timeout(lease * 3, alive.wait_turn(&next)).await;
    taken.expect("the turn is taken over within the lease and a third").unwrap();
    let late = alive.remember(&held, &[Message::user("from the dead")], SystemClock.now()).await;
    assert!(matches!(late, Err(TurnError::Lost)), "{late:?}");
    let memory = store.agent().recent_messages(team, &turns::key("c"), 10).await.unwrap();
    assert!(memory.is_empty(), "{memory:?}");
}
