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
    assert_eq!(s.injection.position, Position::BeforePrompt);
    assert_eq!(s.injection.depth, 2);
    assert_eq!(s.injection.role, Role::System);
    assert!(!s.injection.scan);
    assert!(s.injection.template.starts_with("# Story Memory"));
    assert!(s.injection.template.ends_with("{{running_recap}}"));
    assert!(
        s.inclusion.include_user_messages
            && s.inclusion.include_system_messages
            && s.inclusion.include_narrator_messages
    );
    assert_eq!(s.inclusion.message_length_threshold, 0);
    assert_eq!(s.token_limit(), None);
    assert_eq!(s.inclusion.auto_hide_scene_count, 2);
    assert!(!s.inclusion.show_prefill);
    assert!(
        s.chat.default_chat_enabled
            && !s.chat.use_global_toggle_state
            && s.chat.global_toggle_state
    );
    assert_eq!(s.inclusion.tokenizer, TokenizerKind::O200kBase);
    assert_eq!(s.chat.debounce_ms, 300);
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

#[test]
fn world_info_defaults_are_sillytaverns_code_defaults() {
    // world-info.js:69-82 at 51ad27f (the code's defaults; docs/settings.md
    // says why not the shipped settings.json's).
    let s = Settings::default();
    assert_eq!(s.world_info.depth, 2);
    assert_eq!(s.world_info.min_activations, 0);
    assert_eq!(s.world_info.min_activations_depth_max, 0);
    assert_eq!(s.world_info.budget, 25);
    assert_eq!(s.world_info.budget_cap, 0);
    assert!(s.world_info.include_names);
    assert!(!s.world_info.recursive);
    assert!(!s.world_info.case_sensitive);
    assert!(!s.world_info.match_whole_words);
    assert!(!s.world_info.use_group_scoring);
    assert_eq!(
        s.world_info.character_strategy,
        CharacterStrategy::CharacterFirst
    );
    assert_eq!(s.world_info.max_recursion_steps, 0);
    assert_eq!(s.world_info.global_books, BookNames::default());
    assert_eq!(s.world_info.character_books, BookNames::default());
    assert_eq!(s.world_info.chat_book, "");
    assert_eq!(s.world_info.persona_book, "");
}

#[test]
fn world_info_ranges_are_sillytaverns_settings_panel() {
    // The sliders of public/index.html:4712-4756 at 51ad27f: each bound is
    // accepted, one past it refused, naming the field.
    type Bound = (&'static str, i32, i32, fn(i32) -> ApiSettings);
    let bounds: [Bound; 6] = [
        ("world_info_depth", 0, 1000, |v| ApiSettings {
            world_info_depth: Some(v),
            ..Default::default()
        }),
        ("world_info_min_activations", 0, 100, |v| ApiSettings {
            world_info_min_activations: Some(v),
            ..Default::default()
        }),
        ("world_info_min_activations_depth_max", 0, 100, |v| {
            ApiSettings {
                world_info_min_activations_depth_max: Some(v),
                ..Default::default()
            }
        }),
        ("world_info_budget", 1, 100, |v| ApiSettings {
            world_info_budget: Some(v),
            ..Default::default()
        }),
        ("world_info_budget_cap", 0, 65536, |v| ApiSettings {
            world_info_budget_cap: Some(v),
            ..Default::default()
        }),
        ("world_info_max_recursion_steps", 0, 10, |v| ApiSettings {
            world_info_max_recursion_steps: Some(v),
            ..Default::default()
        }),
    ];
    for (name, low, high, api) in bounds {
        for ok in [low, high] {
            let patch = SettingsPatch::from_api(api(ok)).unwrap();
            let stored = serde_json::to_value(&patch).unwrap();
            assert_eq!(stored[name], serde_json::json!(ok), "{name} = {ok}");
        }
        for bad in [low - 1, high + 1] {
            let err = SettingsPatch::from_api(api(bad)).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("invalid settings.{name}: {bad} is outside {low}..={high}")
            );
        }
    }
}

#[test]
fn book_settings_take_valid_names_and_empty_means_none() {
    let patch = SettingsPatch::from_api(ApiSettings {
        world_info_global_books: Some(BookNames(vec!["Eldoria".into(), "ดาบ 剣".into()])),
        world_info_character_books: Some(BookNames(vec![])),
        world_info_chat_book: Some(String::new()),
        world_info_persona_book: Some("Me".into()),
        ..Default::default()
    })
    .unwrap();
    let s = Settings::default().with(&patch);
    assert_eq!(s.world_info.global_books.names(), ["Eldoria", "ดาบ 剣"]);
    assert!(s.world_info.character_books.names().is_empty());
    assert_eq!(
        (
            s.world_info.chat_book.as_str(),
            s.world_info.persona_book.as_str()
        ),
        ("", "Me")
    );

    let refused = |api: ApiSettings| SettingsPatch::from_api(api).unwrap_err().to_string();
    assert_eq!(
        refused(ApiSettings {
            world_info_global_books: Some(BookNames(vec!["a".into(), String::new()])),
            ..Default::default()
        }),
        "invalid settings.world_info_global_books[1]: a book name must not be empty"
    );
    assert_eq!(
        refused(ApiSettings {
            world_info_character_books: Some(BookNames(vec!["x".repeat(257)])),
            ..Default::default()
        }),
        "invalid settings.world_info_character_books[0]: a book name has at most 256 bytes, not 257"
    );
    assert_eq!(
        refused(ApiSettings {
            world_info_chat_book: Some("a\nb".into()),
            ..Default::default()
        }),
        "invalid settings.world_info_chat_book: the book name \"a\\nb\" has a control character"
    );
    assert_eq!(
        refused(ApiSettings {
            world_info_global_books: Some(BookNames(vec!["b".into(); MAX_BOOKS_PER_LIST + 1])),
            ..Default::default()
        }),
        "invalid settings.world_info_global_books: 1001 books is over the maximum of 1000"
    );
}

#[test]
fn world_info_settings_store_as_json_keys_and_read_back() {
    let patch = SettingsPatch {
        world_info_character_strategy: Some(CharacterStrategy::GlobalFirst),
        world_info_global_books: Some(BookNames(vec!["A".into()])),
        world_info_chat_book: Some("C".into()),
        ..Default::default()
    };
    let json = serde_json::to_value(&patch).unwrap();
    assert_eq!(json["world_info_character_strategy"], "GlobalFirst");
    assert_eq!(json["world_info_global_books"], serde_json::json!(["A"]));
    assert_eq!(json["world_info_chat_book"], "C");
    assert_eq!(json["world_info_persona_book"], serde_json::Value::Null);
    let back: SettingsPatch = serde_json::from_value(json).unwrap();
    assert_eq!(back, patch);
}

#[test]
fn sillytavern_strategy_numbers() {
    // world_info_insertion_strategy, world-info.js:27-31 at 51ad27f.
    for (number, strategy) in [
        (0, CharacterStrategy::Evenly),
        (1, CharacterStrategy::CharacterFirst),
        (2, CharacterStrategy::GlobalFirst),
    ] {
        assert_eq!(CharacterStrategy::from_st_number(number), Some(strategy));
        assert_eq!(strategy.st_number(), number);
    }
    assert_eq!(CharacterStrategy::from_st_number(3), None);
    assert_eq!(CharacterStrategy::from_st_number(-1), None);
}
