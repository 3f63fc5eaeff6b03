//! E-mail over SMTP with lettre: the server's settings from one URL, and the sending of one
//! message, whose failure says whether to try again.

use std::time::Duration;

use kernel::Email;
use lettre::message::header::ContentType;
use lettre::message::{Attachment as MimeAttachment, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use notify::OutgoingMail;

/// How long one attempt may take, connection and all.
const SEND_TIMEOUT: Duration = Duration::from_mins(1);

/// How the connection to the SMTP server is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmtpTls {
    /// Plain SMTP (a relay on the same host or network).
    None,
    /// STARTTLS, refused without it (`?tls=required`).
    Required,
    /// STARTTLS when the server offers it (`?tls=opportunistic`).
    Opportunistic,
    /// TLS from the first byte (`smtps://`, port 465).
    Wrapper,
}

/// Where and how to send mail: `BILLABLE_SMTP_URL`, parsed.
#[derive(Clone)]
pub struct SmtpSettings {
    pub host: String,
    pub port: u16,
    pub tls: SmtpTls,
    /// User and password, from the URL's user info (percent-decoded).
    pub credentials: Option<(String, String)>,
    /// PEM certificates to trust besides the public roots (a relay with its own CA).
    pub extra_roots: Option<Vec<u8>>,
}

impl std::fmt::Debug for SmtpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls)
            .field("user", &self.credentials.as_ref().map(|(user, _)| user))
            .finish_non_exhaustive()
    }
}

impl SmtpSettings {
    /// `smtp://host[:port]` (25), `smtp://user:pass@host:587?tls=required` (STARTTLS
    /// required), `?tls=opportunistic`, or `smtps://host[:465]`.
    pub fn from_url(text: &str) -> anyhow::Result<Self> {
        let url = url::Url::parse(text).map_err(|e| anyhow::anyhow!("not a URL ({e})"))?;
        let host =
            url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| anyhow::anyhow!("names no host"))?;
        let tls = url.query_pairs().find(|(key, _)| key == "tls").map(|(_, value)| value.into_owned());
        let (tls, default_port) = match (url.scheme(), tls.as_deref()) {
            ("smtp", None | Some("none")) => (SmtpTls::None, 25),
            ("smtp", Some("required")) => (SmtpTls::Required, 587),
            ("smtp", Some("opportunistic")) => (SmtpTls::Opportunistic, 587),
            ("smtps", None) => (SmtpTls::Wrapper, 465),
            (scheme, tls) => anyhow::bail!(
                "scheme {scheme:?} with tls={tls:?} is not one of smtp://, smtp://…?tls=required, \
                 smtp://…?tls=opportunistic or smtps://"
            ),
        };
        let decode = |part: &str| -> anyhow::Result<String> {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(std::borrow::Cow::into_owned)
                .map_err(|_| anyhow::anyhow!("its user or password is not UTF-8"))
        };
        let credentials = match url.password() {
            Some(password) => Some((decode(url.username())?, decode(password)?)),
            None if !url.username().is_empty() => anyhow::bail!("names a user without a password"),
            None => None,
        };
        let encrypted = matches!(tls, SmtpTls::Required | SmtpTls::Wrapper);
        let local = matches!(url.host(), Some(url::Host::Domain("localhost")))
            || host.trim_matches(['[', ']']).parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if credentials.is_some() && !encrypted && !local {
            anyhow::bail!(
                "would send its password unencrypted: use ?tls=required (STARTTLS) or smtps://; only a \
                 relay on this machine (localhost) may take a password without TLS"
            );
        }
        Ok(Self {
            host: host.trim_matches(['[', ']']).to_owned(),
            port: url.port().unwrap_or(default_port),
            tls,
            credentials,
            extra_roots: None,
        })
    }

    /// The password, for masking in logs.
    pub fn password(&self) -> Option<&str> {
        self.credentials.as_ref().map(|(_, password)| password.as_str())
    }
}

/// Why an attempt failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendFailure {
    /// Worth trying again: a 4xx reply, a lost or refused connection, a timeout.
    Temporary(String),
    /// The server refused it for good (a 5xx reply), or it cannot be written as mail.
    Permanent(String),
}

/// Sends messages through one SMTP server, from one address, over a pool of connections.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    settings: SmtpSettings,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("settings", &self.settings)
            .field("from", &self.from.email)
            .finish_non_exhaustive()
    }
}

