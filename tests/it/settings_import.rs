//! `ImportSettings` on settings objects shaped like the ones users really
//! have: numbers and booleans stored as strings, the radio buttons'
//! `"tokens"`, `null` keys, a negative auto-hide count, and `chats_enabled`
//! naming chats as `recapd import` names them.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

/// The shape of a settings object saved by an older version of the
/// extension: the values its dropdowns and text fields were bound to are
/// strings (`"1"`, `"4"`, `"2"`, `"10"`, `"false"`), the context type is
/// what its radio buttons store (`"tokens"`), auto-hide is off as `-1`,
/// and next to the settings sit the profiles, UI state, prompts of
/// features recapd does not have, and the per-chat and per-group maps.
const OLDER_VERSION: &str = r#"{
    "profiles": {"Default": {"running_scene_recap_depth": 2}},
    "character_profiles": {},
    "chat_profiles": {},
    "profile": "Default",
    "notify_on_profile_switch": false,
    "chats_enabled": {"Bob - 2024-03-01@12h30m45s": false},
    "global_toggle_state": true,
    "disabled_group_characters": {"1719412345678": ["alice.png"]},
    "memory_edit_interface_settings": {},
    "running_scene_recap_position": "1",
    "running_scene_recap_depth": "4",
    "running_scene_recap_role": "2",
    "running_scene_recap_scan": "false",
    "running_scene_recap_prompt": "Combine the scene recaps ...",
    "include_user_messages": "true",
    "message_recap_context_limit": "10",
    "message_recap_context_type": "tokens",
    "auto_hide_scene_count": -1,
    "scene_recap_navigator_width": 240,
    "debug_mode": true
}"#;

/// The keys of [`OLDER_VERSION`] recapd has no use for (its profiles,
/// their bindings and the groups' disabled characters are read: see
/// `profiles::import_settings_reads_the_extensions_profiles_and_bindings`).
const OLDER_VERSION_IGNORED: [&str; 6] = [
    "debug_mode",
    "memory_edit_interface_settings",
    "notify_on_profile_switch",
    "profile",
    "running_scene_recap_prompt",
    "scene_recap_navigator_width",
];

async fn import(
    server: &mut Server,
    chat: &str,
    json: &str,
) -> Result<pb::ImportSettingsResponse, tonic::Status> {
    server
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: chat.into(),
            json: json.into(),
        })
        .await
        .map(|r| r.into_inner())
}

