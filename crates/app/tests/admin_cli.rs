//! The command line knows its user: the first start names the team and the owner it made,
//! teams and users can be listed, and every option that takes a team, a user or a key
//! takes its name, email or prefix as well as its id. `--listen` takes a port alone, and a
//! port in use says which setting to change.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

use support::{Scratch, billable};

/// The binary's stdout for `args` on `database_url`, which must succeed.
fn run(database_url: &str, args: &[&str]) -> String {
    let output = billable(database_url).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

/// The binary's stderr for `args`, which must fail.
fn refused(database_url: &str, args: &[&str]) -> String {
    let output = billable(database_url).args(args).output().unwrap();
    assert!(!output.status.success(), "{args:?} succeeded");
    String::from_utf8(output.stderr).unwrap()
}

/// Starts `serve` with `args`, and returns its stderr up to the line that says it serves.
fn first_start(database_url: &str, args: &[&str]) -> String {
    let mut server = billable(database_url).arg("serve").args(args).stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut seen = String::new();
    let deadline = std::time::Instant::now() + Duration::from_mins(1);
    while !seen.contains("serving the REST API") && std::time::Instant::now() < deadline {
        if stderr.read_line(&mut seen).unwrap() == 0 {
            break;
        }
    }
    server.kill().unwrap();
    server.wait().unwrap();
    seen
}

/// The value after `label` on the banner line that starts with it.
fn banner_value<'a>(banner: &'a str, label: &str) -> &'a str {
    let line = banner.lines().find(|line| line.trim_start().starts_with(label)).expect(label);
    line.trim_start()[label.len()..].split_whitespace().next().unwrap()
}

#[test]
fn the_first_start_names_its_team_and_owner_and_the_cli_takes_names() {
    let scratch = Scratch::new("admin-cli");
    let url = scratch.sqlite_url();
    // A port alone is taken, on 127.0.0.1.
    let banner = first_start(&url, &["--listen", ":0"]);
    assert!(banner.contains(r#""address":"127.0.0.1:0""#), "{banner}");
    let key = banner_value(&banner, "X-API-Key:");
    let team = banner_value(&banner, "Team:");
    let owner = banner_value(&banner, "Owner:");
    assert!(key.starts_with("bk_"), "{banner}");
    assert!(banner.contains(&format!("Owner: {owner} owner@billable.localhost")), "{banner}");

    let teams = run(&url, &["teams", "list"]);
    let fields: Vec<&str> = teams.lines().next().unwrap().split('\t').collect();
    assert_eq!(fields[..3], [team, "Default", "USD"]);
    for named in [team, "Default"] {
        let users = run(&url, &["users", "list", "--team", named]);
        let fields: Vec<&str> = users.lines().next().unwrap().split('\t').collect();
        assert_eq!(fields[..4], [owner, "owner@billable.localhost", "Owner", "owner"]);
    }

    // The first start's team is the operator's to rename and give its currency, while it
    // has no books; a name another team has is refused.
    assert_eq!(
        run(&url, &["teams", "update", "--team", "Default", "--name", "Muster GmbH", "--currency", "EUR"]),
        team
    );
    let renamed = run(&url, &["teams", "list"]);
    assert_eq!(
        renamed.lines().next().unwrap().split('\t').collect::<Vec<_>>()[..3],
        [team, "Muster GmbH", "EUR"]
    );
    let bad = refused(&url, &["teams", "update", "--team", team, "--currency", "eur"]);
    assert!(bad.contains("--currency: must be an ISO 4217 currency code"), "{bad}");

    // A team, a user and keys, each named rather than given by id.
    let acme = run(&url, &["teams", "create", "--name", "Acme", "--currency", "EUR"]);
    let clash = refused(&url, &["teams", "update", "--team", "Acme", "--name", "MUSTER gmbh"]);
    assert!(clash.contains(&format!("--name: team {team} already has this name")), "{clash}");
    let ada =
        run(&url, &["users", "create", "--team", "Acme", "--email", "ada@acme.example", "--role", "admin"]);
    run(&url, &["teams", "sender", "--team", "Acme", "--line1", "Hauptstraße 1"]);
    let first =
        run(&url, &["keys", "create", "--team", "Acme", "--user", "ADA@acme.example", "--scope", "write"]);
    let second = run(&url, &["keys", "create", "--team", &acme, "--user", &ada, "--scope", "read-only"]);
    let listed = run(&url, &["keys", "list", "--team", "Acme"]);
    assert_eq!(listed.lines().count(), 2);
    let row_of = |key: &str| {
        let prefix: String = key.chars().take(9).collect();
        listed.lines().find(|row| row.split('\t').nth(1) == Some(&prefix)).unwrap().to_owned()
    };
    let first_row = row_of(&first);
    let (first_id, first_prefix) = {
        let fields: Vec<&str> = first_row.split('\t').collect();
        (fields[0].to_owned(), fields[1].to_owned())
    };
    assert_eq!(first_row.split('\t').nth(2), Some(ada.as_str()), "the key is Ada's");
    assert_eq!(run(&url, &["keys", "revoke", &first_prefix]), first_id, "by its prefix");
    let second_id = row_of(&second).split('\t').next().unwrap().to_owned();
    assert_eq!(run(&url, &["keys", "revoke", &second]), second_id, "by the key itself");

    // Names are a team's handle: unique in any case, and found in any case.
    let taken = refused(&url, &["teams", "create", "--name", "ACME"]);
    assert!(taken.contains(&format!("--name: team {acme} already has this name")), "{taken}");
    assert_eq!(run(&url, &["users", "list", "--team", "acme"]).lines().count(), 1);
    // What names nothing is refused naming the option.
    let none = refused(&url, &["users", "list", "--team", "Globex"]);
    assert!(none.contains(r#"--team: no team has the id or name "Globex""#), "{none}");
    let nobody =
        refused(&url, &["keys", "create", "--team", &acme, "--user", "bob@acme.example", "--scope", "write"]);
    assert!(
        nobody.contains("--user: team")
            && nobody.contains(r#"no user with the id or email "bob@acme.example""#),
        "{nobody}"
    );
    let unknown_key = format!("bk_{}", "Z".repeat(43));
    let missing = refused(&url, &["keys", "revoke", &unknown_key]);
    assert!(missing.contains("no API key has the id, prefix or text \"bk_ZZZZZZ…\""), "{missing}");
    assert!(!missing.contains(&unknown_key), "a key is not repeated whole: {missing}");
}

#[test]
fn a_port_in_use_names_the_setting_to_change() {
    let scratch = Scratch::new("admin-cli-port");
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    for listen in [port.clone(), format!(":{port}"), format!("127.0.0.1:{port}")] {
        let stderr = refused(&scratch.sqlite_url(), &["serve", "--listen", &listen]);
        assert!(
            stderr.contains(&format!("127.0.0.1:{port} is already in use"))
                && stderr.contains("--listen (BILLABLE_LISTEN)"),
            "{stderr}"
        );
    }
    let bad = refused(&scratch.sqlite_url(), &["serve", "--listen", "localhost"]);
    assert!(bad.contains("is not an address: write a port (3005), or HOST:PORT"), "{bad}");
}
