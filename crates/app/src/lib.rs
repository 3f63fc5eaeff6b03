//! Wiring of the `billable` binary: opens the store the configuration names, runs
//! migrations and the first-run bootstrap, and serves the API. No rules live here.

pub mod cli;
pub mod config;

use std::net::TcpListener;
use std::sync::Arc;

use accounts::AccountStore;
use actix_web::dev::Server;
use actix_web::web;
use anyhow::Context;
use http_api::{ApiState, Stores};
use kernel::{Clock, SystemClock};
use store_memory::MemoryStore;
use store_sql::{Backend, SqlStore};

use crate::config::{DatabaseConfig, ServeConfig};

/// The store behind every port.
#[derive(Debug, Clone)]
pub enum Store {
    Sql(Arc<SqlStore>),
    Memory(Arc<MemoryStore>),
}

impl Store {
    /// Opens the configured store and brings its schema up to date.
    pub async fn open(config: &DatabaseConfig) -> anyhow::Result<Self> {
        if config.database_url == "memory:" {
            return Ok(Self::Memory(Arc::new(MemoryStore::new())));
        }
        let backend = Backend::from_url(&config.database_url)?;
        let settings = config.pool_settings(matches!(backend, Backend::Sqlite(_)));
        let store = SqlStore::connect(backend, settings)?;
        store.migrate().await.context("migrating the database")?;
        Ok(Self::Sql(Arc::new(store)))
    }

    pub fn stores(&self) -> Stores {
        match self {
            Self::Sql(store) => Stores {
                accounts: store.clone(),
                billing: store.clone(),
                track: store.clone(),
                health: store.clone(),
            },
            Self::Memory(store) => Stores {
                accounts: store.clone(),
                billing: store.clone(),
                track: store.clone(),
                health: store.clone(),
            },
        }
    }

    pub fn accounts(&self) -> Arc<dyn AccountStore> {
        self.stores().accounts
    }

    pub fn billing(&self) -> Arc<dyn billing::BillingStore> {
        self.stores().billing
    }
}

/// The API server, bound and ready to run.
pub struct Application {
    port: u16,
    server: Server,
}

impl std::fmt::Debug for Application {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Application").field("port", &self.port).finish_non_exhaustive()
    }
}

impl Application {
    /// Binds `config.listen` (port 0 picks a free one) and builds the server over `store`.
    pub fn build(config: &ServeConfig, store: &Store, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let listener =
            TcpListener::bind(config.listen).with_context(|| format!("binding {}", config.listen))?;
        let port = listener.local_addr()?.port();
        let renderer = config.renderer()?;
        let state = web::Data::new(ApiState::new(store.stores(), renderer, clock, config.http_settings()));
        spawn_limiter_sweeps(state.clone());
        let workers =
            config.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
        let server = http_api::serve(listener, state, workers)?;
        Ok(Self { port, server })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until SIGTERM (draining requests in flight) or SIGINT (at once).
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        self.server.await
    }
}

/// Keeps the rate limiters' memory bounded by forgetting idle callers each minute.
fn spawn_limiter_sweeps(state: web::Data<ApiState>) {
    tokio::spawn(async move {
        let mut every_minute = tokio::time::interval(std::time::Duration::from_mins(1));
        loop {
            every_minute.tick().await;
            state.limits.sweep();
        }
    });
}

/// `billable serve`: open, migrate, bootstrap on first run, serve.
pub async fn serve(database: &DatabaseConfig, config: &ServeConfig) -> anyhow::Result<()> {
    let store = Store::open(database).await?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    if let Some(secret) = accounts::bootstrap(store.accounts().as_ref(), clock.now()).await? {
        // The first team gets its default sender address now, like any team made by the CLI.
        if let Some(credential) = store.accounts().find_credential(&secret.hash()).await? {
            let team = credential.key.team_id;
            billing::service::default_sender(
                store.billing().as_ref(),
                store.accounts().as_ref(),
                team,
                clock.now(),
            )
            .await?;
        }
        eprintln!(
            "\n==================================================================\n\
             First start: created team \"Default\", its owner, and an API key\n\
             with scope `write`. It is shown ONCE; store it now:\n\n    \
             X-API-Key: {}\n\
             ==================================================================\n",
            secret.expose()
        );
    }
    let application = Application::build(config, &store, clock)?;
    tracing::info!(address = %config.listen, port = application.port(), "serving the REST API");
    application.run_until_stopped().await?;
    tracing::info!("stopped");
    Ok(())
}
