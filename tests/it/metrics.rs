//! The Prometheus endpoint of the real binary: before any call, every
//! method's and every trigger's series is there at 0; after a Publish that a
//! subscriber receives, `/metrics` lists the metrics docs/operating.md documents
//! for RPCs, refreshes, subscribers, store commits and resident chats.

use std::process::Command;

use crate::common::api::subscribe;
use crate::common::process::{Recapd, scrape};
use crate::common::*;
use recapd::grpc::pb::RefreshTrigger;

/// What one scrape must contain after the calls below.
const EXPECTED: [&str; 13] = [
    r#"recapd_rpc_requests_total{method="recap.v1.EventService/Publish",code="OK"}"#,
    "recapd_rpc_duration_seconds_bucket",
    r#"recapd_refreshes_total{trigger="chat_changed"}"#,
    "recapd_refresh_duration_seconds_bucket",
    "recapd_subscribers",
    "recapd_updates_pushed_total",
    "recapd_store_commit_duration_seconds_bucket",
    "recapd_store_commit_batch_size_bucket",
    "recapd_chats_resident",
    "recapd_resident_bytes",
    "recapd_chat_evictions_total",
    "recapd_chat_loads_total",
    "recapd_chat_load_duration_seconds_bucket",
];

/// Every refresh trigger, as the `trigger` label of `recapd_refreshes_total`
/// names them (the events behind them are in docs/api.md).
const TRIGGERS: [&str; 13] = [
    "chat_changed",
    "message_sent",
    "message_received",
    "message_edited",
    "message_deleted",
    "message_swiped",
    "more_messages_loaded",
    "refresh_requested",
    "message_data_changed",
    "settings_changed",
    "running_recap_changed",
    "startup",
    "recap_generated",
];

/// "recap.v1.Service/Method" for every `rpc` of every `service` in the
/// proto file, read from its text.
fn proto_methods() -> Vec<String> {
    let proto = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/proto/recap/v1/recap.proto"
    ))
    .expect("the proto file is readable");
    let mut service = None;
    let mut methods = Vec::new();
    for line in proto.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("service ") {
            service = rest.split_whitespace().next().map(str::to_owned);
        } else if let Some(rest) = line.strip_prefix("rpc ") {
            let name = rest.split('(').next().unwrap_or_default().trim();
            let service = service.as_deref().expect("an rpc inside a service");
            methods.push(format!("recap.v1.{service}/{name}"));
        }
    }
    methods
}

#[tokio::test]
async fn a_fresh_server_shows_every_method_and_trigger_at_zero_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_recapd"));
    command.args(["--metrics-listen", &metrics_addr]);
    let recapd = Recapd::start_with(command, dir.path());
    // The gRPC port opens after the metrics are set up; no call is made.
    drop(recapd.channel().await);

    let body = scrape(&metrics_addr).await;
    let methods = proto_methods();
    let services: std::collections::BTreeSet<&str> = methods
        .iter()
        .filter_map(|method| method.split('/').next())
        .collect();
    assert_eq!(services.len(), 8, "rpcs read from the proto: {methods:?}");
    let mut expected: Vec<String> = methods
        .iter()
        .map(|method| format!(r#"recapd_rpc_requests_total{{method="{method}",code="OK"}} 0"#))
        .collect();
    expected.extend(
        TRIGGERS
            .iter()
            .map(|trigger| format!(r#"recapd_refreshes_total{{trigger="{trigger}"}} 0"#)),
    );
    expected.push("recapd_subscribers 0".to_owned());
    expected.push("recapd_chats_resident 0".to_owned());
    // The job queue's series, before any job.
    expected.push("recapd_jobs_queued 0".to_owned());
    expected
        .push(r#"recapd_job_transitions_total{kind="scene_recap",state="succeeded"} 0"#.to_owned());
    expected.push(r#"recapd_jobs_dropped_total{kind="detect_scene_break"} 0"#.to_owned());
    // A model tokenizer's fallbacks, before any count.
    expected.push(r#"recapd_tokenizer_fallbacks_total{reason="load"} 0"#.to_owned());
    expected.push(r#"recapd_tokenizer_fallbacks_total{reason="endpoint"} 0"#.to_owned());
    let lines: Vec<&str> = body.lines().collect();
    let missing: Vec<&String> = expected
        .iter()
        .filter(|series| !lines.contains(&series.as_str()))
        .collect();
    assert!(missing.is_empty(), "series missing: {missing:?}\n{body}");
    // Nothing counted a call that was never made.
    assert!(
        !body.contains(r#"code="OK"} 1"#),
        "a call counted before any call:\n{body}"
    );
}

#[tokio::test]
async fn metrics_endpoint_lists_rpc_refresh_subscriber_and_store_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut command = Command::new(env!("CARGO_BIN_EXE_recapd"));
    command.args(["--metrics-listen", &metrics_addr]);
    let recapd = Recapd::start_with(command, dir.path());
    let mut server = Server::clients(recapd.channel().await);

    let mut updates = subscribe(&mut server, &["metrics-1"], 0).await;
    server
        .publish(
            "metrics-1",
            chat_changed(vec![message("m1", "Hi!"), message("m2", "Hello, Alice.")]),
        )
        .await
        .expect("publish");
    // The first update is the chat as it was when the stream opened.
    loop {
        let update = next_within(&mut updates, 5)
            .await
            .expect("the subscriber receives the refresh");
        if trigger(&update) == RefreshTrigger::ChatChanged {
            break;
        }
    }

    let body = scrape(&metrics_addr).await;
    let missing: Vec<&str> = EXPECTED
        .into_iter()
        .filter(|name| !body.contains(name))
        .collect();
    assert!(missing.is_empty(), "metrics missing: {missing:?}\n{body}");
    drop(updates);
    server.stop().await;
}
