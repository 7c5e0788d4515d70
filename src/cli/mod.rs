//! The client side of the `recapd` tool subcommands: each dials a running
//! recapd like any other client would and answers with an exit code. No
//! server module depends on this one.
//!
//! - `recapd health` ([`health`]): the container health probe.
//! - `recapd import` / `recapd export` ([`files`]): SillyTavern chat files
//!   to and from `MemoryService`.
//! - `recapd chats list` / `recapd chats delete` ([`chats`]): the chats a
//!   server holds, listed or deleted.
//! - `recapd mcp` ([`mcp`]): the memory as MCP tools for agents, over
//!   stdio or Streamable HTTP.
//!
//! All dial through [`connect`]: plaintext or TLS.

use std::process::ExitCode;

use crate::auth::TokenTable;
use crate::config::{ChatsAction, Command, Config, EXIT_INVALID_CONFIG, TenantTokens};

pub mod chats;
pub mod connect;
pub mod files;
pub mod health;
pub mod mcp;

use connect::Dial;

/// Runs a tool subcommand against the server at its `--addr`, or at
/// `config`'s `--listen` (a wildcard host dialled as loopback), over TLS as
/// its flags or `config` say ([`connect`]); exit 0 on success, 1 on
/// failure with the reason on stderr, 64 for TLS flags naming a file that
/// cannot be read.
pub async fn run(command: Command, config: &Config) -> ExitCode {
    let (name, addr, tls) = match &command {
        Command::Health { addr, tls } => ("health", addr, tls),
        Command::Import { addr, tls, .. } => ("import", addr, tls),
        Command::Export { addr, tls, .. } => ("export", addr, tls),
        Command::Mcp { client, .. } => ("mcp", &client.addr, &client.tls),
        Command::Chats {
            action: ChatsAction::List { client },
        } => ("chats list", &client.addr, &client.tls),
        Command::Chats {
            action: ChatsAction::Delete { client, .. },
        } => ("chats delete", &client.addr, &client.tls),
    };
    let addr = addr
        .clone()
        .unwrap_or_else(|| config.local_dial_addr().to_string());
    let dial = match Dial::new(addr, tls, config) {
        Ok(dial) => dial,
        Err(error) => {
            eprintln!("recapd {name}: invalid configuration: {error}");
            return ExitCode::from(EXIT_INVALID_CONFIG as u8);
        }
    };
    match command {
        Command::Health { .. } => health::probe(&dial).await,
        Command::Import {
            token,
            paths,
            branch_from_main_chat,
            ..
        } => files::import(&dial, token.as_deref(), &paths, branch_from_main_chat).await,
        Command::Export { token, chat, .. } => files::export(&dial, token.as_deref(), &chat).await,
        Command::Mcp {
            client,
            mcp_listen,
            mcp_allow_writes,
            mcp_tokens_file,
            mcp_allowed_hosts,
        } => {
            let options = mcp::McpOptions {
                token: client.token,
                allow_writes: mcp_allow_writes,
            };
            match mcp_listen {
                None => mcp::serve_stdio(dial, options).await,
                Some(listen) => {
                    let tokens = match mcp_tokens_file.or(config.auth_tokens_file.clone()) {
                        None => None,
                        Some(path) => match TenantTokens::load(&path) {
                            Ok(tokens) => Some(TokenTable::new(tokens.iter())),
                            Err(error) => {
                                eprintln!(
                                    "recapd mcp: invalid configuration: --auth-tokens-file {error}"
                                );
                                return ExitCode::from(EXIT_INVALID_CONFIG as u8);
                            }
                        },
                    };
                    let http = mcp::http::HttpOptions {
                        listen,
                        tokens,
                        allowed_hosts: mcp_allowed_hosts
                            .iter()
                            .chain(&config.web.allowed_hosts)
                            .map(ToString::to_string)
                            .collect(),
                    };
                    mcp::http::serve_http(dial, options, http).await
                }
            }
        }
        Command::Chats {
            action: ChatsAction::List { client },
        } => chats::list(&dial, client.token.as_deref()).await,
        Command::Chats {
            action: ChatsAction::Delete { client, chats },
        } => chats::delete(&dial, client.token.as_deref(), &chats).await,
    }
}
