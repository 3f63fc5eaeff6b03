//! The webhook trigger on two real `billable serve` processes sharing one PostgreSQL
//! database over TLS: a conversation's runs go one at a time in arrival order whichever
//! replica took them, `limits.queue_depth` counts the requests waiting on both, and the
//! turn of a replica killed mid-run goes to the next request in line.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use support::{Schema, Scratch, SlowModel, post, psql, serve};

const TOKEN: &str = "replica-test-token";

/// Two replicas of an agent whose webhook trigger calls `model`.
struct Replicas {
    schema: Schema,
    processes: Vec<Child>,
    ports: Vec<u16>,
    _scratch: Scratch,
}

impl Replicas {
    fn start(name: &str, model: &SlowModel, queue_depth: u32) -> Self {
        let scratch = Scratch::new(name);
        let definition = scratch.0.join("agent.yaml");
        std::fs::write(
            &definition,
            format!(
                "name: {name}\nmodel:\n  provider: openai\n  base_url: {}\n  model: slow\n  max_retries: 0\n\
                 memory:\n  scope: thread\nlimits:\n  queue_depth: {queue_depth}\n\
                 triggers:\n  - type: webhook\n    port: 0\n    token_env: WEBHOOK_TOKEN\n",
                model.start()
            ),
        )
        .unwrap();
        let schema = Schema::new(name);
        let url = schema.url("sslmode=require");
        let env = [("WEBHOOK_TOKEN", TOKEN), ("BILLABLE_AGENT_LEASE", "3s")];
        let (first, first_port) = serve(&url, &definition, &env);
        let (second, second_port) = serve(&url, &definition, &env);
        Self {
            schema,
            processes: vec![first, second],
            ports: vec![first_port, second_port],
            _scratch: scratch,
        }
    }

    /// Posts `input` to conversation `shared` on replica `replica`, in a thread of its own;
    /// counts the answer in `answered` once it arrives.
    fn ask(&self, replica: usize, input: &str, answered: &Arc<AtomicUsize>) -> JoinHandle<String> {
        let port = self.ports[replica];
        let body = serde_json::json!({"input": input, "conversation_id": "shared"}).to_string();
        let answered = answered.clone();
        std::thread::spawn(move || {
            let authorization = format!("Bearer {TOKEN}");
            let headers = [("Content-Type", "application/json"), ("Authorization", authorization.as_str())];
            let answer = post(port, "/", &headers, body.as_bytes());
            answered.fetch_add(1, Ordering::SeqCst);
            answer
        })
    }

    /// Requests in a conversation's line, running or waiting, on either replica.
    fn in_line(&self) -> usize {
        psql(&format!("SELECT count(*) FROM {}.agent_turns", self.schema.0)).parse().unwrap()
    }

    /// Waits until `count` requests joined the line (those answered have left it).
    fn wait_joined(&self, count: usize, answered: &AtomicUsize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while answered.load(Ordering::SeqCst) + self.in_line() < count {
            assert!(Instant::now() < deadline, "request {count} never joined the line");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        for process in &mut self.processes {
            let _ = process.kill();
            let _ = process.wait();
        }
    }
}

/// The status and the `reply` of a webhook answer.
fn reply(answer: &str) -> (u16, String) {
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    (status, json["reply"].as_str().unwrap_or_default().to_owned())
}

/// The contents of the messages of a model request, system prompt aside.
fn conversation(request: &str) -> Vec<String> {
    let request: serde_json::Value = serde_json::from_str(request).unwrap();
    let messages = request["messages"].as_array().unwrap();
    let spoken = messages.iter().filter(|m| m["role"] != "system");
    spoken.map(|m| m["content"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_conversation_runs_one_at_a_time_in_arrival_order_across_replicas() {
    let model = SlowModel::default();
    model.delay_ms.store(300, Ordering::SeqCst);
    let replicas = Replicas::start("fifo", &model, 8);
    let answered = Arc::new(AtomicUsize::new(0));
    let mut asked = Vec::new();
    for i in 0..6 {
        asked.push(replicas.ask(i % 2, &format!("message {i}"), &answered));
        // Sent once the one before joined the line: the arrival order is the order sent.
        replicas.wait_joined(i + 1, &answered);
    }
    for (i, asked) in asked.into_iter().enumerate() {
        assert_eq!(
            reply(&asked.join().unwrap()),
            (200, format!("re: message {i}")),
            "each caller gets its own run"
        );
    }
    assert_eq!(model.most_in_flight.load(Ordering::SeqCst), 1, "one run at a time at the model");
    let requests = model.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 6);
    for (k, request) in requests.iter().enumerate() {
        let expected: Vec<String> = (0..k)
            .flat_map(|j| [format!("message {j}"), format!("re: message {j}")])
            .chain([format!("message {k}")])
            .collect();
        assert_eq!(conversation(request), expected, "run {k} sees every earlier turn, in order");
    }
    assert_eq!(replicas.in_line(), 0, "every request left the line");
}

#[test]
fn queue_depth_counts_the_requests_waiting_on_every_replica() {
    let model = SlowModel::default();
    model.delay_ms.store(60_000, Ordering::SeqCst);
    let replicas = Replicas::start("depth", &model, 2);
    let answered = Arc::new(AtomicUsize::new(0));
    // One runs (on the first replica), one waits on each replica.
    let asked: Vec<_> = (0..3)
        .map(|i| {
            let asked = replicas.ask(i % 2, &format!("message {i}"), &answered);
            replicas.wait_joined(i + 1, &answered);
            asked
        })
        .collect();
    for replica in 0..2 {
        let refused = replicas.ask(replica, "one too many", &answered).join().unwrap();
        assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
        assert!(refused.to_ascii_lowercase().contains("retry-after: 1"), "{refused}");
    }
    model.delay_ms.store(0, Ordering::SeqCst);
    for (i, asked) in asked.into_iter().enumerate() {
        assert_eq!(reply(&asked.join().unwrap()), (200, format!("re: message {i}")));
    }
}

#[test]
fn a_killed_replicas_turn_goes_to_the_next_in_line() {
    let model = SlowModel::default();
    model.delay_ms.store(60_000, Ordering::SeqCst);
    let mut replicas = Replicas::start("takeover", &model, 8);
    let answered = Arc::new(AtomicUsize::new(0));
    let _lost = replicas.ask(0, "first", &answered);
    replicas.wait_joined(1, &answered);
    let deadline = Instant::now() + Duration::from_secs(30);
    while model.requests.lock().unwrap().is_empty() {
        assert!(Instant::now() < deadline, "the first run never reached the model");
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = replicas.ask(1, "second", &answered);
    replicas.wait_joined(2, &answered);

    replicas.processes[0].kill().unwrap(); // SIGKILL, mid-run
    replicas.processes[0].wait().unwrap();
    let killed = Instant::now();
    model.delay_ms.store(0, Ordering::SeqCst);
    assert_eq!(reply(&second.join().unwrap()), (200, "re: second".to_owned()));
    // A 3 s lease ends within 3 s of the kill; the waiter looks every second.
    assert!(killed.elapsed() < Duration::from_secs(15), "taken over after {:?}", killed.elapsed());
    let requests = model.requests.lock().unwrap().clone();
    assert_eq!(conversation(requests.last().unwrap()), ["second"], "the killed run wrote no memory");
}
