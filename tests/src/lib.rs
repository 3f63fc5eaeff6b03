#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::missing_panics_doc,
    reason = "test support: a failed setup should fail the test loudly"
)]

//! Test support for the workspace acceptance tests: a fresh database per test on every
//! backend, fixtures for teams, users and keys, and the real server on a free port.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use accounts::{Role, Scope, TeamId, UserId, UserName};
use app::Store;
use app::config::{DatabaseConfig, ServeConfig, parse_rate};
use chrono::TimeDelta;
use kernel::{Clock, Email, SystemClock};

/// Which adapter a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Memory,
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend of the HTTP suite: `TEST_BACKEND` = memory, sqlite (default) or postgres.
    pub fn from_env() -> Self {
        match std::env::var("TEST_BACKEND").as_deref() {
            Ok("memory") => Self::Memory,
            Ok("postgres") => Self::Postgres,
            _ => Self::Sqlite,
        }
    }

    /// A database that outlives the process: the suite's, or SQLite when that is memory.
    pub fn durable_from_env() -> Self {
        match Self::from_env() {
            Self::Memory => Self::Sqlite,
            durable => durable,
        }
    }
}

pub use store_contract::admin_session;

/// A database of its own for one test, removed when dropped: a PostgreSQL schema, a
/// SQLite file, or nothing at all for the in-memory store.
#[derive(Debug)]
pub struct TestDb(store_contract::Database);

