//! How a tool subcommand dials: TLS chosen by its flags or the server's own.

use super::*;

fn config(args: &[&str]) -> Config {
    crate::config::Cli::from_args(std::iter::once("recapd").chain(args.iter().copied()))
        .unwrap()
        .config
}

#[test]
fn the_flags_choose_tls_and_the_servers_certificate_is_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let made = rcgen::generate_simple_self_signed(vec!["recapd.internal".to_owned()]).unwrap();
    let cert = dir.path().join("cert.pem");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());

    let plain = config(&[]);
    let none = ClientTls::default();
    assert!(!Dial::new("h:1", &none, &plain).unwrap().is_tls());
    let ca = ClientTls {
        tls_ca: Some(cert.into()),
        ..ClientTls::default()
    };
    assert!(Dial::new("h:1", &ca, &plain).unwrap().is_tls());
    let served = config(&["--tls-cert", cert, "--tls-key", key]);
    assert!(Dial::new("h:1", &none, &served).unwrap().is_tls());
    // The flags win over the server's certificate.
    let dial = Dial::new("[::1]:1", &ca, &served).unwrap();
    assert_eq!(
        dial.tls.map(|tls| tls.name.to_str().into_owned()),
        Some("::1".to_owned())
    );

    let name_only = ClientTls {
        tls_server_name: Some("x".into()),
        ..ClientTls::default()
    };
    let error = Dial::new("h:1", &name_only, &plain).unwrap_err();
    assert!(error.contains("--tls-ca"), "{error}");
    let missing = ClientTls {
        tls_ca: Some(dir.path().join("missing.pem")),
        ..ClientTls::default()
    };
    let error = Dial::new("h:1", &missing, &plain).unwrap_err();
    assert!(error.starts_with("--tls-ca "), "{error}");
    let not_pem = ClientTls {
        tls_ca: Some(key.into()),
        ..ClientTls::default()
    };
    let error = Dial::new("h:1", &not_pem, &plain).unwrap_err();
    assert!(error.contains("no PEM certificate"), "{error}");
}
