mod common;

// The API contract of issue 3, behaviour by behaviour, over a real socket:
// what a client written only from the issue text sees.

use std::collections::HashMap;
use std::time::Duration;

use common::*;
use prost::Message as _;
use recapd::grpc::pb;
use tonic::Code;

const KEY: &str = "auto_recap_scene";

// ------------------------------------------------------------------ helpers

/// Tokens of `text` with o200k_base, the default vocabulary.
fn o200k(text: &str) -> u32 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as u32
}

/// Tokens of `text` with cl100k_base.
fn cl100k(text: &str) -> u32 {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len() as u32
}

/// Tokens of `text` with the vocabulary `tokenizer` names.
fn tokens_with(tokenizer: pb::Tokenizer, text: &str) -> u32 {
    let bpe = match tokenizer {
        pb::Tokenizer::O200kBase | pb::Tokenizer::Unspecified => {
            tiktoken_rs::o200k_base_singleton()
        }
        pb::Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        pb::Tokenizer::P50kBase => tiktoken_rs::p50k_base_singleton(),
        pb::Tokenizer::R50kBase => tiktoken_rs::r50k_base_singleton(),
    };
    bpe.encode_ordinary(text).len() as u32
}

/// A server on a fresh data directory where every trigger refreshes at once.
async fn start() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

/// A message with one swipe, changed by `edit`.
fn msg_with(id: &str, text: &str, edit: impl FnOnce(&mut pb::Message)) -> pb::Message {
    let mut m = message(id, text);
    edit(&mut m);
    m
}

fn swiped(id: &str, swipe_id: u32, text: &str) -> pb::event::Kind {
    pb::event::Kind::MessageSwiped(pb::MessageSwiped {
        message_id: id.into(),
        swipe_id,
        text: text.into(),
    })
}

fn edited(id: &str, text: &str) -> pb::event::Kind {
    pb::event::Kind::MessageEdited(pb::MessageEdited {
        message_id: id.into(),
        text: text.into(),
    })
}

fn more_loaded(messages: Vec<pb::Message>) -> pb::event::Kind {
    pb::event::Kind::MoreMessagesLoaded(pb::MoreMessagesLoaded { messages })
}

async fn try_inclusion(
    server: &mut Server,
    chat: &str,
) -> Result<Vec<pb::MessageInclusion>, tonic::Status> {
    server
        .injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: chat.into(),
        })
        .await
        .map(|r| r.into_inner().messages)
}

async fn inclusion(server: &mut Server, chat: &str) -> Vec<pb::MessageInclusion> {
    try_inclusion(server, chat).await.expect("get inclusion")
}

/// The chat's message ids in chat order.
async fn order(server: &mut Server, chat: &str) -> Vec<String> {
    inclusion(server, chat)
        .await
        .into_iter()
        .map(|l| l.message_id)
        .collect()
}

/// Each message's `excluded_reason`, or "included".
async fn reasons(server: &mut Server, chat: &str) -> Vec<(String, String)> {
    inclusion(server, chat)
        .await
        .into_iter()
        .map(|l| {
            assert_eq!(
                l.included,
                l.excluded_reason.is_empty(),
                "included and excluded_reason disagree for {}: {l:?}",
                l.message_id
            );
            let reason = if l.included {
                "included".to_owned()
            } else {
                l.excluded_reason
            };
            (l.message_id, reason)
        })
        .collect()
}

fn expect_reasons(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(id, r)| ((*id).to_owned(), (*r).to_owned()))
        .collect()
}

async fn try_set_data(
    server: &mut Server,
    chat: &str,
    id: &str,
    data: pb::MessageData,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .set_message_data(pb::SetMessageDataRequest {
            chat_id: chat.into(),
            message_id: id.into(),
            data: Some(data),
        })
        .await
        .map(|r| r.into_inner())
}

async fn set_data(
    server: &mut Server,
    chat: &str,
    id: &str,
    data: pb::MessageData,
) -> pb::MessageData {
    try_set_data(server, chat, id, data)
        .await
        .expect("set message data")
}

async fn set_memory(server: &mut Server, chat: &str, id: &str, memory: &str) {
    let data = pb::MessageData {
        memory: Some(memory.into()),
        ..Default::default()
    };
    set_data(server, chat, id, data).await;
}

async fn try_data(
    server: &mut Server,
    chat: &str,
    id: &str,
) -> Result<pb::MessageData, tonic::Status> {
    server
        .memory
        .get_message_data(pb::GetMessageDataRequest {
            chat_id: chat.into(),
            message_id: id.into(),
        })
        .await
        .map(|r| r.into_inner())
}

async fn data(server: &mut Server, chat: &str, id: &str) -> pb::MessageData {
    try_data(server, chat, id).await.expect("get message data")
}

/// UpdateSettings for `chat` ("" = global): `clear` first, then `settings`.
async fn update(
    server: &mut Server,
    chat: &str,
    settings: pb::Settings,
    clear: &[&str],
) -> Result<pb::Settings, tonic::Status> {
    server
        .settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat.into(),
            settings: Some(settings),
            clear: clear.iter().map(|c| (*c).to_owned()).collect(),
        })
        .await
        .map(|r| r.into_inner())
}

async fn settings_of(server: &mut Server, chat: &str) -> pb::Settings {
    server
        .settings
        .get_settings(pb::GetSettingsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("get settings")
        .into_inner()
}

async fn set_enabled(server: &mut Server, chat: &str, enabled: bool) -> pb::SetChatEnabledResponse {
    server
        .settings
        .set_chat_enabled(pb::SetChatEnabledRequest {
            chat_id: chat.into(),
            enabled,
        })
        .await
        .expect("set chat enabled")
        .into_inner()
}

async fn refresh(server: &mut Server, chat: &str) -> Result<pb::Injection, tonic::Status> {
    server
        .injections
        .refresh(pb::RefreshRequest {
            chat_id: chat.into(),
        })
        .await
        .map(|r| r.into_inner())
}

async fn recaps(server: &mut Server, chat: &str) -> pb::ListRunningRecapsResponse {
    server
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("list running recaps")
        .into_inner()
}

fn version_numbers(list: &pb::ListRunningRecapsResponse) -> Vec<u32> {
    list.versions.iter().map(|v| v.version).collect()
}

async fn add_scene_recap(
    server: &mut Server,
    chat: &str,
    content: &str,
    prev: &str,
    new: &str,
) -> Result<pb::RunningRecapVersion, tonic::Status> {
    server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: chat.into(),
            content: content.into(),
            scene_count: 0,
            excluded_count: 0,
            prev_scene_message_id: prev.into(),
            new_scene_message_id: new.into(),
        })
        .await
        .map(|r| r.into_inner())
}

async fn select(
    server: &mut Server,
    chat: &str,
    version: u32,
) -> Result<pb::ListRunningRecapsResponse, tonic::Status> {
    server
        .memory
        .select_running_recap(pb::SelectRunningRecapRequest {
            chat_id: chat.into(),
            version,
        })
        .await
        .map(|r| r.into_inner())
}

async fn delete(
    server: &mut Server,
    chat: &str,
    version: u32,
) -> Result<pb::ListRunningRecapsResponse, tonic::Status> {
    server
        .memory
        .delete_running_recap(pb::DeleteRunningRecapRequest {
            chat_id: chat.into(),
            version,
        })
        .await
        .map(|r| r.into_inner())
}

async fn subscribe(
    server: &mut Server,
    chats: &[&str],
    max_updates: u32,
) -> tonic::Streaming<pb::Injection> {
    server
        .injections
        .subscribe(pb::SubscribeRequest {
            chat_ids: chats.iter().map(|c| (*c).to_owned()).collect(),
            max_updates,
        })
        .await
        .expect("subscribe")
        .into_inner()
}

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

