use super::*;

#[test]
fn reads_prompts_numbers_and_enums() {
    let json: Value = serde_json::from_str(
        r#"{"scene_break_prompt": "P {{messages}}", "scene_break_min_messages": 3,
            "llm_structured_output": "json_schema", "role": "INJECTION_ROLE_USER",
            "llm_temperature": 0.2}"#,
    )
    .unwrap();
    let s = from_json(json.as_object().unwrap()).unwrap();
    assert_eq!(s.scene_break_prompt.as_deref(), Some("P {{messages}}"));
    assert_eq!(s.scene_break_min_messages, Some(3));
    assert_eq!(
        s.llm_structured_output,
        Some(pb::StructuredOutput::JsonSchema as i32)
    );
    assert_eq!(s.role, Some(pb::InjectionRole::User as i32));
    assert_eq!(s.llm_temperature, Some(0.2));
}

#[test]
fn refuses_unknown_keys_and_wrong_types() {
    for bad in [
        r#"{"no_such_setting": 1}"#,
        r#"{"scene_break_offset": "eight"}"#,
        r#"{"llm_structured_output": "SOMETIMES"}"#,
        r#"{"depth": 99999999999}"#,
    ] {
        let json: Value = serde_json::from_str(bad).unwrap();
        let error = from_json(json.as_object().unwrap())
            .unwrap_err()
            .to_string();
        let key = json.as_object().unwrap().keys().next().unwrap().clone();
        assert!(error.contains(&key), "{error}");
    }
}

#[test]
fn reads_the_lore_settings() {
    let json: Value = serde_json::from_str(
        r#"{"auto_lore": true, "lore_compaction_threshold": 300,
            "lore_entity_types": ["character: a person", "rule(constant): a law"]}"#,
    )
    .unwrap();
    let s = from_json(json.as_object().unwrap()).unwrap();
    assert_eq!(s.auto_lore, Some(true));
    assert_eq!(s.lore_compaction_threshold, Some(300));
    assert_eq!(
        s.lore_entity_types.map(|t| t.values),
        Some(vec![
            "character: a person".into(),
            "rule(constant): a law".into()
        ])
    );
    let bad: Value = serde_json::from_str(r#"{"lore_entity_types": "character"}"#).unwrap();
    assert!(from_json(bad.as_object().unwrap()).is_err());
}
