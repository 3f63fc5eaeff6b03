//! `billable runs list` and `runs show` read what the real server recorded.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const AGENT: &str = "name: cli\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: RUNS_CLI_TOKEN\n";

fn billable(database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_billable"));
    command
        .env("DATABASE_URL", database_url)
        .env_remove("BILLABLE_AGENT")
        .env("BILLABLE_LOG", "info")
        .env("BILLABLE_LOG_FORMAT", "json");
    command
}

/// POSTs `body` to the trigger on `port` and returns the raw HTTP answer.
fn post(port: u16, body: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST / HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer cli-token\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn runs_list_and_show_the_recorded_calls() {
    let dir = std::env::temp_dir().join(format!("billable-runs-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let definition = dir.join("agent.yaml");
    std::fs::write(&definition, AGENT).unwrap();
    let database_url = format!("sqlite://{}", dir.join("billable.db").display());

    let mut server = billable(&database_url)
        .args(["serve", "--listen", "127.0.0.1:0", "--agent"])
        .arg(&definition)
        .env("RUNS_CLI_TOKEN", "cli-token")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The trigger's port, from the startup log line (JSON, so no colours get in the way).
    let stderr = server.stderr.take().unwrap();
    let (found, port) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("serving agent triggers")
                && let Some(digits) = line.split("\"port\":").nth(1)
            {
                let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
                let _ = found.send(digits.parse::<u16>().unwrap());
            }
        }
    });
    let port = port.recv_timeout(Duration::from_secs(30)).expect("the server starts");
    let answer = post(port, r#"{"input": "hello cli", "conversation_id": "cli-conversation"}"#);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#"{"status":"ok","reply":"hello cli","steps":1}"#), "{answer}");

    let list = billable(&database_url)
        .args(["runs", "list", "--conversation", "cli-conversation"])
        .output()
        .unwrap();
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let stdout = String::from_utf8(list.stdout).unwrap();
    let fields: Vec<&str> = stdout.lines().next().expect("one run").split('\t').collect();
    assert_eq!(fields[2..7], ["webhook", "ok", "1", "0", "0"]);
    assert_eq!(fields[8..], ["cli-conversation", "-"]);

    let show = billable(&database_url).args(["runs", "show", fields[0]]).output().unwrap();
    let shown = String::from_utf8(show.stdout).unwrap();
    assert!(shown.contains("status: ok\n") && shown.contains("input: hello cli\n"), "{shown}");
    let unknown = billable(&database_url)
        .args(["runs", "show", "00000000-0000-7000-8000-000000000000"])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no run with id"));
    let _ = std::fs::remove_dir_all(&dir);
}
