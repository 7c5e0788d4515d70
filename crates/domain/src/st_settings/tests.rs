//! Tests of [`super::import_st_settings`].

use super::*;

#[test]
fn the_extensions_vocabulary_becomes_recapds() {
    let imported = import_st_settings(
        r#"{
            "running_scene_recap_position": 1,
            "running_scene_recap_depth": "4",
            "running_scene_recap_role": 2,
            "running_scene_recap_scan": true,
            "running_scene_recap_template": "MEM {{running_recap}}",
            "include_user_messages": false,
            "message_length_threshold": 3,
            "message_recap_context_limit": 12.7,
            "message_recap_context_type": "percent",
            "auto_hide_scene_count": -1,
            "show_prefill": true,
            "default_chat_enabled": false,
            "use_global_toggle_state": true,
            "global_toggle_state": false,
            "chats_enabled": {"a": true},
            "auto_lorebooks_enabled_by_default": true,
            "running_scene_recap_prompt": "..."
        }"#,
    )
    .unwrap();
    let p = &imported.patch;
    assert_eq!(p.position, Some(Position::InChat));
    assert_eq!(
        (p.depth, p.role, p.scan),
        (Some(4), Some(Role::Assistant), Some(true))
    );
    assert_eq!(p.template.as_deref(), Some("MEM {{running_recap}}"));
    assert_eq!(p.include_user_messages, Some(false));
    assert_eq!(
        p.include_system_messages, None,
        "absent keys change nothing"
    );
    assert_eq!(
        (p.message_length_threshold, p.message_recap_context_limit),
        (Some(3), Some(12))
    );
    assert_eq!(p.message_recap_context_type, Some(ContextType::Percent));
    assert_eq!(p.auto_hide_scene_count, Some(0));
    assert_eq!(
        (p.show_prefill, p.default_chat_enabled),
        (Some(true), Some(false))
    );
    assert_eq!(
        (p.use_global_toggle_state, p.global_toggle_state),
        (Some(true), Some(false))
    );
    assert_eq!(
        imported.ignored_keys,
        [
            "auto_lorebooks_enabled_by_default",
            "running_scene_recap_prompt"
        ]
    );
    assert_eq!(imported.chats_enabled, BTreeMap::from([("a".into(), true)]));
    assert!(imported.clear.is_empty());
}

#[test]
fn a_null_key_clears_its_setting_and_sets_nothing() {
    let imported = import_st_settings(
        r#"{
            "running_scene_recap_template": null,
            "running_scene_recap_depth": null,
            "message_recap_context_limit": null,
            "running_scene_recap_role": 1,
            "chats_enabled": null,
            "profile": null
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.clear,
        ["depth", "template", "message_recap_context_limit"],
        "recapd's field names, in field order"
    );
    assert_eq!(
        imported.patch,
        SettingsPatch {
            role: Some(Role::User),
            ..SettingsPatch::default()
        }
    );
    assert!(imported.chats_enabled.is_empty());
    assert_eq!(imported.ignored_keys, ["profile"]);
}

#[test]
fn numbers_and_booleans_written_as_strings_are_read_as_such() {
    let imported = import_st_settings(
        r#"{
            "running_scene_recap_position": "1",
            "running_scene_recap_depth": " 6 ",
            "running_scene_recap_role": "2",
            "running_scene_recap_scan": "true",
            "include_user_messages": "false",
            "show_prefill": " true ",
            "message_length_threshold": "10",
            "message_recap_context_limit": "12.9",
            "auto_hide_scene_count": "3"
        }"#,
    )
    .unwrap();
    let p = &imported.patch;
    assert_eq!(
        (p.position, p.depth, p.role),
        (Some(Position::InChat), Some(6), Some(Role::Assistant))
    );
    assert_eq!(
        (p.scan, p.include_user_messages, p.show_prefill),
        (Some(true), Some(false), Some(true))
    );
    assert_eq!(
        (
            p.message_length_threshold,
            p.message_recap_context_limit,
            p.auto_hide_scene_count
        ),
        (Some(10), Some(12), Some(3))
    );
}

#[test]
fn any_context_type_but_percent_is_absolute() {
    for (value, expected) in [
        ("\"percent\"", ContextType::Percent),
        ("\"tokens\"", ContextType::Absolute),
        ("\"absolute\"", ContextType::Absolute),
        ("\"Percent\"", ContextType::Absolute),
        ("\"\"", ContextType::Absolute),
    ] {
        let imported =
            import_st_settings(&format!("{{\"message_recap_context_type\": {value}}}")).unwrap();
        assert_eq!(
            imported.patch.message_recap_context_type,
            Some(expected),
            "{value}"
        );
    }
}

#[test]
fn a_negative_auto_hide_count_is_off() {
    for (value, expected) in [("-1", 0), ("-7", 0), ("\"-3\"", 0), ("-1e12", 0), ("4", 4)] {
        let imported =
            import_st_settings(&format!("{{\"auto_hide_scene_count\": {value}}}")).unwrap();
        assert_eq!(
            imported.patch.auto_hide_scene_count,
            Some(expected),
            "{value}"
        );
    }
}

