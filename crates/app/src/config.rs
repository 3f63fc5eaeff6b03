//! Configuration, read once from flags and environment variables into typed structs.

// The doc comments of the fields are the `--help` text, written for the terminal.
#![expect(clippy::doc_markdown, reason = "the doc comments are the --help text, written for the terminal")]

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use billing::InvoiceRenderer;
use clap::{Args, ValueEnum};
use http_api::conventions::ratelimit::SharedCounter;
use http_api::triggers::TriggerSettings;
use http_api::{ClientLimits, HttpSettings, Rate};
use store_sql::{PoolSettings, SqliteSync};

/// The value of the secret setting `name` from the file `{name}_FILE` names (as container
/// secrets are mounted, `/run/secrets/…`), without its trailing line break; `None` when
/// that variable is unset. Both `name` and `{name}_FILE` set is an error, as is a file that
/// cannot be read.
pub fn secret_file(name: &str) -> anyhow::Result<Option<String>> {
    let variable = format!("{name}_FILE");
    let Some(path) = std::env::var_os(&variable) else { return Ok(None) };
    anyhow::ensure!(std::env::var_os(name).is_none(), "{name} and {variable} are both set: set one of them");
    let text = std::fs::read_to_string(&path).map_err(|error| {
        anyhow::anyhow!("{variable}: cannot read {}: {error}", PathBuf::from(&path).display())
    })?;
    Ok(Some(text.trim_end_matches(['\n', '\r']).to_owned()))
}

/// The secret setting `name`: from the file `{name}_FILE` names ([`secret_file`]), else
/// from the variable itself.
pub fn secret_env(name: &str) -> anyhow::Result<Option<String>> {
    Ok(secret_file(name)?.or_else(|| std::env::var(name).ok()))
}

/// Where data lives and how connections are pooled.
#[derive(Debug, Clone, Args)]
pub struct DatabaseConfig {
    /// postgres://user@host/db, sqlite://FILE (created if missing), or memory: (nothing kept).
    #[arg(long, env = "DATABASE_URL", default_value = "sqlite://billable.db", global = true)]
    pub database_url: String,
    /// Most pooled connections [default: 16 on PostgreSQL, 4 on SQLite].
    #[arg(long, env = "BILLABLE_DB_POOL_SIZE", global = true)]
    pub db_pool_size: Option<usize>,
    /// How long a request waits for a connection before answering 503.
    #[arg(long, env = "BILLABLE_DB_WAIT_TIMEOUT", default_value = "5s", value_parser = humantime::parse_duration, global = true)]
    pub db_wait_timeout: Duration,
    /// PostgreSQL statement_timeout.
    #[arg(long, env = "BILLABLE_DB_STATEMENT_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration, global = true)]
    pub db_statement_timeout: Duration,
    /// When SQLite's commits reach the disk: full (each before it is acknowledged) or
    /// normal (at checkpoints: faster, but a power cut may lose the last writes).
    #[arg(long, env = "BILLABLE_SQLITE_SYNCHRONOUS", value_enum, default_value = "full", global = true)]
    pub sqlite_synchronous: SqliteSynchronous,
}

/// `BILLABLE_SQLITE_SYNCHRONOUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqliteSynchronous {
    Full,
    Normal,
}

impl DatabaseConfig {
    /// The pool of a process whose store `runtimes` tokio runtimes use.
    pub fn pool_settings(&self, is_sqlite: bool, runtimes: usize) -> PoolSettings {
        PoolSettings {
            runtimes,
            max_size: self.db_pool_size.unwrap_or(if is_sqlite { 4 } else { 16 }),
            wait_timeout: self.db_wait_timeout,
            statement_timeout: self.db_statement_timeout,
            sqlite_sync: match self.sqlite_synchronous {
                SqliteSynchronous::Full => SqliteSync::Full,
                SqliteSynchronous::Normal => SqliteSync::Normal,
            },
        }
    }
}

