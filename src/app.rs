//! Wiring: [`App::build`] opens the store (which starts its group commit),
//! builds the recap writer and the engine, refreshes chats a crash left
//! owing a refresh, binds the listeners (gRPC, and the inspector's when
//! asked), assembles what they serve (turning the configuration's plain
//! data into the token table and the TLS identity; `listeners`) and
//! serves, each step a function of its own;
//! [`App::shutdown`] stops it all in order.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tonic::server::NamedService;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use crate::config::{Config, Durability, EmbeddingSetup, LlmSetup, MetricsListen, StartupFiles};
use crate::domain::settings::Settings;
use crate::domain::tokens;
use crate::engine::{Embedder, Engine, EngineError, EngineOptions, RecapWriter};
use crate::grpc::observe;
use crate::grpc::pb::event_service_server::EventServiceServer;
use crate::grpc::pb::injection_service_server::InjectionServiceServer;
use crate::grpc::pb::lorebook_service_server::LorebookServiceServer;
use crate::grpc::pb::memory_service_server::MemoryServiceServer;
use crate::grpc::pb::prompt_service_server::PromptServiceServer;
use crate::grpc::pb::recall_service_server::RecallServiceServer;
use crate::grpc::pb::recap_service_server::RecapServiceServer;
use crate::grpc::pb::settings_service_server::SettingsServiceServer;
use crate::grpc::{
    EventApi, InjectionApi, LorebookApi, MemoryApi, PromptApi, RecallApi, RecapApi, SettingsApi,
};
use crate::model_tokenizers::{EndpointCounts, Tokenizers};
use crate::store::postgres::PgOptions;
use crate::store::{ChatStore, PgStore, SqliteStore, StoreError, Stores};
use crate::telemetry;
use listeners::{Serving, accepting, bind};

/// Why recapd could not start.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The data directory could not be created.
    #[error("cannot create data directory {path}: {source}")]
    DataDir {
        /// The directory.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The store could not be opened or read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The engine could not start or finish the start-up refreshes.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The metrics endpoint could not be served.
    #[error("metrics: {0}")]
    Metrics(String),
    /// A thread or the reflection service could not be set up.
    #[error("start-up failed: {0}")]
    Startup(String),
}

/// A running recapd.
pub struct App {
    local_addr: SocketAddr,
    engine: Engine,
    health: HealthReporter,
    shutdown: CancellationToken,
    server: JoinHandle<Result<(), tonic::transport::Error>>,
    /// The inspector's address and server (`--inspector-listen`).
    inspector: Option<(SocketAddr, JoinHandle<Result<(), tonic::transport::Error>>)>,
    /// Follows other replicas' commits (shared store only).
    follower: Option<JoinHandle<()>>,
    /// The job runner and what stops it.
    jobs: (JoinHandle<()>, CancellationToken),
    /// The deletion of quiet chats (`--chat-retention`), stopped with the
    /// job runner.
    retention: Option<JoinHandle<()>>,
    /// The LLM endpoint's token counts (LLM_ENDPOINT), stopped with the
    /// job runner.
    token_counts: JoinHandle<()>,
    /// The tokenizers the stored settings name, loaded at start; stopped
    /// with the job runner.
    preload: JoinHandle<()>,
    /// Closed last, once every acknowledged write is durable.
    store: Arc<dyn ChatStore>,
}

/// Opens the store `config` names: PostgreSQL with --store (`postgres`,
/// already checked), else the embedded store in --data-dir (created when
/// missing).
async fn open_store(config: &Config, postgres: Option<PgOptions>) -> Result<Stores, AppError> {
    if let Some(options) = postgres {
        let store = Arc::new(PgStore::open(&options).await?);
        return Ok(Stores {
            chats: store.clone(),
            replicas: Some(store),
        });
    }
    std::fs::create_dir_all(&config.data_dir).map_err(|source| AppError::DataDir {
        path: config.data_dir.display().to_string(),
        source,
    })?;
    let fsync_every_commit = config.durability == Durability::Full;
    let store = SqliteStore::open(&config.data_dir, fsync_every_commit).await?;
    Ok(Stores::single(Arc::new(store)))
}

