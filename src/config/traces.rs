//! The options of OpenTelemetry traces: where spans are exported (OTLP over
//! gRPC or HTTP), which traces are kept, and what spans may carry. Each flag
//! also reads the variable OpenTelemetry's SDKs read (`OTEL_*`), so an
//! operator's usual environment configures recapd as it does other services.
//! Without `--otlp-endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) nothing is
//! traced.

/// How spans travel to the collector (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OtlpProtocol {
    /// OTLP over gRPC (a collector's port 4317).
    #[value(name = "grpc")]
    Grpc,
    /// OTLP over HTTP with protobuf bodies (a collector's port 4318); the
    /// endpoint is a base URL and `/v1/traces` is added to it.
    #[value(name = "http/protobuf")]
    HttpProtobuf,
}

/// Which traces are recorded and exported (`OTEL_TRACES_SAMPLER`), with the
/// names OpenTelemetry's SDKs give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceSampler {
    /// Every trace.
    #[value(name = "always_on")]
    AlwaysOn,
    /// No trace.
    #[value(name = "always_off")]
    AlwaysOff,
    /// A share of traces, `--traces-sampler-arg` (0 to 1), chosen by trace id.
    #[value(name = "traceidratio")]
    TraceIdRatio,
    /// As the caller's `traceparent` says; every trace that starts here.
    #[value(name = "parentbased_always_on")]
    ParentBasedAlwaysOn,
    /// As the caller's `traceparent` says; no trace that starts here.
    #[value(name = "parentbased_always_off")]
    ParentBasedAlwaysOff,
    /// As the caller's `traceparent` says; a share of the traces that start
    /// here (`--traces-sampler-arg`).
    #[value(name = "parentbased_traceidratio")]
    ParentBasedTraceIdRatio,
}

/// Options of traces, flattened into [`super::Config`].
#[derive(Debug, Clone, clap::Args)]
pub struct TraceOptions {
    /// Where spans are exported over OTLP: a collector's base URL such as
    /// http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317
    /// (grpc); https:// for TLS, checked against the system's roots. Unset:
    /// no span is recorded at all.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The OTLP transport: grpc or http/protobuf.
    #[arg(
        long,
        env = "OTEL_EXPORTER_OTLP_PROTOCOL",
        value_enum,
        default_value = "http/protobuf"
    )]
    pub otlp_protocol: OtlpProtocol,

    /// The `service.name` of recapd's spans.
    #[arg(long, env = "OTEL_SERVICE_NAME", default_value = "recapd")]
    pub otel_service_name: String,

    /// More resource attributes, as `key=value` pairs separated by commas
    /// (values %-encoded as the OpenTelemetry spec says), e.g.
    /// `deployment.environment.name=prod,service.instance.id=replica-2`.
    #[arg(
        long,
        env = "OTEL_RESOURCE_ATTRIBUTES",
        default_value = "",
        value_name = "PAIRS"
    )]
    pub otel_resource_attributes: String,

    /// Which traces are kept: always_on, always_off, traceidratio,
    /// parentbased_always_on, parentbased_always_off or
    /// parentbased_traceidratio.
    #[arg(
        long,
        env = "OTEL_TRACES_SAMPLER",
        value_enum,
        default_value = "parentbased_always_on"
    )]
    pub traces_sampler: TraceSampler,

    /// The share of traces kept by traceidratio and
    /// parentbased_traceidratio, from 0 to 1 (default 1).
    #[arg(long, env = "OTEL_TRACES_SAMPLER_ARG", value_name = "RATIO",
          value_parser = parse_ratio)]
    pub traces_sampler_arg: Option<f64>,

    /// Puts text in spans: messages, recaps, prompts, LLM answers, recall
    /// queries. For debugging only: whoever reads the traces reads the
    /// chats.
    #[arg(long, env = "RECAPD_TRACE_CONTENT")]
    pub trace_content: bool,

    /// Puts chat ids in spans (`recapd.chat.id`); off by default, as chat
    /// ids can name people.
    #[arg(long, env = "RECAPD_TRACE_CHAT_IDS")]
    pub trace_chat_ids: bool,
}

/// A sampler's ratio: a number from 0 to 1.
fn parse_ratio(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(ratio) if (0.0..=1.0).contains(&ratio) => Ok(ratio),
        _ => Err(format!("'{text}' is not a ratio from 0 to 1")),
    }
}

/// Parses `OTEL_RESOURCE_ATTRIBUTES`' form: `key=value` pairs separated by
/// commas, keys and values %-decoded and trimmed; an empty text is no pair.
/// A pair without `=` or with an empty key is an error naming it.
pub fn resource_attributes(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!(
                "resource attribute '{pair}' is not key=value (--otel-resource-attributes)"
            ));
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s.trim())
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| format!("resource attribute '{pair}' is not UTF-8 once decoded"))
        };
        let (key, value) = (decode(key)?, decode(value)?);
        if key.is_empty() {
            return Err(format!("resource attribute '{pair}' has no key"));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

impl TraceOptions {
    /// Checks what clap cannot: the endpoint is an http(s) URL and the
    /// resource attributes parse. Run with the rest of the configuration,
    /// so a mistake exits 64 before anything is bound.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(endpoint) = &self.otlp_endpoint {
            let scheme_ok = endpoint.starts_with("http://") || endpoint.starts_with("https://");
            if !scheme_ok || endpoint.parse::<http::Uri>().is_err() {
                return Err(format!(
                    "--otlp-endpoint '{endpoint}' is not an http:// or https:// URL"
                ));
            }
        }
        resource_attributes(&self.otel_resource_attributes).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_attributes_read_as_the_spec_writes_them() {
        assert_eq!(
            resource_attributes(" a=1, b = two%20words ,,c=").unwrap(),
            vec![
                ("a".to_string(), "1".to_string()),
                ("b".to_string(), "two words".to_string()),
                ("c".to_string(), String::new()),
            ]
        );
        assert!(resource_attributes("").unwrap().is_empty());
        assert!(resource_attributes("novalue").is_err());
        assert!(resource_attributes("=x").is_err());
    }

    #[test]
    fn ratios_are_from_zero_to_one() {
        assert_eq!(parse_ratio("0.25"), Ok(0.25));
        assert!(parse_ratio("1.5").is_err());
        assert!(parse_ratio("-0.1").is_err());
        assert!(parse_ratio("NaN").is_err());
    }
}
