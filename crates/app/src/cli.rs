//! The command line: `serve`, `migrate`, and team, user and key administration. Each
//! administrative command prints only its result on stdout, so scripts can capture it.

// The doc comments of the commands are the `--help` text, written for the terminal.
#![expect(clippy::doc_markdown, reason = "the doc comments are the --help text, written for the terminal")]

use std::io::Write;
use std::sync::Arc;

use accounts::{
    AccountStore, CreateApiKeyError, CreateUserError, Currency, RevokeApiKeyError, Role, Scope, TeamName,
    UserName,
};
use anyhow::{Context, bail};
use billing::numbering::{NumberingChange, NumberingPattern, Series};
use billing::sender::Logo;
use chrono::{SecondsFormat, TimeDelta};
use clap::{Parser, Subcommand};
use kernel::{Clock, Email, Id, SystemClock};
use triggers::{ConversationKey, DeliveryFilter, RunFilter, RunId, Verdict};

use crate::agent_setup::pick_team;
use crate::config::{DatabaseConfig, LogConfig, ServeConfig};
use crate::{Store, lookup};

/// billable: invoices, clients and time tracking for teams, as a REST API.
///
/// Every option can also be set through the environment variable shown beside it.
#[derive(Debug, Parser)]
#[command(name = "billable", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub database: DatabaseConfig,
    #[command(flatten)]
    pub log: LogConfig,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the REST API, and with --agent the agent's triggers (migrates first; on an empty
    /// database, creates a team and prints a key once).
    Serve(Box<ServeConfig>),
    /// Run pending database migrations and exit.
    Migrate,
    /// Manage teams.
    #[command(subcommand)]
    Teams(TeamsCommand),
    /// Manage users.
    #[command(subcommand)]
    Users(UsersCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Read the agent's run history.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Read the repository trigger's delivery log.
    #[command(subcommand)]
    Deliveries(DeliveriesCommand),
    /// Run the job queue once (e-mail, reminders, webhooks, the agent's runs of events), or
    /// read it.
    #[command(subcommand)]
    Jobs(JobsCommand),
    /// Run only the invoice PDF renderer, as a service for `BILLABLE_PDF_RENDERER_URL`
    /// (POST /render takes an invoice document as JSON and answers the PDF).
    Renderer {
        /// Address the renderer listens on: HOST:PORT, or a port alone on 127.0.0.1.
        #[arg(long, env = "BILLABLE_RENDERER_LISTEN", default_value = "127.0.0.1:3001", value_parser = crate::config::parse_listen)]
        listen: std::net::SocketAddr,
    },
    /// Write a consistent backup of the database to FILE while the service runs, replacing
    /// FILE only once the backup is complete: a SQLite file (SQLite's VACUUM INTO), or on
    /// PostgreSQL a pg_dump archive (--format=custom) of the schema DATABASE_URL selects.
    /// Runs no migration. Prints the backup's size in bytes.
    Backup {
        /// The backup file to write.
        #[arg(long, value_name = "FILE")]
        to: std::path::PathBuf,
        #[command(flatten)]
        tools: PgToolsConfig,
    },
    /// Restore a backup `backup` wrote into an empty database (a new SQLite file, or a
    /// PostgreSQL database or schema without tables), whole or not at all, then migrate it
    /// to this release's schema.
    Restore {
        /// The backup file to read.
        #[arg(long, value_name = "FILE")]
        from: std::path::PathBuf,
        #[command(flatten)]
        tools: PgToolsConfig,
    },
    /// Ask the server on this machine whether it is ready (`GET /readyz`): exit 0 when it
    /// answers ready within --timeout, 1 otherwise. A container's HEALTHCHECK; opens no
    /// database.
    Healthcheck {
        /// The server's address, as `serve --listen` takes it; a server listening on every
        /// address (0.0.0.0, ::) is asked on loopback.
        #[arg(long, env = "BILLABLE_LISTEN", default_value = "127.0.0.1:3000", value_parser = crate::config::parse_listen)]
        listen: std::net::SocketAddr,
        /// How long to wait for the answer.
        #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
        timeout: std::time::Duration,
    },
}

