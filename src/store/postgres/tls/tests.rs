use super::*;

fn build(url: &str) -> Result<(tokio_postgres::Config, PgTls), String> {
    let (rest, params) = split_url(url)?;
    let mut config: tokio_postgres::Config = rest.parse().map_err(|e| format!("{e}"))?;
    let tls = PgTls::build(&params, &mut config)?;
    Ok((config, tls))
}

#[test]
fn the_tls_parameters_leave_the_url_and_the_rest_stays() {
    let (rest, params) = split_url(
        "postgres://u:pw@db:5433/app?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=4",
    )
    .unwrap();
    assert_eq!(
        rest,
        "postgres://u:pw@db:5433/app?application_name=x&connect_timeout=4"
    );
    assert_eq!(params.mode, Some(SslMode::VerifyFull));
    assert_eq!(params.root_cert.as_deref(), Some("/etc/ca.pem"));
    let (rest, params) = split_url("postgres://db/app?sslmode=require").unwrap();
    assert_eq!(rest, "postgres://db/app");
    assert_eq!(params.mode, Some(SslMode::Require));
    assert_eq!(
        split_url("postgres://db/app").unwrap(),
        ("postgres://db/app".to_owned(), TlsParams::default())
    );
}

#[test]
fn values_are_percent_decoded_as_libpq_reads_them() {
    let (rest, params) = split_url(
        "postgres://u@h1:5432,h2:5433/app?sslrootcert=%2Fca%20dir%2Fa+b.pem&sslcert=%C3%A9.pem&x=%zz",
    )
    .unwrap();
    // Several hosts (which `url::Url` refuses) and other parameters pass
    // through untouched, malformed escapes and all: tokio-postgres reads them.
    assert_eq!(rest, "postgres://u@h1:5432,h2:5433/app?x=%zz");
    // `+` stays `+`, as in libpq.
    assert_eq!(params.root_cert.as_deref(), Some("/ca dir/a+b.pem"));
    assert_eq!(params.cert.as_deref(), Some(Path::new("é.pem")));
    for bad in ["%", "%4", "%4g", "a%%41", "%ff"] {
        let error = split_url(&format!("postgres://db/app?sslrootcert={bad}")).unwrap_err();
        assert_eq!(error, "sslrootcert: bad %-escape", "{bad}");
    }
}

#[test]
fn each_sslmode_sets_the_negotiation_and_a_bad_one_is_named() {
    use tokio_postgres::config::SslMode as Negotiation;
    for (query, mode, negotiation) in [
        ("", SslMode::Prefer, Negotiation::Prefer),
        ("?sslmode=disable", SslMode::Disable, Negotiation::Disable),
        ("?sslmode=prefer", SslMode::Prefer, Negotiation::Prefer),
        ("?sslmode=require", SslMode::Require, Negotiation::Require),
        (
            "?sslmode=verify-full",
            SslMode::VerifyFull,
            Negotiation::Require,
        ),
    ] {
        let (config, tls) = build(&format!("postgres://u:s3cret@db/app{query}")).unwrap();
        assert_eq!((tls.mode(), config.get_ssl_mode()), (mode, negotiation));
    }
    for (query, says) in [
        ("?sslmode=always", "sslmode"),
        ("?sslmode=allow", "allow"),
        ("?sslmode=require&sslrootcert=system", "verify-full"),
        ("?sslmode=verify-ca", "sslrootcert=FILE"),
        (
            "?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
            "sslrootcert /nonexistent",
        ),
        ("?sslcert=/nonexistent/c.pem", "together"),
        ("?sslmode=verify-ca&sslrootcert=%zz", "bad %-escape"),
    ] {
        let error = build(&format!("postgres://u:s3cret@db/app{query}")).unwrap_err();
        assert!(error.contains(says), "{query}: {error}");
        assert!(!error.contains("s3cret"), "{error}");
    }
}

#[test]
fn a_root_file_is_read_and_require_with_it_verifies_the_chain() {
    let dir = tempfile::tempdir().unwrap();
    let ca = rcgen::generate_simple_self_signed(vec!["db".to_owned()]).unwrap();
    let path = dir.path().join("ca.pem");
    std::fs::write(&path, ca.cert.pem()).unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "").unwrap();
    let (_, tls) = build(&format!(
        "postgres://db/app?sslmode=require&sslrootcert={}",
        path.display()
    ))
    .unwrap();
    assert_eq!(tls.mode(), SslMode::VerifyCa);
    let error = build(&format!(
        "postgres://db/app?sslmode=verify-full&sslrootcert={}",
        empty.display()
    ))
    .unwrap_err();
    assert!(error.contains("no PEM certificate"), "{error}");
}

#[test]
fn verify_ca_checks_the_chain_whatever_the_name() {
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca =
        rcgen::CertifiedIssuer::self_signed(params, rcgen::KeyPair::generate().unwrap()).unwrap();
    let mut roots = RootCertStore::empty();
    roots.add(ca.der().clone()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .unwrap();
    let verifier = chain_only(webpki, provider);
    let name = rustls::pki_types::ServerName::try_from("db").unwrap();
    let now = rustls::pki_types::UnixTime::now();
    // Signed by the CA for another name: the chain holds, the name is
    // not checked.
    let key = rcgen::KeyPair::generate().unwrap();
    let signed = rcgen::CertificateParams::new(vec!["elsewhere".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    assert!(
        verifier
            .verify_server_cert(signed.der(), &[], &name, &[], now)
            .is_ok()
    );
    // Self-signed for another name: refused for its chain (unknown
    // issuer, or a bad signature when its issuer's name is the CA's),
    // whatever order the name and the chain are checked in.
    let stranger = rcgen::generate_simple_self_signed(vec!["elsewhere".to_owned()]).unwrap();
    let refused = verifier.verify_server_cert(stranger.cert.der(), &[], &name, &[], now);
    assert!(
        matches!(refused, Err(rustls::Error::InvalidCertificate(_))),
        "{refused:?}"
    );
}

#[test]
fn a_client_certificate_needs_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let made = rcgen::generate_simple_self_signed(vec!["recapd".to_owned()]).unwrap();
    let cert = dir.path().join("client.pem");
    let key = dir.path().join("client.key");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let url = |query: String| format!("postgres://db/app?sslmode=require&{query}");
    let (_, tls) = build(&url(format!(
        "sslcert={}&sslkey={}",
        cert.display(),
        key.display()
    )))
    .unwrap();
    assert_eq!(tls.client_cert.as_deref(), Some(cert.as_path()));
    // The certificate's file where the key should be: no key in it.
    let error = build(&url(format!(
        "sslcert={}&sslkey={}",
        cert.display(),
        cert.display()
    )))
    .unwrap_err();
    assert!(error.starts_with("sslkey "), "{error}");
    let error = build(&url(format!("sslkey={}", key.display()))).unwrap_err();
    assert!(error.contains("together"), "{error}");
}
