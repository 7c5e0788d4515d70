//! The extension's lorebook settings in [`super::import_st_settings`]. The
//! shapes are those of ST-Auto-Summarize at 5083d00: its own object's keys
//! in defaultSettings.js, the entity types' versions in
//! defaultSettings.js:309-318 and entityTypes.js:13-36, the global lorebook
//! object in settingsManager.js:135-142; the usages below are made up.

use super::*;
use crate::lore::types::EntityType;

/// The types of `lore_entity_types` as `(name, constant, description)`.
fn types_of(imported: &ImportedSettings) -> Vec<(String, bool, String)> {
    let types = imported
        .patch
        .lore_entity_types
        .as_ref()
        .expect("lore_entity_types is set");
    types
        .types()
        .iter()
        .map(
            |EntityType {
                 name,
                 constant,
                 description,
             }| { (name.clone(), *constant, description.clone()) },
        )
        .collect()
}

fn owned(types: &[(&str, bool, &str)]) -> Vec<(String, bool, String)> {
    types
        .iter()
        .map(|(n, c, d)| ((*n).to_owned(), *c, (*d).to_owned()))
        .collect()
}

#[test]
fn the_compaction_threshold_becomes_recapds() {
    // The extension compacts at least its threshold, recapd past it; its 0
    // (every entry) is not recapd's 0 (never).
    for (value, expected) in [("1000", 999), ("\"1500\"", 1499), ("0", 1), ("1", 1)] {
        let json = format!("{{\"auto_lorebooks_compaction_threshold\": {value}}}");
        let imported = import_st_settings(&json).unwrap();
        assert_eq!(
            imported.patch.lore_compaction_threshold,
            Some(expected),
            "{value}"
        );
    }
    let cleared = import_st_settings(r#"{"auto_lorebooks_compaction_threshold": null}"#).unwrap();
    assert_eq!(cleared.clear, ["lore_compaction_threshold"]);
    let err = import_st_settings(r#"{"auto_lorebooks_compaction_threshold": 100001}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid json.auto_lorebooks_compaction_threshold"),
        "{err}"
    );
}

#[test]
fn the_default_entity_types_version_becomes_recapds_lines_without_the_recap_guidance() {
    let imported = import_st_settings(
        r#"{
            "operation_artifacts": {
                "scene_recap": [{"name": "Default", "prompt": "...", "prefill": "{"}],
                "entity_types": [{
                    "name": "Default",
                    "types": [
                        {"name": "recap", "constant": null, "usage": "what goes in the recap", "isGuidanceOnly": true},
                        {"name": "character", "constant": false, "usage": "People with names."},
                        {"name": "location", "constant": false, "usage": "Places:\n  towns,   rooms."},
                        {"name": "rule", "constant": true, "usage": "Rules of play."}
                    ],
                    "defaults": {"exclude_recursion": false, "prevent_recursion": false, "ignore_budget": true, "sticky": 4},
                    "isDefault": true,
                    "internalVersion": 3,
                    "createdAt": 1700000000000,
                    "modifiedAt": 1700000000000,
                    "customLabel": null
                }]
            }
        }"#,
    )
    .unwrap();
    assert_eq!(
        types_of(&imported),
        owned(&[
            ("character", false, "People with names."),
            ("location", false, "Places: towns, rooms."),
            ("rule", true, "Rules of play."),
        ])
    );
    assert_eq!(
        imported.patch.lore_entity_types.unwrap().to_lines()[2],
        "rule(constant): Rules of play."
    );
    assert_eq!(imported.ignored_keys, ["operation_artifacts.scene_recap"]);
}

#[test]
fn the_version_marked_default_is_read_else_the_first() {
    let versions = |first_is_default: bool, second_is_default: bool| {
        format!(
            r#"{{"operation_artifacts": {{"entity_types": [
                {{"name": "v2", "isDefault": {first_is_default}, "types": [{{"name": "person", "constant": false, "usage": ""}}]}},
                {{"name": "Default", "isDefault": {second_is_default}, "types": [{{"name": "place", "constant": false, "usage": ""}}]}}
            ]}}}}"#
        )
    };
    let marked = import_st_settings(&versions(false, true)).unwrap();
    assert_eq!(types_of(&marked), owned(&[("place", false, "")]));
    let unmarked = import_st_settings(&versions(false, false)).unwrap();
    assert_eq!(types_of(&unmarked), owned(&[("person", false, "")]));
}

#[test]
fn older_type_strings_are_read_as_the_extension_cleans_them() {
    let imported = import_st_settings(
        r#"{"autoLorebooks": {
            "entity_types": ["character", "Quest Item(entry:constant)", "side-quest", "CHARACTER", "!!!"],
            "tracking": {}
        }}"#,
    )
    .unwrap();
    assert_eq!(
        types_of(&imported),
        owned(&[
            ("character", false, ""),
            ("quest_item", true, ""),
            ("side_quest", false, ""),
        ]),
        "a repeated name keeps the first; a name with nothing left is dropped"
    );
    assert_eq!(imported.ignored_keys, ["autoLorebooks.tracking"]);
}

#[test]
fn the_versions_win_over_the_older_list() {
    let imported = import_st_settings(
        r#"{
            "autoLorebooks": {"entity_types": ["character", "rule(entry:constant)"]},
            "operation_artifacts": {"entity_types": [{"name": "Default", "isDefault": true, "types": [{"name": "faction", "constant": false, "usage": "Groups."}]}]}
        }"#,
    )
    .unwrap();
    assert_eq!(types_of(&imported), owned(&[("faction", false, "Groups.")]));
}

