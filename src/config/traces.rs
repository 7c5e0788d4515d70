//! The options of OpenTelemetry traces: where spans are exported (OTLP over
//! gRPC or HTTP), which traces are kept, and what spans may carry. Each flag
//! also reads the variable OpenTelemetry's SDKs read (`OTEL_*`), so an
//! operator's usual environment configures recapd as it does other services.
//! Without `--otlp-endpoint` (or `OTEL_EXPORTER_OTLP_ENDPOINT`) nothing is
//! traced.

/// How spans travel to the collector (`OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// OTLP over gRPC (a collector's port 4317).
    Grpc,
    /// OTLP over HTTP with protobuf bodies (a collector's port 4318); the
    /// endpoint is a base URL and `/v1/traces` is added to it.
    HttpProtobuf,
    /// OTLP over HTTP with JSON bodies, as `HttpProtobuf` otherwise.
    HttpJson,
}

/// Which traces are recorded and exported (`OTEL_TRACES_SAMPLER`), with the
/// names OpenTelemetry's SDKs give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceSampler {
    /// Every trace.
    AlwaysOn,
    /// No trace.
    AlwaysOff,
    /// A share of traces (the ratio), chosen by trace id.
    TraceIdRatio,
    /// As the caller's `traceparent` says; every trace that starts here.
    ParentBasedAlwaysOn,
    /// As the caller's `traceparent` says; no trace that starts here.
    ParentBasedAlwaysOff,
    /// As the caller's `traceparent` says; a share of the traces that start
    /// here (the ratio).
    ParentBasedTraceIdRatio,
}

/// Options of traces, flattened into [`super::Config`]. They are read as
/// text and checked only when an endpoint is set ([`TraceOptions::resolve`]):
/// the `OTEL_*` variables an environment sets for other services never stop
/// a recapd that does not trace.
#[derive(Clone, clap::Args)]
pub struct TraceOptions {
    /// Where spans are exported over OTLP: a collector's base URL such as
    /// http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317
    /// (grpc); https:// for TLS, checked against the system's roots. Unset
    /// or empty: no span is recorded at all.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT", value_name = "URL")]
    pub otlp_endpoint: Option<String>,

    /// The OTLP transport: http/protobuf (the default), http/json or grpc.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_PROTOCOL", value_name = "PROTOCOL")]
    pub otlp_protocol: Option<String>,

    /// The `service.name` of recapd's spans; unset: `service.name` of
    /// --otel-resource-attributes, else `recapd`.
    #[arg(long, env = "OTEL_SERVICE_NAME", value_name = "NAME")]
    pub otel_service_name: Option<String>,

    /// More resource attributes, as `key=value` pairs separated by commas
    /// (values %-encoded as the OpenTelemetry spec says), e.g.
    /// `deployment.environment.name=prod,service.instance.id=replica-2`.
    #[arg(long, env = "OTEL_RESOURCE_ATTRIBUTES", value_name = "PAIRS")]
    pub otel_resource_attributes: Option<String>,

    /// Which traces are kept: parentbased_always_on (the default),
    /// always_on, always_off, traceidratio, parentbased_always_off or
    /// parentbased_traceidratio. A job's attempt and a debounced refresh,
    /// which start traces of their own, are kept whenever the call they
    /// link to was.
    #[arg(long, env = "OTEL_TRACES_SAMPLER", value_name = "SAMPLER")]
    pub traces_sampler: Option<String>,

    /// The share of traces kept by traceidratio and
    /// parentbased_traceidratio, from 0 to 1 (default 1).
    #[arg(long, env = "OTEL_TRACES_SAMPLER_ARG", value_name = "RATIO")]
    pub traces_sampler_arg: Option<String>,

    /// Headers sent with every export request, as `key=value` pairs
    /// separated by commas (values %-encoded), such as a vendor's API key;
    /// `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, when set, is used instead.
    #[arg(
        long,
        env = "OTEL_EXPORTER_OTLP_HEADERS",
        value_name = "PAIRS",
        hide_env_values = true
    )]
    pub otlp_headers: Option<String>,

    /// The traces-only form of --otlp-headers, which it overrides.
    #[arg(
        long,
        env = "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        hide = true,
        hide_env_values = true
    )]
    pub otlp_traces_headers: Option<String>,

    /// How long one export request may take, in milliseconds (default
    /// 10000); `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT`, when set, is used
    /// instead.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_TIMEOUT", value_name = "MS")]
    pub otlp_timeout: Option<String>,

    /// The traces-only form of --otlp-timeout, which it overrides.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", hide = true)]
    pub otlp_traces_timeout: Option<String>,

    /// Puts text in spans: prompts, LLM answers, recall queries (each cut
    /// to 32 KiB). For debugging only: whoever reads the traces reads the
    /// chats.
    #[arg(long, env = "RECAPD_TRACE_CONTENT")]
    pub trace_content: bool,

    /// Puts chat ids in spans (`recapd.chat.id`); off by default, as chat
    /// ids can name people.
    #[arg(long, env = "RECAPD_TRACE_CHAT_IDS")]
    pub trace_chat_ids: bool,
}

