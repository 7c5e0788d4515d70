use super::*;

/// The stored JSON of two patches as written by recapd before the
/// settings table existed (captured from that code): the key order,
/// the `null`s and the enum spellings are what databases hold.
const STORED_FULL: &str = concat!(
    r#"{"position":"InChat","#,
    r#""depth":7,"#,
    r#""role":"User","#,
    r#""scan":true,"#,
    r#""template":"T {{running_recap}}","#,
    r#""include_user_messages":false,"#,
    r#""include_system_messages":true,"#,
    r#""include_narrator_messages":false,"#,
    r#""message_length_threshold":3,"#,
    r#""message_recap_context_limit":15,"#,
    r#""message_recap_context_type":"Percent","#,
    r#""max_context_tokens":1001,"#,
    r#""tokenizer":"Cl100kBase","#,
    r#""auto_hide_scene_count":0,"#,
    r#""show_prefill":true,"#,
    r#""default_chat_enabled":false,"#,
    r#""use_global_toggle_state":true,"#,
    r#""global_toggle_state":false,"#,
    r#""disabled_character_keys":["alice","bob"],"#,
    r#""debounce_ms":0,"#,
    r#""message_recaps_enabled":true,"#,
    r#""message_recaps_position":"BeforePrompt","#,
    r#""message_recaps_depth":9,"#,
    r#""message_recaps_role":"Assistant","#,
    r#""message_recaps_scan":true,"#,
    r#""message_recaps_template":"R {{message_recaps}}"}"#,
);
const STORED_SPARSE: &str = concat!(
    r#"{"position":null,"#,
    r#""depth":4,"#,
    r#""role":null,"#,
    r#""scan":null,"#,
    r#""template":null,"#,
    r#""include_user_messages":null,"#,
    r#""include_system_messages":null,"#,
    r#""include_narrator_messages":null,"#,
    r#""message_length_threshold":null,"#,
    r#""message_recap_context_limit":null,"#,
    r#""message_recap_context_type":null,"#,
    r#""max_context_tokens":null,"#,
    r#""tokenizer":"R50kBase","#,
    r#""auto_hide_scene_count":null,"#,
    r#""show_prefill":null,"#,
    r#""default_chat_enabled":null,"#,
    r#""use_global_toggle_state":null,"#,
    r#""global_toggle_state":null,"#,
    r#""disabled_character_keys":[],"#,
    r#""debounce_ms":null,"#,
    r#""message_recaps_enabled":null,"#,
    r#""message_recaps_position":null,"#,
    r#""message_recaps_depth":null,"#,
    r#""message_recaps_role":null,"#,
    r#""message_recaps_scan":null,"#,
    r#""message_recaps_template":null}"#,
);

/// `json` re-serialised, minus the `null` keys of settings added after
/// it was written (a new setting is stored as one more `null` key).
fn reserialised(patch: &SettingsPatch, json: &str) -> String {
    let mut text = serde_json::to_string(patch).unwrap();
    for name in FIELD_NAMES {
        if !json.contains(&format!("\"{name}\":")) {
            text = text.replace(&format!(",\"{name}\":null"), "");
        }
    }
    text
}