impl std::ops::Deref for TestDb {
    type Target = store_contract::Database;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl TestDb {
    pub async fn new(backend: Backend) -> Self {
        Self(match backend {
            Backend::Memory => store_contract::Database::memory(),
            Backend::Sqlite => store_contract::Database::sqlite(),
            Backend::Postgres => store_contract::Database::postgres().await,
        })
    }

    /// A SQLite database at `path`, its files removed when dropped.
    pub fn sqlite_at(path: PathBuf) -> Self {
        Self(store_contract::Database::sqlite_at(path))
    }

    pub fn config(&self) -> DatabaseConfig {
        self.config_with_pool(4, Duration::from_secs(5))
    }

    pub fn config_with_pool(&self, size: usize, wait: Duration) -> DatabaseConfig {
        DatabaseConfig {
            database_url: self.url.clone(),
            db_pool_size: Some(size),
            db_wait_timeout: wait,
            db_statement_timeout: Duration::from_secs(30),
            sqlite_synchronous: app::config::SqliteSynchronous::Full,
        }
    }

    /// Runs `sql` on this database directly, past every rule of the store: data as an
    /// earlier release, or another program, left it. Panics on the in-memory store.
    pub async fn execute(&self, sql: &str) {
        if let Some(schema) = self.schema() {
            let admin = admin_session().await;
            admin.batch_execute(&format!("SET search_path TO \"{schema}\"; {sql}")).await.unwrap();
            return;
        }
        let path = self.url.strip_prefix("sqlite://").expect("raw SQL needs SQLite or PostgreSQL").to_owned();
        let sql = sql.to_owned();
        tokio::task::spawn_blocking(move || {
            use diesel::Connection as _;
            use diesel::connection::SimpleConnection as _;
            let mut conn = diesel::SqliteConnection::establish(&path).unwrap();
            conn.batch_execute("PRAGMA busy_timeout = 5000").unwrap();
            conn.batch_execute(&sql).unwrap();
        })
        .await
        .unwrap();
    }

    /// Opens (and migrates) the store.
    pub async fn open(&self) -> Store {
        Store::open(&self.config(), serve_config().runtimes())
            .await
            .unwrap_or_else(|e| panic!("opening {}: {e:#}", self.url))
    }
}

/// Creates a team and returns its id.
pub async fn create_team(store: &Store, name: &str) -> TeamId {
    store_contract::create_team(&store.accounts(), name).await
}

/// Creates a user with `role` in `team`.
pub async fn create_user(store: &Store, team: TeamId, role: Role) -> UserId {
    store_contract::create_user(&store.accounts(), team, role).await
}

/// Issues a key; `expires_in` may be negative to make an already expired key.
pub async fn create_key(
    store: &Store,
    team: TeamId,
    user: UserId,
    scope: Scope,
    expires_in: Option<TimeDelta>,
) -> (accounts::ApiKeyId, String) {
    store_contract::create_key(&store.accounts(), team, user, scope, expires_in).await
}

/// Server settings for tests: generous limits unless a test tightens them.
pub fn serve_config() -> ServeConfig {
    ServeConfig {
        listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        rate_limit: parse_rate("10000/1s").unwrap(),
        ip_rate_limit: parse_rate("10000/1s").unwrap(),
        redis_url: None,
        redis_prefix: "billable:".to_owned(),
        key_cache_ttl: Duration::from_secs(5),
        workers: Some(1),
        body_timeout: Duration::from_secs(30),
        shutdown_timeout: Duration::from_secs(30),
        max_connections: 10_000,
        trust_forwarded: false,
        listing_cache_mb: 32,
        statement_limit_mb: 50,
        idempotency_ttl: Duration::from_hours(24),
        pdf_renderer_url: None,
        pdf_renderer_timeout: Duration::from_secs(10),
        agent: None,
        trigger_host: std::net::IpAddr::from(Ipv4Addr::LOCALHOST),
        trigger_auth_failures: parse_rate("20/60s").unwrap(),
        // Short, so that a restarted test server takes over a stopped one's deliveries at once.
        agent_lease: Duration::from_secs(3),
        agent_turns: app::config::AgentTurns::Shared,
        mcp_allowed_origins: http_api::AllowedOrigins::parse("https://allowed.example").unwrap(),
        // Receivers in tests listen on 127.0.0.1; e-mail is configured by the tests that send.
        sending: app::config::SendingConfig { webhook_allow_private: true, ..Default::default() },
        // Tests run the job queue themselves, a pass at an instant they choose.
        jobs: app::config::JobsConfig {
            run_jobs: false,
            jobs_lease: Duration::from_secs(3),
            ..Default::default()
        },
    }
}

/// The email of the admin every `AgentApp` database has, for `tools.billable.user`.
pub const AGENT_USER: &str = "agent@example.com";

/// `examples/<file>` as a test serves it: its model is `base_url` (an OpenAI-compatible fake,
/// no key, no retries), its user `AGENT_USER`, its triggers on a free port.
pub fn example(file: &str, base_url: &str) -> String {
    let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let yaml = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    yaml.replace("https://api.openai.com/v1", base_url)
        .replace("  api_key_env: OPENAI_API_KEY\n", "  max_retries: 0\n")
        .replace("owner@billable.localhost", AGENT_USER)
        .replace("port: 8080", "port: 0")
}

/// `examples/<file>` as its reader runs it, but for the model's address (`base_url`) and
/// the trigger's port (a free one): the same user, the same key variable, the same limits.
pub fn example_as_written(file: &str, base_url: &str) -> String {
    let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
    let yaml = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    yaml.replace("https://api.openai.com/v1", base_url).replace("port: 8080", "port: 0")
}

/// The real server, on a free port, over a fresh database, with one team and a `write`
/// key of its owner ready.
#[derive(Debug)]
pub struct TestApp {
    pub address: String,
    pub store: Store,
    pub http: reqwest::Client,
    pub team: TeamId,
    pub owner: UserId,
    pub key: String,
    pub db: TestDb,
    /// The job runner's parts, for passes at the instants a test chooses.
    pub jobs: app::JobParts,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(serve_config()).await
}

pub async fn spawn_app_with(config: ServeConfig) -> TestApp {
    let db = TestDb::new(Backend::from_env()).await;
    let store = db.open().await;
    start(config, db, store).await
}

/// The server over a given, already opened database.
pub async fn start(config: ServeConfig, db: TestDb, store: Store) -> TestApp {
    start_on(config, db, store, Arc::new(SystemClock)).await
}

/// The server on business time `clock` (a `FixedClock` the test moves), over a fresh
/// database: what its requests stamp and take as today.
pub async fn spawn_app_on(clock: Arc<dyn Clock>) -> TestApp {
    let db = TestDb::new(Backend::from_env()).await;
    let store = db.open().await;
    start_on(serve_config(), db, store, clock).await
}

/// The server over a given, already opened database, on `clock`.
pub async fn start_on(config: ServeConfig, db: TestDb, store: Store, clock: Arc<dyn Clock>) -> TestApp {
    let application = app::Application::build(&config, &store, clock).expect("server builds");
    let address = format!("http://127.0.0.1:{}", application.port());
    let jobs = application.jobs();
    tokio::spawn(application.run_until_stopped());
    let team = create_team(&store, "Acme").await;
    let owner = create_user(&store, team, Role::Owner).await;
    let (_, key) = create_key(&store, team, owner, Scope::Write, None).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client builds");
    TestApp { address, store, http, team, owner, key, db, jobs }
}

impl TestApp {
    /// Another server over the same database, as a second instance of a deployment is:
    /// the same data, caches of its own. Returns its address.
    pub fn another_instance(&self) -> String {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let application =
            app::Application::build(&serve_config(), &self.store, clock).expect("server builds");
        let address = format!("http://127.0.0.1:{}", application.port());
        tokio::spawn(application.run_until_stopped());
        address
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.address)
    }