fn assert_code<T: std::fmt::Debug>(result: Result<T, tonic::Status>, code: Code, field: &str) {
    let status = result.expect_err("the request should be refused");
    assert_eq!(status.code(), code, "{status:?}");
    assert!(
        status.message().contains(field),
        "the status should name {field:?}: {:?}",
        status.message()
    );
}

// ------------------------------------------------------------------ events

#[tokio::test]
async fn chat_changed_with_a_transcript_merges_messages_by_id() {
    let (_dir, mut s) = start().await;
    let b = msg_with("b", "", |m| {
        m.swipes = vec!["b zero".into(), "b one".into()]
    });
    s.publish(
        "c",
        chat_changed(vec![message("a", "alpha"), b, message("c", "gamma")]),
    )
    .await
    .unwrap();
    assert_eq!(data(&mut s, "c", "b").await, pb::MessageData::default());
    set_memory(&mut s, "c", "b", "recap of b, swipe 0").await;
    s.publish("c", swiped("b", 1, "")).await.unwrap();
    set_memory(&mut s, "c", "b", "recap of b, swipe 1").await;
    set_memory(&mut s, "c", "a", "recap of a").await;
    set_memory(&mut s, "c", "c", "recap of c").await;

    // A new full transcript: c first, b with new texts and flags, a new n; a is gone.
    let b_zero = "B zero, rewritten by the client";
    let b_one = "B one, with quite a few new words in it";
    assert_ne!(o200k(b_zero), o200k(b_one));
    let b = msg_with("b", "", |m| {
        m.swipes = vec![b_zero.into(), b_one.into()];
        m.swipe_id = 1;
        m.is_user = true;
        m.hidden = true;
    });
    let revision = s
        .publish(
            "c",
            chat_changed(vec![
                message("c", "gamma"),
                b,
                message("n", "a new message"),
            ]),
        )
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.revision, revision);
    assert_eq!(
        trigger(&s.injection("c").await),
        pb::RefreshTrigger::ChatChanged
    );

    assert_eq!(order(&mut s, "c").await, ["c", "b", "n"]);
    assert_code(try_data(&mut s, "c", "a").await, Code::NotFound, "a");
    // Known ids keep their data.
    assert_eq!(
        data(&mut s, "c", "c").await.memory.as_deref(),
        Some("recap of c")
    );
    assert_eq!(
        data(&mut s, "c", "b").await.memory.as_deref(),
        Some("recap of b, swipe 1")
    );
    // New ids start without data.
    assert_eq!(data(&mut s, "c", "n").await, pb::MessageData::default());
    // b took the new text (swipes[swipe_id]) and the new flags.
    let lines = inclusion(&mut s, "c").await;
    assert_eq!(lines[1].token_count, o200k(b_one));
    assert!(lines[1].hidden, "b is now hidden by hand");
    assert!(!lines[0].hidden && !lines[2].hidden);
    assert!(lines[1].included);
    update(
        &mut s,
        "c",
        pb::Settings {
            include_user_messages: Some(false),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let reasons_now = reasons(&mut s, "c").await;
    assert_eq!(
        reasons_now[1],
        ("b".to_owned(), "include_user_messages".to_owned())
    );

    // Swipe 0 kept its own data and took its new text.
    s.publish("c", swiped("b", 0, "")).await.unwrap();
    assert_eq!(
        data(&mut s, "c", "b").await.memory.as_deref(),
        Some("recap of b, swipe 0")
    );
    assert_eq!(inclusion(&mut s, "c").await[1].token_count, o200k(b_zero));

    // An empty transcript only opens the chat.
    s.publish("c", chat_changed(vec![])).await.unwrap();
    assert_eq!(order(&mut s, "c").await, ["c", "b", "n"]);
    s.stop().await;
}

#[tokio::test]
async fn message_text_replaces_the_current_swipe_when_both_are_given() {
    let (_dir, mut s) = start().await;
    let m = msg_with("m", "the text wins over the swipe", |m| {
        m.swipes = vec!["zero".into(), "one".into()];
        m.swipe_id = 1;
    });
    s.publish("c", chat_changed(vec![m])).await.unwrap();
    assert_eq!(
        inclusion(&mut s, "c").await[0].token_count,
        o200k("the text wins over the swipe")
    );
    // The other swipe kept its own text.
    s.publish("c", swiped("m", 0, "")).await.unwrap();
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k("zero"));
    s.stop().await;
}

#[tokio::test]
async fn sent_and_received_append_and_more_messages_loaded_prepends_in_order() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m3", "three")]))
        .await
        .unwrap();
    s.publish("c", message_sent("m4", "four")).await.unwrap();
    s.publish("c", message_received("m5", "five"))
        .await
        .unwrap();
    let revision = s
        .publish(
            "c",
            more_loaded(vec![message("m1", "one"), message("m2", "two")]),
        )
        .await
        .unwrap();
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, revision);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::MoreMessagesLoaded);
    assert_eq!(order(&mut s, "c").await, ["m1", "m2", "m3", "m4", "m5"]);
    s.publish("c", more_loaded(vec![message("a", "x"), message("b", "y")]))
        .await
        .unwrap();
    assert_eq!(
        order(&mut s, "c").await,
        ["a", "b", "m1", "m2", "m3", "m4", "m5"]
    );
    s.publish("c", message_sent("m6", "six")).await.unwrap();
    assert_eq!(
        order(&mut s, "c").await.last().map(String::as_str),
        Some("m6")
    );
    s.stop().await;
}

#[tokio::test]
async fn a_message_id_used_twice_is_already_exists_and_changes_nothing() {
    let (_dir, mut s) = start().await;
    s.publish(
        "c",
        chat_changed(vec![message("a", "one"), message("b", "two")]),
    )
    .await
    .unwrap();
    let revision = s.injection("c").await.revision;
    let refused = [
        message_sent("a", "again"),
        message_received("b", "again"),
        more_loaded(vec![message("z", "new"), message("b", "old id")]),
        more_loaded(vec![message("y", "new"), message("y", "twice")]),
        chat_changed(vec![message("q", "x"), message("q", "y")]),
    ];
    for kind in refused {
        let err = s.publish("c", kind).await.unwrap_err();
        assert_eq!(err.code(), Code::AlreadyExists, "{err:?}");
    }
    assert_eq!(order(&mut s, "c").await, ["a", "b"]);
    assert_eq!(s.injection("c").await.revision, revision);
    // The same id in another chat is fine.
    s.publish("other", message_sent("a", "hello"))
        .await
        .unwrap();
    s.stop().await;
}

#[tokio::test]
async fn message_edited_changes_the_current_swipes_text_only() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "short")]))
        .await
        .unwrap();
    set_memory(&mut s, "c", "m", "kept").await;
    let long = "a much longer text than before, after an edit";
    s.publish("c", edited("m", long)).await.unwrap();
    assert_eq!(
        trigger(&s.injection("c").await),
        pb::RefreshTrigger::MessageEdited
    );
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(long));
    assert_eq!(data(&mut s, "c", "m").await.memory.as_deref(), Some("kept"));
    s.stop().await;
}

