//! Injections over the API: Refresh, GetInjection, Subscribe (snapshot,
//! live updates, max_updates, revisions, slow subscribers), reflection
//! and health.

use std::collections::HashMap;
use std::time::Duration;

use crate::common::api::*;
use crate::common::*;
use prost::Message as _;
use recapd::grpc::pb;

/// The next stream item within `ms` milliseconds (None on timeout or end).
async fn next_in_ms(
    stream: &mut tonic::Streaming<pb::Injection>,
    ms: u64,
) -> Option<pb::Injection> {
    match tokio::time::timeout(Duration::from_millis(ms), stream.message()).await {
        Ok(Ok(item)) => item,
        Ok(Err(status)) => panic!("stream failed: {status}"),
        Err(_) => None,
    }
}

/// Asserts that the stream ends cleanly (no error, no timeout).
async fn assert_stream_ends(stream: &mut tonic::Streaming<pb::Injection>) {
    match tokio::time::timeout(Duration::from_secs(5), stream.message()).await {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(item))) => panic!("the stream should have ended, got {item:?}"),
        Ok(Err(status)) => panic!("the stream ended with an error: {status}"),
        Err(_) => panic!("the stream did not end within 5 s"),
    }
}

#[tokio::test]
async fn refresh_runs_now_and_answers_with_the_new_injection() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    add_recap(&mut s, "c", "recap").await;
    let before = s.injection("c").await;
    let injection = refresh(&mut s, "c").await.unwrap();
    assert_eq!(injection.revision, before.revision + 1);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RefreshRequested);
    assert_eq!(injection.key, KEY);
    assert_eq!(injection.text, before.text);
    assert_eq!(s.injection("c").await, injection);
    // The refresh_requested event is the same trigger.
    let revision = s.publish("c", refresh_requested()).await.unwrap();
    assert_eq!(revision, injection.revision + 1);
    assert_eq!(
        trigger(&s.injection("c").await),
        pb::RefreshTrigger::RefreshRequested
    );
    s.stop().await;
}

#[tokio::test]
async fn a_known_chat_never_refreshed_has_revision_zero_and_empty_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    s.set_global_debounce(60_000).await;
    assert_eq!(
        s.publish("fresh", message_sent("m1", "hello"))
            .await
            .unwrap(),
        0
    );
    let injection = s.injection("fresh").await;
    assert_eq!(injection.revision, 0);
    assert_eq!(injection.text, "");
    assert_eq!(injection.chat_id, "fresh");
    assert_eq!(injection.key, KEY);
    assert_eq!(order(&mut s, "fresh").await, ["m1"]);
    // A subscriber gets no snapshot for it, then its first refresh.
    let mut stream = subscribe(&mut s, &["fresh"], 0).await;
    assert!(
        next_in_ms(&mut stream, 300).await.is_none(),
        "no snapshot before a refresh"
    );
    let injection = refresh(&mut s, "fresh").await.unwrap();
    assert_eq!(injection.revision, 1);
    let pushed = next_within(&mut stream, 5)
        .await
        .expect("the first refresh");
    assert_eq!(pushed, injection);
    drop(stream);
    s.stop().await;
}

