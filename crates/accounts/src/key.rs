use chrono::{DateTime, Utc};
use kernel::define_id;
use rand::{Rng, distr::Alphanumeric};
use sha2::{Digest, Sha256};

use crate::{Permission, Role, Scope, TeamId, UserId};

define_id!(
    /// Identifies an API key (not the secret itself: ids are safe to show and log).
    ApiKeyId
);

const PREFIX: &str = "bk_";
/// 43 base62 characters carry 256 bits of randomness.
const RANDOM_CHARS: usize = 43;

/// The secret text of an API key, `bk_` followed by 43 base62 characters. It exists only
/// when a key is issued (to be shown once) and when a request presents it; storage keeps
/// its [`KeyHash`].
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKeySecret(String);

impl ApiKeySecret {
    /// A fresh secret from the thread-local generator, a CSPRNG seeded by the operating system.
    pub fn generate() -> Self {
        let random: String =
            rand::rng().sample_iter(&Alphanumeric).take(RANDOM_CHARS).map(char::from).collect();
        Self(format!("{PREFIX}{random}"))
    }

    /// Accepts text shaped like a key; anything else cannot be one and needs no lookup.
    pub fn parse(text: &str) -> Option<Self> {
        let random = text.strip_prefix(PREFIX)?;
        (random.len() == RANDOM_CHARS && random.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self(text.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn hash(&self) -> KeyHash {
        let digest = Sha256::digest(self.0.as_bytes());
        let mut bytes = [0_u8; 32];
        bytes.copy_from_slice(&digest);
        KeyHash(bytes)
    }

    /// The first characters, kept in clear so that people can tell their keys apart.
    pub fn display_prefix(&self) -> String {
        self.0.chars().take(PREFIX.len() + 6).collect()
    }
}

impl std::fmt::Debug for ApiKeySecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKeySecret({}…)", self.display_prefix())
    }
}

/// SHA-256 of a key's text: what storage keeps and looks keys up by. The secret has 256
/// bits of entropy, so a fast unsalted hash is enough; lookup by hash means no secret is
/// ever compared byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 32]);

/// An API key as stored and listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub team_id: TeamId,
    pub user_id: UserId,
    pub scope: Scope,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// What a key lookup yields: the key and the role of the user it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credential {
    pub key: ApiKey,
    pub role: Role,
}

/// Why a presented key does not authenticate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("invalid API key")]
    Unknown,
    #[error("API key expired")]
    Expired,
    #[error("API key revoked")]
    Revoked,
}

impl Credential {
    /// The principal this credential stands for at `now`, unless it expired or was revoked.
    pub fn authenticate(&self, now: DateTime<Utc>) -> Result<Principal, Refusal> {
        if self.key.revoked_at.is_some_and(|at| at <= now) {
            return Err(Refusal::Revoked);
        }
        if self.key.expires_at.is_some_and(|at| at <= now) {
            return Err(Refusal::Expired);
        }
        Ok(Principal {
            key_id: self.key.id,
            team_id: self.key.team_id,
            user_id: self.key.user_id,
            role: self.role,
            scope: self.key.scope.clone(),
        })
    }
}

/// Who is making a request: a key of one user in one team, with its scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub key_id: ApiKeyId,
    pub team_id: TeamId,
    pub user_id: UserId,
    pub role: Role,
    pub scope: Scope,
}

impl Principal {
    pub fn may(&self, permission: Permission) -> bool {
        self.scope.allows(permission)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};
    use kernel::Id;

    use super::*;

    fn credential(expires_in: Option<i64>, revoked_ago: Option<i64>) -> Credential {
        let now = Utc::now();
        Credential {
            key: ApiKey {
                id: ApiKeyId::generate(),
                team_id: TeamId::generate(),
                user_id: UserId::generate(),
                scope: Scope::Write,
                prefix: "bk_abcdef".into(),
                created_at: now,
                expires_at: expires_in.map(|s| now + TimeDelta::seconds(s)),
                revoked_at: revoked_ago.map(|s| now - TimeDelta::seconds(s)),
                last_used_at: None,
            },
            role: Role::Member,
        }
    }

    #[test]
    fn generated_secrets_parse_and_differ() {
        let a = ApiKeySecret::generate();
        let b = ApiKeySecret::generate();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), 3 + 43);
        assert_eq!(ApiKeySecret::parse(a.expose()), Some(a.clone()));
        assert_ne!(a.hash(), b.hash());
        assert!(a.expose().starts_with(&a.display_prefix()));
    }

    #[test]
    fn malformed_secrets_are_refused_without_lookup() {
        let good = ApiKeySecret::generate();
        let random = &good.expose()[3..];
        for text in [
            String::new(),
            random.to_owned(),
            format!("bk_{}", &random[1..]),
            format!("bk_{random}x"),
            format!("bk-{random}"),
            format!("bk_{}!", &random[1..]),
        ] {
            assert_eq!(ApiKeySecret::parse(&text), None, "{text:?}");
        }
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let secret = ApiKeySecret::generate();
        assert!(!format!("{secret:?}").contains(secret.expose()));
    }

    #[test]
    fn hash_is_sha256_of_the_text() {
        let secret = ApiKeySecret::parse("bk_0000000000000000000000000000000000000000000").unwrap();
        let hex: String = secret.hash().0.iter().fold(String::new(), |hex, b| hex + &format!("{b:02x}"));
        assert_eq!(hex, "0efaf1f6249a26c3ab96827115924100735e0bc757a4786a25af7ce4a902bf42");
    }

    #[test]
    fn expired_and_revoked_keys_do_not_authenticate() {
        let now = Utc::now();
        assert!(credential(None, None).authenticate(now).is_ok());
        assert!(credential(Some(3600), None).authenticate(now).is_ok());
        assert_eq!(credential(Some(-1), None).authenticate(now), Err(Refusal::Expired));
        assert_eq!(credential(None, Some(1)).authenticate(now), Err(Refusal::Revoked));
        assert_eq!(credential(Some(-1), Some(1)).authenticate(now), Err(Refusal::Revoked));
    }
}
