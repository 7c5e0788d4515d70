//! The command line: serving (no subcommand) with the server's options
//! ([`Config`]), or one of the tools (`health`, `chats`, ...) with the
//! options that reach a running recapd ([`ClientArgs`]).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::Config;

/// The command line: serve (no subcommand) or a tool.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "recapd",
    version,
    about = "ST-Auto-Recap's memory injection as a gRPC sidecar"
)]
pub struct Cli {
    /// What to do; without a subcommand recapd serves.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Server options.
    #[command(flatten)]
    pub config: Config,
}

/// Subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Asks a running recapd's grpc.health.v1 service; exits 0 when it
    /// reports SERVING, 1 otherwise.
    Health {
        /// Address of the server; defaults to --listen (0.0.0.0 and [::]
        /// mean the local host).
        #[arg(long)]
        addr: Option<String>,
        /// How to dial: plaintext, or TLS.
        #[command(flatten)]
        tls: ClientTls,
    },
    /// Loads SillyTavern chat files into a running recapd; each file's name
    /// without `.jsonl` is its chat id (an existing chat is replaced).
    Import {
        /// Address of the server; defaults to --listen.
        #[arg(long)]
        addr: Option<String>,
        /// Bearer token, when the server has --auth-tokens-file.
        #[arg(long, env = "RECAPD_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// How to dial: plaintext, or TLS.
        #[command(flatten)]
        tls: ClientTls,
        /// Makes each SillyTavern branch or checkpoint file a branch of the
        /// chat it names as its parent (`main_chat`) when that chat starts
        /// with the file's messages, so its memory comes along; a file
        /// that is not is imported as it is (the reason on stderr). The
        /// chats must be new.
        #[arg(long)]
        branch_from_main_chat: bool,
        /// The files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Writes a chat of a running recapd to stdout as a SillyTavern chat file.
    Export {
        /// Address of the server; defaults to --listen.
        #[arg(long)]
        addr: Option<String>,
        /// Bearer token, when the server has --auth-tokens-file.
        #[arg(long, env = "RECAPD_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// How to dial: plaintext, or TLS.
        #[command(flatten)]
        tls: ClientTls,
        /// The chat.
        chat: String,
    },
    /// Serves recapd's memory to agents as a Model Context Protocol (MCP)
    /// server: tools that read a running recapd (recall, get_memory,
    /// list_chats, search_lore, render_prompt) and, with
    /// --mcp-allow-writes, store recaps (add_memory). Over stdio, or over
    /// Streamable HTTP with --mcp-listen.
    Mcp {
        /// Where and how to dial recapd.
        #[command(flatten)]
        client: ClientArgs,
        /// Serve over Streamable HTTP on this address (path /mcp) instead
        /// of stdio. With --auth-tokens-file each request needs
        /// `Authorization: Bearer <token>` of that file, passed on to
        /// recapd; requests must name a loopback host, this address or
        /// one of --allowed-hosts.
        #[arg(long, env = "RECAPD_MCP_LISTEN", value_name = "ADDR")]
        mcp_listen: Option<std::net::SocketAddr>,
        /// Offer the write tool, add_memory (off by default: an agent
        /// only reads).
        #[arg(long)]
        mcp_allow_writes: bool,
        /// With --mcp-listen: the file of `TENANT TOKEN` lines whose tokens
        /// requests must carry, as the server's own --auth-tokens-file
        /// (given before `mcp`, or RECAPD_AUTH_TOKENS_FILE, it applies
        /// too).
        #[arg(long = "auth-tokens-file", value_name = "FILE")]
        mcp_tokens_file: Option<PathBuf>,
        /// With --mcp-listen: host names (comma-separated) requests may
        /// name besides loopback and the listen address, as the server's
        /// --allowed-hosts (which applies too).
        #[arg(long = "allowed-hosts", value_name = "HOSTS", value_delimiter = ',')]
        mcp_allowed_hosts: Vec<super::AllowedHost>,
    },
    /// Lists or deletes the chats of a running recapd (those of the
    /// token's tenant).
    Chats {
        /// What to do with them.
        #[command(subcommand)]
        action: ChatsAction,
    },
}

/// `recapd chats` subcommands: each is a client of a running recapd
/// (`MemoryService.ListChats` / `DeleteChat`), see [`crate::cli::chats`].
#[derive(Debug, Clone, Subcommand)]
pub enum ChatsAction {
    /// Prints every chat, all pages, ordered by chat id: a header, then one
    /// tab-separated line per chat (id, messages, revision, enabled, last
    /// change in RFC 3339, `-` when unknown). In an id, a tab, a newline, a
    /// carriage return, any other control character and a backslash are
    /// written `\t`, `\n`, `\r`, `\u{..}` and `\\`.
    List {
        /// Where and how to dial.
        #[command(flatten)]
        client: ClientArgs,
    },
    /// Deletes each chat for good, in order, printing the revision of its
    /// last injection; an unknown chat is reported on stderr and the others
    /// are still deleted; exit 1 when any failed.
    Delete {
        /// Where and how to dial.
        #[command(flatten)]
        client: ClientArgs,
        /// The chats (a chat id starting with `-` goes after `--`).
        #[arg(required = true, value_name = "CHAT")]
        chats: Vec<String>,
    },
}

/// Where and how a `recapd chats` subcommand dials: the address, the
/// bearer token and the TLS flags, as for `import` and `export`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientArgs {
    /// Address of the server; defaults to --listen.
    #[arg(long)]
    pub addr: Option<String>,
    /// Bearer token, when the server has --auth-tokens-file.
    #[arg(long, env = "RECAPD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// How to dial: plaintext, or TLS.
    #[command(flatten)]
    pub tls: ClientTls,
}

/// How a tool subcommand dials the server (see [`crate::cli::connect`]):
/// TLS with `--tls-ca` or `--tls`; without either, TLS exactly when the
/// server configuration (`--tls-cert`) has it; plaintext otherwise.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientTls {
    /// PEM file of the CA (or the server's own certificate) to trust: dial
    /// over TLS. Without TLS flags, TLS when --tls-cert is set, trusting it.
    #[arg(long, env = "RECAPD_TLS_CA")]
    pub tls_ca: Option<PathBuf>,
    /// Dial over TLS, trusting the system's root certificates.
    #[arg(long)]
    pub tls: bool,
    /// The name the server's certificate must carry, when it is not the
    /// host of --addr (a certificate of the --tls-ca file, trusted as it
    /// is, needs none).
    #[arg(long)]
    pub tls_server_name: Option<String>,
}

impl Cli {
    /// Parses arguments (the first is the program name) with the environment
    /// as fallback.
    pub fn from_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::try_parse_from(args)
    }
}