/// [`TraceOptions`] checked, for an endpoint that is set.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSetup {
    /// The collector's URL, as given.
    pub endpoint: String,
    /// The transport.
    pub protocol: OtlpProtocol,
    /// `service.name`.
    pub service_name: String,
    /// The other resource attributes (`service.name` taken out).
    pub resource_attributes: Vec<(String, String)>,
    /// Headers of every export request.
    pub headers: ExportHeaders,
    /// How long one export request may take.
    pub timeout: std::time::Duration,
    /// The sampler.
    pub sampler: TraceSampler,
    /// Its ratio, 0 to 1.
    pub ratio: f64,
    /// `--trace-content`.
    pub content: bool,
    /// `--trace-chat-ids`.
    pub chat_ids: bool,
    /// What was not understood and given its default instead, for the log
    /// (the spec's rule for a sampler or ratio it does not know).
    pub warnings: Vec<String>,
}

/// How long one export request may take by default (the spec's 10 s).
pub const DEFAULT_EXPORT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// The longest export timeout accepted, in milliseconds (10 minutes).
const MAX_EXPORT_TIMEOUT_MS: u64 = 600_000;

/// The headers of every export request, checked (names and values HTTP
/// allows) and marked sensitive: their values may be keys, so `Debug`
/// shows the names only.
#[derive(Clone, PartialEq, Default)]
pub struct ExportHeaders(pub http::HeaderMap);

impl ExportHeaders {
    /// Each header as `(name, value)`, in the order given.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect()
    }
}

impl std::fmt::Debug for ExportHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.keys().map(|name| format!("{name}: <hidden>")))
            .finish()
    }
}

impl std::fmt::Debug for TraceOptions {
    /// Every option but the headers' values (they may be keys).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let TraceOptions {
            otlp_endpoint,
            otlp_protocol,
            otel_service_name,
            otel_resource_attributes,
            traces_sampler,
            traces_sampler_arg,
            otlp_headers,
            otlp_traces_headers,
            otlp_timeout,
            otlp_traces_timeout,
            trace_content,
            trace_chat_ids,
        } = self;
        let hidden = |value: &Option<String>| value.as_ref().map(|_| "<hidden>");
        f.debug_struct("TraceOptions")
            .field("otlp_endpoint", otlp_endpoint)
            .field("otlp_protocol", otlp_protocol)
            .field("otel_service_name", otel_service_name)
            .field("otel_resource_attributes", otel_resource_attributes)
            .field("traces_sampler", traces_sampler)
            .field("traces_sampler_arg", traces_sampler_arg)
            .field("otlp_headers", &hidden(otlp_headers))
            .field("otlp_traces_headers", &hidden(otlp_traces_headers))
            .field("otlp_timeout", otlp_timeout)
            .field("otlp_traces_timeout", otlp_traces_timeout)
            .field("trace_content", trace_content)
            .field("trace_chat_ids", trace_chat_ids)
            .finish()
    }
}

/// A value that is set and not blank.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

