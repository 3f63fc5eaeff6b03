//! Wiring of the `billable` binary: opens the store the configuration names, runs
//! migrations and the first-run bootstrap, and serves the API. No rules live here.

pub mod agent_definition;
pub mod agent_setup;
mod agent_tools;
pub mod cli;
pub mod config;
mod jobs;
mod lookup;
pub mod redact;

use std::net::TcpListener;
use std::sync::Arc;

use accounts::AccountStore;
use actix_web::dev::Server;
use actix_web::web;
use anyhow::Context;
use billing::issue::Printer;
use http_api::triggers::{TriggerRoute, TriggerState};
use http_api::{ApiState, Stores};
use kernel::{Clock, SystemClock};
use store_memory::MemoryStore;
use store_sql::{Backend, SqlStore};

use crate::agent_setup::{AgentService, AgentSetup};
use crate::config::{DatabaseConfig, ServeConfig};
pub use crate::jobs::JobParts;
use crate::jobs::{BookStores, RecurringBooks};

/// The store behind every port.
#[derive(Debug, Clone)]
pub enum Store {
    Sql(Arc<SqlStore>),
    Memory(Arc<MemoryStore>),
}

impl Store {
    /// Opens the configured store, for a process whose `runtimes` tokio runtimes use it
    /// (1 for a command, [`ServeConfig::runtimes`] for the server), and brings its schema
    /// up to date.
    pub async fn open(config: &DatabaseConfig, runtimes: usize) -> anyhow::Result<Self> {
        // Events carry their resources as the REST API's GETs answer them.
        let describe: Arc<dyn notify::Describe> = Arc::new(http_api::ApiBodies);
        if config.database_url == "memory:" {
            return Ok(Self::Memory(Arc::new(MemoryStore::new().describing(describe))));
        }
        let backend = Backend::from_url(&config.database_url)?;
        let settings = config.pool_settings(matches!(backend, Backend::Sqlite(_)), runtimes);
        let store = SqlStore::connect(backend, settings)?.describing(describe);
        store.migrate().await.context("migrating the database")?;
        Ok(Self::Sql(Arc::new(store)))
    }

    /// Events, jobs, messages, reminders and webhooks.
    pub fn notify(&self) -> Arc<dyn notify::NotifyStore> {
        self.stores().notify
    }

    /// Rung after each write that records an event or queues a job.
    pub fn job_signal(&self) -> Arc<tokio::sync::Notify> {
        match self {
            Self::Sql(store) => store.job_signal(),
            Self::Memory(store) => store.job_signal(),
        }
    }

    pub fn stores(&self) -> Stores {
        match self {
            Self::Sql(store) => Stores {
                accounts: store.clone(),
                billing: store.clone(),
                track: store.clone(),
                agent: store.clone(),
                health: store.clone(),
                idempotency: store.clone(),
                notify: store.clone(),
                recurring: store.clone(),
            },
            Self::Memory(store) => Stores {
                accounts: store.clone(),
                billing: store.clone(),
                track: store.clone(),
                agent: store.clone(),
                health: store.clone(),
                idempotency: store.clone(),
                notify: store.clone(),
                recurring: store.clone(),
            },
        }
    }

    pub fn accounts(&self) -> Arc<dyn AccountStore> {
        self.stores().accounts
    }

    pub fn billing(&self) -> Arc<dyn billing::BillingStore> {
        self.stores().billing
    }

    pub fn agent(&self) -> Arc<dyn triggers::AgentStore> {
        match self {
            Self::Sql(store) => store.clone(),
            Self::Memory(store) => store.clone(),
        }
    }

    /// Where conversations' lines are kept: in PostgreSQL, shared by every replica, with
    /// `lease` as the hold of a stopped replica's tickets, unless `turns` asks for them in
    /// this process; in this process on SQLite and in memory, which serve one process.
    pub fn turns(
        &self,
        turns: config::AgentTurns,
        lease: std::time::Duration,
    ) -> anyhow::Result<Arc<dyn triggers::ConversationTurns>> {
        Ok(match self {
            Self::Sql(store)
                if turns == config::AgentTurns::Shared && matches!(store.backend(), Backend::Postgres(_)) =>
            {
                store_sql::SharedTurns::start(store.clone(), lease)?
            }
            Self::Sql(_) | Self::Memory(_) => Arc::new(agent::LocalTurns::new(self.agent())),
        })
    }
}

