//! `otlp-sink`: a collector stand-in for `bench/traces.sh` (issue 47). It
//! accepts spans over OTLP/gRPC (`TraceService/Export`) and OTLP/HTTP
//! (`POST /v1/traces`, protobuf bodies) on one port, keeps nothing but
//! their count, and answers every export with success, so what a benchmark
//! measures is recapd's side of tracing, not a collector's.
//!
//! The count (`spans=N exports=M`) is printed on SIGTERM or SIGINT and, with
//! `--count-file`, rewritten there every `--every-ms`: the script reads it
//! between figures for the spans received per call.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message;
use tokio::signal::unix::{SignalKind, signal};
use tonic::{Request, Response, Status};

#[derive(clap::Args)]
pub struct OtlpSink {
    /// Where to listen: OTLP/gRPC and OTLP/HTTP on the same port.
    #[arg(long)]
    listen: SocketAddr,
    /// A file rewritten with `spans=N exports=M` every `--every-ms`.
    #[arg(long)]
    count_file: Option<PathBuf>,
    #[arg(long, default_value_t = 100)]
    every_ms: u64,
}

/// Spans and export requests received so far.
#[derive(Default)]
struct Counts {
    spans: AtomicU64,
    exports: AtomicU64,
}

impl Counts {
    fn add(&self, request: &ExportTraceServiceRequest) {
        let spans: usize = request
            .resource_spans
            .iter()
            .flat_map(|resource| &resource.scope_spans)
            .map(|scope| scope.spans.len())
            .sum();
        self.spans.fetch_add(spans as u64, Ordering::Relaxed);
        self.exports.fetch_add(1, Ordering::Relaxed);
    }

    fn line(&self) -> String {
        format!(
            "spans={} exports={}",
            self.spans.load(Ordering::Relaxed),
            self.exports.load(Ordering::Relaxed)
        )
    }
}

/// The gRPC side: the protocol's generated `TraceService`.
struct Grpc(Arc<Counts>);

#[tonic::async_trait]
impl TraceService for Grpc {
    async fn export(
        &self,
        request: Request<ExportTraceServiceRequest>,
    ) -> Result<Response<ExportTraceServiceResponse>, Status> {
        self.0.add(request.get_ref());
        Ok(Response::new(ExportTraceServiceResponse::default()))
    }
}

/// The HTTP side: `POST /v1/traces` with a protobuf `ExportTraceServiceRequest`.
async fn http_export(
    State(counts): State<Arc<Counts>>,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    let is = |name, value: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .is_none_or(|v| v.eq_ignore_ascii_case(value))
    };
    // Only uncompressed protobuf, which is what recapd sends; anything else
    // is refused rather than miscounted.
    if !is(header::CONTENT_TYPE, "application/x-protobuf")
        || !is(header::CONTENT_ENCODING, "identity")
    {
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, Vec::new()).into_response();
    }
    match ExportTraceServiceRequest::decode(body) {
        Ok(request) => {
            counts.add(&request);
            (
                [(header::CONTENT_TYPE, "application/x-protobuf")],
                ExportTraceServiceResponse::default().encode_to_vec(),
            )
                .into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

/// Writes the count to `path` whole (a new file renamed over the old one),
/// so a reader never sees half a line.
fn write_count(path: &Path, line: &str) -> std::io::Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, format!("{line}\n"))?;
    std::fs::rename(&partial, path)
}

pub async fn otlp_sink(args: OtlpSink) -> Result<(), Box<dyn std::error::Error>> {
    let counts = Arc::new(Counts::default());
    let http = axum::Router::new()
        .route("/v1/traces", post(http_export))
        .layer(DefaultBodyLimit::max(64 << 20))
        .with_state(counts.clone());
    let routes = tonic::service::Routes::from(http)
        .add_service(TraceServiceServer::new(Grpc(counts.clone())));

    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let stop = async move {
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
    };

    if let Some(path) = args.count_file.clone() {
        let counts = counts.clone();
        let every = Duration::from_millis(args.every_ms.max(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                if let Err(e) = write_count(&path, &counts.line()) {
                    eprintln!("otlp-sink: {}: {e}", path.display());
                }
            }
        });
    }

    eprintln!("otlp-sink on {}", args.listen);
    // HTTP/1.1 for OTLP/HTTP clients, HTTP/2 for gRPC, on the same port.
    tonic::transport::Server::builder()
        .accept_http1(true)
        .add_routes(routes)
        .serve_with_shutdown(args.listen, stop)
        .await?;

    let line = counts.line();
    if let Some(path) = &args.count_file {
        write_count(path, &line)?;
    }
    println!("{line}");
    Ok(())
}
