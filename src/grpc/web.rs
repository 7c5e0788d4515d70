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

use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either;
use http::header::{self, HeaderName, HeaderValue};
use http::{Method, Request, Response};
use tonic::body::Body;
use tonic_web::{GrpcWebLayer, GrpcWebService};
use tower::{Layer, Service};
use tower_http::cors::{AllowOrigin, Cors, CorsLayer};

use crate::config::AllowedOrigin;

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

/// The front of the gRPC listener: plain gRPC straight on, the rest
/// through CORS (the origins of `--grpc-web-allowed-origins`) and
/// gRPC-Web's translation.
#[derive(Debug, Clone)]
pub struct GrpcWebFront {
    cors: CorsLayer,
}

impl GrpcWebFront {
    /// The front allowing web pages of `origins` (none when empty).
    pub fn new(origins: &[AllowedOrigin]) -> GrpcWebFront {
        GrpcWebFront {
            cors: cors(origins),
        }
    }
}

impl<S: Clone> Layer<S> for GrpcWebFront {
    type Service = GrpcWebFronted<S>;
    fn layer(&self, inner: S) -> GrpcWebFronted<S> {
        GrpcWebFronted {
            browser: self.cors.layer(GrpcWebLayer::new().layer(inner.clone())),
            plain: inner,
        }
    }
}

/// The services behind [`GrpcWebFront`]: the same services, reached
/// directly or through CORS and gRPC-Web's translation.
#[derive(Debug, Clone)]
pub struct GrpcWebFronted<S> {
    plain: S,
    browser: Cors<GrpcWebService<S>>,
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

impl<S> Service<Request<Body>> for GrpcWebFronted<S>
where
    S: Service<Request<Body>, Response = Response<Body>>,
{
    type Response = Response<Body>;
    type Error = S::Error;
    type Future = Either<S::Future, <Cors<GrpcWebService<S>> as Service<Request<Body>>>::Future>;

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
        if is_plain_grpc(&request) {
            Either::Left(self.plain.call(request))
        } else {
            Either::Right(self.browser.call(request))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http::StatusCode;
    use tower::ServiceExt;

    use super::*;

    /// Answers 200 with a `reached` header, standing for the services.
    fn services() -> impl Service<
        Request<Body>,
        Response = Response<Body>,
        Error = Infallible,
        Future = std::future::Ready<Result<Response<Body>, Infallible>>,
    > + Clone {
        tower::service_fn(|request: Request<Body>| {
            let mut response = Response::new(Body::empty());
            let media_type = request.headers()[header::CONTENT_TYPE].clone();
            response.headers_mut().insert("reached-as", media_type);
            std::future::ready(Ok::<_, Infallible>(response))
        })
    }

    async fn call(media_type: &str, origin: Option<&str>) -> Response<Body> {
        let origins = ["http://chat.test".parse().unwrap()];
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/recap.v1.InjectionService/GetInjection")
            .header(header::CONTENT_TYPE, media_type);
        if let Some(origin) = origin {
            request = request.header(header::ORIGIN, origin);
        }
        GrpcWebFront::new(&origins)
            .layer(services())
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn plain_grpc_goes_straight_on_with_no_cors_headers() {
        for media_type in ["application/grpc", "application/grpc+proto"] {
            let response = call(media_type, None).await;
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(response.headers()["reached-as"], media_type);
            let cors: Vec<_> = response
                .headers()
                .keys()
                .filter(|name| {
                    name.as_str().starts_with("access-control-") || *name == header::VARY
                })
                .collect();
            assert!(cors.is_empty(), "{media_type}: {cors:?}");
        }
    }

    #[tokio::test]
    async fn grpc_web_is_translated_and_answers_the_allowed_origin() {
        let response = call("application/grpc-web+proto", Some("http://chat.test")).await;
        assert_eq!(response.headers()["reached-as"], "application/grpc");
        assert_eq!(
            response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "http://chat.test"
        );
        let response = call("application/grpc-web+proto", Some("http://evil.test")).await;
        assert!(
            response
                .headers()
                .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
                .is_none()
        );
    }
}