/// Where the agent keeps its conversations' lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentTurns {
    /// In PostgreSQL, shared by every replica (in the process on SQLite and in memory,
    /// which serve one process).
    Shared,
    /// In this process: for a single replica, which then spends no database round trip on
    /// a conversation's place in line. Two replicas would each keep their own lines.
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// Logging.
#[derive(Debug, Clone, Args)]
pub struct LogConfig {
    /// Log line format.
    #[arg(long, env = "BILLABLE_LOG_FORMAT", value_enum, default_value = "text", global = true)]
    pub log_format: LogFormat,
    /// Log filter, in tracing's EnvFilter syntax (e.g. info,store_sql=debug).
    #[arg(long, env = "BILLABLE_LOG", default_value = "info", global = true)]
    pub log: String,
}

/// The REST API server.
#[derive(Debug, Clone, Args)]
pub struct ServeConfig {
    /// Address the REST API listens on: HOST:PORT (0.0.0.0:3000 for every interface), or a
    /// port alone (3005 or :3005) on 127.0.0.1.
    #[arg(long, env = "BILLABLE_LISTEN", default_value = "127.0.0.1:3000", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// Per API key: BURST/PERIOD, e.g. 100/10s (bursts of 100, refilling 10 a second).
    #[arg(long, env = "BILLABLE_RATE_LIMIT", default_value = "100/10s", value_parser = parse_rate)]
    pub rate_limit: Rate,
    /// Per client IP, for unauthenticated requests and failed key checks: BURST/PERIOD.
    #[arg(long, env = "BILLABLE_IP_RATE_LIMIT", default_value = "60/60s", value_parser = parse_rate)]
    pub ip_rate_limit: Rate,
    /// Redis where replicas count both rate limits together (`redis://host:6379/0`); unset,
    /// each process counts its own. See "Running several replicas" in docs/operations.md.
    #[arg(long, env = "BILLABLE_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Prefix of billable's keys in that Redis, for deployments that share one.
    #[arg(long, env = "BILLABLE_REDIS_PREFIX", default_value = "billable:")]
    pub redis_prefix: String,
    /// How long a key check is cached. A revoked key stops working on every process within
    /// a second whatever this is (each process watches for revocations); the cache bounds
    /// how long other changes to a key's user, such as a new role, take.
    #[arg(long, env = "BILLABLE_KEY_CACHE_TTL", default_value = "5s", value_parser = humantime::parse_duration)]
    pub key_cache_ttl: Duration,
    /// Memory for rendered time-entry listings kept for repeated requests, in MiB; 0 keeps
    /// none. A kept listing is served while nothing it shows has changed.
    #[arg(long, env = "BILLABLE_LISTING_CACHE_MB", default_value_t = 32)]
    pub listing_cache_mb: u64,
    /// The largest bank statement file `POST /v1/bank-statements` takes, in MiB (1 to 500);
    /// every other body stays within 1 MiB.
    #[arg(long, env = "BILLABLE_STATEMENT_LIMIT_MB", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=500))]
    pub statement_limit_mb: u64,
    /// How long an Idempotency-Key and the answer it got are kept: a retry within this
    /// time gets the first answer. From 1 min to 30 days.
    #[arg(long, env = "BILLABLE_IDEMPOTENCY_TTL", default_value = "24h", value_parser = parse_idempotency_ttl)]
    pub idempotency_ttl: Duration,
    /// How long the requests in flight, and the jobs this process runs, have to finish
    /// after SIGTERM before they are cut short (jobs cut short are taken over once their
    /// leases end). Give the supervisor's grace period a few seconds more.
    #[arg(long, env = "BILLABLE_SHUTDOWN_TIMEOUT", default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_timeout: Duration,
    /// How long a client has to send a request's body once its head has arrived; later,
    /// the answer is 408 and the connection is closed. From 1 s to 10 min.
    #[arg(long, env = "BILLABLE_BODY_TIMEOUT", default_value = "30s", value_parser = parse_body_timeout)]
    pub body_timeout: Duration,
    /// Connections each listener (the REST API, each trigger port) keeps open at once, over
    /// all its workers; past it, new connections wait in the kernel's queue until one closes.
    #[arg(long, env = "BILLABLE_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Worker threads [default: one per core].
    #[arg(long, env = "BILLABLE_WORKERS")]
    pub workers: Option<usize>,
    /// Trust Forwarded / X-Forwarded-For for the client IP (only behind your own proxy).
    #[arg(long, env = "BILLABLE_TRUST_FORWARDED", default_value_t = false)]
    pub trust_forwarded: bool,
    /// Base URL of a renderer service (`billable renderer`) to make invoice PDFs; the
    /// built-in renderer, in process, when unset.
    #[arg(long, env = "BILLABLE_PDF_RENDERER_URL")]
    pub pdf_renderer_url: Option<String>,
    /// How long to wait for the renderer service before answering 500.
    #[arg(long, env = "BILLABLE_PDF_RENDERER_TIMEOUT", default_value = "10s", value_parser = humantime::parse_duration)]
    pub pdf_renderer_timeout: Duration,
    /// Agent definition (YAML) whose triggers to serve beside the REST API; see docs/agent.md.
    #[arg(long, env = "BILLABLE_AGENT")]
    pub agent: Option<PathBuf>,
    /// Address the agent's trigger listeners bind, each on its trigger's port.
    #[arg(long, env = "BILLABLE_TRIGGER_HOST", default_value = "127.0.0.1")]
    pub trigger_host: IpAddr,
    /// How long this process's hold on agent work (a GitHub delivery it runs, a
    /// conversation's place in line on PostgreSQL) lasts without a renewal (renewed every
    /// third of it): how soon other replicas take over the work of one that died.
    /// From 3 s to 1 h.
    #[arg(long, env = "BILLABLE_AGENT_LEASE", default_value = "30s", value_parser = parse_lease)]
    pub agent_lease: Duration,
    /// Where conversations' lines are kept: `shared` (in PostgreSQL, across replicas) or
    /// `local` (in this process: a single replica only).
    #[arg(long, env = "BILLABLE_AGENT_TURNS", value_enum, default_value = "shared")]
    pub agent_turns: AgentTurns,
    /// Browser origins allowed to call /mcp, separated by commas (`https://claude.ai`,
    /// `http://localhost:6274`); a request from any other browser origin is refused (403).
    /// MCP clients that are not browsers send no Origin and are not concerned.
    #[arg(long, env = "BILLABLE_MCP_ALLOWED_ORIGINS", default_value = "", value_parser = parse_origins)]
    pub mcp_allowed_origins: http_api::AllowedOrigins,
    /// Failed trigger authentications allowed per client IP, as BURST/PERIOD, before 429.
    #[arg(long, env = "BILLABLE_TRIGGER_AUTH_FAILURES", default_value = "20/60s", value_parser = parse_rate)]
    pub trigger_auth_failures: Rate,
    #[command(flatten)]
    pub sending: SendingConfig,
    #[command(flatten)]
    pub jobs: JobsConfig,
}

