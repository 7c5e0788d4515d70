//! The tool subcommands against a server with TLS on (`--tls-cert`: a
//! certificate for the name `recapd.test` only, signed by a CA made here):
//! `recapd health`, `import` and `export` with `--tls-ca` (or
//! `RECAPD_TLS_CA`) and `--tls-server-name` work; without the CA they fail
//! saying TLS may be needed, with another CA or under another name they
//! fail naming the certificate. `recapd health` given the server's own
//! `--tls-cert` and nothing else (the container's HEALTHCHECK) works, a
//! self-signed certificate with the CA flag (as `openssl req -x509` makes
//! them) too. And the bearer scheme is accepted in lower case.

use std::path::{Path, PathBuf};

use crate::common::process::run_recapd as recapd;
use crate::common::*;
use recapd::app::App;
use recapd::grpc::pb;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::transport::{Certificate, Channel, ClientTlsConfig};

/// The name the server's certificate carries.
const NAME: &str = "recapd.test";

/// A self-signed certificate for [`NAME`] and its key, written to `dir`;
/// with the CA flag when `ca`.
fn certificate(dir: &Path, stem: &str, ca: bool) -> (PathBuf, PathBuf) {
    let mut params = rcgen::CertificateParams::new(vec![NAME.to_owned()]).unwrap();
    if ca {
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    }
    let key = rcgen::KeyPair::generate().unwrap();
    let made = params.self_signed(&key).unwrap();
    write_pair(dir, stem, &made, &key)
}

