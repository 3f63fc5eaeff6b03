//! `billable jobs run` with the real binary: a header over its counts, a dry run that
//! changes nothing, and a refusal, running nothing, when work is due that its settings
//! cannot do (e-mail without an SMTP server).

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use serde_json::{Value, json};
use support::{Scratch, billable, serve_rest, team_and_key};

/// Runs `billable jobs run` with `args` and `env`: whether it succeeded, stdout, stderr.
fn jobs_run(database_url: &str, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut command = billable(database_url);
    command.args(["jobs", "run"]).args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (output.status.success(), text(output.stdout), text(output.stderr))
}

/// Makes, through a server with e-mail configured, a recurring invoice in `mode` billing
/// on the 1st of each month from January 2027; the server is stopped after.
async fn recurring(database_url: &str, key: &str, modes: &[&str]) -> Vec<Value> {
    let smtp = [("BILLABLE_SMTP_URL", "smtp://127.0.0.1:9"), ("BILLABLE_MAIL_FROM", "billing@acme.example")];
    let (mut server, rest_port) =
        serve_rest(database_url, &[&[("BILLABLE_RUN_JOBS", "false")], &smtp[..]].concat());
    let http = reqwest::Client::new();
    let post = async |path: &str, body: Value| -> Value {
        let response = http
            .post(format!("http://127.0.0.1:{rest_port}{path}"))
            .header("x-api-key", key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
        response.json().await.unwrap()
    };
    let client = post(
        "/v1/invoices/clients",
        json!({"name": "Zoë", "email": "zoe@example.com", "line1": "1 Main Street", "postalCode": "1000"}),
    )
    .await;
    let mut made = Vec::new();
    for mode in modes {
        let body = json!({"clientId": client["id"], "mode": mode,
            "template": {"lineItems": [{"description": "Retainer", "unitPrice": 1500, "quantity": 1}]},
            "schedule": {"frequency": "monthly", "dayOfMonth": 1}, "startsOn": "2027-01-01"});
        made.push(post("/v1/recurring-invoices", body).await);
    }
    let _ = server.kill();
    let _ = server.wait();
    made
}

const RUN_HEADER: &str = "overdue\treminders\tdispatched\tdone\tretried\tfailed\trecurring_invoices";
const DUE_HEADER: &str =
    "recurring_invoices\trecurring_mailed\toverdue\treminders\tevents\tmail\twebhooks\tagent";

#[tokio::test]
async fn jobs_it_cannot_do_are_refused_and_a_dry_run_changes_nothing() {
    let scratch = Scratch::new("jobs-cli");
    let url = scratch.sqlite_url();
    let key = team_and_key(&url);
    recurring(&url, &key, &["issue", "issue_and_send"]).await;
    let at = ["--at", "2027-01-01T06:00:00Z"];

    // What is due: two recurring invoices, one of them mailing its invoice; their events.
    // Without an SMTP server the dry run fails as the run would, after saying so.
    let (ok, out, err) = jobs_run(&url, &[&at[..], &["--dry-run"]].concat(), &[]);
    assert!(!ok && err.contains("BILLABLE_SMTP_URL"), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], DUE_HEADER);
    let counts: Vec<u64> = lines[1].split('\t').map(|n| n.parse().unwrap()).collect();
    assert_eq!(&counts[..4], [2, 1, 0, 0], "{out}");
    assert_eq!(counts[5..], [0, 0, 0], "{out}");

    // Without an SMTP server the mailing one cannot be done: refused, naming the setting,
    // and nothing is made, the other invoice neither.
    let (ok, out, err) = jobs_run(&url, &at, &[]);
    assert!(!ok, "{out}");
    assert!(err.contains("BILLABLE_SMTP_URL") && err.contains("nothing was run"), "{err}");
    let smtp = [("BILLABLE_SMTP_URL", "smtp://127.0.0.1:9"), ("BILLABLE_MAIL_FROM", "billing@acme.example")];
    let (ok, again, err) = jobs_run(&url, &[&at[..], &["--dry-run"]].concat(), &smtp);
    assert!(ok, "{err}");
    assert_eq!(again, out_of(&lines), "the dry runs and the refusal changed nothing");

    // With one, it runs: a header over what it did.
    let (ok, out, err) = jobs_run(&url, &at, &smtp);
    assert!(ok, "{err}");
    let [header, line] = out.lines().collect::<Vec<_>>().try_into().unwrap();
    assert_eq!(header, RUN_HEADER);
    assert_eq!(line.split('\t').next_back(), Some("2"), "both invoices made: {out}");
}

fn out_of(lines: &[&str]) -> String {
    lines.iter().flat_map(|line| [*line, "\n"]).collect()
}
