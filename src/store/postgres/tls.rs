//! TLS to PostgreSQL, with libpq's `sslmode` semantics read from the
//! `--store` URL: `disable`, `prefer` (the default: TLS when the server
//! offers it), `require` (encrypted, not verified), `verify-ca` (the chain
//! checked against the `sslrootcert` file, which it needs: against the
//! system's roots any publicly issued certificate would pass, so libpq
//! refuses that too) and `verify-full` (the host name too, against
//! `sslrootcert` or the system's roots). `sslcert`/`sslkey` give a client
//! certificate. tokio-postgres parses `sslmode` itself but knows only its
//! first three values and none of the file parameters, so these are taken
//! out of the URL here ([`split_url`]) and the rest is handed to it.
//!
//! The connector is rustls (with the ring provider, as recapd's gRPC TLS)
//! through `tokio-postgres-rustls`; it is built, its files read, when the
//! configuration is read, so a bad file stops recapd before it binds.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use rustls::{CertificateError, ClientConfig, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::tls_common::{CertCheck, read_certs};

/// libpq's `sslmode` values (`allow` aside, which tokio-postgres cannot do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS when the server offers it, plaintext otherwise; not verified.
    Prefer,
    /// TLS or no connection; the certificate is not verified (unless
    /// `sslrootcert` names a file: then as `verify-ca`, as libpq does).
    Require,
    /// TLS, the server's chain verified against the trusted roots.
    VerifyCa,
    /// As `verify-ca`, and the certificate must name the host dialled.
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<SslMode, String> {
        Ok(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => {
                return Err(
                    "sslmode=allow is not supported; use prefer (TLS when the server offers it)"
                        .into(),
                );
            }
            _ => {
                return Err(
                    "sslmode: expected disable, prefer, require, verify-ca or verify-full".into(),
                );
            }
        })
    }

    /// The tokio-postgres mode: whether TLS is attempted and whether it is
    /// required (verification is the connector's business).
    fn negotiation(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }
}

/// The TLS parameters of a store URL that recapd handles itself, before
/// any file is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsParams {
    /// `sslmode`; `None`: libpq's default, `prefer` (or `verify-full`
    /// with `sslrootcert=system`, as libpq).
    pub mode: Option<SslMode>,
    /// `sslrootcert`: a PEM file of trusted roots, or `system`.
    pub root_cert: Option<String>,
    /// `sslcert`: the client certificate chain (PEM).
    pub cert: Option<PathBuf>,
    /// `sslkey`: the client certificate's key (PEM).
    pub key: Option<PathBuf>,
}

/// Splits a `postgres://` URL into the URL tokio-postgres is given (its
/// query without `sslmode`, `sslrootcert`, `sslcert` and `sslkey`) and
/// those parameters, percent-decoded. Errors never repeat the URL (it may
/// hold a password).
///
/// The query is what follows the first `?`, as libpq and tokio-postgres
/// read it; `url::Url` is not the parser here because it refuses URLs
/// both accept (several hosts: `postgres://h1:5432,h2:5433/db`), and its
/// query decoding reads `+` as a space where libpq keeps `+`.
pub fn split_url(url: &str) -> Result<(String, TlsParams), String> {
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), TlsParams::default()));
    };
    let mut params = TlsParams::default();
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decoded = || percent_decode(value).ok_or_else(|| format!("{key}: bad %-escape"));
        match key {
            "sslmode" => params.mode = Some(SslMode::parse(&decoded()?)?),
            "sslrootcert" => params.root_cert = Some(decoded()?),
            "sslcert" => params.cert = Some(PathBuf::from(decoded()?)),
            "sslkey" => params.key = Some(PathBuf::from(decoded()?)),
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, params))
}

