//! Configuration: every option is a flag with a `RECAPD_*` environment
//! fallback, documented in `recapd --help`. Parsing goes through
//! [`Cli::from_args`], a seam tests fill with their own argument list.
//! Every duration is read by one parser, [`parse_duration`]. What the
//! server reads besides its flags ([`StartupFiles`]) is plain data: the
//! transport's own types are built from it by [`crate::app`], so this
//! module names none of them.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::ValueEnum;

use crate::domain::Limits;
use duration::seconds;

mod cli;
mod duration;
mod embedding;
mod llm;
mod lorebooks;
mod tokens;
mod traces;
mod web;
pub use cli::{ChatsAction, Cli, ClientArgs, ClientTls, Command};
pub use duration::{BareUnit, parse_duration};
pub use embedding::{EmbeddingOptions, EmbeddingSetup};
pub use llm::{ApiKey, LlmOptions, LlmSetup, QueueOptions};
pub use lorebooks::LorebookOptions;
pub use tokens::TenantTokens;
pub use traces::{OtlpProtocol, TraceOptions, TraceSampler, TraceSetup, resource_attributes};
pub use web::{AllowedHost, AllowedOrigin, WebOptions};

/// Exit code for invalid configuration (EX_USAGE), reported before any port
/// is bound or file written.
pub const EXIT_INVALID_CONFIG: i32 = 64;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// How hard the embedded store works to keep a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Durability {
    /// fsync at every commit (SQLite `synchronous=FULL`): an acknowledged
    /// write survives power loss.
    Full,
    /// fsync at WAL checkpoints only (`synchronous=NORMAL`): an
    /// acknowledged write survives a crash of recapd, but the last commits
    /// may be lost on power loss.
    Normal,
}

/// A shared database for replicas (`--store`): a PostgreSQL URL. Its
/// `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct StoreUrl(pub String);

impl StoreUrl {
    /// Checks and parses the URL, reading the TLS files it names
    /// (`sslrootcert`, `sslcert`, `sslkey`; see
    /// [`crate::store::postgres::tls`]). Done after parsing the command
    /// line, not by clap, whose error would repeat the value, password
    /// included; no error here repeats it.
    pub fn parse(&self) -> Result<(tokio_postgres::Config, crate::store::postgres::PgTls), String> {
        let url = &self.0;
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err("--store: expected a postgres:// or postgresql:// URL (without --store recapd uses its embedded store in --data-dir)".into());
        }
        let (rest, params) =
            crate::store::postgres::tls::split_url(url).map_err(|e| format!("--store: {e}"))?;
        let mut config = tokio_postgres::Config::from_str(&rest)
            .map_err(|e| format!("--store: not a PostgreSQL URL: {e}"))?;
        let tls = crate::store::postgres::PgTls::build(&params, &mut config)
            .map_err(|e| format!("--store: {e}"))?;
        Ok((config, tls))
    }
}

impl fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parsed = crate::store::postgres::tls::split_url(&self.0)
            .ok()
            .and_then(|(rest, _)| tokio_postgres::Config::from_str(&rest).ok());
        match parsed {
            Some(config) if config.get_password().is_none() => {
                write!(f, "StoreUrl({:?})", self.0)
            }
            _ => f.write_str("StoreUrl(<with password or unreadable>)"),
        }
    }
}

fn parse_schema(s: &str) -> Result<String, String> {
    crate::store::postgres::check_schema(s).map(|()| s.to_owned())
}

/// Where Prometheus metrics are served, or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsListen {
    /// No metrics endpoint.
    Off,
    /// `http://ADDR/metrics`.
    Addr(SocketAddr),
}

impl FromStr for MetricsListen {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("off") {
            return Ok(MetricsListen::Off);
        }
        s.parse()
            .map(MetricsListen::Addr)
            .map_err(|e| format!("{e}: expected ADDR:PORT or `off`"))
    }
}

