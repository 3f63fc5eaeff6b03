//! The bodies of billable's fuzz targets. Each takes the fuzzer's bytes, drives one part of
//! billable with them, and panics when an invariant breaks. cargo-fuzz's crate (`fuzz/`,
//! nightly) calls them; `tests/replay.rs` runs every saved input through them on stable, so
//! the corpus and each crash found become regression tests of `make test`.

#![expect(clippy::expect_used, reason = "a fuzz target reports a broken invariant by panicking")]

use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

mod rest;

pub use rest::rest_body;

/// A fuzz target's body: it panics when the input breaks an invariant.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, as `fuzz/fuzz_targets/<name>.rs` and the corpus's folders
/// call them.
pub const TARGETS: [(&str, Target); 4] =
    [("github", github), ("rest", rest_body), ("money", money), ("pdf", pdf)];

/// The signature check of the GitHub trigger, then the rendering of the event for the
/// model. The first byte picks the event; the rest is the body. A body signed with the
/// secret verifies, any other signature does not, and what reaches the model is bounded
/// and free of NUL.
pub fn github(data: &[u8]) {
    let Some((&pick, body)) = data.split_first() else { return };
    let secrets = triggers::Secrets::parse("fuzzing-secret, rotated-secret").expect("two secrets");
    let mut mac = Hmac::<Sha256>::new_from_slice(b"rotated-secret").expect("any key length");
    mac.update(body);
    let signed = mac.finalize().into_bytes().iter().fold(String::new(), |mut hex, byte| {
        use std::fmt::Write;
        let _ = write!(hex, "{byte:02x}");
        hex
    });
    assert!(secrets.verifies_signature(body, &format!("sha256={signed}")));
    // The body's own first bytes as a signature: verifies only by a (2⁻²⁵⁶) accident.
    let forged = String::from_utf8_lossy(&body[..body.len().min(71)]);
    assert!(
        !secrets.verifies_signature(body, &forged)
            || forged.eq_ignore_ascii_case(&format!("sha256={signed}"))
    );

    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(body) else { return };
    if !payload.is_object() {
        return;
    }
    let events = triggers::github::render::TYPED_EVENTS;
    let event = events.get(usize::from(pick)).copied().unwrap_or("deployment_status");
    let facts = triggers::EventFacts::of(event, &payload);
    let summary = facts.summary(&payload);
    assert!(summary.chars().count() <= 200, "summary of {} characters", summary.chars().count());
    let limit = 4096;
    let input = triggers::github::render::model_input(&facts, &payload, limit);
    let unframed = triggers::github::render::clip(&triggers::github::render::render(event, &payload), limit);
    assert!(unframed.len() <= limit, "clipped to {} bytes", unframed.len());
    assert!(!input.contains('\0') && !summary.contains('\0'), "NUL reaches the model");
    let _ = facts.conversation_key();
}

/// Money parsing and invoice totals. Every token of the text goes through each field's
/// parser as the API's would (each bound, whole numbers); then the tokens, by pairs, are a
/// line's unit price and quantity, and the last a tax percentage: those within their
/// bounds make an invoice in each currency, whose sums must add up at the minor unit.
pub fn money(data: &[u8]) {
    use billing::money::{AMOUNT, Currency, Decimal, QUANTITY, TAX_PERCENTAGE, UNIT_PRICE};
    let text = String::from_utf8_lossy(data);
    let tokens: Vec<&str> = text.split(|c: char| c.is_whitespace() || c == ',' || c == ';').collect();
    for token in &tokens {
        for bound in [UNIT_PRICE, QUANTITY, AMOUNT, TAX_PERCENTAGE] {
            if let Ok(value) = bound.parse(token) {
                assert!(value <= bound.max && value >= Decimal::ZERO, "{token} past its bound as {value}");
            }
        }
        let _ = kernel::number::whole_number(token);
    }
    let pairs: Vec<&[&str]> = tokens.chunks_exact(2).collect();
    let lines: Vec<(Decimal, Decimal)> = pairs
        .iter()
        .filter_map(|pair| Some((UNIT_PRICE.parse(pair[0]).ok()?, QUANTITY.parse(pair[1]).ok()?)))
        .take(billing::money::MAX_LINE_ITEMS)
        .collect();
    let percentage = tokens.last().and_then(|p| TAX_PERCENTAGE.parse(p).ok()).unwrap_or_default();
    if lines.is_empty() {
        return;
    }
    for code in ["EUR", "JPY", "KWD"] {
        let currency = Currency::parse(code).expect("a known currency");
        let inputs = lines
            .iter()
            .map(|(price, quantity)| billing::LineInput {
                discount: None,
                description: billing::invoice::Description::parse("x").expect("a description"),
                unit_price: *price,
                quantity: *quantity,
                amount: None,
                unit_code: None,
                vat: billing::LineVat::default(),
            })
            .collect();
        let now = chrono_now();
        let items = billing::invoice::price_lines(inputs, currency, now).expect("bounded lines price");
        let rule = billing::invoice::TaxRule::changed(None, Some(percentage), None);
        let totals =
            billing::invoice::Totals::compute(&items, &billing::Vat::default(), rule, None, currency)
                .expect("bounded totals");
        let minor = currency.minor_unit();
        assert_eq!(totals.subtotal, items.iter().map(|item| item.amount).sum::<Decimal>());
        assert_eq!(totals.total, totals.subtotal + totals.tax);
        for value in items.iter().map(|item| item.amount).chain([totals.subtotal, totals.tax, totals.total]) {
            assert_eq!(value.scale(), minor, "{value} in {code}");
            assert!(value >= Decimal::ZERO);
        }
    }
}

/// The built-in PDF renderer over arbitrary text: the text's lines become the invoice's
/// description, client, address and line items. Whatever the script, a PDF comes out.
pub fn pdf(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\n').map(str::to_owned);
    let mut document = renderer::sample_document(2, false);
    let mut next = |fallback: &str| parts.next().unwrap_or_else(|| fallback.to_owned());
    document.description = Some(next(""));
    document.client.name = next("Client");
    document.client.address = vec![next(""), next("")];
    for line in &mut document.lines {
        line.description = next("");
    }
    document.payment_details = Some(next(""));
    let rendered = renderer::render_pdf(&document).expect("any text renders");
    assert!(rendered.starts_with(b"%PDF-"));
}

/// The clock's reading, for the domain functions that stamp what they make.
fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    kernel::Clock::now(&kernel::SystemClock)
}

/// The stores of one team in memory, with an owner's write key.
async fn team_in_memory() -> (Arc<store_memory::MemoryStore>, String) {
    use accounts::AccountStore;
    let store = Arc::new(store_memory::MemoryStore::new());
    let now = chrono_now();
    let team = accounts::new_team(
        accounts::TeamName::parse("Fuzz").expect("a name"),
        accounts::Currency::parse("EUR").expect("a currency"),
        now,
    );
    let email = kernel::Email::parse("owner@example.com").expect("an email");
    let owner = accounts::new_user(
        team.id,
        email,
        accounts::UserName::parse("Owner").expect("a name"),
        accounts::Role::Owner,
        now,
    );
    let issued = accounts::issue_api_key(team.id, owner.id, accounts::Scope::Write, None, now);
    let made =
        store.bootstrap(&team, &owner, &issued.key, &issued.hash).await.expect("the store takes a team");
    assert!(made);
    (store, issued.secret.expose().to_owned())
}
