//! `recapd mcp --mcp-listen ADDR`: the MCP tools over Streamable HTTP
//! (HTTP/1.1, path `/mcp`), with the gRPC listener's token rules.
//!
//! - With `--auth-tokens-file`, every request needs `Authorization: Bearer
//!   <token>` with a token of that file (else 401, the same answer whether
//!   the token is missing, malformed or unknown); the token is passed on to
//!   recapd with the tools' calls, so the caller sees its own tenant's
//!   chats. Without it, requests are not checked and the calls carry
//!   `--token`.
//! - The `Host` a request names must be a loopback name, the listener's
//!   own address or one of `--allowed-hosts` (rmcp's guard against DNS
//!   rebinding: a web page cannot reach a local MCP server through a name
//!   it controls).
//! - Served statelessly: no session is kept between requests, so a client
//!   cannot make the server hold memory by opening sessions.
//! - Bounded: a request's body is at most [`MAX_REQUEST_BYTES`]; a client
//!   has [`HEADER_READ_TIMEOUT`] to send a request's headers and
//!   [`REQUEST_TIMEOUT`] for the rest of it to be read and answered (408
//!   after that); a connection lives at most [`MAX_CONNECTION_AGE`], then
//!   ends once its request in progress is answered (or [`REQUEST_TIMEOUT`]
//!   later, for a client that does not read its answer).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::super::connect::Dial;
use super::tools::CallerToken;
use super::{McpOptions, RecapdTools};
use crate::auth::{TokenTable, bearer_token};

/// The path the MCP endpoint answers on.
pub const MCP_PATH: &str = "/mcp";

/// The pause after a failed accept before the next.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// How long a client may take to send a request's headers.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a request may take, from its headers read to its answer: the
/// body (a client sending it a byte at a time) and the tool's call.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one connection is served; then it is closed once its request
/// in progress is answered, or [`REQUEST_TIMEOUT`] later at most.
pub const MAX_CONNECTION_AGE: Duration = Duration::from_secs(600);

/// The most bytes of a request's body (a tool call's arguments).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;

/// What the listener checks besides MCP itself.
pub struct HttpOptions {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The tokens a request must carry one of; `None`: none checked.
    pub tokens: Option<TokenTable>,
    /// Host names requests may name besides loopback and the listener's
    /// own address (`--allowed-hosts`).
    pub allowed_hosts: Vec<String>,
}

type Body = BoxBody<Bytes, Infallible>;

/// The MCP service the listener serves.
type Mcp = StreamableHttpService<RecapdTools, NeverSessionManager>;

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer to a request without a valid token.
fn unauthorized() -> Response<Body> {
    let mut response = plain(
        StatusCode::UNAUTHORIZED,
        crate::auth::UNAUTHENTICATED_MESSAGE,
    );
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// The caller's token when `tokens` knows it.
fn authenticate<B>(request: &Request<B>, tokens: &TokenTable) -> Option<CallerToken> {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| bearer_token(value.as_bytes()))
        .filter(|token| tokens.tenant(token).is_some())?;
    // The file's tokens are text, so a token found in it is too.
    let token = std::str::from_utf8(token).ok()?;
    Some(CallerToken(token.to_owned()))
}

/// The answer to `request`: 404 off [`MCP_PATH`], 401 without a token of
/// `tokens` (when given), 408 past `timeout`, else the MCP service's, the
/// caller's token put in the request for the tools' calls.
pub async fn respond<B>(
    service: &Mcp,
    tokens: Option<&TokenTable>,
    mut request: Request<B>,
    timeout: Duration,
) -> Response<Body>
where
    B: hyper::body::Body + Send + 'static,
    B::Error: std::fmt::Display,
{
    if request.uri().path() != MCP_PATH {
        return plain(StatusCode::NOT_FOUND, "not found");
    }
    if let Some(tokens) = tokens {
        let Some(token) = authenticate(&request, tokens) else {
            return unauthorized();
        };
        request.extensions_mut().insert(token);
    }
    match tokio::time::timeout(timeout, service.handle(request)).await {
        Ok(response) => response,
        Err(_) => plain(
            StatusCode::REQUEST_TIMEOUT,
            "the request was not read and answered in time",
        ),
    }
}

/// The MCP service for `tools`, accepting requests that name one of
/// `hosts`.
pub fn mcp_service(tools: RecapdTools, hosts: Vec<String>) -> Mcp {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    config.max_request_body_bytes = MAX_REQUEST_BYTES;
    StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

/// Serves the tools over HTTP until interrupted (SIGINT or SIGTERM); exit
/// 1 when the address cannot be bound.
pub async fn serve_http(dial: Dial, options: McpOptions, http: HttpOptions) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(http.listen).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!("recapd mcp: --mcp-listen {}: {error}", http.listen);
            return ExitCode::FAILURE;
        }
    };
    let bound = listener.local_addr().unwrap_or(http.listen);
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .map(String::from)
        .collect();
    if !bound.ip().is_unspecified() {
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(http.allowed_hosts);
    // With tokens checked, a call carries its caller's token and never
    // --token: a request that somehow lacks one fails UNAUTHENTICATED
    // rather than acting as --token's tenant.
    let options = match &http.tokens {
        Some(_) => McpOptions {
            token: None,
            ..options
        },
        None => options,
    };
    let service = Arc::new(mcp_service(RecapdTools::new(dial, options), hosts));
    let tokens = http.tokens.map(Arc::new);
    eprintln!("recapd mcp: serving MCP on http://{bound}{MCP_PATH}");
    let shutdown = crate::app::shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, say: wait rather than spin.
                    tracing::warn!(%error, "accepting an MCP connection failed");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            () = &mut shutdown => return ExitCode::SUCCESS,
        };
        let service = service.clone();
        let tokens = tokens.clone();
        let handle = hyper::service::service_fn(move |request: Request<Incoming>| {
            let service = service.clone();
            let tokens = tokens.clone();
            async move {
                let response = respond(&service, tokens.as_deref(), request, REQUEST_TIMEOUT).await;
                Ok::<_, Infallible>(response)
            }
        });
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handle);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = tokio::time::sleep(MAX_CONNECTION_AGE) => {
                    connection.as_mut().graceful_shutdown();
                    tokio::time::timeout(REQUEST_TIMEOUT, connection)
                        .await
                        .unwrap_or(Ok(()))
                }
            };
            if let Err(error) = served {
                tracing::debug!(%error, "an MCP connection ended with an error");
            }
        });
    }
}

#[cfg(test)]
mod tests;