#[tokio::test]
async fn message_swiped_makes_new_swipes_and_switches_back_to_old_ones() {
    let (_dir, mut s) = start().await;
    let first = "first answer";
    let second = "second answer, longer than the first one was";
    s.publish("c", chat_changed(vec![message("m", first)]))
        .await
        .unwrap();
    let first_data = pb::MessageData {
        memory: Some("first recap".into()),
        scene_break: Some(true),
        ..Default::default()
    };
    set_data(&mut s, "c", "m", first_data.clone()).await;

    // swipe_id == number of swipes (1): a new swipe with empty data.
    let revision = s.publish("c", swiped("m", 1, second)).await.unwrap();
    let injection = s.injection("c").await;
    assert_eq!(
        (injection.revision, trigger(&injection)),
        (revision, pb::RefreshTrigger::MessageSwiped)
    );
    assert_eq!(data(&mut s, "c", "m").await, pb::MessageData::default());
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(second));
    set_memory(&mut s, "c", "m", "second recap").await;

    // An existing swipe_id switches text and data back.
    s.publish("c", swiped("m", 0, "")).await.unwrap();
    assert_eq!(data(&mut s, "c", "m").await, first_data);
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(first));
    s.publish("c", swiped("m", 1, "")).await.unwrap();
    assert_eq!(
        data(&mut s, "c", "m").await.memory.as_deref(),
        Some("second recap")
    );
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(second));

    // Beyond the number of swipes (2): refused, nothing changes.
    let before = s.injection("c").await.revision;
    assert_code(
        s.publish("c", swiped("m", 3, "x")).await,
        Code::InvalidArgument,
        "swipe_id",
    );
    assert_eq!(s.injection("c").await.revision, before);
    assert_eq!(
        data(&mut s, "c", "m").await.memory.as_deref(),
        Some("second recap")
    );

    // swipe_id 2 == number of swipes: a third swipe, again empty.
    s.publish("c", swiped("m", 2, "third")).await.unwrap();
    assert_eq!(data(&mut s, "c", "m").await, pb::MessageData::default());
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k("third"));
    s.stop().await;
}

#[tokio::test]
async fn scene_breaks_belong_to_a_swipe_and_prepended_messages_join_the_hidden_prefix() {
    let (_dir, mut s) = start().await;
    let messages = ["b0", "x", "b1", "y"]
        .iter()
        .map(|id| message(id, "t"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let brk = pb::MessageData {
        scene_break: Some(true),
        ..Default::default()
    };
    set_data(&mut s, "c", "b0", brk.clone()).await;
    set_data(&mut s, "c", "b1", brk).await;
    // Breaks b0 and b1; N = 2 hides through b0.
    assert_eq!(refresh(&mut s, "c").await.unwrap().auto_hidden_count, 1);
    // Older messages go in front, so inside the hidden prefix.
    s.publish(
        "c",
        more_loaded(vec![message("o1", "t"), message("o2", "t")]),
    )
    .await
    .unwrap();
    assert_eq!(s.injection("c").await.auto_hidden_count, 3);
    let hidden: Vec<bool> = inclusion(&mut s, "c")
        .await
        .iter()
        .map(|l| l.hidden)
        .collect();
    assert_eq!(hidden, [true, true, true, false, false, false]);
    // A new swipe of b1 has no break: fewer than N breaks, nothing hidden.
    s.publish("c", swiped("b1", 1, "another take"))
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.auto_hidden_count, 0);
    assert!(inclusion(&mut s, "c").await.iter().all(|l| !l.hidden));
    // Back on swipe 0, its break counts again.
    s.publish("c", swiped("b1", 0, "")).await.unwrap();
    assert_eq!(s.injection("c").await.auto_hidden_count, 3);
    s.stop().await;
}

#[tokio::test]
async fn unknown_chats_messages_and_malformed_events_are_refused_without_change() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let revision = s.injection("c").await.revision;
    // Unknown message in a known chat.
    for kind in [
        edited("zz", "t"),
        message_deleted("zz"),
        swiped("zz", 0, ""),
    ] {
        assert_code(s.publish("c", kind).await, Code::NotFound, "zz");
    }
    assert_code(try_data(&mut s, "c", "zz").await, Code::NotFound, "zz");
    assert_code(
        try_set_data(&mut s, "c", "zz", pb::MessageData::default()).await,
        Code::NotFound,
        "zz",
    );
    // Unknown chat.
    assert_code(
        try_data(&mut s, "nochat", "m").await,
        Code::NotFound,
        "nochat",
    );
    assert_code(
        try_inclusion(&mut s, "nochat").await,
        Code::NotFound,
        "nochat",
    );
    assert_code(refresh(&mut s, "nochat").await, Code::NotFound, "nochat");
    assert_code(
        s.publish("nochat", edited("m", "t")).await,
        Code::NotFound,
        "nochat",
    );
    let err = s
        .memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: "nochat".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    // Malformed.
    let no_kind = s
        .events
        .publish(pb::PublishRequest {
            event: Some(pb::Event {
                chat_id: "c".into(),
                kind: None,
            }),
        })
        .await;
    assert_code(no_kind, Code::InvalidArgument, "kind");
    assert_code(
        s.publish("a\nb", refresh_requested()).await,
        Code::InvalidArgument,
        "chat_id",
    );
    assert_code(
        s.publish(&"x".repeat(257), refresh_requested()).await,
        Code::InvalidArgument,
        "chat_id",
    );
    assert!(
        s.publish(&"x".repeat(256), refresh_requested())
            .await
            .is_ok()
    );
    assert_eq!(s.injection("c").await.revision, revision);
    assert_eq!(order(&mut s, "c").await, ["m"]);
    s.stop().await;
}

// ------------------------------------------------------------------ message data

fn full_data() -> pb::MessageData {
    pb::MessageData {
        memory: Some("Alice met Bob.".into()),
        prefill: Some("In this scene: ".into()),
        exclude: Some(true),
        error: Some("rate limited".into()),
        reasoning: Some("thinking".into()),
        edited: Some(true),
        scene_break: Some(true),
        scene_break_visible: Some(false),
        scene_break_name: Some("Chapter 1".into()),
        scene_recap_memory: Some("scene recap".into()),
        is_auto_recap_system_memory: Some(false),
    }
}

