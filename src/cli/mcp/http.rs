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
use tower::Service as _;

use super::super::connect::Dial;
use super::tools::CallerToken;
use super::{McpOptions, RecapdTools};
use crate::auth::{TokenTable, bearer_token};

/// The path the MCP endpoint answers on.
pub const MCP_PATH: &str = "/mcp";

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

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
    let tools = RecapdTools::new(dial, options);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    let tokens = http.tokens.map(Arc::new);
    eprintln!("recapd mcp: serving MCP on http://{bound}{MCP_PATH}");
    let shutdown = crate::app::shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accepting an MCP connection failed");
                    continue;
                }
            },
            () = &mut shutdown => return ExitCode::SUCCESS,
        };
        let service = service.clone();
        let tokens = tokens.clone();
        let handle = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let mut service = service.clone();
            let tokens = tokens.clone();
            async move {
                if request.uri().path() != MCP_PATH {
                    return Ok::<_, Infallible>(plain(StatusCode::NOT_FOUND, "not found"));
                }
                if let Some(tokens) = &tokens {
                    let Some(token) = authenticate(&request, tokens) else {
                        return Ok(unauthorized());
                    };
                    request.extensions_mut().insert(token);
                }
                service.call(request).await
            }
        });
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), handle)
                .await;
            if let Err(error) = served {
                tracing::debug!(%error, "an MCP connection ended with an error");
            }
        });
    }
}
