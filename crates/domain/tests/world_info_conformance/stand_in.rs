//! What the oracle gave SillyTavern in place of its tokenizer, its macros
//! and its settings screen; recapd gets the same.

use recapd_domain::world_info::scan::{CharacterStrategy, WorldInfoSettings};
use serde_json::Value;

/// JavaScript's `\s` (the oracle's tokenizer splits on it).
pub(crate) fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// The tokenizer stand-in: whitespace-separated words.
pub(crate) fn count_words(text: &str) -> u32 {
    let n = text.split(js_space).filter(|w| !w.is_empty()).count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The macro stand-in: `{{user}}` then `{{char}}`, ASCII case-insensitive.
pub(crate) fn substitute(text: &str, user: &str, char_name: &str) -> String {
    replace_ci(&replace_ci(text, "{{user}}", user), "{{char}}", char_name)
}

pub(crate) fn replace_ci(text: &str, pattern: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.char_indices().map(|(i, _)| i).find(|&i| {
        rest[i..].len() >= pattern.len()
            && rest.as_bytes()[i..i + pattern.len()].eq_ignore_ascii_case(pattern.as_bytes())
    }) {
        out.push_str(&rest[..i]);
        out.push_str(with);
        rest = &rest[i + pattern.len()..];
    }
    out.push_str(rest);
    out
}

/// SillyTavern's global settings (JS defaults, world-info.js:69-82) with
/// the case's members applied as `setWorldInfoSettings` reads them.
pub(crate) fn settings_from(
    members: &serde_json::Map<String, Value>,
    base: WorldInfoSettings,
) -> WorldInfoSettings {
    let mut s = base;
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let uint = |v: &Value| {
        let n = num(v);
        if n.is_finite() && n > 0.0 {
            n as u32
        } else {
            0
        }
    };
    let truthy = |v: &Value| match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(t) => !t.is_empty(),
        Value::Null => false,
        _ => true,
    };
    for (k, v) in members {
        match k.as_str() {
            "world_info_depth" => s.depth = uint(v),
            "world_info_min_activations" => s.min_activations = uint(v),
            "world_info_min_activations_depth_max" => s.min_activations_depth_max = uint(v),
            "world_info_budget" => s.budget = uint(v),
            "world_info_budget_cap" => s.budget_cap = uint(v),
            "world_info_include_names" => s.include_names = truthy(v),
            "world_info_recursive" => s.recursive = truthy(v),
            "world_info_case_sensitive" => s.case_sensitive = truthy(v),
            "world_info_match_whole_words" => s.match_whole_words = truthy(v),
            "world_info_use_group_scoring" => s.use_group_scoring = truthy(v),
            "world_info_character_strategy" => {
                s.character_strategy = CharacterStrategy::from_st_number(num(v) as i64)
                    .unwrap_or(CharacterStrategy::Evenly)
            }
            "world_info_max_recursion_steps" => s.max_recursion_steps = uint(v),
            other => panic!("the runner knows no setting {other} (add it here)"),
        }
    }
    s
}

pub(crate) fn js_defaults() -> WorldInfoSettings {
    WorldInfoSettings {
        depth: 2,
        min_activations: 0,
        min_activations_depth_max: 0,
        budget: 25,
        budget_cap: 0,
        include_names: true,
        recursive: false,
        case_sensitive: false,
        match_whole_words: false,
        use_group_scoring: false,
        character_strategy: CharacterStrategy::CharacterFirst,
        max_recursion_steps: 0,
        ..WorldInfoSettings::default()
    }
}
