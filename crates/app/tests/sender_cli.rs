//! `billable teams sender` sets what invoices show as their sender, payment details included.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use std::fmt::Write as _;

use sha2::{Digest, Sha256};
use support::{Schema, Scratch, billable, psql};

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

#[test]
fn a_logo_is_stored_as_its_file_is_refused_unless_drawable_and_removed_by_no_logo() {
    let schema = Schema::new("sender_logo");
    let scratch = Scratch::new("sender_logo");
    let url = schema.url("sslmode=prefer");
    let team = run(&url, &["teams", "create", "--name", "Studio"]);
    let stored = |id: &str| {
        psql(&format!(
            "SELECT coalesce(encode(sha256(logo), 'hex'), 'none') FROM {}.sender_addresses WHERE id = '{id}'",
            schema.0
        ))
    };
    let file = |name: &str, bytes: &[u8]| {
        let path = scratch.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    let refused = |path: &str| {
        let output =
            billable(&url).args(["teams", "sender", "--team", &team, "--logo", path]).output().unwrap();
        assert!(!output.status.success(), "{path} was accepted");
        String::from_utf8(output.stderr).unwrap()
    };

    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="40"><rect width="120" height="40"/></svg>"#;
    let sender = run(&url, &["teams", "sender", "--team", &team, "--logo", &file("logo.svg", svg)]);
    assert_eq!(stored(&sender), sha256_hex(svg));

    // A real PNG: the sample invoice's picture in the docs.
    let png = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/invoice-sample.png")).unwrap();
    assert_eq!(run(&url, &["teams", "sender", "--team", &team, "--logo", &file("logo.png", &png)]), sender);
    assert_eq!(stored(&sender), sha256_hex(&png));

    let not_an_image = file("logo.txt", b"Studio");
    assert!(refused(&not_an_image).contains("must be a PNG or SVG image"));
    let broken_svg = file("broken.svg", b"<svg xmlns=\"http://www.w3.org/2000/svg\"><rect");
    assert!(refused(&broken_svg).contains("not a valid SVG"));
    let mut large = png.clone();
    large.resize(256 * 1024 + 1, 0);
    assert!(refused(&file("large.png", &large)).contains("at most 262144 (256 KiB)"));
    assert!(refused(&scratch.0.join("missing.png").display().to_string()).contains("cannot read it"));
    assert_eq!(stored(&sender), sha256_hex(&png), "a refused logo changes nothing");

    assert_eq!(run(&url, &["teams", "sender", "--team", &team, "--no-logo"]), sender);
    assert_eq!(stored(&sender), "none");
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    })
}

#[test]
fn what_e_invoices_need_of_the_seller_is_checked_stored_and_removed_by_an_empty_value() {
    let schema = Schema::new("sender_cli_e_invoice");
    let url = schema.url("sslmode=prefer");
    let team = run(&url, &["teams", "create", "--name", "Studio", "--currency", "CHF"]);
    let set = [
        "teams",
        "sender",
        "--team",
        &team,
        "--city",
        "Zürich",
        "--country-code",
        "CH",
        "--iban",
        "CH93 0076 2011 6238 5295 7",
        "--bic",
        "UBSWCHZH80A",
        "--contact-name",
        "Zoë Łukasiewicz",
        "--contact-phone",
        "+41 44 000 00 00",
        "--contact-email",
        "books@studio.example",
    ];
    let sender = run(&url, &set);
    let refused = |flag: &str, value: &str| {
        let output = billable(&url).args(["teams", "sender", "--team", &team, flag, value]).output().unwrap();
        assert!(!output.status.success(), "{flag} {value} was taken");
        String::from_utf8(output.stderr).unwrap()
    };
    assert!(refused("--iban", "CH94 0076 2011 6238 5295 7").contains("--iban: must be a valid IBAN"));
    assert!(refused("--bic", "UBSW").contains("--bic: must be a BIC"));
    assert!(refused("--country-code", "XX").contains("--country-code: must be an ISO 3166-1 alpha-2"));
    assert!(refused("--contact-email", "not an email").contains("--contact-email:"));
    let stored = psql(&format!(
        "SELECT concat_ws('|', city, country_code, iban, bic, contact_name, contact_phone, contact_email) \
         FROM {}.sender_addresses WHERE id = '{sender}'",
        schema.0
    ));
    assert_eq!(
        stored,
        "Zürich|CH|CH9300762011623852957|UBSWCHZH80A|Zoë Łukasiewicz|+41 44 000 00 00|books@studio.example"
    );
    for flag in ["--iban", "--bic", "--country-code", "--contact-email", "--city"] {
        assert_eq!(run(&url, &["teams", "sender", "--team", &team, flag, ""]), sender, "{flag}");
    }
    let removed = psql(&format!(
        "SELECT concat_ws('|', city, coalesce(country_code, '-'), coalesce(iban, '-'), coalesce(bic, '-'), \
         coalesce(contact_email, '-')) FROM {}.sender_addresses WHERE id = '{sender}'",
        schema.0
    ));
    assert_eq!(removed, "|-|-|-|-");
}