/// E-mail and webhooks: where mail goes, as whom, the links it carries, where webhooks may go.
#[derive(Debug, Clone, Default, Args)]
pub struct SendingConfig {
    /// The SMTP server: `smtp://HOST:25`, `smtp://USER:PASSWORD@HOST:587?tls=required`
    /// (STARTTLS required; `tls=opportunistic` takes it when offered), or
    /// `smtps://HOST:465`. Unset, nothing is e-mailed (sending answers 409).
    #[arg(long, env = "BILLABLE_SMTP_URL")]
    pub smtp_url: Option<String>,
    /// A PEM file of certificates to trust for the SMTP server's TLS beside the public
    /// roots (a relay with a certificate of its own CA).
    #[arg(long, env = "BILLABLE_SMTP_CA_FILE")]
    pub smtp_ca_file: Option<PathBuf>,
    /// The From address of every message; required with BILLABLE_SMTP_URL.
    #[arg(long, env = "BILLABLE_MAIL_FROM")]
    pub mail_from: Option<String>,
    /// Where people reach this server, for the links in messages ({pdfUrl}), e.g.
    /// `https://billing.example.com` [default: http:// and the listen address].
    #[arg(long, env = "BILLABLE_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Let webhook endpoints be on loopback, private or link-local addresses (tests, a
    /// receiver on the same network). Off by default: such endpoints are refused.
    #[arg(long, env = "BILLABLE_WEBHOOK_ALLOW_PRIVATE", default_value_t = false)]
    pub webhook_allow_private: bool,
    /// Where Stripe's API is, for card payments [default: `https://api.stripe.com`]; a stand-in's
    /// address in tests.
    #[arg(long, env = "BILLABLE_STRIPE_API_BASE")]
    pub stripe_api_base: Option<String>,
}

