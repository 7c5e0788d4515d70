//! Enable and debounce rules over the API: the global and per-chat
//! enabled toggle, disabled chats, immediate refreshes and per-chat debounce.

use std::time::Duration;

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;

#[tokio::test]
async fn enabled_is_the_global_toggle_or_the_chats_own_value_or_the_default() {
    let (_dir, mut s) = start().await;
    for chat in ["own", "none"] {
        s.publish(chat, chat_changed(vec![message("m", "x")]))
            .await
            .unwrap();
        add_recap(&mut s, chat, "the recap").await;
    }
    let enabled_of = |i: &pb::Injection| (i.enabled, !i.text.is_empty());

    // Default: enabled, with text.
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));
    // The chat's own value.
    let answer = set_enabled(&mut s, "own", false).await;
    assert!(!answer.enabled);
    let injection = s.injection("own").await;
    assert_eq!(answer.revision, injection.revision);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::SettingsChanged);
    assert_eq!(enabled_of(&injection), (false, false));
    assert_eq!(injection.text, "");

    // default_chat_enabled decides for a chat without its own value.
    update(
        &mut s,
        "",
        pb::Settings {
            default_chat_enabled: Some(false),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(enabled_of(&s.injection("none").await), (false, false));
    assert_eq!(enabled_of(&s.injection("own").await), (false, false));
    assert!(set_enabled(&mut s, "own", true).await.enabled);
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));

    // use_global_toggle_state: global_toggle_state wins over everything.
    update(
        &mut s,
        "",
        pb::Settings {
            use_global_toggle_state: Some(true),
            global_toggle_state: Some(false),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(enabled_of(&s.injection("own").await), (false, false));
    assert_eq!(enabled_of(&s.injection("none").await), (false, false));
    // SetChatEnabled then flips the global toggle, for every chat, and
    // leaves the chat's own value (true) as it was.
    let none_before = s.injection("none").await.revision;
    let answer = set_enabled(&mut s, "none", true).await;
    assert!(answer.enabled);
    assert_eq!(answer.revision, s.injection("none").await.revision);
    assert_eq!(s.global_settings().await.global_toggle_state, Some(true));
    assert_eq!(enabled_of(&s.injection("none").await), (true, true));
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));
    assert!(s.injection("none").await.revision > none_before);
    let answer = set_enabled(&mut s, "own", false).await;
    assert!(!answer.enabled);
    assert_eq!(s.global_settings().await.global_toggle_state, Some(false));
    assert_eq!(enabled_of(&s.injection("none").await), (false, false));
    update(
        &mut s,
        "",
        pb::Settings {
            global_toggle_state: Some(true),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(enabled_of(&s.injection("none").await), (true, true));
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));

    // Off again: the chat's own value (true, untouched by the global
    // toggle) counts once more; "none" falls back to default_chat_enabled.
    update(
        &mut s,
        "",
        pb::Settings {
            use_global_toggle_state: Some(false),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));
    assert_eq!(enabled_of(&s.injection("none").await), (false, false));
    s.stop().await;
}

#[tokio::test]
async fn a_disabled_chat_changes_state_but_only_immediate_triggers_refresh_it() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m1", "x")]))
        .await
        .unwrap();
    add_recap(&mut s, "c", "the recap").await;
    let off = set_enabled(&mut s, "c", false).await;
    let revision = off.revision;
    let injection = s.injection("c").await;
    assert_eq!(
        (
            injection.revision,
            injection.enabled,
            injection.text.as_str()
        ),
        (revision, false, "")
    );
    assert_eq!(injection.token_count, 0);

    // Debounced triggers (debounce_ms is 0): state changes, no refresh.
    assert_eq!(
        s.publish("c", message_sent("m2", "hello")).await.unwrap(),
        revision
    );
    assert_eq!(
        s.publish("c", message_received("m3", "hi")).await.unwrap(),
        revision
    );
    assert_eq!(
        s.publish("c", edited("m2", "hello again")).await.unwrap(),
        revision
    );
    assert_eq!(
        s.publish("c", swiped("m3", 1, "hi there")).await.unwrap(),
        revision
    );
    set_data(
        &mut s,
        "c",
        "m2",
        pb::MessageData {
            scene_break: Some(true),
            ..Default::default()
        },
    )
    .await;
    set_data(
        &mut s,
        "c",
        "m3",
        pb::MessageData {
            scene_break: Some(true),
            ..Default::default()
        },
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.injection("c").await.revision, revision);
    assert_eq!(order(&mut s, "c").await, ["m1", "m2", "m3"]);
    assert_eq!(
        inclusion(&mut s, "c").await[1].token_count,
        o200k("hello again")
    );

    // Immediate triggers do refresh it: still empty and disabled, auto-hide current.
    let r = s.publish("c", refresh_requested()).await.unwrap();
    assert_eq!(r, revision + 1);
    let injection = s.injection("c").await;
    assert_eq!(
        (
            injection.revision,
            injection.enabled,
            injection.text.as_str()
        ),
        (r, false, "")
    );
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RefreshRequested);
    assert_eq!(injection.auto_hidden_count, 2);
    assert_eq!(
        s.publish("c", message_deleted("m1")).await.unwrap(),
        revision + 2
    );
    add_recap(&mut s, "c", "a newer recap").await;
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, revision + 3);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RunningRecapChanged);
    assert_eq!(injection.text, "");

    // Enabled again: the current recap shows.
    let on = set_enabled(&mut s, "c", true).await;
    assert!(on.enabled);
    assert_eq!(on.revision, revision + 4);
    assert!(s.injection("c").await.text.contains("a newer recap"));
    s.stop().await;
}

