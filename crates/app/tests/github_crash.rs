//! Crash recovery of the repository trigger with the real binary: deliveries are
//! acknowledged, the process is killed with SIGKILL before their runs finish, and after a
//! restart, or by another replica on the same database, every accepted delivery runs to
//! its end once their leases end.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use support::{Schema, Scratch, SlowModel, billable, post, psql, serve};

const SECRET: &str = "crash-test-secret";

fn sign(body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(body);
    mac.finalize().into_bytes().iter().fold("sha256=".to_owned(), |mut signature, byte| {
        std::fmt::Write::write_fmt(&mut signature, format_args!("{byte:02x}")).unwrap();
        signature
    })
}

/// A comment on issue `number` of octo-org/hello-world saying `text`.
fn comment(number: u64, text: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/github/issue_comment.created.json");
    let mut payload: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    payload["issue"]["number"] = number.into();
    payload["comment"]["body"] = text.into();
    serde_json::to_vec(&payload).unwrap()
}

/// The delivery log as `billable deliveries list` prints it: (delivery id, verdict, state).
fn delivery_log(database_url: &str) -> Vec<(String, String, String)> {
    let output = billable(database_url).args(["deliveries", "list", "--limit", "100"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            (fields[1].to_owned(), fields[5].to_owned(), fields[6].to_owned())
        })
        .collect()
}

#[test]
fn deliveries_acknowledged_before_a_kill_run_exactly_once_after_the_restart() {
    let model = SlowModel::default();
    model.delay_ms.store(60_000, Ordering::SeqCst);
    let scratch = Scratch::new("github-crash");
    let definition = github_agent(&scratch, &model);
    let database_url = scratch.sqlite_url();
    // The restarted process takes the killed one's deliveries over once their leases end.
    let env = [("GITHUB_WEBHOOK_SECRET", SECRET), ("BILLABLE_AGENT_LEASE", "3s")];

    let (mut server, port) = serve(&database_url, &definition, &env);
    deliver_six(port, &model);
    assert_eq!(model.requests.lock().unwrap().len(), 3, "one run per conversation at a time");
    server.kill().unwrap(); // SIGKILL
    server.wait().unwrap();
    let before_restart = model.requests.lock().unwrap().len();

    model.delay_ms.store(0, Ordering::SeqCst);
    let (mut server, _) = serve(&database_url, &definition, &env);
    let log = log_when_done(&database_url);
    server.kill().unwrap();
    server.wait().unwrap();

    assert_eq!(log.len(), 6, "{log:?}");
    assert!(log.iter().all(|(_, verdict, state)| verdict == "accepted" && state == "done"), "{log:?}");
    let after_restart = model.requests.lock().unwrap()[before_restart..].to_vec();
    for i in 0..6 {
        let marker = format!("crash marker {i}");
        let runs = after_restart.iter().filter(|body| body.contains(&marker)).count();
        assert_eq!(runs, 1, "delivery {i} ran once after the restart");
    }
    assert_eq!(after_restart.len(), 6);
    // Interrupted runs were never recorded as finished: each delivery has one ok run.
    assert_eq!(ok_github_runs(&database_url), 6);
}

/// An agent definition in `scratch` whose model is `model` and whose GitHub trigger takes
/// comments, on a port of the system's choosing.
fn github_agent(scratch: &Scratch, model: &SlowModel) -> std::path::PathBuf {
    let definition = scratch.0.join("agent.yaml");
    let base_url = model.start();
    std::fs::write(
        &definition,
        format!(
            "name: crash\nmodel:\n  provider: openai\n  base_url: {base_url}\n  model: slow\n  max_retries: 0\n\
             triggers:\n  - type: github\n    port: 0\n    events: [issue_comment]\n"
        ),
    )
    .unwrap();
    definition
}

/// Posts two comments on each of three issues (three conversations, each in order) to
/// the trigger on `port`, and waits until a run of each conversation is under way.
fn deliver_six(port: u16, model: &SlowModel) {
    let deliveries: Vec<(String, Vec<u8>)> =
        (0..6).map(|i| (format!("crash-{i}"), comment(1 + i % 3, &format!("crash marker {i}")))).collect();
    for (id, body) in &deliveries {
        let signature = sign(body);
        let headers = [
            ("Content-Type", "application/json"),
            ("X-GitHub-Event", "issue_comment"),
            ("X-GitHub-Delivery", id.as_str()),
            ("X-Hub-Signature-256", signature.as_str()),
        ];
        let answer = post(port, "/github", &headers, body);
        assert!(answer.starts_with("HTTP/1.1 202"), "{answer}");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.requests.lock().unwrap().len() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The delivery log once every delivery is done, or after a minute.
fn log_when_done(database_url: &str) -> Vec<(String, String, String)> {
    let deadline = Instant::now() + Duration::from_mins(1);
    let mut log = delivery_log(database_url);
    while log.iter().any(|(_, _, state)| state != "done") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        log = delivery_log(database_url);
    }
    log
}

/// Runs of the GitHub trigger that ended `ok`, as `billable runs list` prints them.
fn ok_github_runs(database_url: &str) -> usize {
    let runs = billable(database_url).args(["runs", "list", "--limit", "100"]).output().unwrap();
    let runs = String::from_utf8(runs.stdout).unwrap();
    runs.lines().filter(|line| line.contains("\tgithub\tok\t")).count()
}

/// Two replicas run one agent's queue on PostgreSQL; the one running the deliveries is
/// killed mid-run, and the other finishes them once their leases end.
#[test]
fn a_replica_killed_mid_run_leaves_its_deliveries_to_the_other() {
    let model = SlowModel::default();
    model.delay_ms.store(60_000, Ordering::SeqCst);
    let scratch = Scratch::new("github-takeover");
    let definition = github_agent(&scratch, &model);
    let schema = Schema::new("takeover");
    let database_url = schema.url("sslmode=prefer");
    let env = [("GITHUB_WEBHOOK_SECRET", SECRET), ("BILLABLE_AGENT_LEASE", "3s")];
    let (mut first, port) = serve(&database_url, &definition, &env);
    let (mut second, _) = serve(&database_url, &definition, &env);
    deliver_six(port, &model);
    assert_eq!(
        model.requests.lock().unwrap().len(),
        3,
        "one run per conversation at a time, across replicas"
    );
    first.kill().unwrap(); // SIGKILL, mid-run
    first.wait().unwrap();
    model.delay_ms.store(0, Ordering::SeqCst);

    let log = log_when_done(&database_url);
    second.kill().unwrap();
    second.wait().unwrap();
    assert_eq!(log.len(), 6, "{log:?}");
    assert!(log.iter().all(|(_, verdict, state)| verdict == "accepted" && state == "done"), "{log:?}");
    assert_eq!(ok_github_runs(&database_url), 6, "each delivery ran to its end once");
    let taken_over = psql(&format!("SELECT count(*) FROM {}.agent_deliveries WHERE attempts = 2", schema.0));
    assert_ne!(taken_over, "0", "the killed replica's deliveries ran again on the other");
    let requests = model.requests.lock().unwrap().clone();
    for i in 0..6 {
        let marker = format!("crash marker {i}");
        let calls = requests.iter().filter(|body| body.contains(&marker)).count();
        assert!(
            (1..=2).contains(&calls),
            "delivery {i} reached the model {calls} times: at most its killed run again"
        );
    }
}