impl TraceOptions {
    /// `None` when no endpoint is set (traces are off, and nothing else is
    /// read); otherwise the setup, or one line naming the option at fault:
    /// an endpoint that is not an http(s) URL, an unknown protocol,
    /// malformed resource attributes. An unknown sampler or a ratio out of
    /// range gives way to the default, with a warning (as the spec says).
    pub fn resolve(&self) -> Result<Option<TraceSetup>, String> {
        let Some(endpoint) = given(&self.otlp_endpoint) else {
            return Ok(None);
        };
        let scheme_ok = endpoint.starts_with("http://") || endpoint.starts_with("https://");
        if !scheme_ok || endpoint.parse::<http::Uri>().is_err() {
            return Err(format!(
                "--otlp-endpoint '{endpoint}' is not an http:// or https:// URL"
            ));
        }
        let protocol = match given(&self.otlp_protocol).unwrap_or("http/protobuf") {
            "http/protobuf" => OtlpProtocol::HttpProtobuf,
            "http/json" => OtlpProtocol::HttpJson,
            "grpc" => OtlpProtocol::Grpc,
            other => {
                return Err(format!(
                    "--otlp-protocol '{other}' is not grpc, http/protobuf or http/json"
                ));
            }
        };
        let mut attributes =
            resource_attributes(given(&self.otel_resource_attributes).unwrap_or(""))?;
        let pairs = key_value_pairs(
            given(&self.otlp_traces_headers)
                .or(given(&self.otlp_headers))
                .unwrap_or(""),
            "header",
            "--otlp-headers",
            true,
        )?;
        let mut headers = http::HeaderMap::new();
        for (name, value) in &pairs {
            let name = http::HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("--otlp-headers: '{name}' is not a header name"))?;
            let mut value = http::HeaderValue::from_str(value).map_err(|_| {
                format!("--otlp-headers: the value of '{name}' is not a header value")
            })?;
            // Never shown by Debug, never kept in HTTP/2's header table.
            value.set_sensitive(true);
            headers.append(name, value);
        }
        let from_attributes = attributes
            .iter()
            .position(|(key, _)| key == "service.name")
            .map(|at| attributes.remove(at).1);
        let service_name = given(&self.otel_service_name)
            .map(str::to_owned)
            .or(from_attributes)
            .unwrap_or_else(|| "recapd".to_owned());
        let mut warnings = Vec::new();
        let sampler = match given(&self.traces_sampler).unwrap_or("parentbased_always_on") {
            "always_on" => TraceSampler::AlwaysOn,
            "always_off" => TraceSampler::AlwaysOff,
            "traceidratio" => TraceSampler::TraceIdRatio,
            "parentbased_always_on" => TraceSampler::ParentBasedAlwaysOn,
            "parentbased_always_off" => TraceSampler::ParentBasedAlwaysOff,
            "parentbased_traceidratio" => TraceSampler::ParentBasedTraceIdRatio,
            other => {
                warnings.push(format!(
                    "--traces-sampler '{other}' is not one recapd knows; parentbased_always_on instead"
                ));
                TraceSampler::ParentBasedAlwaysOn
            }
        };
        let timeout = match given(&self.otlp_traces_timeout).or(given(&self.otlp_timeout)) {
            None => DEFAULT_EXPORT_TIMEOUT,
            Some(text) => match text.parse::<u64>() {
                Ok(ms) if (1..=MAX_EXPORT_TIMEOUT_MS).contains(&ms) => {
                    std::time::Duration::from_millis(ms)
                }
                _ => {
                    warnings.push(format!(
                        "--otlp-timeout '{text}' is not a number of milliseconds from 1 to {MAX_EXPORT_TIMEOUT_MS}; 10000 instead"
                    ));
                    DEFAULT_EXPORT_TIMEOUT
                }
            },
        };
        let ratio = match given(&self.traces_sampler_arg) {
            None => 1.0,
            Some(text) => match text.parse::<f64>() {
                Ok(ratio) if (0.0..=1.0).contains(&ratio) => ratio,
                _ => {
                    warnings.push(format!(
                        "--traces-sampler-arg '{text}' is not a ratio from 0 to 1; 1 instead"
                    ));
                    1.0
                }
            },
        };
        Ok(Some(TraceSetup {
            endpoint: endpoint.to_owned(),
            protocol,
            service_name,
            resource_attributes: attributes,
            headers: ExportHeaders(headers),
            timeout,
            sampler,
            ratio,
            content: self.trace_content,
            chat_ids: self.trace_chat_ids,
            warnings,
        }))
    }
}

/// Parses `OTEL_RESOURCE_ATTRIBUTES`' form: `key=value` pairs separated by
/// commas, keys and values %-decoded and trimmed; an empty text is no pair.
/// A pair without `=` or with an empty key is an error naming it.
pub fn resource_attributes(text: &str) -> Result<Vec<(String, String)>, String> {
    key_value_pairs(
        text,
        "resource attribute",
        "--otel-resource-attributes",
        false,
    )
}

