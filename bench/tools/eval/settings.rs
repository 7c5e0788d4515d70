//! The `--settings` file: a JSON object of settings overrides, keyed by the
//! field names of `recap.v1.Settings` (`scene_break_prompt`,
//! `scene_break_min_messages`, `llm_structured_output`...). Enum values are
//! written by their proto names, with or without the enum's prefix
//! (`"JSON_SCHEMA"` or `"STRUCTURED_OUTPUT_JSON_SCHEMA"`).

use recapd::grpc::pb;
use serde_json::{Map, Value};

type Error = Box<dyn std::error::Error>;

/// The overrides of a settings file, as an UpdateSettings' `settings`.
/// Unknown keys and values of the wrong type are errors naming the key.
pub fn from_json(object: &Map<String, Value>) -> Result<pb::Settings, Error> {
    let mut s = pb::Settings::default();
    for (key, value) in object {
        let bad = || -> Error { format!("settings file: {key}: unexpected value {value}").into() };
        let text = || value.as_str().map(str::to_owned).ok_or_else(bad);
        let int = || value.as_i64().ok_or_else(bad);
        let int32 = || int().and_then(|v| i32::try_from(v).map_err(|_| bad()));
        let boolean = || value.as_bool().ok_or_else(bad);
        let float = || value.as_f64().ok_or_else(bad);
        let name = || value.as_str().map(str::to_ascii_uppercase).ok_or_else(bad);
        macro_rules! enumerated {
            ($ty:ty, $prefix:literal) => {{
                let n = name()?;
                let full = if n.starts_with($prefix) {
                    n
                } else {
                    format!("{}{}", $prefix, n)
                };
                <$ty>::from_str_name(&full).ok_or_else(bad)? as i32
            }};
        }
        match key.as_str() {
            "position" => {
                s.position = Some(enumerated!(pb::InjectionPosition, "INJECTION_POSITION_"))
            }
            "depth" => s.depth = Some(int32()?),
            "role" => s.role = Some(enumerated!(pb::InjectionRole, "INJECTION_ROLE_")),
            "template" => s.template = Some(text()?),
            "max_context_tokens" => s.max_context_tokens = Some(int()?),
            "tokenizer" => s.tokenizer = Some(enumerated!(pb::Tokenizer, "TOKENIZER_")),
            "auto_hide_scene_count" => s.auto_hide_scene_count = Some(int32()?),
            "scene_break_offset" => s.scene_break_offset = Some(int32()?),
            "scene_break_min_messages" => s.scene_break_min_messages = Some(int32()?),
            "auto_scene_recap" => s.auto_scene_recap = Some(boolean()?),
            "auto_running_recap" => s.auto_running_recap = Some(boolean()?),
            "scene_break_prompt" => s.scene_break_prompt = Some(text()?),
            "scene_recap_prompt" => s.scene_recap_prompt = Some(text()?),
            "running_recap_prompt" => s.running_recap_prompt = Some(text()?),
            "message_recap_prompt" => s.message_recap_prompt = Some(text()?),
            "llm_model" => s.llm_model = Some(text()?),
            "llm_max_tokens" => s.llm_max_tokens = Some(int()?),
            "llm_temperature" => s.llm_temperature = Some(float()?),
            "llm_structured_output" => {
                s.llm_structured_output =
                    Some(enumerated!(pb::StructuredOutput, "STRUCTURED_OUTPUT_"))
            }
            "llm_max_tokens_field" => {
                s.llm_max_tokens_field = Some(enumerated!(pb::MaxTokensField, "MAX_TOKENS_FIELD_"))
            }
            "running_recap_min_ratio" => s.running_recap_min_ratio = Some(float()?),
            "auto_lore" => s.auto_lore = Some(boolean()?),
            "lore_extract_prompt" => s.lore_extract_prompt = Some(text()?),
            "lore_resolve_prompt" => s.lore_resolve_prompt = Some(text()?),
            "lore_merge_prompt" => s.lore_merge_prompt = Some(text()?),
            "lore_compact_prompt" => s.lore_compact_prompt = Some(text()?),
            "lore_entity_types" => {
                let lines = value.as_array().ok_or_else(bad)?;
                let values = lines
                    .iter()
                    .map(|l| l.as_str().map(str::to_owned).ok_or_else(bad))
                    .collect::<Result<Vec<_>, _>>()?;
                s.lore_entity_types = Some(pb::StringList { values });
            }
            "lore_compaction_threshold" => s.lore_compaction_threshold = Some(int32()?),
            "lore_max_entries" => s.lore_max_entries = Some(int32()?),
            "lore_max_keys" => s.lore_max_keys = Some(int32()?),
            _ => {
                return Err(format!(
                    "settings file: {key} is not a setting the evaluation can set (see docs/evaluation.md)"
                )
                .into());
            }
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests;
