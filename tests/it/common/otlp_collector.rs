//! A collector stand-in: an OTLP trace receiver over gRPC (the protocol's
//! own generated `TraceService`, from `opentelemetry-proto`) and over HTTP
//! (`POST /v1/traces`, protobuf or JSON bodies), keeping every export request it is
//! sent, so that tests read the spans recapd exported as a real collector
//! would receive them.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;

/// The receiver: its address and what it was sent.
#[derive(Clone)]
pub struct Collector {
    received: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    headers: Arc<Mutex<Vec<http::HeaderMap>>>,
    url: String,
}

struct Receiver {
    received: Arc<Mutex<Vec<ExportTraceServiceRequest>>>,
    headers: Arc<Mutex<Vec<http::HeaderMap>>>,
}

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.headers
            .lock()
            .expect("not poisoned")
            .push(request.metadata().clone().into_headers());
        self.received
            .lock()
            .expect("not poisoned")
            .push(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Collector {
    /// A receiver of OTLP over gRPC on a loopback port.
    pub async fn start_grpc() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("bound"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let service = TraceServiceServer::new(Receiver {
            received: received.clone(),
            headers: headers.clone(),
        });
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        Collector {
            received,
            headers,
            url,
        }
    }

    /// A receiver of OTLP over HTTP (protobuf or JSON) on a loopback port: its url
    /// is the base, requests go to `/v1/traces`; anything else is 404.
    pub async fn start_http() -> Collector {
        use http_body_util::BodyExt as _;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port");
        let url = format!("http://{}", listener.local_addr().expect("bound"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let kept = received.clone();
        let kept_headers = headers.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let kept = kept.clone();
                let kept_headers = kept_headers.clone();
                let service = hyper::service::service_fn(
                    move |request: hyper::Request<hyper::body::Incoming>| {
                        let kept = kept.clone();
                        kept_headers
                            .lock()
                            .expect("not poisoned")
                            .push(request.headers().clone());
                        async move {
                            let content_type = request
                                .headers()
                                .get("content-type")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned();
                            let json = content_type == "application/json";
                            let wanted = request.method() == hyper::Method::POST
                                && request.uri().path() == "/v1/traces"
                                && (json || content_type == "application/x-protobuf");
                            let body = request.into_body().collect().await?.to_bytes();
                            let decoded = if json {
                                serde_json::from_slice::<ExportTraceServiceRequest>(&body)
                                    .map_err(|error| error.to_string())
                            } else {
                                ExportTraceServiceRequest::decode(body)
                                    .map_err(|error| error.to_string())
                            };
                            let status = match (wanted, decoded) {
                                (true, Ok(export)) => {
                                    kept.lock().expect("not poisoned").push(export);
                                    200
                                }
                                (true, Err(_)) => 400,
                                (false, _) => 404,
                            };
                            let answer = if json {
                                serde_json::to_vec(&ExportTraceServiceResponse::default())?
                            } else {
                                ExportTraceServiceResponse::default().encode_to_vec()
                            };
                            let response = hyper::Response::builder()
                                .status(status)
                                .header("content-type", content_type)
                                .body(http_body_util::Full::new(bytes::Bytes::from(answer)))?;
                            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(response)
                        }
                    },
                );
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service),
                );
            }
        });
        Collector {
            received,
            headers,
            url,
        }
    }

    /// The values of header `name` on every request received (gRPC
    /// metadata included).
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .lock()
            .expect("not poisoned")
            .iter()
            .flat_map(|headers| headers.get_all(name))
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
            .collect()
    }

    /// The base URL to give `--otlp-endpoint`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Span> {
        self.received
            .lock()
            .expect("not poisoned")
            .iter()
            .flat_map(|export| &export.resource_spans)
            .flat_map(|resource| &resource.scope_spans)
            .flat_map(|scope| scope.spans.iter().cloned())
            .collect()
    }

    /// The `service.name` of every resource received.
    pub fn service_names(&self) -> Vec<String> {
        self.received
            .lock()
            .expect("not poisoned")
            .iter()
            .flat_map(|export| &export.resource_spans)
            .filter_map(|resource| resource.resource.as_ref())
            .flat_map(|resource| &resource.attributes)
            .filter(|kv| kv.key == "service.name")
            .filter_map(|kv| match kv.value.as_ref()?.value.as_ref()? {
                Value::StringValue(name) => Some(name.clone()),
                _ => None,
            })
            .collect()
    }

    /// Everything received, as text (every name, attribute, event and
    /// link), for checks that some text appears nowhere.
    pub fn everything(&self) -> String {
        format!("{:?}", self.received.lock().expect("not poisoned"))
    }

    /// Waits up to 20 s until `found` picks something from the spans
    /// received; panics naming `what` otherwise.
    pub async fn wait_for<T>(&self, what: &str, found: impl Fn(&[Span]) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(found) = found(&self.spans()) {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what} never reached the collector; received: {:#?}",
                self.spans()
                    .iter()
                    .map(|span| &span.name)
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The value of attribute `key` of `span`.
pub fn attribute<'a>(span: &'a Span, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

/// A string attribute of `span`.
pub fn text(span: &Span, key: &str) -> Option<String> {
    match attribute(span, key)? {
        Value::StringValue(text) => Some(text.clone()),
        _ => None,
    }
}

/// An integer attribute of `span`.
pub fn int(span: &Span, key: &str) -> Option<i64> {
    match attribute(span, key)? {
        Value::IntValue(n) => Some(*n),
        _ => None,
    }
}

/// A W3C `traceparent` for a new sampled trace, and its trace and span ids
/// as the bytes OTLP carries.
pub fn new_traceparent() -> (String, Vec<u8>, Vec<u8>) {
    // Never all zeros (an invalid id): the last byte of each is odd.
    let mut trace: [u8; 16] = rand::random();
    let mut span: [u8; 8] = rand::random();
    trace[15] |= 1;
    span[7] |= 1;
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    (
        format!("00-{}-{}-01", hex(&trace), hex(&span)),
        trace.to_vec(),
        span.to_vec(),
    )
}