#[tokio::test]
async fn set_message_data_changes_only_the_present_fields() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let full = full_data();
    assert_eq!(set_data(&mut s, "c", "m", full.clone()).await, full);
    assert_eq!(data(&mut s, "c", "m").await, full);

    let answer = set_data(
        &mut s,
        "c",
        "m",
        pb::MessageData {
            memory: Some("Alice left.".into()),
            exclude: Some(false),
            ..Default::default()
        },
    )
    .await;
    let expected = pb::MessageData {
        memory: Some("Alice left.".into()),
        exclude: Some(false),
        ..full.clone()
    };
    assert_eq!(answer, expected);
    assert_eq!(data(&mut s, "c", "m").await, expected);

    // Nothing present: nothing changes.
    assert_eq!(
        set_data(&mut s, "c", "m", pb::MessageData::default()).await,
        expected
    );
    // An empty string is a value, not an unset.
    let answer = set_data(
        &mut s,
        "c",
        "m",
        pb::MessageData {
            error: Some(String::new()),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(answer.error.as_deref(), Some(""));
    assert_eq!(answer.memory.as_deref(), Some("Alice left."));
    s.stop().await;
}

#[tokio::test]
async fn clear_memory_unsets_memory_error_reasoning_prefill_and_resets_edited_and_exclude() {
    let (_dir, mut s) = start().await;
    s.publish(
        "c",
        chat_changed(vec![message("m", "x"), message("bare", "y")]),
    )
    .await
    .unwrap();
    set_data(&mut s, "c", "m", full_data()).await;
    let expected = pb::MessageData {
        memory: None,
        prefill: None,
        error: None,
        reasoning: None,
        edited: Some(false),
        exclude: Some(false),
        ..full_data()
    };
    let answer = s
        .memory
        .clear_memory(pb::ClearMemoryRequest {
            chat_id: "c".into(),
            message_id: "m".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer, expected);
    assert_eq!(data(&mut s, "c", "m").await, expected);

    let answer = s
        .memory
        .clear_memory(pb::ClearMemoryRequest {
            chat_id: "c".into(),
            message_id: "bare".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        answer,
        pb::MessageData {
            edited: Some(false),
            exclude: Some(false),
            ..Default::default()
        }
    );
    assert_eq!(
        trigger(&s.injection("c").await),
        pb::RefreshTrigger::MessageDataChanged
    );
    s.stop().await;
}

// ------------------------------------------------------------------ inclusion

#[tokio::test]
async fn each_exclusion_rule_reports_its_reason_and_the_first_rule_wins() {
    let (_dir, mut s) = start().await;
    let long = "one two three four five six";
    let threshold = o200k(long);
    assert!(o200k("one two") < threshold);
    let messages = vec![
        message("system_memory", long),
        msg_with("excluded", long, |m| m.is_user = true),
        msg_with("user", long, |m| m.is_user = true),
        msg_with("thoughts", long, |m| {
            m.is_thoughts = true;
            m.hidden = true;
        }),
        msg_with("hidden", long, |m| {
            m.hidden = true;
            m.is_narrator = true;
        }),
        msg_with("narrator", long, |m| {
            m.is_narrator = true;
            m.character_key = "bob.png".into();
        }),
        msg_with("bob", "one two", |m| m.character_key = "bob.png".into()),
        message("short", "one two"),
        message("no_memory", long),
        msg_with("kept", long, |m| m.character_key = "alice.png".into()),
    ];
    s.publish("c", chat_changed(messages)).await.unwrap();
    for id in [
        "system_memory",
        "excluded",
        "user",
        "thoughts",
        "hidden",
        "narrator",
        "bob",
        "short",
        "kept",
    ] {
        set_memory(&mut s, "c", id, &format!("memory of {id}")).await;
    }
    set_data(
        &mut s,
        "c",
        "system_memory",
        pb::MessageData {
            is_auto_recap_system_memory: Some(true),
            exclude: Some(true),
            ..Default::default()
        },
    )
    .await;
    set_data(
        &mut s,
        "c",
        "excluded",
        pb::MessageData {
            exclude: Some(true),
            ..Default::default()
        },
    )
    .await;
    let strict = pb::Settings {
        include_user_messages: Some(false),
        include_system_messages: Some(false),
        include_narrator_messages: Some(false),
        disabled_character_keys: Some(pb::CharacterKeys {
            keys: vec!["bob.png".into()],
        }),
        message_length_threshold: Some(i64::from(threshold)),
        ..Default::default()
    };
    update(&mut s, "c", strict, &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("system_memory", "is_auto_recap_system_memory"),
            ("excluded", "exclude"),
            ("user", "include_user_messages"),
            ("thoughts", "is_thoughts"),
            ("hidden", "include_system_messages"),
            ("narrator", "include_narrator_messages"),
            ("bob", "disabled_character_keys"),
            ("short", "message_length_threshold"),
            ("no_memory", "no_memory"),
            ("kept", "included"),
        ])
    );
    let lines = inclusion(&mut s, "c").await;
    let hidden: Vec<bool> = lines.iter().map(|l| l.hidden).collect();
    assert_eq!(
        hidden,
        [
            false, false, false, true, true, false, false, false, false, false
        ]
    );
    for line in &lines {
        let expected = if matches!(line.message_id.as_str(), "bob" | "short") {
            o200k("one two")
        } else {
            threshold
        };
        assert_eq!(line.token_count, expected, "{}", line.message_id);
    }

    // Back to the defaults: only the rules that do not depend on a setting remain.
    update(
        &mut s,
        "c",
        pb::Settings::default(),
        &[
            "include_user_messages",
            "include_system_messages",
            "include_narrator_messages",
            "disabled_character_keys",
            "message_length_threshold",
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("system_memory", "is_auto_recap_system_memory"),
            ("excluded", "exclude"),
            ("user", "included"),
            ("thoughts", "is_thoughts"),
            ("hidden", "included"),
            ("narrator", "included"),
            ("bob", "included"),
            ("short", "included"),
            ("no_memory", "no_memory"),
            ("kept", "included"),
        ])
    );
    // GetInclusion does not refresh.
    let revision = s.injection("c").await.revision;
    inclusion(&mut s, "c").await;
    assert_eq!(s.injection("c").await.revision, revision);
    s.stop().await;
}

#[tokio::test]
async fn the_absolute_token_budget_stops_at_the_first_memory_that_would_exceed_it() {
    let (_dir, mut s) = start().await;
    let messages = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|id| message(id, "text"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let (a, b, d, e) = (
        "Ann.",
        "Bob walked all the way to the old mill by the river.",
        "Dora found a map.",
        "Eve lit the lamp.",
    );
    for (id, memory) in [("a", a), ("b", b), ("d", d), ("e", e)] {
        set_memory(&mut s, "c", id, memory).await;
    }
    let limit = |n: u32| pb::Settings {
        message_recap_context_limit: Some(i64::from(n)),
        ..Default::default()
    };
    // Enough for e, d and a (newest first, joined by \n), not for b: a is
    // left out too, because b came first.
    let with_a = o200k(&format!("{e}\n{d}\n{a}"));
    let with_b = o200k(&format!("{e}\n{d}\n{b}"));
    assert!(with_b > with_a);
    update(&mut s, "c", limit(with_a), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    // Exactly the joined count of e, d, b: b fits; a no longer does.
    update(&mut s, "c", limit(with_b), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "included"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    update(
        &mut s,
        "c",
        limit(o200k(&format!("{e}\n{d}\n{b}\n{a}"))),
        &[],
    )
    .await
    .unwrap();
    assert!(
        inclusion(&mut s, "c")
            .await
            .iter()
            .filter(|l| l.message_id != "c")
            .all(|l| l.included)
    );
    // Not even the newest fits: nothing is included.
    update(&mut s, "c", limit(o200k(e) - 1), &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "no_memory"),
            ("d", "token_limit"),
            ("e", "token_limit"),
        ])
    );
    // ABSOLUTE is what an unset type means; setting it explicitly is the same.
    update(
        &mut s,
        "c",
        pb::Settings {
            message_recap_context_type: Some(pb::RecapContextType::Absolute as i32),
            ..limit(with_a)
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(reasons(&mut s, "c").await[3].1, "included");
    assert_eq!(reasons(&mut s, "c").await[1].1, "token_limit");
    // No limit: every memory is included.
    update(
        &mut s,
        "c",
        pb::Settings::default(),
        &["message_recap_context_limit"],
    )
    .await
    .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "included"),
            ("b", "included"),
            ("c", "no_memory"),
            ("d", "included"),
            ("e", "included"),
        ])
    );
    s.stop().await;
}

#[tokio::test]
async fn the_budget_counts_the_joined_memories_exactly_with_every_tokenizer() {
    let (_dir, mut s) = start().await;
    // Memories whose ends interact with the "\n" that joins them.
    let memories = [
        "ends with spaces   ",
        "  starts with spaces",
        "line one\nline two\n",
        "\n\nleading newlines",
        "it's John's 'quoted' thing",
        "numbers 1234567 and 3.14159",
        "日本語の文章です。",
        "emoji 😀🎉 mixed",
        "CamelCaseWordsTogether",
        "tabs\tand\tmore ",
        "ÀÉÎÕÜ accents",
        "a",
        "trailing newline\n",
        " ",
        "終わり。",
        "次の場面",
        "Ⓐⓑ circled",
        "नमस्ते दुनिया",
        "path/to/",
        "3.",
        "42 is the answer",
        "Ünïcödé",
        "x'll",
        "'s start",
        "the end of the story",
    ];
    let messages = (0..memories.len())
        .map(|i| message(&format!("m{i:02}"), memories[i]))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    for (i, memory) in memories.iter().enumerate() {
        set_memory(&mut s, "c", &format!("m{i:02}"), memory).await;
    }
    for tokenizer in [
        pb::Tokenizer::O200kBase,
        pb::Tokenizer::Cl100kBase,
        pb::Tokenizer::P50kBase,
        pb::Tokenizer::R50kBase,
    ] {
        // Every message's token_count is its text's count.
        update(
            &mut s,
            "c",
            pb::Settings {
                tokenizer: Some(tokenizer as i32),
                ..Default::default()
            },
            &["message_recap_context_limit"],
        )
        .await
        .unwrap();
        let counts: Vec<u32> = inclusion(&mut s, "c")
            .await
            .iter()
            .map(|l| l.token_count)
            .collect();
        let expected: Vec<u32> = memories.iter().map(|m| tokens_with(tokenizer, m)).collect();
        assert_eq!(counts, expected, "{tokenizer:?}");
        // For each k, a limit of exactly the newest k memories joined.
        let newest_first: Vec<&str> = memories.iter().rev().copied().collect();
        for k in 1..=newest_first.len() {
            let limit = tokens_with(tokenizer, &newest_first[..k].join("\n"));
            update(
                &mut s,
                "c",
                pb::Settings {
                    message_recap_context_limit: Some(i64::from(limit)),
                    ..Default::default()
                },
                &[],
            )
            .await
            .unwrap();
            // The rule, written out: newest first, stop at the first that exceeds.
            let mut included = vec![false; memories.len()];
            let mut joined: Vec<&str> = Vec::new();
            for (back, memory) in newest_first.iter().enumerate() {
                joined.push(memory);
                if tokens_with(tokenizer, &joined.join("\n")) > limit {
                    break;
                }
                included[memories.len() - 1 - back] = true;
            }
            let got: Vec<bool> = inclusion(&mut s, "c")
                .await
                .iter()
                .map(|l| l.included)
                .collect();
            assert_eq!(got, included, "{tokenizer:?}, limit {limit} (newest {k})");
        }
    }
    s.stop().await;
}