/// The API server and the agent's trigger listeners, bound and ready to run.
pub struct Application {
    port: u16,
    /// Each trigger port as configured, and the port bound for it.
    trigger_ports: Vec<(u16, u16)>,
    servers: Vec<Server>,
    /// The delivery queue's worker, when the agent has a repository trigger.
    worker: Option<tokio::task::AbortHandle>,
    /// What the REST API serves from, which the agent's built-in tools share.
    state: web::Data<ApiState>,
    /// What the job runner is made of; it runs in this process when `run_jobs`.
    jobs: JobParts,
    run_jobs: bool,
    /// The job runner, once running; it stops claiming jobs on SIGTERM.
    runner: Option<tokio::task::JoinHandle<()>>,
    /// How long requests in flight, and the jobs running, have after SIGTERM.
    shutdown_timeout: std::time::Duration,
    /// Set when the process is told to stop at once (SIGINT), not to drain.
    interrupted: Arc<std::sync::atomic::AtomicBool>,
}

/// The job runner's parts over `store`, with `config`'s senders, printing through `printer`.
fn job_parts(
    store: &Store,
    config: &ServeConfig,
    printer: Printer,
    sending: &http_api::Sending,
) -> anyhow::Result<JobParts> {
    let stores = store.stores();
    let books = RecurringBooks {
        stores: BookStores {
            recurring: stores.recurring,
            billing: stores.billing,
            accounts: stores.accounts,
            track: stores.track,
            notify: stores.notify.clone(),
        },
        printer,
        sending: sending.mail_from.clone().map(|from| (from, sending.links.clone())),
    };
    Ok(JobParts {
        books,
        store: stores.notify,
        signal: store.job_signal(),
        webhooks: config.sending.webhook_sender()?,
        mail: config.sending.mail_jobs(sending)?,
        agent: None,
        settings: config.jobs.runner_settings(),
    })
}

/// Prints documents as `config` says: the PDF in process or through a renderer service.
fn printer(config: &ServeConfig) -> anyhow::Result<Printer> {
    Ok(Printer::new(config.renderer()?, Arc::new(einvoice::Xml), Arc::new(pages::Pages)))
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application")
            .field("port", &self.port)
            .field("trigger_ports", &self.trigger_ports)
            .finish_non_exhaustive()
    }
}

impl Application {
    /// Binds `config.listen` (port 0 picks a free one) and builds the server over `store`.
    pub fn build(config: &ServeConfig, store: &Store, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let listener = bind(config.listen, "--listen (BILLABLE_LISTEN)")?;
        let port = listener.local_addr()?.port();
        let printer = printer(config)?;
        let state = web::Data::new(
            ApiState::new(store.stores(), printer.clone(), clock, config.http_settings()?)
                .with_cards(config.sending.card_processor()?),
        );
        spawn_sweeps(state.clone(), |state| state.limits.sweep());
        spawn_idempotency_purge(state.clone());
        let watched = state.clone();
        tokio::spawn(async move { watched.authenticator.watch_revocations(REVOCATION_CHECK).await });
        let server = http_api::serve(listener, state.clone(), config.workers(), config.client_limits())?;
        let jobs = job_parts(store, config, printer, &state.settings.sending)?;
        Ok(Self {
            port,
            trigger_ports: Vec::new(),
            servers: vec![server],
            worker: None,
            state,
            jobs,
            run_jobs: config.jobs.run_jobs,
            runner: None,
            shutdown_timeout: config.shutdown_timeout,
            interrupted: Arc::default(),
        })
    }

    /// What a job runner over this application's store and settings is made of: what
    /// tests drive one pass at a time, as `billable jobs run --at` does.
    pub fn jobs(&self) -> JobParts {
        self.jobs.clone()
    }

    /// Stops the job runner and the jobs it runs, as a crash would.
    pub fn runner(&self) -> Option<tokio::task::AbortHandle> {
        self.runner.as_ref().map(tokio::task::JoinHandle::abort_handle)
    }

    /// Starts the job runner of this process (unless `run_jobs` is off); idempotent.
    pub fn start_jobs(&mut self) {
        if self.run_jobs && self.runner.is_none() {
            let runner = self.jobs.runner(self.state.clock.clone());
            self.runner = Some(runner.spawn_until(stop_signal(self.interrupted.clone())));
            tracing::info!(
                mail = self.jobs.mail.is_some(),
                agent = self.jobs.agent.is_some(),
                "running the job queue"
            );
        }
    }

