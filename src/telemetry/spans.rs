//! The spans recapd records for traces, one constructor each, so that their
//! names and attributes are written once (docs/operating.md lists them).
//!
//! Every span here but the RPC's ([`rpc`], made by recapd itself, and not
//! at all with traces off) is a `tracing` span of the
//! target [`TARGET`]: with traces off no subscriber wants it, and making
//! one costs a check of its callsite's cached interest (the fields are not
//! even evaluated). The helpers that would do more work (capture a context,
//! format a link) ask [`traces::enabled`] first.
//!
//! Privacy: no constructor takes text from a chat. Chat ids are added only
//! with `--trace-chat-ids` ([`chat_id`]), text only with `--trace-content`
//! ([`content`]).

use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, SpanId, SpanKind, TraceContextExt, TraceFlags};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{IdGenerator as _, SamplingDecision, ShouldSample as _};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::otlp_wire;
pub use super::otlp_wire::RpcMethodFields;
use super::traces::{self, TARGET};

/// Most links a span carries (a group commit of thousands of calls links
/// to the first ones only).
pub const MAX_LINKS: usize = 32;

/// The server span of one RPC (see [`rpc`]): the OpenTelemetry context
/// holding its span context, made current while the call is polled
/// ([`RpcSpan::enter`]) so that what the call does nests under it, and, when
/// it is sampled, what it records; nothing with traces off.
///
/// recapd makes this span itself rather than through the SDK's tracer: every
/// call has one, and an SDK span (its attribute vector, its shared state, its
/// `SpanData`, then that written as OTLP) cost a sampled call a tenth of its
/// time. Its ids and sampling decision are the ones the SDK's tracer would
/// give (the same id generator and sampler), and it is written as OTLP once,
/// when the call answers ([`RpcSpan::end`]) or, for a call dropped before
/// that, when dropped.
#[derive(Debug)]
pub struct RpcSpan(Option<OpenRpcSpan>);

/// An RPC span not ended yet.
#[derive(Debug)]
struct OpenRpcSpan {
    /// The parent's context with this span's context in it (not remote:
    /// the spans the call makes are its local children).
    context: opentelemetry::Context,
    /// What is written when the span ends; `None` for a span the sampler
    /// dropped.
    recorded: Option<Box<RecordedRpc>>,
}

/// What a sampled RPC span records until it ends.
#[derive(Debug)]
struct RecordedRpc {
    spans: &'static traces::RpcSpans,
    span_context: SpanContext,
    parent: SpanId,
    parent_is_remote: bool,
    method: &'static RpcMethodFields,
    start: SystemTime,
    /// `None` until the call answers (a call dropped before has none).
    code: Option<i64>,
    error: bool,
    error_id: Option<String>,
}

/// The W3C header of a caller's trace context (a constant: no name parsed
/// per call).
static TRACEPARENT: http::HeaderName = http::HeaderName::from_static("traceparent");

/// The server span of one RPC, `label` being "package.Service/Method"
/// (`_OTHER` for a path recapd does not serve) and `method` what its spans
/// share (written once per method), child of the caller's W3C
/// `traceparent` when its headers carry one. A span the sampler drops is
/// still made current (not recorded), so that the spans the call makes
/// follow its decision.
pub fn rpc(
    label: &'static str,
    method: &'static RpcMethodFields,
    headers: &http::HeaderMap,
) -> RpcSpan {
    let Some(spans) = traces::rpc_spans() else {
        return RpcSpan(None);
    };
    let mut parent = opentelemetry::Context::new();
    if headers.contains_key(&TRACEPARENT) {
        let extracted =
            TraceContextPropagator::new().extract(&opentelemetry_http::HeaderExtractor(headers));
        if extracted.span().span_context().is_valid() {
            parent = extracted;
        }
    }
    // As the SDK's tracer starts a span: the parent's trace or a new one,
    // a new span id, the sampler asked with the parent's context.
    let (trace_id, parent_id, parent_is_remote, parent_flags) = {
        let parent_span = parent.span();
        let parent_context = parent_span.span_context();
        if parent_context.is_valid() {
            (
                parent_context.trace_id(),
                parent_context.span_id(),
                parent_context.is_remote(),
                parent_context.trace_flags(),
            )
        } else {
            (
                spans.ids.new_trace_id(),
                SpanId::INVALID,
                false,
                TraceFlags::default(),
            )
        }
    };
    let span_id = spans.ids.new_span_id();
    let sampling =
        spans
            .sampler
            .should_sample(Some(&parent), trace_id, label, &SpanKind::Server, &[], &[]);
    let sampled = sampling.decision == SamplingDecision::RecordAndSample;
    let span_context = SpanContext::new(
        trace_id,
        span_id,
        parent_flags.with_sampled(sampled),
        false,
        sampling.trace_state,
    );
    let recorded = sampled.then(|| {
        Box::new(RecordedRpc {
            spans,
            span_context: span_context.clone(),
            parent: parent_id,
            parent_is_remote,
            method,
            start: SystemTime::now(),
            code: None,
            error: false,
            error_id: None,
        })
    });
    RpcSpan(Some(OpenRpcSpan {
        context: parent.with_remote_span_context(span_context),
        recorded,
    }))
}

