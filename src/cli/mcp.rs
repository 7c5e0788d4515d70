//! `recapd mcp`: recapd's memory as a Model Context Protocol (MCP) server,
//! for agents and desktop apps that reach memory through MCP tools.
//!
//! It is a client of a running recapd like the other subcommands (it
//! dials `--addr` with `--token` and the TLS flags) and serves MCP over
//! stdio, or over Streamable HTTP with `--mcp-listen` ([`http`]). The
//! tools ([`tools`]) read: `recall`, `get_memory`, `list_chats`,
//! `search_lore` (a dry run of World Info activation), `render_prompt` (a
//! dry run); and, only with `--mcp-allow-writes`, write: `add_memory`.
//! Nothing a tool does writes unless it is a write tool: the dry runs
//! start, advance and end no timed World Info effect.
//!
//! A failed call answers as an MCP tool error carrying the gRPC status's
//! code and message (recapd's own messages never carry internals; a
//! transport failure answers a fixed message, its cause logged on stderr).

use std::process::ExitCode;

use super::connect::Dial;

mod answers;
pub mod http;
pub mod tools;

pub use tools::RecapdTools;

/// How `recapd mcp` serves.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The bearer token sent to recapd with every call made for a stdio
    /// client, or for an HTTP client when the listener checks no tokens.
    pub token: Option<String>,
    /// Whether the write tool is offered.
    pub allow_writes: bool,
}

/// Serves MCP over stdin and stdout until the client closes stdin; exit 0
/// then, 1 when the transport fails (the reason on stderr).
pub async fn serve_stdio(dial: Dial, options: McpOptions) -> ExitCode {
    use rmcp::ServiceExt as _;
    let tools = RecapdTools::new(dial, options);
    let running = match tools.serve(rmcp::transport::stdio()).await {
        Ok(running) => running,
        Err(error) => {
            eprintln!("recapd mcp: {error}");
            return ExitCode::FAILURE;
        }
    };
    match running.waiting().await {
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recapd mcp: {error}");
            ExitCode::FAILURE
        }
    }
}
