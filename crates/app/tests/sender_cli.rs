//! `billable teams sender` sets what invoices show as their sender, payment details included.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use support::{Schema, billable, psql};

/// Runs the binary on `database_url` with `args`; its stdout, trimmed.
fn run(database_url: &str, args: &[&str]) -> String {
    let output = billable(database_url).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

#[test]
fn payment_details_are_stored_with_their_lines_and_removed_by_an_empty_value() {
    let schema = Schema::new("sender_cli");
    let url = schema.url("sslmode=prefer");
    let team = run(&url, &["teams", "create", "--name", "Studio", "--currency", "EUR"]);
    let details = r"Berliner Sparkasse\nIBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX";
    let sender = run(&url, &["teams", "sender", "--team", &team, "--payment-details", details]);
    let stored = |id: &str| {
        psql(&format!("SELECT payment_details FROM {}.sender_addresses WHERE id = '{id}'", schema.0))
    };
    assert_eq!(stored(&sender), "Berliner Sparkasse\nIBAN DE89 3704 0044 0532 0130 00 · BIC COBADEFFXXX");

    let too_long = "x".repeat(1001);
    let output = billable(&url)
        .args(["teams", "sender", "--team", &team, "--payment-details", &too_long])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("--payment-details: must be at most 1000 characters")
    );

    assert_eq!(run(&url, &["teams", "sender", "--team", &team, "--payment-details", ""]), sender);
    assert_eq!(stored(&sender), "");
}
