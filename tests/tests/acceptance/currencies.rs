//! The currencies billable takes, against a published ISO 4217 table (the Python package `iso4217`, pinned
//! in `tests/einvoice/requirements.txt`): every code with a minor unit is taken with that
//! many decimals (0, 2, 3 or 4), every code without one (gold, SDR, the test code) is
//! refused, and nothing else of three letters is taken.

use std::collections::BTreeMap;
use std::process::Command;

use accounts::Currency;
use billing::money::{format_money, round_to_minor};
use rust_decimal::Decimal;

/// The published table: each code and its minor unit (`None` where it has none).
fn published() -> BTreeMap<String, Option<u32>> {
    let script = "import iso4217, json; print(json.dumps({c.code: c.exponent for c in iso4217.Currency}))";
    let output = Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap_or_else(|e| panic!("python3: {e} (pip install -r tests/einvoice/requirements.txt)"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Codes withdrawn from ISO 4217 that `iso_currency` still lists, taken so that data made in
/// them stays readable: the Bulgarian lev (the euro since 2026), the Cuban convertible peso
/// (2021), the Croatian kuna (the euro since 2023), the old Sierra Leonean leone (SLE since
/// 2022) and the Zimbabwean dollar (ZWG since 2024).
const WITHDRAWN: [&str; 5] = ["BGN", "CUC", "HRK", "SLL", "ZWL"];

#[test]
fn every_iso_4217_code_with_a_minor_unit_is_taken_with_its_decimals() {
    let table = published();
    let with_minor: Vec<_> = table.iter().filter_map(|(code, minor)| minor.map(|m| (code, m))).collect();
    assert!(with_minor.len() > 150, "the table lists {} currencies with a minor unit", with_minor.len());
    for minor in [0, 2, 3, 4] {
        assert!(with_minor.iter().any(|(_, m)| *m == minor), "the table has currencies of {minor} decimals");
    }
    for (code, minor) in &with_minor {
        let currency = Currency::parse(code).unwrap_or_else(|e| panic!("{code}: {e}"));
        assert_eq!(currency.minor_unit(), *minor, "{code}");
        // 1234.56789 at the minor unit, half away from zero, written with exactly its decimals.
        let rounded = round_to_minor(Decimal::new(123_456_789, 5), currency);
        let expected = ["1235", "1234.6", "1234.57", "1234.568", "1234.5679"][*minor as usize];
        assert_eq!(rounded.to_string(), expected, "{code}");
        assert_eq!(
            format_money(locale::Language::English, rounded, currency),
            format!("1,{} {code}", &expected[1..])
        );
    }
    for (code, _) in table.iter().filter(|(_, minor)| minor.is_none()) {
        assert!(Currency::parse(code).is_err(), "{code} has no minor unit and is refused");
    }
    // Nothing outside the table, of every three capital letters, but the codes withdrawn
    // since the `iso_currency` table was made, which stay readable for the data made in them.
    let letters = || (b'A'..=b'Z').map(char::from);
    let taken_beyond: Vec<String> = letters()
        .flat_map(|a| letters().flat_map(move |b| letters().map(move |c| format!("{a}{b}{c}"))))
        .filter(|code| !table.contains_key(code) && Currency::parse(code).is_ok())
        .collect();
    assert_eq!(taken_beyond, WITHDRAWN, "codes taken that the published table does not list");
}
