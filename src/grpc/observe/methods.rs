//! The methods recapd serves, each with its metric handles: built once per
//! process from the compiled descriptors (recap.v1, health, reflection v1
//! and v1alpha), so a call finds its label and handles with one lookup of
//! its path, and no label is allocated per call. Every other path is the
//! one "unknown" entry, so clients cannot create series at will.

use std::collections::HashMap;
use std::sync::OnceLock;

use metrics::{Counter, Histogram};
use prost::Message as _;
use tonic::Code;

use super::code_name;
use crate::grpc::pb;
use crate::telemetry::spans::RpcMethodFields;
use crate::telemetry::{self, Registered};

/// The label of every path that is not a served method.
pub(super) const UNKNOWN: &str = "unknown";

/// The number of gRPC status codes (OK = 0 to UNAUTHENTICATED = 16).
const CODES: usize = 17;

/// One method label and its series, each registered at its first use (see
/// [`Registered`]): the latency histogram and one request counter per code.
#[derive(Debug)]
pub(super) struct Method {
    /// "recap.v1.EventService/Publish", or [`UNKNOWN`].
    pub(super) label: &'static str,
    /// What the method's server spans share, written once: the label, and
    /// its service and method ("recap.v1.EventService", "Publish"; `_OTHER`
    /// for both of [`UNKNOWN`], as the trace conventions name a method
    /// outside the known set).
    pub(super) span_fields: RpcMethodFields,
    duration: Registered<Histogram>,
    requests: [Registered<Counter>; CODES],
}

impl Method {
    fn new(label: &'static str) -> Self {
        Method {
            label,
            span_fields: RpcMethodFields::new(
                label,
                label.split_once('/').unwrap_or(("_OTHER", "_OTHER")),
            ),
            duration: Registered::new(),
            requests: std::array::from_fn(|_| Registered::new()),
        }
    }

    /// Records one finished call: its latency and its code.
    pub(super) fn record(&self, code: Code, seconds: f64) {
        let method = self.label;
        self.duration.with(
            || metrics::histogram!(telemetry::RPC_DURATION, "method" => method),
            |histogram| histogram.record(seconds),
        );
        // `Code` is a fieldless enum numbered 0 to 16, as the spec numbers
        // the codes: its number indexes `requests`.
        self.requests[code as usize].with(
            || {
                metrics::counter!(
                    telemetry::RPC_REQUESTS,
                    "method" => method,
                    "code" => code_name(code)
                )
            },
            |counter| counter.increment(1),
        );
    }
}

/// Every served method by its request path, and the unknown entry.
#[derive(Debug)]
struct Table {
    by_path: HashMap<&'static str, Method>,
    unknown: Method,
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// The entry of a request path: "/recap.v1.EventService/Publish" gives the
/// method labelled "recap.v1.EventService/Publish"; a path recapd does not
/// serve gives the "unknown" entry.
pub(super) fn method(path: &str) -> &'static Method {
    let table = TABLE.get_or_init(|| {
        let by_path = served_methods()
            .into_iter()
            .map(|label| {
                // Leaked once per process (the table is built once): the
                // labels are `'static`, so no series key copies them.
                let path: &'static str = Box::leak(format!("/{label}").into_boxed_str());
                (path, Method::new(&path[1..]))
            })
            .collect();
        Table {
            by_path,
            unknown: Method::new(UNKNOWN),
        }
    });
    table.by_path.get(path).unwrap_or(&table.unknown)
}

/// Every method recapd serves: the `recap.v1` services, health and
/// reflection (v1 and v1alpha).
fn served_methods() -> Vec<String> {
    let mut methods = recap_v1_methods();
    for set in [
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
    ] {
        methods.extend(methods_of(set, None));
    }
    methods
}

/// The method label of every RPC of the `recap.v1` services, read from the
/// descriptors compiled from the proto (so the list cannot drift from it),
/// in proto order: "recap.v1.EventService/Publish", ...
pub fn recap_v1_methods() -> Vec<String> {
    methods_of(pb::FILE_DESCRIPTOR_SET, Some("recap.v1"))
}

/// "package.Service/Method" for every method of the services in the
/// encoded descriptor set `set`, of `package` only when given.
fn methods_of(set: &[u8], package: Option<&str>) -> Vec<String> {
    let set = match prost_types::FileDescriptorSet::decode(set) {
        Ok(set) => set,
        Err(error) => {
            tracing::warn!(%error, "cannot read compiled descriptors");
            return Vec::new();
        }
    };
    let mut methods = Vec::new();
    for file in &set.file {
        if package.is_some_and(|package| file.package() != package) {
            continue;
        }
        for service in &file.service {
            for method in &service.method {
                methods.push(format!(
                    "{}.{}/{}",
                    file.package(),
                    service.name(),
                    method.name()
                ));
            }
        }
    }
    methods
}