    /// Runs, once, every job due at `at` and what that makes due, as `billable jobs run
    /// --at` does.
    pub async fn run_jobs_at(&self, at: chrono::DateTime<chrono::Utc>) -> outbound::PassReport {
        let clock: Arc<dyn Clock> = Arc::new(kernel::FixedClock::new(at));
        self.jobs.runner(clock).run_due().await.expect("the jobs run")
    }

    /// Runs every job due now.
    pub async fn run_jobs(&self) -> outbound::PassReport {
        self.run_jobs_at(chrono::Utc::now()).await
    }

    /// A request with the given key.
    pub fn request(&self, method: reqwest::Method, path: &str, key: &str) -> reqwest::RequestBuilder {
        self.http.request(method, self.url(path)).header("X-API-Key", key)
    }

    /// The JSON of `GET path` with the team's key, which must answer 200.
    pub async fn get_json(&self, path: &str) -> serde_json::Value {
        let response = self.request(reqwest::Method::GET, path, &self.key).send().await.unwrap();
        assert_eq!(response.status(), 200, "GET {path}");
        response.json().await.unwrap()
    }

    /// Calls the built-in tool `name` with `arguments` over `/mcp` with `key`, and returns the
    /// JSON-RPC `result`: `isError`, and the answer's JSON as text in `content[0].text`.
    pub async fn call_tool(&self, key: &str, name: &str, arguments: serde_json::Value) -> serde_json::Value {
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": {"name": name, "arguments": arguments}});
        let response = self
            .request(reqwest::Method::POST, "/mcp", key)
            .header("accept", "application/json, text/event-stream")
            .json(&call)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "tools/call {name}");
        response.json::<serde_json::Value>().await.unwrap()["result"].clone()
    }

    /// Creates a client through the API and returns its JSON.
    pub async fn create_client(&self, key: &str, name: &str) -> serde_json::Value {
        let response = self
            .request(reqwest::Method::POST, "/v1/invoices/clients", key)
            .json(&serde_json::json!({
                "name": name, "email": "billing@example.com", "line1": "1 Main Street", "postalCode": "1000"
            }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "creating client {name}");
        response.json().await.unwrap()
    }
}

pub mod fake_model;
pub mod outside;

/// Server settings for tests that e-mail through `smtp`, from `billing@acme.example`, with
/// links to `https://billing.example.com`.
pub fn mailing_config(smtp: &outside::SmtpServer) -> ServeConfig {
    let mut config = serve_config();
    config.sending.smtp_url = Some(smtp.url());
    config.sending.smtp_ca_file = smtp.ca_file.exists().then(|| smtp.ca_file.clone());
    config.sending.mail_from = Some("billing@acme.example".to_owned());
    config.sending.public_url = Some("https://billing.example.com".to_owned());
    config
}

/// The real server with an agent: the REST API and the agent's trigger listeners (which
/// the definition should put on port 0, a free port), over `db`.
#[derive(Debug)]
pub struct AgentApp {
    pub rest: String,
    /// Base URL of the listener of the triggers on port 0.
    pub trigger: String,
    pub http: reqwest::Client,
    pub store: Store,
    pub team: TeamId,
    /// A `write` key of an owner of the team (it may read the run history).
    pub key: String,
    pub db: TestDb,
    handles: Vec<actix_web::dev::ServerHandle>,
    worker: Option<tokio::task::AbortHandle>,
    /// The job runner's parts, with the agent's events trigger when it has one.
    pub jobs: app::JobParts,
}

