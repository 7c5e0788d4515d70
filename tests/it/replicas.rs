//! Several recapd replicas on one PostgreSQL (RECAPD_TEST_DATABASE_URL, a
//! fresh schema per test): an event on one replica reaches subscribers of
//! another, concurrent events on one chat get distinct revisions in a
//! consistent order, a debounced burst spread over replicas refreshes once,
//! a replica cut off from the database answers UNAVAILABLE, loses nothing
//! acknowledged and resyncs its subscribers, and a replica killed with
//! SIGKILL leaves the others serving (and its owed refresh is run);
//! global settings and profiles changed at once on two replicas are all
//! kept.
//! These tests always run: without a reachable database they fail.

use std::collections::HashSet;
use std::time::Duration;

use crate::common::api::*;
use crate::common::process::Recapd;
use crate::common::replicas::*;
use crate::common::*;
use recapd::grpc::pb;
use tokio::time::Instant;

/// Two replicas on one fresh schema, both with `debounce_ms`.
async fn two_replicas(debounce_ms: i64) -> (tempfile::TempDir, Server, Server) {
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let url = test_database_url();
    let a = Server::start_with(replica_config(&dir.path().join("a"), &url, &schema)).await;
    let mut b = Server::start_with(replica_config(&dir.path().join("b"), &url, &schema)).await;
    b.set_global_debounce(debounce_ms).await;
    let mut a = a;
    wait_for_debounce(&mut a, debounce_ms).await;
    (dir, a, b)
}

