//! The exporter that sends batches of finished spans to the collector:
//! OTLP over gRPC, or over HTTP with protobuf or JSON bodies. The spans come
//! written as OTLP ([`super::otlp_wire`]); the request is their bytes with
//! the resource and scope around them. A JSON body is that request read
//! back with `opentelemetry-proto`'s types and written with their serde
//! form, OTLP/JSON as the protocol defines it (JSON is a debugging aid:
//! the extra work is only its own).
//!
//! A collector's answer is read at most [`MAX_ANSWER_BYTES`]; spans it
//! says it rejected (OTLP's partial success) count as dropped.

use bytes::BufMut as _;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::otlp_wire::RequestWriter;
use super::traces::Sink;
use super::traces::queue::Written;
use crate::config::{OtlpProtocol, TraceSetup};

/// Most bytes of a collector's answer read (its partial-success message).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The OTLP/gRPC method spans are sent to.
const GRPC_EXPORT: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// Sends batches written by [`super::otlp_wire`] to the collector a setup
/// names.
#[derive(Debug)]
pub struct Exporter {
    writer: RequestWriter,
    transport: Transport,
}

/// Where an [`Exporter`] sends, with the operator's headers (marked
/// sensitive: `Debug` shows none of their values).
#[derive(Debug)]
enum Transport {
    Grpc {
        client: tonic::client::Grpc<tonic::transport::Channel>,
        metadata: tonic::metadata::MetadataMap,
    },
    Http {
        client: reqwest::Client,
        url: String,
        headers: http::HeaderMap,
        json: bool,
    },
}

impl Exporter {
    /// The exporter `setup` asks for, writing requests with `writer`. Must
    /// run inside the Tokio runtime (a gRPC channel connects lazily on it).
    /// An error is one line naming the option at fault.
    pub fn new(setup: &TraceSetup, writer: RequestWriter) -> Result<Exporter, String> {
        let endpoint = setup.endpoint.as_str();
        let tls = endpoint.starts_with("https://");
        let mut headers = setup.headers.0.clone();
        let transport = match setup.protocol {
            OtlpProtocol::Grpc => {
                let mut channel = tonic::transport::Endpoint::from_shared(endpoint.to_owned())
                    .map_err(|error| format!("--otlp-endpoint '{endpoint}': {error}"))?
                    .timeout(setup.timeout)
                    .connect_timeout(setup.timeout);
                if tls {
                    channel = channel
                        .tls_config(tonic::transport::ClientTlsConfig::new().with_native_roots())
                        .map_err(|error| format!("--otlp-endpoint '{endpoint}': {error}"))?;
                }
                Transport::Grpc {
                    client: tonic::client::Grpc::new(channel.connect_lazy())
                        .max_decoding_message_size(MAX_ANSWER_BYTES),
                    metadata: tonic::metadata::MetadataMap::from_headers(headers),
                }
            }
            OtlpProtocol::HttpProtobuf | OtlpProtocol::HttpJson => {
                let client = reqwest::Client::builder()
                    .use_preconfigured_tls(crate::llm::tls_config(tls, "--otlp-endpoint")?)
                    .timeout(setup.timeout)
                    .build()
                    .map_err(|error| {
                        format!("--otlp-endpoint: cannot build the HTTP client: {error}")
                    })?;
                let json = setup.protocol == OtlpProtocol::HttpJson;
                headers.insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static(if json {
                        "application/json"
                    } else {
                        "application/x-protobuf"
                    }),
                );
                Transport::Http {
                    client,
                    url: format!("{}/v1/traces", endpoint.trim_end_matches('/')),
                    headers,
                    json,
                }
            }
        };
        Ok(Exporter { writer, transport })
    }
}