#[tokio::test]
async fn a_percent_budget_is_the_floored_share_of_max_context_tokens() {
    let (_dir, mut s) = start().await;
    let messages = ["a", "b", "c"]
        .iter()
        .map(|id| message(id, "text"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let (a, b, c) = ("Ann slept.", "Bob cooked dinner.", "Cid sang a song.");
    for (id, memory) in [("a", a), ("b", b), ("c", c)] {
        set_memory(&mut s, "c", id, memory).await;
    }
    let two = o200k(&format!("{c}\n{b}"));
    let percent = |limit: i64, context: u32| pb::Settings {
        message_recap_context_limit: Some(limit),
        message_recap_context_type: Some(pb::RecapContextType::Percent as i32),
        max_context_tokens: Some(i64::from(context)),
        ..Default::default()
    };
    // floor((2 * two + 1) * 50 / 100) = two: c and b fit.
    update(&mut s, "c", percent(50, 2 * two + 1), &[])
        .await
        .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[("a", "token_limit"), ("b", "included"), ("c", "included")])
    );
    // floor((100 * two - 1) * 1 / 100) = two - 1: only c fits.
    update(&mut s, "c", percent(1, 100 * two - 1), &[])
        .await
        .unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[
            ("a", "token_limit"),
            ("b", "token_limit"),
            ("c", "included")
        ])
    );
    // floor((100 * two + 99) / 100) = two again.
    update(&mut s, "c", percent(1, 100 * two + 99), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[1].1, "included");
    s.stop().await;
}