/// The PostgreSQL client programs `backup` and `restore` run.
#[derive(Debug, Clone, clap::Args)]
pub struct PgToolsConfig {
    /// pg_dump, of the server's major version or newer.
    #[arg(long, env = "BILLABLE_PG_DUMP", default_value = "pg_dump")]
    pub pg_dump: std::path::PathBuf,
    /// pg_restore, of the server's major version or newer.
    #[arg(long, env = "BILLABLE_PG_RESTORE", default_value = "pg_restore")]
    pub pg_restore: std::path::PathBuf,
}

impl From<PgToolsConfig> for store_sql::backup::PgTools {
    fn from(config: PgToolsConfig) -> Self {
        Self { pg_dump: config.pg_dump, pg_restore: config.pg_restore }
    }
}

#[derive(Debug, Subcommand)]
pub enum TeamsCommand {
    /// Create a team; prints its id.
    Create {
        /// The team's name, 1 to 255 characters.
        #[arg(long)]
        name: String,
        /// ISO 4217 code of the team's invoices.
        #[arg(long, default_value = "USD")]
        currency: String,
    },
    /// List the teams (tab-separated: id, name, currency, created).
    List,
    /// Rename a team (its default sender too, while that still bears the old name), give it
    /// another currency while it has no invoice or recurring invoice, or number a series of
    /// its documents by another pattern; only the options given change. Prints the team's
    /// id.
    Update {
        /// The team, by id or name.
        #[arg(long)]
        team: String,
        /// Its new name, 1 to 255 characters, which no other team has.
        #[arg(long)]
        name: Option<String>,
        /// The ISO 4217 code of its new currency.
        #[arg(long)]
        currency: Option<String>,
        /// The pattern of its next invoice numbers: `INV-{0000}`, `{YYYY}-{0000}` (counting
        /// from 1 each year), `RE{YY}{000}`.
        #[arg(long)]
        invoice_numbering: Option<String>,
        /// The pattern of its next credit note numbers (`CN-{0000}` unless set).
        #[arg(long)]
        credit_note_numbering: Option<String>,
        /// The pattern of its next quote numbers (`Q-{0000}` unless set).
        #[arg(long)]
        quote_numbering: Option<String>,
    },
    /// Set the team's default sender address, which invoices show as "from"; only the
    /// options given change. Prints the sender address id (`sendersAddressId`).
    Sender(Box<SenderArgs>),
}

