//! Finished spans written as OTLP in protobuf's wire format: each span as
//! it ends, straight from the SDK's [`SpanData`] ([`span_data`]) or from
//! what an RPC's server span records ([`rpc_span`]), and a batch of them
//! as an `ExportTraceServiceRequest` ([`RequestWriter`]).
//!
//! `opentelemetry-otlp`, which recapd used before, turned each span into
//! the generated message types first (a `String` or `Vec` for every id,
//! name, key and value), then encoded them, computing each nested
//! message's length once per level above it, then freed them all: about
//! 16,000 instructions a span, a quarter of a whole `GetInjection`.
//! Writing the bytes directly costs a tenth of that. The message is the
//! one the generated types would give: a unit test decodes what is written
//! here with `opentelemetry-proto`'s types and compares it with that
//! crate's own conversion of the same spans.
//!
//! A span's nested messages are written in place and their length put in
//! front afterwards (the bytes shifted by the one to five bytes of the
//! length); a batch's are computed ahead, as its spans are already written.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceState};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SpanData;

/// Protobuf's wire types used here.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// OTLP's span flag: the flags say whether the parent is remote.
const CONTEXT_HAS_IS_REMOTE: u32 = 0x100;
/// OTLP's span flag: the parent is remote.
const CONTEXT_IS_REMOTE: u32 = 0x200;

/// The parts of an export request that are the same for every batch: the
/// resource and the instrumentation scope, encoded once.
///
/// recapd's spans all come from one tracer, so a request holds one
/// `ResourceSpans` with one `ScopeSpans`, whose spans are written as they
/// end ([`span_data`], [`rpc_span`]) and sent as they were written.
#[derive(Debug)]
pub struct RequestWriter {
    /// The `Resource` message's fields.
    resource: Vec<u8>,
    /// The resource's schema URL.
    resource_schema_url: String,
    /// The `InstrumentationScope` message's fields.
    scope: Vec<u8>,
    /// The scope's schema URL.
    scope_schema_url: String,
}

impl RequestWriter {
    /// A writer of requests from `resource`, for spans of `scope`.
    pub fn new(resource: &Resource, scope: &InstrumentationScope) -> RequestWriter {
        let mut encoded = Vec::new();
        for (key, value) in resource.iter() {
            message(&mut encoded, 1, |out| key_value(out, key.as_str(), value));
        }
        let mut scope_fields = Vec::new();
        instrumentation_scope(&mut scope_fields, scope);
        RequestWriter {
            resource: encoded,
            resource_schema_url: resource.schema_url().unwrap_or_default().to_owned(),
            scope: scope_fields,
            scope_schema_url: scope.schema_url().unwrap_or_default().to_owned(),
        }
    }

    /// One `ExportTraceServiceRequest` of `spans`: `ScopeSpans.spans`
    /// entries as [`span_data`] and [`rpc_span`] write them, one after the
    /// other (the request is their bytes with the resource and the scope
    /// around them; each nested length is known ahead, so nothing is
    /// shifted). No span, an empty request.
    pub fn write(&self, spans: &[u8]) -> Vec<u8> {
        if spans.is_empty() {
            return Vec::new();
        }
        let nested = |len: usize| 1 + varint_len(len as u64) + len;
        let scope_spans =
            nested(self.scope.len()) + spans.len() + string_len(3, &self.scope_schema_url);
        let resource_spans = nested(self.resource.len())
            + nested(scope_spans)
            + string_len(3, &self.resource_schema_url);
        let mut out = Vec::with_capacity(nested(resource_spans));
        key_of(&mut out, 1, LEN);
        varint(&mut out, resource_spans as u64);
        always_bytes(&mut out, 1, &self.resource);
        key_of(&mut out, 2, LEN);
        varint(&mut out, scope_spans as u64);
        always_bytes(&mut out, 1, &self.scope);
        out.extend_from_slice(spans);
        string(&mut out, 3, &self.scope_schema_url);
        string(&mut out, 3, &self.resource_schema_url);
        out
    }
}

/// One span as a `ScopeSpans.spans` entry (its field key, length and
/// message), appended to `out`. The span's instrumentation scope is not
/// written: it is the [`RequestWriter`]'s.
pub fn span_data(out: &mut Vec<u8>, span: &SpanData) {
    message(out, 2, |out| write_span(out, span));
}

