//! The idempotency port's contract: one claim wins a free key however claims race; a kept
//! answer comes back to the same request only; leases and expiry free a key.

use crate::Ports;
use crate::create_team;
use accounts::{Claimed, IdempotencyKey, KeptResponse, KeyClaim, RequestFingerprint, TeamId};
use chrono::{DateTime, TimeDelta, Utc};
use kernel::parse_instant;

fn at(text: &str) -> DateTime<Utc> {
    parse_instant(text).unwrap()
}

fn claim(team: TeamId, key: &str, body: u8, now: DateTime<Utc>) -> KeyClaim {
    KeyClaim {
        team,
        key: IdempotencyKey::parse(key).unwrap(),
        fingerprint: RequestFingerprint([body; 32]),
        at: now,
        lease_until: now + TimeDelta::minutes(1),
        expires_at: now + TimeDelta::hours(24),
    }
}

fn answer(status: u16) -> KeptResponse {
    KeptResponse {
        status,
        headers: vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("location".to_owned(), "/v1/invoices/x".to_owned()),
        ],
        // Bytes that are not UTF-8 come back as they were.
        body: vec![b'{', 0xff, 0x00, b'}'],
    }
}

pub async fn a_free_key_is_granted_once_even_when_claims_race(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let keys = store.idempotency();
    let now = at("2026-11-24T10:00:00Z");
    let mut racing = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let keys = keys.clone();
        racing.spawn(async move { keys.claim(&claim(team, "race", 1, now)).await });
    }
    let results = racing.join_all().await;
    let granted = results.iter().filter(|r| matches!(r, Ok(Claimed::Granted))).count();
    let in_flight = results.iter().filter(|r| matches!(r, Ok(Claimed::InFlight))).count();
    assert_eq!((granted, in_flight), (1, 7), "{results:?}");
    assert_eq!(keys.claim(&claim(team, "race", 2, now)).await.unwrap(), Claimed::Mismatch);
}

pub async fn an_answered_key_gives_its_answer_to_the_same_request_only(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let keys = store.idempotency();
    let now = at("2026-11-24T10:00:00Z");
    let first = claim(team, "k-1", 1, now);
    assert_eq!(keys.claim(&first).await.unwrap(), Claimed::Granted);
    keys.answer(&first, &answer(201)).await.unwrap();
    let later = now + TimeDelta::hours(2);
    assert_eq!(keys.claim(&claim(team, "k-1", 1, later)).await.unwrap(), Claimed::Answered(answer(201)));
    assert_eq!(keys.claim(&claim(team, "k-1", 9, later)).await.unwrap(), Claimed::Mismatch);
    // An answer is kept once: a second answer to the same claim changes nothing.
    keys.answer(&first, &answer(500)).await.unwrap();
    assert_eq!(keys.claim(&claim(team, "k-1", 1, later)).await.unwrap(), Claimed::Answered(answer(201)));
    // Past the lease an answered key is not taken over.
    let past_lease = now + TimeDelta::hours(3);
    assert_eq!(keys.claim(&claim(team, "k-1", 1, past_lease)).await.unwrap(), Claimed::Answered(answer(201)));
}

pub async fn an_unanswered_key_is_freed_by_release_or_its_lease(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let keys = store.idempotency();
    let now = at("2026-11-24T10:00:00Z");
    let first = claim(team, "k-2", 1, now);
    assert_eq!(keys.claim(&first).await.unwrap(), Claimed::Granted);
    keys.release(&first).await.unwrap();
    // Released, the key takes another request.
    let second = claim(team, "k-2", 2, now + TimeDelta::seconds(1));
    assert_eq!(keys.claim(&second).await.unwrap(), Claimed::Granted);
    // Within the lease a retry waits; past it, the key is taken over, and the attempt that
    // lost it can neither answer nor release it any more.
    assert_eq!(
        keys.claim(&claim(team, "k-2", 2, now + TimeDelta::seconds(30))).await.unwrap(),
        Claimed::InFlight
    );
    let takeover = claim(team, "k-2", 2, now + TimeDelta::seconds(62));
    assert_eq!(keys.claim(&takeover).await.unwrap(), Claimed::Granted);
    keys.answer(&second, &answer(201)).await.unwrap();
    keys.release(&second).await.unwrap();
    let retry = claim(team, "k-2", 2, now + TimeDelta::seconds(63));
    assert_eq!(keys.claim(&retry).await.unwrap(), Claimed::InFlight);
    keys.answer(&takeover, &answer(204)).await.unwrap();
    keys.release(&takeover).await.unwrap(); // an answered key stays answered
    assert_eq!(keys.claim(&retry).await.unwrap(), Claimed::Answered(answer(204)));
}

pub async fn expired_keys_are_free_and_purged(store: Ports) {
    let team = create_team(&store, "Acme").await;
    let keys = store.idempotency();
    let now = at("2026-11-24T10:00:00Z");
    for key in ["old-1", "old-2"] {
        let first = claim(team, key, 1, now);
        keys.claim(&first).await.unwrap();
        keys.answer(&first, &answer(201)).await.unwrap();
    }
    let fresh = claim(team, "fresh", 1, now + TimeDelta::hours(12));
    keys.claim(&fresh).await.unwrap();
    keys.answer(&fresh, &answer(200)).await.unwrap();
    let next_day = now + TimeDelta::hours(24);
    // An expired key takes any request, as if never used.
    assert_eq!(keys.claim(&claim(team, "old-1", 7, next_day)).await.unwrap(), Claimed::Granted);
    assert_eq!(keys.purge_idempotency_keys(next_day).await.unwrap(), 1, "old-2 alone had expired");
    assert_eq!(keys.claim(&claim(team, "fresh", 1, next_day)).await.unwrap(), Claimed::Answered(answer(200)));
}

pub async fn keys_are_per_team(store: Ports) {
    let acme = create_team(&store, "Acme").await;
    let globex = create_team(&store, "Globex").await;
    let keys = store.idempotency();
    let now = at("2026-11-24T10:00:00Z");
    let first = claim(acme, "shared-name", 1, now);
    keys.claim(&first).await.unwrap();
    keys.answer(&first, &answer(201)).await.unwrap();
    assert_eq!(keys.claim(&claim(globex, "shared-name", 1, now)).await.unwrap(), Claimed::Granted);
}