fn write_pair(
    dir: &Path,
    stem: &str,
    cert: &rcgen::Certificate,
    key: &rcgen::KeyPair,
) -> (PathBuf, PathBuf) {
    let cert_path = dir.join(format!("{stem}.pem"));
    let key_path = dir.join(format!("{stem}.key"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    (cert_path, key_path)
}

/// A CA, and a certificate for [`NAME`] it signed with its key, written to
/// `dir`: (CA, certificate, key).
fn signed_by_a_ca(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca =
        rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap()).unwrap();
    let ca_path = dir.join("ca.pem");
    std::fs::write(&ca_path, ca.pem()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec![NAME.to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    let (cert, key) = write_pair(dir, "server", &cert, &key);
    (ca_path, cert, key)
}

/// An in-process server serving `cert` and `key`; its address.
async fn tls_server(dir: &Path, cert: &Path, key: &Path) -> (App, String) {
    let mut config = test_config(dir.join("data"));
    config.tls_cert = Some(cert.to_owned());
    config.tls_key = Some(key.to_owned());
    let app = App::build(config).await.expect("recapd starts with TLS");
    let addr = app.local_addr().to_string();
    (app, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_over_tls_with_the_ca_with_the_servers_own_certificate_and_not_without() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = signed_by_a_ca(dir.path());
    let (app, addr) = tls_server(dir.path(), &cert, &key).await;
    let (ca, cert, key) = (
        ca.to_str().unwrap(),
        cert.to_str().unwrap(),
        key.to_str().unwrap(),
    );
    let (stranger, _) = certificate(dir.path(), "stranger", true);
    let stranger = stranger.to_str().unwrap();

    // With the CA, by flag or by environment.
    let (code, out, err) = recapd(
        &[
            "health",
            "--addr",
            &addr,
            "--tls-ca",
            ca,
            "--tls-server-name",
            NAME,
        ],
        &[],
    )
    .await;
    assert_eq!((code, out.trim()), (Some(0), "SERVING"), "{err}");
    let (code, _, err) = recapd(
        &["health", "--addr", &addr, "--tls-server-name", NAME],
        &[("RECAPD_TLS_CA", ca)],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");

    // As a container's HEALTHCHECK: the server's flags (or RECAPD_TLS_*)
    // and nothing else: that very certificate is trusted.
    let listen = format!("--listen={addr}");
    let (code, _, err) = recapd(
        &[
            listen.as_str(),
            "--tls-cert",
            cert,
            "--tls-key",
            key,
            "health",
        ],
        &[],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = recapd(
        &["health"],
        &[
            ("RECAPD_LISTEN", &addr),
            ("RECAPD_TLS_CERT", cert),
            ("RECAPD_TLS_KEY", key),
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");

    // Without the CA: plaintext, refused, with a hint.
    let (code, _, err) = recapd(&["health", "--addr", &addr], &[]).await;
    assert_eq!(code, Some(1));
    assert!(err.contains("--tls-ca"), "{err}");
    // Another CA, or the right one under the wrong name: the certificate is
    // refused, and the error says so.
    for args in [
        &["--tls-ca", stranger, "--tls-server-name", NAME][..],
        &["--tls-ca", ca][..],
    ] {
        let (code, _, err) = recapd(&[&["health", "--addr", &addr][..], args].concat(), &[]).await;
        assert_eq!(code, Some(1), "{args:?}");
        assert!(err.contains("certificate"), "{args:?}: {err}");
    }
    // A CA file that cannot be read: invalid configuration.
    let (code, _, err) = recapd(
        &["health", "--addr", &addr, "--tls-ca", "/nonexistent/ca.pem"],
        &[],
    )
    .await;
    assert_eq!(code, Some(64));
    assert!(err.contains("--tls-ca /nonexistent/ca.pem"), "{err}");
    app.shutdown().await;

    // A self-signed certificate with the CA flag (which TLS libraries
    // refuse as a server's own) is trusted as it is: by the HEALTHCHECK,
    // and as --tls-ca.
    let (cert, key) = certificate(dir.path(), "self", true);
    let (app, addr) = tls_server(&dir.path().join("self"), &cert, &key).await;
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let (code, _, err) = recapd(
        &["health"],
        &[
            ("RECAPD_LISTEN", &addr),
            ("RECAPD_TLS_CERT", cert),
            ("RECAPD_TLS_KEY", key),
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = recapd(&["health", "--addr", &addr, "--tls-ca", cert], &[]).await;
    assert_eq!(code, Some(0), "{err}");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_and_export_over_tls_with_the_ca_and_not_without() {
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = signed_by_a_ca(dir.path());
    let (app, addr) = tls_server(dir.path(), &cert, &key).await;
    let ca = ca.to_str().unwrap();
    let tls = ["--addr", &addr, "--tls-ca", ca, "--tls-server-name", NAME];
    // A chat file as SillyTavern writes it (see tests/fixtures/README.md).
    let file = format!(
        "{}/tests/fixtures/bob-short.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );

    let (code, _, err) = recapd(&["import", "--addr", &addr, &file], &[]).await;
    assert_eq!(code, Some(1));
    assert!(err.contains("--tls-ca"), "{err}");
    let (code, out, err) = recapd(&[&["import"][..], &tls, &[&file]].concat(), &[]).await;
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("chat \"bob-short\", 60 messages"), "{out}");

    let (code, _, err) = recapd(&["export", "--addr", &addr, "bob-short"], &[]).await;
    assert_eq!(code, Some(1));
    assert!(err.contains("--tls-ca"), "{err}");
    let (code, out, err) = recapd(&[&["export"][..], &tls, &["bob-short"]].concat(), &[]).await;
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 61, "the header and 60 messages");
    app.shutdown().await;
}

#[tokio::test]
async fn a_lower_case_bearer_scheme_is_accepted() {
    const TOKEN: &str = "0123456789abcdef0123";
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("acme {TOKEN}\n")).unwrap();
    let (cert, key) = certificate(dir.path(), "server", false);
    let mut config = test_config(dir.path().join("data"));
    config.auth_tokens_file = Some(tokens);
    config.tls_cert = Some(cert.clone());
    config.tls_key = Some(key);
    let app = App::build(config).await.unwrap();
    let tls = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(std::fs::read(&cert).unwrap()))
        .domain_name(NAME);
    let channel = Channel::from_shared(format!("https://{}", app.local_addr()))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut settings = SettingsServiceClient::new(channel);
    let call = |scheme: &str| {
        let mut request = tonic::Request::new(pb::GetSettingsRequest {
            chat_id: String::new(),
        });
        request.metadata_mut().insert(
            "authorization",
            format!("{scheme} {TOKEN}").parse().unwrap(),
        );
        request
    };
    for scheme in ["bearer", "BEARER", "Bearer"] {
        let answer = settings.get_settings(call(scheme)).await;
        assert!(answer.is_ok(), "{scheme}: {answer:?}");
    }
    let refused = settings.get_settings(call("Basic")).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    app.shutdown().await;
}
