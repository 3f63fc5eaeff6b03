//! Recurring invoices' schedules against an oracle: for every pattern, start and end, the
//! days billable bills on are the days python-dateutil's RFC 5545 `rrule` expands from the
//! rule the schedule states (`Schedule::rrule`), by `tests/recurring/rrule_oracle.py`.

use std::process::Command;

use chrono::{Days, NaiveDate};
use kernel::Words;
use recurring::{Frequency, Schedule, ScheduleInput, Weekday};
use serde_json::json;

/// How many of each schedule's first days are compared.
const DAYS: usize = 24;

fn start_days() -> Vec<NaiveDate> {
    let first = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
    // Every 37th day for six years (every weekday and day of the month comes round), and the
    // days where calendars go wrong: month ends, a leap day, a year's last day.
    let mut days: Vec<NaiveDate> = (0..60).map(|n| first + Days::new(37 * n)).collect();
    for text in ["2027-01-31", "2027-02-28", "2028-02-29", "2028-03-31", "2027-12-31", "2029-04-30"] {
        days.push(text.parse().unwrap());
    }
    days
}

fn inputs(starts_on: NaiveDate) -> Vec<ScheduleInput> {
    let base = ScheduleInput::starting(Frequency::Weekly, starts_on);
    let mut patterns = vec![base.clone()];
    for weekday in Weekday::ALL {
        patterns.push(ScheduleInput { weekday: Some(*weekday), ..base.clone() });
    }
    for day in [1, 15, 28, -1] {
        patterns.push(ScheduleInput {
            frequency: Frequency::Monthly,
            day_of_month: Some(day),
            ..base.clone()
        });
        patterns.push(ScheduleInput {
            frequency: Frequency::Yearly,
            day_of_month: Some(day),
            ..base.clone()
        });
    }
    for month in [1, 2, 6, 12] {
        patterns.push(ScheduleInput {
            frequency: Frequency::Yearly,
            day_of_month: Some(-1),
            month: Some(month),
            ..base.clone()
        });
    }
    let mut inputs = Vec::new();
    for pattern in patterns {
        for interval in [1, 2, 3, 7] {
            let pattern = ScheduleInput { interval, ..pattern.clone() };
            inputs.push(pattern.clone());
            inputs.push(ScheduleInput { count: Some(5), ..pattern.clone() });
            inputs.push(ScheduleInput { ends_on: Some(starts_on + Days::new(400)), ..pattern });
        }
    }
    inputs
}

#[test]
fn schedules_bill_on_the_days_of_their_rfc_5545_rule() {
    let scratch = std::env::temp_dir().join(format!("billable-rrule-{}.jsonl", uuid::Uuid::new_v4()));
    let mut lines = String::new();
    let mut count = 0;
    for starts_on in start_days() {
        for input in inputs(starts_on) {
            let Ok(schedule) = Schedule::new(&input) else {
                // Only an end before the first day is refused here; the oracle has no day either.
                assert!(input.ends_on.is_some(), "{input:?} refused");
                continue;
            };
            let mut days: Vec<String> =
                schedule.occurrences_from(1).take(DAYS + 1).map(|o| o.on.to_string()).collect();
            let complete = days.len() <= DAYS;
            days.truncate(DAYS);
            let case = json!({"rrule": schedule.rrule(), "startsOn": starts_on.to_string(), "days": days,
                "complete": complete});
            lines.push_str(&case.to_string());
            lines.push('\n');
            count += 1;
        }
    }
    assert!(count > 5_000, "{count} schedules");
    std::fs::write(&scratch, lines).unwrap();
    let oracle = format!("{}/recurring/rrule_oracle.py", env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("python3").arg(&oracle).arg(&scratch).output().unwrap_or_else(|e| {
        panic!("python3 {oracle}: {e} (pip install -r tests/recurring/requirements.txt)")
    });
    let _ = std::fs::remove_file(&scratch);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}{}", String::from_utf8_lossy(&output.stderr));
    assert!(said.contains(&format!("{count} schedules")), "{said}");
}
