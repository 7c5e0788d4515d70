//! Settings over the API: documented defaults, chat overrides and clear,
//! settings for chats without events, invalid settings and global changes.

use std::collections::HashMap;

use crate::common::api::*;
use crate::common::settings_doc::{self, DocumentedDefault};
use crate::common::wire;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

/// Every `Settings` field has a row in the settings table of
/// docs/settings.md, every row is a field, and a fresh server serves each
/// documented default. Read through the proto's descriptors, so a new
/// setting needs no change here: only its row in docs/settings.md.
#[tokio::test]
async fn get_settings_fills_every_field_with_the_defaults_the_settings_doc_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    let global = settings_of(&mut s, "").await;
    let served = wire::fields_of("Settings", &global);
    let documented = settings_doc::settings_table();

    let is_documented = |name: &str| documented.iter().any(|(row, _)| row == name);
    let undocumented: Vec<&str> = served
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !is_documented(name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "Settings fields missing from the settings table of docs/settings.md: {undocumented:?}"
    );
    let mut mismatches = Vec::new();
    for (i, (name, cell)) in documented.iter().enumerate() {
        assert!(
            !documented[..i].iter().any(|(earlier, _)| earlier == name),
            "`{name}` has two rows in the settings table of docs/settings.md"
        );
        let Some((_, value)) = served.iter().find(|(field, _)| field == name) else {
            panic!(
                "the settings table of docs/settings.md has `{name}`, which is no Settings field"
            );
        };
        let default = DocumentedDefault::parse(cell).unwrap_or_else(|| {
            panic!(
                "docs/settings.md's default for `{name}` is {cell:?}, in no form this test reads: \
                 a number, true/false, `ENUM_VALUE`, `text`, `start` ... `end`, `name`, `name` (a list's lines), \
                 empty or unset"
            )
        });
        if !default.matches(value) {
            mismatches.push(format!(
                "{name}: docs/settings.md says {cell}, the server serves {value:?}"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "defaults that differ from the settings table of docs/settings.md:\n{}",
        mismatches.join("\n")
    );
    // docs/settings.md shows the templates by their start and end; this one is
    // short enough to check whole.
    assert_eq!(
        global.message_recaps_template.as_deref(),
        Some("# Recent Events\n\n{{message_recaps}}")
    );

    // A chat with no events yet has the same effective settings.
    assert_eq!(settings_of(&mut s, "not-opened-yet").await, global);

    // The default injection: the template around the recap, before the prompt.
    s.publish("c", chat_changed(vec![message("m", "x")]))
        .await
        .unwrap();
    assert_eq!(settings_of(&mut s, "c").await, global);
    let template = global.template.expect("the default template is set");
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
            key: None,
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
