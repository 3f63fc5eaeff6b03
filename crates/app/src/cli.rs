//! The command line: `serve`, `migrate`, and team, user and key administration. Each
//! administrative command prints only its result on stdout, so scripts can capture it.

// The doc comments of the commands are the `--help` text, written for the terminal.
#![allow(clippy::doc_markdown)]

use std::io::Write;
use std::sync::Arc;

use accounts::{
    AccountStore, ApiKeyId, CreateApiKeyError, CreateUserError, Currency, RevokeApiKeyError, Role, Scope,
    TeamId, TeamName, UserId, UserName,
};
use anyhow::{Context, bail};
use chrono::{SecondsFormat, TimeDelta};
use clap::{Parser, Subcommand};
use kernel::{Clock, Email, Id, SystemClock};

use crate::Store;
use crate::config::{DatabaseConfig, LogConfig, ServeConfig};

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
    /// Run the REST API (migrates first; on an empty database, creates a team and prints a key once).
    Serve(ServeConfig),
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
}

#[derive(Debug, Subcommand)]
pub enum TeamsCommand {
    /// Create a team; prints its id.
    Create {
        #[arg(long)]
        name: String,
        /// ISO 4217 code of the team's invoices.
        #[arg(long, default_value = "USD")]
        currency: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create a user in a team; prints its id.
    Create {
        #[arg(long)]
        team: String,
        #[arg(long)]
        email: String,
        #[arg(long, default_value = "")]
        name: String,
        /// owner, admin or member.
        #[arg(long)]
        role: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key for a user of a team; prints the key (shown only this once).
    Create {
        #[arg(long)]
        team: String,
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
        #[arg(long)]
        team: String,
    },
    /// Revoke a key by id; it stops working within the key cache TTL of running servers.
    Revoke { key_id: String },
}

fn parse_id<I: Id>(what: &str, text: &str) -> anyhow::Result<I> {
    I::parse(text).with_context(|| format!("{what} {text:?} is not an id (a UUID)"))
}

fn print(line: &str) -> anyhow::Result<()> {
    writeln!(std::io::stdout().lock(), "{line}").context("writing to stdout")
}

/// Runs an administrative command against the configured store.
pub async fn run_admin(database: &DatabaseConfig, command: Command) -> anyhow::Result<()> {
    let store = Store::open(database).await?;
    let accounts: Arc<dyn AccountStore> = store.accounts();
    let now = SystemClock.now();
    match command {
        Command::Serve(_) => bail!("serve is not an administrative command"),
        Command::Migrate => eprintln!("migrations are up to date"),
        Command::Teams(TeamsCommand::Create { name, currency }) => {
            let name = TeamName::parse(name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
            let currency = Currency::parse(&currency).map_err(|e| anyhow::anyhow!("--currency: {e}"))?;
            let team = accounts::new_team(name, currency, now);
            accounts.create_team(&team).await?;
            print(&team.id.to_string())?;
        }
        Command::Users(UsersCommand::Create { team, email, name, role }) => {
            let team: TeamId = parse_id("--team", &team)?;
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
            print(&user.id.to_string())?;
        }
        Command::Keys(KeysCommand::Create { team, user, scope, permissions, expires_in }) => {
            let team: TeamId = parse_id("--team", &team)?;
            let user: UserId = parse_id("--user", &user)?;
            let scope =
                Scope::from_parts(&scope, &permissions).map_err(|e| anyhow::anyhow!("--scope: {e}"))?;
            let expires_in =
                expires_in.map(|d| TimeDelta::from_std(d).context("--expires-in: too long")).transpose()?;
            let issued = accounts::issue_api_key(team, user, scope, expires_in, now);
            let issued = issued.store(accounts.as_ref()).await.map_err(|e| match e {
                CreateApiKeyError::UserNotInTeam => anyhow::anyhow!("--user: no such user in team {team}"),
                CreateApiKeyError::Store(e) => e.into(),
            })?;
            print(issued.secret.expose())?;
        }
        Command::Keys(KeysCommand::List { team }) => {
            let team: TeamId = parse_id("--team", &team)?;
            let time = |t: Option<chrono::DateTime<chrono::Utc>>| {
                t.map_or_else(|| "-".to_owned(), |t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
            };
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
                    time(Some(key.created_at)),
                    time(key.expires_at),
                    time(key.revoked_at),
                    time(key.last_used_at)
                ))?;
            }
        }
        Command::Keys(KeysCommand::Revoke { key_id }) => {
            let id: ApiKeyId = parse_id("KEY_ID", &key_id)?;
            accounts.revoke_api_key(id, now).await.map_err(|e| match e {
                RevokeApiKeyError::NotFound => anyhow::anyhow!("no API key with id {id}"),
                RevokeApiKeyError::Store(e) => e.into(),
            })?;
            print(&id.to_string())?;
        }
    }
    Ok(())
}
