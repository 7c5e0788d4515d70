//! The real binary under SIGTERM: open streams end cleanly, pending
//! debounced refreshes run, acknowledged writes are on disk, exit 0 in time.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::process::Recapd;
use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_1000_open_streams_exits_0_and_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Recapd::start(dir.path());
    let channel = server.channel().await;
    assert!(server.health().success(), "recapd health reports SERVING");

    let mut settings = SettingsServiceClient::new(channel.clone());
    settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: String::new(),
            settings: Some(pb::Settings {
                debounce_ms: Some(60_000),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await
        .unwrap();
    let mut events = EventServiceClient::new(channel.clone());
    let publish = |kind| pb::PublishRequest {
        event: Some(pb::Event {
            chat_id: "c".into(),
            kind: Some(kind),
        }),
    };
    events
        .publish(publish(chat_changed(vec![message("m1", "hi")])))
        .await
        .unwrap();
    // Debounced for a minute: only the shutdown can run it.
    let acknowledged = events
        .publish(publish(message_sent("m2", "still there?")))
        .await
        .unwrap();
    assert_eq!(acknowledged.into_inner().revision, 1);

    let mut streams = Vec::new();
    for i in 0..1000 {
        // Four connections, 250 streams each.
        if i % 250 == 0 {
            streams.push((server.channel().await, Vec::new()));
        }
        let (channel, list) = streams.last_mut().unwrap();
        let mut client = InjectionServiceClient::new(channel.clone());
        let chat_ids = if i % 2 == 0 {
            vec!["c".to_owned()]
        } else {
            vec![]
        };
        let mut stream = client
            .subscribe(pb::SubscribeRequest {
                chat_ids,
                max_updates: 0,
            })
            .await
            .unwrap()
            .into_inner();
        if i % 2 == 0 {
            assert_eq!(next_within(&mut stream, 5).await.unwrap().revision, 1);
        }
        list.push(stream);
    }

    let started = Instant::now();
    server.terminate();
    // Each stream ends with a clean status (Ok(None)), and streams on the
    // named chat may first see the flushed refresh.
    for (_, list) in &mut streams {
        for stream in list.iter_mut() {
            loop {
                match tokio::time::timeout(Duration::from_secs(10), stream.message()).await {
                    Ok(Ok(Some(update))) => assert_eq!(update.revision, 2),
                    Ok(Ok(None)) => break,
                    Ok(Err(status)) => panic!("stream ended with {status}"),
                    Err(_) => panic!("stream still open 10 s after SIGTERM"),
                }
            }
        }
    }
    let status = server.wait_exit(Duration::from_secs(10));
    assert!(status.success(), "exit status {status:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    drop(streams);

    // The pending debounced refresh ran before exit (not at the next start).
    let mut server = Server::start(dir.path()).await;
    let injection = server.injection("c").await;
    assert_eq!(injection.revision, 2);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::MessageSent);
    server.stop().await;
}

#[test]
fn invalid_configuration_exits_64_before_binding_or_writing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("never-created");
    for args in [
        vec!["--listen", "not-an-address"],
        vec!["--workers", "0"],
        vec!["--metrics-listen", "sometimes"],
        vec!["--log-level", "[[["],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_recapd"))
            .args(&args)
            .arg("--data-dir")
            .arg(&data)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(64), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(args[0]), "{stderr} names {}", args[0]);
        assert!(!data.exists(), "nothing written for {args:?}");
    }
}

#[test]
fn health_of_nothing_listening_exits_1() {
    let status = Command::new(env!("CARGO_BIN_EXE_recapd"))
        .args(["health", "--addr", &format!("127.0.0.1:{}", free_port())])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
}