/// What every server span of one RPC method shares, written once: its
/// name and kind, and its `rpc.system`, `rpc.service` and `rpc.method`
/// attributes (see [`rpc_span`]).
#[derive(Debug)]
pub struct RpcMethodFields {
    /// The name and kind fields.
    named: Box<[u8]>,
    /// The three attributes.
    attributes: Box<[u8]>,
}

impl RpcMethodFields {
    /// The fields of the method `name` ("package.Service/Method"), whose
    /// parts are `service` and `method`.
    pub fn new(name: &str, (service, method): (&str, &str)) -> RpcMethodFields {
        let mut named = Vec::new();
        string(&mut named, 5, name);
        varint_field(&mut named, 6, 2);
        let mut attributes = Vec::new();
        string_attribute(&mut attributes, "rpc.system", "grpc");
        string_attribute(&mut attributes, "rpc.service", service);
        string_attribute(&mut attributes, "rpc.method", method);
        RpcMethodFields {
            named: named.into(),
            attributes: attributes.into(),
        }
    }
}

/// What the server span of one RPC records (see `telemetry::spans::rpc`):
/// written by [`rpc_span`] as the span the SDK would have made of it (the
/// unit tests compare the two).
#[derive(Debug)]
pub struct RpcSpanRecord<'a> {
    /// The span's ids, flags and trace state.
    pub context: &'a SpanContext,
    /// The caller's span, or [`SpanId::INVALID`] for a trace of its own.
    pub parent: SpanId,
    /// Whether the parent came from the caller (its `traceparent`).
    pub parent_is_remote: bool,
    /// The method's name, kind and attributes.
    pub method: &'a RpcMethodFields,
    /// When the call came in and when it answered.
    pub start: SystemTime,
    /// See `start`.
    pub end: SystemTime,
    /// The call's gRPC status code (`rpc.grpc.status_code`); `None` for a
    /// call dropped before it answered.
    pub code: Option<i64>,
    /// Whether the span's status is ERROR (a failure of the server's own).
    pub error: bool,
    /// The error id of the failure, when there is one (`recapd.error.id`).
    pub error_id: Option<&'a str>,
}

/// One RPC's server span as a `ScopeSpans.spans` entry, appended to `out`:
/// the fields [`span_data`] writes for such a span, without building one
/// (the method's own fields copied as written once).
pub fn rpc_span(out: &mut Vec<u8>, span: &RpcSpanRecord<'_>) {
    message(out, 2, |out| {
        let context = span.context;
        bytes(out, 1, &context.trace_id().to_bytes());
        bytes(out, 2, &context.span_id().to_bytes());
        trace_state(out, 3, context.trace_state());
        if span.parent != SpanId::INVALID {
            bytes(out, 4, &span.parent.to_bytes());
        }
        out.extend_from_slice(&span.method.named);
        fixed64(out, 7, nanos(span.start));
        fixed64(out, 8, nanos(span.end));
        out.extend_from_slice(&span.method.attributes);
        if let Some(code) = span.code {
            // rpc.grpc.status_code: "rpc.grpc.status_code" is 20 bytes.
            let code_len = varint_len(code as u64);
            key_of(out, 9, LEN);
            varint(out, (22 + 3 + code_len) as u64);
            always_string(out, 1, "rpc.grpc.status_code");
            key_of(out, 2, LEN);
            varint(out, (1 + code_len) as u64);
            key_of(out, 3, VARINT);
            varint(out, code as u64);
        }
        if let Some(id) = span.error_id {
            string_attribute(out, "recapd.error.id", id);
        }
        // The status message: an ERROR's code alone, or nothing set.
        key_of(out, 15, LEN);
        if span.error {
            out.extend_from_slice(&[2, 3 << 3, 2]);
        } else {
            out.push(0);
        }
        fixed32(
            out,
            16,
            flags(span.parent_is_remote, context.trace_flags().to_u8()),
        );
    });
}

/// A span attribute (field 9) of a text value, without a [`Value`].
fn string_attribute(out: &mut Vec<u8>, key: &str, text: &str) {
    let value_len = 1 + varint_len(text.len() as u64) + text.len();
    let len = string_len(1, key) + 1 + varint_len(value_len as u64) + value_len;
    key_of(out, 9, LEN);
    varint(out, len as u64);
    string(out, 1, key);
    key_of(out, 2, LEN);
    varint(out, value_len as u64);
    always_string(out, 1, text);
}

/// An `InstrumentationScope` message's fields.
fn instrumentation_scope(out: &mut Vec<u8>, scope: &InstrumentationScope) {
    string(out, 1, scope.name());
    string(out, 2, scope.version().unwrap_or_default());
    attributes(out, 3, scope.attributes());
}

