//! What recapd's TLS clients share (the tool subcommands' dialler and the
//! PostgreSQL connector): reading PEM certificates from a file the
//! operator named, a certificate verifier for rules of recapd's own
//! ([`CertCheck`]), and an error's message with its causes (a TLS handshake
//! failure keeps its reason in the source chain, under a message that says
//! nothing by itself).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

/// Every certificate of the PEM file at `path`, named by `what` (the flag
/// or URL parameter that gave it) in errors; a file with none is an error.
pub fn read_certs(what: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{what} {}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{what} {}: no PEM certificate in it",
            path.display()
        ));
    }
    Ok(certs)
}

/// `error`'s message followed by each of its sources' that it does not
/// already include, `: `-separated.
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text
}

/// How a server certificate is judged: `Ok` accepts it. The arguments are
/// those of [`ServerCertVerifier::verify_server_cert`].
pub type CertRule = dyn Fn(
        &CertificateDer<'_>,
        &[CertificateDer<'_>],
        &ServerName<'_>,
        &[u8],
        UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error>
    + Send
    + Sync;

/// A server-certificate verifier of recapd's own rule (pinned
/// certificates, a chain without its name, none at all), with the
/// handshake's signatures always checked by `provider`'s algorithms, so no
/// rule can skip them.
pub struct CertCheck {
    /// What the rule is, for `Debug`.
    name: &'static str,
    provider: Arc<CryptoProvider>,
    rule: Box<CertRule>,
}

impl CertCheck {
    /// A verifier applying `rule` to the server's certificate.
    pub fn new(
        name: &'static str,
        provider: Arc<CryptoProvider>,
        rule: impl Fn(
            &CertificateDer<'_>,
            &[CertificateDer<'_>],
            &ServerName<'_>,
            &[u8],
            UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error>
        + Send
        + Sync
        + 'static,
    ) -> Arc<CertCheck> {
        Arc::new(CertCheck {
            name,
            provider,
            rule: Box::new(rule),
        })
    }
}

impl fmt::Debug for CertCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CertCheck").field(&self.name).finish()
    }
}

impl ServerCertVerifier for CertCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        (self.rule)(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