#[test]
fn chats_enabled_gives_each_named_chat_its_state() {
    let imported = import_st_settings(
        r#"{"chats_enabled": {
            "Seraphina - 2024-05-12@19h04m33s": true,
            "Bob - 2024-03-01@12h30m45s": "false"
        }}"#,
    )
    .unwrap();
    assert_eq!(
        imported.chats_enabled,
        BTreeMap::from([
            ("Bob - 2024-03-01@12h30m45s".to_owned(), false),
            ("Seraphina - 2024-05-12@19h04m33s".to_owned(), true),
        ])
    );
    assert!(imported.ignored_keys.is_empty());
    assert_eq!(imported.patch, SettingsPatch::default());
}

#[test]
fn every_sillytavern_position_and_role_maps() {
    for (n, expected) in [
        (-1, Position::None),
        (0, Position::InPrompt),
        (1, Position::InChat),
        (2, Position::BeforePrompt),
    ] {
        let imported =
            import_st_settings(&format!("{{\"running_scene_recap_position\": {n}}}")).unwrap();
        assert_eq!(imported.patch.position, Some(expected));
    }
    for (n, expected) in [(0, Role::System), (1, Role::User), (2, Role::Assistant)] {
        let imported =
            import_st_settings(&format!("{{\"running_scene_recap_role\": {n}}}")).unwrap();
        assert_eq!(imported.patch.role, Some(expected));
    }
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    for (json, key) in [
        (
            r#"{"running_scene_recap_position": 3}"#,
            "json.running_scene_recap_position",
        ),
        (
            r#"{"running_scene_recap_role": -1}"#,
            "json.running_scene_recap_role",
        ),
        (
            r#"{"running_scene_recap_depth": 1001}"#,
            "json.running_scene_recap_depth",
        ),
        (
            r#"{"running_scene_recap_scan": "yes"}"#,
            "json.running_scene_recap_scan",
        ),
        (
            r#"{"running_scene_recap_scan": 1}"#,
            "json.running_scene_recap_scan",
        ),
        (
            r#"{"running_scene_recap_depth": ""}"#,
            "json.running_scene_recap_depth",
        ),
        (
            r#"{"running_scene_recap_position": "two"}"#,
            "json.running_scene_recap_position",
        ),
        (
            r#"{"running_scene_recap_role": [0]}"#,
            "json.running_scene_recap_role",
        ),
        (
            r#"{"running_scene_recap_template": 5}"#,
            "json.running_scene_recap_template",
        ),
        (
            r#"{"message_recap_context_type": 1}"#,
            "json.message_recap_context_type",
        ),
        (
            r#"{"message_length_threshold": -2}"#,
            "json.message_length_threshold",
        ),
        (
            r#"{"message_recap_context_limit": "-5"}"#,
            "json.message_recap_context_limit",
        ),
        (
            r#"{"auto_hide_scene_count": true}"#,
            "json.auto_hide_scene_count",
        ),
        (r#"{"chats_enabled": ["a"]}"#, "json.chats_enabled"),
        (
            r#"{"chats_enabled": {"a": "maybe"}}"#,
            "json.chats_enabled[\"a\"]",
        ),
        (
            r#"{"chats_enabled": {"a": null}}"#,
            "json.chats_enabled[\"a\"]",
        ),
        (
            r#"{"chats_enabled": {"": true}}"#,
            "json.chats_enabled[\"\"]",
        ),
        (r#"[1, 2]"#, "json"),
        (r#"{"unterminated": "#, "json"),
    ] {
        let err = import_st_settings(json).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!("invalid {key}")),
            "{json}: {err}"
        );
    }
}

#[test]
fn the_generation_switches_and_counts_set_recapds() {
    let imported = import_st_settings(
        r#"{
            "auto_scene_break_on_new_message": false,
            "auto_scene_break_message_offset": 4,
            "auto_scene_break_minimum_scene_length": 3,
            "auto_scene_break_generate_recap": true,
            "running_scene_recap_auto_generate": false
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.patch,
        SettingsPatch {
            auto_scene_break_detection: Some(false),
            scene_break_offset: Some(4),
            scene_break_min_messages: Some(3),
            auto_scene_recap: Some(true),
            auto_running_recap: Some(false),
            ..SettingsPatch::default()
        }
    );
    assert!(imported.ignored_keys.is_empty());
    assert!(imported.clear.is_empty());
}

#[test]
fn generation_numbers_and_booleans_written_as_strings_are_read_as_such() {
    let imported = import_st_settings(
        r#"{
            "auto_scene_break_on_new_message": "true",
            "auto_scene_break_message_offset": " 6 ",
            "auto_scene_break_minimum_scene_length": "12.9",
            "auto_scene_break_generate_recap": "false",
            "running_scene_recap_auto_generate": " true "
        }"#,
    )
    .unwrap();
    let p = &imported.patch;
    assert_eq!(
        (
            p.auto_scene_break_detection,
            p.auto_scene_recap,
            p.auto_running_recap
        ),
        (Some(true), Some(false), Some(true))
    );
    assert_eq!(
        (p.scene_break_offset, p.scene_break_min_messages),
        (Some(6), Some(12)),
        "fractions are rounded down"
    );
}

