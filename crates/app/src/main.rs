//! The `billable` binary.

use clap::Parser;
use tracing_subscriber::EnvFilter;

use app::cli::{Cli, Command, JobsCommand};
use app::config::{LogConfig, LogFormat};
use app::redact::Redactions;

fn init_tracing(config: &LogConfig, redactions: Redactions) {
    let filter = EnvFilter::try_new(&config.log).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(redactions);
    match config.log_format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(true).init(),
        LogFormat::Text => builder.init(),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mut cli = Cli::parse();
    if let Err(error) = app::cli::secrets_from_files(&mut cli) {
        eprintln!("error: {error:#}");
        return std::process::ExitCode::FAILURE;
    }
    // The secrets configuration holds, masked in every log line and in the last error.
    let redactions = Redactions::default();
    redactions.add_url(&cli.database.database_url);
    let served = match &cli.command {
        Command::Serve(config) => Some(&**config),
        Command::Jobs(JobsCommand::Run { serve, .. }) => Some(&**serve),
        _ => None,
    };
    if let Some(config) = served {
        if let Some(url) = &config.redis_url {
            redactions.add_url(url);
        }
        if let Some(url) = &config.sending.smtp_url {
            redactions.add_url(url);
        }
    }
    init_tracing(&cli.log, redactions.clone());
    let result = match cli.command {
        Command::Serve(config) => app::serve(&cli.database, &config, &redactions).await,
        Command::Jobs(JobsCommand::Run { at, dry_run, serve }) => {
            app::run_jobs(&cli.database, &serve, at, dry_run, &redactions).await
        }
        Command::Renderer { listen } => renderer::serve(listen).await,
        Command::Healthcheck { listen, timeout } => app::healthcheck(listen, timeout).await,
        Command::Backup { to, tools } => app::backup(&cli.database, &to, tools.into()).await,
        Command::Restore { from, tools } => app::restore(&cli.database, &from, tools.into()).await,
        command => app::cli::run_admin(&cli.database, command).await,
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // The chain on one line, without a backtrace: these are the operator's errors.
            eprintln!("error: {}", redactions.scrub(&format!("{error:#}")));
            std::process::ExitCode::FAILURE
        }
    }
}