/// `key=value` pairs separated by commas, as OpenTelemetry's variables
/// write them (keys and values %-decoded and trimmed); an error names the
/// pair as `what` and the option it came from.
fn key_value_pairs(
    text: &str,
    what: &str,
    option: &str,
    secret: bool,
) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let given = text.split(',').map(str::trim).filter(|p| !p.is_empty());
    for (at, pair) in given.enumerate() {
        // A header's value may be a key: an error names its place only.
        let named = if secret {
            format!("number {}", at + 1)
        } else {
            format!("'{pair}'")
        };
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("{what} {named} is not key=value ({option})"));
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s.trim())
                .decode_utf8()
                .map(|s| s.into_owned())
                .map_err(|_| format!("{what} {named} is not UTF-8 once decoded ({option})"))
        };
        let (key, value) = (decode(key)?, decode(value)?);
        if key.is_empty() {
            return Err(format!("{what} {named} has no key ({option})"));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(endpoint: Option<&str>) -> TraceOptions {
        TraceOptions {
            otlp_endpoint: endpoint.map(str::to_owned),
            otlp_protocol: None,
            otel_service_name: None,
            otel_resource_attributes: None,
            traces_sampler: None,
            traces_sampler_arg: None,
            otlp_headers: None,
            otlp_traces_headers: None,
            otlp_timeout: None,
            otlp_traces_timeout: None,
            trace_content: false,
            trace_chat_ids: false,
        }
    }

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
    fn without_an_endpoint_nothing_else_is_read() {
        let mut off = options(None);
        off.otlp_protocol = Some("thrift".into());
        off.traces_sampler = Some("xray".into());
        off.traces_sampler_arg = Some("2".into());
        off.otel_resource_attributes = Some("novalue".into());
        assert_eq!(off.resolve(), Ok(None));
        off.otlp_endpoint = Some("  ".into());
        assert_eq!(off.resolve(), Ok(None), "an empty endpoint is unset");
    }

    #[test]
    fn with_an_endpoint_mistakes_are_refused_and_unknown_samplers_give_way() {
        let mut on = options(Some("http://127.0.0.1:4318"));
        let setup = on.resolve().unwrap().unwrap();
        assert_eq!(setup.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(setup.sampler, TraceSampler::ParentBasedAlwaysOn);
        assert_eq!((setup.ratio, setup.service_name.as_str()), (1.0, "recapd"));
        on.traces_sampler = Some("xray".into());
        on.traces_sampler_arg = Some("1.5".into());
        let setup = on.resolve().unwrap().unwrap();
        assert_eq!(setup.sampler, TraceSampler::ParentBasedAlwaysOn);
        assert_eq!(setup.ratio, 1.0);
        assert_eq!(setup.warnings.len(), 2);
        on.otlp_protocol = Some("thrift".into());
        assert!(on.resolve().unwrap_err().contains("--otlp-protocol"));
        on.otlp_protocol = Some("grpc".into());
        on.otel_resource_attributes = Some("novalue".into());
        assert!(on.resolve().unwrap_err().contains("resource attribute"));
        assert!(options(Some("ftp://x")).resolve().is_err());
    }

    #[test]
    fn headers_and_timeout_read_as_the_spec_writes_them() {
        let mut on = options(Some("http://127.0.0.1:4318"));
        let setup = on.resolve().unwrap().unwrap();
        assert!(setup.headers.0.is_empty());
        assert_eq!(setup.timeout, DEFAULT_EXPORT_TIMEOUT);
        on.otlp_headers = Some("x-api-key=s%3Dcret, x-team = one".into());
        on.otlp_timeout = Some("2500".into());
        let setup = on.resolve().unwrap().unwrap();
        assert_eq!(
            setup.headers.pairs(),
            vec![
                ("x-api-key".to_string(), "s=cret".to_string()),
                ("x-team".to_string(), "one".to_string()),
            ]
        );
        // The values never reach a log line through Debug.
        let shown = format!("{on:?} {setup:?}");
        assert!(
            shown.contains("x-api-key") && !shown.contains("cret"),
            "{shown}"
        );
        assert_eq!(setup.timeout, std::time::Duration::from_millis(2500));
        on.otlp_traces_headers = Some("only=traces".into());
        on.otlp_traces_timeout = Some("0".into());
        let setup = on.resolve().unwrap().unwrap();
        assert_eq!(
            setup.headers.pairs(),
            vec![("only".to_string(), "traces".to_string())]
        );
        assert_eq!(
            setup.timeout, DEFAULT_EXPORT_TIMEOUT,
            "0 gives way to the default"
        );
        assert_eq!(setup.warnings.len(), 1);
        // A malformed pair is named by its place, never by its text.
        for bad in ["Authorization: Bearer sk-1", "=sk-1", "x=%FF%FEsk-1"] {
            on.otlp_traces_headers = Some(format!("fine=1,{bad}"));
            let error = on.resolve().unwrap_err();
            assert!(error.contains("header number 2"), "{error}");
            assert!(!error.contains("sk-1"), "{error}");
        }
        on.otlp_traces_headers = Some("two words=x".into());
        assert!(on.resolve().unwrap_err().contains("--otlp-headers"));
        on.otlp_traces_headers = Some("x-key=line%0Abreak".into());
        assert!(on.resolve().unwrap_err().contains("--otlp-headers"));
    }

    #[test]
    fn the_service_name_comes_from_the_flag_then_the_attributes_then_the_default() {
        let mut on = options(Some("http://127.0.0.1:4318"));
        on.otel_resource_attributes = Some("service.name=from-attributes,a=b".into());
        let setup = on.resolve().unwrap().unwrap();
        assert_eq!(setup.service_name, "from-attributes");
        assert_eq!(
            setup.resource_attributes,
            vec![("a".to_string(), "b".to_string())]
        );
        on.otel_service_name = Some("from-flag".into());
        assert_eq!(on.resolve().unwrap().unwrap().service_name, "from-flag");
    }
}
