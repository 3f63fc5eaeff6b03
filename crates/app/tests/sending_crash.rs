//! Sending and chasing survive a crash, with the real binary: mails queued, reminders due and
//! events to deliver are under way when a `billable serve` is killed with SIGKILL; another
//! replica (PostgreSQL), or the same server restarted (SQLite), takes the killed one's jobs
//! over once their leases end. Every mail reaches a real SMTP server with its PDF, every
//! reminder step goes out at most once, and every event reaches a receiver that verifies it
//! with the official Standard Webhooks library.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Schema, Scratch, serve_rest, team_and_key};

/// Mails the test queues.
const MAILS: usize = 12;

/// A Python service of the tests (`tests/…`), started with `args`, and the port it printed.
struct Service {
    child: Child,
    port: u16,
}

impl Service {
    fn start(script: &str, args: &[&str]) -> Self {
        let path = format!("{}/../../tests/{script}", env!("CARGO_MANIFEST_DIR"));
        let mut child = Command::new("python3").arg(path).args(args).stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, port) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(port) = line.strip_prefix("port=") {
                    let _ = send.send(port.parse::<u16>().unwrap());
                }
            }
        });
        let port = port.recv_timeout(Duration::from_secs(30)).expect("the service starts");
        Self { child, port }
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `billable serve` running its job queue, and the port of its REST API.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(database_url: &str, smtp: u16) -> Self {
        let smtp_url = format!("smtp://127.0.0.1:{smtp}");
        let (child, port) = serve_rest(
            database_url,
            &[
                ("BILLABLE_SMTP_URL", &smtp_url),
                ("BILLABLE_MAIL_FROM", "billing@acme.example"),
                ("BILLABLE_WEBHOOK_ALLOW_PRIVATE", "true"),
                // A dead replica's jobs are taken over 3 s after it stopped renewing them.
                ("BILLABLE_JOBS_LEASE", "3s"),
                ("BILLABLE_JOBS_POLL", "100ms"),
                // Few at once, so that work is under way when the process is killed.
                ("BILLABLE_JOBS_CONCURRENCY", "3"),
            ],
        );
        Self { child, port }
    }

    fn kill(mut self) {
        self.child.kill().unwrap(); // SIGKILL
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Api {
    http: reqwest::Client,
    key: String,
}

impl Api {
    async fn call(&self, port: u16, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self
            .http
            .request(method, format!("http://127.0.0.1:{port}{path}"))
            .header("x-api-key", &self.key);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        response.json().await.unwrap_or_default()
    }
}

fn lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// On the server at `port`: an endpoint for every event at the receiver, a reminder policy
/// due at once, and `MAILS` invoices e-mailed. The endpoint's id, its secret, the invoices.
async fn queue_the_work(api: &Api, port: u16, receiver: u16) -> (String, String, Vec<String>) {
    let hook = json!({"url": format!("http://127.0.0.1:{receiver}/hook"), "events": ["*"]});
    let endpoint = api.call(port, reqwest::Method::POST, "/v1/webhooks", Some(hook)).await;
    let secret = endpoint["secret"].as_str().unwrap().to_owned();
    let secrets = api.http.post(format!("http://127.0.0.1:{receiver}/_secrets")).json(&json!([secret]));
    secrets.send().await.unwrap();
    // Due today at midnight: the policy's step 0 is due at once, and once only.
    let policy = json!({"enabled": true, "steps": [{"daysAfterDue": 0}]});
    api.call(port, reqwest::Method::PUT, "/v1/reminder-policy", Some(policy)).await;
    let today = chrono::Utc::now().date_naive();
    let mut invoices = Vec::new();
    for i in 0..MAILS {
        let body = json!({
            "client": {"email": format!("client{i}@example.com"), "name": format!("Client {i}")},
            "issueDate": (today - chrono::TimeDelta::days(30)).to_string(), "dueDate": today.to_string(),
            "lineItems": [{"description": "Work", "unitPrice": 100, "quantity": 1}]});
        let invoice = api.call(port, reqwest::Method::POST, "/v1/invoices", Some(body)).await;
        let id = invoice["id"].as_str().unwrap().to_owned();
        api.call(port, reqwest::Method::POST, &format!("/v1/invoices/{id}/send"), Some(json!({}))).await;
        invoices.push(id);
    }
    (endpoint["id"].as_str().unwrap().to_owned(), secret, invoices)
}

/// Waits until every message (each invoice's mail and reminder) is sent and no delivery to
/// `endpoint` is pending; how many deliveries it has then.
async fn wait_until_done(api: &Api, port: u16, endpoint: &str) -> usize {
    let started = Instant::now();
    loop {
        let count = async |path: String| {
            let listed = api.call(port, reqwest::Method::GET, &path, None).await;
            listed.as_array().unwrap().len()
        };
        let sent = count("/v1/messages?status=sent".into()).await;
        let pending = count(format!("/v1/webhooks/{endpoint}/deliveries?status=pending")).await;
        if sent == 2 * MAILS && pending == 0 {
            return count(format!("/v1/webhooks/{endpoint}/deliveries")).await;
        }
        assert!(started.elapsed() < Duration::from_mins(2), "not done: {sent} sent, {pending} pending");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Queues mails and events on a server, kills it while their jobs run, and lets a survivor
/// (another replica, or the same one restarted) finish them; then checks what arrived.
async fn survive_a_kill(database_url: &str, scratch: &Scratch, two_replicas: bool) {
    let mails = scratch.0.join("mails.jsonl");
    let deliveries = scratch.0.join("deliveries.jsonl");
    let smtp =
        Service::start("mail/smtp_server.py", &["--out", mails.to_str().unwrap(), "--delay-ms", "300"]);
    let receiver = Service::start("webhooks/receiver.py", &["--out", deliveries.to_str().unwrap()]);
    let key = team_and_key(database_url);
    let api = Api { http: reqwest::Client::new(), key };
    let first = Server::start(database_url, smtp.port);
    let second = two_replicas.then(|| Server::start(database_url, smtp.port));
    let (endpoint, secret, invoices) = queue_the_work(&api, first.port, receiver.port).await;
    // Mails take 300 ms each: the first server is mid-way when it is killed.
    std::thread::sleep(Duration::from_millis(900));
    let sent = api.call(first.port, reqwest::Method::GET, "/v1/messages?status=sent", None).await;
    assert!(sent.as_array().unwrap().len() < 2 * MAILS, "work is left for the survivor");
    first.kill();
    // Leases end after 3 s.
    let survivor = second.unwrap_or_else(|| Server::start(database_url, smtp.port));
    let expected_events = wait_until_done(&api, survivor.port, &endpoint).await;

    // Every message arrived, with its PDF; a mail under way at the kill may arrive twice,
    // with the same Message-ID, which is how a recipient knows it.
    let arrived = lines(&mails);
    let messages = api.call(survivor.port, reqwest::Method::GET, "/v1/messages", None).await;
    let ids: HashSet<String> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("<{}>", m["messageId"].as_str().unwrap()))
        .collect();
    let arrived_ids: HashSet<String> =
        arrived.iter().map(|m| m["message_id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(arrived_ids, ids, "every queued mail was delivered");
    assert!(
        arrived.len() <= ids.len() + 3,
        "at most the mails under way at the kill twice: {}",
        arrived.len()
    );
    for mail in arrived.iter().filter(|m| m["subject"].as_str().unwrap().starts_with("Invoice")) {
        assert_eq!(mail["attachments"][0]["content_type"], "application/pdf");
        assert!(mail["attachments"][0]["size"].as_u64().unwrap() > 1000);
    }
    // Each invoice's reminder step went out once.
    let mut reminders: HashMap<String, usize> = HashMap::new();
    for message in messages.as_array().unwrap().iter().filter(|m| m["kind"] == "reminder") {
        *reminders.entry(message["invoiceId"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    assert_eq!(reminders.len(), MAILS);
    assert!(reminders.values().all(|count| *count == 1), "{reminders:?}");
    for id in &invoices {
        let invoice =
            api.call(survivor.port, reqwest::Method::GET, &format!("/v1/invoices/{id}"), None).await;
        assert_eq!(invoice["remindersSent"], 1);
        assert!(invoice["sentAt"].is_string());
    }
    // Every event reached the receiver, verified by the official library.
    let deliveries = lines(&deliveries);
    let delivered: HashSet<&str> = deliveries.iter().map(|d| d["webhook_id"].as_str().unwrap()).collect();
    assert_eq!(delivered.len(), expected_events);
    assert!(deliveries.iter().all(|d| d["verified"][&secret] == true));
    drop(survivor);
}

#[tokio::test]
async fn a_killed_replicas_mails_and_deliveries_are_finished_by_the_other() {
    let schema = Schema::new("sending_crash");
    let scratch = Scratch::new("sending-crash-pg");
    survive_a_kill(&schema.url("sslmode=require"), &scratch, true).await;
}

#[tokio::test]
async fn a_killed_servers_mails_and_deliveries_are_finished_after_its_restart() {
    let scratch = Scratch::new("sending-crash-sqlite");
    let url = scratch.sqlite_url();
    survive_a_kill(&url, &scratch, false).await;
}