/// The `recap.v1` services' names in `grpc.health.v1`, taken from their
/// generated server types (so the names cannot drift from the proto).
const RECAP_SERVICES: [&str; 8] = [
    <EventServiceServer<EventApi> as NamedService>::NAME,
    <MemoryServiceServer<MemoryApi> as NamedService>::NAME,
    <SettingsServiceServer<SettingsApi> as NamedService>::NAME,
    <InjectionServiceServer<InjectionApi> as NamedService>::NAME,
    <PromptServiceServer<PromptApi> as NamedService>::NAME,
    <RecapServiceServer<RecapApi> as NamedService>::NAME,
    <LorebookServiceServer<LorebookApi> as NamedService>::NAME,
    <RecallServiceServer<RecallApi> as NamedService>::NAME,
];

/// Marks each `recap.v1` service SERVING in `grpc.health.v1`.
async fn set_services_serving(health: &HealthReporter) {
    for name in RECAP_SERVICES {
        health
            .set_service_status(name, ServingStatus::Serving)
            .await;
    }
}

/// Marks the server as a whole (the empty service name) and each
/// `recap.v1` service NOT_SERVING, as a shutdown begins.
async fn set_all_not_serving(health: &HealthReporter) {
    for name in std::iter::once("").chain(RECAP_SERVICES) {
        health
            .set_service_status(name, ServingStatus::NotServing)
            .await;
    }
}

impl App {
    /// Starts recapd as `config` says, reading its start-up files first;
    /// when this returns, it is serving.
    pub async fn build(config: Config) -> Result<App, AppError> {
        let files = config.read_startup_files().map_err(AppError::Startup)?;
        App::build_with(config, files).await
    }

    /// Starts recapd as `config` says, with the start-up files `main`
    /// already read and checked; when this returns, it is serving. In
    /// order: the stores, the recap writer, the engine (with its metrics),
    /// the follower of other replicas, the refreshes a stop left owing, the
    /// listener and the services, then the background tasks and the server.
    pub async fn build_with(config: Config, files: StartupFiles) -> Result<App, AppError> {
        let StartupFiles {
            postgres,
            tokens,
            tls,
            llm,
            embedding,
        } = files;
        let stores = open_store(&config, postgres).await?;
        let store = stores.chats.clone();
        let changes = stores.replicas.as_ref().and_then(|r| r.changes());
        let writer = recap_writer(llm)?;
        let embedder = embedder(embedding)?;
        let engine = start_engine(&config, stores, writer, embedder).await?;
        serve_metrics(&config, &engine)?;
        let follower = changes.map(|changes| {
            tokio::spawn(
                engine
                    .chats()
                    .clone()
                    .follow(changes, config.resync_interval),
            )
        });
        refresh_owed(&engine).await?;
        let (listener, local_addr) = bind(config.listen).await?;
        let inspector_listener = match config.web.inspector_listen {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let shutdown = CancellationToken::new();
        let (health, health_service) = tonic_health::server::health_reporter();
        set_services_serving(&health).await;
        let serving = Serving::new(&config, &engine, health_service, tokens, tls, &shutdown)?;
        let grpc = serving.grpc(&config)?;
        let inspector = inspector_listener
            .map(|(listener, addr)| {
                let router = serving.inspector(addr)?;
                Ok::<_, AppError>((addr, router, listener))
            })
            .transpose()?;
        let background = start_background(&config, &engine);
        let server =
            tokio::spawn(grpc.serve_with_incoming_shutdown(
                accepting(listener),
                shutdown.clone().cancelled_owned(),
            ));
        log_serving(&config, local_addr);
        log_browser_hosts(&config);
        let inspector = inspector.map(|(addr, router, listener)| {
            log_inspector(&config, addr);
            let task = tokio::spawn(router.serve_with_incoming_shutdown(
                accepting(listener),
                shutdown.clone().cancelled_owned(),
            ));
            (addr, task)
        });
        Ok(App {
            local_addr,
            engine,
            health,
            shutdown,
            server,
            inspector,
            follower,
            jobs: (background.jobs, background.stop_jobs),
            retention: background.retention,
            token_counts: background.token_counts,
            preload: background.preload,
            store,
        })
    }

    /// The address the server listens on (the real port when built with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The inspector's address (the real port when built with port 0);
    /// `None` without `--inspector-listen`.
    pub fn inspector_addr(&self) -> Option<SocketAddr> {
        self.inspector.as_ref().map(|(addr, _)| *addr)
    }

    /// Stops serving: health goes NOT_SERVING, open streams end, in-flight
    /// calls finish, the tasks they left running (recall's background
    /// searches) end, pending debounced refreshes run, and the store's
    /// group commit drains. Every acknowledged write is on disk when this returns.
    pub async fn shutdown(self) {
        let App {
            local_addr: _,
            engine,
            health,
            shutdown,
            server,
            inspector,
            follower,
            jobs: (jobs, stop_jobs),
            retention,
            token_counts,
            preload,
            store,
        } = self;
        set_all_not_serving(&health).await;
        shutdown.cancel();
        let servers = std::iter::once(server).chain(inspector.map(|(_, task)| task));
        for server in servers {
            match server.await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(%error, "server stopped with an error"),
                Err(error) => tracing::error!(%error, "server task failed"),
            }
        }
        if let Some(follower) = follower {
            follower.abort();
            let _ = follower.await;
        }
        // Attempts under way stop; their jobs run again at the next start.
        stop_jobs.cancel();
        if let Err(error) = jobs.await {
            tracing::error!(%error, "job runner failed");
        }
        // A deletion under way finishes (it is one commit); no other starts.
        if let Some(retention) = retention
            && let Err(error) = retention.await
        {
            tracing::error!(%error, "chat retention failed");
        }
        if let Err(error) = token_counts.await {
            tracing::error!(%error, "token counting failed");
        }
        if let Err(error) = preload.await {
            tracing::error!(%error, "loading the tokenizers at start failed");
        }
        // Recall searches under way end (their refreshes commit).
        engine.chats().finish_background().await;
        engine.chats().flush_debounced().await;
        drop(engine);
        if tokio::time::timeout(Duration::from_secs(5), store.close())
            .await
            .is_err()
        {
            tracing::warn!("the store's commits still busy after 5 s; exiting without them");
        }
    }
}

