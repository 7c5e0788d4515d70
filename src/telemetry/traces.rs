//! OpenTelemetry traces: the tracer behind recapd's spans, and the export of
//! finished spans over OTLP.
//!
//! recapd's spans are `tracing` spans of the target [`TARGET`] (made by
//! [`super::spans`]), which `tracing-opentelemetry`'s layer turns into
//! OpenTelemetry spans (the log's layer never sees them, so the log reads
//! the same either way), and one server span per RPC, which recapd makes
//! itself ([`rpc_spans`]: ids and sampling as the SDK's tracer would give
//! them, written as OTLP once, when the call answers). With traces off no
//! layer wants the target, a span costs one check of its callsite's cached
//! interest, and no RPC span is made.
//!
//! Export never blocks a call: a finished span is written as OTLP into a
//! bounded queue ([`queue`]) under a lock, without waiting, and one task
//! sends batches to the collector ([`super::otlp_export`]). A span that
//! finds the queue full, or whose batch the collector did not take (down,
//! refusing, slower than `--otlp-timeout`, or taken but rejected), is
//! counted in `recapd_trace_spans_dropped_total` by reason, and is lost: a
//! collector that is down costs nothing else. This processor is recapd's
//! own rather than the SDK's batching one because that one keeps its count
//! of dropped spans to itself.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    RandomIdGenerator, Sampler, SamplingDecision, SamplingResult, SdkTracerProvider, ShouldSample,
    SpanData, SpanProcessor,
};
use tokio::sync::{mpsc, oneshot};

use crate::config::{TraceSampler, TraceSetup};
use crate::telemetry::Registered;

/// Most bytes of a text attribute (`--trace-content`): a batch of long
/// prompts must stay under a collector's request limit.
pub const MAX_TEXT_BYTES: usize = 32 * 1024;

/// The `tracing` target of every span meant for traces.
pub const TARGET: &str = "recapd::traces";

pub mod queue;

use queue::{NotQueued, SpanQueue, Written};

/// How long a span may wait in the queue before its batch is sent.
pub const BATCH_DELAY: Duration = Duration::from_millis(500);

static ENABLED: AtomicBool = AtomicBool::new(false);
/// What RPC server spans are made with; the first installed (one per
/// process).
static RPC_SPANS: OnceLock<RpcSpans> = OnceLock::new();
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

/// Counts `spans` a collector took but rejected as dropped for export.
pub(super) fn count_dropped_export(spans: u64) {
    dropped(&DROPPED_EXPORT, "export", spans);
}

/// Whether spans are recorded (an endpoint is configured): code that would
/// do work only for a span (capture a context, format an attribute) asks
/// this first.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// What an RPC's server span is made with (see `spans::rpc`): the
/// configured sampler, the SDK's id generator and the export queue, so that
/// the span has the ids and the sampling decision the SDK's tracer would
/// give it and is queued as OTLP when it ends, without an SDK span in
/// between (which cost a sampled call a tenth of its time).
#[derive(Debug)]
pub struct RpcSpans {
    /// The configured sampler (it adds no attribute: none of the SDK's
    /// samplers does).
    pub sampler: FollowingLinks,
    /// New trace and span ids.
    pub ids: RandomIdGenerator,
    queue: Arc<SpanQueue>,
}

impl RpcSpans {
    /// Queues a finished span written by `write` (see
    /// [`super::otlp_wire::rpc_span`]); a span the queue cannot take is
    /// counted as dropped.
    pub fn queue(&self, write: impl FnOnce(&mut Vec<u8>)) {
        queue_span(&self.queue, write);
    }
}

/// What RPC server spans are made with; `None` with traces off (or shut
/// down).
pub fn rpc_spans() -> Option<&'static RpcSpans> {
    if enabled() { RPC_SPANS.get() } else { None }
}

/// Queues one span written by `write`, counting it as dropped when the
/// queue cannot take it.
fn queue_span(queue: &SpanQueue, write: impl FnOnce(&mut Vec<u8>)) {
    match queue.push(write) {
        Ok(()) => {}
        Err(NotQueued::Shutdown) => dropped(&DROPPED_SHUTDOWN, "shutdown", 1),
        Err(NotQueued::Full) => dropped(&DROPPED_QUEUE_FULL, "queue_full", 1),
    }
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
    // Every span of recapd's comes from this one scope: a request holds one
    // `ScopeSpans`.
    let scope = InstrumentationScope::builder("recapd").build();
    let writer = super::otlp_wire::RequestWriter::new(&resource, &scope);
    let exporter = super::otlp_export::Exporter::new(setup, writer)?;
    let (processor, flusher) = ExportingProcessor::start(exporter, setup.timeout);
    let sampler = FollowingLinks(sampler(setup.sampler, setup.ratio));
    RPC_SPANS
        .set(RpcSpans {
            sampler: sampler.clone(),
            ids: RandomIdGenerator::default(),
            queue: processor.queue.clone(),
        })
        .map_err(|_| "traces are installed once per process".to_owned())?;
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(sampler)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer_with_scope(scope);
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
pub struct FollowingLinks(Sampler);

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

/// What the export task is asked besides spans: send everything queued
/// before the deadline, answer, and end.
type FlushAndStop = (oneshot::Sender<()>, tokio::time::Instant);

/// The span processor: finished spans written as OTLP into a bounded
/// queue ([`SpanQueue`]), never waiting.
///
/// A span costs a lock and its bytes on its way in and nothing on its way
/// out; the export task is woken twice a batch, not once a span. (A
/// channel's send, receive and wake per span were a third of what a traced
/// call cost.) Every span comes from the provider's one tracer, whose scope
/// the [`super::otlp_wire::RequestWriter`] writes.
#[derive(Debug)]
struct ExportingProcessor {
    queue: Arc<SpanQueue>,
}

/// The handle that stops the export task.
#[derive(Debug)]
struct Flusher {
    commands: mpsc::UnboundedSender<FlushAndStop>,
}

/// Where batches go: the OTLP exporter, or a test's recorder.
pub trait Sink: Send + Sync + 'static {
    /// Sends `batch` (spans written by [`super::otlp_wire`]), done when the
    /// collector has answered; an error is a line for the debug log.
    fn send(&self, batch: Written) -> impl Future<Output = Result<(), String>> + Send;
}