#[test]
fn the_generation_ranges_end_where_recapds_do() {
    for (json, offset, min) in [
        (
            r#"{"auto_scene_break_message_offset": 0, "auto_scene_break_minimum_scene_length": 1}"#,
            0,
            1,
        ),
        (
            r#"{"auto_scene_break_message_offset": 1000, "auto_scene_break_minimum_scene_length": 1000}"#,
            1000,
            1000,
        ),
        // The ends of the extension's own slider and number field.
        (
            r#"{"auto_scene_break_message_offset": 10, "auto_scene_break_minimum_scene_length": 50}"#,
            10,
            50,
        ),
    ] {
        let p = import_st_settings(json).unwrap().patch;
        assert_eq!(
            (p.scene_break_offset, p.scene_break_min_messages),
            (Some(offset), Some(min)),
            "{json}"
        );
    }
}

#[test]
fn the_extensions_prompts_are_ignored() {
    let imported = import_st_settings(
        r#"{
            "auto_scene_break_prompt": "Answer with {\"sceneBreakAt\": ...}",
            "auto_scene_break_forced_prompt": "...",
            "auto_scene_break_prefill": "{",
            "scene_recap_prompt": "...",
            "running_scene_recap_prompt": "...",
            "prompt": "...",
            "auto_scene_break_on_new_message": true
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.ignored_keys,
        [
            "auto_scene_break_forced_prompt",
            "auto_scene_break_prefill",
            "auto_scene_break_prompt",
            "prompt",
            "running_scene_recap_prompt",
            "scene_recap_prompt",
        ]
    );
    assert_eq!(
        imported.patch,
        SettingsPatch {
            auto_scene_break_detection: Some(true),
            ..SettingsPatch::default()
        },
        "no prompt setting is set"
    );
}

#[test]
fn a_null_generation_key_clears_its_setting() {
    let imported = import_st_settings(
        r#"{
            "running_scene_recap_auto_generate": null,
            "auto_scene_break_minimum_scene_length": null,
            "auto_scene_break_on_new_message": null,
            "auto_scene_break_message_offset": null,
            "auto_scene_break_generate_recap": null
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.clear,
        [
            "auto_scene_break_detection",
            "scene_break_offset",
            "scene_break_min_messages",
            "auto_scene_recap",
            "auto_running_recap"
        ],
        "recapd's field names, in field order"
    );
    assert_eq!(imported.patch, SettingsPatch::default());
}

#[test]
fn generation_values_outside_recapds_ranges_are_refused_naming_the_key() {
    for (json, message) in [
        (
            r#"{"auto_scene_break_message_offset": -1}"#,
            "invalid json.auto_scene_break_message_offset: -1 is outside 0..=1000",
        ),
        (
            r#"{"auto_scene_break_message_offset": "1001"}"#,
            "invalid json.auto_scene_break_message_offset: 1001 is outside 0..=1000",
        ),
        (
            r#"{"auto_scene_break_message_offset": 1e12}"#,
            "invalid json.auto_scene_break_message_offset: 1000000000000 is outside 0..=1000",
        ),
        (
            r#"{"auto_scene_break_minimum_scene_length": 0}"#,
            "invalid json.auto_scene_break_minimum_scene_length: 0 is outside 1..=1000",
        ),
        (
            r#"{"auto_scene_break_minimum_scene_length": -5000000000}"#,
            "invalid json.auto_scene_break_minimum_scene_length: -5000000000 is outside 1..=1000",
        ),
        (
            r#"{"auto_scene_break_minimum_scene_length": 1001}"#,
            "invalid json.auto_scene_break_minimum_scene_length: 1001 is outside 1..=1000",
        ),
        (
            r#"{"auto_scene_break_minimum_scene_length": ""}"#,
            "invalid json.auto_scene_break_minimum_scene_length: must be a number",
        ),
        (
            r#"{"auto_scene_break_message_offset": true}"#,
            "invalid json.auto_scene_break_message_offset: must be a number",
        ),
        (
            r#"{"auto_scene_break_on_new_message": 1}"#,
            "invalid json.auto_scene_break_on_new_message: must be true or false",
        ),
        (
            r#"{"auto_scene_break_generate_recap": "yes"}"#,
            "invalid json.auto_scene_break_generate_recap: must be true or false",
        ),
        (
            r#"{"running_scene_recap_auto_generate": [true]}"#,
            "invalid json.running_scene_recap_auto_generate: must be true or false",
        ),
    ] {
        let err = import_st_settings(json).unwrap_err();
        assert_eq!(err.to_string(), message, "{json}");
    }
}

mod lore;
mod world_info;
