//! No DNS rebinding on `--listen`: the finding 5 (a web page whose
//! DNS name was pointed at 127.0.0.1 read a whole book over gRPC-Web) and
//! the rules that stop it. A request shaped by a browser (gRPC-Web,
//! HTTP/1.1, a CORS preflight, anything with an Origin) is answered only
//! when it names an IP literal, `localhost` or a name of `--allowed-hosts`,
//! and comes from an origin of `--grpc-web-allowed-origins` or its own;
//! native gRPC is answered whatever `:authority` it names.

use bytes::{BufMut, Bytes, BytesMut};
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use prost::Message;
use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use tonic::Code;
use tonic::transport::Channel;

use crate::common::*;

/// What the book holds: an answer carrying it carries the book.
const SECRET: &str = "the-dragon-sleeps-under-the-mill";

/// A default recapd (loopback, no tokens) with `tweak` applied to its
/// config, holding the book `secrets` whose one entry's content is
/// [`SECRET`].
async fn start(tweak: impl FnOnce(&mut recapd::config::Config)) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path().join("data"));
    tweak(&mut config);
    let server = Server::start_with(config).await;
    let book = serde_json::json!({
        "entries": { "0": { "uid": 0, "key": ["dragon"], "content": SECRET } }
    });
    LorebookServiceClient::new(server.channel.clone())
        .import_lorebook(pb::ImportLorebookRequest {
            name: "secrets".into(),
            json: book.to_string(),
        })
        .await
        .expect("the book is imported");
    (dir, server)
}

fn addr(server: &Server) -> std::net::SocketAddr {
    server.app.as_ref().expect("running").local_addr()
}

/// ExportLorebook of `secrets` over gRPC-Web on HTTP/1.1 (as a browser on
/// plain HTTP sends it), naming `host` and, when given, from `origin`:
/// the answer's status and whole body.
async fn export_over_grpc_web(
    addr: std::net::SocketAddr,
    host: &str,
    origin: Option<&str>,
) -> (StatusCode, Bytes) {
    let message = pb::ExportLorebookRequest {
        name: "secrets".into(),
    }
    .encode_to_vec();
    let mut frame = BytesMut::new();
    frame.put_u8(0);
    frame.put_u32(u32::try_from(message.len()).unwrap());
    frame.put_slice(&message);
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!(
            "http://{addr}/recap.v1.LorebookService/ExportLorebook"
        ))
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/grpc-web+proto")
        .header("x-grpc-web", "1");
    if let Some(origin) = origin {
        request = request.header(header::ORIGIN, origin);
    }
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let response = client
        .request(request.body(Full::new(frame.freeze())).unwrap())
        .await
        .expect("answered");
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, body)
}

fn holds_the_book(body: &[u8]) -> bool {
    body.windows(SECRET.len()).any(|w| w == SECRET.as_bytes())
}

/// Asserts the gRPC-Web export was refused with 403 and no data.
fn assert_refused((status, body): (StatusCode, Bytes), case: &str) {
    assert_eq!(status, StatusCode::FORBIDDEN, "{case}");
    assert!(!holds_the_book(&body), "{case}: the book leaked");
    let text = String::from_utf8_lossy(&body);
    assert!(text.starts_with("403 forbidden"), "{case}: {text}");
}

/// Asserts the gRPC-Web export was served: 200, the book in the answer.
fn assert_served((status, body): (StatusCode, Bytes), case: &str) {
    assert_eq!(status, StatusCode::OK, "{case}");
    assert!(holds_the_book(&body), "{case}: {body:?}");
}

/// Issue 41, finding 5 (table row 5): a rebound page (its own DNS name in
/// Host and Origin) got 200 and the whole book; now 403 and no data.
#[tokio::test]
async fn finding_5_a_rebound_page_gets_403_and_no_book() {
    let (_dir, server) = start(|_| {}).await;
    let addr = addr(&server);
    let rebound = format!("attacker.example:{}", addr.port());
    let page = format!("http://{rebound}");
    assert_refused(
        export_over_grpc_web(addr, &rebound, Some(&page)).await,
        "rebound host and origin",
    );
    assert_refused(
        export_over_grpc_web(addr, &rebound, None).await,
        "rebound host, no origin",
    );
    server.stop().await;
}

/// Non-browser gRPC-Web clients (no Origin) naming a loopback IP or
/// `localhost` are served as before.
#[tokio::test]
async fn grpc_web_from_a_loopback_host_with_no_origin_is_served() {
    let (_dir, server) = start(|_| {}).await;
    let addr = addr(&server);
    let port = addr.port();
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        "LOCALHOST".to_owned(),
        format!("[::1]:{port}"),
    ] {
        assert_served(export_over_grpc_web(addr, &host, None).await, &host);
    }
    server.stop().await;
}

