//! gRPC-Web for browsers on the gRPC listener: [`GrpcWebFront`] sends
//! plain gRPC calls straight on, and everything else (gRPC-Web calls, CORS
//! preflights, stray HTTP/1.1 requests) through a CORS policy and
//! `tonic_web`'s translation, so that plain gRPC pays for neither (they
//! cost a plain call about a tenth of its instructions, and added CORS
//! headers to every answer).
//!
//! A browser calling from another origin first asks (a preflight,
//! `OPTIONS`) whether it may; the answer allows it only for the origins of
//! `--grpc-web-allowed-origins`, so for any other origin the browser never
//! sends the call. Clients that are not browsers send no preflight and
//! need no origin.
//!
//! CORS cannot stop a page whose DNS name was pointed at this machine (DNS
//! rebinding): to the browser, recapd is then that page's own origin. So
//! every request a browser could have shaped (anything but native gRPC:
//! HTTP/2 with `application/grpc[+format]` and no `Origin`) first passes
//! [`BrowserGuard`] (the `guard` module has the rules): a foreign host or
//! origin gets 403 and a short text, before any service sees it. Native
//! gRPC is served whatever host it names (Docker service names, proxies):
//! no browser can send it. A native gRPC call that carries an `Origin` is
//! checked all the same, since only a browser-like client sends one; the
//! plain path pays for a header lookup, no more.

use std::task::{Context, Poll};
use std::time::Duration;

use std::future::{Ready, ready};

use bytes::Bytes;
use futures_util::future::Either;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};
use http_body_util::Full;
use tonic::body::Body;
use tonic_web::{GrpcWebLayer, GrpcWebService};
use tower::{Layer, Service};
use tower_http::cors::{AllowOrigin, Cors, CorsLayer};

use crate::config::{AllowedHost, AllowedOrigin};
use crate::web_host::clipped;

mod guard;
pub use guard::{BrowserGuard, Refusal};

/// The answer to a browser-shaped request from a foreign host or origin
/// (with HTTP status 403, and gRPC status 7, `PERMISSION_DENIED`, in
/// its headers): it names no internals, only what the operator can change.
const REFUSED: &str = "403 forbidden: this server does not answer web pages of this host or origin (see --allowed-hosts and --grpc-web-allowed-origins)\n";

/// The most characters of a refused request's host or origin logged.
const LOGGED_HEADER_CHARS: usize = 200;

/// The headers a gRPC-Web call may send: the bearer token, the framing's
/// content type, the gRPC deadline and the clients' own markers.
const REQUEST_HEADERS: [HeaderName; 6] = [
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    HeaderName::from_static("x-grpc-web"),
    HeaderName::from_static("x-user-agent"),
    HeaderName::from_static("grpc-timeout"),
    HeaderName::from_static("connect-protocol-version"),
];

/// The headers a page may read from an answer: a trailers-only answer
/// (an error before any message) carries the status in them.
const RESPONSE_HEADERS: [HeaderName; 3] = [
    HeaderName::from_static("grpc-status"),
    HeaderName::from_static("grpc-message"),
    HeaderName::from_static("grpc-status-details-bin"),
];

/// How long a browser may reuse a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The CORS policy of the gRPC listener: the calls of web pages from
/// `origins` are allowed (none when empty, the default); no cookies.
fn cors(origins: &[AllowedOrigin]) -> CorsLayer {
    let origins: Vec<HeaderValue> = origins
        .iter()
        .filter_map(|origin| HeaderValue::from_str(origin.as_str()).ok())
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins))
        .allow_methods([Method::POST])
        .allow_headers(REQUEST_HEADERS)
        .expose_headers(RESPONSE_HEADERS)
        .max_age(PREFLIGHT_MAX_AGE)
}

/// The front of the gRPC listener: native gRPC straight on; browser-shaped
/// requests past [`BrowserGuard`] (`--allowed-hosts`), then plain gRPC
/// straight on and the rest through CORS (the origins of
/// `--grpc-web-allowed-origins`) and gRPC-Web's translation.
#[derive(Debug, Clone)]
pub struct GrpcWebFront {
    cors: CorsLayer,
    guard: BrowserGuard,
}

impl GrpcWebFront {
    /// The front allowing web pages of `origins` (none when empty) reached
    /// by an IP literal, `localhost` or a name of `hosts`.
    pub fn new(hosts: &[AllowedHost], origins: &[AllowedOrigin]) -> GrpcWebFront {
        GrpcWebFront {
            cors: cors(origins),
            guard: BrowserGuard::new(hosts, origins),
        }
    }
}

