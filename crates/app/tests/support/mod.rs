//! Running the real `billable` binary from tests.

#![expect(dead_code, unreachable_pub, reason = "each test file uses its own part")]

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// The binary on `database_url`, logging JSON (no colours in the way of parsing).
pub fn billable(database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_billable"));
    command
        .env("DATABASE_URL", database_url)
        .env_remove("BILLABLE_AGENT")
        .env("BILLABLE_LOG", "info")
        .env("BILLABLE_LOG_FORMAT", "json");
    command
}

/// What a command of the binary prints, trimmed; it must succeed.
pub fn cli(database_url: &str, args: &[&str]) -> String {
    let output = billable(database_url).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// A team in EUR with an owner, and a `write` key of the owner, on a migrated database.
pub fn team_and_key(database_url: &str) -> String {
    cli(database_url, &["migrate"]);
    let team = cli(database_url, &["teams", "create", "--name", "Acme", "--currency", "EUR"]);
    let owner = cli(
        database_url,
        &["users", "create", "--team", &team, "--email", "owner@acme.example", "--role", "owner"],
    );
    cli(database_url, &["keys", "create", "--team", &team, "--user", &owner, "--scope", "write"])
}

/// Starts `billable serve` with `env`; returns the process and the port of its REST API,
/// read from the startup log.
pub fn serve_rest(database_url: &str, env: &[(&str, &str)]) -> (Child, u16) {
    let mut command = billable(database_url);
    command.args(["serve", "--listen", "127.0.0.1:0"]).stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (send, port) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("serving the REST API")
                && let Some(digits) = line.split("\"port\":").nth(1)
            {
                let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
                let _ = send.send(digits.parse::<u16>().unwrap());
            }
        }
    });
    let port = port.recv_timeout(Duration::from_mins(1)).expect("the server starts");
    (child, port)
}

/// Starts `billable serve --agent definition` with `env`; returns the process and the
/// port of its triggers' listener (the definition puts them on port 0), read from the
/// startup log.
pub fn serve(database_url: &str, definition: &Path, env: &[(&str, &str)]) -> (Child, u16) {
    let mut command = billable(database_url);
    command.args(["serve", "--listen", "127.0.0.1:0", "--agent"]).arg(definition).stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut server = command.spawn().unwrap();
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
    (server, port)
}

/// POSTs `body` to `path` on `port` with `headers` and returns the raw HTTP answer.
pub fn post(port: u16, path: &str, headers: &[(&str, &str)], body: &[u8]) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut request = format!("POST {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (name, value) in headers {
        write!(request, "{name}: {value}\r\n").unwrap();
    }
    write!(request, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// A scratch directory, removed on drop.
pub struct Scratch(pub std::path::PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("billable-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn sqlite_url(&self) -> String {
        format!("sqlite://{}", self.0.join("billable.db").display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn admin_url() -> String {
    std::env::var("TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

pub fn psql(sql: &str) -> String {
    let output = Command::new("psql")
        .args([&admin_url(), "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .unwrap();
    assert!(output.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// An empty schema of its own on the test PostgreSQL, dropped on drop; its URL asks for TLS.
pub struct Schema(pub String);

impl Schema {
    pub fn new(name: &str) -> Self {
        let schema = format!("billable_test_{}_{name}", std::process::id());
        psql(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"));
        Self(schema)
    }

    pub fn url(&self, tls: &str) -> String {
        let base = admin_url();
        let join = if base.contains('?') { '&' } else { '?' };
        // The schema's name as application_name, to find the replicas' sessions.
        format!("{base}{join}{tls}&application_name={0}&options=-c%20search_path%3D{0}", self.0)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        psql(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.0));
    }
}

/// A Chat Completions server that waits `delay_ms` before each answer, replies `re: ` and
/// the last message it was given, and keeps every request body it received and the most
/// requests it ever had in hand at once. With `calls_tool`, it first asks for that tool
/// (with `{}` as its arguments) in a run that has no tool result yet.
#[derive(Clone, Default)]
pub struct SlowModel {
    pub calls_tool: Option<&'static str>,
    pub delay_ms: Arc<AtomicU64>,
    pub requests: Arc<Mutex<Vec<String>>>,
    in_flight: Arc<AtomicUsize>,
    pub most_in_flight: Arc<AtomicUsize>,
}

impl SlowModel {
    /// A model that asks for `tool` first in every run.
    pub fn calling(tool: &'static str) -> Self {
        Self { calls_tool: Some(tool), ..Self::default() }
    }

    /// Serves on a free port; returns the base URL for `model.base_url`.
    pub fn start(&self) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let model = self.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let model = model.clone();
                std::thread::spawn(move || model.answer(stream));
            }
        });
        url
    }

    fn answer(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream);
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let last = request["messages"].as_array().and_then(|m| m.last()).map(|m| m["content"].clone());
        self.requests.lock().unwrap().push(String::from_utf8_lossy(&body).into_owned());
        let in_flight = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_in_flight.fetch_max(in_flight, Ordering::SeqCst);
        // Waits out the delay, or until it is set to 0.
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_millis(self.delay_ms.load(Ordering::SeqCst)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        let text = format!("re: {}", last.and_then(|c| c.as_str().map(str::to_owned)).unwrap_or_default());
        let answered = request["messages"].as_array().is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        let message = match self.calls_tool {
            Some(tool) if !answered => {
                serde_json::json!({"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call-1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
                ]})
            }
            _ => serde_json::json!({"role": "assistant", "content": text}),
        };
        let reply = serde_json::json!({
            "id": "c", "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        })
        .to_string();
        let mut stream = reader.into_inner();
        // The process that asked may be gone (killed): nothing to do about it then.
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
            reply.len()
        );
    }
}
