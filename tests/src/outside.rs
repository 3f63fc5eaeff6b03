//! The real services outside billable that its tests talk to: an SMTP server (Python's
//! aiosmtpd, `tests/mail/smtp_server.py`) that reads every mail back with a MIME parser, and
//! a webhook receiver (`tests/webhooks/receiver.py`) that verifies every delivery with the
//! official Standard Webhooks library. Each runs as a child process, killed on drop.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A scratch directory, removed on drop.
#[derive(Debug)]
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("billable-{what}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Starts `script` with `args`, and reads the `port=N` it prints once it listens.
fn spawn(script: &str, args: &[String]) -> (Child, u16) {
    let path = format!("{}/{script}", env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("python3")
        .arg(&path)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("python3 {path}: {e} (see .ci/run for what it needs)"));
    let stdout = child.stdout.take().unwrap();
    let (found, port) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(port) = line.strip_prefix("port=") {
                let _ = found.send(port.trim().parse::<u16>().unwrap());
            }
        }
    });
    let port = port.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| panic!("{script} starts"));
    (child, port)
}

/// The JSON lines of `path` so far.
fn lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// How an [`SmtpServer`] behaves.
#[derive(Debug, Clone, Default)]
pub struct SmtpOptions {
    /// Answer the first this many messages with a temporary failure (451).
    pub fail_first: u32,
    /// Refuse for good (550) recipients whose address holds this text.
    pub reject_rcpt: Option<String>,
    /// `starttls` (required) or `smtps`.
    pub tls: Option<&'static str>,
    /// `USER:PASSWORD` a client must log in with.
    pub auth: Option<String>,
}

/// A real SMTP server on 127.0.0.1.
#[derive(Debug)]
pub struct SmtpServer {
    child: Child,
    pub port: u16,
    out: PathBuf,
    /// The PEM of the CA its TLS certificate is of (with `tls`).
    pub ca_file: PathBuf,
    options: SmtpOptions,
    _dir: Scratch,
}

impl SmtpServer {
    pub fn start() -> Self {
        Self::with(SmtpOptions::default())
    }

    pub fn with(options: SmtpOptions) -> Self {
        let dir = Scratch::new("smtp");
        let out = dir.0.join("received.jsonl");
        let ca_file = dir.0.join("ca.pem");
        let mut args = vec![
            "--out".to_owned(),
            out.display().to_string(),
            "--ca-file".to_owned(),
            ca_file.display().to_string(),
            "--fail-first".to_owned(),
            options.fail_first.to_string(),
            "--tls".to_owned(),
            options.tls.unwrap_or("none").to_owned(),
        ];
        if let Some(text) = &options.reject_rcpt {
            args.extend(["--reject-rcpt".to_owned(), text.clone()]);
        }
        if let Some(auth) = &options.auth {
            args.extend(["--auth".to_owned(), auth.clone()]);
        }
        let (child, port) = spawn("mail/smtp_server.py", &args);
        Self { child, port, out, ca_file, options, _dir: dir }
    }

    /// `BILLABLE_SMTP_URL` for this server.
    pub fn url(&self) -> String {
        let user = self.options.auth.as_ref().map(|auth| format!("{auth}@")).unwrap_or_default();
        match self.options.tls {
            Some("smtps") => format!("smtps://{user}127.0.0.1:{}", self.port),
            Some("starttls") => format!("smtp://{user}127.0.0.1:{}?tls=required", self.port),
            _ => format!("smtp://{user}127.0.0.1:{}", self.port),
        }
    }

    /// Every mail it took, read back: envelope, decoded headers, body, attachments.
    pub fn received(&self) -> Vec<Value> {
        lines(&self.out).into_iter().filter(|record| record["refused"] != true).collect()
    }