/// A `Span` message's fields.
fn write_span(out: &mut Vec<u8>, span: &SpanData) {
    let context = &span.span_context;
    bytes(out, 1, &context.trace_id().to_bytes());
    bytes(out, 2, &context.span_id().to_bytes());
    trace_state(out, 3, context.trace_state());
    if span.parent_span_id != SpanId::INVALID {
        bytes(out, 4, &span.parent_span_id.to_bytes());
    }
    string(out, 5, &span.name);
    let kind = match span.span_kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    };
    varint_field(out, 6, kind);
    fixed64(out, 7, nanos(span.start_time));
    fixed64(out, 8, nanos(span.end_time));
    attributes(out, 9, span.attributes.iter());
    varint_field(out, 10, u64::from(span.dropped_attributes_count));
    for event in span.events.iter() {
        message(out, 11, |out| {
            fixed64(out, 1, nanos(event.timestamp));
            string(out, 2, &event.name);
            attributes(out, 3, event.attributes.iter());
            varint_field(out, 4, u64::from(event.dropped_attributes_count));
        });
    }
    varint_field(out, 12, u64::from(span.events.dropped_count));
    for link in span.links.iter() {
        let linked = &link.span_context;
        message(out, 13, |out| {
            bytes(out, 1, &linked.trace_id().to_bytes());
            bytes(out, 2, &linked.span_id().to_bytes());
            trace_state(out, 3, linked.trace_state());
            attributes(out, 4, link.attributes.iter());
            varint_field(out, 5, u64::from(link.dropped_attributes_count));
            fixed32(
                out,
                6,
                flags(linked.is_remote(), linked.trace_flags().to_u8()),
            );
        });
    }
    varint_field(out, 14, u64::from(span.links.dropped_count));
    message(out, 15, |out| {
        let (code, description) = match &span.status {
            Status::Unset => (0, ""),
            Status::Ok => (1, ""),
            Status::Error { description } => (2, description.as_ref()),
        };
        string(out, 2, description);
        varint_field(out, 3, code);
    });
    fixed32(
        out,
        16,
        flags(span.parent_span_is_remote, context.trace_flags().to_u8()),
    );
}

/// A W3C `tracestate` field, left out when there is none (without building
/// its text, as almost no span has one).
fn trace_state(out: &mut Vec<u8>, field: u32, state: &TraceState) {
    if *state != TraceState::NONE {
        string(out, field, &state.header());
    }
}

/// OTLP's span flags: the W3C trace flags, and whether the parent is remote.
fn flags(parent_is_remote: bool, trace_flags: u8) -> u32 {
    let mut flags = u32::from(trace_flags) | CONTEXT_HAS_IS_REMOTE;
    if parent_is_remote {
        flags |= CONTEXT_IS_REMOTE;
    }
    flags
}

/// Nanoseconds since the Unix epoch (0 before it).
fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|since| u64::try_from(since.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// `KeyValue` messages under `field`, one per attribute.
fn attributes<'a>(out: &mut Vec<u8>, field: u32, attributes: impl Iterator<Item = &'a KeyValue>) {
    for one in attributes {
        attribute(out, field, one.key.as_str(), &one.value);
    }
}

/// One `KeyValue` message under `field`.
fn attribute(out: &mut Vec<u8>, field: u32, key: &str, value: &Value) {
    // Small and of a known length: written forward, nothing shifted.
    let value_len = any_value_len(value);
    let len = string_len(1, key) + 1 + varint_len(value_len as u64) + value_len;
    key_of(out, field, LEN);
    varint(out, len as u64);
    key_value_fields(out, key, value, value_len);
}

/// A `KeyValue` message's fields (the resource's, written once).
fn key_value(out: &mut Vec<u8>, key: &str, value: &Value) {
    key_value_fields(out, key, value, any_value_len(value));
}

/// A `KeyValue` message's fields, its value's length known.
fn key_value_fields(out: &mut Vec<u8>, key: &str, value: &Value, value_len: usize) {
    string(out, 1, key);
    key_of(out, 2, LEN);
    varint(out, value_len as u64);
    any_value(out, value);
}

/// The bytes of a string field as [`string`] writes it.
fn string_len(field: u32, text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        varint_len(u64::from(field) << 3) + varint_len(text.len() as u64) + text.len()
    }
}

