//! `billable backup` taken while the service takes writes, and `billable restore` of it
//! into an empty database, on SQLite and PostgreSQL: every write acknowledged before the
//! backup began is restored whole, and nothing is restored half-written.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use support::{Schema, Scratch, admin_url, billable, cli, psql, serve_rest, team_and_key};

/// How many writes the service takes while the backup runs.
const WRITES: usize = 1_000;
/// How many of them are acknowledged before the backup begins.
const BEFORE_BACKUP: usize = 200;

#[derive(Clone)]
struct Api {
    client: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    fn new(port: u16, key: &str) -> Self {
        Self { client: reqwest::Client::new(), base: format!("http://127.0.0.1:{port}"), key: key.to_owned() }
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> reqwest::Response {
        let mut request =
            self.client.request(method, format!("{}{path}", self.base)).header("X-API-Key", &self.key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        request.send().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let answer = self.send(reqwest::Method::POST, path, Some(body)).await;
        assert_eq!(answer.status(), 201, "POST {path}");
        answer.json().await.unwrap()
    }

    async fn get(&self, path: &str) -> Value {
        let answer = self.send(reqwest::Method::GET, path, None).await;
        assert_eq!(answer.status(), 200, "GET {path}");
        answer.json().await.unwrap()
    }

    async fn bytes(&self, path: &str) -> Vec<u8> {
        let answer = self.send(reqwest::Method::GET, path, None).await;
        assert_eq!(answer.status(), 200, "GET {path}");
        answer.bytes().await.unwrap().to_vec()
    }

    /// An invoice of five lines; returns it as the API answered.
    async fn invoice(&self, n: usize) -> Value {
        let lines: Vec<_> = (1..=5)
            .map(|line| json!({"description": format!("Work {n}.{line}"), "unitPrice": 10 * line + n % 7, "quantity": line}))
            .collect();
        self.post(
            "/v1/invoices",
            json!({"client": {"name": format!("Client {}", n % 13), "email": "billing@client.example"}, "lineItems": lines}),
        )
        .await
    }
}

/// A server, killed when the test ends however it ends.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A write the service acknowledged, and when.
enum Acknowledged {
    Invoice { id: String, serial: String, total: i64, at: Instant },
    Payment { id: String, invoice: String, at: Instant },
}

impl Acknowledged {
    fn at(&self) -> Instant {
        match self {
            Self::Invoice { at, .. } | Self::Payment { at, .. } => *at,
        }
    }
}

/// An amount of the API in cents, exactly: `120.79` (a number or a string) is 12079.
fn cents(value: &Value) -> i64 {
    let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
    let (units, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let fraction = format!("{fraction:0<2}");
    assert_eq!(fraction.len(), 2, "{text} has no more than two decimals");
    units.parse::<i64>().unwrap() * 100 + fraction.parse::<i64>().unwrap()
}

/// The counter in an invoice serial (`INV-0042` is 42).
fn counter(serial: &str) -> u64 {
    serial.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().unwrap()
}

/// What the writers and the backup did: every write acknowledged, and when the backup
/// began and ended.
struct Run {
    acknowledged: Vec<Acknowledged>,
    began: Instant,
    ended: Instant,
}

/// [`WRITES`] writes from 32 clients, each turn an invoice and then a payment of 1.00 on
/// it, with `billable backup` of `source` into `file` begun once [`BEFORE_BACKUP`] are
/// acknowledged.
async fn write_while_backing_up(api: &Api, source: &str, file: &Path) -> Run {
    let acknowledged = Arc::new(Mutex::new(Vec::new()));
    let started = Arc::new(AtomicUsize::new(0));
    let (progress, mut watch) = tokio::sync::watch::channel(0_usize);
    let progress = Arc::new(progress);
    let mut writers = Vec::new();
    for _ in 0..32 {
        let (api, acknowledged, started, progress) =
            (api.clone(), acknowledged.clone(), started.clone(), progress.clone());
        writers.push(tokio::spawn(async move {
            let acknowledge = |write: Acknowledged| {
                acknowledged.lock().unwrap().push(write);
                progress.send_modify(|count| *count += 1);
            };
            loop {
                let n = started.fetch_add(2, Ordering::SeqCst);
                if n >= WRITES {
                    break;
                }
                let invoice = api.invoice(n).await;
                let id = invoice["id"].as_str().unwrap().to_owned();
                let serial = invoice["serial"].as_str().unwrap().to_owned();
                let total = cents(&invoice["total"]);
                acknowledge(Acknowledged::Invoice { id: id.clone(), serial, total, at: Instant::now() });
                let pay = json!({"amount": 1, "method": "bank_transfer"});
                let payment = api.post(&format!("/v1/invoices/{id}/payments"), pay).await;
                let payment = payment["id"].as_str().unwrap().to_owned();
                acknowledge(Acknowledged::Payment { id: payment, invoice: id, at: Instant::now() });
            }
        }));
    }
    watch.wait_for(|count| *count >= BEFORE_BACKUP).await.unwrap();
    let began = Instant::now();
    let (url, to) = (source.to_owned(), file.to_owned());
    let backup = tokio::task::spawn_blocking(move || {
        let size = cli(&url, &["backup", "--to", to.to_str().unwrap()]);
        (size, Instant::now())
    });
    for writer in writers {
        writer.await.unwrap();
    }
    let (size, ended) = backup.await.unwrap();
    assert_eq!(size.parse::<u64>().unwrap(), std::fs::metadata(file).unwrap().len());
    let acknowledged = Arc::try_unwrap(acknowledged).ok().unwrap().into_inner().unwrap();
    assert_eq!(acknowledged.len(), WRITES);
    Run { acknowledged, began, ended }
}

/// Every item of a listing of the server, by id.
async fn by_id(api: &Api, path: &str) -> BTreeMap<String, Value> {
    let listed = api.get(path).await;
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|item| (item["id"].as_str().unwrap().to_owned(), item.clone()))
        .collect()
}

/// Makes invoices and PDFs, runs the writes and the backup, restores the backup at
/// `target`, and checks the restored database through a server on it.
async fn backup_during_writes_restores_what_was_acknowledged(source: &str, target: &str, file: &Path) {
    let key = team_and_key(source);
    let unlimited = [("BILLABLE_RATE_LIMIT", "1000000/1s")];
    let (server, port) = serve_rest(source, &unlimited);
    let server = Running(server);
    let api = Api::new(port, &key);
    let mut pdfs = Vec::new();
    for n in 0..3 {
        let id = api.invoice(n).await["id"].as_str().unwrap().to_owned();
        pdfs.push((id.clone(), api.bytes(&format!("/v1/invoices/pdf?id={id}")).await));
    }
    let run = write_while_backing_up(&api, source, file).await;
    drop(server);
    let before: Vec<_> = run.acknowledged.iter().filter(|write| write.at() < run.began).collect();
    let during =
        run.acknowledged.iter().filter(|write| write.at() > run.began && write.at() < run.ended).count();
    assert!(before.len() >= BEFORE_BACKUP, "{} writes before the backup", before.len());
    assert!(before.len() < WRITES, "the backup began before the writes ended");

    cli(target, &["restore", "--from", file.to_str().unwrap()]);
    let (server, port) = serve_rest(target, &unlimited);
    let _server = Running(server);
    let api = Api::new(port, &key);
    let invoices = by_id(&api, "/v1/invoices?limit=1000").await;
    let payments = by_id(&api, "/v1/payments?limit=1000").await;
    // Every write acknowledged before the backup began is there, as it was answered.
    for write in &before {
        match write {
            Acknowledged::Invoice { id, serial, total, .. } => {
                let invoice = invoices.get(id).unwrap_or_else(|| panic!("invoice {serial} is restored"));
                assert_eq!(
                    (invoice["serial"].as_str().unwrap(), cents(&invoice["total"])),
                    (serial.as_str(), *total)
                );
            }
            Acknowledged::Payment { id, invoice, .. } => {
                let payment = payments.get(id).unwrap_or_else(|| panic!("payment {id} is restored"));
                assert_eq!(payment["invoiceId"], **invoice);
            }
        }
    }
    // Nothing half-written: each restored invoice has its five lines and the payments its
    // books say it has, and the serials run from 1 without a gap.
    let mut paid: BTreeMap<&str, i64> = BTreeMap::new();
    for payment in payments.values() {
        *paid.entry(payment["invoiceId"].as_str().unwrap()).or_default() += cents(&payment["amount"]);
    }
    for (id, invoice) in &invoices {
        assert_eq!(invoice["lineItems"].as_array().unwrap().len(), 5, "{invoice}");
        assert_eq!(cents(&invoice["amountPaid"]), paid.get(id.as_str()).copied().unwrap_or(0), "{invoice}");
    }
    let serials: BTreeSet<u64> =
        invoices.values().map(|invoice| counter(invoice["serial"].as_str().unwrap())).collect();
    assert_eq!(serials, (1..=invoices.len() as u64).collect(), "serials are gapless");
    // The PDFs read before are the same bytes.
    for (id, pdf) in &pdfs {
        assert!(api.bytes(&format!("/v1/invoices/pdf?id={id}")).await == *pdf, "the PDF of {id} is the same");
    }
    // The restored service takes writes, numbering on from the highest restored serial.
    let next = api.invoice(0).await;
    assert_eq!(counter(next["serial"].as_str().unwrap()), invoices.len() as u64 + 1);
    eprintln!(
        "{} writes before the backup, {during} while it ran, {} restored invoices of {}",
        before.len(),
        invoices.len(),
        3 + WRITES / 2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_sqlite_a_backup_during_writes_restores_every_acknowledged_write() {
    let scratch = Scratch::new("backup-sqlite");
    let target = format!("sqlite://{}", scratch.0.join("restored.db").display());
    let file = scratch.0.join("billable.backup");
    backup_during_writes_restores_what_was_acknowledged(&scratch.sqlite_url(), &target, &file).await;
}

/// A database of its own on the test PostgreSQL, dropped on drop.
struct Database(String);

impl Database {
    fn new(name: &str) -> Self {
        let name = format!("billable_test_{}_{name}", std::process::id());
        psql(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
        psql(&format!("CREATE DATABASE {name}"));
        Self(name)
    }

    fn url(&self) -> String {
        let admin = url::Url::parse(&admin_url()).unwrap();
        let mut url = admin.clone();
        url.set_path(&self.0);
        url.to_string()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        psql(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_postgres_a_backup_during_writes_restores_every_acknowledged_write() {
    let scratch = Scratch::new("backup-postgres");
    let (source, target) = (Database::new("backup_source"), Database::new("backup_target"));
    let file = scratch.0.join("billable.dump");
    backup_during_writes_restores_what_was_acknowledged(&source.url(), &target.url(), &file).await;
}

/// The stderr of a command of the binary that must fail.
fn refused(database_url: &str, args: &[&str]) -> String {
    let output = billable(database_url).args(args).output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeds");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn a_restore_goes_only_into_an_empty_database_of_the_backups_kind_and_schema() {
    let scratch = Scratch::new("restore-refusals");
    let sqlite = scratch.sqlite_url();
    team_and_key(&sqlite);
    let sqlite_backup = scratch.0.join("sqlite.backup");
    cli(&sqlite, &["backup", "--to", sqlite_backup.to_str().unwrap()]);
    let schema = Schema::new("backup_schema");
    let postgres = schema.url("sslmode=require");
    team_and_key(&postgres);
    let postgres_backup = scratch.0.join("postgres.dump");
    cli(&postgres, &["backup", "--to", postgres_backup.to_str().unwrap()]);

    // Into a database that holds tables: refused, and the database is as it was.
    let error = refused(&sqlite, &["restore", "--from", sqlite_backup.to_str().unwrap()]);
    assert!(error.contains("is not empty"), "{error}");
    let error = refused(&postgres, &["restore", "--from", postgres_backup.to_str().unwrap()]);
    assert!(error.contains("is not empty"), "{error}");
    assert_eq!(cli(&postgres, &["teams", "list"]).lines().count(), 1);
    // A backup of the other database, or a file that is no backup.
    let empty = format!("sqlite://{}", scratch.0.join("empty.db").display());
    let error = refused(&empty, &["restore", "--from", postgres_backup.to_str().unwrap()]);
    assert!(error.contains("is a PostgreSQL backup"), "{error}");
    let other = Schema::new("backup_other");
    let error =
        refused(&other.url("sslmode=disable"), &["restore", "--from", sqlite_backup.to_str().unwrap()]);
    assert!(error.contains("is a SQLite backup"), "{error}");
    let error = refused(&empty, &["restore", "--from", "Cargo.toml"]);
    assert!(error.contains("is not a backup of billable"), "{error}");
    // Into another schema than the one backed up: the search path must name it.
    let error =
        refused(&other.url("sslmode=disable"), &["restore", "--from", postgres_backup.to_str().unwrap()]);
    assert!(error.contains(&format!("the backup holds the schema \"{}\"", schema.0)), "{error}");
    assert!(!scratch.0.join("empty.db").exists(), "a refused restore makes no database");

    // Into a new database whose search path names the schema, which it creates.
    let database = Database::new("backup_schema_target");
    let restored = format!("{}?options=-c%20search_path%3D{}", database.url(), schema.0);
    cli(&restored, &["restore", "--from", postgres_backup.to_str().unwrap()]);
    assert_eq!(cli(&restored, &["teams", "list"]), cli(&postgres, &["teams", "list"]));
    // The SQLite backup into a new file, and into an existing empty one.
    let fresh = format!("sqlite://{}", scratch.0.join("fresh.db").display());
    cli(&fresh, &["restore", "--from", sqlite_backup.to_str().unwrap()]);
    assert_eq!(cli(&fresh, &["teams", "list"]), cli(&sqlite, &["teams", "list"]));
    std::fs::write(scratch.0.join("touched.db"), b"").unwrap();
    let touched = format!("sqlite://{}", scratch.0.join("touched.db").display());
    cli(&touched, &["restore", "--from", sqlite_backup.to_str().unwrap()]);
    assert_eq!(cli(&touched, &["teams", "list"]), cli(&sqlite, &["teams", "list"]));
}
