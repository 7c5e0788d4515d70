//! The inspector: a web page, served on its own address
//! (`--inspector-listen`), for looking at and steering recapd from a
//! browser. The page (`inspector/assets/`, built from `inspector/` at the
//! repository's root and committed, so that a machine with only the Rust
//! toolchain builds recapd) is embedded in the binary. It has no API of
//! its own: it calls recapd's public gRPC API over gRPC-Web, on the same
//! origin, through the same layers and tokens as any client.
//!
//! [`InspectorLayer`] sits in front of the gRPC services on that address:
//! `GET`/`HEAD` of the page's files is answered from the embedded bytes,
//! with a Content-Security-Policy that lets the page load nothing but its
//! own files and call nothing but its own origin; every other request goes
//! on to the services. On a loopback address, requests must name a
//! loopback host (`localhost`, `127.0.0.1`, `[::1]`...), so that a web
//! page whose DNS name was pointed at 127.0.0.1 (DNS rebinding) cannot
//! reach it as if it were the page's own origin.

use std::future::{Ready, ready};
use std::net::SocketAddr;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::Either;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use http_body_util::Full;
use tonic::body::Body;
use tower::{Layer, Service};

use crate::web_host::request_host;

/// The page's files: path, media type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_bytes!("inspector/assets/index.html"),
    ),
    (
        "/index.html",
        "text/html; charset=utf-8",
        include_bytes!("inspector/assets/index.html"),
    ),
    (
        "/inspector.js",
        "text/javascript; charset=utf-8",
        include_bytes!("inspector/assets/inspector.js"),
    ),
    (
        "/inspector.css",
        "text/css; charset=utf-8",
        include_bytes!("inspector/assets/inspector.css"),
    ),
    (
        "/recap.v1.binpb",
        "application/octet-stream",
        crate::grpc::pb::FILE_DESCRIPTOR_SET,
    ),
];

/// What the page may load and call: its own files and its own origin.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

/// Serves the inspector's page in front of the gRPC services it wraps.
#[derive(Debug, Clone, Copy)]
pub struct InspectorLayer {
    loopback_only: bool,
}

impl InspectorLayer {
    /// The layer for an inspector listening on `addr`: on a loopback
    /// address, requests naming another host are refused.
    pub fn new(addr: SocketAddr) -> InspectorLayer {
        InspectorLayer {
            loopback_only: addr.ip().is_loopback(),
        }
    }
}

impl<S> Layer<S> for InspectorLayer {
    type Service = Inspector<S>;
    fn layer(&self, inner: S) -> Inspector<S> {
        Inspector {
            inner,
            loopback_only: self.loopback_only,
        }
    }
}

/// The gRPC services behind [`InspectorLayer`].
#[derive(Debug, Clone)]
pub struct Inspector<S> {
    inner: S,
    loopback_only: bool,
}

impl<S, ReqBody> Service<Request<ReqBody>> for Inspector<S>
where
    S: Service<Request<ReqBody>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Either<Ready<Result<Response<Body>, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        if self.loopback_only && !names_loopback(&request) {
            return Either::Left(ready(Ok(plain(
                StatusCode::FORBIDDEN,
                "the inspector listens on a loopback address: open it as localhost, 127.0.0.1 or [::1]\n",
            ))));
        }
        let method = request.method();
        if method != Method::GET && method != Method::HEAD {
            return Either::Right(self.inner.call(request));
        }
        let head = method == Method::HEAD;
        let answer = match FILES
            .iter()
            .find(|(path, ..)| *path == request.uri().path())
        {
            Some((_, media_type, bytes)) => page_file(media_type, bytes, head),
            None => plain(StatusCode::NOT_FOUND, "not found\n"),
        };
        Either::Left(ready(Ok(answer)))
    }
}

/// Whether the request names a loopback host: `localhost` (or a name
/// under it) or a loopback IP, with any port. HTTP/2 requests carry it in
/// the URI's authority, HTTP/1.1 ones in `Host`; a request naming no host,
/// several, or one that is not a host is refused ([`request_host`]).
fn names_loopback<B>(request: &Request<B>) -> bool {
    request_host(request).is_ok_and(|named| named.host.is_loopback())
}

