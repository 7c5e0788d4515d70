//! The `recapd` binary: parse the configuration, serve until SIGTERM or
//! SIGINT, shut down cleanly.

use recapd::app::App;
use recapd::config::{Config, EXIT_INVALID_CONFIG};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() {
    let config = match Config::from_args(std::env::args_os()) {
        Ok(config) => config,
        Err(error) if !error.use_stderr() => {
            // --help and --version.
            let _ = error.print();
            return;
        }
        Err(error) => {
            let text = error.to_string();
            eprintln!("recapd: invalid configuration: {}", text.lines().next().unwrap_or(&text));
            std::process::exit(EXIT_INVALID_CONFIG);
        }
    };
    let filter = match EnvFilter::try_new(&config.log_level) {
        Ok(filter) => filter,
        Err(error) => {
            eprintln!("recapd: invalid configuration: --log-level {:?}: {error}", config.log_level);
            std::process::exit(EXIT_INVALID_CONFIG);
        }
    };
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let app = match App::build(config).await {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(%error, "recapd could not start");
            std::process::exit(1);
        }
    };
    wait_for_signal().await;
    tracing::info!("shutting down");
    app.shutdown().await;
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