    /// Adds the listeners of the agent's triggers (one per port, on
    /// `config.trigger_host`) and starts the worker of its delivery queue.
    pub fn with_agent(mut self, config: &ServeConfig, agent: &AgentService) -> anyhow::Result<Self> {
        let state = web::Data::new(TriggerState::new(agent.runtime.clone(), config.trigger_settings()));
        spawn_sweeps(state.clone(), TriggerState::sweep);
        self.worker = agent.worker.as_ref().map(|worker| worker.spawn().abort_handle());
        self.jobs.agent.clone_from(&agent.events);
        for (&port, routes) in &agent.listeners {
            let address = std::net::SocketAddr::from((config.trigger_host, port));
            let listener = bind(address, "the trigger's `port` in the agent definition")?;
            let bound = listener.local_addr()?.port();
            let paths: Vec<&str> = routes.iter().map(TriggerRoute::path).collect();
            tracing::info!(address = %address, port = bound, ?paths, "serving agent triggers");
            self.servers.push(http_api::triggers::serve_triggers(
                listener,
                state.clone(),
                routes.clone(),
                config.workers(),
                config.client_limits(),
            )?);
            self.trigger_ports.push((port, bound));
        }
        Ok(self)
    }

    /// The REST API's state: its stores, clock and caches.
    pub fn api_state(&self) -> Arc<ApiState> {
        self.state.clone().into_inner()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Handles to stop the servers (as a restart would) from outside.
    pub fn handles(&self) -> Vec<actix_web::dev::ServerHandle> {
        self.servers.iter().map(Server::handle).collect()
    }

    /// Stops the delivery queue's worker and the runs it started, as a crash would.
    pub fn worker(&self) -> Option<tokio::task::AbortHandle> {
        self.worker.clone()
    }

    /// The port bound for the triggers configured on `configured` (which may be 0).
    pub fn trigger_port(&self, configured: u16) -> Option<u16> {
        self.trigger_ports.iter().find(|(c, _)| *c == configured).map(|(_, bound)| *bound)
    }

    /// Serves until SIGTERM (draining requests in flight) or SIGINT (at once), running the
    /// job queue meanwhile unless `run_jobs` is off.
    pub async fn run_until_stopped(mut self) -> anyhow::Result<()> {
        self.start_jobs();
        let running: Vec<_> = self.servers.into_iter().map(tokio::spawn).collect();
        for server in running {
            server.await.context("a server task failed")??;
        }
        // The job runner claimed nothing since SIGTERM, and had the drain to finish what it
        // ran. Runs of deliveries and jobs still under way are cut short, as a crash would;
        // their leases end and the next start (or another replica) takes them over.
        if let Some(worker) = self.worker {
            worker.abort();
        }
        if let Some(mut runner) = self.runner {
            let drain = if self.interrupted.load(std::sync::atomic::Ordering::Relaxed) {
                std::time::Duration::ZERO
            } else {
                self.shutdown_timeout
            };
            if tokio::time::timeout(drain, &mut runner).await.is_err() {
                tracing::warn!("jobs still running at the end of the shutdown timeout are cut short");
            }
            runner.abort();
        }
        Ok(())
    }
}

/// Completes when the process is told to stop, as the servers are: SIGTERM, or SIGINT,
/// which also sets `interrupted` (never, where the signals cannot be listened for).
async fn stop_signal(interrupted: Arc<std::sync::atomic::AtomicBool>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut terminate), Ok(mut interrupt)) =
        (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
    else {
        tracing::warn!("cannot listen for SIGTERM and SIGINT: the job runner stops only with the process");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => interrupted.store(true, std::sync::atomic::Ordering::Relaxed),
    }
}

/// How often each process asks the database whether a key was revoked.
const REVOCATION_CHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// Keeps the rate limiters' memory bounded by forgetting idle callers each minute.
fn spawn_sweeps<T: Send + Sync + 'static>(state: web::Data<T>, sweep: fn(&T)) {
    tokio::spawn(async move {
        let mut every_minute = tokio::time::interval(std::time::Duration::from_mins(1));
        loop {
            every_minute.tick().await;
            sweep(&state);
        }
    });
}

