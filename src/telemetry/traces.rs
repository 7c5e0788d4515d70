//! OpenTelemetry traces: the tracer behind recapd's spans, and the export of
//! finished spans over OTLP.
//!
//! recapd's spans are `tracing` spans of the target [`TARGET`] (made by
//! [`super::spans`]); with traces on, `tracing-opentelemetry`'s layer turns
//! them into OpenTelemetry spans, and the log's layer never sees them (so
//! the log reads the same either way). With traces off no layer wants the
//! target, and a span costs one check of its callsite's cached interest.
//!
//! Export never blocks a call: a finished span goes into a bounded queue
//! ([`QUEUE_SPANS`]) with `try_send`, and one task sends batches to the
//! collector. A span that finds the queue full, or whose batch the collector
//! did not take (down, refusing, slower than [`EXPORT_TIMEOUT`]), is counted
//! in `recapd_trace_spans_dropped_total` by reason, and is lost: a
//! collector that is down costs nothing else. This processor is recapd's
//! own rather than the SDK's batching one because that one keeps its count
//! of dropped spans to itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    Sampler, SamplingDecision, SamplingResult, SdkTracerProvider, ShouldSample, SpanData,
    SpanExporter, SpanProcessor,
};
use tokio::sync::{mpsc, oneshot};

use crate::config::{OtlpProtocol, TraceSampler, TraceSetup};
use crate::telemetry::Registered;

/// Most bytes of a text attribute (`--trace-content`): a batch of long
/// prompts must stay under a collector's request limit.
pub const MAX_TEXT_BYTES: usize = 32 * 1024;

/// The `tracing` target of every span meant for traces.
pub const TARGET: &str = "recapd::traces";

/// Finished spans waiting for export, at most; past it spans are dropped.
pub const QUEUE_SPANS: usize = 8192;
/// Spans sent in one export request, at most.
pub const BATCH_SPANS: usize = 512;
/// How long a span may wait in the queue before its batch is sent.
pub const BATCH_DELAY: Duration = Duration::from_millis(500);
/// How long one export request may take before its spans count as dropped.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

static ENABLED: AtomicBool = AtomicBool::new(false);
static CONTENT: AtomicBool = AtomicBool::new(false);
static CHAT_IDS: AtomicBool = AtomicBool::new(false);

static DROPPED_QUEUE_FULL: Registered<metrics::Counter> = Registered::new();
static DROPPED_EXPORT: Registered<metrics::Counter> = Registered::new();
static DROPPED_SHUTDOWN: Registered<metrics::Counter> = Registered::new();

/// Counts `spans` dropped for `reason` (see [`super::TRACE_SPANS_DROPPED`]).
fn dropped(cell: &Registered<metrics::Counter>, reason: &'static str, spans: u64) {
    cell.with(
        || metrics::counter!(super::TRACE_SPANS_DROPPED, "reason" => reason),
        |counter| counter.increment(spans),
    );
}

/// Whether spans are recorded (an endpoint is configured): code that would
/// do work only for a span (capture a context, format an attribute) asks
/// this first.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether spans may carry text (`--trace-content`).
pub fn content() -> bool {
    CONTENT.load(Ordering::Relaxed)
}

/// Whether spans may carry chat ids (`--trace-chat-ids`).
pub fn chat_ids() -> bool {
    CHAT_IDS.load(Ordering::Relaxed)
}

/// The installed tracer: kept by the app so that shutdown sends what is
/// still queued.
#[derive(Debug)]
pub struct Traces {
    provider: SdkTracerProvider,
    flusher: Flusher,
}

/// The `tracing` layer that turns recapd's spans into OpenTelemetry spans;
/// give it the filter [`TARGET`] (see `main`).
pub type TraceLayer<S> =
    tracing_opentelemetry::OpenTelemetryLayer<S, opentelemetry_sdk::trace::Tracer>;

/// Builds the exporter, the processor and the tracer from `setup`, and
/// turns span recording on. Must run inside the Tokio runtime (the export
/// task and the gRPC channel start on it). An error is one line for the
/// operator.
pub fn install<S>(setup: &TraceSetup) -> Result<(TraceLayer<S>, Traces), String>
where
    S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
{
    let exporter = exporter(setup.protocol, &setup.endpoint)?;
    let mut attributes: Vec<KeyValue> = setup
        .resource_attributes
        .iter()
        .map(|(key, value)| KeyValue::new(key.clone(), value.clone()))
        .collect();
    attributes.push(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    let resource = opentelemetry_sdk::Resource::builder_empty()
        .with_attributes(attributes)
        .with_service_name(setup.service_name.clone())
        .build();
    let (processor, flusher) = ExportingProcessor::start(exporter, &resource);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(FollowingLinks(sampler(setup.sampler, setup.ratio)))
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("recapd");
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false);
    CONTENT.store(setup.content, Ordering::Relaxed);
    CHAT_IDS.store(setup.chat_ids, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Relaxed);
    Ok((layer, Traces { provider, flusher }))
}

