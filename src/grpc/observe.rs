//! A tower layer that records every RPC's method, status code and latency.
//!
//! The code is read from the response headers: tonic sends a handler's
//! error as a trailers-only response with `grpc-status` in the headers, and
//! a success carries no status there (it comes in the trailers as OK).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tonic::Code;
use tonic::codegen::http;
use tower::{Layer, Service};

use crate::telemetry;

/// Wraps services with [`Observed`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ObserveLayer;

impl<S> Layer<S> for ObserveLayer {
    type Service = Observed<S>;
    fn layer(&self, inner: S) -> Observed<S> {
        Observed { inner }
    }
}

/// A service whose calls are counted and timed.
#[derive(Debug, Clone)]
pub struct Observed<S> {
    inner: S,
}

/// The method label of a request path: "/recap.v1.EventService/Publish"
/// gives "recap.v1.EventService/Publish". Paths outside the services recapd
/// serves are one label, "unknown", so clients cannot create series at will.
fn method_label(path: &str) -> String {
    const SERVED: [&str; 4] = [
        "recap.v1.",
        "grpc.health.v1.Health/",
        "grpc.reflection.v1.",
        "grpc.reflection.v1alpha.",
    ];
    let method = path.trim_start_matches('/');
    let known = SERVED.iter().any(|prefix| method.starts_with(prefix))
        && method.len() <= 100
        && method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/' || b == b'_');
    if known {
        method.to_owned()
    } else {
        "unknown".to_owned()
    }
}

/// tonic refuses a request over `--max-request-bytes` before any service
/// sees it, with OUT_OF_RANGE; recapd answers every limit with
/// RESOURCE_EXHAUSTED, so this maps that one transport status (and only it:
/// it is recognised by tonic's message).
fn request_too_large_is_resource_exhausted<B>(response: &mut http::Response<B>) {
    let headers = response.headers_mut();
    let out_of_range = headers
        .get("grpc-status")
        .is_some_and(|v| v.as_bytes() == b"11");
    let too_large = headers
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|m| {
            m.replace("%20", " ")
                .contains("decoded message length too large")
        });
    if out_of_range && too_large {
        headers.insert("grpc-status", http::HeaderValue::from_static("8"));
        headers.insert(
            "grpc-message",
            http::HeaderValue::from_static("request%20larger%20than%20--max-request-bytes"),
        );
    }
}

/// The status name of a response (OK unless its headers say otherwise).
fn code_of<B>(response: &http::Response<B>) -> &'static str {
    let code = response
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i32>().ok())
        .map_or(Code::Ok, Code::from);
    code_name(code)
}

/// The status message of an error response, as sent (percent-encoded).
fn message_of<B>(response: &http::Response<B>) -> String {
    response
        .headers()
        .get("grpc-message")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned()
}

fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for Observed<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let method = method_label(request.uri().path());
        let started = Instant::now();
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut result = response.await;
            if let Ok(response) = &mut result {
                request_too_large_is_resource_exhausted(response);
            }
            let (code, message) = match &result {
                Ok(response) => (code_of(response), message_of(response)),
                Err(_) => ("INTERNAL", String::from("transport error")),
            };
            match code {
                "OK" => {}
                "INTERNAL" | "UNAVAILABLE" | "UNKNOWN" | "DATA_LOSS" => {
                    tracing::warn!(%method, code, %message, "rpc failed")
                }
                _ => tracing::info!(%method, code, %message, "rpc refused"),
            }
            metrics::histogram!(telemetry::RPC_DURATION, "method" => method.clone())
                .record(started.elapsed().as_secs_f64());
            metrics::counter!(telemetry::RPC_REQUESTS, "method" => method, "code" => code)
                .increment(1);
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_served_services_get_their_own_label() {
        assert_eq!(
            method_label("/recap.v1.EventService/Publish"),
            "recap.v1.EventService/Publish"
        );
        assert_eq!(
            method_label("/grpc.health.v1.Health/Check"),
            "grpc.health.v1.Health/Check"
        );
        assert_eq!(method_label("/evil.Service/Random123"), "unknown");
        assert_eq!(method_label("/recap.v1.EventService/\u{0}"), "unknown");
    }

    #[test]
    fn only_tonics_size_refusal_becomes_resource_exhausted() {
        let mut too_large = http::Response::new(());
        too_large
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("11"));
        too_large.headers_mut().insert(
            "grpc-message",
            http::HeaderValue::from_static(
                "Error,%20decoded%20message%20length%20too%20large:%20found%205000%20bytes",
            ),
        );
        request_too_large_is_resource_exhausted(&mut too_large);
        assert_eq!(code_of(&too_large), "RESOURCE_EXHAUSTED");
        let mut other = http::Response::new(());
        other
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("11"));
        request_too_large_is_resource_exhausted(&mut other);
        assert_eq!(code_of(&other), "OUT_OF_RANGE");
    }

    #[test]
    fn a_response_without_status_header_is_ok_and_with_one_is_named() {
        let ok = http::Response::new(());
        assert_eq!(code_of(&ok), "OK");
        let mut failed = http::Response::new(());
        failed
            .headers_mut()
            .insert("grpc-status", http::HeaderValue::from_static("5"));
        assert_eq!(code_of(&failed), "NOT_FOUND");
    }
}