#[tokio::test]
async fn an_immediate_refresh_covers_pending_debounced_events() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    s.set_global_debounce(400).await;
    assert_eq!(
        s.publish("c", chat_changed(vec![message("m1", "x")]))
            .await
            .unwrap(),
        1
    );
    assert_eq!(s.publish("c", message_sent("m2", "y")).await.unwrap(), 1);
    assert_eq!(s.publish("c", refresh_requested()).await.unwrap(), 2);
    tokio::time::sleep(Duration::from_millis(900)).await;
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, 2, "the debounced refresh was covered");
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RefreshRequested);
    // A debounced event alone refreshes once, after the quiet period.
    assert_eq!(
        s.publish("c", message_received("m3", "z")).await.unwrap(),
        2
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while s.injection("c").await.revision == 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Give a second (wrong) refresh the time to show up.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, 3);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::MessageReceived);
    s.stop().await;
}

#[tokio::test]
async fn a_chats_own_debounce_ms_overrides_the_global_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    s.set_global_debounce(60_000).await;
    s.publish("slow", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    s.publish("fast", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    update(
        &mut s,
        "fast",
        pb::Settings {
            debounce_ms: Some(0),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let fast = s.injection("fast").await.revision;
    assert_eq!(
        s.publish("fast", message_sent("u", "hi")).await.unwrap(),
        fast + 1
    );
    assert_eq!(
        trigger(&s.injection("fast").await),
        pb::RefreshTrigger::MessageSent
    );
    let slow = s.injection("slow").await.revision;
    assert_eq!(
        s.publish("slow", message_sent("u", "hi")).await.unwrap(),
        slow
    );
    assert_eq!(s.injection("slow").await.revision, slow);
    s.stop().await;
}

#[tokio::test]
async fn a_disabled_chat_never_refreshed_is_placed_like_every_disabled_injection() {
    let (_dir, mut s) = start().await;
    s.set_global_debounce(60_000).await;
    update(
        &mut s,
        "",
        pb::Settings {
            position: Some(pb::InjectionPosition::InChat as i32),
            depth: Some(3),
            role: Some(pb::InjectionRole::User as i32),
            scan: Some(true),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let place = |i: &pb::Injection| (i.revision, i.enabled, i.position, i.depth, i.role, i.scan);
    // Known through debounced events only: never refreshed (revision 0).
    for (chat, enabled) in [("on", true), ("off", false)] {
        set_enabled(&mut s, chat, enabled).await;
        s.publish(chat, message_sent("m", "hello")).await.unwrap();
    }
    assert_eq!(
        place(&s.injection("on").await),
        (
            0,
            true,
            pb::InjectionPosition::InChat as i32,
            3,
            pb::InjectionRole::User as i32,
            true
        )
    );
    let disabled = (
        0,
        false,
        pb::InjectionPosition::InPrompt as i32,
        0,
        pb::InjectionRole::System as i32,
        false,
    );
    assert_eq!(place(&s.injection("off").await), disabled);
    // A refresh of the disabled chat places it the same way.
    let refreshed = refresh(&mut s, "off").await.unwrap();
    let (_, enabled, position, depth, role, scan) = disabled;
    assert_eq!(place(&refreshed), (1, enabled, position, depth, role, scan));
    s.stop().await;
}
