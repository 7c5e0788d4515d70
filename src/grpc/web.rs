//! gRPC-Web for browsers on the gRPC listener: which web origins may call
//! it, as a CORS policy. The translation itself is `tonic_web`'s
//! [`GrpcWebLayer`](tonic_web::GrpcWebLayer), which the app puts in front
//! of every service.
//!
//! A browser calling from another origin first asks (a preflight,
//! `OPTIONS`) whether it may; the answer allows it only for the origins of
//! `--grpc-web-allowed-origins`, so for any other origin the browser never
//! sends the call. Clients that are not browsers send no preflight and
//! need no origin.

use std::time::Duration;

use http::Method;
use http::header::{self, HeaderName, HeaderValue};
use tower_http::cors::{AllowOrigin, CorsLayer};

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
pub fn cors(origins: &[AllowedOrigin]) -> CorsLayer {
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