/// Reads `stream` until an injection of at least `revision` arrives.
async fn until_revision(
    stream: &mut tonic::Streaming<pb::Injection>,
    revision: u64,
    within: Duration,
) -> pb::Injection {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.message()).await {
            Ok(Ok(Some(injection))) if injection.revision >= revision => return injection,
            Ok(Ok(Some(_))) => {}
            other => panic!("no revision {revision} within {within:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn an_event_on_one_replica_reaches_the_subscribers_of_another() {
    let (_dir, mut a, mut b) = two_replicas(0).await;
    let mut one_chat = subscribe(&mut a, &["c"], 0).await;
    let mut every_chat = subscribe(&mut a, &[], 0).await;
    b.publish("c", chat_changed(vec![message("m1", "Hi")]))
        .await
        .unwrap();
    let started = Instant::now();
    let first = until_revision(&mut one_chat, 1, Duration::from_secs(3)).await;
    assert_eq!(first.chat_id, "c");
    assert_eq!(
        until_revision(&mut every_chat, 1, Duration::from_secs(3)).await,
        first
    );
    // A chat A has never held reaches A's all-chats subscriber too.
    b.publish("d", chat_changed(vec![message("m1", "Hello")]))
        .await
        .unwrap();
    let other = until_revision(&mut every_chat, 1, Duration::from_secs(3)).await;
    assert_eq!(other.chat_id, "d");
    add_recap(&mut b, "c", "They met.").await;
    let second = until_revision(&mut one_chat, 2, Duration::from_secs(3)).await;
    assert!(second.text.contains("They met."), "{second:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // Reads on A see B's writes too.
    assert_eq!(a.injection("c").await, second);
    assert_eq!(order(&mut a, "c").await, ["m1"]);
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_deletion_on_one_replica_reaches_the_other_replicas_memory_and_subscribers() {
    let (_dir, mut a, mut b) = two_replicas(0).await;
    a.publish("c", chat_changed(vec![message("m1", "Hi")]))
        .await
        .unwrap();
    add_recap(&mut a, "c", "They met.").await;
    catch_up(&mut b, &mut a, "c").await;
    let mut one_chat = subscribe(&mut b, &["c"], 0).await;
    let mut every_chat = subscribe(&mut b, &[], 0).await;
    until_revision(&mut one_chat, 2, Duration::from_secs(3)).await;

    let deleted = a
        .memory
        .delete_chat(pb::DeleteChatRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .revision;
    for stream in [&mut one_chat, &mut every_chat] {
        let last = until_revision(stream, deleted, Duration::from_secs(3)).await;
        assert!(last.deleted && last.text.is_empty(), "{last:?}");
        assert_eq!(last.revision, deleted);
    }
    let read = b
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: None,
        })
        .await;
    assert_eq!(read.unwrap_err().code(), tonic::Code::NotFound);
    // Re-created on B, its revisions go on above the deletion.
    let revision = b.publish("c", refresh_requested()).await.unwrap();
    assert!(revision > deleted, "{revision} after {deleted}");
    let on_a = until_revision(
        &mut subscribe(&mut a, &["c"], 0).await,
        revision,
        Duration::from_secs(3),
    )
    .await;
    assert!(!on_a.deleted);
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn concurrent_events_on_both_replicas_get_distinct_revisions_in_one_order() {
    let (_dir, mut a, b) = two_replicas(0).await;
    a.publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    let send = |mut server: Server, prefix: &'static str| async move {
        let mut revisions = Vec::new();
        for i in 0..25 {
            let id = format!("{prefix}{i}");
            revisions.push(
                server
                    .publish("c", message_sent(&id, "text"))
                    .await
                    .unwrap(),
            );
        }
        (server, revisions)
    };
    let ((a, from_a), (b, from_b)) = tokio::join!(send(a, "a"), send(b, "b"));
    let mut all: Vec<u64> = from_a.iter().chain(&from_b).copied().collect();
    all.sort_unstable();
    let distinct: HashSet<u64> = all.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        50,
        "two replicas handed out the same revision: {all:?}"
    );
    assert_eq!(all, (2..=51).collect::<Vec<u64>>());
    // Each replica's events keep their order, and each caller saw its own
    // revisions go up.
    for revisions in [&from_a, &from_b] {
        assert!(revisions.windows(2).all(|w| w[0] < w[1]), "{revisions:?}");
    }
    let (mut a, mut b) = (a, b);
    catch_up(&mut a, &mut b, "c").await;
    let ids = order(&mut a, "c").await;
    assert_eq!(ids.len(), 51);
    for prefix in ["a", "b"] {
        let mine: Vec<&String> = ids.iter().filter(|id| id.starts_with(prefix)).collect();
        let expected: Vec<String> = (0..25).map(|i| format!("{prefix}{i}")).collect();
        assert_eq!(mine, expected.iter().collect::<Vec<_>>());
    }
    assert_eq!(a.injection("c").await.revision, 51);
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_debounced_burst_spread_over_replicas_refreshes_once() {
    let (_dir, mut a, mut b) = two_replicas(700).await;
    a.publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    let mut on_a = subscribe(&mut a, &["c"], 0).await;
    let mut on_b = subscribe(&mut b, &["c"], 0).await;
    until_revision(&mut on_a, 1, Duration::from_secs(3)).await;
    until_revision(&mut on_b, 1, Duration::from_secs(3)).await;
    for i in 0..6 {
        let server = if i % 2 == 0 { &mut a } else { &mut b };
        server
            .publish("c", message_sent(&format!("x{i}"), "burst"))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refreshed = until_revision(&mut on_a, 2, Duration::from_secs(5)).await;
    assert_eq!(refreshed.revision, 2);
    assert_eq!(
        until_revision(&mut on_b, 2, Duration::from_secs(5)).await,
        refreshed
    );
    // Past the debounce, the takeover grace and a resync: nothing more.
    for stream in [&mut on_a, &mut on_b] {
        let more = tokio::time::timeout(Duration::from_millis(2_500), stream.message()).await;
        assert!(
            more.is_err(),
            "the burst refreshed more than once: {more:?}"
        );
    }
    assert_eq!(b.injection("c").await.revision, 2);
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_replica_cut_off_from_the_database_loses_nothing_and_resyncs() {
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let proxy = Proxy::start(database_addr()).await;
    let mut a = Server::start_with(replica_config(
        &dir.path().join("a"),
        &url_through(proxy.addr),
        &schema,
    ))
    .await;
    let mut b = Server::start_with(replica_config(
        &dir.path().join("b"),
        &test_database_url(),
        &schema,
    ))
    .await;
    b.set_global_debounce(0).await;
    wait_for_debounce(&mut a, 0).await;
    a.publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    let mut on_a = subscribe(&mut a, &["c"], 0).await;
    until_revision(&mut on_a, 1, Duration::from_secs(3)).await;
    // Chats only B writes, during the outage: A must resync them by itself
    // (A's own writes would re-read "c" anyway).
    let mut only_b = subscribe(&mut a, &["d"], 0).await;
    let mut every_chat = subscribe(&mut a, &[], 0).await;

    // Load on A while the database goes away and comes back.
    let load = tokio::spawn(publish_through_outage(a.events.clone(), "c", "a", 300));
    tokio::time::sleep(Duration::from_millis(300)).await;
    proxy.cut();
    // Meanwhile B changes the chat; A cannot hear it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    add_recap(&mut b, "c", "written while A was cut off").await;
    b.publish("d", chat_changed(vec![message("d1", "while cut off")]))
        .await
        .unwrap();
    b.publish("e", chat_changed(vec![message("e1", "while cut off")]))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    proxy.restore();
    let resynced = until_revision(&mut only_b, 1, Duration::from_secs(5)).await;
    assert_eq!(resynced.chat_id, "d");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, every_chat.message()).await {
            Ok(Ok(Some(update))) if update.chat_id == "e" => break,
            Ok(Ok(Some(_))) => {}
            other => panic!("A's all-chats subscriber never heard of chat e: {other:?}"),
        }
    }
    let (acknowledged, refused) = load.await.unwrap();
    assert!(refused > 0, "the outage was never noticed");
    assert!(
        acknowledged.len() > 50,
        "A did not recover: {}",
        acknowledged.len()
    );
    // A's subscriber catches up with what B wrote during the outage.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let latest = a.injection("c").await;
        if latest.text.contains("written while A was cut off") {
            break;
        }
        assert!(Instant::now() < deadline, "A never resynced: {latest:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut seen_recap = false;
    while let Ok(Ok(Some(update))) =
        tokio::time::timeout(Duration::from_millis(500), on_a.message()).await
    {
        seen_recap |= update.text.contains("written while A was cut off");
    }
    assert!(seen_recap, "A's subscriber was left on stale state");
    // Every acknowledged event is stored exactly once, in order.
    catch_up(&mut b, &mut a, "c").await;
    let ids = order(&mut b, "c").await;
    let stored: Vec<&String> = ids.iter().filter(|id| id.starts_with('a')).collect();
    let unique: HashSet<&&String> = stored.iter().collect();
    assert_eq!(unique.len(), stored.len(), "an event was stored twice");
    for id in &acknowledged {
        assert!(ids.contains(id), "acknowledged {id} was lost");
    }
    let positions: Vec<usize> = acknowledged
        .iter()
        .map(|id| ids.iter().position(|x| x == id).unwrap())
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "A's events were reordered"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_replica_killed_with_sigkill_leaves_the_other_serving_and_its_owed_refresh_runs() {
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let replica = |name: &str| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_recapd"));
        command
            .arg("--store")
            .arg(test_database_url())
            .arg("--store-schema")
            .arg(&schema)
            .arg("--resync-interval")
            .arg("1");
        Recapd::start_with(command, &dir.path().join(name))
    };
    let mut killed = replica("a");
    let survivor = replica("b");
    let mut a = Server::clients(killed.channel().await);
    let mut b = Server::clients(survivor.channel().await);
    b.set_global_debounce(1_000).await;
    wait_for_debounce(&mut a, 1_000).await;
    a.publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    let mut on_b = subscribe(&mut b, &["c"], 0).await;
    until_revision(&mut on_b, 1, Duration::from_secs(3)).await;
    // A owes a debounced refresh when it dies.
    a.publish("c", message_sent("m1", "last words"))
        .await
        .unwrap();
    killed.kill9();
    let adopted = until_revision(&mut on_b, 2, Duration::from_secs(8)).await;
    assert_eq!(adopted.revision, 2);
    // B carries on.
    assert_eq!(b.publish("c", refresh_requested()).await.unwrap(), 3);
    assert_eq!(order(&mut b, "c").await, ["m0", "m1"]);
}

#[tokio::test]
async fn global_changes_made_at_once_on_two_replicas_are_both_kept() {
    let (_dir, a, b) = two_replicas(0).await;
    let change = |mut server: Server, settings: fn(i32) -> pb::Settings| async move {
        for i in 1..=10 {
            server
                .settings
                .update_settings(pb::UpdateSettingsRequest {
                    chat_id: String::new(),
                    settings: Some(settings(i)),
                    clear: vec![],
                })
                .await
                .unwrap();
        }
        server
    };
    let (a, b) = tokio::join!(
        change(a, |i| pb::Settings {
            depth: Some(i),
            ..Default::default()
        }),
        change(b, |i| pb::Settings {
            message_length_threshold: Some(i64::from(i)),
            ..Default::default()
        }),
    );
    // Each replica ends with both changes once it has heard the other's
    // last one (a lost update would never show up).
    let mut servers = [a, b];
    let deadline = Instant::now() + Duration::from_secs(5);
    for server in &mut servers {
        loop {
            let settings = server.global_settings().await;
            let seen = (
                settings.depth,
                settings.message_length_threshold,
                settings.debounce_ms,
            );
            if seen == (Some(10), Some(10), Some(0)) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "a replica's global change overwrote the other's: {seen:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let [a, b] = servers;
    a.stop().await;
    b.stop().await;
}

/// Profiles are claimed and told like the global settings: changes made at
/// once on two replicas are all kept, a replica hears the other's, and a
/// chat held by one resolves through a profile the other made.
#[tokio::test]
async fn profile_changes_made_at_once_on_two_replicas_are_all_kept_and_seen() {
    let (_dir, a, mut b) = two_replicas(0).await;
    b.publish(
        "c",
        pb::event::Kind::ChatChanged(pb::ChatChanged {
            messages: vec![message("m0", "hello")],
            character_key: "alice.png".into(),
            ..Default::default()
        }),
    )
    .await
    .unwrap();
    let put = |mut server: Server, prefix: &'static str| async move {
        for i in 1..=5 {
            server
                .settings
                .put_profile(pb::PutProfileRequest {
                    name: format!("{prefix}{i}"),
                    settings: Some(pb::Settings {
                        depth: Some(i),
                        ..Default::default()
                    }),
                })
                .await
                .unwrap();
        }
        server
    };
    let (mut a, b) = tokio::join!(put(a, "a"), put(b, "b"));
    a.settings
        .bind_profile(pb::BindProfileRequest {
            target: Some(pb::bind_profile_request::Target::CharacterKey(
                "alice.png".into(),
            )),
            profile: "a4".into(),
        })
        .await
        .unwrap();
    let mut servers = [a, b];
    let deadline = Instant::now() + Duration::from_secs(5);
    for server in &mut servers {
        loop {
            let listed = server
                .settings
                .list_profiles(pb::ListProfilesRequest {})
                .await
                .unwrap()
                .into_inner();
            let chat = server
                .settings
                .get_settings(pb::GetSettingsRequest {
                    chat_id: "c".into(),
                })
                .await
                .unwrap()
                .into_inner();
            if listed.profiles.len() == 10 && chat.depth == Some(4) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "a replica lost or never heard a profile change: {} profiles, depth {:?}",
                listed.profiles.len(),
                chat.depth
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let [a, b] = servers;
    a.stop().await;
    b.stop().await;
}
