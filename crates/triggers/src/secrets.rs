//! Trigger credentials: bearer tokens and body signatures, both compared timing-safely
//! and both accepting every secret given, for a rotation.

use constant_time_eq::constant_time_eq;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// One trigger's secrets: one, or several separated by commas while a secret is being
/// rotated (each is accepted). Empty entries are ignored.
#[derive(Clone)]
pub struct Secrets(Vec<Vec<u8>>);

impl Secrets {
    /// `None` when the value holds no secret at all.
    pub fn parse(value: &str) -> Option<Self> {
        let secrets: Vec<Vec<u8>> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.as_bytes().to_vec())
            .collect();
        (!secrets.is_empty()).then_some(Self(secrets))
    }

    /// Whether `presented` equals one of the secrets, compared in constant time.
    pub fn matches_token(&self, presented: &[u8]) -> bool {
        // Every secret is compared, so timing tells nothing about which one matched.
        self.0.iter().fold(false, |found, secret| constant_time_eq(secret, presented) | found)
    }

    /// Whether `signature` (`sha256=<hex>`, as in `X-Hub-Signature-256`) is the
    /// HMAC-SHA256 of `body` under one of the secrets.
    pub fn verifies_signature(&self, body: &[u8], signature: &str) -> bool {
        let Some(expected) = signature.strip_prefix("sha256=").and_then(decode_hex) else {
            return false;
        };
        self.0.iter().fold(false, |found, secret| {
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
                return found;
            };
            mac.update(body);
            mac.verify_slice(&expected).is_ok() | found
        })
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secrets({} redacted)", self.0.len())
    }
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::Secrets;

    #[test]
    fn tokens_match_either_secret_during_rotation() {
        let secrets = Secrets::parse("old-token, new-token").unwrap();
        assert!(secrets.matches_token(b"old-token"));
        assert!(secrets.matches_token(b"new-token"));
        assert!(!secrets.matches_token(b"new-toke"));
        assert!(!secrets.matches_token(b""));
        assert!(Secrets::parse(" , ").is_none());
    }

    #[test]
    fn signature_is_hmac_sha256_hex() {
        // Known answer from the platform's documentation example.
        let secrets = Secrets::parse("It's a Secret to Everybody").unwrap();
        let body = b"Hello, World!";
        let good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert!(secrets.verifies_signature(body, good));
        assert!(!secrets.verifies_signature(b"Hello, World?", good));
        assert!(!secrets.verifies_signature(body, &good.replace("sha256=", "sha1=")));
        assert!(!secrets.verifies_signature(body, "sha256=zz"));
        assert!(!secrets.verifies_signature(body, ""));
    }
}