impl Sink for Exporter {
    async fn send(&self, batch: Written) -> Result<(), String> {
        let sent = batch.spans();
        let body = self.writer.write(&batch.bytes);
        drop(batch);
        let answer = match &self.transport {
            Transport::Grpc { client, metadata } => {
                let mut client = client.clone();
                client.ready().await.map_err(|error| error.to_string())?;
                let mut request = tonic::Request::new(body);
                *request.metadata_mut() = metadata.clone();
                client
                    .unary(
                        request,
                        http::uri::PathAndQuery::from_static(GRPC_EXPORT),
                        RawCodec,
                    )
                    .await
                    .map_err(|status| format!("{:?}: {}", status.code(), status.message()))?
                    .into_inner()
            }
            Transport::Http {
                client,
                url,
                headers,
                json,
            } => {
                let body = if *json { as_json(&body)? } else { body };
                let mut response = client
                    .post(url)
                    .headers(headers.clone())
                    .body(body)
                    .send()
                    .await
                    .map_err(|error| error.to_string())?;
                let status = response.status();
                let mut read = Vec::new();
                while read.len() < MAX_ANSWER_BYTES
                    && let Some(chunk) =
                        response.chunk().await.map_err(|error| error.to_string())?
                {
                    read.extend_from_slice(&chunk);
                }
                if !status.is_success() {
                    return Err(format!("HTTP {status}"));
                }
                // An answer that does not parse (an empty body, a proxy's
                // page) says nothing was rejected.
                if *json {
                    json_answer(&read)
                } else {
                    ExportTraceServiceResponse::decode(read.as_slice()).unwrap_or_default()
                }
            }
        };
        if let Some(partial) = answer.partial_success
            && partial.rejected_spans > 0
        {
            // Taken, but not all kept: those spans are lost.
            // At most what was sent, whatever the collector claims.
            let rejected = usize::try_from(partial.rejected_spans).map_or(sent, |n| n.min(sent));
            super::traces::count_dropped_export(rejected as u64);
            tracing::debug!(
                rejected = partial.rejected_spans,
                message = %partial.error_message,
                "the collector rejected spans"
            );
        }
        Ok(())
    }
}

/// A collector's OTLP/JSON answer: its partial success, the rejected count
/// a number or, as the protocol's JSON mapping writes 64-bit integers, a
/// string (`opentelemetry-proto`'s serde form reads only numbers).
fn json_answer(read: &[u8]) -> ExportTraceServiceResponse {
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase", default)]
    struct Answer {
        partial_success: Option<Partial>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(rename_all = "camelCase", default)]
    struct Partial {
        rejected_spans: Option<serde_json::Value>,
        error_message: String,
    }
    let answer: Answer = serde_json::from_slice(read).unwrap_or_default();
    ExportTraceServiceResponse {
        partial_success: answer.partial_success.map(|partial| {
            let rejected = match partial.rejected_spans {
                Some(serde_json::Value::Number(n)) => n.as_i64().unwrap_or(0),
                Some(serde_json::Value::String(text)) => text.parse().unwrap_or(0),
                _ => 0,
            };
            ExportTracePartialSuccess {
                rejected_spans: rejected,
                error_message: partial.error_message,
            }
        }),
    }
}

/// A request written as protobuf, as OTLP/JSON.
fn as_json(request: &[u8]) -> Result<Vec<u8>, String> {
    let request = ExportTraceServiceRequest::decode(request)
        .map_err(|error| format!("a written request does not decode: {error}"))?;
    serde_json::to_vec(&request).map_err(|error| error.to_string())
}

/// The gRPC codec of an export: the request as written bytes, the answer
/// decoded.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = ExportTraceServiceResponse;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = ExportTraceServiceResponse;
    type Error = tonic::Status;

    fn decode(
        &mut self,
        src: &mut DecodeBuf<'_>,
    ) -> Result<Option<ExportTraceServiceResponse>, tonic::Status> {
        ExportTraceServiceResponse::decode(src)
            .map(Some)
            .map_err(|error| tonic::Status::internal(error.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::json_answer;

    #[test]
    fn a_json_answer_s_rejected_count_is_read_as_a_string_or_a_number() {
        let rejected = |body: &str| {
            json_answer(body.as_bytes())
                .partial_success
                .map(|partial| partial.rejected_spans)
        };
        assert_eq!(
            rejected(r#"{"partialSuccess":{"rejectedSpans":"3","errorMessage":"x"}}"#),
            Some(3)
        );
        assert_eq!(
            rejected(r#"{"partialSuccess":{"rejectedSpans":4}}"#),
            Some(4)
        );
        assert_eq!(rejected(r#"{"partialSuccess":{}}"#), Some(0));
        assert_eq!(rejected("{}"), None);
        assert_eq!(rejected("<html>a proxy's page</html>"), None);
    }
}
