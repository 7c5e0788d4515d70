//! The HTTP listener's rules, on the service it serves: tokens, hosts,
//! and the time a request may take.

use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::body::Frame;

use super::*;
use crate::cli::mcp::McpOptions;
use crate::config::{Cli, ClientTls};

const TOKEN: &str = "acme-token-0123456789";

fn service() -> Mcp {
    let config = Cli::from_args(["recapd"]).unwrap().config;
    // Nothing listens there: tools/list needs no call to recapd.
    let dial = Dial::new("127.0.0.1:1", &ClientTls::default(), &config).unwrap();
    let options = McpOptions {
        token: None,
        allow_writes: false,
    };
    mcp_service(
        RecapdTools::new(dial, options),
        vec!["localhost".into(), "127.0.0.1".into()],
    )
}

fn tokens() -> TokenTable {
    TokenTable::new([(TOKEN, "acme")])
}

fn tools_list(host: &str, token: Option<&str>) -> Request<Full<Bytes>> {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let mut request = Request::post(MCP_PATH)
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    request
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap()
}

async fn status(request: Request<Full<Bytes>>, tokens: Option<&TokenTable>) -> StatusCode {
    respond(&service(), tokens, request, REQUEST_TIMEOUT)
        .await
        .status()
}

#[tokio::test]
async fn every_request_needs_a_token_of_the_file_and_a_known_host() {
    let tokens = tokens();
    let tokens = Some(&tokens);
    assert_eq!(
        status(tools_list("127.0.0.1:8808", None), tokens).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(tools_list("127.0.0.1:8808", Some("not-a-token")), tokens).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        status(tools_list("127.0.0.1:8808", Some(TOKEN)), tokens).await,
        StatusCode::OK
    );
    assert_eq!(
        status(tools_list("evil.example", Some(TOKEN)), tokens).await,
        StatusCode::FORBIDDEN
    );
    // Without a file nothing is checked but the host.
    assert_eq!(
        status(tools_list("localhost:8808", None), None).await,
        StatusCode::OK
    );
}

/// A body that never comes: a client that sent its headers and stalls.
struct Stalled;

impl hyper::body::Body for Stalled {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Pending
    }
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_body_stalls_is_answered_408_after_the_timeout() {
    let request = Request::post(MCP_PATH)
        .header(header::HOST, "127.0.0.1")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Stalled)
        .unwrap();
    let tokens = tokens();
    let started = tokio::time::Instant::now();
    let response = respond(&service(), Some(&tokens), request, REQUEST_TIMEOUT).await;
    assert_eq!(response.status(), StatusCode::REQUEST_TIMEOUT);
    assert_eq!(started.elapsed(), REQUEST_TIMEOUT);
}