/// The recap writer (the LLM client and its setup) of `--llm-url`;
/// `None` without it: the engine then writes no recaps.
fn recap_writer(llm: Option<LlmSetup>) -> Result<Option<RecapWriter>, AppError> {
    llm.map(|setup| {
        crate::llm::LlmClient::new(&setup)
            .map(|client| RecapWriter { client, setup })
            .map_err(|e| AppError::Startup(format!("--llm-url: {e}")))
    })
    .transpose()
}

/// What indexes passages for recall (the embeddings client and its setup)
/// of `--embedding-url`; `None` without it: recall searches by keyword
/// alone.
fn embedder(embedding: Option<EmbeddingSetup>) -> Result<Option<Embedder>, AppError> {
    embedding
        .map(|setup| {
            crate::llm::EmbeddingClient::new(&setup)
                .map(|client| Embedder { client, setup })
                .map_err(|e| AppError::Startup(format!("--embedding-url: {e}")))
        })
        .transpose()
}

/// Builds the engine on `stores` with `config`'s limits and job queue,
/// the recap `writer` and the recall `embedder`, then loads the default
/// tokenizer's vocabulary (its first use loads it) so the first request
/// does not wait for it.
async fn start_engine(
    config: &Config,
    stores: Stores,
    writer: Option<RecapWriter>,
    embedder: Option<Embedder>,
) -> Result<Engine, AppError> {
    if let Some(e) = &embedder {
        tracing::info!(url = %e.setup.base_url, model = %e.setup.model, "recall indexes passages with the embeddings endpoint");
    }
    let tokenizers = tokenizers(config, writer.as_ref());
    let options = EngineOptions {
        limits: config.limits(),
        lorebooks: config.lorebooks.limits(),
        writer,
        embedder,
        queue: config.llm.queue(),
        tokenizers,
        ..EngineOptions::default()
    };
    let engine = Engine::new(stores, options).await?;
    tokio::task::spawn_blocking(|| tokens::warm_up(Settings::default().inclusion.tokenizer))
        .await
        .map_err(|e| AppError::Startup(e.to_string()))?;
    Ok(engine)
}

/// The model tokenizers of `config`, and with a recap `writer` the LLM
/// endpoint's (the LLM_ENDPOINT tokenizer asks its `/tokenize`).
fn tokenizers(config: &Config, writer: Option<&RecapWriter>) -> Tokenizers {
    let setup = config.tokenizers();
    let endpoint = writer.map(|writer| {
        EndpointCounts::new(
            writer.client.clone(),
            &writer.setup.model,
            setup.max_cached_counts,
        )
    });
    Tokenizers::with_endpoint(setup, endpoint)
}