impl RpcSpan {
    /// Makes the call's span the current context until the guard drops.
    pub fn enter(&self) -> Option<opentelemetry::ContextGuard> {
        self.0.as_ref().map(|open| open.context.clone().attach())
    }

    /// Records the call's final status: the code, and ERROR for the codes
    /// that are the server's failures (the client's mistakes are not).
    pub fn status(&mut self, code: tonic::Code) {
        let Some(recorded) = self.recorded() else {
            return;
        };
        recorded.code = Some(code as i64);
        recorded.error = matches!(
            code,
            tonic::Code::Internal
                | tonic::Code::Unknown
                | tonic::Code::Unavailable
                | tonic::Code::DataLoss
                | tonic::Code::DeadlineExceeded
                | tonic::Code::Unimplemented
        );
    }

    /// Records the error id of the call's failure (the id its cause was
    /// logged under), so that an id leads to the trace and back.
    pub fn error_id(&mut self, id: &str) {
        if let Some(recorded) = self.recorded() {
            recorded.error_id = Some(id.to_owned());
        }
    }

    fn recorded(&mut self) -> Option<&mut RecordedRpc> {
        self.0.as_mut()?.recorded.as_deref_mut()
    }

    /// Ends the span now and queues it for export (the spawned work that
    /// carries its context may run on; it does not keep the span open).
    pub fn end(&mut self) {
        let Some(recorded) = self.0.take().and_then(|open| open.recorded) else {
            return;
        };
        let end = SystemTime::now();
        recorded.spans.queue(|out| {
            otlp_wire::rpc_span(
                out,
                &otlp_wire::RpcSpanRecord {
                    context: &recorded.span_context,
                    parent: recorded.parent,
                    parent_is_remote: recorded.parent_is_remote,
                    method: recorded.method,
                    start: recorded.start,
                    end,
                    code: recorded.code,
                    error: recorded.error,
                    error_id: recorded.error_id.as_deref(),
                },
            );
        });
    }
}

impl Drop for RpcSpan {
    fn drop(&mut self) {
        self.end();
    }
}

/// The span of a refresh (`refresh_memory` run for one chat), with what
/// triggered it.
pub fn refresh(trigger: &'static str) -> Span {
    tracing::info_span!(target: TARGET, "refresh", recapd.refresh.trigger = trigger, recapd.chat.id = Empty)
}

/// The span of a debounced refresh, run once its chat was quiet: a trace
/// of its own, linked to the events that owed it (`owed_by`).
pub fn debounced_refresh(owed_by: &[SpanContext]) -> Span {
    let span = tracing::info_span!(target: TARGET, "debounced_refresh", recapd.chat.id = Empty);
    for event in owed_by.iter().take(MAX_LINKS) {
        span.add_link(event.clone());
    }
    span
}

/// The span of a batch of `events` published events of one chat served
/// together by one caller's task: under that caller's span, linked to the
/// other traced callers' (`callers`, the current one left out); none for a
/// batch of one caller's events.
pub fn publish_batch<'a>(events: usize, callers: impl Iterator<Item = &'a SpanContext>) -> Span {
    let Some(own) = current() else {
        return Span::none();
    };
    let others: Vec<&SpanContext> = callers
        .filter(|caller| caller.span_id() != own.span_id())
        .take(MAX_LINKS)
        .collect();
    if others.is_empty() {
        return Span::none();
    }
    let span =
        tracing::info_span!(target: TARGET, "publish.batch", recapd.publish.events = int(events));
    for caller in others {
        span.add_link(caller.clone());
    }
    span
}

