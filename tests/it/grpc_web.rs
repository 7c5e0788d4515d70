//! gRPC-Web: calls and server streams from a gRPC-Web client over
//! HTTP/1.1 (what a browser on plain HTTP speaks), with the same tokens and
//! tenants as gRPC; the CORS policy of `--grpc-web-allowed-origins`; and the
//! inspector, off unless `--inspector-listen` asks for it.

use crate::common::*;
use bytes::Bytes;
use http::{Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use recapd::app::App;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::Code;
use tonic::service::interceptor::InterceptedService;
use tonic_web::{GrpcWebCall, GrpcWebClientLayer, GrpcWebClientService};
use tower::Layer;

const ACME: &str = "acme-token-0123456789";
const GLOBEX: &str = "globex-token-9876543210";

/// A gRPC-Web transport: HTTP/1.1 only, as a browser on plain HTTP.
type Web = GrpcWebClientService<Client<HttpConnector, GrpcWebCall<tonic::body::Body>>>;
type Auth = Box<dyn FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Send>;
type WebAuth = InterceptedService<Web, Auth>;

fn web() -> Web {
    let client = Client::builder(TokioExecutor::new()).build_http();
    GrpcWebClientLayer::new().layer(client)
}

/// Sends `authorization: Bearer <token>` when `token` is given.
fn bearer(token: Option<&'static str>) -> Auth {
    Box::new(move |mut request: tonic::Request<()>| {
        if let Some(token) = token {
            request
                .metadata_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
        }
        Ok(request)
    })
}

fn origin(addr: std::net::SocketAddr) -> http::Uri {
    format!("http://{addr}").parse().unwrap()
}

fn events(addr: std::net::SocketAddr, token: Option<&'static str>) -> EventServiceClient<WebAuth> {
    EventServiceClient::with_origin(InterceptedService::new(web(), bearer(token)), origin(addr))
}

fn injections(
    addr: std::net::SocketAddr,
    token: Option<&'static str>,
) -> InjectionServiceClient<WebAuth> {
    InjectionServiceClient::with_origin(InterceptedService::new(web(), bearer(token)), origin(addr))
}

fn memory(addr: std::net::SocketAddr, token: Option<&'static str>) -> MemoryServiceClient<WebAuth> {
    MemoryServiceClient::with_origin(InterceptedService::new(web(), bearer(token)), origin(addr))
}

/// recapd with two tenants' tokens, and `tweak` applied to its config.
async fn start(dir: &std::path::Path, tweak: impl FnOnce(&mut recapd::config::Config)) -> App {
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("acme {ACME}\nglobex {GLOBEX}\n")).unwrap();
    let mut config = test_config(dir.join("data"));
    config.auth_tokens_file = Some(tokens);
    tweak(&mut config);
    App::build(config).await.expect("recapd starts")
}

async fn publish(
    client: &mut EventServiceClient<WebAuth>,
    chat: &str,
    kind: pb::event::Kind,
) -> Result<u64, tonic::Status> {
    client
        .publish(pb::PublishRequest {
            event: Some(pb::Event {
                chat_id: chat.into(),
                kind: Some(kind),
            }),
        })
        .await
        .map(|r| r.into_inner().revision)
}

fn get(chat: &str) -> pb::GetInjectionRequest {
    pb::GetInjectionRequest {
        chat_id: chat.into(),
        key: None,
    }
}

#[tokio::test]
async fn grpc_web_calls_need_the_same_tokens_and_stay_in_their_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |_| {}).await;
    let addr = app.local_addr();
    let revision = publish(
        &mut events(addr, Some(ACME)),
        "web-1",
        chat_changed(vec![message("m1", "Hello from a browser.")]),
    )
    .await
    .expect("a gRPC-Web publish with a token is served");
    assert_eq!(revision, 1);
    let injection = injections(addr, Some(ACME))
        .get_injection(get("web-1"))
        .await
        .expect("the tenant reads its chat over gRPC-Web")
        .into_inner();
    assert_eq!(injection.revision, 1);

    let refused = injections(addr, None)
        .get_injection(get("web-1"))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");
    let other = injections(addr, Some(GLOBEX))
        .get_injection(get("web-1"))
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::NotFound, "another tenant: {other:?}");
    let listed = memory(addr, Some(GLOBEX))
        .list_chats(pb::ListChatsRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        listed.chats.is_empty(),
        "another tenant lists nothing: {listed:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn subscribe_streams_each_new_injection_over_grpc_web() {
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |_| {}).await;
    let addr = app.local_addr();
    let mut events = events(addr, Some(ACME));
    publish(
        &mut events,
        "web-2",
        chat_changed(vec![message("m1", "One.")]),
    )
    .await
    .unwrap();
    let mut stream = injections(addr, Some(ACME))
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["web-2".into()],
            ..Default::default()
        })
        .await
        .expect("Subscribe over gRPC-Web")
        .into_inner();
    let first = next_within(&mut stream, 10)
        .await
        .expect("the current injection first");
    assert_eq!(first.revision, 1);
    publish(&mut events, "web-2", message_received("m2", "Two."))
        .await
        .unwrap();
    let pushed = next_within(&mut stream, 10)
        .await
        .expect("the new one pushed");
    assert!(pushed.revision > first.revision, "{pushed:?}");
    app.shutdown().await;
}