/// Serves Prometheus metrics at `--metrics-listen` (nothing when `off`),
/// with every series a dashboard reads present from the first scrape.
fn serve_metrics(config: &Config, engine: &Engine) -> Result<(), AppError> {
    if let MetricsListen::Addr(addr) = config.metrics_listen {
        let bound = telemetry::install(addr).map_err(AppError::Metrics)?;
        observe::register_rpc_series();
        engine.publish_start_up_metrics();
        tracing::info!(addr = %bound, "metrics at http://{bound}/metrics");
    }
    Ok(())
}

/// Runs the debounced refreshes that a stop (a crash, a shutdown past its
/// grace) left owing, before the first request.
async fn refresh_owed(engine: &Engine) -> Result<(), AppError> {
    let owed = engine.chats().refresh_owed().await?;
    if owed > 0 {
        tracing::info!(
            chats = owed,
            "refreshed chats whose debounced refresh a stop interrupted"
        );
    }
    Ok(())
}

/// The engine's background tasks: the job runner, the deletion of quiet
/// chats with `--chat-retention`, and the LLM endpoint's token counts; all
/// stop when `stop_jobs` is cancelled.
struct Background {
    jobs: JoinHandle<()>,
    retention: Option<JoinHandle<()>>,
    token_counts: JoinHandle<()>,
    preload: JoinHandle<()>,
    stop_jobs: CancellationToken,
}

/// Starts the job runner, the LLM endpoint's token counts, the loading of
/// the tokenizers the settings name and, with `--chat-retention`, the
/// deletion of chats with no change for that long.
fn start_background(config: &Config, engine: &Engine) -> Background {
    let stop_jobs = CancellationToken::new();
    let jobs = tokio::spawn(engine.jobs().clone().run_jobs(stop_jobs.clone()));
    let retention = config.chat_retention.map(|retention| {
        tracing::info!(?retention, "chats with no change for that long are deleted");
        tokio::spawn(
            engine
                .chats()
                .clone()
                .run_retention(retention, stop_jobs.clone()),
        )
    });
    let token_counts = tokio::spawn(engine.chats().clone().run_token_counts(stop_jobs.clone()));
    let preload = tokio::spawn(engine.chats().clone().preload_tokenizers(stop_jobs.clone()));
    Background {
        jobs,
        retention,
        token_counts,
        preload,
        stop_jobs,
    }
}

/// Logs the inspector's address, with a warning when it can be reached
/// from other machines without TLS or without tokens.
fn log_inspector(config: &Config, addr: SocketAddr) {
    let tls = config.tls_cert.is_some();
    tracing::info!(addr = %addr, "inspector at {}://{addr}/", if tls { "https" } else { "http" });
    if addr.ip().is_loopback() {
        return;
    }
    if config.auth_tokens_file.is_none() {
        tracing::warn!(addr = %addr, "the inspector listens beyond this machine without --auth-tokens-file: whoever reaches it can read and change every chat");
    } else if !tls {
        tracing::warn!(addr = %addr, "the inspector listens beyond this machine without TLS: tokens typed into it cross the network in clear");
    }
}

/// Logs which hosts browsers may name on the gRPC listener (the DNS
/// rebinding guard of `grpc::web`), with a warning when web pages may call
/// it without tokens.
fn log_browser_hosts(config: &Config) {
    let hosts: Vec<String> = config
        .web
        .allowed_hosts
        .iter()
        .map(ToString::to_string)
        .collect();
    tracing::info!(
        allowed_hosts = ?hosts,
        "browsers are answered on the gRPC listener only at IP literals, localhost and --allowed-hosts; native gRPC at any host"
    );
    let origins = &config.web.grpc_web_allowed_origins;
    if !origins.is_empty() && config.auth_tokens_file.is_none() {
        let origins: Vec<&str> = origins.iter().map(|o| o.as_str()).collect();
        tracing::warn!(
            ?origins,
            "--grpc-web-allowed-origins without --auth-tokens-file: web pages of those origins can read and change every chat"
        );
    }
}

/// Logs that recapd serves at `local_addr`, and from which store.
fn log_serving(config: &Config, local_addr: SocketAddr) {
    match &config.store {
        Some(_) => {
            tracing::info!(addr = %local_addr, schema = %config.store_schema, "recapd serving, store in PostgreSQL")
        }
        None => {
            tracing::info!(addr = %local_addr, data_dir = %config.data_dir.display(), "recapd serving")
        }
    }
}

/// Waits for SIGTERM or SIGINT (only SIGINT when SIGTERM cannot be
/// watched): what stops the server and `recapd mcp --mcp-listen`.
pub async fn shutdown_signal() {
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

mod listeners;
pub mod processor;

#[cfg(test)]
mod tests;