/// The job queue's runner in this process.
#[derive(Debug, Clone, Args)]
pub struct JobsConfig {
    /// Run the job queue in this process (e-mail, reminders, webhooks, the agent's runs of
    /// events): true or false. Replicas may all run it; turn it off where a replica should
    /// only serve requests.
    #[arg(long, env = "BILLABLE_RUN_JOBS", default_value_t = true, action = clap::ArgAction::Set)]
    pub run_jobs: bool,
    /// How long a job this process runs stays leased without a renewal (renewed every third
    /// of it): how soon another replica takes over the jobs of one that died. 3 s to 1 h.
    #[arg(long, env = "BILLABLE_JOBS_LEASE", default_value = "60s", value_parser = parse_lease)]
    pub jobs_lease: Duration,
    /// Jobs run at once in this process.
    #[arg(long, env = "BILLABLE_JOBS_CONCURRENCY", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs_concurrency: u32,
    /// How often the queue and the reminder and overdue schedules are looked at when
    /// nothing wakes the runner (a change in this process wakes it at once).
    #[arg(long, env = "BILLABLE_JOBS_POLL", default_value = "1s", value_parser = parse_poll)]
    pub jobs_poll: Duration,
}

impl Default for JobsConfig {
    fn default() -> Self {
        Self {
            run_jobs: true,
            jobs_lease: Duration::from_mins(1),
            jobs_concurrency: 16,
            jobs_poll: Duration::from_secs(1),
        }
    }
}

impl JobsConfig {
    pub fn runner_settings(&self) -> outbound::RunnerSettings {
        outbound::RunnerSettings {
            lease: self.jobs_lease,
            concurrency: self.jobs_concurrency as usize,
            poll: self.jobs_poll,
            ..outbound::RunnerSettings::default()
        }
    }
}

impl SendingConfig {
    /// The From address, when e-mail is configured; an SMTP URL without one is an error.
    pub fn mail_from(&self) -> anyhow::Result<Option<kernel::Email>> {
        match (&self.smtp_url, &self.mail_from) {
            (None, _) => Ok(None),
            (Some(_), None) => {
                anyhow::bail!("BILLABLE_MAIL_FROM (--mail-from) is required with BILLABLE_SMTP_URL")
            }
            (Some(_), Some(from)) => kernel::Email::parse(from.clone())
                .map(Some)
                .map_err(|e| anyhow::anyhow!("BILLABLE_MAIL_FROM (--mail-from): {e}")),
        }
    }

