use std::fmt;

use uuid::Uuid;

/// Behaviour shared by every entity id: a UUID (v7 when minted here), written lowercase
/// with hyphens. Parsing is strict so that a malformed id is simply "not found".
pub trait Id: Copy + Eq + Ord + std::hash::Hash + fmt::Display + fmt::Debug + Send + Sync {
    /// Wraps an existing UUID (e.g. one read back from storage).
    fn from_uuid(uuid: Uuid) -> Self;
    /// The underlying UUID.
    fn as_uuid(&self) -> Uuid;

    /// Mints a fresh, time-ordered, unguessable id: a UUID v7 whose 74 bits after the
    /// timestamp are a counter reseeded at random each millisecond and 32 random bits, from
    /// a cryptographically secure generator.
    #[must_use]
    fn generate() -> Self {
        Self::from_uuid(Uuid::now_v7())
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
    #![allow(unreachable_pub, reason = "the macro declares public ids")]

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
        let first = SampleId::generate();
        let second = SampleId::generate();
        assert_ne!(first, second);
        assert!(first < second);
    }
}