/// Makes `context` the current trace context until the guard drops (an
/// event applied for a caller other than the task's own); nothing with
/// traces off or no context.
pub fn in_context_of(context: Option<&SpanContext>) -> Option<opentelemetry::ContextGuard> {
    let context = context.filter(|_| traces::enabled())?;
    Some(
        opentelemetry::Context::current()
            .with_remote_span_context(context.clone())
            .attach(),
    )
}

/// The span of one store commit of `groups` write groups, child of the
/// first traced caller's span and linked to the others' (at most
/// [`MAX_LINKS`]); none when no caller was traced.
pub fn commit(groups: usize, callers: &[SpanContext]) -> Span {
    // A commit no traced call waited for (a lease renewal, a claim, a
    // purge) is no trace of its own.
    let Some((first, rest)) = callers.split_first() else {
        return Span::none();
    };
    let span =
        tracing::info_span!(target: TARGET, "store.commit", recapd.commit.groups = int(groups));
    let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(first.clone()));
    for caller in rest.iter().take(MAX_LINKS) {
        span.add_link(caller.clone());
    }
    span
}

/// The span of the hand-off of `injections` new injections of one chat to
/// the `subscribers` streams that may take them (a count, never which).
pub fn push(subscribers: usize, injections: usize) -> Span {
    tracing::info_span!(
        target: TARGET,
        "push",
        recapd.push.subscribers = int(subscribers),
        recapd.push.injections = int(injections),
    )
}