    /// What the REST API needs of sending, for a server listening on `listen`.
    pub fn sending(&self, listen: SocketAddr) -> anyhow::Result<http_api::Sending> {
        let public_url = if let Some(url) = &self.public_url {
            let parsed = url::Url::parse(url)
                .map_err(|e| anyhow::anyhow!("BILLABLE_PUBLIC_URL (--public-url): {e}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                anyhow::bail!("BILLABLE_PUBLIC_URL (--public-url): must be an http or https URL");
            }
            url.trim_end_matches('/').to_owned()
        } else {
            if self.smtp_url.is_some() && (listen.ip().is_loopback() || listen.ip().is_unspecified()) {
                tracing::warn!(
                    "BILLABLE_PUBLIC_URL is not set: the PDF links in e-mails point at http://{listen}, which \
                     recipients cannot reach; set it to the address clients reach this server at"
                );
            }
            format!("http://{listen}")
        };
        Ok(http_api::Sending {
            mail_from: self.mail_from()?,
            links: notify::service::Links::new(&public_url),
            allow_private_webhooks: self.webhook_allow_private,
        })
    }

    /// The mailer and the policy's reminder wording, when e-mail is configured.
    pub fn mail_jobs(&self, sending: &http_api::Sending) -> anyhow::Result<Option<outbound::MailJobs>> {
        let (Some(url), Some(from)) = (&self.smtp_url, &sending.mail_from) else { return Ok(None) };
        let mut settings = outbound::SmtpSettings::from_url(url)
            .map_err(|e| anyhow::anyhow!("BILLABLE_SMTP_URL (--smtp-url): {e}"))?;
        if let Some(path) = &self.smtp_ca_file {
            let pem = std::fs::read(path).map_err(|e| {
                anyhow::anyhow!("BILLABLE_SMTP_CA_FILE (--smtp-ca-file) {}: {e}", path.display())
            })?;
            settings.extra_roots = Some(pem);
        }
        let mailer =
            outbound::Mailer::new(settings, from).map_err(|e| anyhow::anyhow!("BILLABLE_SMTP_URL: {e}"))?;
        let reminders = Arc::new(notify::service::PolicyReminders::new(from.clone(), sending.links.clone()));
        Ok(Some(outbound::MailJobs { mailer, reminders }))
    }

    /// The card processor: Stripe, at its API or at `BILLABLE_STRIPE_API_BASE`.
    pub fn card_processor(&self) -> anyhow::Result<Arc<dyn billing::cards::CardProcessor>> {
        let base = self.stripe_api_base.as_deref().unwrap_or(card_stripe::API_BASE);
        let stripe = card_stripe::Stripe::new(base)
            .map_err(|e| anyhow::anyhow!("BILLABLE_STRIPE_API_BASE (--stripe-api-base): {e}"))?;
        Ok(Arc::new(stripe))
    }

    /// The webhook sender this configuration allows.
    pub fn webhook_sender(&self) -> anyhow::Result<outbound::WebhookSender> {
        outbound::WebhookSender::new(self.webhook_allow_private)
    }
}

/// Parses how often the job runner looks: from 10 ms to 1 min.
fn parse_poll(text: &str) -> Result<Duration, String> {
    within(text, Duration::from_millis(10), Duration::from_mins(1), "10ms to 1m")
}

impl ServeConfig {
    /// HTTP workers per listener: as configured, else one per core.
    pub fn workers(&self) -> usize {
        self.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from))
    }

    /// The tokio runtimes that use the store: the main one (startup, the agent's
    /// deliveries) and one per HTTP worker of the API. The agent's trigger listeners run
    /// workers of their own, which share the pool's parts (see `store_sql`).
    pub fn runtimes(&self) -> usize {
        1 + self.workers()
    }

    /// The invoice renderer this configuration names.
    pub fn renderer(&self) -> anyhow::Result<Arc<dyn InvoiceRenderer>> {
        Ok(match &self.pdf_renderer_url {
            Some(url) => Arc::new(renderer::ProxyRenderer::new(url, self.pdf_renderer_timeout)?),
            None => Arc::new(renderer::BuiltinRenderer),
        })
    }

    /// How long clients may take and how many this process serves at once.
    pub fn client_limits(&self) -> ClientLimits {
        ClientLimits {
            body_deadline: self.body_timeout,
            max_connections: self.max_connections as usize,
            shutdown_timeout: self.shutdown_timeout,
        }
    }

    pub fn trigger_settings(&self) -> TriggerSettings {
        TriggerSettings { failed_auth: self.trigger_auth_failures, trust_forwarded: self.trust_forwarded }
    }

    /// Where the rate limits are counted across replicas, if anywhere.
    pub fn shared_limits(&self) -> anyhow::Result<Option<Arc<SharedCounter>>> {
        let Some(url) = &self.redis_url else { return Ok(None) };
        Ok(Some(Arc::new(SharedCounter::new(url, &self.redis_prefix)?)))
    }

    pub fn http_settings(&self) -> anyhow::Result<HttpSettings> {
        Ok(HttpSettings {
            key_rate: self.rate_limit,
            ip_rate: self.ip_rate_limit,
            shared_limits: self.shared_limits()?,
            key_cache_ttl: self.key_cache_ttl,
            trust_forwarded: self.trust_forwarded,
            listing_cache_bytes: self.listing_cache_mb.saturating_mul(1 << 20),
            statement_limit: usize::try_from(self.statement_limit_mb.saturating_mul(1 << 20))
                .unwrap_or(usize::MAX),
            idempotency_ttl: self.idempotency_ttl,
            mcp_origins: self.mcp_allowed_origins.clone(),
            sending: self.sending.sending(self.listen)?,
        })
    }
}