/// Forgets expired idempotency keys at start and hourly after. Every replica does it; a
/// purge is one indexed delete, so more than one at a time costs little.
fn spawn_idempotency_purge(state: web::Data<ApiState>) {
    tokio::spawn(async move {
        let mut every_hour = tokio::time::interval(std::time::Duration::from_hours(1));
        loop {
            every_hour.tick().await;
            match state.stores.idempotency.purge_idempotency_keys(state.clock.now()).await {
                Ok(0) => {}
                Ok(purged) => tracing::info!(purged, "forgot expired idempotency keys"),
                Err(error) => {
                    tracing::warn!(error = format!("{error:#}"), "could not forget expired idempotency keys");
                }
            }
        }
    });
}

/// SQLite serves one process. A second `serve` on the same file would keep queues,
/// caches and rate limits of its own beside the first one's, so it is refused; the
/// administrative commands may still open the file beside a server. The claim is an
/// exclusive lock on `<file>.serve-lock`, which the system drops with the process however
/// it ends. (Not the database file itself: closing another descriptor of it would drop
/// SQLite's own locks.)
fn claim_sqlite_file(database_url: &str) -> anyhow::Result<Option<std::fs::File>> {
    let Ok(Backend::Sqlite(path)) = Backend::from_url(database_url) else { return Ok(None) };
    if path == ":memory:" {
        return Ok(None);
    }
    let lock_path = format!("{path}.serve-lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {lock_path}"))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "another `billable serve` is serving {database_url}: SQLite serves one process. \
             Several replicas need PostgreSQL (see \"Running several replicas\" in docs/operations.md)"
        ),
        Err(std::fs::TryLockError::Error(error)) => {
            Err(error).with_context(|| format!("locking {lock_path}"))
        }
    }
}

/// A listener on `address`, which `setting` chose. An address in use names the setting to
/// change, since the usual cause is a server already running.
fn bind(address: std::net::SocketAddr, setting: &str) -> anyhow::Result<TcpListener> {
    TcpListener::bind(address).map_err(|error| match error.kind() {
        std::io::ErrorKind::AddrInUse => anyhow::anyhow!(
            "{address} is already in use, by another `billable serve` or another program: stop it, or \
             choose another port with {setting} (e.g. 3001)"
        ),
        _ => anyhow::Error::new(error).context(format!("binding {address}, which {setting} names")),
    })
}

/// What the first start prints, once: the key, and the team and owner it belongs to, so
/// that every later command (`--team`, `--user`) can name them.
fn first_start_banner(key: &str, team: accounts::TeamId, owner: accounts::UserId, email: &str) -> String {
    format!(
        "\n==================================================================\n\
         First start: created team \"Default\", its owner, and an API key\n\
         with scope `write`. It is shown ONCE; store it now:\n\n    \
         X-API-Key: {key}\n\n\
         Team:  {team} (Default)\n\
         Owner: {owner} {email}\n\
         Later: billable teams list, billable users list --team Default\n\
         ==================================================================\n"
    )
}

/// The agent definition `config` names, its secrets resolved from the environment (and
/// masked in every log line).
fn load_agent(config: &ServeConfig, redactions: &redact::Redactions) -> anyhow::Result<Option<AgentSetup>> {
    let unreadable = std::cell::RefCell::new(None);
    let secret = |name: &str| {
        let value = config::secret_env(name).unwrap_or_else(|error| {
            unreadable.borrow_mut().get_or_insert(error);
            None
        });
        // A variable holding two values during a rotation masks both.
        for part in value.iter().flat_map(|value| value.split(',')) {
            redactions.add(part.trim());
        }
        value
    };
    let setup = config.agent.as_deref().map(|path| AgentSetup::load(path, secret)).transpose();
    match unreadable.into_inner() {
        Some(error) => Err(error),
        None => setup,
    }
}

