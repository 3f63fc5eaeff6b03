//! TLS to PostgreSQL, with rustls, set from the URL as libpq reads it.
//!
//! - `sslmode`: `disable` (plain TCP), `prefer` (the default: TLS when the server offers
//!   it), `require` (TLS or no connection), `verify-ca` (and the server's certificate
//!   chains to a trusted root), `verify-full` (and it names the host connected to).
//! - `sslrootcert`: the trusted roots, a PEM file, or `system` for the Mozilla roots built
//!   into the binary. Without it `verify-ca` and `verify-full` read
//!   `~/.postgresql/root.crt`, as libpq does, and fail when it is missing. With it,
//!   `require` verifies the chain like `verify-ca` (libpq does the same).
//!
//! tokio-postgres itself knows only `disable`, `prefer` and `require`: the two verifying
//! modes are taken out of the URL here and handed to it as `require`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use diesel::ConnectionError;
use diesel_async::AsyncPgConnection;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How the connection is protected, from `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> anyhow::Result<Self> {
        Ok(match text {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            "allow" => bail!("sslmode=allow is not supported: use prefer (TLS when offered) or disable"),
            other => {
                bail!("sslmode must be disable, prefer, require, verify-ca or verify-full, not {other:?}")
            }
        })
    }

    /// What tokio-postgres is told: whether TLS is tried, and whether it is a must.
    fn for_driver(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }
}

/// A PostgreSQL URL split into what the driver reads and how TLS is set up.
#[derive(Clone)]
pub struct PgTarget {
    /// The URL as tokio-postgres takes it (`sslmode` mapped, `sslrootcert` removed).
    driver_url: String,
    mode: SslMode,
    tls: Option<MakeRustlsConnect>,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTarget").field("mode", &self.mode).finish_non_exhaustive()
    }
}

impl PgTarget {
    /// Reads `sslmode` and `sslrootcert` from `url` and loads the roots they name.
    pub fn from_url(url: &str) -> anyhow::Result<Self> {
        let (base, query) = url.split_once('?').unwrap_or((url, ""));
        let mut mode = None;
        let mut root_cert = None;
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_encoding::percent_decode_str(value)
                .decode_utf8()
                .with_context(|| format!("DATABASE_URL: {key} is not UTF-8"))?;
            match key {
                "sslmode" => mode = Some(SslMode::parse(&value).context("DATABASE_URL")?),
                "sslrootcert" => root_cert = Some(value.into_owned()),
                _ => kept.push(pair),
            }
        }
        // With the public roots, anyone holding a certificate from a public authority could
        // pass a check of the chain alone: libpq makes `system` mean verify-full.
        let mode = match (mode, root_cert.as_deref()) {
            (None | Some(SslMode::VerifyFull), Some("system")) => SslMode::VerifyFull,
            (Some(weaker), Some("system")) => {
                bail!("DATABASE_URL: sslrootcert=system needs sslmode=verify-full, not {weaker:?}")
            }
            (mode, _) => mode.unwrap_or(SslMode::Prefer),
        };
        kept.push(match mode.for_driver() {
            "disable" => "sslmode=disable",
            "prefer" => "sslmode=prefer",
            _ => "sslmode=require",
        });
        let driver_url = format!("{base}?{}", kept.join("&"));
        let tls = match mode {
            SslMode::Disable => None,
            _ => Some(MakeRustlsConnect::new(client_config(mode, root_cert.as_deref())?)),
        };
        Ok(Self { driver_url, mode, tls })
    }

    pub fn mode(&self) -> SslMode {
        self.mode
    }

    /// Opens a connection: plain, or over TLS as the URL asks.
    pub async fn connect(&self) -> Result<AsyncPgConnection, ConnectionError> {
        let config: tokio_postgres::Config = self
            .driver_url
            .parse()
            .map_err(|e: tokio_postgres::Error| ConnectionError::BadConnection(e.to_string()))?;
        let refused = |e: tokio_postgres::Error| ConnectionError::BadConnection(describe(&e));
        match &self.tls {
            None => {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await.map_err(refused)?;
                AsyncPgConnection::try_from_client_and_connection(client, connection).await
            }
            Some(tls) => {
                let (client, connection) = config.connect(tls.clone()).await.map_err(refused)?;
                AsyncPgConnection::try_from_client_and_connection(client, connection).await
            }
        }
    }

    /// Opens a connection of its own that `LISTEN`s on `channel`: the client, to keep
    /// while listening, and the notifications, which end when the connection does.
    pub(crate) async fn listen(
        &self,
        channel: &str,
    ) -> anyhow::Result<(tokio_postgres::Client, UnboundedReceiver<tokio_postgres::Notification>)> {
        let config: tokio_postgres::Config = self.driver_url.parse()?;
        let refused = |e: tokio_postgres::Error| anyhow::anyhow!(describe(&e));
        let (client, notifications) = match &self.tls {
            None => {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await.map_err(refused)?;
                (client, forward_notifications(connection))
            }
            Some(tls) => {
                let (client, connection) = config.connect(tls.clone()).await.map_err(refused)?;
                (client, forward_notifications(connection))
            }
        };
        client.batch_execute(&format!("LISTEN {channel}")).await?;
        Ok((client, notifications))
    }
}

/// The error with its causes: a TLS failure's reason (an unknown issuer, a name that
/// does not match) is in its source.
fn describe(error: &tokio_postgres::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

fn client_config(mode: SslMode, root_cert: Option<&str>) -> anyhow::Result<ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS to PostgreSQL")?;
    let chain = match (mode, root_cert) {
        (SslMode::Prefer | SslMode::Require, None) => None,
        (_, roots) => Some(
            WebPkiServerVerifier::builder_with_provider(load_roots(roots)?.into(), provider.clone())
                .build()
                .context("TLS to PostgreSQL: the trusted roots")?,
        ),
    };
    let verifier = Arc::new(Verifier { chain, check_name: mode == SslMode::VerifyFull, provider });
    Ok(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth())
}

/// The roots `sslrootcert` names: a PEM file, `system`, or libpq's default file.
fn load_roots(root_cert: Option<&str>) -> anyhow::Result<RootCertStore> {
    let mut roots = RootCertStore::empty();
    if root_cert == Some("system") {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(roots);
    }
    let default = || std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt"));
    let Some(path) = root_cert.map(PathBuf::from).or_else(|| default().filter(|path| path.exists())) else {
        bail!(
            "DATABASE_URL: sslmode verify-ca and verify-full need trusted roots: \
             sslrootcert=/path/to/ca.pem, sslrootcert=system, or ~/.postgresql/root.crt"
        );
    };
    let certificates = CertificateDer::pem_file_iter(&path)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .with_context(|| format!("DATABASE_URL: sslrootcert {}", path.display()))?;
    let (added, _) = roots.add_parsable_certificates(certificates);
    anyhow::ensure!(added > 0, "DATABASE_URL: sslrootcert {} holds no certificate", path.display());
    Ok(roots)
}

/// Checks the server's certificate as far as the mode asks: nothing for `prefer` and
/// `require` without roots (encrypted, who answers not checked, as libpq does), the chain
/// to a trusted root for `verify-ca`, the chain and the host name for `verify-full`. The
/// handshake's signatures are verified in every mode, so the session is with whoever
/// holds the certificate's key.
#[derive(Debug)]
struct Verifier {
    chain: Option<Arc<WebPkiServerVerifier>>,
    check_name: bool,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.check_name => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// Forwards the notifications `connection` receives until it closes.
fn forward_notifications<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
) -> UnboundedReceiver<tokio_postgres::Notification>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(tokio_postgres::AsyncMessage::Notification(notification))) => {
                    if sender.send(notification).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::warn!(%error, "the listening connection failed");
                    return;
                }
                None => return,
            }
        }
    });
    receiver
}

#[cfg(test)]
mod tests {
    use super::{PgTarget, SslMode};

    #[test]
    fn sslmode_and_sslrootcert_are_read_as_libpq_reads_them() {
        let target = |url: &str| PgTarget::from_url(url).map(|t| (t.mode, t.driver_url));
        assert_eq!(
            target("postgres://u@h/db").unwrap(),
            (SslMode::Prefer, "postgres://u@h/db?sslmode=prefer".to_owned())
        );
        assert_eq!(
            target("postgres://u@h/db?sslmode=disable&application_name=x").unwrap(),
            (SslMode::Disable, "postgres://u@h/db?application_name=x&sslmode=disable".to_owned())
        );
        assert_eq!(
            target("postgres://u@h/db?sslmode=verify-full&sslrootcert=system").unwrap(),
            (SslMode::VerifyFull, "postgres://u@h/db?sslmode=require".to_owned())
        );
        assert_eq!(target("postgres://u@h/db?sslrootcert=system").unwrap().0, SslMode::VerifyFull);
        let error = |url: &str| format!("{:#}", PgTarget::from_url(url).unwrap_err());
        assert!(error("postgres://h/db?sslmode=strict").contains("sslmode must be"));
        assert!(
            error("postgres://h/db?sslmode=verify-ca&sslrootcert=/nonexistent.pem")
                .contains("/nonexistent.pem")
        );
        assert!(error("postgres://h/db?sslmode=allow").contains("not supported"));
        assert!(
            error("postgres://h/db?sslmode=require&sslrootcert=system").contains("needs sslmode=verify-full")
        );
    }
}
