//! Secrets as files, as container secrets are mounted: `DATABASE_URL_FILE` (and every secret
//! setting's `_FILE`) names a file holding the value, its trailing line break dropped; both
//! forms set, or a file that cannot be read, stop the command and say which.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::process::{Command, Stdio};
use std::time::Duration;

use support::Scratch;

fn billable() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_billable"));
    command.env_remove("DATABASE_URL").env_remove("BILLABLE_AGENT").env("BILLABLE_LOG_FORMAT", "json");
    command
}

#[test]
fn the_database_url_may_come_from_a_file_but_not_from_both() {
    let scratch = Scratch::new("secret-files");
    let database = scratch.0.join("from-file.db");
    let secret = scratch.0.join("database_url");
    std::fs::write(&secret, format!("sqlite://{}\n", database.display())).unwrap();

    let migrated = billable().arg("migrate").env("DATABASE_URL_FILE", &secret).output().unwrap();
    assert!(migrated.status.success(), "{}", String::from_utf8_lossy(&migrated.stderr));
    assert!(database.exists(), "the database the file names was made");

    let both = billable()
        .arg("migrate")
        .env("DATABASE_URL_FILE", &secret)
        .env("DATABASE_URL", "memory:")
        .output()
        .unwrap();
    assert!(!both.status.success());
    let said = String::from_utf8_lossy(&both.stderr);
    assert!(said.contains("DATABASE_URL and DATABASE_URL_FILE are both set: set one of them"), "{said}");

    let missing = scratch.0.join("no-such-secret");
    let unreadable = billable().arg("migrate").env("DATABASE_URL_FILE", &missing).output().unwrap();
    assert!(!unreadable.status.success());
    let said = String::from_utf8_lossy(&unreadable.stderr);
    assert!(said.contains(&format!("DATABASE_URL_FILE: cannot read {}", missing.display())), "{said}");
}

#[test]
fn an_agent_token_may_come_from_a_file() {
    let scratch = Scratch::new("secret-files-agent");
    let definition = scratch.0.join("agent.yaml");
    std::fs::write(
        &definition,
        "name: t\nmodel:\n  provider: echo\ntriggers:\n  - type: webhook\n    port: 0\n    token_env: SECRET_FILES_TEST_TOKEN\n",
    )
    .unwrap();
    let token = scratch.0.join("token");
    std::fs::write(&token, "a-token-from-a-file\n").unwrap();
    let mut child = billable()
        .args(["serve", "--listen", "127.0.0.1:0", "--agent"])
        .arg(&definition)
        .env("DATABASE_URL", "memory:")
        .env_remove("SECRET_FILES_TEST_TOKEN")
        .env("SECRET_FILES_TEST_TOKEN_FILE", &token)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let output = child.wait_with_output().expect("the server's output");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(running, "{said}");
    assert!(said.contains("serving agent triggers"), "{said}");
    assert!(!said.contains("a-token-from-a-file"), "the token is masked in the log: {said}");
}
