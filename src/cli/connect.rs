//! How every tool subcommand dials the server: plaintext, or TLS when given
//! `--tls-ca FILE` (`RECAPD_TLS_CA`) or `--tls` (the system's roots), the
//! name checked being `--tls-server-name` or the address's host. A
//! certificate found in the `--tls-ca` file is trusted as it is when the
//! server presents it (a self-signed server certificate, whatever its CA
//! flag); the file's certificates are the roots of any other. Without those
//! flags a subcommand dials the way the server with the same configuration
//! serves: when `--tls-cert` is set (flag or `RECAPD_TLS_CERT`), over TLS
//! trusting that very certificate; so the container's `recapd health`
//! works with TLS on and nothing more set.
//!
//! The TLS is rustls (ring provider) under tonic, through a connector of
//! this module's own: tonic's TLS settings cannot trust one certificate as
//! it is.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tonic::codegen::http::Uri;
use tonic::transport::{Channel, Endpoint};

use crate::config::{ClientTls, Config};
pub use crate::tls_common::with_causes;
use crate::tls_common::{CertCheck, read_certs};

/// How long a subcommand waits for the connection (TCP and TLS).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Where and how a subcommand dials: the address (`host:port`) and, for
/// TLS, the client configuration (its files already read) and the name
/// the server's certificate must carry. Shown as the address.
#[derive(Clone)]
pub struct Dial {
    addr: String,
    tls: Option<Tls>,
}

/// The TLS side of a [`Dial`].
#[derive(Clone)]
struct Tls {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
}

impl fmt::Debug for Dial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dial")
            .field("addr", &self.addr)
            .field("tls_name", &self.tls.as_ref().map(|tls| &tls.name))
            .finish()
    }
}

impl fmt::Display for Dial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.addr)
    }
}

impl Dial {
    /// How to dial `addr` given the subcommand's TLS flags and the server
    /// configuration (`server`, for its `--tls-cert` when no TLS flag is
    /// given); reads the certificate files. An error names the flag.
    pub fn new(
        addr: impl Into<String>,
        flags: &ClientTls,
        server: &Config,
    ) -> Result<Dial, String> {
        let addr = addr.into();
        let trusted = if let Some(ca) = &flags.tls_ca {
            Some(read_certs("--tls-ca", ca)?)
        } else if flags.tls {
            Some(Vec::new())
        } else if let Some(cert) = &server.tls_cert {
            Some(read_certs("--tls-cert", cert)?)
        } else if flags.tls_server_name.is_some() {
            return Err("--tls-server-name needs --tls-ca or --tls".into());
        } else {
            None
        };
        let tls = match trusted {
            None => None,
            Some(certs) => {
                let name = flags
                    .tls_server_name
                    .clone()
                    .unwrap_or_else(|| host_of(&addr).to_owned());
                let name = ServerName::try_from(name.clone())
                    .map_err(|_| format!("--tls-server-name: {name:?} is not a host name"))?;
                Some(Tls {
                    config: Arc::new(client_config(certs)?),
                    name,
                })
            }
        };
        Ok(Dial { addr, tls })
    }

    /// Whether this dials over TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Connects. The error spells out its causes (a refused certificate
    /// says why) and, for a plaintext dial that reached a server whose
    /// first call then failed at the transport, suggests TLS.
    pub async fn channel(&self) -> Result<Channel, String> {
        let endpoint = Endpoint::from_shared(format!("http://{}", self.addr))
            .map_err(|e| format!("not an address (host:port): {e}"))?
            .connect_timeout(CONNECT_TIMEOUT);
        if let Some(tls) = &self.tls {
            return endpoint
                .connect_with_connector(TlsDialer(tls.clone()))
                .await
                .map_err(|e| with_causes(&e));
        }
        let channel = endpoint.connect().await.map_err(|e| with_causes(&e))?;
        // A TLS server accepts the TCP connection and fails only the
        // first call, with an HTTP/2 error that says nothing of TLS: one
        // health call (it needs no token) tells it here.
        let mut client = tonic_health::pb::health_client::HealthClient::new(channel.clone());
        let health = client.check(tonic_health::pb::HealthCheckRequest::default());
        match tokio::time::timeout(CONNECT_TIMEOUT, health).await {
            Ok(Err(status)) => match std::error::Error::source(&status) {
                Some(transport) => Err(format!(
                    "{}: {} (if the server uses TLS, give --tls-ca FILE or --tls)",
                    status.message(),
                    with_causes(transport)
                )),
                None => Ok(channel),
            },
            _ => Ok(channel),
        }
    }
}

/// The host of `host:port` (`[v6]:port` without its brackets).
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// A client configuration trusting `certs` (each as it is, and as roots),
/// or the system's roots when `certs` is empty; HTTP/2 by ALPN.
fn client_config(certs: Vec<CertificateDer<'static>>) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    if certs.is_empty() {
        let found = rustls_native_certs::load_native_certs();
        if roots.add_parsable_certificates(found.certs).0 == 0 {
            return Err("--tls: no system root certificate found".into());
        }
    } else {
        roots.add_parsable_certificates(certs.iter().cloned());
    }
    // No usable root (a file of end-entity certificates only): the pinned
    // certificates alone are trusted.
    let chain = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .ok();
    // The server's certificate is one of `certs`, or verifies (chain and
    // name) against the roots of `chain`.
    let verifier = CertCheck::new(
        "pinned or chain",
        provider.clone(),
        move |end_entity, intermediates, name, ocsp, now| {
            if certs.iter().any(|cert| cert == end_entity) {
                return Ok(ServerCertVerified::assertion());
            }
            match &chain {
                Some(chain) => chain.verify_server_cert(end_entity, intermediates, name, ocsp, now),
                None => Err(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer,
                )),
            }
        },
    );
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// The connector tonic dials through: TCP, then the TLS handshake.
#[derive(Clone)]
struct TlsDialer(Tls);

impl tower::Service<Uri> for TlsDialer {
    type Response = TokioIo<TlsStream<TcpStream>>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.0.clone();
        Box::pin(async move {
            let host = uri.host().unwrap_or_default();
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let port = uri.port_u16().unwrap_or(443);
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            let stream = TlsConnector::from(tls.config)
                .connect(tls.name, tcp)
                .await?;
            Ok(TokioIo::new(stream))
        })
    }
}

#[cfg(test)]
mod tests;