/// A listen address: `HOST:PORT`, or a port alone (`3005`, `:3005`) on the loopback
/// interface, which is safe by default; every interface must be asked for (`0.0.0.0:3005`).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    let port = text.strip_prefix(':').unwrap_or(text);
    if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
        let port: u16 = port.parse().map_err(|_| format!("{text:?}: a port is 0 to 65535"))?;
        return Ok(SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)));
    }
    text.parse().map_err(|_| {
        format!("{text:?} is not an address: write a port (3005), or HOST:PORT (127.0.0.1:3005, 0.0.0.0:3005, [::1]:3005)")
    })
}

/// `BILLABLE_MCP_ALLOWED_ORIGINS`.
fn parse_origins(text: &str) -> Result<http_api::AllowedOrigins, String> {
    http_api::AllowedOrigins::parse(text)
}

/// A duration in `min..=max`, refused with the range written as `range`.
fn within(text: &str, min: Duration, max: Duration, range: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(text).map_err(|e| e.to_string())?;
    if (min..=max).contains(&duration) { Ok(duration) } else { Err(format!("must be from {range}")) }
}

/// Parses the body deadline: from 1 s to 10 min.
fn parse_body_timeout(text: &str) -> Result<Duration, String> {
    within(text, Duration::from_secs(1), Duration::from_mins(10), "1s to 10m")
}

/// Parses how long idempotency keys are kept: from 1 min to 30 days.
fn parse_idempotency_ttl(text: &str) -> Result<Duration, String> {
    within(text, Duration::from_mins(1), Duration::from_hours(30 * 24), "1m to 30days")
}

/// Parses a delivery lease: a duration from 3 s (renewed every second) to 1 h.
fn parse_lease(text: &str) -> Result<Duration, String> {
    within(text, Duration::from_secs(3), Duration::from_hours(1), "3s to 1h")
}

/// Parses `BURST/PERIOD`, e.g. `100/10s`, `5/s`, `1000/1m`.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let (burst, period) = text.split_once('/').ok_or("expected BURST/PERIOD, e.g. 100/10s")?;
    let burst: NonZeroU32 =
        burst.trim().parse().map_err(|_| format!("burst {burst:?} is not a positive whole number"))?;
    let period = period.trim();
    let period = if period.starts_with(|c: char| c.is_ascii_digit()) {
        period.to_owned()
    } else {
        format!("1{period}")
    };
    let period = humantime::parse_duration(&period).map_err(|e| format!("period: {e}"))?;
    if period.is_zero() {
        return Err("period must be longer than zero".into());
    }
    Ok(Rate { burst, period })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_port_alone_listens_on_loopback() {
        for (text, address) in [
            ("3005", "127.0.0.1:3005"),
            (":3005", "127.0.0.1:3005"),
            ("0", "127.0.0.1:0"),
            ("0.0.0.0:3005", "0.0.0.0:3005"),
            ("[::1]:3005", "[::1]:3005"),
        ] {
            assert_eq!(super::parse_listen(text).unwrap().to_string(), address, "{text}");
        }
        for bad in ["", ":", "65536", "localhost", "127.0.0.1", "port"] {
            assert!(super::parse_listen(bad).is_err(), "{bad}");
        }
    }

    use std::time::Duration;

    use super::parse_rate;

    #[test]
    fn agent_leases_are_from_three_seconds_to_an_hour() {
        assert_eq!(super::parse_lease("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(super::parse_lease("1h"), Ok(Duration::from_hours(1)));
        for refused in ["0s", "2s", "2h"] {
            assert_eq!(super::parse_lease(refused), Err("must be from 3s to 1h".to_owned()), "{refused}");
        }
        assert!(super::parse_lease("soon").is_err());
    }

    #[test]
    fn rates_parse() {
        let rate = parse_rate("100/10s").unwrap();
        assert_eq!((rate.burst.get(), rate.period), (100, Duration::from_secs(10)));
        assert_eq!(parse_rate("5/s").unwrap().period, Duration::from_secs(1));
        assert_eq!(parse_rate("1000/1m").unwrap().period, Duration::from_mins(1));
        for bad in ["", "100", "0/10s", "x/10s", "10/0s", "10/fortnight"] {
            assert!(parse_rate(bad).is_err(), "{bad:?}");
        }
    }
}