/// Opens each chat with one message, so that its injection can be read.
async fn open(server: &mut Server, chats: &[&str]) {
    for chat in chats {
        server
            .publish(chat, chat_changed(vec![message("m0", "hello")]))
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn an_older_versions_string_numbers_and_tokens_type_are_read() {
    let (_dir, mut s) = start().await;
    let imported = import(&mut s, "", OLDER_VERSION).await.unwrap();
    let mut ignored = OLDER_VERSION_IGNORED.map(String::from).to_vec();
    ignored.sort();
    assert_eq!(imported.ignored_keys, ignored);
    let global = settings_of(&mut s, "").await;
    assert_eq!(imported.settings.as_ref(), Some(&global));
    assert_eq!(global.position, Some(pb::InjectionPosition::InChat as i32));
    assert_eq!(
        (global.depth, global.role),
        (Some(4), Some(pb::InjectionRole::Assistant as i32))
    );
    assert_eq!(
        (global.scan, global.include_user_messages),
        (Some(false), Some(true))
    );
    assert_eq!(
        (
            global.message_recap_context_type,
            global.message_recap_context_limit
        ),
        (Some(pb::RecapContextType::Absolute as i32), Some(10)),
        "the radio buttons' \"tokens\" is an absolute token count"
    );
    assert_eq!(global.auto_hide_scene_count, Some(0), "-1 is off");
}

/// A settings object where keys were left `null` (by hand, or a value the
/// extension's UI never set): each clears its setting, globally back to
/// the default and for a chat back to the global value.
#[tokio::test]
async fn a_null_key_clears_its_setting() {
    let (_dir, mut s) = start().await;
    let custom = pb::Settings {
        depth: Some(7),
        template: Some("Before: {{running_recap}}".into()),
        message_recap_context_limit: Some(500),
        ..Default::default()
    };
    update(&mut s, "", custom, &[]).await.unwrap();
    let imported = import(
        &mut s,
        "",
        r#"{"running_scene_recap_depth": null, "running_scene_recap_template": null,
            "message_recap_context_limit": null, "running_scene_recap_role": "1",
            "chat_profiles": null}"#,
    )
    .await
    .unwrap();
    // `chat_profiles: null` names no chat: read, and nothing changes.
    assert!(
        imported.ignored_keys.is_empty(),
        "{:?}",
        imported.ignored_keys
    );
    let global = settings_of(&mut s, "").await;
    assert_eq!(global.depth, Some(2), "the default depth");
    assert!(
        global
            .template
            .as_deref()
            .is_some_and(|t| t.starts_with("# Story Memory")),
        "the default template: {:?}",
        global.template
    );
    assert_eq!(global.message_recap_context_limit, None, "no limit");
    assert_eq!(global.role, Some(pb::InjectionRole::User as i32));

    // A chat's override, cleared by a chat import, follows the global value.
    update(
        &mut s,
        "c",
        pb::Settings {
            depth: Some(9),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    update(
        &mut s,
        "",
        pb::Settings {
            depth: Some(5),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(settings_of(&mut s, "c").await.depth, Some(9));
    let chat = import(&mut s, "c", r#"{"running_scene_recap_depth": null}"#)
        .await
        .unwrap();
    assert_eq!(chat.settings.unwrap().depth, Some(5));
    assert_eq!(settings_of(&mut s, "c").await.depth, Some(5));
}

/// `chats_enabled` is keyed by SillyTavern's chat file name without
/// `.jsonl`: the chat `recapd import` makes of that file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chats_enabled_applies_to_the_chats_recapd_import_made() {
    let (dir, mut s) = start().await;
    let chat = "Bob - 2024-03-01@12h30m45s";
    let file = dir.path().join(format!("{chat}.jsonl"));
    std::fs::copy(
        format!(
            "{}/tests/fixtures/bob-short.jsonl",
            env!("CARGO_MANIFEST_DIR")
        ),
        &file,
    )
    .unwrap();
    let addr = s.app.as_ref().unwrap().local_addr().to_string();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_recapd"))
            .args([
                "import".as_ref(),
                "--addr".as_ref(),
                addr.as_ref(),
                file.as_os_str(),
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(s.injection(chat).await.enabled);

    let imported = import(&mut s, "", OLDER_VERSION).await.unwrap();
    assert!(!imported.ignored_keys.contains(&"chats_enabled".to_owned()));
    let injection = s.injection(chat).await;
    assert!(!injection.enabled, "the imported chat is now disabled");
    assert_eq!(injection.text, "");
}

#[tokio::test]
async fn chats_enabled_sets_each_chats_own_state_and_never_the_global_toggle() {
    let (_dir, mut s) = start().await;
    open(&mut s, &["a", "b", "c"]).await;
    // The global toggle decides while the import runs; the chats' own
    // states are still set, and show once it is off again.
    let imported = import(
        &mut s,
        "",
        r#"{"use_global_toggle_state": "true", "global_toggle_state": true,
            "chats_enabled": {"a": false, "b": "false", "c": true, "never-opened": false}}"#,
    )
    .await
    .unwrap();
    assert!(imported.ignored_keys.is_empty());
    let global = settings_of(&mut s, "").await;
    assert_eq!(
        (global.use_global_toggle_state, global.global_toggle_state),
        (Some(true), Some(true)),
        "chats_enabled never changes the global toggle"
    );
    for chat in ["a", "b", "c"] {
        assert!(
            s.injection(chat).await.enabled,
            "{chat}: the global toggle wins"
        );
    }
    update(
        &mut s,
        "",
        pb::Settings {
            use_global_toggle_state: Some(false),
            default_chat_enabled: Some(true),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert!(!s.injection("a").await.enabled);
    assert!(!s.injection("b").await.enabled);
    assert!(s.injection("c").await.enabled);
    // A chat that had no events yet keeps its state for when it opens.
    open(&mut s, &["never-opened"]).await;
    assert!(!s.injection("never-opened").await.enabled);
}

#[tokio::test]
async fn a_chat_import_takes_only_that_chats_entry() {
    let (_dir, mut s) = start().await;
    open(&mut s, &["a", "b"]).await;
    import(
        &mut s,
        "a",
        r#"{"chats_enabled": {"a": false, "b": false}, "running_scene_recap_depth": 3}"#,
    )
    .await
    .unwrap();
    assert!(!s.injection("a").await.enabled);
    assert!(s.injection("b").await.enabled, "b's entry does not apply");
    assert_eq!(settings_of(&mut s, "b").await.depth, Some(2));
    assert_eq!(settings_of(&mut s, "a").await.depth, Some(3));
    // A chat the object does not name keeps its state.
    import(&mut s, "b", r#"{"chats_enabled": {"a": true}}"#)
        .await
        .unwrap();
    assert!(!s.injection("a").await.enabled);
    assert!(s.injection("b").await.enabled);
}

/// `message` sent with the bearer token of a tenant.
fn as_tenant<T>(token: &str, message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

#[tokio::test]
async fn chats_enabled_stays_inside_the_callers_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        "acme acme-token-0123456789\nglobex globex-token-9876543210\n",
    )
    .unwrap();
    let mut config = test_config(dir.path().join("data"));
    config.auth_tokens_file = Some(tokens);
    let mut s = Server::start_with(config).await;
    for token in ["acme-token-0123456789", "globex-token-9876543210"] {
        let event = pb::Event {
            chat_id: "shared".into(),
            kind: Some(chat_changed(vec![message("m0", "hello")])),
        };
        s.events
            .publish(as_tenant(token, pb::PublishRequest { event: Some(event) }))
            .await
            .unwrap();
    }
    let request = pb::ImportSettingsRequest {
        chat_id: String::new(),
        json: r#"{"chats_enabled": {"shared": false}}"#.into(),
    };
    s.settings
        .import_settings(as_tenant("acme-token-0123456789", request))
        .await
        .unwrap();
    let enabled = |token: &str| {
        let request = pb::GetInjectionRequest {
            chat_id: "shared".into(),
            key: None,
        };
        let mut injections = s.injections.clone();
        let request = as_tenant(token, request);
        async move {
            injections
                .get_injection(request)
                .await
                .unwrap()
                .into_inner()
                .enabled
        }
    };
    assert!(!enabled("acme-token-0123456789").await);
    assert!(enabled("globex-token-9876543210").await);
    s.stop().await;
}

#[tokio::test]
async fn what_cannot_be_read_is_refused_naming_the_key_and_nothing_changes() {
    let (_dir, mut s) = start().await;
    open(&mut s, &["a"]).await;
    for (json, key) in [
        (
            r#"{"running_scene_recap_depth": 6, "running_scene_recap_scan": "yes",
                "chats_enabled": {"a": false}}"#,
            "json.running_scene_recap_scan",
        ),
        (
            r#"{"running_scene_recap_depth": "six"}"#,
            "json.running_scene_recap_depth",
        ),
        (
            r#"{"message_recap_context_type": 1}"#,
            "json.message_recap_context_type",
        ),
        (
            r#"{"running_scene_recap_depth": 6, "chats_enabled": {"a": "off"}}"#,
            "json.chats_enabled[\"a\"]",
        ),
        (r#"{"chats_enabled": true}"#, "json.chats_enabled"),
    ] {
        let err = import(&mut s, "", json).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{json}");
        assert!(err.message().contains(key), "{json}: {}", err.message());
    }
    assert_eq!(settings_of(&mut s, "").await.depth, Some(2));
    assert!(s.injection("a").await.enabled);
}

// ---------------------------------------------------------------- generation keys

/// A settings object of the extension as saved in November 2025, the
/// version recapd follows (its `defaultSettings.js` then): every default
/// key, each with the type its settings panel saves (the offset slider and
/// the minimum-length field store numbers, the checkboxes booleans), the
/// global keys (profiles, `chats_enabled`...) next to them, and two keys
/// of an earlier version (`prompt`, its per-message recap prompt, and
/// `auto_summarize`) that stay in a saved object after an upgrade, since
/// the extension only adds missing defaults. Prompt texts are placeholders.
const GENERATION: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/st-settings-generation.json"
));

/// The keys of [`GENERATION`] that recapd reads; every other one is in
/// `ignored_keys`.
const GENERATION_READ: [&str; 24] = [
    "auto_hide_scene_count",
    "character_profiles",
    "chat_profiles",
    "disabled_group_characters",
    "profiles",
    "auto_scene_break_generate_recap",
    "auto_scene_break_message_offset",
    "auto_scene_break_minimum_scene_length",
    "auto_scene_break_on_new_message",
    "chats_enabled",
    "default_chat_enabled",
    "global_toggle_state",
    "include_narrator_messages",
    "include_system_messages",
    "include_user_messages",
    "message_length_threshold",
    "running_scene_recap_auto_generate",
    "running_scene_recap_depth",
    "running_scene_recap_exclude_latest",
    "running_scene_recap_position",
    "running_scene_recap_role",
    "running_scene_recap_scan",
    "running_scene_recap_template",
    "use_global_toggle_state",
];

/// The extension's prompts in [`GENERATION`]: never read, since they ask
/// for answers in the extension's shapes.
const GENERATION_PROMPTS: [&str; 5] = [
    "auto_scene_break_prompt",
    "prompt",
    "running_scene_recap_prompt",
    "scene_recap_error_detection_prompt",
    "scene_recap_prompt",
];

#[tokio::test]
async fn the_generation_switches_and_counts_land_in_recapds_settings() {
    let (_dir, mut s) = start().await;
    // The opposite of what the object says, so that each key must land.
    let before = pb::Settings {
        auto_scene_break_detection: Some(true),
        scene_break_offset: Some(20),
        scene_break_min_messages: Some(30),
        auto_scene_recap: Some(false),
        auto_running_recap: Some(true),
        ..Default::default()
    };
    update(&mut s, "", before, &[]).await.unwrap();
    let imported = import(&mut s, "", GENERATION).await.unwrap();
    let global = settings_of(&mut s, "").await;
    assert_eq!(imported.settings.as_ref(), Some(&global));
    assert_eq!(
        global.auto_scene_break_detection,
        Some(false),
        "auto_scene_break_on_new_message"
    );
    assert_eq!(
        global.scene_break_offset,
        Some(4),
        "auto_scene_break_message_offset"
    );
    assert_eq!(
        global.scene_break_min_messages,
        Some(3),
        "auto_scene_break_minimum_scene_length"
    );
    assert_eq!(
        global.auto_scene_recap,
        Some(true),
        "auto_scene_break_generate_recap"
    );
    assert_eq!(
        global.auto_running_recap,
        Some(false),
        "running_scene_recap_auto_generate"
    );
    assert_eq!(
        global.running_recap_exclude_latest,
        Some(2),
        "running_scene_recap_exclude_latest"
    );
    assert_eq!(
        global.template.as_deref(),
        Some("[Story so far]\n{{running_recap}}")
    );

    // Every other key is listed, the prompts among them, and no prompt
    // setting changed.
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(GENERATION).unwrap();
    let mut expected: Vec<String> = object
        .keys()
        .filter(|k| !GENERATION_READ.contains(&k.as_str()))
        .cloned()
        .collect();
    expected.sort();
    assert_eq!(imported.ignored_keys, expected);
    for prompt in GENERATION_PROMPTS {
        assert!(
            imported.ignored_keys.iter().any(|k| k == prompt),
            "{prompt} is ignored"
        );
    }
    let defaults = settings_of(&mut s, "never-configured").await;
    for (name, value, default) in [
        (
            "scene_break_prompt",
            &global.scene_break_prompt,
            &defaults.scene_break_prompt,
        ),
        (
            "scene_recap_prompt",
            &global.scene_recap_prompt,
            &defaults.scene_recap_prompt,
        ),
        (
            "running_recap_prompt",
            &global.running_recap_prompt,
            &defaults.running_recap_prompt,
        ),
        (
            "message_recap_prompt",
            &global.message_recap_prompt,
            &defaults.message_recap_prompt,
        ),
    ] {
        assert!(
            value.as_deref().is_some_and(|v| !v.contains("extension")),
            "{name} is recapd's own: {value:?}"
        );
        assert_eq!(value, default, "{name}");
    }
}

/// The same keys with numbers and booleans written as strings, imported
/// for one chat.
#[tokio::test]
async fn generation_keys_written_as_strings_set_a_chats_settings() {
    let (_dir, mut s) = start().await;
    let imported = import(
        &mut s,
        "c",
        r#"{"auto_scene_break_on_new_message": "false",
            "auto_scene_break_message_offset": "0",
            "auto_scene_break_minimum_scene_length": "50",
            "auto_scene_break_generate_recap": "false",
            "running_scene_recap_auto_generate": "false"}"#,
    )
    .await
    .unwrap();
    assert!(imported.ignored_keys.is_empty());
    let chat = settings_of(&mut s, "c").await;
    assert_eq!(
        (
            chat.auto_scene_break_detection,
            chat.scene_break_offset,
            chat.scene_break_min_messages,
            chat.auto_scene_recap,
            chat.auto_running_recap
        ),
        (Some(false), Some(0), Some(50), Some(false), Some(false))
    );
    let global = settings_of(&mut s, "").await;
    assert_eq!(
        (
            global.auto_scene_break_detection,
            global.scene_break_offset,
            global.scene_break_min_messages,
            global.auto_scene_recap,
            global.auto_running_recap
        ),
        (Some(true), Some(8), Some(10), Some(true), Some(true)),
        "the global settings keep their defaults"
    );
}

#[tokio::test]
async fn generation_values_outside_recapds_ranges_are_refused_and_nothing_changes() {
    let (_dir, mut s) = start().await;
    for (json, key) in [
        (
            r#"{"auto_scene_break_on_new_message": false, "auto_scene_break_message_offset": -1}"#,
            "json.auto_scene_break_message_offset",
        ),
        (
            r#"{"auto_scene_break_message_offset": "1001"}"#,
            "json.auto_scene_break_message_offset",
        ),
        (
            r#"{"auto_scene_break_on_new_message": false, "auto_scene_break_minimum_scene_length": 0}"#,
            "json.auto_scene_break_minimum_scene_length",
        ),
        (
            r#"{"auto_scene_break_minimum_scene_length": 1001}"#,
            "json.auto_scene_break_minimum_scene_length",
        ),
        (
            r#"{"auto_scene_break_generate_recap": "on"}"#,
            "json.auto_scene_break_generate_recap",
        ),
    ] {
        let err = import(&mut s, "", json).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{json}");
        assert!(err.message().contains(key), "{json}: {}", err.message());
    }
    let global = settings_of(&mut s, "").await;
    assert_eq!(
        (
            global.auto_scene_break_detection,
            global.scene_break_offset,
            global.scene_break_min_messages,
            global.auto_scene_recap
        ),
        (Some(true), Some(8), Some(10), Some(true))
    );
}