/// The span of one World Info activation; the entries it activated are
/// recorded with [`record_count`] as `recapd.world_info.activated`.
pub fn world_info() -> Span {
    tracing::info_span!(
        target: TARGET,
        "world_info.activate",
        recapd.world_info.activated = Empty,
        recapd.chat.id = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// The span of one recall search (the GenAI conventions' memory search);
/// its hits are recorded with [`record_count`] as `recapd.recall.hits`,
/// and whether vectors took part as `recapd.recall.vectors`.
pub fn recall() -> Span {
    tracing::info_span!(
        target: TARGET,
        "search_memory",
        gen_ai.operation.name = "search_memory",
        recapd.recall.vectors = Empty,
        recapd.recall.hits = Empty,
        recapd.recall.query = Empty,
        recapd.chat.id = Empty,
    )
}

/// The span of one job attempt, linked to the span that queued the job
/// (`queued_by`, a W3C traceparent kept with the job; it ran in another
/// call, maybe on another replica, long before). Recap and lore jobs are
/// memory updates in the GenAI conventions' terms.
pub fn job_attempt(kind: &'static str, attempt: u32, queued_by: &str) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "job.attempt",
        otel.name = %format_args!("job {kind}"),
        gen_ai.operation.name = "update_memory",
        recapd.job.kind = kind,
        recapd.job.attempt = i64::from(attempt),
        recapd.job.outcome = Empty,
        recapd.chat.id = Empty,
    );
    if traces::enabled()
        && let Some(queued_by) = parse_traceparent(queued_by)
    {
        span.add_link(queued_by);
    }
    span
}

/// The client span of one LLM chat-completions call (every resend of the
/// call within it), with the GenAI conventions' request attributes; the
/// answer's are recorded with [`llm_answer`].
pub fn llm_chat(model: &str, server: &(String, Option<u16>), max_tokens: u64) -> Span {
    let model = bounded(model, 200);
    tracing::info_span!(
        target: TARGET,
        "chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.request.max_tokens = i64::try_from(max_tokens).unwrap_or(i64::MAX),
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        server.address = server.0.as_str(),
        server.port = server.1.map(i64::from),
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// The client span of one embeddings call of `inputs` texts.
pub fn llm_embeddings(model: &str, server: &(String, Option<u16>), inputs: usize) -> Span {
    let model = bounded(model, 200);
    tracing::info_span!(
        target: TARGET,
        "embeddings",
        otel.name = %format_args!("embeddings {model}"),
        otel.kind = "client",
        gen_ai.operation.name = "embeddings",
        gen_ai.request.model = model,
        recapd.embeddings.inputs = int(inputs),
        gen_ai.usage.input_tokens = Empty,
        server.address = server.0.as_str(),
        server.port = server.1.map(i64::from),
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// Records an LLM or embeddings answer's usage and model on its span; the
/// finish reasons as the conventions' string array.
pub fn llm_answer(
    span: &Span,
    model: Option<&str>,
    finish_reason: Option<&str>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
) {
    if let Some(model) = model {
        span.record("gen_ai.response.model", bounded(model, 200));
    }
    if let Some(n) = input_tokens {
        span.record(
            "gen_ai.usage.input_tokens",
            i64::try_from(n).unwrap_or(i64::MAX),
        );
    }
    if let Some(n) = output_tokens {
        span.record(
            "gen_ai.usage.output_tokens",
            i64::try_from(n).unwrap_or(i64::MAX),
        );
    }
    if let Some(reason) = finish_reason
        && traces::enabled()
    {
        span.set_attribute(
            "gen_ai.response.finish_reasons",
            opentelemetry::Value::Array(
                vec![opentelemetry::StringValue::from(reason.to_owned())].into(),
            ),
        );
    }
}

/// Marks a span failed with a short, fixed kind as `error.type` (never the
/// error's text, which may quote an endpoint's answer).
pub fn failed(span: &Span, kind: &'static str) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
}

/// Records `value` under `field` (a count such as `recapd.recall.hits`).
pub fn record_count(span: &Span, field: &'static str, value: usize) {
    span.record(field, int(value));
}

/// `n` as a span attribute's integer: `tracing-opentelemetry` exports
/// `i64` fields as integers (and `u64` ones as text).
fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Records the chat's id on `span` when `--trace-chat-ids` allows it.
pub fn chat_id(span: &Span, chat_id: &str) {
    if traces::enabled() && traces::chat_ids() {
        span.record("recapd.chat.id", chat_id);
    }
}

/// Records `text` under `field` when `--trace-content` allows it (fields
/// declared on the span: the LLM spans' `gen_ai.input.messages` and
/// `gen_ai.output.messages`); otherwise nothing, and `text` is not built.
pub fn content(span: &Span, field: &'static str, text: impl FnOnce() -> String) {
    if traces::enabled() && traces::content() && !span.is_disabled() {
        let text = text();
        span.record(field, bounded(&text, traces::MAX_TEXT_BYTES));
    }
}

/// `text` cut to at most `bytes` bytes, at a character boundary.
fn bounded(text: &str, bytes: usize) -> &str {
    if text.len() <= bytes {
        return text;
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The context of the current span, for a link or a parent made later in
/// another task (a commit, a queued job); `None` with traces off or
/// outside any sampled span. Entering a span makes its context the current
/// OpenTelemetry context (`tracing-opentelemetry`'s context activation),
/// and a task wrapped by [`carry`] carries its spawner's.
pub fn current() -> Option<SpanContext> {
    if !traces::enabled() {
        return None;
    }
    let context = opentelemetry::Context::current();
    let span_context = context.span().span_context().clone();
    (span_context.is_valid() && span_context.is_sampled()).then_some(span_context)
}

/// `task` so that, with traces on, it runs in the current trace context:
/// the spans it makes are children of the spawner's span, which it does
/// not keep open. With traces off, `task` as it is.
pub fn carry<F: std::future::Future>(
    task: F,
) -> futures_util::future::Either<opentelemetry::context::WithContext<F>, F> {
    if traces::enabled() {
        futures_util::future::Either::Left(opentelemetry::trace::FutureExt::with_current_context(
            task,
        ))
    } else {
        futures_util::future::Either::Right(task)
    }
}

/// `context` as a W3C `traceparent` header value.
pub fn traceparent(context: &SpanContext) -> String {
    format!(
        "00-{}-{}-{:02x}",
        context.trace_id(),
        context.span_id(),
        context.trace_flags().to_u8()
    )
}

/// The span context a W3C `traceparent` names; `None` for an empty or
/// malformed one.
pub fn parse_traceparent(value: &str) -> Option<SpanContext> {
    if value.is_empty() {
        return None;
    }
    let headers = HashMap::from([("traceparent".to_string(), value.to_string())]);
    let context = TraceContextPropagator::new().extract(&headers);
    let span_context = context.span().span_context().clone();
    span_context.is_valid().then_some(span_context)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cut_at_a_character_boundary() {
        assert_eq!(bounded("abc", 5), "abc");
        assert_eq!(bounded("abcdef", 3), "abc");
        assert_eq!(bounded("aé", 2), "a");
    }

    #[test]
    fn a_traceparent_reads_back_as_written() {
        let written = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = parse_traceparent(written).expect("a valid traceparent");
        assert_eq!(traceparent(&context), written);
        assert!(parse_traceparent("").is_none());
        assert!(parse_traceparent("00-zz-00f067aa0ba902b7-01").is_none());
        assert!(
            parse_traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").is_none()
        );
    }
}