/// `%XX` escapes decoded (`percent-encoding`), `+` left as is (a URL
/// query, as libpq reads it); `None` for a malformed escape, which
/// `percent-encoding` would keep as text, or bytes that are not UTF-8.
fn percent_decode(value: &str) -> Option<String> {
    let well_formed = value.split('%').skip(1).all(|after| {
        after
            .as_bytes()
            .get(..2)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(value)
        .decode_utf8()
        .ok()
        .map(|decoded| decoded.into_owned())
}

/// Where the trusted roots come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    /// None needed: the certificate is not verified.
    Unverified,
    /// The operating system's store.
    System,
    /// A PEM file (`sslrootcert`).
    File(PathBuf),
}

/// The TLS side of the store's connections (pool and listener alike): the
/// mode and the connector, files read. Compared and shown by what it was
/// built from, never by key material.
#[derive(Clone)]
pub struct PgTls {
    mode: SslMode,
    roots: Roots,
    client_cert: Option<PathBuf>,
    connector: MakeRustlsConnect,
}

impl fmt::Debug for PgTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTls")
            .field("mode", &self.mode)
            .field("roots", &self.roots)
            .field("client_cert", &self.client_cert)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PgTls {
    fn eq(&self, other: &PgTls) -> bool {
        (self.mode, &self.roots, &self.client_cert)
            == (other.mode, &other.roots, &other.client_cert)
    }
}

impl Eq for PgTls {}

impl PgTls {
    /// Reads the files `params` names and builds the connector; sets the
    /// TLS negotiation of `config` to match. An error names the parameter
    /// and the file, never the URL.
    pub fn build(params: &TlsParams, config: &mut tokio_postgres::Config) -> Result<PgTls, String> {
        let system = params.root_cert.as_deref() == Some("system");
        let mode = match params.mode {
            Some(mode) => mode,
            None if system => SslMode::VerifyFull,
            None => SslMode::Prefer,
        };
        if system && mode != SslMode::VerifyFull {
            return Err("sslrootcert=system needs sslmode=verify-full (or no sslmode)".into());
        }
        let root_file = params
            .root_cert
            .as_deref()
            .filter(|_| !system)
            .map(PathBuf::from);
        // libpq: `require` with a root file verifies the chain, as verify-ca.
        let mode = match (mode, &root_file) {
            (SslMode::Require, Some(_)) => SslMode::VerifyCa,
            (mode, _) => mode,
        };
        let roots = match (mode, root_file) {
            (SslMode::VerifyCa | SslMode::VerifyFull, Some(file)) => Roots::File(file),
            (SslMode::VerifyCa, None) => {
                return Err(
                    "sslmode=verify-ca needs sslrootcert=FILE (without the host \
                            name check, the system's roots would accept any publicly \
                            issued certificate; use verify-full for them)"
                        .into(),
                );
            }
            (SslMode::VerifyFull, None) => Roots::System,
            _ => Roots::Unverified,
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = match &roots {
            // `prefer` and `require`: encrypted, the certificate not
            // checked (the handshake's signatures still are).
            Roots::Unverified => CertCheck::new("unverified", provider.clone(), |_, _, _, _, _| {
                Ok(ServerCertVerified::assertion())
            }),
            Roots::System | Roots::File(_) => {
                let store = Arc::new(root_store(&roots)?);
                let webpki = WebPkiServerVerifier::builder_with_provider(store, provider.clone())
                    .build()
                    .map_err(|e| format!("sslrootcert: {e}"))?;
                if mode == SslMode::VerifyFull {
                    webpki
                } else {
                    chain_only(webpki, provider.clone())
                }
            }
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let client = match (&params.cert, &params.key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(read_certs("sslcert", cert)?, read_key(key)?)
                .map_err(|e| format!("sslcert/sslkey: {e}"))?,
            _ => return Err("sslcert and sslkey go together".into()),
        };
        config.ssl_mode(mode.negotiation());
        Ok(PgTls {
            mode,
            roots,
            client_cert: params.cert.clone(),
            connector: MakeRustlsConnect::new(client),
        })
    }

    /// The effective mode (`require` with a root file counts as `verify-ca`).
    pub fn mode(&self) -> SslMode {
        self.mode
    }

    /// The connector every connection of the store uses.
    pub(super) fn connector(&self) -> MakeRustlsConnect {
        self.connector.clone()
    }
}

fn root_store(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::Unverified => {}
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(
                    "verify-full without sslrootcert: no system root certificate found".into(),
                );
            }
        }
        Roots::File(path) => {
            for cert in read_certs("sslrootcert", path)? {
                store
                    .add(cert)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
        }
    }
    Ok(store)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| format!("sslkey {}: {e}", path.display()))
}

/// `verify-ca`: the chain checked against `webpki`'s roots, but not the
/// host name (which rustls checks last, once the chain is verified; the
/// unit test `verify_ca_checks_the_chain_whatever_the_name` pins that
/// order).
fn chain_only(webpki: Arc<WebPkiServerVerifier>, provider: Arc<CryptoProvider>) -> Arc<CertCheck> {
    CertCheck::new(
        "verify-ca",
        provider,
        move |end_entity, intermediates, name, ocsp, now| match webpki.verify_server_cert(
            end_entity,
            intermediates,
            name,
            ocsp,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        },
    )
}

#[cfg(test)]
mod tests;
