//! No password, token or key reaches stderr (its log lines or its last error), whatever
//! goes wrong and however much is logged.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use support::{Schema, Scratch, billable, post};

const PASSWORD: &str = "S3cret-Passw0rd";

/// `url` (a PostgreSQL URL) with `password` as its user's password (the test cluster
/// trusts local connections, so any password logs in).
fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let (user, host) = authority.rsplit_once('@').unwrap_or(("postgres", authority));
    let user = user.split(':').next().unwrap();
    format!("{scheme}://{user}:{password}@{host}/{path}")
}

/// The stderr of `billable <args>` on `database_url`, which must fail.
fn failing(database_url: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = billable(database_url);
    command.args(args).env("BILLABLE_LOG", "trace");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_database_url_that_cannot_be_used_is_not_printed() {
    let wrong_scheme =
        failing(&format!("mysql://billable:{PASSWORD}@db.internal/billable"), &["migrate"], &[]);
    assert!(wrong_scheme.contains(r#"its scheme is "mysql""#), "{wrong_scheme}");
    assert!(!wrong_scheme.contains(PASSWORD), "{wrong_scheme}");
    // Nobody listens on port 9: the driver's error names the address, not the password.
    for url in [
        format!("postgres://billable:{PASSWORD}@127.0.0.1:9/billable?connect_timeout=2"),
        format!("postgres://127.0.0.1:9/billable?user=billable&password={PASSWORD}&connect_timeout=2"),
        format!("postgres://billable:{PASSWORD}@127.0.0.1:9/billable?sslmode=bogus"),
        format!(
            "postgres://billable:{}@127.0.0.1:9/billable?connect_timeout=2",
            PASSWORD.replace('-', "%2D")
        ),
    ] {
        let refused = failing(&url, &["migrate"], &[]);
        assert!(refused.starts_with("error: ") || refused.contains("\nerror: "), "{refused}");
        assert!(!refused.contains(PASSWORD) && !refused.contains("S3cret%2DPassw0rd"), "{refused}");
    }
}

#[test]
fn a_redis_url_that_does_not_answer_is_not_printed() {
    let scratch = Scratch::new("secrets-redis");
    let redis = format!("redis://:{PASSWORD}@127.0.0.1:9/0");
    let stderr = failing(
        &scratch.sqlite_url(),
        &["serve", "--listen", "127.0.0.1:0"],
        &[("BILLABLE_REDIS_URL", redis.as_str())],
    );
    assert!(stderr.contains("BILLABLE_REDIS_URL"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

/// A server on PostgreSQL with a password, an agent whose webhook token (two, during a
/// rotation) is a secret, logging everything at `trace`: requests with the right token and
/// a wrong one, then the log holds none of the secrets.
#[test]
fn a_running_server_logs_no_secret_at_trace() {
    let schema = Schema::new("secrets");
    let database_url = with_password(&schema.url("sslmode=require"), PASSWORD);
    let scratch = Scratch::new("secrets-serve");
    let definition = scratch.0.join("agent.yaml");
    std::fs::write(
        &definition,
        "name: secrets\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: SECRETS_TOKEN\n",
    )
    .unwrap();
    let token = "Tok3n-for-the-webhook";
    let mut server = billable(&database_url)
        .args(["serve", "--listen", "127.0.0.1:0", "--agent"])
        .arg(&definition)
        .env("BILLABLE_LOG", "trace")
        .env("SECRETS_TOKEN", format!("old-token-value,{token}"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = server.stderr.take().unwrap();
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (found, port) = std::sync::mpsc::channel();
    let kept = lines.clone();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("serving agent triggers")
                && let Some(digits) = line.split("\"port\":").nth(1)
            {
                let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
                let _ = found.send(digits.parse::<u16>().unwrap());
            }
            kept.lock().unwrap().push(line);
        }
    });
    let port = port.recv_timeout(Duration::from_mins(1)).expect("the server starts");
    let body = br#"{"input": "hello"}"#;
    let bearer = format!("Bearer {token}");
    let answered = post(port, "/", &[("Authorization", &bearer), ("Content-Type", "application/json")], body);
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    let wrong = [("Authorization", "Bearer Wr0ng-token-guess"), ("Content-Type", "application/json")];
    assert!(post(port, "/", &wrong, body).starts_with("HTTP/1.1 401"));
    server.kill().unwrap();
    server.wait().unwrap();
    reader.join().unwrap();
    let log = lines.lock().unwrap().join("\n");
    assert!(log.contains("agent run replied"), "the log is the server's: {log}");
    for secret in [PASSWORD, token, "old-token-value"] {
        assert!(!log.contains(secret), "{secret} was logged:\n{log}");
    }
}