impl Mailer {
    pub fn new(settings: SmtpSettings, from: &Email) -> anyhow::Result<Self> {
        let from: Mailbox = from.as_str().parse().map_err(|e| anyhow::anyhow!("the From address: {e}"))?;
        let parameters = || -> anyhow::Result<TlsParameters> {
            let mut builder = TlsParameters::builder(settings.host.clone());
            if let Some(pem) = &settings.extra_roots {
                builder = builder.add_root_certificate(Certificate::from_pem(pem)?);
            }
            Ok(builder.build_rustls()?)
        };
        let tls = match settings.tls {
            SmtpTls::None => Tls::None,
            SmtpTls::Required => Tls::Required(parameters()?),
            SmtpTls::Opportunistic => Tls::Opportunistic(parameters()?),
            SmtpTls::Wrapper => Tls::Wrapper(parameters()?),
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(settings.host.clone())
            .port(settings.port)
            .tls(tls)
            .timeout(Some(SEND_TIMEOUT));
        if let Some((user, password)) = &settings.credentials {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Self { transport: builder.build(), from, settings })
    }

    /// Whether the server answers (a `NOOP` on a new connection).
    pub async fn check(&self) -> anyhow::Result<bool> {
        Ok(self.transport.test_connection().await?)
    }

    /// Hands `mail` to the server.
    pub async fn send(&self, mail: &OutgoingMail) -> Result<(), SendFailure> {
        let message = self.mime(mail)?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(error) if error.is_permanent() => Err(SendFailure::Permanent(reply(&error))),
            Err(error) => Err(SendFailure::Temporary(reply(&error))),
        }
    }

    /// `mail` as a MIME message: plain text, and its attachments beside it.
    fn mime(&self, mail: &OutgoingMail) -> Result<lettre::Message, SendFailure> {
        let message = &mail.message;
        let refuse =
            |what: &str, error: &dyn std::fmt::Display| SendFailure::Permanent(format!("{what}: {error}"));
        let mut builder = lettre::Message::builder()
            .from(self.from.clone())
            .message_id(Some(format!("<{}>", message.message_id)))
            .subject(message.subject.as_str());
        for to in message.recipients.to() {
            builder = builder.to(to.as_str().parse().map_err(|e| refuse("a recipient", &e))?);
        }
        for cc in message.recipients.cc() {
            builder = builder.cc(cc.as_str().parse().map_err(|e| refuse("a copy recipient", &e))?);
        }
        let text = SinglePart::plain(message.body.as_str().to_owned());
        let built = if mail.attachments.is_empty() {
            builder.singlepart(text)
        } else {
            let mut parts = MultiPart::mixed().singlepart(text);
            for attachment in &mail.attachments {
                let kind =
                    ContentType::parse(&attachment.content_type).map_err(|e| refuse("a content type", &e))?;
                parts = parts.singlepart(
                    MimeAttachment::new(attachment.filename.clone()).body(attachment.bytes.clone(), kind),
                );
            }
            builder.multipart(parts)
        };
        built.map_err(|e| refuse("the message", &e))
    }
}

/// What an SMTP error says: the server's reply when it gave one.
fn reply(error: &lettre::transport::smtp::Error) -> String {
    crate::with_causes(error.to_string(), error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_tls_and_the_port() {
        let plain = SmtpSettings::from_url("smtp://127.0.0.1:2525").unwrap();
        assert_eq!((plain.host.as_str(), plain.port, plain.tls), ("127.0.0.1", 2525, SmtpTls::None));
        assert!(plain.credentials.is_none());
        let submission =
            SmtpSettings::from_url("smtp://ann%40x.example:p%2Fss@mail.example?tls=required").unwrap();
        assert_eq!((submission.port, submission.tls), (587, SmtpTls::Required));
        assert_eq!(submission.credentials, Some(("ann@x.example".into(), "p/ss".into())));
        assert!(!format!("{submission:?}").contains("p/ss"), "the password stays out of logs");
        let relay = SmtpSettings::from_url("smtp://u:p@127.0.0.1:25").unwrap();
        assert_eq!(relay.credentials, Some(("u".into(), "p".into())), "a relay on this machine may");
        let wrapped = SmtpSettings::from_url("smtps://mail.example").unwrap();
        assert_eq!((wrapped.port, wrapped.tls), (465, SmtpTls::Wrapper));
        for refused in [
            "http://mail.example",
            "smtp://mail.example?tls=maybe",
            "smtps://x?tls=required",
            "smtp://u@x",
            "smtp://u:p@mail.example",
            "smtp://u:p@mail.example:587?tls=opportunistic",
            "nothing",
        ] {
            assert!(SmtpSettings::from_url(refused).is_err(), "{refused}");
        }
    }
}