impl fmt::Display for MetricsListen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricsListen::Off => f.write_str("off"),
            MetricsListen::Addr(addr) => addr.fmt(f),
        }
    }
}

/// What the server reads at start-up besides its flags: the checked --store
/// URL, the tokens file and the TLS files, each read once by
/// [`Config::read_startup_files`] and then carried, parsed, to
/// [`crate::app::App::build_with`], which builds the transport's types
/// (the token table, the TLS identity) from them. It has no `Debug`: it
/// holds tokens, the TLS key and the store's password.
pub struct StartupFiles {
    /// The PostgreSQL store's options (--store); `None`: the embedded store.
    pub postgres: Option<crate::store::postgres::PgOptions>,
    /// The tenants' tokens (--auth-tokens-file); `None`: authentication off.
    pub tokens: Option<TenantTokens>,
    /// The certificate and key (--tls-cert, --tls-key); `None`: plaintext.
    pub tls: Option<TlsPem>,
    /// The LLM recapd writes recaps with (--llm-url and the API key);
    /// `None`: no recap writing.
    pub llm: Option<LlmSetup>,
    /// The embeddings API recall takes its vectors from (--embedding-url
    /// and the API key); `None`: recall searches by keyword alone.
    pub embedding: Option<EmbeddingSetup>,
}

/// The server's TLS certificate chain and private key as read from
/// --tls-cert and --tls-key, PEM text not yet parsed (the server's TLS
/// layer parses it). No `Debug`: it holds the key.
pub struct TlsPem {
    /// The PEM certificate chain.
    pub cert: Vec<u8>,
    /// The PEM private key of the chain's first certificate.
    pub key: Vec<u8>,
}

/// Server options.
#[derive(Debug, Clone, clap::Args)]
pub struct Config {
    /// Address the gRPC server listens on.
    #[arg(long, env = "RECAPD_LISTEN", default_value = "127.0.0.1:50051")]
    pub listen: SocketAddr,

    /// Directory of the embedded database; created when missing. Unused
    /// with --store.
    #[arg(long, env = "RECAPD_DATA_DIR", default_value = "./recapd-data")]
    pub data_dir: PathBuf,

