//! A tower layer that records every RPC's method, status code and latency,
//! and logs each failed one: its method, code and message, and for a
//! failure of the server's own the error id its cause was logged under
//! (see `grpc::status`).
//!
//! The status is decoded from the response headers with
//! [`Status::from_header_map`]: tonic sends a handler's error as a
//! trailers-only response with `grpc-status` in the headers, and a success
//! carries no status there (it comes in the trailers as OK).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use prost::Message as _;
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::{Layer, Service};

use crate::grpc::pb;
use crate::grpc::status::error_id;
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

/// The method label of every RPC of the `recap.v1` services, read from the
/// descriptors compiled from the proto (so the list cannot drift from it),
/// in proto order: "recap.v1.EventService/Publish", ...
pub fn recap_v1_methods() -> Vec<String> {
    let set = match prost_types::FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET) {
        Ok(set) => set,
        Err(error) => {
            tracing::warn!(%error, "cannot read the compiled recap.v1 descriptors");
            return Vec::new();
        }
    };
    let mut methods = Vec::new();
    for file in set.file.iter().filter(|file| file.package() == "recap.v1") {
        for service in &file.service {
            for method in &service.method {
                methods.push(format!("recap.v1.{}/{}", service.name(), method.name()));
            }
        }
    }
    methods
}

/// Shows `recapd_rpc_requests_total{method, code="OK"}` at 0 for every
/// `recap.v1` method, so a scrape lists every method before its first call
/// (counters only ever go up: this never lowers a count already recorded).
pub fn register_rpc_series() {
    for method in recap_v1_methods() {
        metrics::counter!(telemetry::RPC_REQUESTS, "method" => method, "code" => code_name(Code::Ok))
            .increment(0);
    }
}

/// The message of the answer to a request over `--max-request-bytes`.
pub const REQUEST_TOO_LARGE_MESSAGE: &str = "request larger than --max-request-bytes";

/// tonic refuses a request over `--max-request-bytes` before any service
/// sees it, with OUT_OF_RANGE; recapd answers every limit with
/// RESOURCE_EXHAUSTED, so this maps that one transport status (and only it:
/// it is recognised by tonic's message).
fn request_too_large_is_resource_exhausted<B: Default>(response: &mut http::Response<B>) {
    let too_large = status_of(response).is_some_and(|status| {
        status.code() == Code::OutOfRange
            && status
                .message()
                .contains("decoded message length too large")
    });
    if too_large {
        *response = Status::resource_exhausted(REQUEST_TOO_LARGE_MESSAGE).into_http();
    }
}

/// The status of an error response, decoded by tonic from its headers;
/// `None` for a response whose status comes later, in the trailers.
fn status_of<B>(response: &http::Response<B>) -> Option<Status> {
    Status::from_header_map(response.headers())
}

/// A code's name as the gRPC spec spells it (tonic's `Debug` is camel
/// case): the `code` label of the request counter and of log lines.
pub(crate) fn code_name(code: Code) -> &'static str {
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

/// Logs a failed RPC: its method, code and message, and for a failure of
/// the server's own, its error id (`error_id`, the field the cause was
/// logged under by `grpc::status`), so one grep of the id finds both lines.
fn log_failure(method: &str, status: &Status) {
    let name = code_name(status.code());
    let message = status.message();
    match status.code() {
        Code::Ok => {}
        Code::Internal | Code::Unavailable | Code::Unknown | Code::DataLoss => {
            let error_id = error_id(status).map(tracing::field::display);
            tracing::warn!(%method, code = name, %message, error_id, "rpc failed")
        }
        _ => tracing::info!(%method, code = name, %message, "rpc refused"),
    }
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for Observed<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    ResBody: Default,
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
            let status = match &result {
                Ok(response) => status_of(response),
                Err(_) => Some(Status::internal("transport error")),
            };
            let code = status.as_ref().map_or(Code::Ok, Status::code);
            let name = code_name(code);
            if let Some(status) = &status {
                log_failure(&method, status);
            }
            metrics::histogram!(telemetry::RPC_DURATION, "method" => method.clone())
                .record(started.elapsed().as_secs_f64());
            metrics::counter!(telemetry::RPC_REQUESTS, "method" => method, "code" => name)
                .increment(1);
            result
        })
    }
}

#[cfg(test)]
mod tests;