/// Sends a CORS preflight for a gRPC-Web call from `from` to `addr`;
/// returns the status and the headers.
async fn preflight(addr: std::net::SocketAddr, from: &str) -> (StatusCode, http::HeaderMap) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let request = Request::builder()
        .method(Method::OPTIONS)
        .uri(format!(
            "http://{addr}/recap.v1.InjectionService/GetInjection"
        ))
        .header(header::ORIGIN, from)
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .header(
            header::ACCESS_CONTROL_REQUEST_HEADERS,
            "authorization,content-type,x-grpc-web,x-user-agent",
        )
        .body(Empty::new())
        .unwrap();
    let response = client
        .request(request)
        .await
        .expect("the preflight is answered");
    (response.status(), response.headers().clone())
}

/// A gRPC-Web GetInjection with an empty request, as a browser at `from`
/// sends it; returns the answer's headers.
async fn call_from(addr: std::net::SocketAddr, from: &str) -> http::HeaderMap {
    let client = Client::builder(TokioExecutor::new()).build_http::<http_body_util::Full<Bytes>>();
    let request = Request::builder()
        .method(Method::POST)
        .uri(format!(
            "http://{addr}/recap.v1.InjectionService/GetInjection"
        ))
        .header(header::ORIGIN, from)
        .header(header::CONTENT_TYPE, "application/grpc-web+proto")
        .header(header::AUTHORIZATION, format!("Bearer {ACME}"))
        .header("x-grpc-web", "1")
        // One uncompressed frame holding an empty message.
        .body(http_body_util::Full::new(Bytes::from_static(&[
            0, 0, 0, 0, 0,
        ])))
        .unwrap();
    let response = client.request(request).await.expect("the call is answered");
    response.headers().clone()
}

#[tokio::test]
async fn browsers_may_call_from_the_allowed_origins_only() {
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |config| {
        config.web.grpc_web_allowed_origins = vec!["http://chat.test:8000".parse().unwrap()];
    })
    .await;
    let addr = app.local_addr();
    let (status, headers) = preflight(addr, "http://chat.test:8000").await;
    assert!(status.is_success(), "{status}");
    assert_eq!(
        headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://chat.test:8000"
    );
    let allowed = headers[header::ACCESS_CONTROL_ALLOW_HEADERS]
        .to_str()
        .unwrap();
    for needed in ["authorization", "content-type", "x-grpc-web"] {
        assert!(allowed.contains(needed), "{needed} not in {allowed}");
    }
    // The call itself: its answer names the origin and lets the page read
    // the status a trailers-only answer carries in its headers.
    let headers = call_from(addr, "http://chat.test:8000").await;
    assert_eq!(
        headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://chat.test:8000"
    );
    let exposed = headers[header::ACCESS_CONTROL_EXPOSE_HEADERS]
        .to_str()
        .unwrap();
    assert!(
        exposed.contains("grpc-status") && exposed.contains("grpc-message"),
        "{exposed}"
    );
    assert_eq!(
        headers["grpc-status"], "3",
        "an empty chat id is refused: {headers:?}"
    );

    for refused in [
        "http://evil.test",
        "http://chat.test:8001",
        "https://chat.test:8000",
    ] {
        let (_, headers) = preflight(addr, refused).await;
        assert!(
            headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
            "{refused} was allowed: {headers:?}"
        );
    }
    app.shutdown().await;

    // By default no origin is allowed.
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |_| {}).await;
    let (_, headers) = preflight(app.local_addr(), "http://chat.test:8000").await;
    assert!(
        headers.get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none(),
        "{headers:?}"
    );
    app.shutdown().await;
}

/// `GET path` on `addr` with `Host: host`: status, content type, body.
async fn fetch(addr: std::net::SocketAddr, path: &str, host: &str) -> (StatusCode, String, Bytes) {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let request = Request::builder()
        .uri(format!("http://{addr}{path}"))
        .header(header::HOST, host)
        .body(Empty::new())
        .unwrap();
    let response = client.request(request).await.expect("answered");
    let status = response.status();
    let media_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, media_type, body)
}

#[tokio::test]
async fn the_inspector_is_off_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |_| {}).await;
    assert_eq!(app.inspector_addr(), None);
    let addr = app.local_addr();
    let (status, media_type, _) = fetch(addr, "/", &addr.to_string()).await;
    assert!(
        !status.is_success() && !media_type.starts_with("text/html"),
        "the gRPC listener serves no page: {status} {media_type}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn the_inspector_serves_its_page_and_the_api_with_the_same_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let app = start(dir.path(), |config| {
        config.web.inspector_listen = Some("127.0.0.1:0".parse().unwrap());
    })
    .await;
    let inspector = app
        .inspector_addr()
        .expect("--inspector-listen serves the inspector");
    assert_ne!(inspector.port(), 0);
    assert_ne!(inspector, app.local_addr());

    let (status, media_type, body) = fetch(inspector, "/", &inspector.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(media_type, "text/html; charset=utf-8");
    assert!(String::from_utf8_lossy(&body).contains("/inspector.js"));
    for path in ["/inspector.js", "/inspector.css", "/recap.v1.binpb"] {
        let (status, _, body) = fetch(inspector, path, "localhost").await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(!body.is_empty(), "{path} is empty");
    }
    let (status, ..) = fetch(inspector, "/", "rebound.example:80").await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a DNS name pointed at loopback is refused"
    );

    // The page's calls: the same API, on the inspector's own address.
    publish(
        &mut events(inspector, Some(ACME)),
        "web-3",
        chat_changed(vec![message("m1", "Seen from the inspector.")]),
    )
    .await
    .expect("the inspector's origin serves the API over gRPC-Web");
    let listed = memory(inspector, Some(ACME))
        .list_chats(pb::ListChatsRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.chats.len(), 1);
    let refused = memory(inspector, Some("wrong-token"))
        .list_chats(pb::ListChatsRequest::default())
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::Unauthenticated);
    app.shutdown().await;
}
