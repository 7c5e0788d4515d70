//! What recapd's TLS clients share (the tool subcommands' dialler and the
//! PostgreSQL connector): reading PEM certificates from a file the
//! operator named, and an error's message with its causes (a TLS handshake
//! failure keeps its reason in the source chain, under a message that says
//! nothing by itself).

use std::path::Path;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

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
