//! Events over the API: ChatChanged transcripts, sent, received and
//! more-loaded messages, edits, swipes, scene breaks, duplicate ids and
//! malformed or unknown events.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

fn more_loaded(messages: Vec<pb::Message>) -> pb::event::Kind {
    pb::event::Kind::MoreMessagesLoaded(pb::MoreMessagesLoaded { messages })
}

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
        prefill: Some("Recap: ".into()),
        error: Some("timed out once".into()),
        reasoning: Some("thought about it".into()),
        edited: Some(true),
        exclude: Some(true),
        scene_break: Some(true),
        scene_break_visible: Some(true),
        scene_break_name: Some("The harbour".into()),
        scene_recap_memory: Some("Bob reached the harbour.".into()),
        scene_recap_versions: vec!["Bob reached the harbour.".into()],
        scene_recap_current_index: Some(0),
        ..Default::default()
    };
    set_data(&mut s, "c", "m", first_data.clone()).await;

    // swipe_id == number of swipes (1): a new swipe, with the current
    // swipe's data but its memory cleared (the scene break stays).
    let revision = s.publish("c", swiped("m", 1, second)).await.unwrap();
    let injection = s.injection("c").await;
    assert_eq!(
        (injection.revision, trigger(&injection)),
        (revision, pb::RefreshTrigger::MessageSwiped)
    );
    let new_swipe = pb::MessageData {
        scene_break: Some(true),
        scene_break_visible: Some(true),
        scene_break_name: Some("The harbour".into()),
        scene_recap_memory: Some("Bob reached the harbour.".into()),
        scene_recap_versions: vec!["Bob reached the harbour.".into()],
        scene_recap_current_index: Some(0),
        exclude: Some(false),
        edited: Some(false),
        ..Default::default()
    };
    assert_eq!(data(&mut s, "c", "m").await, new_swipe);
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

    // swipe_id 2 == number of swipes: a third swipe, again without memory.
    s.publish("c", swiped("m", 2, "third")).await.unwrap();
    assert_eq!(data(&mut s, "c", "m").await, new_swipe);
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
    // A new swipe of b1 keeps its break.
    s.publish("c", swiped("b1", 1, "another take"))
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.auto_hidden_count, 3);
    // Without a break on that swipe: fewer than N breaks, nothing hidden.
    let unbreak = pb::MessageData {
        scene_break: Some(false),
        ..Default::default()
    };
    set_data(&mut s, "c", "b1", unbreak).await;
    assert_eq!(refresh(&mut s, "c").await.unwrap().auto_hidden_count, 0);
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