/// `billable healthcheck`: whether the server listening on `listen` answers `/readyz`
/// ready within `timeout` (asked on loopback when it listens on every address).
pub async fn healthcheck(listen: std::net::SocketAddr, timeout: std::time::Duration) -> anyhow::Result<()> {
    let mut address = listen;
    if address.ip().is_unspecified() {
        address.set_ip(match address {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let url = format!("http://{address}/readyz");
    let client = reqwest::Client::builder().timeout(timeout).build()?;
    let answer = client.get(&url).send().await.with_context(|| format!("{url} did not answer"))?;
    anyhow::ensure!(answer.status().is_success(), "{url} answered {}: not ready", answer.status());
    Ok(())
}

/// The database `billable backup` and `restore` work on; `memory:` keeps nothing.
fn backed_up(database: &DatabaseConfig) -> anyhow::Result<Backend> {
    anyhow::ensure!(
        database.database_url != "memory:",
        "DATABASE_URL memory: keeps nothing to back up or restore"
    );
    Backend::from_url(&database.database_url)
}

/// `billable backup --to FILE`: a consistent backup of the running database; prints its
/// size in bytes.
pub async fn backup(
    database: &DatabaseConfig,
    to: &std::path::Path,
    tools: store_sql::backup::PgTools,
) -> anyhow::Result<()> {
    let bytes = store_sql::backup::backup(&backed_up(database)?, to, &tools)
        .await
        .with_context(|| format!("backing up into {}", to.display()))?;
    tracing::info!(file = %to.display(), bytes, "backup written");
    cli::print(&bytes.to_string())
}

/// `billable restore --from FILE`: the backup, restored into an empty database and migrated.
pub async fn restore(
    database: &DatabaseConfig,
    from: &std::path::Path,
    tools: store_sql::backup::PgTools,
) -> anyhow::Result<()> {
    store_sql::backup::restore(&backed_up(database)?, from, &tools)
        .await
        .with_context(|| format!("restoring {}", from.display()))?;
    Store::open(database, 1).await.context("migrating the restored database")?;
    tracing::info!(file = %from.display(), "backup restored");
    Ok(())
}

/// `billable jobs run`: runs, once, every job due at `at` (now when `None`) and what that
/// makes due, with the configuration `serve` uses (SMTP, webhooks, the agent's events
/// trigger) and no listener; prints what it did, or with `dry_run` what is due. Refuses,
/// running nothing, when work is due that the configuration cannot do.
pub async fn run_jobs(
    database: &DatabaseConfig,
    config: &ServeConfig,
    at: Option<chrono::DateTime<chrono::Utc>>,
    dry_run: bool,
    redactions: &redact::Redactions,
) -> anyhow::Result<()> {
    let agent_setup = load_agent(config, redactions)?;
    let store = Store::open(database, 1).await?;
    let clock: Arc<dyn Clock> = match at {
        Some(at) => Arc::new(kernel::FixedClock::new(at)),
        None => Arc::new(SystemClock),
    };
    let printer = printer(config)?;
    let state =
        Arc::new(ApiState::new(store.stores(), printer.clone(), clock.clone(), config.http_settings()?));
    let mut jobs = job_parts(&store, config, printer, &state.settings.sending)?;
    let due = DueNow::read(&store, clock.now()).await?;
    if dry_run {
        print_lines(&[DueNow::HEADER, &due.line()])?;
    }
    // A dry run fails as the run would, after saying what is due.
    if let Some(refusal) = due.beyond(jobs.mail.is_some(), agent_setup.is_some()) {
        anyhow::bail!("{refusal}; nothing was run");
    }
    if dry_run {
        return Ok(());
    }
    if let Some(setup) = &agent_setup {
        let accounts = store.accounts();
        let team = setup.team(accounts.as_ref()).await?;
        let agent = setup.assemble(
            team,
            &store.agent(),
            store.turns(config.agent_turns, config.agent_lease)?,
            &clock,
            setup.tools(team, accounts.as_ref(), state.clone()).await?,
            triggers::RetryPolicy::default(),
            config.agent_lease,
        )?;
        let subscription = setup.subscription(team, accounts.as_ref()).await?;
        store.notify().subscribe_agent(team, subscription.as_ref()).await?;
        jobs.agent = agent.events;
    }
    let report = jobs.runner(clock).run_due().await?;
    let line = format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}",
        report.overdue,
        report.reminders,
        report.dispatched,
        report.done,
        report.retried,
        report.failed,
        report.generated
    );
    print_lines(&["overdue\treminders\tdispatched\tdone\tretried\tfailed\trecurring_invoices", &line])?;
    tracing::info!(?report, "ran the jobs due");
    Ok(())
}

/// Writes `lines` to stdout, each ended by a line feed.
fn print_lines(lines: &[&str]) -> anyhow::Result<()> {
    let mut text = lines.join("\n");
    text.push('\n');
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(())
}

/// What a pass at an instant finds due, of every team, read without doing any of it.
struct DueNow {
    work: notify::DueWork,
    /// Recurring invoices with a period due, and of them those that e-mail its invoice.
    recurring: usize,
    recurring_mailed: usize,
}

impl DueNow {
    const HEADER: &'static str =
        "recurring_invoices\trecurring_mailed\toverdue\treminders\tevents\tmail\twebhooks\tagent";

    async fn read(store: &Store, at: chrono::DateTime<chrono::Utc>) -> anyhow::Result<Self> {
        let work = store.notify().due_work(at).await?;
        let recurring = store.stores().recurring.due_recurring(at.date_naive(), u32::MAX).await?;
        let recurring_mailed = recurring.iter().filter(|r| r.mode == recurring::Mode::IssueAndSend).count();
        Ok(Self { work, recurring: recurring.len(), recurring_mailed })
    }

    fn line(&self) -> String {
        let w = &self.work;
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.recurring,
            self.recurring_mailed,
            w.overdue,
            w.reminders,
            w.events,
            w.mail,
            w.webhooks,
            w.agent
        )
    }

    /// What is due that a runner with e-mail (`mail`) and an agent (`agent`) or without
    /// them cannot do, worded with the settings that would; `None` when it can do it all.
    fn beyond(&self, mail: bool, agent: bool) -> Option<String> {
        let w = &self.work;
        let mut missing = Vec::new();
        if !mail && w.mail + w.reminders + u64::try_from(self.recurring_mailed).unwrap_or(u64::MAX) > 0 {
            missing.push(format!(
                "e-mail is due ({} e-mails, {} reminders, {} recurring invoices that e-mail their invoice) and \
                 this run has no SMTP server: set BILLABLE_SMTP_URL and BILLABLE_MAIL_FROM (--smtp-url, \
                 --mail-from) as `billable serve` has them",
                w.mail, w.reminders, self.recurring_mailed
            ));
        }
        if !agent && w.agent > 0 {
            missing.push(format!(
                "{} runs of the agent are due and this run has no agent: give BILLABLE_AGENT (--agent) as \
                 `billable serve` has it",
                w.agent
            ));
        }
        (!missing.is_empty()).then(|| missing.join("; "))
    }
}