#[test]
fn an_empty_type_list_is_the_default_types() {
    for json in [
        r#"{"operation_artifacts": {"entity_types": [{"name": "Default", "isDefault": true, "types": []}]}}"#,
        r#"{"autoLorebooks": {"entity_types": []}}"#,
    ] {
        let imported = import_st_settings(json).unwrap();
        assert_eq!(imported.clear, ["lore_entity_types"], "{json}");
        assert_eq!(imported.patch.lore_entity_types, None, "{json}");
    }
    let untouched = import_st_settings(r#"{"operation_artifacts": {"scene_recap": []}}"#).unwrap();
    assert!(untouched.clear.is_empty());
    assert_eq!(untouched.patch, SettingsPatch::default());
}

#[test]
fn entity_types_recapd_cannot_keep_are_refused_naming_the_type() {
    let long = "x".repeat(301);
    let too_long = format!(
        r#"{{"operation_artifacts": {{"entity_types": [{{"isDefault": true, "types": [
            {{"name": "character", "constant": false, "usage": "People."}},
            {{"name": "place", "constant": false, "usage": "{long}"}}
        ]}}]}}}}"#
    );
    let only_guidance = r#"{"operation_artifacts": {"entity_types": [{"isDefault": true, "types": [
        {"name": "recap", "usage": "", "isGuidanceOnly": true}
    ]}]}}"#;
    for (json, key) in [
        (
            too_long.as_str(),
            "json.operation_artifacts.entity_types[0].types[1]",
        ),
        (
            only_guidance,
            "json.operation_artifacts.entity_types[0].types",
        ),
        (
            r#"{"autoLorebooks": {"entity_types": [3]}}"#,
            "json.autoLorebooks.entity_types[0]",
        ),
        (
            r#"{"operation_artifacts": {"entity_types": {}}}"#,
            "json.operation_artifacts.entity_types",
        ),
        (r#"{"operation_artifacts": []}"#, "json.operation_artifacts"),
    ] {
        let err = import_st_settings(json).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!("invalid {key}")),
            "{json}: {err}"
        );
    }
}

#[test]
fn settings_json_brings_the_books_name_template_and_its_deletion_with_the_chat() {
    let imported = import_st_settings(
        r#"{
            "world_info_settings": {"world_info_depth": 2},
            "extension_settings": {
                "auto_recap": {"auto_hide_scene_count": 1},
                "autoLorebooks": {
                    "nameTemplate": "z-AutoLB-{{ char }}-{{chat}} {{user}}",
                    "deleteOnChatDelete": false,
                    "autoReorderAlphabetically": true,
                    "entity_types": [{"name": "character", "constant": false, "usage": ""}]
                }
            }
        }"#,
    )
    .unwrap();
    let p = &imported.patch;
    assert_eq!(
        p.lore_book_name_template.as_deref(),
        Some("z-AutoLB-{{char}}-{{chat}} {{user}}")
    );
    assert_eq!(p.lore_delete_book_with_chat, Some(false));
    assert_eq!(
        p.lore_entity_types, None,
        "the extension reads the types from its own object, not this one"
    );
    assert_eq!(
        p.auto_hide_scene_count, None,
        "its own object is another call"
    );
    assert_eq!(
        imported.ignored_keys,
        [
            "extension_settings.autoLorebooks.autoReorderAlphabetically",
            "extension_settings.autoLorebooks.entity_types",
            "extension_settings.auto_recap",
        ]
    );
}

#[test]
fn an_empty_or_null_name_template_and_a_null_deletion_are_recapds_defaults() {
    for template in ["\"\"", "\"  \"", "null"] {
        let json = format!(
            r#"{{"extension_settings": {{"autoLorebooks": {{"nameTemplate": {template}, "deleteOnChatDelete": null}}}}}}"#
        );
        let imported = import_st_settings(&json).unwrap();
        assert_eq!(
            imported.clear,
            ["lore_book_name_template", "lore_delete_book_with_chat"],
            "{template}"
        );
    }
    let written_as_string = import_st_settings(
        r#"{"extension_settings": {"autoLorebooks": {"deleteOnChatDelete": "false"}}}"#,
    )
    .unwrap();
    assert_eq!(
        written_as_string.patch.lore_delete_book_with_chat,
        Some(false)
    );
    let err =
        import_st_settings(r#"{"extension_settings": {"autoLorebooks": {"nameTemplate": 1}}}"#)
            .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid json.extension_settings.autoLorebooks.nameTemplate"),
        "{err}"
    );
}

#[test]
fn the_extensions_unread_lorebook_defaults_are_ignored_and_nothing_turns_lore_on() {
    let imported = import_st_settings(
        r#"{
            "auto_lorebooks_name_template": "z-AutoLB-{{char}}-{{chat}}",
            "auto_lorebooks_delete_on_chat_delete": false,
            "auto_lorebooks_entry_sticky": 4,
            "auto_scene_break_generate_recap": true
        }"#,
    )
    .unwrap();
    assert_eq!(
        imported.ignored_keys,
        [
            "auto_lorebooks_delete_on_chat_delete",
            "auto_lorebooks_entry_sticky",
            "auto_lorebooks_name_template",
        ]
    );
    let p = &imported.patch;
    assert_eq!(
        (
            p.lore_book_name_template.as_deref(),
            p.lore_delete_book_with_chat
        ),
        (None, None)
    );
    assert_eq!(p.auto_lore, None);
    assert_eq!(p.auto_scene_recap, Some(true));
}