/// The configured sampler, except that a span starting a trace of its own
/// with a link to a sampled span is sampled: a job's attempt and a
/// debounced refresh, which run later in traces of their own, are kept
/// whenever the call or event they link to was (the SDK's samplers read no
/// link), so a traced call's work is never half missing.
#[derive(Debug, Clone)]
struct FollowingLinks(Sampler);

impl ShouldSample for FollowingLinks {
    fn should_sample(
        &self,
        parent_context: Option<&opentelemetry::Context>,
        trace_id: opentelemetry::trace::TraceId,
        name: &str,
        span_kind: &opentelemetry::trace::SpanKind,
        attributes: &[KeyValue],
        links: &[opentelemetry::trace::Link],
    ) -> SamplingResult {
        let has_parent = parent_context.is_some_and(|parent| parent.has_active_span());
        if !has_parent && links.iter().any(|link| link.span_context.is_sampled()) {
            return SamplingResult {
                decision: SamplingDecision::RecordAndSample,
                attributes: Vec::new(),
                trace_state: Default::default(),
            };
        }
        self.0
            .should_sample(parent_context, trace_id, name, span_kind, attributes, links)
    }
}

impl Traces {
    /// Sends what is queued (waiting at most `within`), then stops the
    /// export task. Spans ended after this are dropped.
    pub async fn shutdown(self, within: Duration) {
        ENABLED.store(false, Ordering::Relaxed);
        self.flusher.flush_and_stop(within).await;
        // The processor's own shutdown has nothing left to do; the
        // provider's is what makes the tracer a no-op from here on.
        let _ = tokio::task::spawn_blocking(move || self.provider.shutdown()).await;
    }
}

/// The OTLP exporter for `protocol`: gRPC to `endpoint` as given, HTTP to
/// `endpoint` + `/v1/traces` (the spec's rule for the base endpoint).
fn exporter(
    protocol: OtlpProtocol,
    endpoint: &str,
) -> Result<opentelemetry_otlp::SpanExporter, String> {
    let built = match protocol {
        OtlpProtocol::Grpc => {
            let mut builder = opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint)
                .with_timeout(EXPORT_TIMEOUT);
            if endpoint.starts_with("https://") {
                builder = builder
                    .with_tls_config(tonic::transport::ClientTlsConfig::new().with_native_roots());
            }
            builder.build()
        }
        OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => {
            let client = reqwest::Client::builder()
                .use_preconfigured_tls(crate::llm::tls_config(
                    endpoint.starts_with("https://"),
                    "--otlp-endpoint",
                )?)
                .timeout(EXPORT_TIMEOUT)
                .build()
                .map_err(|error| {
                    format!("--otlp-endpoint: cannot build the HTTP client: {error}")
                })?;
            let wire = if protocol == OtlpProtocol::HttpJson {
                opentelemetry_otlp::Protocol::HttpJson
            } else {
                opentelemetry_otlp::Protocol::HttpBinary
            };
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(client)
                .with_protocol(wire)
                .with_endpoint(format!("{}/v1/traces", endpoint.trim_end_matches('/')))
                .with_timeout(EXPORT_TIMEOUT)
                .build()
        }
    };
    built.map_err(|error| format!("--otlp-endpoint '{endpoint}': {error}"))
}

/// The sampler `OTEL_TRACES_SAMPLER` names, with its ratio.
fn sampler(choice: TraceSampler, ratio: f64) -> Sampler {
    match choice {
        TraceSampler::AlwaysOn => Sampler::AlwaysOn,
        TraceSampler::AlwaysOff => Sampler::AlwaysOff,
        TraceSampler::TraceIdRatio => Sampler::TraceIdRatioBased(ratio),
        TraceSampler::ParentBasedAlwaysOn => Sampler::ParentBased(Box::new(Sampler::AlwaysOn)),
        TraceSampler::ParentBasedAlwaysOff => Sampler::ParentBased(Box::new(Sampler::AlwaysOff)),
        TraceSampler::ParentBasedTraceIdRatio => {
            Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(ratio)))
        }
    }
}