/// `billable serve`: open, migrate, bootstrap on first run, serve. The values of the
/// variables an agent definition names (tokens, secrets, keys) join `redactions`.
pub async fn serve(
    database: &DatabaseConfig,
    config: &ServeConfig,
    redactions: &redact::Redactions,
) -> anyhow::Result<()> {
    // The definition and its secrets first: a missing token stops startup before any
    // port is bound or the database is touched.
    let agent_setup = load_agent(config, redactions)?;
    // Before opening: a refused second server must not migrate under the first one.
    let _sole_server = claim_sqlite_file(&database.database_url)?;
    let store = Store::open(database, config.runtimes()).await?;
    if let Some(counter) = config.shared_limits()? {
        counter.ping().await.context("BILLABLE_REDIS_URL: Redis does not answer")?;
    }
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    if let Some(secret) = accounts::bootstrap(store.accounts().as_ref(), clock.now()).await? {
        let credential = store
            .accounts()
            .find_credential(&secret.hash())
            .await?
            .context("the first start's key vanished as it was made")?;
        let (team, owner) = (credential.key.team_id, credential.key.user_id);
        // The first team gets its default sender address now, like any team made by the CLI.
        billing::service::default_sender(
            store.billing().as_ref(),
            store.accounts().as_ref(),
            team,
            clock.now(),
        )
        .await?;
        let users = store.accounts().list_users(team).await?;
        let email = users
            .iter()
            .find(|user| user.id == owner)
            .map_or_else(String::new, |user| user.email.to_string());
        eprintln!("{}", first_start_banner(secret.expose(), team, owner, &email));
    }
    let mut application = Application::build(config, &store, clock.clone())?;
    if let Some(setup) = &agent_setup {
        let team = setup.team(store.accounts().as_ref()).await?;
        let agent = setup.assemble(
            team,
            &store.agent(),
            store.turns(config.agent_turns, config.agent_lease)?,
            &clock,
            setup.tools(team, store.accounts().as_ref(), application.api_state()).await?,
            triggers::RetryPolicy::default(),
            config.agent_lease,
        )?;
        tracing::info!(agent = %setup.definition.name, %team, "agent runtime ready");
        let subscription = setup.subscription(team, store.accounts().as_ref()).await?;
        store.notify().subscribe_agent(team, subscription.as_ref()).await?;
        application = application.with_agent(config, &agent)?;
    }
    tracing::info!(address = %config.listen, port = application.port(), "serving the REST API");
    application.run_until_stopped().await?;
    tracing::info!("stopped");
    Ok(())
}
