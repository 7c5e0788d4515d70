//! The wire writer against `opentelemetry-proto`'s own conversion: both
//! decoded with the generated types must be the same message.

use std::borrow::Cow;
use std::time::{Duration, UNIX_EPOCH};

use opentelemetry::trace::{
    Event, Link, SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};
use prost::Message as _;

use super::RequestWriter;

fn context(trace: u128, span: u64, sampled: bool, remote: bool, state: &str) -> SpanContext {
    let flags = if sampled {
        TraceFlags::SAMPLED
    } else {
        TraceFlags::default()
    };
    let state = if state.is_empty() {
        TraceState::NONE
    } else {
        state.parse().expect("a valid tracestate")
    };
    SpanContext::new(
        TraceId::from(trace),
        SpanId::from(span),
        flags,
        remote,
        state,
    )
}

fn span(n: u64, scope: &InstrumentationScope) -> SpanData {
    let mut events = SpanEvents::default();
    let mut links = SpanLinks::default();
    if n.is_multiple_of(3) {
        events.events.push(Event::new(
            "an event",
            UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789 + n),
            vec![KeyValue::new("e.count", n as i64)],
            1,
        ));
        events.dropped_count = 2;
        links.links.push(Link::new(
            context(0xabc + u128::from(n), 0x77 + n, true, true, "vendor=x"),
            vec![KeyValue::new("l.flag", true)],
            3,
        ));
        links.dropped_count = 4;
    }
    let status = match n % 4 {
        0 => Status::Unset,
        1 => Status::Ok,
        2 => Status::error(""),
        _ => Status::error("a description with é"),
    };
    let kind = [
        SpanKind::Internal,
        SpanKind::Server,
        SpanKind::Client,
        SpanKind::Producer,
        SpanKind::Consumer,
    ][(n % 5) as usize]
        .clone();
    SpanData {
        span_context: context(
            0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736 + u128::from(n),
            0x00f0_67aa_0ba9_02b7 + n,
            !n.is_multiple_of(7),
            false,
            if n.is_multiple_of(5) { "a=1,b=2" } else { "" },
        ),
        parent_span_id: if n.is_multiple_of(2) {
            SpanId::INVALID
        } else {
            SpanId::from(0x1234 + n)
        },
        parent_span_is_remote: n % 4 == 1,
        span_kind: kind,
        name: if n.is_multiple_of(2) {
            Cow::Borrowed("recap.v1.InjectionService/GetInjection")
        } else {
            Cow::Owned(format!("job {n} {}", "x".repeat((n * 13 % 300) as usize)))
        },
        start_time: UNIX_EPOCH + Duration::from_nanos(1_700_000_000_000_000_000 + n),
        end_time: UNIX_EPOCH + Duration::from_nanos(1_700_000_000_500_000_000 + n * 7),
        attributes: vec![
            KeyValue::new("rpc.system", "grpc"),
            KeyValue::new("rpc.grpc.status_code", (n % 17) as i64),
            KeyValue::new("negative", -(n as i64) - 1),
            KeyValue::new("ratio", n as f64 / 3.0),
            KeyValue::new("flag", n.is_multiple_of(2)),
            KeyValue::new("empty", ""),
            KeyValue::new("long", "y".repeat(200 + n as usize)),
            KeyValue::new(
                "gen_ai.response.finish_reasons",
                Value::Array(Array::String(vec![StringValue::from("stop"), "".into()])),
            ),
            KeyValue::new("ints", Value::Array(Array::I64(vec![1, -2, 0]))),
            KeyValue::new("floats", Value::Array(Array::F64(vec![0.5, -1.25]))),
            KeyValue::new("bools", Value::Array(Array::Bool(vec![true, false]))),
            KeyValue::new("no values", Value::Array(Array::I64(vec![]))),
        ],
        dropped_attributes_count: (n % 3) as u32,
        events,
        links,
        status,
        instrumentation_scope: scope.clone(),
    }
}

fn resource() -> Resource {
    Resource::builder_empty()
        .with_service_name("recapd")
        .with_attributes([
            KeyValue::new("service.version", "1.2.3"),
            KeyValue::new("deployment.environment.name", "prod é"),
        ])
        .with_schema_url(
            Vec::<KeyValue>::new(),
            "https://opentelemetry.io/schemas/1.30.0",
        )
        .build()
}

/// What `opentelemetry-otlp` would send for `spans`.
fn expected(spans: Vec<SpanData>, resource: &Resource) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(resource),
        ),
    }
}

#[test]
fn a_batch_is_the_message_the_generated_types_give() {
    let recapd = InstrumentationScope::builder("recapd").build();
    let other = InstrumentationScope::builder("other")
        .with_version("0.1")
        .with_schema_url("https://example.com/schema")
        .with_attributes([KeyValue::new("scope.attr", 5)])
        .build();
    let spans: Vec<SpanData> = (0..60)
        .map(|n| span(n, if n % 9 == 4 { &other } else { &recapd }))
        .collect();
    let resource = resource();
    let written = RequestWriter::new(&resource).write(&spans);
    let decoded =
        ExportTraceServiceRequest::decode(written.as_slice()).expect("what is written decodes");
    assert_eq!(decoded, expected(spans, &resource));
}

#[test]
fn one_span_and_a_bare_resource() {
    let scope = InstrumentationScope::builder("recapd").build();
    let resource = Resource::builder_empty().build();
    for n in 0..12 {
        let spans = vec![span(n, &scope)];
        let written = RequestWriter::new(&resource).write(&spans);
        let decoded = ExportTraceServiceRequest::decode(written.as_slice()).expect("decodes");
        assert_eq!(decoded, expected(spans, &resource), "span {n}");
    }
}

#[test]
fn no_span_is_an_empty_request() {
    let written = RequestWriter::new(&resource()).write(&[]);
    assert!(written.is_empty());
}
