use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rand::Rng;
use uuid::Uuid;

/// Ids minted in one millisecond by this process are numbered 0 to 1,023 ([`SEQUENCE_BITS`]).
const SEQUENCE_BITS: u32 = 10;

/// The last `(unix milliseconds << SEQUENCE_BITS) | sequence` this process minted an id
/// at. Each id takes the next value that is not before the clock, so ids of one process
/// sort in the order they were made; the 1,025th id of a millisecond borrows the next one.
static LAST_STAMP: AtomicU64 = AtomicU64::new(0);

/// A fresh UUID v7: 48 bits of Unix milliseconds, 10 bits of sequence within the
/// millisecond, and 64 bits drawn for this id alone from a cryptographically secure
/// generator (rand's thread-local ChaCha, seeded by the operating system).
///
/// The 64 bits are what makes an id unguessable: nothing else the service hands out (other
/// ids, request ids, keys) reveals them, so knowing an id made in the same millisecond
/// leaves 2^64 possibilities. (The `uuid` crate's own v7 counter would give that id's
/// successor away but for 32 bits.)
pub fn mint_uuid() -> Uuid {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis());
    // 48 bits of milliseconds last until the year 10889.
    let now = u64::try_from(now).unwrap_or(u64::MAX).min((1 << 48) - 1) << SEQUENCE_BITS;
    let previous = LAST_STAMP
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| Some(now.max(last + 1)))
        .unwrap_or(now);
    let stamp = now.max(previous + 1);
    let (millis, sequence) = (stamp >> SEQUENCE_BITS, stamp & ((1 << SEQUENCE_BITS) - 1));
    let random: u64 = rand::rng().random();
    // `rand_a` (12 bits): the sequence, then 2 random bits; `rand_b` (62 bits): the other 62.
    let rand_a = (sequence << 2) | (random >> 62);
    let mut bytes = [0_u8; 10];
    bytes[..2].copy_from_slice(&u16::try_from(rand_a).unwrap_or(0).to_be_bytes());
    bytes[2..].copy_from_slice(&(random & ((1 << 62) - 1)).to_be_bytes());
    uuid::Builder::from_unix_timestamp_millis(millis, &bytes).into_uuid()
}

/// The 64 bits of `uuid`, minted by [`mint_uuid`], that were drawn for it alone.
pub fn random_bits(uuid: Uuid) -> u64 {
    let bits = uuid.as_u128();
    // rand_a's last 2 bits sit at 64..66; rand_b is the low 62.
    let high = u64::try_from((bits >> 64) & 0b11).unwrap_or(0);
    let low = u64::try_from(bits & ((1 << 62) - 1)).unwrap_or(0);
    (high << 62) | low
}

/// Behaviour shared by every entity id: a UUID (v7 when minted here), written lowercase
/// with hyphens. Parsing is strict so that a malformed id is simply "not found".
pub trait Id: Copy + Eq + Ord + std::hash::Hash + fmt::Display + fmt::Debug + Send + Sync {
    /// Wraps an existing UUID (e.g. one read back from storage).
    fn from_uuid(uuid: Uuid) -> Self;
    /// The underlying UUID.
    fn as_uuid(&self) -> Uuid;

    /// Mints a fresh, time-ordered, unguessable id: see [`mint_uuid`].
    #[must_use]
    fn generate() -> Self {
        Self::from_uuid(mint_uuid())
    }

    /// Parses the canonical text form (`8-4-4-4-12` hex, either case). Anything else is
    /// `None`, which callers report exactly like an unknown id.
    fn parse(text: &str) -> Option<Self> {
        if text.len() != 36 {
            return None;
        }
        Uuid::try_parse(text).ok().map(Self::from_uuid)
    }
}

/// Declares an id newtype implementing [`Id`].
#[macro_export]
macro_rules! define_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($crate::uuid::Uuid);

        impl $crate::Id for $name {
            fn from_uuid(uuid: $crate::uuid::Uuid) -> Self {
                Self(uuid)
            }
            fn as_uuid(&self) -> $crate::uuid::Uuid {
                self.0
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                ::std::fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0.hyphenated())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    #![expect(unreachable_pub, reason = "the macro declares public ids")]

    use super::Id;

    define_id!(
        /// An id for these tests.
        SampleId
    );

    #[test]
    fn generated_ids_round_trip_through_text() {
        let id = SampleId::generate();
        let text = id.to_string();
        assert_eq!(text.len(), 36);
        assert_eq!(text, text.to_lowercase());
        assert_eq!(SampleId::parse(&text), Some(id));
    }

    #[test]
    fn malformed_ids_do_not_parse() {
        for text in [
            "",
            "1",
            "not-a-uuid",
            "0190f0c2a0f27c3d8e5a6b7c8d9e0f1a",
            "{0190f0c2-a0f2-7c3d-8e5a-6b7c8d9e0f1a}",
        ] {
            assert_eq!(SampleId::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn generated_ids_are_distinct_and_time_ordered() {
        let ids: Vec<SampleId> = (0..5000).map(|_| SampleId::generate()).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "ids of one process sort as made");
        for id in &ids {
            assert_eq!(id.as_uuid().get_version_num(), 7);
            assert_eq!(id.as_uuid().get_variant(), uuid::Variant::RFC4122);
        }
    }

    /// Ids made back to back share no predictable random part: knowing one tells nothing
    /// of the next one's 64 random bits. Over many pairs, each bit of `first XOR next` is set
    /// about half the time (as it is for independent draws), never always the same, and no
    /// random part is repeated or follows from the one before by a small step.
    #[test]
    fn ids_made_back_to_back_share_no_predictable_random_part() {
        let pairs = 20_000_u32;
        let mut set = [0_u32; 64];
        let mut seen = std::collections::HashSet::new();
        for _ in 0..pairs {
            let (first, next) = (super::mint_uuid(), super::mint_uuid());
            let (a, b) = (super::random_bits(first), super::random_bits(next));
            assert!(a.abs_diff(b) > 1 << 20, "{first} then {next}: random parts a small step apart");
            assert!(seen.insert(a) && seen.insert(b), "a random part came twice");
            for (bit, count) in set.iter_mut().enumerate() {
                *count += u32::from(((a ^ b) >> bit) & 1 == 1);
            }
        }
        // Binomial(20,000, 1/2): 10,000 ± 71 (one standard deviation); 700 is ten of them.
        for (bit, count) in set.iter().enumerate() {
            assert!(count.abs_diff(pairs / 2) < 700, "bit {bit} differed in {count} of {pairs} pairs");
        }
    }

    #[test]
    fn the_random_bits_are_the_last_two_of_rand_a_and_all_of_rand_b() {
        // Sequence 0b11_1111_1111, then random bits 0b01; rand_b all ones but for its last bit.
        let bytes = [0x0F, 0xFD, 0x3F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE];
        let id = uuid::Builder::from_unix_timestamp_millis(1, &bytes).into_uuid();
        assert_eq!(super::random_bits(id), (0b01 << 62) | ((1 << 62) - 2));
    }
}