#[test]
// `..Default::default()` covers settings added after the capture,
// which such rows leave absent.
#[allow(clippy::needless_update)]
fn stored_patches_read_back_the_same_and_write_identically() {
    let full: SettingsPatch = serde_json::from_str(STORED_FULL).unwrap();
    assert_eq!(
        full,
        SettingsPatch {
            position: Some(Position::InChat),
            depth: Some(7),
            role: Some(Role::User),
            scan: Some(true),
            template: Some("T {{running_recap}}".into()),
            include_user_messages: Some(false),
            include_system_messages: Some(true),
            include_narrator_messages: Some(false),
            message_length_threshold: Some(3),
            message_recap_context_limit: Some(15),
            message_recap_context_type: Some(ContextType::Percent),
            max_context_tokens: Some(1001),
            tokenizer: Some(TokenizerKind::Cl100kBase),
            auto_hide_scene_count: Some(0),
            show_prefill: Some(true),
            default_chat_enabled: Some(false),
            use_global_toggle_state: Some(true),
            global_toggle_state: Some(false),
            disabled_character_keys: Some(vec!["alice".into(), "bob".into()]),
            debounce_ms: Some(0),
            message_recaps_enabled: Some(true),
            message_recaps_position: Some(Position::BeforePrompt),
            message_recaps_depth: Some(9),
            message_recaps_role: Some(Role::Assistant),
            message_recaps_scan: Some(true),
            message_recaps_template: Some("R {{message_recaps}}".into()),
            ..Default::default()
        }
    );
    assert_eq!(reserialised(&full, STORED_FULL), STORED_FULL);

    let sparse: SettingsPatch = serde_json::from_str(STORED_SPARSE).unwrap();
    assert_eq!(
        sparse,
        SettingsPatch {
            depth: Some(4),
            tokenizer: Some(TokenizerKind::R50kBase),
            disabled_character_keys: Some(vec![]),
            ..Default::default()
        }
    );
    assert_eq!(reserialised(&sparse, STORED_SPARSE), STORED_SPARSE);

    // Keys missing from older rows read as absent.
    let short: SettingsPatch = serde_json::from_str(r#"{"depth":3}"#).unwrap();
    assert_eq!(
        short,
        SettingsPatch {
            depth: Some(3),
            ..Default::default()
        }
    );
}

#[test]
fn every_setting_passes_through_the_api_form() {
    let full: SettingsPatch = serde_json::from_str(STORED_FULL).unwrap();
    let settings = Settings::default().with(&full);
    let back = SettingsPatch::from_api(settings.to_api()).unwrap();
    assert_eq!(Settings::default().with(&back), settings);
    // Unset optional settings stay absent.
    let api = Settings::default().to_api();
    assert_eq!(
        (api.max_context_tokens, api.message_recap_context_limit),
        (None, None)
    );
}

#[test]
fn api_checks_name_the_field_as_before() {
    let refused = |api: ApiSettings| SettingsPatch::from_api(api).unwrap_err().to_string();
    for (api, message) in [
        (
            ApiSettings {
                depth: Some(-1),
                ..Default::default()
            },
            "invalid depth: -1 is outside 0..=1000",
        ),
        (
            ApiSettings {
                message_recaps_depth: Some(1001),
                ..Default::default()
            },
            "invalid settings.message_recaps_depth: 1001 is outside 0..=1000",
        ),
        (
            ApiSettings {
                max_context_tokens: Some(-3),
                ..Default::default()
            },
            "invalid settings.max_context_tokens: -3 must not be negative",
        ),
        (
            ApiSettings {
                auto_hide_scene_count: Some(-2),
                ..Default::default()
            },
            "invalid auto_hide_scene_count: -2 must not be negative",
        ),
        (
            ApiSettings {
                debounce_ms: Some(3_600_001),
                ..Default::default()
            },
            "invalid debounce_ms: 3600001 is over the maximum of 3600000",
        ),
    ] {
        assert_eq!(refused(api), message);
    }
}

#[test]
fn defaults_match_the_documented_table() {
    let s = Settings::default();
    assert_eq!(s.position, Position::BeforePrompt);
    assert_eq!(s.depth, 2);
    assert_eq!(s.role, Role::System);
    assert!(!s.scan);
    assert!(s.template.starts_with("# Story Memory"));
    assert!(s.template.ends_with("{{running_recap}}"));
    assert!(s.include_user_messages && s.include_system_messages && s.include_narrator_messages);
    assert_eq!(s.message_length_threshold, 0);
    assert_eq!(s.token_limit(), None);
    assert_eq!(s.auto_hide_scene_count, 2);
    assert!(!s.show_prefill);
    assert!(s.default_chat_enabled && !s.use_global_toggle_state && s.global_toggle_state);
    assert_eq!(s.tokenizer, TokenizerKind::O200kBase);
    assert_eq!(s.debounce_ms, 300);
}

#[test]
fn percent_limit_is_floored_share_of_the_context() {
    let s = Settings::default().with(&SettingsPatch {
        message_recap_context_limit: Some(15),
        message_recap_context_type: Some(ContextType::Percent),
        max_context_tokens: Some(1001),
        ..Default::default()
    });
    assert_eq!(s.token_limit(), Some(150)); // floor(1001 * 15 / 100) = 150
    let absolute = s.with(&SettingsPatch {
        message_recap_context_type: Some(ContextType::Absolute),
        ..Default::default()
    });
    assert_eq!(absolute.token_limit(), Some(15));
}

#[test]
fn percent_limit_without_context_size_is_invalid() {
    let s = Settings::default().with(&SettingsPatch {
        message_recap_context_limit: Some(10),
        message_recap_context_type: Some(ContextType::Percent),
        ..Default::default()
    });
    let err = s.validate().unwrap_err();
    assert!(err.to_string().contains("max_context_tokens"), "{err}");
    // A PERCENT type without a limit is still "no limit", which is fine.
    let no_limit = Settings::default().with(&SettingsPatch {
        message_recap_context_type: Some(ContextType::Percent),
        ..Default::default()
    });
    assert!(no_limit.validate().is_ok());
    assert_eq!(no_limit.token_limit(), None);
}

#[test]
fn enabled_follows_global_toggle_then_chat_then_default() {
    let s = Settings::default();
    assert!(s.chat_enabled(None));
    assert!(!s.chat_enabled(Some(false)));
    let default_off = s.with(&SettingsPatch {
        default_chat_enabled: Some(false),
        ..Default::default()
    });
    assert!(!default_off.chat_enabled(None));
    assert!(default_off.chat_enabled(Some(true)));
    let global_off = s.with(&SettingsPatch {
        use_global_toggle_state: Some(true),
        global_toggle_state: Some(false),
        ..Default::default()
    });
    assert!(!global_off.chat_enabled(Some(true)));
}

#[test]
fn merge_keeps_absent_fields_and_clear_removes_one() {
    let mut patch = SettingsPatch {
        depth: Some(4),
        scan: Some(true),
        ..Default::default()
    };
    patch.merge(&SettingsPatch {
        depth: Some(7),
        disabled_character_keys: Some(vec![]),
        ..Default::default()
    });
    assert_eq!(patch.depth, Some(7));
    assert_eq!(patch.scan, Some(true));
    assert_eq!(patch.disabled_character_keys, Some(vec![]));
    patch.clear("scan").unwrap();
    assert_eq!(patch.scan, None);
    for name in FIELD_NAMES {
        patch.clear(name).unwrap();
    }
    assert_eq!(patch, SettingsPatch::default());
    assert!(patch.clear("colour").is_err());
}

#[test]
fn range_checks_name_their_field() {
    assert_eq!(check_depth(0), Ok(0));
    assert_eq!(check_depth(1000), Ok(1000));
    assert!(check_depth(1001).unwrap_err().to_string().contains("depth"));
    assert!(check_depth(-1).is_err());
    assert!(check_non_negative("max_context_tokens", -5).is_err());
    assert!(check_scene_count(-1).is_err());
    assert_eq!(check_debounce_ms(0), Ok(0));
    assert!(check_debounce_ms(3_600_001).is_err());
}