    /// The messages it answered with a temporary failure.
    pub fn refused(&self) -> Vec<Value> {
        lines(&self.out).into_iter().filter(|record| record["refused"] == true).collect()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A webhook receiver on 127.0.0.1 that verifies each delivery with the official Standard
/// Webhooks library.
#[derive(Debug)]
pub struct WebhookReceiver {
    child: Child,
    pub port: u16,
    out: PathBuf,
    http: reqwest::Client,
    _dir: Scratch,
}

impl WebhookReceiver {
    pub fn start() -> Self {
        let dir = Scratch::new("receiver");
        let out = dir.0.join("deliveries.jsonl");
        let (child, port) = spawn("webhooks/receiver.py", &["--out".to_owned(), out.display().to_string()]);
        Self { child, port, out, http: reqwest::Client::new(), _dir: dir }
    }

    /// The URL of `path` on it.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The secrets to verify deliveries with (`whsec_…`).
    pub async fn verify_with(&self, secrets: &[&str]) {
        let answer = self.http.post(self.url("/_secrets")).json(&secrets).send().await.unwrap();
        assert_eq!(answer.status(), 204);
    }

    /// The answers of the next requests: status codes, or `"429:30"` for 429 with
    /// `Retry-After: 30`.
    pub async fn respond(&self, statuses: Value) {
        let answer = self
            .http
            .post(self.url("/_respond"))
            .json(&serde_json::json!({"statuses": statuses}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 204);
    }

    /// Every delivery so far: headers, body, the status answered, and for each secret
    /// whether the official verifier accepted it (`true`, or its error).
    pub fn deliveries(&self) -> Vec<Value> {
        lines(&self.out)
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A local stateful Stripe: the Python package `localstripe` with a stand-in for Checkout Sessions, each
/// backed by a real localstripe `PaymentIntent` (`tests/payments/fake_stripe.py`).
#[derive(Debug)]
pub struct FakeStripe {
    child: Child,
    pub port: u16,
    http: reqwest::Client,
}

impl FakeStripe {
    pub fn start() -> Self {
        let (child, port) = spawn("payments/fake_stripe.py", &[]);
        Self { child, port, http: reqwest::Client::new() }
    }

    /// `BILLABLE_STRIPE_API_BASE` for it.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The Checkout Session `id`, as Stripe's API answers it.
    pub async fn session(&self, id: &str) -> Value {
        let answer = self
            .http
            .get(format!("{}/v1/checkout/sessions/{id}", self.url()))
            .bearer_auth("sk_test_fake")
            .send()
            .await;
        answer.unwrap().json().await.unwrap()
    }

    /// The client pays the session at `checkout_url` with Stripe's test card: the events
    /// Stripe would send, `checkout.session.completed` and `payment_intent.succeeded`.
    pub async fn pay(&self, checkout_url: &str) -> (Value, Value) {
        let answer = self.http.post(format!("{checkout_url}/pay")).send().await.unwrap();
        assert_eq!(answer.status(), 200, "paying {checkout_url}");
        let events: Value = answer.json().await.unwrap();
        (events["checkout.session.completed"].clone(), events["payment_intent.succeeded"].clone())
    }

    /// Refunds `amount` minor units of the `PaymentIntent` through Stripe's API, and answers
    /// the `charge.refunded` event Stripe would send.
    pub async fn refund(&self, payment_intent: &str, amount: u64) -> Value {
        let refund = self
            .http
            .post(format!("{}/v1/refunds", self.url()))
            .bearer_auth("sk_test_fake")
            .form(&[("payment_intent", payment_intent.to_owned()), ("amount", amount.to_string())])
            .send()
            .await
            .unwrap();
        assert_eq!(refund.status(), 200, "refunding {payment_intent}");
        let event = self
            .http
            .post(format!("{}/_events/charge.refunded", self.url()))
            .json(&serde_json::json!({"payment_intent": payment_intent}))
            .send()
            .await
            .unwrap();
        event.json().await.unwrap()
    }
}

impl Drop for FakeStripe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `Stripe-Signature` of `payload` under `secret` at `timestamp`, made by the official
/// `stripe` npm library (`tests/payments/sign_stripe.mjs`, installed by `make payment-tools`).
pub fn stripe_signature(secret: &str, payload: &str, timestamp: i64) -> String {
    use std::io::Write;
    let script = format!("{}/payments/sign_stripe.mjs", env!("CARGO_MANIFEST_DIR"));
    let mut child = Command::new("node")
        .args([script.as_str(), "--secret", secret, "--timestamp", &timestamp.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("node {script}: {e} (make payment-tools installs what it needs)"));
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{script} signs");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}
