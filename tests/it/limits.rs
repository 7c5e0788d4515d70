//! Configured limits: past each one the answer is RESOURCE_EXHAUSTED, the
//! state is unchanged, and freeing room makes room.

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use tonic::Code;
use tonic::transport::Channel;

#[tokio::test]
async fn messages_chats_and_subscribers_are_capped() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_messages_per_chat = 3;
    config.max_chats = 2;
    config.max_subscribers = 3;
    config.max_subscribers_per_connection = 2;
    let mut server = Server::start_with(config).await;

    // Messages per chat.
    server
        .publish(
            "a",
            chat_changed(vec![message("m1", "x"), message("m2", "y")]),
        )
        .await
        .unwrap();
    server.publish("a", message_sent("m3", "z")).await.unwrap();
    let err = server
        .publish("a", message_sent("m4", "over"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    let four = (1..=4).map(|i| message(&format!("n{i}"), "t")).collect();
    let err = server.publish("a", chat_changed(four)).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    let lines = server
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: "a".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .messages;
    assert_eq!(lines.len(), 3, "nothing of the refused events was applied");
    server.publish("a", message_deleted("m1")).await.unwrap();
    server
        .publish("a", message_sent("m4", "fits now"))
        .await
        .unwrap();

    // Chats.
    server.publish("b", refresh_requested()).await.unwrap();
    let err = server.publish("c", refresh_requested()).await.unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted);
    let err = server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: None,
        })
        .await
        .unwrap_err();
    assert_eq!(
        err.code(),
        Code::NotFound,
        "the refused chat was not created"
    );

    // Subscribers per connection, then in all.
    let subscribe = |mut client: InjectionServiceClient<Channel>| async move {
        client
            .subscribe(pb::SubscribeRequest {
                chat_ids: vec!["a".into()],
                max_updates: 0,
            })
            .await
            .map(|r| r.into_inner())
    };
    let first = subscribe(server.injections.clone()).await.unwrap();
    let _second = subscribe(server.injections.clone()).await.unwrap();
    let err = subscribe(server.injections.clone()).await.unwrap_err();
    assert_eq!(
        err.code(),
        Code::ResourceExhausted,
        "third on one connection"
    );
    let other = Channel::from_shared(format!(
        "http://{}",
        server.app.as_ref().unwrap().local_addr()
    ))
    .unwrap()
    .connect()
    .await
    .unwrap();
    let _third = subscribe(InjectionServiceClient::new(other.clone()))
        .await
        .unwrap();
    let err = subscribe(InjectionServiceClient::new(other.clone()))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "fourth in all");
    drop(first);
    // The server notices the closed stream and frees its place.
    let mut admitted = None;
    for _ in 0..50 {
        match subscribe(InjectionServiceClient::new(other.clone())).await {
            Ok(stream) => {
                admitted = Some(stream);
                break;
            }
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
        }
    }
    assert!(admitted.is_some(), "a closed subscription frees its place");
    server.stop().await;
}

#[tokio::test]
async fn an_over_long_field_is_invalid_argument_and_an_over_size_request_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_text_bytes = 100;
    config.max_request_bytes = 4096;
    let mut server = Server::start_with(config).await;
    let err = server
        .publish("a", message_sent("m1", &"x".repeat(101)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("text"), "{}", err.message());
    let err = server
        .publish("a", message_sent("m1", &"x".repeat(5000)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::ResourceExhausted, "{err:?}");
    server
        .publish("a", message_sent("m1", "fine"))
        .await
        .unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_new_chats_cannot_pass_the_chat_limit_together() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.max_chats = 2;
    let server = Server::start_with(config).await;
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..64 {
        let mut events = server.events.clone();
        calls.spawn(async move {
            let event = pb::Event {
                chat_id: format!("c{i}"),
                kind: Some(refresh_requested()),
            };
            events
                .publish(pb::PublishRequest { event: Some(event) })
                .await
                .map(drop)
        });
    }
    let mut created = 0;
    while let Some(result) = calls.join_next().await {
        match result.unwrap() {
            Ok(()) => created += 1,
            Err(status) => assert_eq!(status.code(), Code::ResourceExhausted),
        }
    }
    assert_eq!(created, 2);
    server.stop().await;
}