#[tokio::test]
async fn show_prefill_puts_the_prefill_in_front_of_the_memory_it_counts() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("p", "text")]))
        .await
        .unwrap();
    let (prefill, memory) = ("In this scene, with many extra words: ", "Pat ran home.");
    set_data(
        &mut s,
        "c",
        "p",
        pb::MessageData {
            memory: Some(memory.into()),
            prefill: Some(prefill.into()),
            ..Default::default()
        },
    )
    .await;
    let limit = |n: u32, show: Option<bool>| pb::Settings {
        message_recap_context_limit: Some(i64::from(n)),
        show_prefill: show,
        ..Default::default()
    };
    // Off (the default): only the memory counts.
    update(&mut s, "c", limit(o200k(memory), None), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "included");
    // On: prefill + memory no longer fits ...
    update(&mut s, "c", limit(o200k(memory), Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "token_limit");
    // ... but fits exactly in its own count.
    let both = o200k(&format!("{prefill}{memory}"));
    update(&mut s, "c", limit(both, Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "included");
    update(&mut s, "c", limit(both - 1, Some(true)), &[])
        .await
        .unwrap();
    assert_eq!(reasons(&mut s, "c").await[0].1, "token_limit");
    s.stop().await;
}

#[tokio::test]
async fn token_counts_follow_the_chats_tokenizer() {
    let (_dir, mut s) = start().await;
    let text = "naïve café — 日本語のテキストを数える";
    assert_ne!(
        o200k(text),
        cl100k(text),
        "the text should tell the vocabularies apart"
    );
    s.publish("c", chat_changed(vec![message("m", text)]))
        .await
        .unwrap();
    let content = "Die Geschichte: 日本語の物語 und mehr.";
    add_recap(&mut s, "c", content).await;
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, o200k(text));
    let injection = s.injection("c").await;
    assert_eq!(injection.token_count, o200k(&injection.text));
    update(
        &mut s,
        "c",
        pb::Settings {
            tokenizer: Some(pb::Tokenizer::Cl100kBase as i32),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(inclusion(&mut s, "c").await[0].token_count, cl100k(text));
    let injection = s.injection("c").await;
    assert_eq!(injection.token_count, cl100k(&injection.text));
    s.stop().await;
}

#[tokio::test]
async fn auto_hide_hides_through_the_nth_visible_scene_break_from_the_end() {
    let (_dir, mut s) = start().await;
    let messages = (0..8)
        .map(|i| msg_with(&format!("m{i}"), "text", |m| m.hidden = i == 2 || i == 7))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let brk = |visible: Option<bool>| pb::MessageData {
        scene_break: Some(true),
        scene_break_visible: visible,
        ..Default::default()
    };
    set_data(&mut s, "c", "m1", brk(None)).await;
    set_data(&mut s, "c", "m3", brk(Some(true))).await;
    set_data(&mut s, "c", "m4", brk(Some(false))).await; // not visible: does not count
    set_data(&mut s, "c", "m5", brk(None)).await;
    set_data(
        &mut s,
        "c",
        "m6",
        pb::MessageData {
            scene_break: Some(false),
            scene_break_visible: Some(true),
            ..Default::default()
        },
    )
    .await;

    // Default N = 2: visible breaks m1, m3, m5; the 2nd from the end is m3.
    let injection = refresh(&mut s, "c").await.unwrap();
    assert_eq!(
        injection.auto_hidden_count, 4,
        "m2 is also hidden by hand; it still counts"
    );
    let hidden =
        |lines: Vec<pb::MessageInclusion>| lines.iter().map(|l| l.hidden).collect::<Vec<bool>>();
    assert_eq!(
        hidden(inclusion(&mut s, "c").await),
        [true, true, true, true, false, false, false, true]
    );

    let scenes = |n: i32| pb::Settings {
        auto_hide_scene_count: Some(n),
        ..Default::default()
    };
    for (n, count, flags) in [
        (1, 6, [true, true, true, true, true, true, false, true]),
        (3, 2, [true, true, true, false, false, false, false, true]),
        (4, 0, [false, false, true, false, false, false, false, true]),
        (0, 0, [false, false, true, false, false, false, false, true]),
    ] {
        update(&mut s, "c", scenes(n), &[]).await.unwrap();
        let injection = s.injection("c").await;
        assert_eq!(trigger(&injection), pb::RefreshTrigger::SettingsChanged);
        assert_eq!(
            injection.auto_hidden_count, count,
            "auto_hide_scene_count {n}"
        );
        assert_eq!(
            hidden(inclusion(&mut s, "c").await),
            flags,
            "auto_hide_scene_count {n}"
        );
    }

    // m4 made visible: breaks m1, m3, m4, m5; N = 2 hides through m4.
    update(&mut s, "c", scenes(2), &[]).await.unwrap();
    set_data(&mut s, "c", "m4", brk(Some(true))).await;
    assert_eq!(refresh(&mut s, "c").await.unwrap().auto_hidden_count, 5);

    // Auto-hidden messages count as hidden for include_system_messages.
    for i in 0..8 {
        set_memory(&mut s, "c", &format!("m{i}"), &format!("memory {i}")).await;
    }
    update(
        &mut s,
        "c",
        pb::Settings {
            include_system_messages: Some(false),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    let got: Vec<String> = reasons(&mut s, "c")
        .await
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let sys = "include_system_messages";
    assert_eq!(got, [sys, sys, sys, sys, sys, "included", "included", sys]);

    // Auto-hide runs on every refresh, also while memory is disabled.
    let off = set_enabled(&mut s, "c", false).await;
    assert!(!off.enabled);
    let injection = s.injection("c").await;
    assert_eq!((injection.enabled, injection.text.as_str()), (false, ""));
    assert_eq!(injection.auto_hidden_count, 5);
    s.publish("c", message_deleted("m0")).await.unwrap();
    assert_eq!(s.injection("c").await.auto_hidden_count, 4);
    s.stop().await;
}

// ------------------------------------------------------------------ settings

#[tokio::test]
async fn get_settings_fills_every_field_with_the_documented_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    let global = settings_of(&mut s, "").await;
    let template = global.template.clone().expect("template is filled");
    assert!(template.starts_with("# Story Memory"), "{template:?}");
    assert!(template.contains("{{running_recap}}"), "{template:?}");
    let expected = pb::Settings {
        position: Some(pb::InjectionPosition::BeforePrompt as i32),
        depth: Some(2),
        role: Some(pb::InjectionRole::System as i32),
        scan: Some(false),
        template: Some(template.clone()),
        include_user_messages: Some(true),
        include_system_messages: Some(true),
        include_narrator_messages: Some(true),
        message_length_threshold: Some(0),
        message_recap_context_limit: None,
        message_recap_context_type: Some(pb::RecapContextType::Absolute as i32),
        max_context_tokens: None,
        tokenizer: Some(pb::Tokenizer::O200kBase as i32),
        auto_hide_scene_count: Some(2),
        show_prefill: Some(false),
        default_chat_enabled: Some(true),
        use_global_toggle_state: Some(false),
        global_toggle_state: Some(true),
        disabled_character_keys: Some(pb::CharacterKeys { keys: vec![] }),
        debounce_ms: Some(300),
    };
    assert_eq!(global, expected);
    // A chat with no events yet has the same effective settings.
    assert_eq!(settings_of(&mut s, "not-opened-yet").await, expected);

    // The default injection: the template around the recap, before the prompt.
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    assert_eq!(settings_of(&mut s, "c").await, expected);
    add_recap(&mut s, "c", "Alice met Bob.").await;
    let injection = s.injection("c").await;
    assert_eq!(injection.key, KEY);
    assert_eq!(injection.chat_id, "c");
    assert_eq!(
        injection.text,
        template.replace("{{running_recap}}", "Alice met Bob.")
    );
    assert_eq!(
        injection.position,
        pb::InjectionPosition::BeforePrompt as i32
    );
    assert_eq!(
        (injection.depth, injection.role),
        (2, pb::InjectionRole::System as i32)
    );
    assert!(!injection.scan);
    assert!(injection.enabled);
    assert_eq!(injection.running_recap_version, Some(0));
    assert_eq!(injection.token_count, o200k(&injection.text));
    assert!(injection.refreshed_at.is_some());
    s.stop().await;
}

#[tokio::test]
async fn chat_overrides_win_over_global_settings_and_clear_stops_them() {
    let (_dir, mut s) = start().await;
    s.publish("a", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    s.publish("b", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let depth = |d: i32| pb::Settings {
        depth: Some(d),
        ..Default::default()
    };
    let answer = update(&mut s, "", depth(5), &[]).await.unwrap();
    assert_eq!(answer.depth, Some(5));
    let answer = update(
        &mut s,
        "a",
        pb::Settings {
            depth: Some(7),
            position: Some(pb::InjectionPosition::InChat as i32),
            role: Some(pb::InjectionRole::Assistant as i32),
            scan: Some(true),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    // The answer is the chat's effective settings: overrides over global.
    assert_eq!(answer.depth, Some(7));
    assert_eq!(
        answer.debounce_ms,
        Some(0),
        "the global debounce shows through"
    );
    assert_eq!(settings_of(&mut s, "a").await, answer);
    assert_eq!(settings_of(&mut s, "b").await.depth, Some(5));
    assert_eq!(settings_of(&mut s, "").await.depth, Some(5));
    let injection = s.injection("a").await;
    assert_eq!(trigger(&injection), pb::RefreshTrigger::SettingsChanged);
    assert_eq!(injection.depth, 7);
    assert_eq!(injection.position, pb::InjectionPosition::InChat as i32);
    assert_eq!(injection.role, pb::InjectionRole::Assistant as i32);
    assert!(injection.scan);

    // A later global change does not beat the override.
    update(&mut s, "", depth(9), &[]).await.unwrap();
    assert_eq!(settings_of(&mut s, "a").await.depth, Some(7));
    assert_eq!(settings_of(&mut s, "b").await.depth, Some(9));

    // clear: the chat stops overriding and follows the global value again.
    let answer = update(&mut s, "a", pb::Settings::default(), &["depth", "scan"])
        .await
        .unwrap();
    assert_eq!((answer.depth, answer.scan), (Some(9), Some(false)));
    assert_eq!(answer.position, Some(pb::InjectionPosition::InChat as i32));
    assert_eq!(s.injection("a").await.depth, 9);
    // clear runs before the update in the same request.
    let answer = update(&mut s, "a", depth(3), &["depth"]).await.unwrap();
    assert_eq!(answer.depth, Some(3));
    // clear on global returns to the default.
    let answer = update(&mut s, "", pb::Settings::default(), &["depth"])
        .await
        .unwrap();
    assert_eq!(answer.depth, Some(2));
    assert_eq!(settings_of(&mut s, "b").await.depth, Some(2));

    // disabled_character_keys: present (even empty) replaces; absent keeps.
    let keys = |k: &[&str]| pb::Settings {
        disabled_character_keys: Some(pb::CharacterKeys {
            keys: k.iter().map(|s| (*s).to_owned()).collect(),
        }),
        ..Default::default()
    };
    let answer = update(&mut s, "", keys(&["x.png", "y.png"]), &[])
        .await
        .unwrap();
    assert_eq!(
        answer.disabled_character_keys.unwrap().keys,
        ["x.png", "y.png"]
    );
    let answer = update(&mut s, "", depth(4), &[]).await.unwrap();
    assert_eq!(
        answer.disabled_character_keys.unwrap().keys,
        ["x.png", "y.png"]
    );
    let answer = update(&mut s, "", keys(&[]), &[]).await.unwrap();
    assert_eq!(
        answer.disabled_character_keys.unwrap().keys,
        Vec::<String>::new()
    );
    s.stop().await;
}

#[tokio::test]
async fn a_chat_with_no_events_accepts_settings_that_apply_once_it_opens() {
    let (_dir, mut s) = start().await;
    let answer = update(
        &mut s,
        "later",
        pb::Settings {
            position: Some(pb::InjectionPosition::InChat as i32),
            depth: Some(12),
            template: Some("MEMORY: {{running_recap}}".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(answer.depth, Some(12));
    assert_eq!(settings_of(&mut s, "later").await.depth, Some(12));
    let enabled = set_enabled(&mut s, "later", true).await;
    assert!(enabled.enabled);
    assert_eq!(enabled.revision, 0, "a chat not yet known has revision 0");
    // Still unknown for the calls that need a chat.
    assert_code(refresh(&mut s, "later").await, Code::NotFound, "later");
    let err = s
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "later".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);

    s.publish("later", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let injection = s.injection("later").await;
    assert_eq!(injection.revision, 1);
    assert_eq!(injection.position, pb::InjectionPosition::InChat as i32);
    assert_eq!(injection.depth, 12);
    add_recap(&mut s, "later", "they met").await;
    assert_eq!(s.injection("later").await.text, "MEMORY: they met");
    s.stop().await;
}

#[tokio::test]
async fn invalid_settings_are_refused_by_field_name_and_change_nothing() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let global_before = settings_of(&mut s, "").await;
    let chat_before = settings_of(&mut s, "c").await;
    let revision = s.injection("c").await.revision;

    let percent_alone = pb::Settings {
        message_recap_context_limit: Some(10),
        message_recap_context_type: Some(pb::RecapContextType::Percent as i32),
        ..Default::default()
    };
    let cases: Vec<(pb::Settings, &str)> = vec![
        (percent_alone.clone(), "max_context_tokens"),
        (
            pb::Settings {
                position: Some(99),
                ..Default::default()
            },
            "position",
        ),
        (
            pb::Settings {
                role: Some(42),
                ..Default::default()
            },
            "role",
        ),
        (
            pb::Settings {
                message_recap_context_type: Some(9),
                ..Default::default()
            },
            "message_recap_context_type",
        ),
        (
            pb::Settings {
                tokenizer: Some(17),
                ..Default::default()
            },
            "tokenizer",
        ),
        (
            pb::Settings {
                depth: Some(1001),
                ..Default::default()
            },
            "depth",
        ),
        (
            pb::Settings {
                depth: Some(-1),
                ..Default::default()
            },
            "depth",
        ),
        (
            pb::Settings {
                message_recap_context_limit: Some(-1),
                ..Default::default()
            },
            "message_recap_context_limit",
        ),
        (
            pb::Settings {
                max_context_tokens: Some(-5),
                ..Default::default()
            },
            "max_context_tokens",
        ),
        (
            pb::Settings {
                message_length_threshold: Some(-1),
                ..Default::default()
            },
            "message_length_threshold",
        ),
        (
            pb::Settings {
                // A valid field next to an invalid one: nothing is applied.
                depth: Some(8),
                position: Some(77),
                ..Default::default()
            },
            "position",
        ),
    ];
    for (settings, field) in cases {
        for chat in ["", "c"] {
            let result = update(&mut s, chat, settings.clone(), &[]).await;
            assert_code(result, Code::InvalidArgument, field);
        }
    }
    // PERCENT with a limit in two steps: the second step is what is refused.
    update(
        &mut s,
        "c",
        pb::Settings {
            message_recap_context_type: Some(pb::RecapContextType::Percent as i32),
            ..Default::default()
        },
        &[],
    )
    .await
    .expect("PERCENT without a limit is still no limit");
    let result = update(
        &mut s,
        "c",
        pb::Settings {
            message_recap_context_limit: Some(10),
            ..Default::default()
        },
        &[],
    )
    .await;
    assert_code(result, Code::InvalidArgument, "max_context_tokens");
    update(
        &mut s,
        "c",
        pb::Settings::default(),
        &["message_recap_context_type"],
    )
    .await
    .unwrap();

    assert_eq!(settings_of(&mut s, "").await, global_before);
    assert_eq!(settings_of(&mut s, "c").await, chat_before);
    // The one accepted change above refreshed the chat twice; nothing else did.
    assert_eq!(s.injection("c").await.revision, revision + 2);

    // The edges are accepted, and PERCENT with max_context_tokens too.
    for depth in [0, 1000] {
        let answer = update(
            &mut s,
            "c",
            pb::Settings {
                depth: Some(depth),
                ..Default::default()
            },
            &[],
        )
        .await
        .unwrap();
        assert_eq!(answer.depth, Some(depth));
    }
    let answer = update(
        &mut s,
        "c",
        pb::Settings {
            max_context_tokens: Some(8000),
            ..percent_alone
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(answer.message_recap_context_limit, Some(10));
    assert_eq!(answer.max_context_tokens, Some(8000));
    s.stop().await;
}

#[tokio::test]
async fn a_global_change_refreshes_every_chat() {
    let (_dir, mut s) = start().await;
    for chat in ["a", "b", "c"] {
        s.publish(chat, chat_changed(vec![message("m", "x")]))
            .await
            .unwrap();
        add_recap(&mut s, chat, &format!("recap of {chat}")).await;
    }
    // A chat configured but not opened has nothing to refresh, and must not
    // get in the way.
    update(
        &mut s,
        "configured-only",
        pb::Settings {
            depth: Some(1),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    set_enabled(&mut s, "c", false).await;
    let mut before = HashMap::new();
    for chat in ["a", "b", "c"] {
        before.insert(chat, s.injection(chat).await.revision);
    }
    let mut stream = subscribe(&mut s, &[], 0).await;

    update(
        &mut s,
        "",
        pb::Settings {
            depth: Some(6),
            position: Some(pb::InjectionPosition::InChat as i32),
            ..Default::default()
        },
        &[],
    )
    .await
    .expect("a global change succeeds");

    // The call answered after every refresh: GetInjection sees them all.
    for chat in ["a", "b", "c"] {
        let injection = s.injection(chat).await;
        assert_eq!(injection.revision, before[chat] + 1, "{chat}");
        assert_eq!(
            trigger(&injection),
            pb::RefreshTrigger::SettingsChanged,
            "{chat}"
        );
    }
    for chat in ["a", "b"] {
        let injection = s.injection(chat).await;
        assert_eq!((injection.depth, injection.enabled), (6, true));
        assert_eq!(injection.position, pb::InjectionPosition::InChat as i32);
    }
    let c = s.injection("c").await;
    assert_eq!((c.enabled, c.text.as_str()), (false, ""));

    // And the all-chats subscriber saw one push per chat.
    let mut pushed = HashMap::new();
    for _ in 0..3 {
        let injection = next_within(&mut stream, 5).await.expect("a push per chat");
        pushed.insert(injection.chat_id.clone(), injection.revision);
    }
    let expected: HashMap<String, u64> = before
        .iter()
        .map(|(c, r)| ((*c).to_owned(), r + 1))
        .collect();
    assert_eq!(pushed, expected);

    // A chat's own change refreshes only that chat.
    update(
        &mut s,
        "a",
        pb::Settings {
            depth: Some(3),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(s.injection("a").await.revision, before["a"] + 2);
    assert_eq!(s.injection("b").await.revision, before["b"] + 1);
    s.stop().await;
}

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
    let answer = set_enabled(&mut s, "own", true).await;
    assert!(!answer.enabled, "the global toggle wins");
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
    assert!(
        set_enabled(&mut s, "own", false).await.enabled,
        "the global toggle wins"
    );
    assert_eq!(enabled_of(&s.injection("own").await), (true, true));

    // Off again: the chat's own value (false) counts once more.
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
    assert_eq!(enabled_of(&s.injection("own").await), (false, false));
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

// ------------------------------------------------------------------ running recaps

#[tokio::test]
async fn running_recap_versions_count_from_zero_and_the_current_one_is_injected() {
    let (_dir, mut s) = start().await;
    s.publish(
        "c",
        chat_changed(vec![message("s1", "x"), message("s2", "y")]),
    )
    .await
    .unwrap();
    assert_eq!(
        recaps(&mut s, "c").await,
        pb::ListRunningRecapsResponse::default()
    );
    let before = s.injection("c").await.revision;
    let v0 = s
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "c".into(),
            content: "zero".into(),
            scene_count: 3,
            excluded_count: 1,
            prev_scene_message_id: "s1".into(),
            new_scene_message_id: "s2".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(v0.version, 0);
    assert_eq!(
        (v0.content.as_str(), v0.scene_count, v0.excluded_count),
        ("zero", 3, 1)
    );
    assert_eq!(
        (
            v0.prev_scene_message_id.as_str(),
            v0.new_scene_message_id.as_str()
        ),
        ("s1", "s2")
    );
    assert!(v0.created_at.is_some());
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, before + 1);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RunningRecapChanged);
    assert_eq!(injection.running_recap_version, Some(0));

    assert_eq!(add_recap(&mut s, "c", "one").await.version, 1);
    assert_eq!(add_recap(&mut s, "c", "two").await.version, 2);
    let list = recaps(&mut s, "c").await;
    assert_eq!(list.current_version, Some(2));
    assert_eq!(version_numbers(&list), [0, 1, 2]);
    assert_eq!(list.versions[0], v0);
    assert!(s.injection("c").await.text.contains("two"));

    // Select.
    let list = select(&mut s, "c", 0).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(0), vec![0, 1, 2])
    );
    let injection = s.injection("c").await;
    assert_eq!(injection.running_recap_version, Some(0));
    assert!(injection.text.contains("zero") && !injection.text.contains("two"));
    assert_eq!(trigger(&injection), pb::RefreshTrigger::RunningRecapChanged);

    // Deleting the current one: the highest remaining becomes current.
    select(&mut s, "c", 1).await.unwrap();
    let list = delete(&mut s, "c", 1).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(2), vec![0, 2])
    );
    assert_eq!(s.injection("c").await.running_recap_version, Some(2));
    // Deleting another keeps the current one.
    let list = delete(&mut s, "c", 0).await.unwrap();
    assert_eq!(
        (list.current_version, version_numbers(&list)),
        (Some(2), vec![2])
    );
    // New = highest existing + 1.
    assert_eq!(add_recap(&mut s, "c", "three").await.version, 3);

    // Unknown versions: NOT_FOUND, nothing changes.
    let revision = s.injection("c").await.revision;
    assert_code(select(&mut s, "c", 9).await, Code::NotFound, "9");
    assert_code(delete(&mut s, "c", 1).await, Code::NotFound, "1");
    assert_eq!(s.injection("c").await.revision, revision);
    // Unknown scene messages: NOT_FOUND, nothing added.
    assert_code(
        add_scene_recap(&mut s, "c", "x", "nope", "").await,
        Code::NotFound,
        "nope",
    );
    assert_code(
        add_scene_recap(&mut s, "c", "x", "", "nope").await,
        Code::NotFound,
        "nope",
    );
    assert_code(
        add_scene_recap(&mut s, "nochat", "x", "", "").await,
        Code::NotFound,
        "nochat",
    );
    assert_eq!(version_numbers(&recaps(&mut s, "c").await), [2, 3]);
    assert_eq!(s.injection("c").await.revision, revision);

    // No version left: empty text, no version.
    delete(&mut s, "c", 3).await.unwrap();
    let list = delete(&mut s, "c", 2).await.unwrap();
    assert_eq!(list, pb::ListRunningRecapsResponse::default());
    let injection = s.injection("c").await;
    assert_eq!(
        (
            injection.text.as_str(),
            injection.running_recap_version,
            injection.token_count
        ),
        ("", None, 0)
    );
    // And a new first version after that starts from 0 again.
    assert_eq!(add_recap(&mut s, "c", "again").await.version, 0);
    s.stop().await;
}

#[tokio::test]
async fn deleting_a_message_deletes_the_versions_whose_scene_is_no_longer_valid() {
    let (_dir, mut s) = start().await;
    let messages = ["s1", "s2", "s3", "x", "y"]
        .iter()
        .map(|id| message(id, "t"))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let scene = |text: &str| pb::MessageData {
        scene_recap_memory: Some(text.into()),
        ..Default::default()
    };
    set_data(&mut s, "c", "s1", scene("scene one")).await;
    set_data(&mut s, "c", "s2", scene("")).await; // empty counts as none
    set_data(&mut s, "c", "x", scene("scene x")).await;
    // s3 never gets a scene recap.
    let v0 = add_scene_recap(&mut s, "c", "no scene", "", "")
        .await
        .unwrap();
    let v1 = add_scene_recap(&mut s, "c", "s1 is fine", "s2", "s1")
        .await
        .unwrap();
    let v2 = add_scene_recap(&mut s, "c", "s2 has an empty recap", "", "s2")
        .await
        .unwrap();
    let v3 = add_scene_recap(&mut s, "c", "s3 has no recap", "", "s3")
        .await
        .unwrap();
    let v4 = add_scene_recap(&mut s, "c", "x will be deleted", "s1", "x")
        .await
        .unwrap();
    assert_eq!(
        [v0.version, v1.version, v2.version, v3.version, v4.version],
        [0, 1, 2, 3, 4]
    );
    assert_eq!(recaps(&mut s, "c").await.current_version, Some(4));

    let revision = s.publish("c", message_deleted("x")).await.unwrap();
    let list = recaps(&mut s, "c").await;
    assert_eq!(version_numbers(&list), [0, 1]);
    assert_eq!(
        list.current_version,
        Some(1),
        "the highest remaining became current"
    );
    let injection = s.injection("c").await;
    assert_eq!(injection.revision, revision);
    assert_eq!(trigger(&injection), pb::RefreshTrigger::MessageDeleted);
    assert_eq!(injection.running_recap_version, Some(1));
    assert!(injection.text.contains("s1 is fine"));

    // The version's other scene reference (prev) going away is not a reason.
    s.publish("c", message_deleted("s2")).await.unwrap();
    assert_eq!(version_numbers(&recaps(&mut s, "c").await), [0, 1]);
    // Losing the recap of s1, then any deletion, removes v1.
    set_data(&mut s, "c", "s1", scene("")).await;
    s.publish("c", message_deleted("y")).await.unwrap();
    let list = recaps(&mut s, "c").await;
    assert_eq!(
        (version_numbers(&list), list.current_version),
        (vec![0], Some(0))
    );
    assert!(s.injection("c").await.text.contains("no scene"));
    s.stop().await;
}

#[tokio::test]
async fn the_template_replaces_every_placeholder_literally() {
    let (_dir, mut s) = start().await;
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    let template = |t: &str| pb::Settings {
        template: Some(t.into()),
        ..Default::default()
    };
    // No version yet: empty text whatever the template.
    update(&mut s, "c", template("A {{running_recap}}"), &[])
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.text, "");

    let content = "x$1 $0 \\n {{running_recap}} ${running_recap}";
    add_recap(&mut s, "c", content).await;
    update(
        &mut s,
        "c",
        template("A {{running_recap}} B {{running_recap}}"),
        &[],
    )
    .await
    .unwrap();
    let expected = format!("A {content} B {content}");
    let injection = s.injection("c").await;
    assert_eq!(injection.text, expected);
    assert_eq!(injection.token_count, o200k(&expected));

    update(&mut s, "c", template("No placeholder here."), &[])
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.text, "No placeholder here.");
    for blank in ["", " \n\t "] {
        update(&mut s, "c", template(blank), &[]).await.unwrap();
        assert_eq!(
            s.injection("c").await.text,
            content,
            "blank template {blank:?}"
        );
    }
    // Empty content gives empty text.
    add_recap(&mut s, "c", "").await;
    update(&mut s, "c", template("A {{running_recap}}"), &[])
        .await
        .unwrap();
    let injection = s.injection("c").await;
    assert_eq!((injection.text.as_str(), injection.token_count), ("", 0));
    s.stop().await;
}

// ------------------------------------------------------------------ injections

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
    let publishers = tokio::time::timeout(Duration::from_secs(60), async {
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

// ------------------------------------------------------------------ reflection and health

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

const EXPECTED_SERVICES: [&str; 5] = [
    "recap.v1.EventService",
    "recap.v1.MemoryService",
    "recap.v1.SettingsService",
    "recap.v1.InjectionService",
    "grpc.health.v1.Health",
];

#[tokio::test]
async fn reflection_v1_and_v1alpha_list_the_four_services_and_health() {
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
