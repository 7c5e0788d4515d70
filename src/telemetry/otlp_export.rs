//! The exporter that sends batches of finished spans to the collector:
//! OTLP over gRPC or over HTTP with protobuf bodies, the request written by
//! [`super::otlp_wire`] (a tenth of what `opentelemetry-otlp`'s conversion
//! costs a span); OTLP over HTTP with JSON bodies, a debugging aid, through
//! `opentelemetry-otlp`'s own exporter.
//!
//! A collector's answer is read at most [`MAX_ANSWER_BYTES`]; spans it
//! says it rejected (OTLP's partial success) count as dropped.

use std::collections::HashMap;
use std::time::Duration;

use bytes::BufMut as _;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use prost::Message as _;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use super::otlp_wire::RequestWriter;
use crate::config::{OtlpProtocol, TraceSetup};

/// Most bytes of a collector's answer read (its partial-success message).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The OTLP/gRPC method spans are sent to.
const GRPC_EXPORT: &str = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

/// The exporter for a setup: [`WireExporter`] for gRPC and http/protobuf,
/// `opentelemetry-otlp`'s for http/json.
#[derive(Debug)]
pub enum Exporter {
    /// Requests written by recapd.
    Wire(WireExporter),
    /// `opentelemetry-otlp`'s JSON exporter.
    Json(opentelemetry_otlp::SpanExporter),
}

impl Exporter {
    /// The exporter `setup` asks for. Must run inside the Tokio runtime (a
    /// gRPC channel connects lazily on it). An error is one line naming the
    /// option at fault.
    pub fn new(setup: &TraceSetup) -> Result<Exporter, String> {
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
                let url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
                if setup.protocol == OtlpProtocol::HttpJson {
                    let headers = setup.headers.pairs().into_iter().collect::<HashMap<_, _>>();
                    return opentelemetry_otlp::SpanExporter::builder()
                        .with_http()
                        .with_http_client(client)
                        .with_protocol(opentelemetry_otlp::Protocol::HttpJson)
                        .with_endpoint(url)
                        .with_headers(headers)
                        .with_timeout(setup.timeout)
                        .build()
                        .map(Exporter::Json)
                        .map_err(|error| format!("--otlp-endpoint '{endpoint}': {error}"));
                }
                headers.insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/x-protobuf"),
                );
                Transport::Http {
                    client,
                    url,
                    headers,
                }
            }
        };
        Ok(Exporter::Wire(WireExporter {
            writer: RequestWriter::default(),
            transport,
        }))
    }
}

impl SpanExporter for Exporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        match self {
            Exporter::Wire(exporter) => exporter.export(batch).await,
            Exporter::Json(exporter) => exporter.export(batch).await,
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        match self {
            Exporter::Wire(_) => Ok(()),
            Exporter::Json(exporter) => exporter.shutdown_with_timeout(timeout),
        }
    }

    fn set_resource(&mut self, resource: &Resource) {
        match self {
            Exporter::Wire(exporter) => exporter.writer = RequestWriter::new(resource),
            Exporter::Json(exporter) => exporter.set_resource(resource),
        }
    }
}

/// Sends requests written by [`RequestWriter`].
#[derive(Debug)]
pub struct WireExporter {
    writer: RequestWriter,
    transport: Transport,
}

/// Where a [`WireExporter`] sends, with the operator's headers (marked
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
    },
}

impl WireExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if batch.is_empty() {
            return Ok(());
        }
        let body = self.writer.write(&batch);
        let sent = batch.len();
        drop(batch);
        let answer = match &self.transport {
            Transport::Grpc { client, metadata } => {
                let mut client = client.clone();
                client.ready().await.map_err(failure)?;
                let mut request = tonic::Request::new(body);
                *request.metadata_mut() = metadata.clone();
                client
                    .unary(
                        request,
                        http::uri::PathAndQuery::from_static(GRPC_EXPORT),
                        RawCodec,
                    )
                    .await
                    .map_err(|status| {
                        failure(format!("{:?}: {}", status.code(), status.message()))
                    })?
                    .into_inner()
            }
            Transport::Http {
                client,
                url,
                headers,
            } => {
                let mut response = client
                    .post(url)
                    .headers(headers.clone())
                    .body(body)
                    .send()
                    .await
                    .map_err(failure)?;
                let status = response.status();
                let mut read = Vec::new();
                while read.len() < MAX_ANSWER_BYTES
                    && let Some(chunk) = response.chunk().await.map_err(failure)?
                {
                    read.extend_from_slice(&chunk);
                }
                if !status.is_success() {
                    return Err(failure(format!("HTTP {status}")));
                }
                ExportTraceServiceResponse::decode(read.as_slice()).unwrap_or_default()
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

/// An export failure, for the debug log.
fn failure(error: impl std::fmt::Display) -> OTelSdkError {
    OTelSdkError::InternalFailure(error.to_string())
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