impl ExportingProcessor {
    /// The processor and its flusher; the export task runs on the current
    /// Tokio runtime.
    fn start<E: Sink>(exporter: E, timeout: Duration) -> (ExportingProcessor, Flusher) {
        let (commands, asked) = mpsc::unbounded_channel();
        let queue = Arc::new(SpanQueue::default());
        tokio::spawn(export_loop(
            Export { exporter, timeout },
            queue.clone(),
            asked,
        ));
        (ExportingProcessor { queue }, Flusher { commands })
    }
}

impl SpanProcessor for ExportingProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if span.span_context.is_sampled() {
            queue_span(&self.queue, |out| super::otlp_wire::span_data(out, &span));
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
    /// Asks the export task to send what is queued within `within`, and
    /// waits for it (a little longer than `within`: the task counts what
    /// it could not send before it answers).
    async fn flush_and_stop(self, within: Duration) {
        let (done, finished) = oneshot::channel();
        let deadline = tokio::time::Instant::now() + within;
        if self.commands.send((done, deadline)).is_ok() {
            let _ = tokio::time::timeout(within + Duration::from_millis(100), finished).await;
        }
    }
}

/// Sends batches of spans as they fill ([`queue::BATCH_SPANS`] or
/// [`queue::BATCH_BYTES`]) or age ([`BATCH_DELAY`] after the task finds
/// spans waiting: the first span of a batch, or what a full batch sent
/// left behind), until asked to stop.
async fn export_loop<E: Sink>(
    exporter: Export<E>,
    queue: Arc<SpanQueue>,
    mut asked: mpsc::UnboundedReceiver<FlushAndStop>,
) {
    let mut asking = true;
    // When the open batch's first span has waited long enough; armed when
    // the task finds spans queued (the span that finds the queue empty
    // wakes it, or leaves a permit if it came since).
    let deadline = tokio::time::sleep(BATCH_DELAY);
    tokio::pin!(deadline);
    let mut armed = false;
    loop {
        let (queued, full) = queue.state();
        if full {
            exporter.send(queue.take()).await;
            armed = false;
            continue;
        }
        if queued > 0 && !armed {
            deadline
                .as_mut()
                .reset(tokio::time::Instant::now() + BATCH_DELAY);
            armed = true;
        }
        tokio::select! {
            biased;
            command = asked.recv(), if asking => match command {
                Some(command) => return finish(&exporter, &queue, command).await,
                None => asking = false,
            },
            () = queue.wake.notified() => {}
            () = &mut deadline, if armed => {
                exporter.send(queue.take()).await;
                armed = false;
            }
        }
    }
}

/// Closes the queue, sends what it held until `deadline` (what is left then
/// is counted as dropped at shutdown) and answers `done`.
async fn finish<E: Sink>(exporter: &Export<E>, queue: &SpanQueue, (done, deadline): FlushAndStop) {
    let mut last = queue.close();
    while let Some(batch) = last.pop_front() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            let spans = batch.spans() + last.iter().map(Written::spans).sum::<usize>();
            dropped(&DROPPED_SHUTDOWN, "shutdown", spans as u64);
            break;
        }
        exporter.send_within(Some(batch), left).await;
    }
    let _ = done.send(());
}

/// The exporter, with how long one of its requests may take.
struct Export<E> {
    exporter: E,
    timeout: Duration,
}

impl<E: Sink> Export<E> {
    /// Sends `batch`, counting its spans as dropped when the collector
    /// does not take them in time.
    async fn send(&self, batch: Option<Written>) {
        self.send_within(batch, self.timeout).await;
    }

    /// [`Export::send`], waiting at most `within` (at most the timeout).
    async fn send_within(&self, batch: Option<Written>, within: Duration) {
        // A batch a refused span opened may have stayed empty.
        let Some(batch) = batch.filter(|batch| batch.spans() > 0) else {
            return;
        };
        let within = within.min(self.timeout);
        let count = batch.spans();
        let failed = match tokio::time::timeout(within, self.exporter.send(batch)).await {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error),
            Err(_) => Some(format!("no answer within {within:?}")),
        };
        if let Some(error) = failed {
            dropped(&DROPPED_EXPORT, "export", count as u64);
            tracing::debug!(%error, spans = count, "spans not exported");
        }
    }
}

#[cfg(test)]
mod tests;
