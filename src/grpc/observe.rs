//! A tower layer that records every RPC's method, status code and latency,
//! and logs each failed one: its method, code and message, and for a
//! failure of the server's own the error id its cause was logged under
//! (see `grpc::status`). With traces on it also makes each call's server
//! span (`telemetry::spans::rpc`), entered while the call runs, and
//! records the call's code (and error id) on it.
//!
//! The status is read from the response headers: tonic sends a handler's
//! error as a trailers-only response with `grpc-status` in the headers, and
//! a success carries no status there (it comes in the trailers as OK). A
//! success is told by that header's absence alone; a failure's status is
//! decoded once, with [`Status::from_header_map`].
//!
//! Per call, the method's label and metric handles are found with one
//! lookup of the path in a table built once (`methods`): no label is
//! allocated and no registry lookup is made once a series is registered.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use pin_project_lite::pin_project;
use tonic::codegen::http;
use tonic::{Code, Status};
use tower::{Layer, Service};

use crate::grpc::status::error_id;
use crate::telemetry::{self, spans};

mod methods;

pub use methods::recap_v1_methods;

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
/// it is recognised by tonic's message). Gives the response's status as
/// [`status_of`] would decode it after the mapping, decoded once.
fn request_too_large_is_resource_exhausted<B: Default>(
    response: &mut http::Response<B>,
) -> Option<Status> {
    let status = status_of(response)?;
    let too_large = status.code() == Code::OutOfRange
        && status
            .message()
            .contains("decoded message length too large");
    if !too_large {
        return Some(status);
    }
    *response = Status::resource_exhausted(REQUEST_TOO_LARGE_MESSAGE).into_http();
    Some(Status::resource_exhausted(REQUEST_TOO_LARGE_MESSAGE))
}

/// The status of an error response, decoded by tonic from its headers;
/// `None` for a response whose status comes later, in the trailers. A
/// response without `grpc-status` (every success) costs one header lookup:
/// tonic decodes a status exactly when that header is there.
fn status_of<B>(response: &http::Response<B>) -> Option<Status> {
    if !response.headers().contains_key(GRPC_STATUS) {
        return None;
    }
    Status::from_header_map(response.headers())
}

/// The header of a trailers-only response's status.
const GRPC_STATUS: http::HeaderName = http::HeaderName::from_static("grpc-status");

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
    ResBody: Default,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = ObservedFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<ReqBody>) -> Self::Future {
        let method = methods::method(request.uri().path());
        let started = Instant::now();
        let span = spans::rpc(method.label, &method.span_fields, request.headers());
        let inner = {
            let _entered = span.enter();
            self.inner.call(request)
        };
        ObservedFuture {
            inner,
            method,
            started,
            span,
        }
    }
}

pin_project! {
    /// An observed call: the inner call's future, then its status logged
    /// and counted (no future boxed per call).
    pub struct ObservedFuture<F> {
        #[pin]
        inner: F,
        method: &'static methods::Method,
        started: Instant,
        // The call's server span (none with traces off), entered while the
        // call runs so that what it does nests under it.
        span: spans::RpcSpan,
    }
}

impl<F, ResBody, Error> Future for ObservedFuture<F>
where
    F: Future<Output = Result<http::Response<ResBody>, Error>>,
    ResBody: Default,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let polled = {
            let _entered = this.span.enter();
            this.inner.poll(cx)
        };
        let mut result = ready!(polled);
        let status = match &mut result {
            Ok(response) => request_too_large_is_resource_exhausted(response),
            Err(_) => Some(Status::internal("transport error")),
        };
        let code = status.as_ref().map_or(Code::Ok, Status::code);
        if let Some(status) = &status {
            log_failure(this.method.label, status);
            if let Some(id) = error_id(status) {
                this.span.error_id(id);
            }
        }
        this.method
            .record(code, this.started.elapsed().as_secs_f64());
        this.span.status(code);
        this.span.end();
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests;
