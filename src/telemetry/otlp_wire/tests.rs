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

use super::{RequestWriter, RpcMethodFields, RpcSpanRecord, rpc_span, span_data};

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

/// `spans` as `opentelemetry-proto`'s own conversion makes them.
fn expected(spans: Vec<SpanData>, resource: &Resource) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: group_spans_by_resource_and_scope(
            spans,
            &ResourceAttributesWithSchema::from(resource),
        ),
    }
}

/// `spans` written one by one as they end, then as one request.
fn written(spans: &[SpanData], resource: &Resource, scope: &InstrumentationScope) -> Vec<u8> {
    let mut queued = Vec::new();
    for span in spans {
        span_data(&mut queued, span);
    }
    RequestWriter::new(resource, scope).write(&queued)
}

#[test]
fn a_batch_is_the_message_the_generated_types_give() {
    for scope in [
        InstrumentationScope::builder("recapd").build(),
        InstrumentationScope::builder("other")
            .with_version("0.1")
            .with_schema_url("https://example.com/schema")
            .with_attributes([KeyValue::new("scope.attr", 5)])
            .build(),
    ] {
        let spans: Vec<SpanData> = (0..60).map(|n| span(n, &scope)).collect();
        let resource = resource();
        let written = written(&spans, &resource, &scope);
        let decoded =
            ExportTraceServiceRequest::decode(written.as_slice()).expect("what is written decodes");
        assert_eq!(decoded, expected(spans, &resource));
    }
}

#[test]
fn one_span_and_a_bare_resource() {
    let scope = InstrumentationScope::builder("recapd").build();
    let resource = Resource::builder_empty().build();
    for n in 0..12 {
        let spans = vec![span(n, &scope)];
        let written = written(&spans, &resource, &scope);
        let decoded = ExportTraceServiceRequest::decode(written.as_slice()).expect("decodes");
        assert_eq!(decoded, expected(spans, &resource), "span {n}");
    }
}

#[test]
fn no_span_is_an_empty_request() {
    let scope = InstrumentationScope::builder("recapd").build();
    assert!(
        RequestWriter::new(&resource(), &scope)
            .write(&[])
            .is_empty()
    );
}

/// An RPC's span written from its record is the span the SDK would have
/// made: with and without a parent (local or remote), sampled or not, a
/// trace state, every status, an error id, and codes past one byte.
#[test]
fn an_rpc_span_is_the_span_the_sdk_would_make() {
    let scope = InstrumentationScope::builder("recapd").build();
    let resource = resource();
    let method = RpcMethodFields::new(
        "recap.v1.InjectionService/GetInjection",
        ("recap.v1.InjectionService", "GetInjection"),
    );
    for n in 0u64..24 {
        let context = context(
            0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c + u128::from(n),
            0xb7ad_6b71_6920_3331 + n,
            !n.is_multiple_of(5),
            false,
            if n.is_multiple_of(4) { "k=v" } else { "" },
        );
        let parent = if n.is_multiple_of(3) {
            SpanId::INVALID
        } else {
            SpanId::from(0x42 + n)
        };
        // None: a call dropped before it answered.
        let code = [
            Some(0),
            Some(2),
            Some(3),
            Some(13),
            Some(14),
            None,
            Some(300),
        ][(n % 7) as usize];
        let error = n % 7 >= 3;
        let error_id = (n % 7 == 3).then(|| format!("e-{n:08x}"));
        let start = UNIX_EPOCH + Duration::from_nanos(1_700_000_000_000_000_000 + n);
        let end = start + Duration::from_micros(25 + n);
        let record = RpcSpanRecord {
            context: &context,
            parent,
            parent_is_remote: n % 3 == 1,
            method: &method,
            start,
            end,
            code,
            error,
            error_id: error_id.as_deref(),
        };
        let mut attributes = vec![
            KeyValue::new("rpc.system", "grpc"),
            KeyValue::new("rpc.service", "recap.v1.InjectionService"),
            KeyValue::new("rpc.method", "GetInjection"),
        ];
        if let Some(code) = code {
            attributes.push(KeyValue::new("rpc.grpc.status_code", code));
        }
        if let Some(id) = &error_id {
            attributes.push(KeyValue::new("recapd.error.id", id.clone()));
        }
        let made = SpanData {
            span_context: context.clone(),
            parent_span_id: parent,
            parent_span_is_remote: n % 3 == 1,
            span_kind: SpanKind::Server,
            name: Cow::Borrowed("recap.v1.InjectionService/GetInjection"),
            start_time: start,
            end_time: end,
            attributes,
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: if error {
                Status::error("")
            } else {
                Status::Unset
            },
            instrumentation_scope: scope.clone(),
        };
        let mut queued = Vec::new();
        rpc_span(&mut queued, &record);
        let written = RequestWriter::new(&resource, &scope).write(&queued);
        let decoded = ExportTraceServiceRequest::decode(written.as_slice()).expect("decodes");
        assert_eq!(decoded, expected(vec![made], &resource), "span {n}");
    }
}
