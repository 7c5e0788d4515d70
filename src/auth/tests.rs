//! Bearer tokens: lookup, refusals, health without a token.

use super::*;

#[test]
fn a_token_finds_its_tenant_and_nothing_else_does() {
    let table = TokenTable::new([("0123456789abcdef", "acme"), ("fedcba9876543210", "globex")]);
    assert_eq!(
        table.tenant(b"0123456789abcdef"),
        Some(Tenant("acme".into()))
    );
    assert_eq!(
        table.tenant(b"fedcba9876543210"),
        Some(Tenant("globex".into()))
    );
    assert_eq!(table.tenant(b"0123456789abcdeX"), None);
    assert_eq!(table.tenant(b"0123456789abcde"), None);
    assert_eq!(table.tenant(b""), None);
    assert_eq!(format!("{table:?}"), "TokenTable(2 tokens)");
}

#[test]
fn a_refused_call_decodes_as_unauthenticated_with_its_message() {
    let response: http::Response<()> = unauthenticated();
    assert_eq!(
        response.headers().get("content-type").map(|v| v.as_bytes()),
        Some(&b"application/grpc"[..])
    );
    let status = Status::from_header_map(response.headers())
        .expect("a refusal carries grpc-status in its headers");
    assert_eq!(status.code(), tonic::Code::Unauthenticated);
    assert_eq!(status.message(), UNAUTHENTICATED_MESSAGE);
}

#[test]
fn only_a_known_bearer_token_reaches_the_service_and_health_needs_none() {
    use std::convert::Infallible;
    use tower::ServiceExt as _;

    let tokens = TokenTable::new([("0123456789abcdef", "acme")]);
    // The inner service answers OK with the tenant it was given.
    let inner = tower::service_fn(|request: http::Request<()>| async move {
        let tenant = request.extensions().get::<Tenant>().cloned();
        Ok::<_, Infallible>(http::Response::new(tenant))
    });
    let service = AuthLayer::new(Some(tokens)).layer(inner);
    let call = |path: &str, authorization: Option<&str>| {
        let mut request = http::Request::builder().uri(path);
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let request = request.body(()).unwrap();
        let service = service.clone();
        async move { service.oneshot(request).await.unwrap() }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        // The scheme in any case (RFC 7235); the token exactly.
        for authorization in [
            "Bearer 0123456789abcdef",
            "bearer 0123456789abcdef",
            "BEARER 0123456789abcdef",
            "bEaReR  0123456789abcdef",
        ] {
            let accepted = call("/recap.v1.EventService/Publish", Some(authorization)).await;
            assert_eq!(
                accepted.body(),
                &Some(Tenant("acme".into())),
                "{authorization}"
            );
            assert!(Status::from_header_map(accepted.headers()).is_none());
        }
        for authorization in [
            None,
            Some("Bearer 0123456789abcdeX"),
            Some("bearer 0123456789ABCDEF"),
            Some("0123456789abcdef"),
            Some("Bearer0123456789abcdef"),
            Some("Basic 0123456789abcdef"),
            Some("Bearer "),
            Some("bear"),
        ] {
            let refused = call("/recap.v1.EventService/Publish", authorization).await;
            assert_eq!(refused.body(), &None, "{authorization:?}");
            let status = Status::from_header_map(refused.headers()).unwrap();
            assert_eq!(status.code(), tonic::Code::Unauthenticated);
        }
        let health = call("/grpc.health.v1.Health/Check", None).await;
        assert_eq!(health.body(), &Some(Tenant::default()));
    });
}