    /// PostgreSQL URL (postgres://user:password@host:port/database) of a
    /// store shared by several replicas; without it, the embedded store in
    /// --data-dir.
    #[arg(long, env = "RECAPD_STORE", hide_env_values = true,
          value_parser = |s: &str| Ok::<_, String>(StoreUrl(s.to_owned())))]
    pub store: Option<StoreUrl>,

    /// Schema of recapd's tables in --store; created when missing. Replicas
    /// share chats exactly when they share --store and --store-schema.
    #[arg(long, env = "RECAPD_STORE_SCHEMA", default_value = "recapd", value_parser = parse_schema)]
    pub store_schema: String,

    /// Most PostgreSQL connections of the pool (the listener uses one more).
    #[arg(long, env = "RECAPD_STORE_POOL_SIZE", default_value_t = 16,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub store_pool_size: u64,

    /// How often, with --store, recapd checks that every chat held in
    /// memory is the stored one and adopts the refreshes a stopped replica
    /// owed: a duration from 1s to 1h such as 5s or 1m; a bare number is
    /// seconds. Notifications make these checks rarely needed.
    #[arg(long, env = "RECAPD_RESYNC_INTERVAL", value_name = "DURATION",
          default_value = "5s", value_parser = parse_resync_interval)]
    pub resync_interval: Duration,

    /// Log filter: a level (error, warn, info, debug, trace) or tracing directives.
    #[arg(long, env = "RECAPD_LOG", default_value = "info")]
    pub log_level: String,

    /// Log line format.
    #[arg(long, env = "RECAPD_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,

    /// Address of the Prometheus endpoint (path /metrics), or `off`.
    #[arg(long, env = "RECAPD_METRICS_LISTEN", default_value = "127.0.0.1:9464")]
    pub metrics_listen: MetricsListen,

    /// How long a shutdown may take before recapd exits anyway: a duration
    /// from 1s to 1h such as 10s or 2m; a bare number is seconds.
    #[arg(long, env = "RECAPD_SHUTDOWN_GRACE", value_name = "DURATION",
          default_value = "10s", value_parser = parse_shutdown_grace)]
    pub shutdown_grace: Duration,

    /// Async worker threads; default: one per core.
    #[arg(long, env = "RECAPD_WORKERS", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub workers: Option<u64>,

    /// Storage durability mode.
    #[arg(long, env = "RECAPD_DURABILITY", value_enum, default_value = "full")]
    pub durability: Durability,

    /// Largest accepted gRPC request message, in bytes.
    #[arg(long, env = "RECAPD_MAX_REQUEST_BYTES", default_value_t = 4 * 1024 * 1024,
          value_parser = clap::value_parser!(u64).range(1024..=(256 * 1024 * 1024)))]
    pub max_request_bytes: u64,

    /// Most messages one chat may hold; past it RESOURCE_EXHAUSTED.
    #[arg(long, env = "RECAPD_MAX_MESSAGES_PER_CHAT", default_value_t = Limits::default().max_messages_per_chat as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_messages_per_chat: u64,

    /// Most chats the server keeps; past it RESOURCE_EXHAUSTED for a new chat.
    #[arg(long, env = "RECAPD_MAX_CHATS", default_value_t = Limits::default().max_chats as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_chats: u64,

    /// Most open Subscribe streams in all; past it RESOURCE_EXHAUSTED.
    #[arg(long, env = "RECAPD_MAX_SUBSCRIBERS", default_value_t = Limits::default().max_subscribers as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_subscribers: u64,

    /// Most open Subscribe streams on one connection; past it RESOURCE_EXHAUSTED.
    #[arg(long, env = "RECAPD_MAX_SUBSCRIBERS_PER_CONNECTION", default_value_t = Limits::default().max_subscribers_per_connection as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_subscribers_per_connection: u64,

    /// Most concurrent HTTP/2 streams (calls) per connection (SETTINGS_MAX_CONCURRENT_STREAMS).
    #[arg(long, env = "RECAPD_MAX_STREAMS_PER_CONNECTION", default_value_t = 25_000,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_streams_per_connection: u32,

    /// File of `TENANT TOKEN` lines; when set, every call but health needs
    /// `authorization: Bearer <token>` and sees only its tenant's chats.
    #[arg(long, env = "RECAPD_AUTH_TOKENS_FILE")]
    pub auth_tokens_file: Option<PathBuf>,

    /// PEM certificate chain: serve gRPC over TLS (needs --tls-key).
    #[arg(long, env = "RECAPD_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,

    /// PEM private key of --tls-cert.
    #[arg(long, env = "RECAPD_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,

    /// Longest accepted text field (message text, memory, recap, template), in bytes.
    #[arg(long, env = "RECAPD_MAX_TEXT_BYTES", default_value_t = Limits::default().max_text_bytes as u64,
          value_parser = clap::value_parser!(u64).range(1..=(64 * 1024 * 1024)))]
    pub max_text_bytes: u64,

    /// Budget for the memory of chats held in memory (an estimate), in bytes
    /// with an optional KiB/MiB/GiB suffix (KB/MB/GB are powers of 1000);
    /// past it the least recently used unpinned chats are dropped and read
    /// again from the store on demand. 0: no budget.
    #[arg(long, env = "RECAPD_MAX_RESIDENT_MEMORY", default_value = "1GiB",
          value_parser = parse_size)]
    pub max_resident_memory: u64,

    /// Most passages a chat's recall index may hold for its searches to run
    /// under the chat's lock; a longer chat's run on a blocking thread, and
    /// its recall tier answers from its previous search until the new one
    /// is done (then a refresh with trigger RECALL_SEARCHED). 0: always.
    #[arg(long, env = "RECAPD_RECALL_INLINE_PASSAGES", default_value_t = Limits::default().recall_inline_passages as u64)]
    pub recall_inline_passages: u64,

    /// Delete chats with no change for this long, as DeleteChat would: a
    /// duration such as 90d or 12h; a bare number is seconds. Unset (the
    /// default): chats are kept until deleted. Never zero (refused: it
    /// would delete every chat).
    #[arg(long, env = "RECAPD_CHAT_RETENTION", value_name = "DURATION",
          value_parser = parse_chat_retention)]
    pub chat_retention: Option<Duration>,

    /// Directory of Hugging Face `tokenizer.json` files that the
    /// HUGGING_FACE tokenizer setting can name: `tokenizer_name` `NAME`
    /// reads `DIR/NAME.json`. Unset: HUGGING_FACE is refused.
    #[arg(long, env = "RECAPD_TOKENIZERS_DIR", value_name = "DIR")]
    pub tokenizers_dir: Option<PathBuf>,

    /// The largest tokenizer file read from --tokenizers-dir, in bytes with
    /// an optional KiB/MiB/GiB suffix.
    #[arg(long, env = "RECAPD_MAX_TOKENIZER_FILE", default_value = "64MiB",
          value_parser = parse_size)]
    pub max_tokenizer_file: u64,

    /// The most tokenizers from --tokenizers-dir kept loaded at once (the
    /// least recently used goes first; a large one takes tens of MB).
    #[arg(long, env = "RECAPD_MAX_CACHED_TOKENIZERS", default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(1..=256))]
    pub max_cached_tokenizers: u64,

    /// The most token counts of the LLM_ENDPOINT tokenizer kept (one per
    /// model and text, about 40 bytes each; the least recently used goes
    /// first). Size it above the texts your chats count between two
    /// refreshes, or counts are asked again.
    #[arg(long, env = "RECAPD_MAX_CACHED_TOKEN_COUNTS", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_cached_token_counts: u64,

    /// Recaps written by recapd: the LLM and the job queue.
    #[command(flatten)]
    pub llm: LlmOptions,

    /// Recall's vectors: the embeddings API.
    #[command(flatten)]
    pub embedding: EmbeddingOptions,

    /// The limits on lorebooks.
    #[command(flatten)]
    pub lorebooks: LorebookOptions,

    /// gRPC-Web's allowed origins and the inspector page.
    #[command(flatten)]
    pub web: WebOptions,

    /// OpenTelemetry traces: where spans go and what they carry.
    #[command(flatten)]
    pub traces: TraceOptions,
}

