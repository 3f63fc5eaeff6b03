//! Secrets kept out of everything the process writes to stderr: its log lines and its last
//! error. The secrets are the ones configuration hands it (the passwords in `DATABASE_URL`
//! and `BILLABLE_REDIS_URL`, the tokens and keys an agent definition's variables hold); a
//! message that quotes one, whoever wrote it (a driver's error, a parser's), shows `***`.

use std::io::Write;
use std::sync::{Arc, PoisonError, RwLock};

/// What stands in for a secret.
const MASK: &str = "***";

/// Shorter values are not masked: they would mask ordinary words, and guard nothing.
const SHORTEST_SECRET: usize = 4;

/// The secrets known so far; cheap to clone, shared by the log writer and the code that
/// learns of new ones.
#[derive(Clone, Default)]
pub struct Redactions(Arc<RwLock<Vec<String>>>);

impl std::fmt::Debug for Redactions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.0.read().map_or(0, |secrets| secrets.len());
        f.debug_struct("Redactions").field("secrets", &count).finish()
    }
}

impl Redactions {
    /// Masks `secret` from now on: as written, and as a log line escapes it (JSON lines
    /// write `"` as `\"`; a field shown with `Debug` escapes `\` and control characters).
    pub fn add(&self, secret: &str) {
        if secret.len() < SHORTEST_SECRET {
            return;
        }
        let quoted = |text: String| text.get(1..text.len().saturating_sub(1)).unwrap_or_default().to_owned();
        let json = serde_json::to_string(secret).map(quoted).unwrap_or_default();
        let debug = quoted(format!("{secret:?}"));
        let mut secrets = self.0.write().unwrap_or_else(PoisonError::into_inner);
        for form in [secret.to_owned(), json, debug] {
            if form.len() >= SHORTEST_SECRET && !secrets.contains(&form) {
                secrets.push(form);
            }
        }
        // Longest first, so that a secret containing another is masked whole.
        secrets.sort_by_key(|known| std::cmp::Reverse(known.len()));
    }

    /// Masks the credentials a URL carries: the password of `user:password@`, as written
    /// and percent-decoded, and a `password=` in its query.
    pub fn add_url(&self, url: &str) {
        let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if let Some((userinfo, _)) = authority.rsplit_once('@')
            && let Some((_, password)) = userinfo.split_once(':')
        {
            self.add(password);
            if let Ok(decoded) = percent_decode(password) {
                self.add(&decoded);
            }
        }
        let query = url.split_once('?').map_or("", |(_, query)| query);
        for (name, value) in query.split('&').filter_map(|pair| pair.split_once('=')) {
            if name.eq_ignore_ascii_case("password") {
                self.add(value);
                if let Ok(decoded) = percent_decode(value) {
                    self.add(&decoded);
                }
            }
        }
    }

    /// `text` with every known secret masked.
    pub fn scrub(&self, text: &str) -> String {
        let secrets = self.0.read().unwrap_or_else(PoisonError::into_inner);
        secrets.iter().fold(text.to_owned(), |text, secret| text.replace(secret.as_str(), MASK))
    }

    /// A writer for tracing's formatter: stderr, with every known secret masked. The
    /// formatter writes each event whole, so a secret is never split across two writes.
    pub fn stderr(&self) -> ScrubbedStderr {
        ScrubbedStderr(self.clone())
    }
}

/// `%XX` sequences decoded, as URLs carry them.
fn percent_decode(text: &str) -> Result<String, std::str::Utf8Error> {
    percent_encoding::percent_decode_str(text).decode_utf8().map(std::borrow::Cow::into_owned)
}

/// Standard error, with the known secrets masked.
#[derive(Debug)]
pub struct ScrubbedStderr(Redactions);

impl Write for ScrubbedStderr {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(bytes) {
            Ok(text) => std::io::stderr().lock().write_all(self.0.scrub(text).as_bytes())?,
            Err(_) => std::io::stderr().lock().write_all(bytes)?,
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Redactions {
    type Writer = ScrubbedStderr;

    fn make_writer(&'a self) -> Self::Writer {
        self.stderr()
    }
}

#[cfg(test)]
mod tests {
    use super::Redactions;

    #[test]
    fn masks_url_credentials_and_added_secrets_wherever_they_appear() {
        let redactions = Redactions::default();
        redactions.add_url("postgres://billable:s3cr%40t@db.internal:5432/billable?sslmode=require");
        redactions.add_url("redis://:hunter22@redis.internal:6379/0");
        redactions.add_url("postgresql://db.internal/billable?user=app&password=pa55word");
        redactions.add("whsec_token_value");
        redactions.add("abc");
        let text = "mysql://billable:s3cr%40t@db (s3cr@t) redis://:hunter22@r pa55word whsec_token_value abc";
        assert_eq!(redactions.scrub(text), "mysql://billable:***@db (***) redis://:***@r *** *** abc");
        assert_eq!(redactions.scrub("sqlite://billable.db"), "sqlite://billable.db");
        let plain = Redactions::default();
        plain.add_url("postgres://billable@db/billable");
        plain.add_url("sqlite:///var/lib/billable/billable.db");
        assert_eq!(
            plain.scrub("billable@db/billable"),
            "billable@db/billable",
            "no password, nothing to mask"
        );
    }

    /// Through tracing's own formatters, as the binary logs: text and JSON lines, a secret
    /// with quotes, a backslash and a tab, given as a field's value and inside a message.
    #[test]
    fn log_lines_mask_secrets_as_the_formatter_escapes_them() {
        let secret = "pa\"ss\\wo\trd";
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let redactions = Redactions::default();
        redactions.add(secret);
        for json in [false, true] {
            let sink = Captured { lines: lines.clone(), redactions: redactions.clone() };
            let builder = tracing_subscriber::fmt().with_writer(sink).with_ansi(false);
            let subscriber: Box<dyn tracing::Subscriber + Send + Sync> =
                if json { Box::new(builder.json().finish()) } else { Box::new(builder.finish()) };
            tracing::subscriber::with_default(subscriber, || {
                tracing::warn!(password = secret, shown = ?secret, "could not connect with {secret}");
            });
        }
        let logged = String::from_utf8(lines.lock().unwrap().clone()).unwrap();
        assert_eq!(logged.lines().count(), 2, "{logged}");
        for form in ["pa\"ss", "pa\\\"ss", "wo\trd", "wo\\trd"] {
            assert!(!logged.contains(form), "{form:?} in {logged}");
        }
        assert!(logged.contains("***"), "{logged}");
    }

    /// A writer like [`Redactions::stderr`], into memory.
    #[derive(Clone)]
    struct Captured {
        lines: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
        redactions: Redactions,
    }

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let text = self.redactions.scrub(std::str::from_utf8(bytes).unwrap());
            self.lines.lock().unwrap().extend_from_slice(text.as_bytes());
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Captured {
        type Writer = Self;

        fn make_writer(&'a self) -> Self {
            self.clone()
        }
    }
}