#[tokio::test]
async fn subscribe_with_no_chat_ids_streams_every_chat_live_without_a_snapshot() {
    let (_dir, mut s) = start().await;
    s.publish("a", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    s.publish("b", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let mut stream = subscribe(&mut s, &[], 0).await;
    assert!(
        next_in_ms(&mut stream, 300).await.is_none(),
        "no snapshot for every-chat subscribers"
    );

    let rb = s.publish("b", refresh_requested()).await.unwrap();
    let ra = s.publish("a", refresh_requested()).await.unwrap();
    let rn = s
        .publish("new", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let mut got = Vec::new();
    for _ in 0..3 {
        let injection = next_within(&mut stream, 5).await.expect("a live update");
        got.push((injection.chat_id.clone(), injection.revision));
    }
    assert_eq!(
        got,
        [
            ("b".to_owned(), rb),
            ("a".to_owned(), ra),
            ("new".to_owned(), rn)
        ]
    );
    assert_eq!(rn, 1);
    drop(stream);
    s.stop().await;
}

#[tokio::test]
async fn subscribe_with_chat_ids_sends_the_snapshot_then_every_refresh() {
    let (_dir, mut s) = start().await;
    s.publish("a", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    s.publish("b", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    s.publish("other", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let mut stream = subscribe(&mut s, &["a", "b"], 0).await;
    let mut snapshot = [
        next_within(&mut stream, 5).await.expect("snapshot"),
        next_within(&mut stream, 5).await.expect("snapshot"),
    ];
    snapshot.sort_by(|x, y| x.chat_id.cmp(&y.chat_id));
    assert_eq!(snapshot[0], s.injection("a").await);
    assert_eq!(snapshot[1], s.injection("b").await);
    s.publish("other", refresh_requested()).await.unwrap();
    let r = s.publish("b", refresh_requested()).await.unwrap();
    let pushed = next_within(&mut stream, 5).await.expect("b's refresh");
    assert_eq!((pushed.chat_id.as_str(), pushed.revision), ("b", r));
    assert!(
        next_in_ms(&mut stream, 300).await.is_none(),
        "other chats are not sent"
    );
    drop(stream);
    s.stop().await;
}

#[tokio::test]
async fn max_updates_ends_the_stream_after_that_many_messages() {
    let (_dir, mut s) = start().await;
    s.publish("a", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    // Named chat: the snapshot counts as one.
    let mut stream = subscribe(&mut s, &["a"], 2).await;
    assert_eq!(
        next_within(&mut stream, 5)
            .await
            .expect("snapshot")
            .revision,
        1
    );
    s.publish("a", refresh_requested()).await.unwrap();
    assert_eq!(
        next_within(&mut stream, 5).await.expect("update").revision,
        2
    );
    assert_stream_ends(&mut stream).await;

    // Every chat.
    let mut stream = subscribe(&mut s, &[], 3).await;
    for chat in ["a", "b", "a", "b"] {
        s.publish(chat, refresh_requested()).await.unwrap();
    }
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(next_within(&mut stream, 5).await.expect("update").chat_id);
    }
    assert_eq!(got, ["a", "b", "a"]);
    assert_stream_ends(&mut stream).await;
    s.stop().await;
}

#[tokio::test]
async fn revisions_rise_by_one_per_refresh_and_a_subscriber_ends_at_the_latest() {
    let (_dir, mut s) = start().await;
    let first = s
        .publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    assert_eq!(first, 1);
    let mut stream = subscribe(&mut s, &["c"], 0).await;
    let mut last = first;
    for _ in 0..40 {
        let revision = s.publish("c", refresh_requested()).await.unwrap();
        assert_eq!(
            revision,
            last + 1,
            "each immediate trigger is exactly one refresh"
        );
        last = revision;
    }
    let latest = s.injection("c").await;
    assert_eq!(latest.revision, last);
    let mut seen = Vec::new();
    loop {
        let injection = next_within(&mut stream, 5)
            .await
            .expect("the stream reaches the latest revision");
        assert_eq!(injection.chat_id, "c");
        if let Some(previous) = seen.last() {
            assert!(
                injection.revision > *previous,
                "revisions go up: {seen:?} then {}",
                injection.revision
            );
        }
        seen.push(injection.revision);
        if injection.revision == last {
            assert_eq!(injection, latest);
            break;
        }
    }
    assert_eq!(seen[0], 1, "the snapshot comes first");
    assert!(next_in_ms(&mut stream, 300).await.is_none());
    drop(stream);
    s.stop().await;
}

#[tokio::test]
async fn a_slow_every_chat_subscriber_skips_but_ends_at_each_chats_latest_revision() {
    let (_dir, mut s) = start().await;
    let chats = ["p", "q", "r", "t"];
    for chat in chats {
        s.publish(chat, chat_changed(vec![message("m", "x")]))
            .await
            .unwrap();
    }
    // Subscribed, but not reading while the publishers run.
    let mut stream = subscribe(&mut s, &[], 0).await;
    let mut tasks = tokio::task::JoinSet::new();
    for chat in chats {
        let mut events = s.events.clone();
        tasks.spawn(async move {
            let mut last = 1;
            for _ in 0..1500 {
                let event = pb::Event {
                    chat_id: chat.into(),
                    kind: Some(refresh_requested()),
                };
                let revision = events
                    .publish(pb::PublishRequest { event: Some(event) })
                    .await
                    .unwrap()
                    .into_inner()
                    .revision;
                assert_eq!(revision, last + 1, "{chat}");
                last = revision;
            }
            (chat, last)
        });
    }
    let mut latest = HashMap::new();
    // A bound that only a hang reaches: 6,000 durable publishes take
    // seconds on a quiet machine, over a minute on a loaded one with
    // PostgreSQL; a subscriber holding the publishers up would stop them
    // for ever.
    let publishers = tokio::time::timeout(Duration::from_secs(600), async {
        while let Some(done) = tasks.join_next().await {
            let (chat, last) = done.unwrap();
            latest.insert(chat.to_owned(), last);
        }
    })
    .await;
    assert!(
        publishers.is_ok(),
        "a subscriber that does not read must not hold up publishers"
    );
    for chat in chats {
        assert_eq!(latest[chat], 1501, "{chat}");
        assert_eq!(s.injection(chat).await.revision, 1501);
    }
    // Now read: per chat the revisions rise, and each chat reaches its latest.
    let mut seen: HashMap<String, u64> = HashMap::new();
    while seen.len() < chats.len() || seen.iter().any(|(c, r)| *r != latest[c]) {
        let injection = next_within(&mut stream, 10)
            .await
            .unwrap_or_else(|| panic!("stuck at {seen:?}"));
        let previous = seen.get(&injection.chat_id).copied().unwrap_or(0);
        assert!(
            injection.revision > previous,
            "{} went from {previous} to {}",
            injection.chat_id,
            injection.revision
        );
        seen.insert(injection.chat_id.clone(), injection.revision);
    }
    drop(stream);
    s.stop().await;
}

async fn services_v1(channel: tonic::transport::Channel) -> Vec<String> {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let mut client = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = client
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .expect("reflection v1 answers")
        .into_inner();
    let response = responses.message().await.unwrap().expect("a response");
    match response.message_response {
        Some(MessageResponse::ListServicesResponse(list)) => {
            list.service.into_iter().map(|s| s.name).collect()
        }
        other => panic!("unexpected reflection answer: {other:?}"),
    }
}

async fn services_v1alpha(channel: tonic::transport::Channel) -> Vec<String> {
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
    let mut client = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = client
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .expect("reflection v1alpha answers")
        .into_inner();
    let response = responses.message().await.unwrap().expect("a response");
    match response.message_response {
        Some(MessageResponse::ListServicesResponse(list)) => {
            list.service.into_iter().map(|s| s.name).collect()
        }
        other => panic!("unexpected reflection answer: {other:?}"),
    }
}

/// The file descriptors reflection v1alpha gives for `symbol`.
async fn files_containing(
    channel: tonic::transport::Channel,
    symbol: &str,
) -> Vec<prost_types::FileDescriptorProto> {
    use tonic_reflection::pb::v1alpha::ServerReflectionRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1alpha::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1alpha::server_reflection_response::MessageResponse;
    let mut client = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(symbol.into())),
    };
    let mut responses = client
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().expect("a response");
    match response.message_response {
        Some(MessageResponse::FileDescriptorResponse(files)) => files
            .file_descriptor_proto
            .iter()
            .map(|bytes| prost_types::FileDescriptorProto::decode(bytes.as_slice()).unwrap())
            .collect(),
        other => panic!("unexpected reflection answer for {symbol}: {other:?}"),
    }
}

const EXPECTED_SERVICES: [&str; 8] = [
    "recap.v1.EventService",
    "recap.v1.MemoryService",
    "recap.v1.SettingsService",
    "recap.v1.InjectionService",
    "recap.v1.PromptService",
    "recap.v1.LorebookService",
    "recap.v1.RecallService",
    "grpc.health.v1.Health",
];

#[tokio::test]
async fn reflection_v1_and_v1alpha_list_the_recap_services_and_health() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path()).await;
    for (version, listed) in [
        ("v1", services_v1(s.channel.clone()).await),
        ("v1alpha", services_v1alpha(s.channel.clone()).await),
    ] {
        for name in EXPECTED_SERVICES {
            assert!(
                listed.iter().any(|l| l == name),
                "reflection {version} lacks {name}: {listed:?}"
            );
        }
    }
    // A reflection client can find the API's methods by name.
    let files = files_containing(s.channel.clone(), "recap.v1.InjectionService").await;
    let recap = files
        .iter()
        .find(|f| f.package.as_deref() == Some("recap.v1"))
        .expect("the recap.v1 file");
    let injection = recap
        .service
        .iter()
        .find(|svc| svc.name.as_deref() == Some("InjectionService"))
        .expect("InjectionService");
    let methods: Vec<&str> = injection
        .method
        .iter()
        .filter_map(|m| m.name.as_deref())
        .collect();
    for method in ["GetInjection", "Refresh", "GetInclusion", "Subscribe"] {
        assert!(methods.contains(&method), "{methods:?}");
    }
    let health = files_containing(s.channel.clone(), "grpc.health.v1.Health").await;
    assert!(
        health
            .iter()
            .any(|f| f.package.as_deref() == Some("grpc.health.v1"))
    );
    s.stop().await;
}

#[tokio::test]
async fn the_health_service_reports_serving() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(dir.path()).await;
    let mut health = HealthClient::new(s.channel.clone());
    for service in ["", "recap.v1.EventService", "recap.v1.InjectionService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap_or_else(|e| panic!("health check of {service:?}: {e}"))
            .into_inner()
            .status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
    s.stop().await;
}