/// Parses a size in bytes: a number with an optional unit (`KiB`, `MiB`,
/// `GiB`... powers of 1024; `KB`, `MB`, `GB`... powers of 1000), case and
/// spaces ignored.
pub fn parse_size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|size| size.as_u64())
        .map_err(|_| format!("{text:?} is not a size (examples: 0, 1048576, 512MiB, 2GiB)"))
}

/// Parses `--resync-interval`: 1 s to 1 h, a bare number in seconds.
fn parse_resync_interval(text: &str) -> Result<Duration, String> {
    duration::parse_duration_in(text, BareUnit::Seconds, seconds(1)..=seconds(3600))
}

/// Parses `--shutdown-grace`: 1 s to 1 h, a bare number in seconds.
fn parse_shutdown_grace(text: &str) -> Result<Duration, String> {
    duration::parse_duration_in(text, BareUnit::Seconds, seconds(1)..=seconds(3600))
}

/// Parses `--chat-retention`: [`parse_duration`] with a bare number in
/// seconds (as `--job-retention`), refusing zero, which would delete
/// every chat.
pub fn parse_chat_retention(text: &str) -> Result<Duration, String> {
    match parse_duration(text, BareUnit::Seconds)? {
        zero if zero.is_zero() => Err(format!(
            "{:?}: a zero retention would delete every chat; give a duration such as 90d, or leave the option unset to keep chats",
            text.trim()
        )),
        retention => Ok(retention),
    }
}

