//! The PostgreSQL store over TLS (RECAPD_TEST_DATABASE_URL, whose server
//! scripts/postgres.sh gives TLS with a certificate for localhost,
//! 127.0.0.1 and ::1 signed by a test CA): `sslmode=require` (and the
//! default, `prefer`) encrypts every connection of the store, `disable`
//! none, `verify-full` against that CA works and checks
//! the host name, a CA made here is refused with an error naming the
//! certificate, and a replica pair on `verify-full` pushes across replicas.
//! These tests always run: without a database with TLS on they fail,
//! saying why.

use std::path::PathBuf;
use std::time::Duration;

use crate::common::api::*;
use crate::common::replicas::*;
use crate::common::*;
use recapd::app::App;
use tokio::time::Instant;

/// The test CA: `RECAPD_TEST_PG_CA`, or `ca.crt` beside the server's
/// `ssl_cert_file` (where scripts/postgres.sh puts it). Fails clearly when
/// the server has no TLS or the CA is not there.
async fn test_ca() -> PathBuf {
    let (client, connection) = tokio_postgres::connect(&test_database_url(), tokio_postgres::NoTls)
        .await
        .expect("the test database accepts a plaintext connection");
    tokio::spawn(connection);
    let show = |name: &'static str| {
        let client = &client;
        async move {
            let row = client.query_one(&format!("show {name}"), &[]).await;
            row.map(|row| row.get::<_, String>(0)).unwrap_or_default()
        }
    };
    assert_eq!(
        show("ssl").await,
        "on",
        "the test database has TLS off: run scripts/postgres.sh (or scripts/test.sh), which turns it on"
    );
    if let Ok(ca) = std::env::var("RECAPD_TEST_PG_CA") {
        return PathBuf::from(ca);
    }
    let cert = PathBuf::from(show("ssl_cert_file").await);
    let ca = cert.with_file_name("ca.crt");
    assert!(
        ca.is_file(),
        "no test CA at {} (the server's certificate is {}): run scripts/postgres.sh, or set RECAPD_TEST_PG_CA",
        ca.display(),
        cert.display()
    );
    ca
}

/// The test database URL with `params` added to its query.
fn with_params(url: &str, params: &str) -> String {
    let joiner = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joiner}{params}")
}

/// The test database URL with its host replaced by `host` (kept for the
/// TLS name check) and the TCP connection made to `hostaddr`.
fn with_host(host: &str) -> String {
    let addr = database_addr();
    let config: tokio_postgres::Config = test_database_url().parse().expect("a test URL");
    let user = config.get_user().unwrap_or("root");
    let db = config.get_dbname().unwrap_or("test");
    format!(
        "postgres://{user}@{host}:{}/{db}?hostaddr={}",
        addr.port(),
        addr.ip()
    )
}

/// Whether the sessions named `application` are encrypted, one entry per
/// session (a running store has at least its listener's).
async fn sessions_encrypted(application: &str) -> Vec<bool> {
    let (client, connection) = tokio_postgres::connect(&test_database_url(), tokio_postgres::NoTls)
        .await
        .expect("the test database accepts a plaintext connection");
    tokio::spawn(connection);
    client
        .query(
            "select s.ssl from pg_stat_ssl s join pg_stat_activity a using (pid) \
             where a.application_name = $1",
            &[&application],
        )
        .await
        .expect("pg_stat_ssl is readable")
        .iter()
        .map(|row| row.get(0))
        .collect()
}

/// Starts a replica on `url` in a fresh schema; the error of a failed start.
async fn start(dir: &std::path::Path, url: &str) -> Result<App, String> {
    let schema = fresh_schema(dir);
    App::build(replica_config(dir, url, &schema))
        .await
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn require_and_prefer_encrypt_every_connection_and_disable_none() {
    test_ca().await;
    let dir = tempfile::tempdir().unwrap();
    // prefer (the default) encrypts too, the server offering TLS.
    for (mode, encrypted) in [("require", true), ("prefer", true), ("disable", false)] {
        let application = format!("rt_tls_{mode}_{}", std::process::id());
        let url = with_params(
            &test_database_url(),
            &format!("sslmode={mode}&application_name={application}"),
        );
        let app = start(&dir.path().join(mode), &url)
            .await
            .unwrap_or_else(|e| panic!("sslmode={mode}: {e}"));
        let sessions = sessions_encrypted(&application).await;
        assert!(!sessions.is_empty(), "sslmode={mode}: no session seen");
        assert!(
            sessions.iter().all(|&ssl| ssl == encrypted),
            "sslmode={mode}: {sessions:?}"
        );
        app.shutdown().await;
    }
}

#[tokio::test]
async fn verify_full_checks_the_ca_and_the_host_name() {
    let ca = test_ca().await;
    let dir = tempfile::tempdir().unwrap();
    let verify = |mode: &str, url: &str, root: &std::path::Path| {
        with_params(
            url,
            &format!("sslmode={mode}&sslrootcert={}", root.display()),
        )
    };

    // The CA that signed the server's certificate, for the address the
    // certificate names (127.0.0.1), and for localhost.
    for (case, url) in [
        ("ip", test_database_url()),
        ("localhost", with_host("localhost")),
    ] {
        let app = start(&dir.path().join(case), &verify("verify-full", &url, &ca))
            .await
            .unwrap_or_else(|e| panic!("verify-full to {case}: {e}"));
        app.shutdown().await;
    }

    // A name the certificate does not carry: verify-full refuses it,
    // verify-ca (the chain only) accepts it.
    let elsewhere = with_host("db.example.test");
    let error = start(
        &dir.path().join("name"),
        &verify("verify-full", &elsewhere, &ca),
    )
    .await
    .err()
    .expect("verify-full accepted a certificate for another name");
    assert!(error.contains("certificate"), "{error}");
    let app = start(
        &dir.path().join("ca-only"),
        &verify("verify-ca", &elsewhere, &ca),
    )
    .await
    .unwrap_or_else(|e| panic!("verify-ca: {e}"));
    app.shutdown().await;

    // A CA made here, which signed nothing the server has: refused, saying
    // the certificate is the problem.
    let stranger = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let wrong = dir.path().join("wrong-ca.pem");
    std::fs::write(&wrong, stranger.cert.pem()).unwrap();
    for mode in ["verify-full", "verify-ca", "require"] {
        let error = start(
            &dir.path().join(format!("wrong-{mode}")),
            &verify(mode, &test_database_url(), &wrong),
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("{mode} accepted a server signed by another CA"));
        assert!(
            error.contains("certificate") && error.contains("UnknownIssuer"),
            "{mode}: {error}"
        );
    }
}

#[tokio::test]
async fn a_replica_pair_on_verify_full_pushes_across_replicas() {
    let ca = test_ca().await;
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let url = with_params(
        &test_database_url(),
        &format!("sslmode=verify-full&sslrootcert={}", ca.display()),
    );
    let mut a = Server::start_with(replica_config(&dir.path().join("a"), &url, &schema)).await;
    let mut b = Server::start_with(replica_config(&dir.path().join("b"), &url, &schema)).await;
    let mut stream = subscribe(&mut a, &["c"], 0).await;
    b.publish("c", chat_changed(vec![message("m1", "Hi over TLS")]))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.message()).await {
            Ok(Ok(Some(injection))) if injection.revision >= 1 => {
                assert_eq!(injection.chat_id, "c");
                break;
            }
            Ok(Ok(Some(_))) => {}
            other => panic!("B's event never reached A's subscriber: {other:?}"),
        }
    }
    assert_eq!(order(&mut a, "c").await, ["m1"]);
    a.stop().await;
    b.stop().await;
}