/// One of the page's files, with the headers that keep the page to itself.
fn page_file(media_type: &'static str, bytes: &'static [u8], head: bool) -> Response<Body> {
    let body = if head {
        Body::empty()
    } else {
        Body::new(Full::new(Bytes::from_static(bytes)))
    };
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // The files change with the binary: the browser asks again each time.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A short plain-text answer.
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::new(Full::new(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::convert::Infallible as Never;
    use tower::ServiceExt;

    /// Answers every request it gets with 200 and `grpc`, standing for the services.
    fn services() -> impl Service<
        Request<Body>,
        Response = Response<Body>,
        Error = Never,
        Future = Ready<Result<Response<Body>, Never>>,
    > + Clone {
        tower::service_fn(|_request: Request<Body>| {
            ready(Ok::<_, Never>(Response::new(Body::new(Full::new(
                Bytes::from_static(b"grpc"),
            )))))
        })
    }

    async fn call(
        addr: &str,
        method: Method,
        uri: &str,
        host: Option<&str>,
    ) -> (StatusCode, Vec<u8>, http::HeaderMap) {
        let inspector = InspectorLayer::new(addr.parse().unwrap()).layer(services());
        let mut request = Request::builder().method(method).uri(uri);
        if let Some(host) = host {
            request = request.header(header::HOST, host);
        }
        let response = inspector
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, body.to_vec(), headers)
    }

    #[tokio::test]
    async fn the_page_is_served_with_a_policy_that_keeps_it_to_its_own_origin() {
        let (status, body, headers) =
            call("127.0.0.1:8080", Method::GET, "/", Some("127.0.0.1:8080")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.starts_with(b"<!doctype html>") || body.starts_with(b"<!DOCTYPE html>"));
        assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
        let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"));
        let (status, body, _) = call(
            "127.0.0.1:8080",
            Method::GET,
            "/recap.v1.binpb",
            Some("localhost:8080"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, crate::grpc::pb::FILE_DESCRIPTOR_SET);
        let (status, body, headers) = call(
            "127.0.0.1:8080",
            Method::HEAD,
            "/inspector.js",
            Some("localhost"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.is_empty());
        assert_eq!(
            headers[header::CONTENT_TYPE],
            "text/javascript; charset=utf-8"
        );
    }

    #[tokio::test]
    async fn other_gets_are_not_found_and_calls_go_to_the_services() {
        let (status, ..) = call(
            "127.0.0.1:8080",
            Method::GET,
            "/etc/passwd",
            Some("localhost"),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, body, _) = call(
            "127.0.0.1:8080",
            Method::POST,
            "/recap.v1.MemoryService/ListChats",
            Some("localhost:8080"),
        )
        .await;
        assert_eq!((status, body.as_slice()), (StatusCode::OK, &b"grpc"[..]));
    }

    #[tokio::test]
    async fn on_loopback_a_request_naming_another_host_is_refused() {
        for host in [
            Some("evil.example:8080"),
            Some("10.0.0.1"),
            Some("localhost.evil.example"),
            None,
        ] {
            let (status, ..) = call("127.0.0.1:8080", Method::GET, "/", host).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{host:?}");
            let (status, ..) = call(
                "127.0.0.1:8080",
                Method::POST,
                "/recap.v1.MemoryService/ListChats",
                host,
            )
            .await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{host:?}");
        }
        for host in [
            "localhost",
            "LOCALHOST:1",
            "app.localhost",
            "127.0.0.2:9",
            "[::1]:8080",
        ] {
            let (status, ..) = call("[::1]:8080", Method::GET, "/", Some(host)).await;
            assert_eq!(status, StatusCode::OK, "{host}");
        }
        // Listening on every address, any host is served (tokens guard it).
        let (status, ..) = call(
            "0.0.0.0:8080",
            Method::GET,
            "/",
            Some("recapd.internal:8080"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
}