impl AgentApp {
    /// Starts the agent defined by `yaml`, its secrets looked up in `env`; the database
    /// gets a team (unless it has one), an owner and a key.
    pub async fn start(yaml: &str, env: &[(&str, &str)], db: TestDb) -> anyhow::Result<Self> {
        Self::start_with(serve_config(), triggers::RetryPolicy::default(), yaml, env, db).await
    }

    /// [`AgentApp::start`] on a database as `billable serve` leaves it at its first start:
    /// team "Default" and its owner `owner@billable.localhost`, whom examples act as.
    pub async fn start_first_run(yaml: &str, env: &[(&str, &str)], db: TestDb) -> anyhow::Result<Self> {
        accounts::bootstrap(db.open().await.accounts().as_ref(), SystemClock.now()).await?;
        Self::start(yaml, env, db).await
    }

    pub async fn start_with(
        config: ServeConfig,
        retry: triggers::RetryPolicy,
        yaml: &str,
        env: &[(&str, &str)],
        db: TestDb,
    ) -> anyhow::Result<Self> {
        let definition = app::agent_definition::AgentDefinition::parse("agent.yaml", yaml)?;
        let lookup = |name: &str| env.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned());
        let setup = app::agent_setup::AgentSetup::resolve("agent.yaml".into(), definition, lookup)?;
        let store = db.open().await;
        let team = match store.accounts().list_teams().await?.first() {
            Some(team) => team.id,
            None => create_team(&store, "Acme").await,
        };
        let owner = create_user(&store, team, Role::Owner).await;
        let (_, key) = create_key(&store, team, owner, Scope::Write, None).await;
        // The user a definition's `tools.billable.user` names in the tests (kept across a
        // restart on the same database).
        let email = Email::parse(AGENT_USER).map_err(|e| anyhow::anyhow!("{e}"))?;
        let agent_user = accounts::new_user(
            team,
            email,
            UserName::parse("Agent").unwrap(),
            Role::Admin,
            SystemClock.now(),
        );
        match store.accounts().create_user(&agent_user).await {
            Ok(()) | Err(accounts::CreateUserError::EmailTaken) => {}
            Err(error) => return Err(anyhow::anyhow!("{error:?}")),
        }
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let application = app::Application::build(&config, &store, clock.clone())?;
        let agent_team = setup.team(store.accounts().as_ref()).await?;
        let agent = setup.assemble(
            agent_team,
            &store.agent(),
            store.turns(config.agent_turns, config.agent_lease)?,
            &clock,
            setup.tools(agent_team, store.accounts().as_ref(), application.api_state()).await?,
            retry,
            config.agent_lease,
        )?;
        let subscription = setup.subscription(agent_team, store.accounts().as_ref()).await?;
        store.notify().subscribe_agent(agent_team, subscription.as_ref()).await?;
        let application = application.with_agent(&config, &agent)?;
        let jobs = application.jobs();
        let rest = format!("http://127.0.0.1:{}", application.port());
        let trigger = format!("http://127.0.0.1:{}", application.trigger_port(0).unwrap_or_default());
        let (handles, worker) = (application.handles(), application.worker());
        tokio::spawn(application.run_until_stopped());
        let http = reqwest::Client::new();
        Ok(Self { rest, trigger, http, store, team, key, db, handles, worker, jobs })
    }

    /// Runs, once, every job due now and what that makes due (the agent's runs of events
    /// among them), as `billable jobs run` does.
    pub async fn run_jobs(&self) -> outbound::PassReport {
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        self.jobs.runner(clock).run_due().await.expect("the jobs run")
    }

    /// POSTs `body` to the trigger at `path` with the bearer `token`, if any.
    pub fn call(&self, path: &str, token: Option<&str>, body: &serde_json::Value) -> reqwest::RequestBuilder {
        let request = self.http.post(format!("{}{path}", self.trigger)).json(body);
        match token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// `GET` on the REST API with the owner's key.
    pub async fn get_json(&self, path: &str) -> (u16, serde_json::Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.rest))
            .header("X-API-Key", &self.key)
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.json().await.unwrap_or_default())
    }

    /// Stops the servers and the delivery worker, as a restart would, and gives the
    /// database back.
    pub async fn stop(self) -> TestDb {
        if let Some(worker) = &self.worker {
            worker.abort();
        }
        for handle in &self.handles {
            handle.stop(true).await;
        }
        self.db
    }
}
