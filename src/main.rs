//! The `recapd` binary: parse the configuration (exit 64 when invalid, before
//! anything is bound or written), then serve until SIGTERM or SIGINT and shut
//! down within the grace period, or run a tool subcommand.

use std::process::ExitCode;

use recapd::app::App;
use recapd::config::{Cli, Command, Config, EXIT_INVALID_CONFIG, LogFormat, StartupFiles};
use tracing_subscriber::EnvFilter;

/// What this run of the binary does.
enum Task {
    /// A tool subcommand, a client of a running recapd.
    Tool(Command),
    /// Serve, with the start-up files read.
    Serve(Box<StartupFiles>),
}

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
    // Files the server needs, read and checked once, before anything is
    // bound; the tools need none of them.
    let task = match command {
        Some(command) => Task::Tool(command),
        None => match config.read_startup_files() {
            Ok(files) => Task::Serve(Box::new(files)),
            Err(message) => return invalid(&message),
        },
    };
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
    match task {
        Task::Tool(command) => {
            if matches!(command, Command::Mcp { .. }) {
                // stdout may be the MCP channel: logs go to stderr.
                tracing_subscriber::fmt()
                    .with_writer(std::io::stderr)
                    .with_env_filter(filter)
                    .init();
            }
            runtime.block_on(recapd::cli::run(command, &config))
        }
        Task::Serve(files) => {
            match config.log_format {
                LogFormat::Text => tracing_subscriber::fmt()
                    .fmt_fields(recapd::telemetry::text_log::EscapedFields)
                    .with_env_filter(filter)
                    .init(),
                LogFormat::Json => tracing_subscriber::fmt()
                    .json()
                    .with_env_filter(filter)
                    .init(),
            }
            runtime.block_on(serve(config, *files))
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

async fn serve(config: Config, files: StartupFiles) -> ExitCode {
    let grace = config.shutdown_grace;
    let app = match App::build_with(config, files).await {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(%error, "recapd could not start");
            return ExitCode::FAILURE;
        }
    };
    recapd::app::shutdown_signal().await;
    tracing::info!(grace_seconds = grace.as_secs_f64(), "shutting down");
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
