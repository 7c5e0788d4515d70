//! Export over each protocol, and what a collector that is down, slow or
//! misconfigured costs: nothing but the spans, counted.

use super::*;

#[tokio::test]
async fn spans_reach_a_collector_over_http() {
    spans_reach_a_collector_over("http/protobuf").await;
}

#[tokio::test]
async fn spans_reach_a_collector_over_http_as_json() {
    spans_reach_a_collector_over("http/json").await;
}

async fn spans_reach_a_collector_over(protocol: &str) {
    let collector = Collector::start_http().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let recapd = traced_recapd(
        dir.path(),
        &collector,
        protocol,
        &[
            "--otel-service-name",
            "recapd-eu",
            "--otel-resource-attributes",
            "deployment.environment.name=test",
            "--otlp-headers",
            "x-api-key=s%3Dcret",
        ],
    );
    let mut server = Server::clients(recapd.channel().await);
    let (traceparent, trace_id, _) = new_traceparent();
    server
        .events
        .publish(traced(
            publish("http-chat", chat_changed(story_chat(3, &[]))),
            &traceparent,
        ))
        .await
        .expect("published");
    collector
        .wait_for("the Publish span over HTTP", |spans| {
            spans.iter().find(|span| span.trace_id == trace_id).cloned()
        })
        .await;
    assert!(
        collector
            .service_names()
            .iter()
            .all(|name| name == "recapd-eu")
    );
    assert!(
        collector
            .everything()
            .contains("deployment.environment.name")
    );
    let keys = collector.header_values("x-api-key");
    assert!(
        !keys.is_empty() && keys.iter().all(|key| key == "s=cret"),
        "every export carries the operator's header, decoded: {keys:?}"
    );
}

#[tokio::test]
async fn a_dead_collector_changes_no_answer_and_its_spans_are_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let dead = format!("http://127.0.0.1:{}", free_port());
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut command = Recapd::command(dir.path());
    command.args([
        "--otlp-endpoint",
        &dead,
        "--otlp-protocol",
        "grpc",
        "--metrics-listen",
        &metrics_addr,
    ]);
    let traced = Recapd::start_with(command, dir.path());
    let plain_dir = tempfile::tempdir().expect("temp dir");
    let plain = Recapd::start(plain_dir.path());
    let mut answers = Vec::new();
    for recapd in [&traced, &plain] {
        let mut server = Server::clients(recapd.channel().await);
        server
            .publish("same", chat_changed(story_chat(12, &[])))
            .await
            .expect("published");
        let started = std::time::Instant::now();
        let mut injection = server
            .injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: "same".into(),
                ..Default::default()
            })
            .await
            .expect("an injection")
            .into_inner();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "no call waits on the collector"
        );
        injection.refreshed_at = None;
        answers.push(format!("{injection:?}"));
    }
    assert_eq!(answers[0], answers[1]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let body = scrape(&metrics_addr).await;
        if metric(&body, "recapd_trace_spans_dropped_total{reason=\"export\"}") > 0.0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no dropped span counted:\n{body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_bad_endpoint_or_attribute_is_refused_at_start() {
    for (args, named) in [
        (
            vec!["--otlp-endpoint", "ftp://collector:4317"],
            "--otlp-endpoint",
        ),
        (
            vec![
                "--otlp-endpoint",
                "http://127.0.0.1:4318",
                "--otel-resource-attributes",
                "novalue",
            ],
            "resource attribute",
        ),
        (
            vec![
                "--otlp-endpoint",
                "http://127.0.0.1:4318",
                "--otlp-protocol",
                "thrift",
            ],
            "--otlp-protocol",
        ),
        (
            vec![
                "--otlp-endpoint",
                "http://127.0.0.1:4318",
                "--otlp-headers",
                "two words=x",
            ],
            "--otlp-headers",
        ),
    ] {
        let (code, _, stderr) = run_recapd(&args, &[]).await;
        assert_eq!(code, Some(64), "{args:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn a_collector_that_never_answers_delays_no_call() {
    // It accepts connections and reads nothing: each export waits for its
    // timeout, while calls go on at their own pace.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("bound"));
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            connections.push(stream);
        }
    });
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = Recapd::command(dir.path());
    command.args(["--otlp-endpoint", &url, "--otlp-protocol", "grpc"]);
    let recapd = Recapd::start_with(command, dir.path());
    let mut server = Server::clients(recapd.channel().await);
    server
        .publish("slow", chat_changed(story_chat(4, &[])))
        .await
        .expect("published");
    for round in 0..40 {
        let started = std::time::Instant::now();
        server
            .events
            .publish(publish("slow", message_sent(&format!("n{round}"), "more")))
            .await
            .expect("published");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "call {round} waited {:?}",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    held.abort();
}

#[tokio::test]
async fn otel_variables_set_for_other_services_never_stop_a_recapd_without_traces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = Recapd::command(dir.path());
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "")
        .env("OTEL_TRACES_SAMPLER", "xray")
        .env("OTEL_TRACES_SAMPLER_ARG", "2")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "thrift")
        .env("OTEL_RESOURCE_ATTRIBUTES", "novalue");
    let recapd = Recapd::start_with(command, dir.path());
    let mut server = Server::clients(recapd.channel().await);
    server
        .publish("fine", chat_changed(story_chat(2, &[])))
        .await
        .expect("serving");
}
