//! Slow and stalled subscribers: 100 streams that never read do not hold up
//! a stream that reads, and when they resume they end at the latest revision.

use std::time::{Duration, Instant};

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use tonic::transport::Channel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_subscribers_do_not_slow_a_reader_and_catch_up_to_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hi")]))
        .await
        .unwrap();
    // A 32 KB injection: a few refreshes fill a stalled stream's HTTP/2 window.
    add_recap(&mut server, "c", &"The long story so far. ".repeat(1400)).await;
    let addr = format!("http://{}", server.app.as_ref().unwrap().local_addr());

    let mut stalled = Vec::new();
    for _ in 0..100 {
        let channel = Channel::from_shared(addr.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        let stream = InjectionServiceClient::new(channel)
            .subscribe(pb::SubscribeRequest {
                chat_ids: vec!["c".into()],
                max_updates: 0,
            })
            .await
            .unwrap()
            .into_inner();
        stalled.push(stream); // never read until the end
    }
    let mut reader = server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: vec!["c".into()],
            max_updates: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let first = next_within(&mut reader, 5).await.unwrap().revision;

    let refreshes = 200;
    let mut worst = Duration::ZERO;
    for i in 1..=refreshes {
        let started = Instant::now();
        let injection = server
            .injections
            .refresh(pb::RefreshRequest {
                chat_id: "c".into(),
            })
            .await
            .unwrap()
            .into_inner();
        // The reader sees this very refresh, promptly: nothing skipped.
        let seen = next_within(&mut reader, 5)
            .await
            .expect("the reader keeps up");
        assert_eq!(seen.revision, first + i);
        assert_eq!(seen.revision, injection.revision);
        worst = worst.max(started.elapsed());
    }
    assert!(
        worst < Duration::from_secs(2),
        "slowest refresh-to-delivery {worst:?}"
    );
    let latest = first + refreshes;

    // The stalled streams resume: whatever they skipped, each ends at the latest.
    for stream in &mut stalled {
        let mut last = 0;
        while last < latest {
            let update = next_within(stream, 10)
                .await
                .expect("a stalled stream catches up");
            assert!(update.revision > last, "revisions only go up");
            last = update.revision;
        }
        assert_eq!(last, latest);
    }
    server.stop().await;
}
