//! SillyTavern's own World Info settings through [`super::import_st_settings`].

use super::*;
use crate::settings::{BookNames, CharacterStrategy};

/// SillyTavern's shipped `default/content/settings.json` at 51ad27f,
/// shortened: every top-level key it has, in its order, its
/// `world_info_settings` whole (lines 10-22), and of the large objects a
/// few members each.
const SHIPPED: &str = r#"{
    "firstRun": true,
    "username": "User",
    "api_server": "http://127.0.0.1:5000/api",
    "preset_settings": "RecoveredRuins",
    "user_avatar": "user-default.png",
    "amount_gen": 350,
    "max_context": 8192,
    "main_api": "koboldhorde",
    "world_info_settings": {
        "world_info": {
            "globalSelect": []
        },
        "world_info_depth": 2,
        "world_info_budget": 25,
        "world_info_include_names": true,
        "world_info_recursive": true,
        "world_info_overflow_alert": false,
        "world_info_case_sensitive": false,
        "world_info_match_whole_words": true,
        "world_info_character_strategy": 1,
        "world_info_budget_cap": 0
    },
    "textgenerationwebui_settings": {"temp": 1},
    "swipes": true,
    "horde_settings": {"models": []},
    "power_user": {"persona_description": "", "default_persona": null},
    "extension_settings": {"note": {"default": ""}},
    "tags": [],
    "tag_map": {},
    "nai_settings": {"temperature": 0.5},
    "kai_settings": {"temp": 1},
    "oai_settings": {"openai_max_context": 4095}
}"#;

#[test]
fn the_shipped_settings_json_sets_its_world_info_settings() {
    let imported = import_st_settings(SHIPPED).unwrap();
    let p = &imported.patch;
    // default/content/settings.json:10-22 at 51ad27f.
    assert_eq!(p.world_info_depth, Some(2));
    assert_eq!(p.world_info_budget, Some(25));
    assert_eq!(p.world_info_include_names, Some(true));
    assert_eq!(p.world_info_recursive, Some(true));
    assert_eq!(p.world_info_case_sensitive, Some(false));
    assert_eq!(p.world_info_match_whole_words, Some(true));
    assert_eq!(
        p.world_info_character_strategy,
        Some(CharacterStrategy::CharacterFirst)
    );
    assert_eq!(p.world_info_budget_cap, Some(0));
    assert_eq!(p.world_info_global_books, Some(BookNames(vec![])));
    // Keys the file does not have change nothing.
    assert_eq!(p.world_info_min_activations, None);
    assert_eq!(p.world_info_max_recursion_steps, None);
    assert_eq!(p.world_info_persona_book, None);
    // Nothing of the extension's settings.
    assert_eq!(p.position, None);
    assert!(imported.clear.is_empty());
    assert_eq!(
        imported.ignored_keys,
        [
            "amount_gen",
            "api_server",
            "extension_settings.note",
            "firstRun",
            "horde_settings",
            "kai_settings",
            "main_api",
            "max_context",
            "nai_settings",
            "oai_settings",
            "power_user.default_persona",
            "power_user.persona_description",
            "preset_settings",
            "swipes",
            "tag_map",
            "tags",
            "textgenerationwebui_settings",
            "user_avatar",
            "username",
            "world_info_settings.world_info_overflow_alert",
        ]
    );
}

#[test]
fn every_key_getworldinfosettings_saves_maps_to_its_setting() {
    // The object world-info.js:795-812 saves (script.js:8021), every
    // value off its default, with the books SillyTavern keeps in
    // `world_info` (:85 globalSelect; charLore per character file) and the
    // persona's book (power-user.js:294, set at personas.js:1298).
    let imported = import_st_settings(
        r#"{
            "world_info_settings": {
                "world_info": {
                    "globalSelect": ["Eldoria", "ดาบ"],
                    "charLore": [{"name": "Seraphina.png", "extraBooks": ["Forest"]}]
                },
                "world_info_depth": 5,
                "world_info_min_activations": 3,
                "world_info_min_activations_depth_max": 20,
                "world_info_budget": 40,
                "world_info_include_names": false,
                "world_info_recursive": true,
                "world_info_overflow_alert": true,
                "world_info_case_sensitive": true,
                "world_info_match_whole_words": true,
                "world_info_character_strategy": 2,
                "world_info_budget_cap": 2048,
                "world_info_use_group_scoring": true,
                "world_info_max_recursion_steps": 4
            },
            "power_user": {"persona_description_lorebook": "Me and mine"}
        }"#,
    )
    .unwrap();
    let p = &imported.patch;
    assert_eq!(
        p.world_info_global_books,
        Some(BookNames(vec!["Eldoria".into(), "ดาบ".into()]))
    );
    assert_eq!(
        (
            p.world_info_depth,
            p.world_info_min_activations,
            p.world_info_min_activations_depth_max,
            p.world_info_budget,
            p.world_info_budget_cap,
            p.world_info_max_recursion_steps,
        ),
        (Some(5), Some(3), Some(20), Some(40), Some(2048), Some(4))
    );
    assert_eq!(
        (
            p.world_info_include_names,
            p.world_info_recursive,
            p.world_info_case_sensitive,
            p.world_info_match_whole_words,
            p.world_info_use_group_scoring,
        ),
        (Some(false), Some(true), Some(true), Some(true), Some(true))
    );
    assert_eq!(
        p.world_info_character_strategy,
        Some(CharacterStrategy::GlobalFirst)
    );
    assert_eq!(p.world_info_persona_book.as_deref(), Some("Me and mine"));
    assert_eq!(
        imported.ignored_keys,
        [
            "world_info_settings.world_info.charLore",
            "world_info_settings.world_info_overflow_alert",
        ]
    );
}

