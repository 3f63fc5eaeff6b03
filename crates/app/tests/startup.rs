//! The real binary refuses to start when the agent definition is bad, a secret it names is
//! missing or its SMTP URL would send a password unencrypted, and says why; it warns when
//! e-mail would link to an address recipients cannot reach.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::process::Command;

fn serve(definition: &str, token: Option<&str>) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("billable-startup-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("agent.yaml");
    std::fs::write(&file, definition).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_billable"));
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--agent"])
        .arg(&file)
        .env("DATABASE_URL", "memory:")
        .env_remove("STARTUP_TEST_TOKEN")
        .env_remove("BILLABLE_AGENT");
    if let Some(token) = token {
        command.env("STARTUP_TEST_TOKEN", token);
    }
    // With a token, the server would start: give it a moment and stop it.
    let output = if token.is_some() {
        let mut child = command.stderr(std::process::Stdio::piped()).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_secs(2));
        let running = child.try_wait().unwrap().is_none();
        let _ = child.kill();
        let output = child.wait_with_output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        return (running, String::from_utf8_lossy(&output.stderr).into_owned());
    } else {
        command.output().unwrap()
    };
    let _ = std::fs::remove_dir_all(&dir);
    (output.status.success(), String::from_utf8_lossy(&output.stderr).into_owned())
}

fn uuid_like() -> String {
    format!("{}-{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], "")
}

const AGENT: &str = "name: t\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: STARTUP_TEST_TOKEN\n";

#[test]
fn a_missing_token_variable_stops_startup_naming_it() {
    let (ok, stderr) = serve(AGENT, None);
    assert!(!ok);
    assert!(
        stderr.contains(
            "agent.yaml: triggers[0].token_env: the environment variable STARTUP_TEST_TOKEN is not set"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("serving"), "nothing was bound: {stderr}");
}

#[test]
fn a_bad_definition_stops_startup_naming_the_field() {
    let (ok, stderr) =
        serve(&AGENT.replace("provider: echo", "provider: echo\nlimits:\n  max_steps: 0"), Some("t"));
    assert!(!ok);
    assert!(stderr.contains("agent.yaml: limits.max_steps: must be between 1 and 100"), "{stderr}");
}

#[test]
fn with_the_token_it_starts() {
    let (running, stderr) = serve(AGENT, Some("a-token"));
    assert!(running, "{stderr}");
    assert!(stderr.contains("serving agent triggers"), "{stderr}");
}

#[test]
fn a_missing_github_secret_stops_startup_naming_it() {
    let github = "name: t\nmodel:\n  provider: echo\ntriggers:\n  - type: github\n    port: 0\n    events: ['*']\n    secret_env: STARTUP_TEST_TOKEN\n";
    let (ok, stderr) = serve(github, None);
    assert!(!ok);
    assert!(
        stderr.contains(
            "agent.yaml: triggers[0].secret_env: the environment variable STARTUP_TEST_TOKEN is not set"
        ),
        "{stderr}"
    );
    let (running, stderr) = serve(github, Some("a-secret"));
    assert!(running, "{stderr}");
}

/// `billable serve` with `env` (no agent): whether it was still running after two seconds
/// (then stopped), and what it wrote to stderr.
fn serve_with(env: &[(&str, &str)]) -> (bool, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_billable"));
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("DATABASE_URL", "memory:")
        .env_remove("BILLABLE_AGENT")
        .env_remove("BILLABLE_PUBLIC_URL")
        .envs(env.iter().copied())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    (running, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn an_smtp_password_without_tls_stops_startup() {
    let (running, stderr) = serve_with(&[
        ("BILLABLE_SMTP_URL", "smtp://ann:secret@mail.example:587"),
        ("BILLABLE_MAIL_FROM", "billing@example.com"),
    ]);
    assert!(!running, "{stderr}");
    assert!(
        stderr.contains(
            "BILLABLE_SMTP_URL (--smtp-url): would send its password unencrypted: use ?tls=required"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "the password stays out of the log: {stderr}");
}

#[test]
fn mail_links_to_a_loopback_address_are_warned_of() {
    let mail =
        [("BILLABLE_SMTP_URL", "smtp://127.0.0.1:2525"), ("BILLABLE_MAIL_FROM", "billing@example.com")];
    let (running, stderr) = serve_with(&mail);
    assert!(running, "{stderr}");
    assert!(stderr.contains("BILLABLE_PUBLIC_URL is not set"), "{stderr}");
    let public = [mail[0], mail[1], ("BILLABLE_PUBLIC_URL", "https://billing.example.com")];
    let (running, stderr) = serve_with(&public);
    assert!(running, "{stderr}");
    assert!(!stderr.contains("BILLABLE_PUBLIC_URL"), "{stderr}");
}
