//! The `recapd` binary: parse the configuration (exit 64 when invalid, before
//! anything is bound or written), then serve until SIGTERM or SIGINT and shut
//! down within the grace period, or run a tool subcommand.

use std::process::ExitCode;
use std::time::Duration;

use recapd::app::App;
use recapd::config::{Cli, Command, Config, EXIT_INVALID_CONFIG, LogFormat};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = match Cli::from_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(error) if !error.use_stderr() => {
            // --help and --version.
            let _ = error.print();
            return ExitCode::SUCCESS;
        }
        Err(error) => return invalid(&error.to_string()),
    };
    let Cli { command, config } = cli;
    let filter = match EnvFilter::try_new(&config.log_level) {
        Ok(filter) => filter,
        Err(error) => {
            return invalid(&format!(
                "invalid value '{}' for '--log-level': {error}",
                config.log_level
            ));
        }
    };
    if command.is_none() {
        // Files the server needs, checked before anything is bound.
        let checked = config
            .check_store()
            .and(config.auth_tokens().map(drop))
            .and(config.tls_identity().map(drop));
        if let Err(message) = checked {
            return invalid(&message);
        }
    }
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all().thread_name("recapd-worker");
    if let Some(workers) = config.workers {
        runtime.worker_threads(usize::try_from(workers).unwrap_or(1));
    }
    let runtime = match runtime.build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("recapd: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match command {
        Some(Command::Health { addr }) => {
            let addr = addr.unwrap_or_else(|| config.local_dial_addr().to_string());
            runtime.block_on(recapd::health::probe(&addr))
        }
        Some(Command::Import { addr, token, paths }) => {
            let addr = addr.unwrap_or_else(|| config.local_dial_addr().to_string());
            runtime.block_on(recapd::chat_files::import(&addr, token.as_deref(), &paths))
        }
        Some(Command::Export { addr, token, chat }) => {
            let addr = addr.unwrap_or_else(|| config.local_dial_addr().to_string());
            runtime.block_on(recapd::chat_files::export(&addr, token.as_deref(), &chat))
        }
        None => {
            match config.log_format {
                LogFormat::Text => tracing_subscriber::fmt().with_env_filter(filter).init(),
                LogFormat::Json => tracing_subscriber::fmt()
                    .json()
                    .with_env_filter(filter)
                    .init(),
            }
            runtime.block_on(serve(config))
        }
    }
}

/// Reports invalid configuration in one line and returns exit code 64.
fn invalid(message: &str) -> ExitCode {
    let first = message
        .lines()
        .next()
        .unwrap_or(message)
        .trim_start_matches("error: ");
    eprintln!("recapd: invalid configuration: {first}");
    ExitCode::from(EXIT_INVALID_CONFIG as u8)
}

async fn serve(config: Config) -> ExitCode {
    let grace = Duration::from_secs(config.shutdown_grace);
    let app = match App::build(config).await {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(%error, "recapd could not start");
            return ExitCode::FAILURE;
        }
    };
    wait_for_signal().await;
    tracing::info!(grace_seconds = grace.as_secs(), "shutting down");
    match tokio::time::timeout(grace, app.shutdown()).await {
        Ok(()) => {
            tracing::info!("stopped cleanly");
            ExitCode::SUCCESS
        }
        Err(_) => {
            tracing::error!("shutdown took longer than the grace period; exiting anyway");
            ExitCode::FAILURE
        }
    }
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(error) => {
            tracing::warn!(%error, "cannot watch SIGTERM; only SIGINT stops recapd");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
