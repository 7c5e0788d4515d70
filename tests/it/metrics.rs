//! The Prometheus endpoint of the real binary: after a Publish that a
//! subscriber receives, `/metrics` lists the metrics the README documents
//! for RPCs, refreshes, subscribers, store commits and resident chats.

use std::process::Command;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common::api::subscribe;
use crate::common::process::Recapd;
use crate::common::*;
use recapd::grpc::pb::RefreshTrigger;

/// What one scrape must contain after the calls below.
const EXPECTED: [&str; 9] = [
    r#"recapd_rpc_requests_total{method="recap.v1.EventService/Publish",code="OK"}"#,
    "recapd_rpc_duration_seconds_bucket",
    r#"recapd_refreshes_total{trigger="chat_changed"}"#,
    "recapd_refresh_duration_seconds_bucket",
    "recapd_subscribers",
    "recapd_updates_pushed_total",
    "recapd_store_commit_duration_seconds_bucket",
    "recapd_store_commit_batch_size_bucket",
    "recapd_chats_resident",
];

/// The body of `GET /metrics` at `addr` (HTTP/1.0: no chunked encoding).
async fn scrape(addr: &str) -> String {
    let mut stream = TcpStream::connect(addr)
        .await
        .expect("the metrics endpoint accepts");
    stream
        .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .expect("request sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .await
        .expect("a UTF-8 response");
    let (head, body) = response
        .split_once("\r\n\r\n")
        .expect("an HTTP response with a body");
    assert!(head.starts_with("HTTP/1."), "not HTTP: {head}");
    assert!(head.contains(" 200 "), "GET /metrics answered {head}");
    body.to_owned()
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
