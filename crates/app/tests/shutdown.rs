//! SIGTERM with a job under way: the server stops listening, the job runner claims nothing
//! more and lets the job it runs finish, and the process exits 0 with the job done.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Scratch, cli, serve_rest, team_and_key};

/// A webhook receiver that answers its first delivery 200 only when `release` says so; it
/// tells `arrived` once the delivery is in.
fn held_receiver(arrived: mpsc::Sender<()>, release: mpsc::Receiver<()>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        // The head, then as many bytes of body as it announces.
        loop {
            let read = stream.read(&mut buffer).unwrap();
            request.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|line| {
                        line.to_ascii_lowercase().strip_prefix("content-length:").map(str::to_owned)
                    })
                    .map_or(0, |value| value.trim().parse::<usize>().unwrap());
                if request.len() >= end + 4 + length {
                    break;
                }
            }
            assert!(read > 0, "the delivery ended early");
        }
        arrived.send(()).unwrap();
        release.recv().unwrap();
        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    });
    port
}

#[tokio::test]
async fn sigterm_lets_the_running_job_finish_before_the_process_exits() {
    let scratch = Scratch::new("shutdown-drain");
    let url = scratch.sqlite_url();
    let key = team_and_key(&url);
    let (arrived, delivery_in) = mpsc::channel();
    let (release, held) = mpsc::channel();
    let receiver = held_receiver(arrived, held);
    let (mut server, port) =
        serve_rest(&url, &[("BILLABLE_WEBHOOK_ALLOW_PRIVATE", "true"), ("BILLABLE_SHUTDOWN_TIMEOUT", "20s")]);
    let http = reqwest::Client::new();
    let create = async |path: &str, body: serde_json::Value| {
        let answer = http
            .post(format!("http://127.0.0.1:{port}{path}"))
            .header("X-API-Key", &key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 201, "POST {path}");
    };
    let hook = json!({"url": format!("http://127.0.0.1:{receiver}/hook"), "events": ["client.created"]});
    create("/v1/webhooks", hook).await;
    create(
        "/v1/invoices/clients",
        json!({"name": "Zoë", "email": "zoe@example.com", "line1": "Hauptstraße 1", "postalCode": "10115"}),
    )
    .await;
    delivery_in.recv_timeout(Duration::from_secs(30)).expect("the delivery arrives");

    let pid = server.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    // The listener closes at once; only then does the receiver answer the delivery.
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(started.elapsed() < Duration::from_secs(10), "the server still listens after SIGTERM");
        std::thread::yield_now();
    }
    // The job holds the process: it is still there a while after its listener closed.
    let closed = Instant::now();
    while closed.elapsed() < Duration::from_secs(3) {
        assert!(server.try_wait().unwrap().is_none(), "the process exited with its job under way");
        std::thread::yield_now();
    }
    release.send(()).unwrap();
    let status = server.wait().unwrap();
    assert!(status.success(), "{status}");

    // kind, state, attempts: the delivery was recorded done at its first attempt.
    let jobs = cli(&url, &["jobs", "list", "--kind", "webhook"]);
    let rows: Vec<Vec<&str>> = jobs.lines().map(|line| line.split('\t').collect()).collect();
    assert_eq!(
        rows.iter().map(|row| (row[3], row[4], row[5])).collect::<Vec<_>>(),
        [("webhook", "done", "1")],
        "{jobs}"
    );
}