/// What the export task is asked besides spans: send everything queued,
/// answer, and end.
type FlushAndStop = oneshot::Sender<()>;

/// The span processor: finished spans into a bounded queue, never waiting.
#[derive(Debug)]
struct ExportingProcessor {
    spans: mpsc::Sender<SpanData>,
}

/// The handle that stops the export task.
#[derive(Debug)]
struct Flusher {
    commands: mpsc::UnboundedSender<FlushAndStop>,
}

impl ExportingProcessor {
    /// The processor and its flusher; the export task runs on the current
    /// Tokio runtime.
    fn start<E: SpanExporter + 'static>(
        mut exporter: E,
        resource: &opentelemetry_sdk::Resource,
    ) -> (ExportingProcessor, Flusher) {
        exporter.set_resource(resource);
        let (spans, queued) = mpsc::channel(QUEUE_SPANS);
        let (commands, asked) = mpsc::unbounded_channel();
        tokio::spawn(export_loop(exporter, queued, asked));
        (ExportingProcessor { spans }, Flusher { commands })
    }
}

impl SpanProcessor for ExportingProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        match self.spans.try_send(span) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                dropped(&DROPPED_QUEUE_FULL, "queue_full", 1)
            }
            // The export task has ended: the server is stopping.
            Err(mpsc::error::TrySendError::Closed(_)) => dropped(&DROPPED_SHUTDOWN, "shutdown", 1),
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        // Batches leave within BATCH_DELAY on their own; shutdown flushes
        // (`Traces::shutdown`), asynchronously, as nothing here may block.
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

impl Flusher {
    async fn flush_and_stop(self, within: Duration) {
        let (done, finished) = oneshot::channel();
        if self.commands.send(done).is_ok() {
            let _ = tokio::time::timeout(within, finished).await;
        }
    }
}

/// Sends batches of spans as they fill ([`BATCH_SPANS`]) or age
/// ([`BATCH_DELAY`]), until asked to stop or every sender is gone.
async fn export_loop<E: SpanExporter>(
    exporter: E,
    mut queued: mpsc::Receiver<SpanData>,
    mut asked: mpsc::UnboundedReceiver<FlushAndStop>,
) {
    let mut batch = Vec::with_capacity(BATCH_SPANS);
    let mut asking = true;
    // When the batch's first span has waited long enough (armed when it
    // comes).
    let deadline = tokio::time::sleep(BATCH_DELAY);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            biased;
            command = asked.recv(), if asking => match command {
                Some(done) => return finish(&exporter, batch, queued, done).await,
                None => asking = false,
            },
            span = queued.recv() => match span {
                Some(span) => {
                    if batch.is_empty() {
                        deadline.as_mut().reset(tokio::time::Instant::now() + BATCH_DELAY);
                    }
                    batch.push(span);
                    if batch.len() >= BATCH_SPANS {
                        export(&exporter, &mut batch).await;
                    }
                }
                None => return export(&exporter, &mut batch).await,
            },
            () = &mut deadline, if !batch.is_empty() => export(&exporter, &mut batch).await,
        }
    }
}

/// Sends `batch` and everything still queued, shuts the exporter down and
/// answers `done`.
async fn finish<E: SpanExporter>(
    exporter: &E,
    mut batch: Vec<SpanData>,
    mut queued: mpsc::Receiver<SpanData>,
    done: FlushAndStop,
) {
    queued.close();
    while let Ok(span) = queued.try_recv() {
        batch.push(span);
        if batch.len() >= BATCH_SPANS {
            export(exporter, &mut batch).await;
        }
    }
    export(exporter, &mut batch).await;
    let _ = exporter.shutdown();
    let _ = done.send(());
}

/// Sends `batch` (emptied), counting its spans as dropped when the
/// collector does not take them in time.
async fn export<E: SpanExporter>(exporter: &E, batch: &mut Vec<SpanData>) {
    if batch.is_empty() {
        return;
    }
    let spans = std::mem::take(batch);
    let count = spans.len();
    let outcome = tokio::time::timeout(EXPORT_TIMEOUT, exporter.export(spans)).await;
    let failed = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(error)) => Some(error),
        Err(_) => Some(OTelSdkError::Timeout(EXPORT_TIMEOUT)),
    };
    if let Some(error) = failed {
        dropped(&DROPPED_EXPORT, "export", count as u64);
        tracing::debug!(%error, spans = count, "spans not exported");
    }
}
