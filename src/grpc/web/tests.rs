use std::convert::Infallible;

use http::StatusCode;
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::*;

/// Answers 200 with a `reached-as` header (the media type the services
/// saw), standing for the services.
fn services() -> impl Service<
    Request<Body>,
    Response = Response<Body>,
    Error = Infallible,
    Future = std::future::Ready<Result<Response<Body>, Infallible>>,
> + Clone {
    tower::service_fn(|request: Request<Body>| {
        let mut response = Response::new(Body::empty());
        if let Some(media_type) = request.headers().get(header::CONTENT_TYPE) {
            response
                .headers_mut()
                .insert("reached-as", media_type.clone());
        }
        std::future::ready(Ok::<_, Infallible>(response))
    })
}

/// One request as a client sends it.
struct Call<'a> {
    version: Version,
    method: Method,
    media_type: &'a str,
    authority: Option<&'a str>,
    host: Option<&'a str>,
    origin: Option<&'a str>,
}

impl Call<'_> {
    /// A gRPC-Web call over HTTP/1.1 naming `Host: 127.0.0.1:50051`.
    fn grpc_web() -> Call<'static> {
        Call {
            version: Version::HTTP_11,
            method: Method::POST,
            media_type: "application/grpc-web+proto",
            authority: None,
            host: Some("127.0.0.1:50051"),
            origin: None,
        }
    }

    /// A native gRPC call over HTTP/2 to `:authority` `authority`.
    fn native(authority: &str) -> Call<'_> {
        Call {
            version: Version::HTTP_2,
            media_type: "application/grpc",
            authority: Some(authority),
            host: None,
            ..Call::grpc_web()
        }
    }

    async fn send(self) -> Response<Body> {
        let hosts = ["recapd.internal".parse().unwrap()];
        let origins = ["http://chat.test".parse().unwrap()];
        let uri = match self.authority {
            Some(authority) => format!("http://{authority}/recap.v1.InjectionService/GetInjection"),
            None => "/recap.v1.InjectionService/GetInjection".to_owned(),
        };
        let mut request = Request::builder()
            .version(self.version)
            .method(self.method)
            .uri(uri)
            .header(header::CONTENT_TYPE, self.media_type);
        if let Some(host) = self.host {
            request = request.header(header::HOST, host);
        }
        if let Some(origin) = self.origin {
            request = request.header(header::ORIGIN, origin);
        }
        GrpcWebFront::new(&hosts, &origins)
            .layer(services())
            .oneshot(request.body(Body::empty()).unwrap())
            .await
            .unwrap()
    }
}

/// Asserts `response` is the guard's 403 with its short text.
async fn assert_refused(response: Response<Body>, case: &str) {
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "{case}");
    assert!(response.headers().get("reached-as").is_none(), "{case}");
    assert_eq!(response.headers()["grpc-status"], "7", "{case}");
    let body = response.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, REFUSED.as_bytes(), "{case}");
}

#[tokio::test]
async fn native_grpc_goes_straight_on_with_no_cors_headers_whatever_its_authority() {
    for media_type in ["application/grpc", "application/grpc+proto"] {
        for authority in ["127.0.0.1:50051", "some-docker-service:50051", "x.example"] {
            let response = Call {
                media_type,
                ..Call::native(authority)
            }
            .send()
            .await;
            assert_eq!(response.status(), StatusCode::OK);
            assert_eq!(response.headers()["reached-as"], media_type);
            let cors: Vec<_> = response
                .headers()
                .keys()
                .filter(|name| {
                    name.as_str().starts_with("access-control-") || *name == header::VARY
                })
                .collect();
            assert!(cors.is_empty(), "{media_type}: {cors:?}");
        }
    }
}

#[tokio::test]
async fn native_grpc_with_an_origin_is_checked_as_a_browser_would_be() {
    let response = Call {
        origin: Some("http://attacker.example:50051"),
        ..Call::native("attacker.example:50051")
    }
    .send()
    .await;
    assert_refused(response, "foreign authority and origin").await;
    let response = Call {
        origin: Some("http://chat.test"),
        ..Call::native("localhost:50051")
    }
    .send()
    .await;
    assert_eq!(response.headers()["reached-as"], "application/grpc");
}

#[tokio::test]
async fn grpc_web_is_translated_and_answers_the_allowed_origin() {
    let response = Call {
        origin: Some("http://chat.test"),
        ..Call::grpc_web()
    }
    .send()
    .await;
    assert_eq!(response.headers()["reached-as"], "application/grpc");
    assert_eq!(
        response.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN],
        "http://chat.test"
    );
}

#[tokio::test]
async fn browser_shaped_requests_naming_a_foreign_host_or_origin_are_refused() {
    let refused = [
        ("rebound host", Some("attacker.example:50051"), None),
        (
            "rebound host and its origin",
            Some("attacker.example:50051"),
            Some("http://attacker.example:50051"),
        ),
        ("no host", None, None),
        ("garbage host", Some("attacker example"), None),
        ("name under localhost", Some("a.localhost:50051"), None),
        (
            "foreign origin",
            Some("127.0.0.1:50051"),
            Some("http://evil.test"),
        ),
        ("opaque origin", Some("localhost:50051"), Some("null")),
        (
            "another port of an allowed host",
            Some("recapd.internal:50051"),
            Some("http://recapd.internal:8080"),
        ),
    ];
    for (case, host, origin) in refused {
        let response = Call {
            host,
            origin,
            ..Call::grpc_web()
        }
        .send()
        .await;
        assert_refused(response, case).await;
    }
    // A preflight from a rebound page.
    let response = Call {
        method: Method::OPTIONS,
        host: Some("attacker.example:50051"),
        origin: Some("http://attacker.example:50051"),
        ..Call::grpc_web()
    }
    .send()
    .await;
    assert_refused(response, "preflight").await;
    // HTTP/1.1 is a browser's even with gRPC's media type.
    let response = Call {
        version: Version::HTTP_11,
        host: Some("attacker.example:50051"),
        ..Call::native("attacker.example:50051")
    }
    .send()
    .await;
    assert_refused(response, "HTTP/1.1 application/grpc").await;
    // An HTTP/2 gRPC-Web call names its host in :authority.
    let response = Call {
        version: Version::HTTP_2,
        authority: Some("attacker.example"),
        host: None,
        ..Call::grpc_web()
    }
    .send()
    .await;
    assert_refused(response, "HTTP/2 gRPC-Web").await;
}

#[tokio::test]
async fn browser_shaped_requests_from_known_hosts_and_origins_are_served() {
    let served = [
        ("loopback IP", Some("127.0.0.1:50051"), None),
        ("IPv6 literal", Some("[::1]:50051"), None),
        ("another IP", Some("10.1.2.3"), None),
        ("localhost", Some("LocalHost.:50051"), None),
        ("allowed name", Some("Recapd.Internal:8443"), None),
        (
            "listed origin",
            Some("localhost:50051"),
            Some("http://chat.test"),
        ),
        (
            "own origin",
            Some("recapd.internal:50051"),
            Some("http://recapd.internal:50051"),
        ),
        (
            "own origin, default port",
            Some("recapd.internal"),
            Some("https://recapd.internal"),
        ),
    ];
    for (case, host, origin) in served {
        let response = Call {
            host,
            origin,
            ..Call::grpc_web()
        }
        .send()
        .await;
        assert_eq!(response.status(), StatusCode::OK, "{case}");
        assert_eq!(
            response.headers()["reached-as"],
            "application/grpc",
            "{case}"
        );
    }
}