/// The bytes `n` takes as a varint.
fn varint_len(n: u64) -> usize {
    // 1 byte for each started group of 7 bits; 0 takes one byte.
    (64 - (n | 1).leading_zeros() as usize).div_ceil(7)
}

/// The bytes of an `AnyValue` message's fields as [`any_value`] writes
/// them.
fn any_value_len(value: &Value) -> usize {
    let nested = |len: usize| 1 + varint_len(len as u64) + len;
    match value {
        Value::String(text) => nested(text.as_str().len()),
        Value::Bool(_) => 2,
        Value::I64(n) => 1 + varint_len(*n as u64),
        Value::F64(_) => 9,
        Value::Array(array) => nested(match array {
            Array::Bool(values) => values.len() * nested(2),
            Array::I64(values) => values
                .iter()
                .map(|v| nested(1 + varint_len(*v as u64)))
                .sum(),
            Array::F64(values) => values.len() * nested(9),
            Array::String(values) => values
                .iter()
                .map(|v| nested(nested(v.as_str().len())))
                .sum(),
            _ => 0,
        }),
        _ => 0,
    }
}

/// An `AnyValue` message's fields. A kind of value this version does not
/// know (the enum is open) is written as an empty value rather than lost
/// with its key.
fn any_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::String(text) => always_string(out, 1, text.as_str()),
        Value::Bool(flag) => {
            key_of(out, 2, VARINT);
            varint(out, u64::from(*flag));
        }
        Value::I64(n) => {
            key_of(out, 3, VARINT);
            // int64 is the two's complement as a varint.
            varint(out, *n as u64);
        }
        Value::F64(x) => {
            key_of(out, 4, FIXED64);
            out.extend_from_slice(&x.to_le_bytes());
        }
        Value::Array(array) => message(out, 5, |out| match array {
            Array::Bool(values) => values
                .iter()
                .for_each(|v| message(out, 1, |out| any_value(out, &Value::Bool(*v)))),
            Array::I64(values) => values
                .iter()
                .for_each(|v| message(out, 1, |out| any_value(out, &Value::I64(*v)))),
            Array::F64(values) => values
                .iter()
                .for_each(|v| message(out, 1, |out| any_value(out, &Value::F64(*v)))),
            Array::String(values) => values
                .iter()
                .for_each(|v| message(out, 1, |out| always_string(out, 1, v.as_str()))),
            _ => {}
        }),
        _ => {}
    }
}

/// A field's key: its number and wire type.
fn key_of(out: &mut Vec<u8>, field: u32, wire_type: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire_type));
}

/// `n` as a base-128 varint.
fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// A varint field, left out when 0 (proto3's default).
fn varint_field(out: &mut Vec<u8>, field: u32, n: u64) {
    if n != 0 {
        key_of(out, field, VARINT);
        varint(out, n);
    }
}

/// A fixed64 field, left out when 0.
fn fixed64(out: &mut Vec<u8>, field: u32, n: u64) {
    if n != 0 {
        key_of(out, field, FIXED64);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// A fixed32 field, left out when 0.
fn fixed32(out: &mut Vec<u8>, field: u32, n: u32) {
    if n != 0 {
        key_of(out, field, FIXED32);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// A string field, left out when empty.
fn string(out: &mut Vec<u8>, field: u32, text: &str) {
    if !text.is_empty() {
        always_string(out, field, text);
    }
}

/// A string field written even when empty (a member of a `oneof`, whose
/// presence is the value).
fn always_string(out: &mut Vec<u8>, field: u32, text: &str) {
    key_of(out, field, LEN);
    varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// A bytes field, left out when empty.
fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if !data.is_empty() {
        key_of(out, field, LEN);
        varint(out, data.len() as u64);
        out.extend_from_slice(data);
    }
}

/// A bytes field written even when empty (a nested message's fields).
fn always_bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    key_of(out, field, LEN);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A nested message under `field`: written in place by `write`, then its
/// length put in front of it.
fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    key_of(out, field, LEN);
    let start = out.len();
    write(out);
    let len = out.len() - start;
    if len < 0x80 {
        // The common case, a length of one byte.
        out.insert(start, len as u8);
        return;
    }
    let mut prefix = [0u8; 10];
    let mut used = 0;
    let mut rest = len as u64;
    while rest >= 0x80 {
        prefix[used] = (rest as u8) | 0x80;
        rest >>= 7;
        used += 1;
    }
    prefix[used] = rest as u8;
    out.splice(start..start, prefix[..=used].iter().copied());
}

#[cfg(test)]
mod tests;
