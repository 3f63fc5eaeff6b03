//! The real binary refuses to start when the agent definition is bad or a secret it names
//! is missing, before it binds any port, and says why.

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