/// The fields of `teams sender`.
#[derive(Debug, clap::Args)]
pub struct SenderArgs {
    /// The team, by id or name.
    #[arg(long)]
    team: String,
    /// Company or person name [default at creation: the team's name].
    #[arg(long)]
    name: Option<String>,
    /// First address line (street and number); empty to remove.
    #[arg(long)]
    line1: Option<String>,
    /// Second address line; empty to remove.
    #[arg(long)]
    line2: Option<String>,
    /// Third address line (city, country); empty to remove.
    #[arg(long)]
    line3: Option<String>,
    /// Postal code; empty to remove.
    #[arg(long)]
    postal_code: Option<String>,
    /// Email shown under the address; empty to remove.
    #[arg(long)]
    email: Option<String>,
    /// VAT number shown under the address; empty to remove.
    #[arg(long)]
    vat_number: Option<String>,
    /// How to pay the team, printed under the totals of every invoice: bank, IBAN, BIC,
    /// payment terms. Newlines (`\n` in the text, or real ones) start new lines; at most
    /// 1,000 characters. Empty to remove.
    #[arg(long)]
    payment_details: Option<String>,
    /// The team's logo, printed at the top of every invoice: a PNG or SVG file of at most
    /// 256 KiB.
    #[arg(long, value_name = "FILE", conflicts_with = "no_logo")]
    logo: Option<std::path::PathBuf>,
    /// Removes the logo.
    #[arg(long)]
    no_logo: bool,
    /// City of the address; empty to remove.
    #[arg(long)]
    city: Option<String>,
    /// Country of the address, ISO 3166-1 alpha-2 in capitals (DE, CH); empty to remove.
    #[arg(long)]
    country_code: Option<String>,
    /// The account clients pay to, as e-invoices carry it: an IBAN with valid check digits
    /// (spaces allowed); empty to remove.
    #[arg(long)]
    iban: Option<String>,
    /// The BIC of that account (8 or 11 characters); empty to remove.
    #[arg(long)]
    bic: Option<String>,
    /// Whom buyers contact about an invoice; empty to remove.
    #[arg(long)]
    contact_name: Option<String>,
    /// The contact's phone; empty to remove.
    #[arg(long)]
    contact_phone: Option<String>,
    /// The contact's email; empty to remove.
    #[arg(long)]
    contact_email: Option<String>,
    /// The sender's Peppol address, scheme:identifier (`9930:DE123456789`), which Peppol
    /// BIS e-invoices name; empty to remove.
    #[arg(long)]
    peppol_id: Option<String>,
    /// The language of the team's documents and mails for clients that name none: en, de,
    /// fr, it, es or nl.
    #[arg(long)]
    language: Option<String>,
    /// The payment QR code of its invoices' PDFs: auto, epc, swiss or none.
    #[arg(long)]
    payment_qr: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create a user in a team; prints its id.
    Create {
        /// The team, by id or name.
        #[arg(long)]
        team: String,
        /// The user's email, unique in the team (in any case).
        #[arg(long)]
        email: String,
        /// The name reports and invoices show [default: none; the email stands in].
        #[arg(long, default_value = "")]
        name: String,
        /// owner, admin or member.
        #[arg(long)]
        role: String,
    },
    /// List a team's users (tab-separated: id, email, name, role, created).
    List {
        /// The team, by id or name.
        #[arg(long)]
        team: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key for a user of a team; prints the key (shown only this once).
    Create {
        /// The team, by id or name.
        #[arg(long)]
        team: String,
        /// The key's user: an id or email of a user of the team.
        #[arg(long)]
        user: String,
        /// read-only, write or restricted.
        #[arg(long)]
        scope: String,
        /// With --scope restricted: clients:read, clients:write, invoices:read, invoices:write,
        /// track:read, track:write, agent:read. Repeat for several.
        #[arg(long = "permission")]
        permissions: Vec<String>,
        /// Lifetime, e.g. 30d or 12h; no expiry when omitted.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires_in: Option<std::time::Duration>,
    },
    /// List a team's keys (tab-separated: id, prefix, user, scope, created, expires, revoked, last used).
    List {
        /// The team, by id or name.
        #[arg(long)]
        team: String,
    },
    /// Revoke a key; it stops working on every running server within a second. Prints the
    /// key's id.
    Revoke {
        /// The key: its id, its prefix as `keys list` shows it (bk_AbCdEf), or the key itself.
        #[arg(value_name = "KEY")]
        key: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List runs, newest first (tab-separated: id, started, trigger, status, steps, input
    /// tokens, output tokens, milliseconds, conversation, error).
    List {
        /// Team id or name [default: the only team].
        #[arg(long)]
        team: Option<String>,
        /// Only this conversation's runs.
        #[arg(long)]
        conversation: Option<String>,
        /// At most this many runs, newest first (1 to 10,000).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        limit: u32,
    },
    /// Show one run, field by field, then its tool calls (`tool_call[N]: name arguments
    /// (ok or error, milliseconds) -> result`), the text the model read and its reply (each
    /// line indented by two spaces; at most 4,000 characters each).
    Show {
        /// The run's id (the first column of `runs list`, or an answer's x-run-id).
        run_id: String,
        /// Team id or name [default: the only team].
        #[arg(long)]
        team: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Run, once, every job due at an instant, and what that makes due (invoices of
    /// recurring invoices made, reminders queued, invoices found overdue, events handed to
    /// webhooks and the agent), then exit. It reads the settings `serve` reads (its options
    /// and environment, the agent file), and listens on nothing. It refuses, running
    /// nothing, when work is due that those settings cannot do (e-mail without SMTP, the
    /// agent's runs without an agent). Prints a header line, then what it did
    /// (tab-separated: overdue, reminders, dispatched, done, retried, failed, invoices made
    /// by recurring invoices).
    Run {
        /// The instant the jobs are run at, RFC 3339 (2026-12-24T09:00:00Z) or a day
        /// (2026-12-24, 00:00 UTC) [default: now]. Retries it schedules come due later.
        #[arg(long, value_parser = parse_at)]
        at: Option<chrono::DateTime<chrono::Utc>>,
        /// Print what is due at the instant (a header line, then tab-separated: recurring
        /// invoices due, of them e-mailing their invoice, invoices to announce overdue,
        /// reminders, events to dispatch, e-mails, webhook deliveries, agent runs) and
        /// change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        serve: Box<ServeConfig>,
    },
    /// List jobs, newest first (tab-separated: id, created, team, kind, state, attempts,
    /// run at, subject, last error).
    List {
        /// Team id or name [default: every team's].
        #[arg(long)]
        team: Option<String>,
        /// Only jobs in this state: queued, running, done or failed.
        #[arg(long)]
        state: Option<String>,
        /// Only jobs of this kind: mail, webhook or agent.
        #[arg(long)]
        kind: Option<String>,
        /// At most this many jobs (1 to 10,000).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        limit: u32,
    },
}

/// An instant as `--at` takes it: RFC 3339, or a day meaning 00:00 UTC.
fn parse_at(text: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    kernel::parse_instant(text).map_err(|e| format!("{e}: write 2026-12-24T09:00:00Z or 2026-12-24"))
}

#[derive(Debug, Subcommand)]
pub enum DeliveriesCommand {
    /// List the deliveries the repository trigger verified, newest first (tab-separated:
    /// received, delivery id, event, action, repository, verdict, state, attempts,
    /// conversation, run id, note or error).
    List {
        /// Team id or name [default: the only team].
        #[arg(long)]
        team: Option<String>,
        /// Only deliveries with this verdict: accepted, ignored or duplicate.
        #[arg(long)]
        verdict: Option<String>,
        /// At most this many deliveries, newest first (1 to 10,000).
        #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        limit: u32,
    },
}

fn parse_id<I: Id>(what: &str, text: &str) -> anyhow::Result<I> {
    I::parse(text).with_context(|| format!("{what} {text:?} is not an id (a UUID)"))
}

pub(crate) fn print(line: &str) -> anyhow::Result<()> {
    writeln!(std::io::stdout().lock(), "{line}").context("writing to stdout")
}

/// Sets the fields given on the team's default sender address (made first if the team
/// has none yet); returns its id.
async fn set_default_sender(
    store: &Store,
    accounts: &dyn AccountStore,
    args: SenderArgs,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<billing::SenderAddressId> {
    let SenderArgs {
        team,
        name,
        line1,
        line2,
        line3,
        postal_code,
        email,
        vat_number,
        payment_details,
        logo,
        no_logo,
        city,
        country_code,
        iban,
        bic,
        contact_name,
        contact_phone,
        contact_email,
        peppol_id,
        language,
        payment_qr,
    } = args;
    let team = lookup::team(accounts, "--team", &team).await?;
    let billing = store.billing();
    let sender = billing::service::default_sender(billing.as_ref(), accounts, team, now).await?;
    let change = billing::sender::SenderChange {
        name,
        line1,
        line2,
        line3,
        postal_code,
        city,
        country_code,
        email,
        vat_number,
        // A shell passes `\n` as two characters; both spellings start a new line.
        payment_details: payment_details.map(|text| text.replace("\\n", "\n")),
        iban,
        bic,
        contact_name,
        contact_phone,
        contact_email,
        peppol_id,
        language,
        payment_qr,
    };
    let mut details = sender
        .details
        .changed(change)
        .map_err(|(field, error)| anyhow::anyhow!("{}: {error}", flag_of(field)))?;
    if no_logo {
        details.logo = None;
    }
    if let Some(path) = logo {
        details.logo = Some(read_logo(&path)?);
    }
    let updated = billing
        .update_sender(team, sender.id, &details, now)
        .await?
        .context("the default sender address vanished meanwhile")?;
    Ok(updated.id)
}

/// The option of `teams sender` that sets `field`.
fn flag_of(field: billing::sender::SenderField) -> &'static str {
    use billing::sender::SenderField as F;
    match field {
        F::Name => "--name",
        F::Line1 => "--line1",
        F::Line2 => "--line2",
        F::Line3 => "--line3",
        F::PostalCode => "--postal-code",
        F::City => "--city",
        F::CountryCode => "--country-code",
        F::Email => "--email",
        F::VatNumber => "--vat-number",
        F::PaymentDetails => "--payment-details",
        F::Iban => "--iban",
        F::Bic => "--bic",
        F::ContactName => "--contact-name",
        F::ContactPhone => "--contact-phone",
        F::ContactEmail => "--contact-email",
        F::PeppolId => "--peppol-id",
        F::Language => "--language",
        F::PaymentQr => "--payment-qr",
    }
}

/// The logo in the file at `path`, refused unless it is a PNG or SVG of at most 256 KiB
/// that the renderer can draw.
fn read_logo(path: &std::path::Path) -> anyhow::Result<Logo> {
    let flag = format!("--logo {}", path.display());
    let size = std::fs::metadata(path).map_err(|e| anyhow::anyhow!("{flag}: cannot read it: {e}"))?.len();
    if usize::try_from(size).map_or(true, |size| size > Logo::MAX_BYTES) {
        bail!(
            "{flag}: {}",
            billing::sender::LogoError::TooLarge(usize::try_from(size).unwrap_or(usize::MAX))
        );
    }
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{flag}: cannot read it: {e}"))?;
    let logo = Logo::parse(bytes).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    renderer::check_logo(logo.bytes()).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    Ok(logo)
}

/// The secret settings given as files (`DATABASE_URL_FILE`, and for the commands that serve
/// `BILLABLE_REDIS_URL_FILE` and `BILLABLE_SMTP_URL_FILE`), read into `cli` in place of what
/// the flags and variables said.
pub fn secrets_from_files(cli: &mut Cli) -> anyhow::Result<()> {
    if let Some(url) = crate::config::secret_file("DATABASE_URL")? {
        cli.database.database_url = url;
    }
    let served = match &mut cli.command {
        Command::Serve(config) | Command::Jobs(JobsCommand::Run { serve: config, .. }) => Some(&mut **config),
        _ => None,
    };
    if let Some(config) = served {
        if let Some(url) = crate::config::secret_file("BILLABLE_REDIS_URL")? {
            config.redis_url = Some(url);
        }
        if let Some(url) = crate::config::secret_file("BILLABLE_SMTP_URL")? {
            config.sending.smtp_url = Some(url);
        }
    }
    Ok(())
}

/// Runs an administrative command against the configured store.
pub async fn run_admin(database: &DatabaseConfig, command: Command) -> anyhow::Result<()> {
    let store = Store::open(database, 1).await?;
    let accounts: Arc<dyn AccountStore> = store.accounts();
    let now = SystemClock.now();
    match command {
        Command::Serve(_)
        | Command::Renderer { .. }
        | Command::Healthcheck { .. }
        | Command::Backup { .. }
        | Command::Restore { .. }
        | Command::Jobs(JobsCommand::Run { .. }) => {
            bail!("not an administrative command")
        }
        Command::Jobs(JobsCommand::List { team, state, kind, limit }) => {
            jobs(&store, accounts.as_ref(), team, state, kind, limit).await?;
        }
        // Opening the store migrated it, and logged what it applied.
        Command::Migrate => eprintln!("the database's schema is up to date"),
        Command::Teams(command) => teams(&store, accounts.as_ref(), command, now).await?,
        Command::Users(command) => users(accounts.as_ref(), command, now).await?,
        Command::Keys(command) => keys(accounts.as_ref(), command, now).await?,
        Command::Runs(command) => runs(&store, accounts.as_ref(), command).await?,
        Command::Deliveries(command) => deliveries(&store, accounts.as_ref(), command).await?,
    }
    Ok(())
}

/// A time as the listings write it, `-` when unset.
fn listed_time(time: Option<chrono::DateTime<chrono::Utc>>) -> String {
    time.map_or_else(|| "-".to_owned(), |t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
}

async fn teams(
    store: &Store,
    accounts: &dyn AccountStore,
    command: TeamsCommand,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<()> {
    match command {
        TeamsCommand::Create { name, currency } => {
            let name = TeamName::parse(name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
            let currency = Currency::parse(&currency).map_err(|e| anyhow::anyhow!("--currency: {e}"))?;
            // Commands name teams by name, so no two share one (in any case).
            let teams = accounts.list_teams().await?;
            if let Some(taken) =
                teams.iter().find(|t| t.name.as_str().to_lowercase() == name.as_str().to_lowercase())
            {
                bail!("--name: team {} already has this name; pick another", taken.id);
            }
            let team = accounts::new_team(name, currency, now);
            accounts.create_team(&team).await?;
            billing::service::default_sender(store.billing().as_ref(), accounts, team.id, now).await?;
            print(&team.id.to_string())
        }
        TeamsCommand::List => {
            for team in accounts.list_teams().await? {
                let (name, currency) = (team.name.as_str(), team.currency.as_str());
                print(&format!("{}\t{name}\t{currency}\t{}", team.id, listed_time(Some(team.created_at))))?;
            }
            Ok(())
        }
        TeamsCommand::Update {
            team,
            name,
            currency,
            invoice_numbering,
            credit_note_numbering,
            quote_numbering,
        } => {
            let team = lookup::team(accounts, "--team", &team).await?;
            let mut numbering = NumberingChange::default();
            for (series, pattern, flag) in [
                (Series::Invoices, invoice_numbering, "--invoice-numbering"),
                (Series::CreditNotes, credit_note_numbering, "--credit-note-numbering"),
                (Series::Quotes, quote_numbering, "--quote-numbering"),
            ] {
                if let Some(text) = pattern {
                    let pattern =
                        NumberingPattern::parse(&text).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
                    numbering.set(series, pattern);
                }
            }
            let name =
                name.map(|n| TeamName::parse(n).map_err(|e| anyhow::anyhow!("--name: {e}"))).transpose()?;
            if let Some(name) = &name {
                let teams = accounts.list_teams().await?;
                let lower = name.as_str().to_lowercase();
                if let Some(taken) =
                    teams.iter().find(|t| t.id != team && t.name.as_str().to_lowercase() == lower)
                {
                    bail!("--name: team {} already has this name; pick another", taken.id);
                }
            }
            let currency = currency
                .map(|c| Currency::parse(&c).map_err(|e| anyhow::anyhow!("--currency: {e}")))
                .transpose()?;
            let change = accounts::TeamChange { name, currency };
            if change != accounts::TeamChange::default() {
                let before = billing::service::the_team(accounts, team).await?;
                let updated = accounts.update_team(team, &change).await.map_err(|error| match error {
                    accounts::UpdateTeamError::CurrencyInUse { .. } => anyhow::anyhow!(
                        "--currency: {error}; a team keeps the currency of its books: make a team for another \
                         (billable teams create --currency …), or bill a client in it (its currency)"
                    ),
                    other => anyhow::Error::new(other),
                })?;
                billing::service::follow_rename(store.billing().as_ref(), &updated, &before.name, now)
                    .await?;
            }
            if !numbering.is_empty() {
                store.billing().set_numbering(team, &numbering).await?;
            }
            print(&team.to_string())
        }
        TeamsCommand::Sender(args) => {
            let sender = set_default_sender(store, accounts, *args, now).await?;
            print(&sender.to_string())
        }
    }
}

async fn users(
    accounts: &dyn AccountStore,
    command: UsersCommand,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<()> {
    match command {
        UsersCommand::List { team } => {
            let team = lookup::team(accounts, "--team", &team).await?;
            for user in accounts.list_users(team).await? {
                let name = if user.name.as_str().is_empty() { "-" } else { user.name.as_str() };
                let (role, created) = (user.role.as_str(), listed_time(Some(user.created_at)));
                print(&format!("{}\t{}\t{name}\t{role}\t{created}", user.id, user.email))?;
            }
            Ok(())
        }
        UsersCommand::Create { team, email, name, role } => {
            let team = lookup::team(accounts, "--team", &team).await?;
            let email = Email::parse(email).map_err(|e| anyhow::anyhow!("--email: {e}"))?;
            let name = UserName::parse(name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
            let role = Role::parse(&role).map_err(|e| anyhow::anyhow!("--role: {e}"))?;
            let user = accounts::new_user(team, email, name, role, now);
            accounts.create_user(&user).await.map_err(|e| match e {
                CreateUserError::TeamNotFound => anyhow::anyhow!("--team: no such team"),
                CreateUserError::EmailTaken => {
                    anyhow::anyhow!("--email: the team already has a user with this email")
                }
                CreateUserError::Store(e) => e.into(),
            })?;
            print(&user.id.to_string())
        }
    }
}

async fn keys(
    accounts: &dyn AccountStore,
    command: KeysCommand,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<()> {
    match command {
        KeysCommand::Create { team, user, scope, permissions, expires_in } => {
            let team = lookup::team(accounts, "--team", &team).await?;
            let user = lookup::user(accounts, "--user", team, &user).await?;
            let scope =
                Scope::from_parts(&scope, &permissions).map_err(|e| anyhow::anyhow!("--scope: {e}"))?;
            let expires_in =
                expires_in.map(|d| TimeDelta::from_std(d).context("--expires-in: too long")).transpose()?;
            let issued = accounts::issue_api_key(team, user, scope, expires_in, now);
            let issued = issued.store(accounts).await.map_err(|e| match e {
                CreateApiKeyError::UserNotInTeam => anyhow::anyhow!("--user: no such user in team {team}"),
                CreateApiKeyError::Store(e) => e.into(),
            })?;
            print(issued.secret.expose())
        }
        KeysCommand::List { team } => {
            let team = lookup::team(accounts, "--team", &team).await?;
            for key in accounts.list_api_keys(team).await? {
                let scope = match &key.scope {
                    Scope::Restricted(_) => {
                        let listed: Vec<_> =
                            key.scope.permissions().map(accounts::Permission::as_str).collect();
                        format!("restricted({})", listed.join(","))
                    }
                    other => other.kind().to_owned(),
                };
                print(&format!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    key.id,
                    key.prefix,
                    key.user_id,
                    scope,
                    listed_time(Some(key.created_at)),
                    listed_time(key.expires_at),
                    listed_time(key.revoked_at),
                    listed_time(key.last_used_at)
                ))?;
            }
            Ok(())
        }
        KeysCommand::Revoke { key } => {
            let id = lookup::key(accounts, &key).await?;
            accounts.revoke_api_key(id, now).await.map_err(|e| match e {
                RevokeApiKeyError::NotFound => anyhow::anyhow!("no API key with id {id}"),
                RevokeApiKeyError::Store(e) => e.into(),
            })?;
            print(&id.to_string())
        }
    }
}

async fn runs(store: &Store, accounts: &dyn AccountStore, command: RunsCommand) -> anyhow::Result<()> {
    let (RunsCommand::List { team, .. } | RunsCommand::Show { team, .. }) = &command;
    let team = pick_team(accounts, team.as_deref())
        .await?
        .map_err(|problem| anyhow::anyhow!("--team: {problem}"))?;
    let history = store.agent();
    let time = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(SecondsFormat::Millis, true);
    match command {
        RunsCommand::List { conversation, limit, .. } => {
            let conversation = conversation
                .map(|c| ConversationKey::parse(&c).map_err(|e| anyhow::anyhow!("--conversation: {e}")))
                .transpose()?;
            for run in history.list_runs(team, &RunFilter { conversation, limit }).await? {
                print(&format!(
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    run.id,
                    time(run.started_at),
                    run.trigger,
                    run.status.as_str(),
                    run.steps,
                    run.usage.input_tokens,
                    run.usage.output_tokens,
                    (run.finished_at - run.started_at).num_milliseconds(),
                    run.conversation.as_ref().map_or("-", ConversationKey::as_str),
                    run.error.as_deref().unwrap_or("-"),
                ))?;
            }
        }
        RunsCommand::Show { run_id, .. } => {
            let id: RunId = parse_id("RUN_ID", &run_id)?;
            let run = history
                .find_run(team, id)
                .await?
                .with_context(|| format!("no run with id {id} in team {team}"))?;
            let fields = [
                ("id", run.id.to_string()),
                ("trigger", run.trigger.to_string()),
                ("conversation", run.conversation.map_or_else(|| "-".to_owned(), |c| c.to_string())),
                ("status", run.status.as_str().to_owned()),
                ("steps", run.steps.to_string()),
                ("input_tokens", run.usage.input_tokens.to_string()),
                ("output_tokens", run.usage.output_tokens.to_string()),
                ("started_at", time(run.started_at)),
                ("finished_at", time(run.finished_at)),
                ("error", run.error.unwrap_or_else(|| "-".to_owned())),
                ("input", run.input_excerpt),
            ];
            for (name, value) in fields {
                print(&format!("{name}: {value}"))?;
            }
            for (i, call) in run.tool_calls.iter().enumerate() {
                let outcome = if call.ok { "ok" } else { "error" };
                print(&format!(
                    "tool_call[{i}]: {} {} ({outcome}, {} ms) -> {}",
                    call.name, call.arguments, call.duration_ms, call.result
                ))?;
            }
            // Texts of several lines, each line indented under its name. They are written by
            // others (a pull request's author, a model): a control character that could
            // drive the operator's terminal is shown as U+FFFD.
            for (name, text) in [("model_input", &run.model_input), ("reply", &run.reply)] {
                match text {
                    None => print(&format!("{name}: -"))?,
                    Some(text) => {
                        print(&format!("{name}:"))?;
                        for line in text.lines() {
                            let shown: String = line
                                .chars()
                                .map(|c| if c.is_control() && c != '\t' { '\u{FFFD}' } else { c })
                                .collect();
                            print(&format!("  {shown}"))?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

async fn deliveries(
    store: &Store,
    accounts: &dyn AccountStore,
    command: DeliveriesCommand,
) -> anyhow::Result<()> {
    let DeliveriesCommand::List { team, verdict, limit } = command;
    let team = pick_team(accounts, team.as_deref())
        .await?
        .map_err(|problem| anyhow::anyhow!("--team: {problem}"))?;
    let verdict = verdict
        .map(|v| Verdict::parse(&v).context("--verdict: must be accepted, ignored or duplicate"))
        .transpose()?;
    for entry in store.agent().list_deliveries(team, &DeliveryFilter { verdict, limit }).await? {
        let progress = entry.progress.as_ref();
        let explanation = progress.and_then(|p| p.error.as_deref()).or(entry.note.as_deref());
        print(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            entry.received_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            entry.delivery,
            entry.event,
            entry.action.as_deref().unwrap_or("-"),
            entry.repository.as_deref().unwrap_or("-"),
            entry.verdict.as_str(),
            progress.map_or("-", |p| p.state.as_str()),
            progress.map_or(0, |p| p.attempts),
            entry.conversation.as_ref().map_or("-", ConversationKey::as_str),
            progress.and_then(|p| p.run).map_or_else(|| "-".to_owned(), |run| run.to_string()),
            explanation.unwrap_or("-"),
        ))?;
    }
    Ok(())
}

async fn jobs(
    store: &Store,
    accounts: &dyn AccountStore,
    team: Option<String>,
    state: Option<String>,
    kind: Option<String>,
    limit: u32,
) -> anyhow::Result<()> {
    use kernel::Words;
    let team = match team {
        Some(team) => Some(lookup::team(accounts, "--team", &team).await?),
        None => None,
    };
    let state = state
        .map(|s| notify::JobState::parse_word(&s).map_err(|e| anyhow::anyhow!("--state: {e}")))
        .transpose()?;
    let kind = kind
        .map(|k| notify::JobKind::parse_word(&k).map_err(|e| anyhow::anyhow!("--kind: {e}")))
        .transpose()?;
    let filter = notify::JobFilter { team, state, kind, limit };
    for job in store.notify().list_jobs(&filter).await? {
        print(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            job.id,
            job.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            job.team_id,
            job.kind.as_str(),
            job.state.as_str(),
            job.attempts,
            job.run_at.to_rfc3339_opts(SecondsFormat::Millis, true),
            job.subject,
            job.last_error.as_deref().unwrap_or("-"),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// `billable --help` and each command's explain every option and argument.
    #[test]
    fn every_option_has_a_help_line() {
        fn walk(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in command.get_arguments() {
                let builtin = ["help", "version"].contains(&arg.get_id().as_str());
                if !builtin && arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(format!("{path} {} (the command itself)", sub.get_name()));
                }
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "billable", &mut missing);
        assert!(missing.is_empty(), "without a help line: {missing:#?}");
    }
}