/// A DNS name is answered once `--allowed-hosts` lists it, and only then.
#[tokio::test]
async fn a_host_name_is_served_only_when_allowed_hosts_lists_it() {
    let (_dir, server) = start(|_| {}).await;
    assert_refused(
        export_over_grpc_web(addr(&server), "recapd.internal", None).await,
        "not listed",
    );
    server.stop().await;

    let (_dir, server) = start(|config| {
        config.web.allowed_hosts = vec!["recapd.internal".parse().unwrap()];
    })
    .await;
    let addr = addr(&server);
    for host in [
        "recapd.internal".to_owned(),
        format!("Recapd.Internal.:{}", addr.port()),
    ] {
        assert_served(export_over_grpc_web(addr, &host, None).await, &host);
    }
    // Its own origin too; another name still not.
    assert_served(
        export_over_grpc_web(addr, "recapd.internal", Some("http://recapd.internal")).await,
        "own origin",
    );
    assert_refused(
        export_over_grpc_web(addr, "other.internal", None).await,
        "another name",
    );
    server.stop().await;
}

/// An Origin of `--grpc-web-allowed-origins` is served from an allowed
/// host; a foreign Origin gets 403 even from an allowed host.
#[tokio::test]
async fn listed_origins_are_served_and_foreign_ones_refused_from_an_allowed_host() {
    let (_dir, server) = start(|config| {
        config.web.grpc_web_allowed_origins = vec!["http://chat.test:8000".parse().unwrap()];
    })
    .await;
    let addr = addr(&server);
    let host = format!("127.0.0.1:{}", addr.port());
    assert_served(
        export_over_grpc_web(addr, &host, Some("http://chat.test:8000")).await,
        "listed origin",
    );
    for foreign in [
        "http://attacker.example",
        "http://chat.test:8001",
        "https://chat.test:8000",
        "null",
    ] {
        assert_refused(
            export_over_grpc_web(addr, &host, Some(foreign)).await,
            foreign,
        );
    }
    // A listed origin does not vouch for a foreign host.
    assert_refused(
        export_over_grpc_web(addr, "attacker.example", Some("http://chat.test:8000")).await,
        "listed origin, foreign host",
    );
    server.stop().await;
}

/// A CORS preflight naming a foreign host gets 403, whatever its Origin.
#[tokio::test]
async fn a_preflight_from_a_foreign_host_is_refused() {
    let (_dir, server) = start(|config| {
        config.web.grpc_web_allowed_origins = vec!["http://chat.test:8000".parse().unwrap()];
    })
    .await;
    let addr = addr(&server);
    let preflight = |host: String, origin: &'static str| {
        let request = Request::builder()
            .method(Method::OPTIONS)
            .uri(format!(
                "http://{addr}/recap.v1.LorebookService/ExportLorebook"
            ))
            .header(header::HOST, host)
            .header(header::ORIGIN, origin)
            .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
            .header(
                header::ACCESS_CONTROL_REQUEST_HEADERS,
                "content-type,x-grpc-web",
            )
            .body(Full::new(Bytes::new()))
            .unwrap();
        async move {
            let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
            let response = client.request(request).await.expect("answered");
            (
                response.status(),
                response
                    .headers()
                    .contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            )
        }
    };
    let rebound = format!("attacker.example:{}", addr.port());
    for origin in ["http://chat.test:8000", "http://attacker.example"] {
        assert_eq!(
            preflight(rebound.clone(), origin).await,
            (StatusCode::FORBIDDEN, false),
            "{origin}"
        );
    }
    let (status, allowed) = preflight(
        format!("localhost:{}", addr.port()),
        "http://chat.test:8000",
    )
    .await;
    assert!(status.is_success() && allowed, "{status}");
    server.stop().await;
}

/// A LorebookService client over `channel` whose calls name `authority`.
fn lorebooks_as(channel: Channel, authority: &str) -> LorebookServiceClient<Channel> {
    LorebookServiceClient::with_origin(channel, format!("http://{authority}").parse().unwrap())
}

/// Native gRPC (HTTP/2, application/grpc, no Origin) is served whatever
/// its `:authority`, so Docker service names and proxies keep working; one
/// carrying an Origin is checked as a browser's would be.
#[tokio::test]
async fn native_grpc_is_served_whatever_its_authority() {
    let (_dir, server) = start(|_| {}).await;
    for authority in [
        "some-docker-service:50051",
        "attacker.example",
        "127.0.0.1:1",
    ] {
        let json = lorebooks_as(server.channel.clone(), authority)
            .export_lorebook(pb::ExportLorebookRequest {
                name: "secrets".into(),
            })
            .await
            .unwrap_or_else(|e| panic!("{authority}: {e}"))
            .into_inner()
            .json;
        assert!(json.contains(SECRET), "{authority}");
    }

    let mut request = tonic::Request::new(pb::ExportLorebookRequest {
        name: "secrets".into(),
    });
    request
        .metadata_mut()
        .insert("origin", "http://attacker.example".parse().unwrap());
    let refused = lorebooks_as(server.channel.clone(), "attacker.example")
        .export_lorebook(request)
        .await
        .expect_err("a foreign Origin on native gRPC is refused");
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(!refused.message().contains(SECRET));
    server.stop().await;
}
