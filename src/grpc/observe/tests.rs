use super::*;

/// The method label of a request path: "/recap.v1.EventService/Publish"
/// gives "recap.v1.EventService/Publish"; paths other than the methods
/// recapd serves are one label, "unknown".
fn method_label(path: &str) -> &'static str {
    methods::method(path).label
}

#[test]
fn only_served_services_get_their_own_label() {
    assert_eq!(
        method_label("/recap.v1.EventService/Publish"),
        "recap.v1.EventService/Publish"
    );
    assert_eq!(
        method_label("/grpc.health.v1.Health/Check"),
        "grpc.health.v1.Health/Check"
    );
    assert_eq!(method_label("/evil.Service/Random123"), "unknown");
    assert_eq!(method_label("/recap.v1.EventService/\u{0}"), "unknown");
    // A method recapd does not serve, even under a served package, is
    // "unknown": a flood of made-up paths adds no series.
    assert_eq!(method_label("/recap.v1.EventService/Random123"), "unknown");
    assert_eq!(method_label("/grpc.health.v1.Health/Random123"), "unknown");
    assert_eq!(method_label("recap.v1.EventService/Publish"), "unknown");
    for served in [
        "grpc.health.v1.Health/Watch",
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    ] {
        assert_eq!(method_label(&format!("/{served}")), served);
    }
}

#[test]
fn every_recap_method_is_listed_under_its_own_label() {
    let methods = recap_v1_methods();
    for expected in [
        "recap.v1.EventService/Publish",
        "recap.v1.MemoryService/SetMessageData",
        "recap.v1.SettingsService/ImportSettings",
        "recap.v1.InjectionService/Subscribe",
        "recap.v1.PromptService/RenderPrompt",
    ] {
        assert!(
            methods.iter().any(|m| m == expected),
            "{expected} in {methods:?}"
        );
    }
    // Each is the label its calls are counted under.
    for method in &methods {
        assert_eq!(method_label(&format!("/{method}")), method.as_str());
    }
}

/// The code and message a client decodes from `response`.
fn decoded(response: &http::Response<()>) -> (Code, String) {
    status_of(response).map_or((Code::Ok, String::new()), |status| {
        (status.code(), status.message().to_owned())
    })
}

#[test]
fn only_tonics_size_refusal_becomes_resource_exhausted() {
    // tonic's own refusal, as its decoder words it.
    let mut too_large = Status::out_of_range(
        "Error, decoded message length too large: found 5000 bytes, the limit is: 4096 bytes",
    )
    .into_http();
    request_too_large_is_resource_exhausted(&mut too_large);
    assert_eq!(
        decoded(&too_large),
        (
            Code::ResourceExhausted,
            REQUEST_TOO_LARGE_MESSAGE.to_owned()
        )
    );
    assert_eq!(code_name(decoded(&too_large).0), "RESOURCE_EXHAUSTED");
    // Any other OUT_OF_RANGE, or the same words under another code, stays.
    let mut other = Status::out_of_range("swipe 3 of 2").into_http();
    request_too_large_is_resource_exhausted(&mut other);
    assert_eq!(
        decoded(&other),
        (Code::OutOfRange, "swipe 3 of 2".to_owned())
    );
    let mut not_tonics = Status::invalid_argument("decoded message length too large").into_http();
    request_too_large_is_resource_exhausted(&mut not_tonics);
    assert_eq!(decoded(&not_tonics).0, Code::InvalidArgument);
}

#[test]
fn a_response_without_status_header_is_ok_and_with_one_is_named() {
    let ok = http::Response::new(());
    assert_eq!(decoded(&ok), (Code::Ok, String::new()));
    let failed = Status::not_found("chat \"x\" 100% gone").into_http();
    // The message comes back as sent, percent-decoded.
    assert_eq!(
        decoded(&failed),
        (Code::NotFound, "chat \"x\" 100% gone".to_owned())
    );
    assert_eq!(code_name(decoded(&failed).0), "NOT_FOUND");
}