impl Config {
    /// Reads and checks what the server needs besides its flags, each once:
    /// the --store URL, then the tokens file, then the TLS files, then the
    /// LLM's and the embeddings API's URLs and keys. The first
    /// failure is one line naming the option (`main` exits 64 with it,
    /// before anything is bound).
    pub fn read_startup_files(&self) -> Result<StartupFiles, String> {
        self.traces.resolve()?;
        Ok(StartupFiles {
            postgres: self.postgres()?,
            tokens: self.auth_tokens()?,
            tls: self.tls_pem()?,
            llm: self.llm.setup(std::env::var("RECAPD_LLM_API_KEY").ok())?,
            embedding: self
                .embedding
                .setup(std::env::var("RECAPD_EMBEDDING_API_KEY").ok())?,
        })
    }

    /// The PostgreSQL options, with --store, once its URL is checked (which
    /// clap does not do, as its error would repeat the password).
    fn postgres(&self) -> Result<Option<crate::store::postgres::PgOptions>, String> {
        let Some(url) = &self.store else {
            return Ok(None);
        };
        let (connection, tls) = url.parse()?;
        Ok(Some(crate::store::postgres::PgOptions {
            connection,
            tls,
            schema: self.store_schema.clone(),
            pool_size: usize::try_from(self.store_pool_size).unwrap_or(16),
        }))
    }

    /// The tokens file, read and checked; `None` when authentication is off.
    /// An error names the option and, for a malformed line, its number.
    fn auth_tokens(&self) -> Result<Option<TenantTokens>, String> {
        self.auth_tokens_file
            .as_deref()
            .map(|path| TenantTokens::load(path).map_err(|e| format!("--auth-tokens-file {e}")))
            .transpose()
    }

    /// The TLS certificate and key, read but not parsed; `None` for
    /// plaintext.
    fn tls_pem(&self) -> Result<Option<TlsPem>, String> {
        let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) else {
            return Ok(None);
        };
        let read = |option: &str, path: &std::path::Path| {
            std::fs::read(path).map_err(|e| format!("{option} {}: {e}", path.display()))
        };
        Ok(Some(TlsPem {
            cert: read("--tls-cert", cert)?,
            key: read("--tls-key", key)?,
        }))
    }

    /// The text limits this config sets.
    pub fn limits(&self) -> Limits {
        let size = |v: u64| usize::try_from(v).unwrap_or(usize::MAX);
        Limits {
            max_text_bytes: size(self.max_text_bytes),
            max_messages_per_chat: size(self.max_messages_per_chat),
            max_chats: size(self.max_chats),
            max_subscribers: size(self.max_subscribers),
            max_subscribers_per_connection: size(self.max_subscribers_per_connection),
            max_resident_bytes: size(self.max_resident_memory),
            recall_inline_passages: size(self.recall_inline_passages),
        }
    }

    /// Where the model tokenizers are, and how many are kept loaded.
    pub fn tokenizers(&self) -> crate::model_tokenizers::TokenizerSetup {
        crate::model_tokenizers::TokenizerSetup {
            dir: self.tokenizers_dir.clone(),
            max_file_bytes: self.max_tokenizer_file,
            max_cached: usize::try_from(self.max_cached_tokenizers).unwrap_or(8),
            max_cached_counts: usize::try_from(self.max_cached_token_counts).unwrap_or(100_000),
        }
    }

    /// The largest request message, in bytes.
    pub fn max_request_bytes(&self) -> usize {
        usize::try_from(self.max_request_bytes).unwrap_or(usize::MAX)
    }

    /// The address a local health probe should dial: `--listen`, with an
    /// unspecified host replaced by loopback.
    pub fn local_dial_addr(&self) -> SocketAddr {
        let mut addr = self.listen;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        addr
    }
}

#[cfg(test)]
mod tests;
