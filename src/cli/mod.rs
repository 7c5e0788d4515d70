//! The client side of the `recapd` tool subcommands: each dials a running
//! recapd like any other client would and answers with an exit code. No
//! server module depends on this one.
//!
//! - `recapd health` ([`health`]): the container health probe.
//! - `recapd import` / `recapd export` ([`files`]): SillyTavern chat files
//!   to and from `MemoryService`.

use std::process::ExitCode;

use crate::config::{Command, Config};

pub mod files;
pub mod health;

/// Runs a tool subcommand against the server at its `--addr`, or at
/// `config`'s `--listen` (a wildcard host dialled as loopback); exit 0 on
/// success, 1 on failure with the reason on stderr.
pub async fn run(command: Command, config: &Config) -> ExitCode {
    let dial = |addr: Option<String>| addr.unwrap_or_else(|| config.local_dial_addr().to_string());
    match command {
        Command::Health { addr } => health::probe(&dial(addr)).await,
        Command::Import { addr, token, paths } => {
            files::import(&dial(addr), token.as_deref(), &paths).await
        }
        Command::Export { addr, token, chat } => {
            files::export(&dial(addr), token.as_deref(), &chat).await
        }
    }
}