#[test]
fn the_world_info_settings_object_alone_is_read_as_sillytavern_falls_back_to_it() {
    // script.js:7954: `settings.world_info_settings ?? settings`.
    let imported = import_st_settings(
        r#"{"world_info": {"globalSelect": ["A"]}, "world_info_depth": "7", "world_info_recursive": "true"}"#,
    )
    .unwrap();
    assert_eq!(imported.patch.world_info_depth, Some(7));
    assert_eq!(imported.patch.world_info_recursive, Some(true));
    assert_eq!(
        imported.patch.world_info_global_books,
        Some(BookNames(vec!["A".into()]))
    );
    assert!(imported.ignored_keys.is_empty());
}

#[test]
fn with_world_info_settings_present_the_top_level_keys_are_ignored() {
    // script.js:7954: the nested object wins whole.
    let imported = import_st_settings(
        r#"{"world_info_depth": 9, "world_info": ["Old"], "world_info_settings": {"world_info_depth": 3}}"#,
    )
    .unwrap();
    assert_eq!(imported.patch.world_info_depth, Some(3));
    assert_eq!(imported.patch.world_info_global_books, None);
    assert_eq!(imported.ignored_keys, ["world_info", "world_info_depth"]);
    // A null `world_info_settings` is missing: the top level is read.
    let imported =
        import_st_settings(r#"{"world_info_depth": 9, "world_info_settings": null}"#).unwrap();
    assert_eq!(imported.patch.world_info_depth, Some(9));
}

#[test]
fn the_older_forms_of_the_global_books_are_read() {
    // world-info.js:955-962: a string is one book, a list the books.
    let one = import_st_settings(r#"{"world_info_settings": {"world_info": "Eldoria"}}"#).unwrap();
    assert_eq!(
        one.patch.world_info_global_books,
        Some(BookNames(vec!["Eldoria".into()]))
    );
    let list =
        import_st_settings(r#"{"world_info_settings": {"world_info": ["A", "B"]}}"#).unwrap();
    assert_eq!(
        list.patch.world_info_global_books,
        Some(BookNames(vec!["A".into(), "B".into()]))
    );
}

#[test]
fn a_budget_over_100_is_sillytaverns_migrated_25() {
    // world-info.js:945-948.
    for (written, budget) in [("101", 25), ("500", 25), ("100", 100), ("1", 1)] {
        let imported = import_st_settings(&format!(
            r#"{{"world_info_settings": {{"world_info_budget": {written}}}}}"#
        ))
        .unwrap();
        assert_eq!(imported.patch.world_info_budget, Some(budget), "{written}");
    }
}

#[test]
fn nulls_clear_and_an_empty_persona_book_is_none() {
    let imported = import_st_settings(
        r#"{
            "world_info_settings": {"world_info_depth": null, "world_info": {"globalSelect": null}},
            "power_user": {"persona_description_lorebook": null}
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.clear,
        [
            "world_info_depth",
            "world_info_global_books",
            "world_info_persona_book"
        ]
    );
    // power-user.js:294: '' is SillyTavern's "no persona book".
    let empty =
        import_st_settings(r#"{"power_user": {"persona_description_lorebook": ""}}"#).unwrap();
    assert_eq!(empty.patch.world_info_persona_book.as_deref(), Some(""));
}

#[test]
fn values_outside_the_settings_panel_or_not_names_are_refused_naming_the_key() {
    // The ranges of public/index.html:4712-4756 at 51ad27f.
    for (json, message) in [
        (
            r#"{"world_info_settings": {"world_info_depth": 1001}}"#,
            "invalid json.world_info_settings.world_info_depth: 1001 is outside 0..=1000",
        ),
        (
            r#"{"world_info_settings": {"world_info_budget": 0}}"#,
            "invalid json.world_info_settings.world_info_budget: 0 is outside 1..=100",
        ),
        (
            r#"{"world_info_settings": {"world_info_max_recursion_steps": 11}}"#,
            "invalid json.world_info_settings.world_info_max_recursion_steps: 11 is outside 0..=10",
        ),
        (
            r#"{"world_info_budget_cap": 65537}"#,
            "invalid json.world_info_budget_cap: 65537 is outside 0..=65536",
        ),
        (
            r#"{"world_info_settings": {"world_info_character_strategy": 3}}"#,
            "invalid json.world_info_settings.world_info_character_strategy: 3 is not a SillyTavern strategy (0, 1 or 2)",
        ),
        (
            r#"{"world_info_settings": {"world_info_recursive": "yes"}}"#,
            "invalid json.world_info_settings.world_info_recursive: must be true or false",
        ),
        (
            r#"{"world_info_settings": {"world_info": {"globalSelect": ["A", 3]}}}"#,
            "invalid json.world_info_settings.world_info.globalSelect[1]: must be a book name (a string)",
        ),
        (
            r#"{"world_info_settings": {"world_info": {"globalSelect": [""]}}}"#,
            "invalid json.world_info_settings.world_info.globalSelect[0]: a book name must not be empty",
        ),
        (
            r#"{"world_info_settings": {"world_info": 5}}"#,
            "invalid json.world_info_settings.world_info: must be an object with globalSelect, a list of book names or a book name",
        ),
        (
            r#"{"world_info_settings": [1]}"#,
            "invalid json.world_info_settings: must be an object",
        ),
        (
            r#"{"power_user": {"persona_description_lorebook": 1}}"#,
            "invalid json.power_user.persona_description_lorebook: must be a book name (a string)",
        ),
    ] {
        assert_eq!(
            import_st_settings(json).unwrap_err().to_string(),
            message,
            "{json}"
        );
    }
}
