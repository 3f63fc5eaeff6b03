//! Recurring invoices made by the real binary: `billable jobs run --at` through a year of
//! dates, on SQLite and on PostgreSQL, where two processes run every pass together as two
//! replicas would. Each schedule makes exactly the invoices its rule names, with
//! consecutive serials, no duplicate, and no flood after a gap.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::collections::BTreeMap;
use std::process::{Child, Output};

use chrono::{Datelike, NaiveDate};
use serde_json::{Value, json};
use support::{Schema, Scratch, billable, serve_rest, team_and_key};

/// A server that serves requests only: the passes are the test's.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(database_url: &str) -> Self {
        let (child, port) = serve_rest(database_url, &[("BILLABLE_RUN_JOBS", "false")]);
        Self { child, port }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn call(
    http: &reqwest::Client,
    port: u16,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> Value {
    let mut request = http.request(method, format!("http://127.0.0.1:{port}{path}")).header("x-api-key", key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    assert!(response.status().is_success(), "{path}: {}", response.status());
    response.json().await.unwrap()
}

/// The invoices made by `jobs run` processes started together at `day`'s 06:00.
fn pass(database_url: &str, day: NaiveDate, processes: usize) -> u64 {
    let at = format!("{day}T06:00:00Z");
    let running: Vec<Child> = (0..processes)
        .map(|_| {
            billable(database_url)
                .args(["jobs", "run", "--at", &at])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    running
        .into_iter()
        .map(|child| {
            let Output { status, stdout, stderr } = child.wait_with_output().unwrap();
            assert!(status.success(), "jobs run --at {at}: {}", String::from_utf8_lossy(&stderr));
            let out = String::from_utf8(stdout).unwrap();
            let [header, line] = out.lines().collect::<Vec<_>>().try_into().unwrap();
            assert_eq!(header, "overdue\treminders\tdispatched\tdone\tretried\tfailed\trecurring_invoices");
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 7, "{line}");
            fields[6].parse::<u64>().unwrap()
        })
        .sum()
}

/// The days the passes run on: the 1st, the 15th and the last of each month of 2027 but
/// for a gap from 1 July to 30 September.
fn pass_days() -> Vec<NaiveDate> {
    let mut days = Vec::new();
    for month in 1..=12 {
        let first = NaiveDate::from_ymd_opt(2027, month, 1).unwrap();
        let last = first.checked_add_months(chrono::Months::new(1)).unwrap().pred_opt().unwrap();
        for day in [first, first.with_day(15).unwrap(), last] {
            if !(7..=9).contains(&day.month()) {
                days.push(day);
            }
        }
    }
    days
}

async fn a_year_of_passes(database_url: &str, processes: usize) {
    let key = team_and_key(database_url);
    let http = reqwest::Client::new();
    let (monthly, bimonthly) = {
        let server = Server::start(database_url);
        let post = async |path: &str, body: Value| {
            call(&http, server.port, &key, reqwest::Method::POST, path, Some(body)).await
        };
        let client = post("/v1/invoices/clients", json!({"name": "Zoë", "email": "zoe@example.com", "line1": "1 Main Street", "postalCode": "1000"})).await;
        let line = json!([{"description": "Retainer", "unitPrice": 1500, "quantity": 1}]);
        let monthly = post(
            "/v1/recurring-invoices",
            json!({"clientId": client["id"], "template": {"lineItems": line},
            "schedule": {"frequency": "monthly", "dayOfMonth": -1}, "startsOn": "2027-01-01", "count": 12}),
        )
        .await;
        let bimonthly = post(
            "/v1/recurring-invoices",
            json!({"clientId": client["id"], "template": {"lineItems": line},
            "schedule": {"frequency": "monthly", "interval": 2, "dayOfMonth": 15}, "startsOn": "2027-01-01"}),
        )
        .await;
        (monthly["id"].as_str().unwrap().to_owned(), bimonthly["id"].as_str().unwrap().to_owned())
    };
    let mut made = 0;
    for day in pass_days() {
        made += pass(database_url, day, processes);
        // A second pass the same day makes nothing more.
        if day.day() == 1 && day.month() == 1 {
            assert_eq!(pass(database_url, day, processes), 0);
        }
    }
    let server = Server::start(database_url);
    let invoices = call(&http, server.port, &key, reqwest::Method::GET, "/v1/invoices", None).await;
    let invoices = invoices.as_array().unwrap();
    let mut by: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for invoice in invoices {
        by.entry(invoice["recurringInvoiceId"].as_str().unwrap().to_owned()).or_default().push((
            invoice["issueDate"].as_str().unwrap()[..10].to_owned(),
            invoice["recurringSequence"].as_u64().unwrap(),
        ));
    }
    for list in by.values_mut() {
        list.sort();
    }
    let expected =
        |days: &[&str]| days.iter().zip(1..).map(|(d, n)| ((*d).to_owned(), n)).collect::<Vec<_>>();
    // July to September unseen: September's made on 1 October, July and August skipped.
    assert_eq!(
        by[&monthly],
        expected(&[
            "2027-01-31",
            "2027-02-28",
            "2027-03-31",
            "2027-04-30",
            "2027-05-31",
            "2027-06-30",
            "2027-09-30",
            "2027-10-31",
            "2027-11-30",
            "2027-12-31"
        ])
    );
    assert_eq!(
        by[&bimonthly],
        expected(&["2027-01-15", "2027-03-15", "2027-05-15", "2027-09-15", "2027-11-15"])
    );
    assert_eq!((invoices.len(), made), (15, 15), "one invoice per period, counted once");
    let mut serials: Vec<&str> = invoices.iter().map(|i| i["serial"].as_str().unwrap()).collect();
    serials.sort_unstable();
    assert_eq!(serials, (1..=15).map(|n| format!("INV-{n:04}")).collect::<Vec<_>>());
    let runs = call(
        &http,
        server.port,
        &key,
        reqwest::Method::GET,
        &format!("/v1/recurring-invoices/{monthly}/runs"),
        None,
    )
    .await;
    let skipped: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "skipped")
        .map(|r| &r["periodStart"])
        .collect();
    assert_eq!(skipped, [&json!("2027-08-31"), &json!("2027-07-31")]);
    let monthly = call(
        &http,
        server.port,
        &key,
        reqwest::Method::GET,
        &format!("/v1/recurring-invoices/{monthly}"),
        None,
    )
    .await;
    assert_eq!((&monthly["status"], &monthly["generatedCount"]), (&json!("completed"), &json!(10)));
}

#[tokio::test]
async fn two_replicas_passing_a_year_together_on_postgres_make_each_invoice_once() {
    let schema = Schema::new("recurring_jobs");
    a_year_of_passes(&schema.url("sslmode=require"), 2).await;
}

#[tokio::test]
async fn a_year_of_passes_on_sqlite_makes_each_invoice_once() {
    let scratch = Scratch::new("recurring-jobs-sqlite");
    a_year_of_passes(&scratch.sqlite_url(), 1).await;
}
