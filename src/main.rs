//! The `recapd` binary: parse the configuration (exit 64 when invalid, before
//! anything is bound or written), then serve until SIGTERM or SIGINT and shut
//! down within the grace period, or run a tool subcommand.

use std::process::ExitCode;

use recapd::app::App;
use recapd::config::{Cli, Command, Config, EXIT_INVALID_CONFIG, LogFormat, StartupFiles};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// What this run of the binary does.
enum Task {
    /// A tool subcommand, a client of a running recapd.
    Tool(Command),
    /// Serve, with the start-up files read.
    Serve(Box<StartupFiles>),
}

fn main() -> ExitCode {
    // Before anything else: a build for x86-64-v2 on an older processor
    // would otherwise die of an illegal instruction, somewhere.
    let missing = recapd::app::processor::missing_features();
    if !missing.is_empty() {
        eprintln!("recapd: {}", recapd::app::processor::refusal(&missing));
        return ExitCode::FAILURE;
    }
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
            // The tracer's export task and gRPC channel start on the runtime.
            let setup = match config.traces.resolve() {
                Ok(setup) => setup,
                Err(message) => return invalid(&message),
            };
            let installed = setup.as_ref().map(|setup| {
                let _runtime = runtime.enter();
                recapd::telemetry::traces::install(setup)
            });
            let (trace_layer, traces) = match installed.transpose() {
                Ok(Some((layer, traces))) => (Some(layer), Some(traces)),
                Ok(None) => (None, None),
                Err(message) => return invalid(&message),
            };
            let log_layer = match config.log_format {
                LogFormat::Text => tracing_subscriber::fmt::layer()
                    .fmt_fields(recapd::telemetry::text_log::EscapedFields)
                    .boxed(),
                LogFormat::Json => tracing_subscriber::fmt::layer().json().boxed(),
            };
            // The spans meant for traces never reach the log: it reads the
            // same with traces on or off.
            let log_filter = filter.add_directive(
                format!("{}=off", recapd::telemetry::traces::TARGET)
                    .parse()
                    .expect("a constant target and level make a valid directive"),
            );
            let trace_filter = tracing_subscriber::filter::Targets::new()
                .with_target(recapd::telemetry::traces::TARGET, tracing::Level::TRACE);
            let registry = tracing_subscriber::registry().with(log_layer.with_filter(log_filter));
            // Without traces no layer wants their target: a span is then a
            // check of its callsite's cached interest, never made.
            match trace_layer {
                Some(layer) => registry.with(layer.with_filter(trace_filter)).init(),
                None => registry.init(),
            }
            for warning in setup.iter().flat_map(|setup| &setup.warnings) {
                tracing::warn!("{warning}");
            }
            runtime.block_on(serve(config, *files, traces))
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

async fn serve(
    config: Config,
    files: StartupFiles,
    traces: Option<recapd::telemetry::traces::Traces>,
) -> ExitCode {
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
    let started = std::time::Instant::now();
    let stopped = tokio::time::timeout(grace, app.shutdown()).await;
    if let Some(traces) = traces {
        // The spans of the shutdown itself go too, in what is left of the
        // grace period (at least a second).
        let left = grace
            .saturating_sub(started.elapsed())
            .max(std::time::Duration::from_secs(1));
        traces.shutdown(left).await;
    }
    match stopped {
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
