//! OpenTelemetry traces: the tracer behind recapd's spans, and the export of
//! finished spans over OTLP.
//!
//! recapd's spans are `tracing` spans of the target [`TARGET`] (made by
//! [`super::spans`]), which `tracing-opentelemetry`'s layer turns into
//! OpenTelemetry spans (the log's layer never sees them, so the log reads
//! the same either way), and one span per RPC made with the OpenTelemetry
//! API directly ([`tracer`]). With traces off no layer wants the target, a
//! span costs one check of its callsite's cached interest, and no RPC span
//! is made.
//!
//! Export never blocks a call: a finished span goes into a bounded queue
//! ([`QUEUE_SPANS`]) under a lock, without waiting, and one task sends
//! batches to the collector ([`super::otlp_export`]). A span that finds
//! the queue full, or whose batch the collector did not take (down,
//! refusing, slower than `--otlp-timeout`, or taken but rejected), is
//! counted in `recapd_trace_spans_dropped_total` by reason, and is lost: a
//! collector that is down costs nothing else. This processor is recapd's
//! own rather than the SDK's batching one because that one keeps its count
//! of dropped spans to itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    Sampler, SamplingDecision, SamplingResult, SdkTracerProvider, ShouldSample, SpanData,
    SpanExporter, SpanProcessor,
};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::config::{TraceSampler, TraceSetup};
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

static ENABLED: AtomicBool = AtomicBool::new(false);
/// The tracer of the spans made with the OpenTelemetry API directly (a
/// call's server span); the first installed one (one per process).
static TRACER: OnceLock<opentelemetry_sdk::trace::Tracer> = OnceLock::new();
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

/// The tracer for spans made with the OpenTelemetry API directly; `None`
/// with traces off (or shut down).
pub fn tracer() -> Option<&'static opentelemetry_sdk::trace::Tracer> {
    if enabled() { TRACER.get() } else { None }
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
    let exporter = super::otlp_export::Exporter::new(setup)?;
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
    let (processor, flusher) = ExportingProcessor::start(exporter, &resource, setup.timeout);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_sampler(FollowingLinks(sampler(setup.sampler, setup.ratio)))
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("recapd");
    let _ = TRACER.set(tracer.clone());
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
///
/// The queue is a vector behind a lock that the export task empties in one
/// take, so a span costs a lock and a push on its way in and nothing on its
/// way out; the task is woken twice a batch, not once a span: by the span
/// that finds the queue empty (which arms the batch's deadline) and by the
/// one that fills a batch. (A channel's send, receive and wake per span
/// were a third of what a traced call cost.)
#[derive(Debug)]
struct ExportingProcessor {
    queue: Arc<SpanQueue>,
}

/// Finished spans waiting for export, and how they wake the export task.
#[derive(Debug, Default)]
struct SpanQueue {
    spans: parking_lot::Mutex<Vec<SpanData>>,
    wake: Notify,
    /// Set (under the lock) when the export task takes its last spans: a
    /// span ended later is dropped.
    closed: AtomicBool,
}

impl SpanQueue {
    /// The first [`BATCH_SPANS`] spans queued, in the order they ended
    /// (the rest stay queued, so that at most a batch is held outside the
    /// queue's bound); a queue taken whole starts again with room for a
    /// batch (no growing while spans are pushed).
    fn take(&self) -> Vec<SpanData> {
        let mut spans = self.spans.lock();
        if spans.len() > BATCH_SPANS {
            return spans.drain(..BATCH_SPANS).collect();
        }
        std::mem::replace(&mut *spans, Vec::with_capacity(BATCH_SPANS))
    }

    fn len(&self) -> usize {
        self.spans.lock().len()
    }
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
        timeout: Duration,
    ) -> (ExportingProcessor, Flusher) {
        exporter.set_resource(resource);
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
        if !span.span_context.is_sampled() {
            return;
        }
        let queued = {
            let mut spans = self.queue.spans.lock();
            if self.queue.closed.load(Ordering::Relaxed) {
                Err("shutdown")
            } else if spans.len() >= QUEUE_SPANS {
                Err("queue_full")
            } else {
                spans.push(span);
                Ok(spans.len())
            }
        };
        match queued {
            Ok(1 | BATCH_SPANS) => self.queue.wake.notify_one(),
            Ok(_) => {}
            // The export task has ended: the server is stopping.
            Err("shutdown") => dropped(&DROPPED_SHUTDOWN, "shutdown", 1),
            Err(_) => dropped(&DROPPED_QUEUE_FULL, "queue_full", 1),
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
/// ([`BATCH_DELAY`] after the first span of a batch), until asked to stop.
async fn export_loop<E: SpanExporter>(
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
        let queued = queue.len();
        if queued >= BATCH_SPANS {
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
                Some(done) => return finish(&exporter, &queue, done).await,
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

/// Sends everything queued, stops the queue, shuts the exporter down and
/// answers `done`.
async fn finish<E: SpanExporter>(exporter: &Export<E>, queue: &SpanQueue, done: FlushAndStop) {
    let last = {
        let mut spans = queue.spans.lock();
        queue.closed.store(true, Ordering::Relaxed);
        std::mem::take(&mut *spans)
    };
    exporter.send_all(last).await;
    let _ = exporter.exporter.shutdown();
    let _ = done.send(());
}

/// The exporter, with how long one of its requests may take.
struct Export<E> {
    exporter: E,
    timeout: Duration,
}

impl<E: SpanExporter> Export<E> {
    /// Sends `spans` in batches of at most [`BATCH_SPANS`].
    async fn send_all(&self, mut spans: Vec<SpanData>) {
        while spans.len() > BATCH_SPANS {
            let rest = spans.split_off(BATCH_SPANS);
            self.send(spans).await;
            spans = rest;
        }
        self.send(spans).await;
    }

    /// Sends `batch`, counting its spans as dropped when the collector
    /// does not take them in time.
    async fn send(&self, batch: Vec<SpanData>) {
        if batch.is_empty() {
            return;
        }
        let count = batch.len();
        let outcome = tokio::time::timeout(self.timeout, self.exporter.export(batch)).await;
        let failed = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error),
            Err(_) => Some(OTelSdkError::Timeout(self.timeout)),
        };
        if let Some(error) = failed {
            dropped(&DROPPED_EXPORT, "export", count as u64);
            tracing::debug!(%error, spans = count, "spans not exported");
        }
    }
}

#[cfg(test)]
mod tests;