impl<S: Clone> Layer<S> for GrpcWebFront {
    type Service = GrpcWebFronted<S>;
    fn layer(&self, inner: S) -> GrpcWebFronted<S> {
        GrpcWebFronted {
            browser: self.cors.layer(GrpcWebLayer::new().layer(inner.clone())),
            plain: inner,
            guard: self.guard.clone(),
        }
    }
}

/// The services behind [`GrpcWebFront`]: the same services, reached
/// directly or through CORS and gRPC-Web's translation, behind the guard.
#[derive(Debug, Clone)]
pub struct GrpcWebFronted<S> {
    plain: S,
    browser: Cors<GrpcWebService<S>>,
    guard: BrowserGuard,
}

/// Whether `request` is a plain gRPC call (`application/grpc`, alone or
/// with a `+format`), which needs neither CORS nor translation.
fn is_plain_grpc<B>(request: &Request<B>) -> bool {
    let Some(media_type) = request.headers().get(header::CONTENT_TYPE) else {
        return false;
    };
    let media_type = media_type.as_bytes();
    media_type == b"application/grpc" || media_type.starts_with(b"application/grpc+")
}

/// Whether `request` is native gRPC, which no browser can send: a plain
/// gRPC call over HTTP/2 with no `Origin`.
fn is_native_grpc<B>(request: &Request<B>) -> bool {
    request.version() == Version::HTTP_2
        && is_plain_grpc(request)
        && !request.headers().contains_key(header::ORIGIN)
}

/// The 403 of a refused browser-shaped request, logged with the host and
/// origin it named (clipped, and escaped by the logger).
fn refused<B>(request: &Request<B>, refusal: Refusal) -> Response<Body> {
    let header_text = |name: header::HeaderName| {
        request.headers().get(name).map(|v| {
            clipped(&String::from_utf8_lossy(v.as_bytes()), LOGGED_HEADER_CHARS).to_owned()
        })
    };
    let authority = request.uri().authority().map(|a| a.as_str());
    tracing::info!(
        host = ?header_text(header::HOST),
        authority = ?authority.map(|a| clipped(a, LOGGED_HEADER_CHARS)),
        origin = ?header_text(header::ORIGIN),
        path = ?clipped(request.uri().path(), LOGGED_HEADER_CHARS),
        reason = %refusal,
        "refused a browser's request to the gRPC listener (DNS rebinding guard: --allowed-hosts, --grpc-web-allowed-origins)"
    );
    let mut response = Response::new(Body::new(Full::new(Bytes::from_static(REFUSED.as_bytes()))));
    *response.status_mut() = StatusCode::FORBIDDEN;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // gRPC and gRPC-Web clients read the status from these (a
    // trailers-only answer) rather than from the body.
    headers.insert("grpc-status", HeaderValue::from_static("7"));
    headers.insert(
        "grpc-message",
        HeaderValue::from_static("host or origin not allowed"),
    );
    response
}

/// What [`GrpcWebFronted`] answers with: the services' own future, CORS
/// and gRPC-Web's, or a refusal.
type FrontFuture<S> = Either<
    Either<
        <S as Service<Request<Body>>>::Future,
        Ready<Result<Response<Body>, <S as Service<Request<Body>>>::Error>>,
    >,
    <Cors<GrpcWebService<S>> as Service<Request<Body>>>::Future,
>;

impl<S> Service<Request<Body>> for GrpcWebFronted<S>
where
    S: Service<Request<Body>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = FrontFuture<S>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Both lead to the same services, which are always ready.
        match self.plain.poll_ready(cx) {
            Poll::Ready(Ok(())) => <Cors<GrpcWebService<S>> as Service<Request<Body>>>::poll_ready(
                &mut self.browser,
                cx,
            ),
            other => other,
        }
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if is_native_grpc(&request) {
            return Either::Left(Either::Left(self.plain.call(request)));
        }
        if let Err(refusal) = self.guard.admits(&request) {
            return Either::Left(Either::Right(ready(Ok(refused(&request, refusal)))));
        }
        if is_plain_grpc(&request) {
            Either::Left(Either::Left(self.plain.call(request)))
        } else {
            Either::Right(self.browser.call(request))
        }
    }
}

#[cfg(test)]
mod tests;
