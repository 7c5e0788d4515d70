//! GetInclusion over the API: each exclusion rule and its reason, and
//! auto-hide through the nth visible scene break.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;

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

#[tokio::test]
async fn with_show_prefill_a_prefill_without_memory_is_included_as_the_memory() {
    let (_dir, mut s) = start().await;
    let messages = vec![message("prefill_only", "t"), message("nothing", "t")];
    s.publish("c", chat_changed(messages)).await.unwrap();
    let prefill_only = pb::MessageData {
        prefill: Some("Alice opened the door".into()),
        ..Default::default()
    };
    set_data(&mut s, "c", "prefill_only", prefill_only).await;
    // show_prefill off (the default): the prefill is ignored, no memory.
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[("prefill_only", "no_memory"), ("nothing", "no_memory")])
    );
    let shown = pb::Settings {
        show_prefill: Some(true),
        message_recaps_enabled: Some(true),
        message_recaps_template: Some("Recent: {{message_recaps}}".into()),
        ..Default::default()
    };
    update(&mut s, "c", shown, &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[("prefill_only", "included"), ("nothing", "no_memory")])
    );
    // The message-recap tier injects the prefill as that message's recap.
    let tier = s
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: Some("auto_recap_messages".into()),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(tier.text, "Recent: Alice opened the door");
    s.stop().await;
}
