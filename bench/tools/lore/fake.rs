//! The `lore` benchmark's fake OpenAI-compatible LLM: it answers every
//! request at once from the scripted story ([`super::story`]), tells the
//! job kinds apart by the `response_format` schema's name, and logs each
//! request (kind, what it was about, when it came and was answered, its
//! tokens counted with recapd's default tokenizer, o200k_base).
//!
//! - `scene_recap`: `Scene <n>: <the script's recap>` for the newest
//!   scene marker in the prompt.
//! - `running_recap`: the recaps of scenes 1..=n, n the newest scene the
//!   prompt names.
//! - `lore_extract`: the scene's mentions as entities.
//! - `lore_resolve`: the uid of the listing's line naming the entry the
//!   script says the entity is, or null.
//! - `lore_merge`: the story's fact lines of the prompt (the entry's, then
//!   the entity's), each once.
//! - `lore_compact`: the entry's last [`COMPACT_KEEPS`] fact lines.

use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use recapd::domain::settings::TokenizerKind;
use recapd::domain::tokens;
use serde_json::{Value, json};

use super::story::{self, SCENES, Standing};

/// The fact lines a compaction keeps (the newest).
pub const COMPACT_KEEPS: usize = 3;

/// One request the fake answered.
#[derive(Debug, Clone)]
pub struct Served {
    /// The schema's name (`lore_merge`...); `none` without a schema.
    pub kind: String,
    /// What it was about: `scene <n>` for an extraction, the entity's
    /// `<type>-<lowercase name>` for a resolution or merge; empty otherwise.
    pub about: String,
    pub arrived: SystemTime,
    pub answered: SystemTime,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

/// The fake's log, shared with the driver.
#[derive(Default)]
pub struct Fake {
    pub served: Mutex<Vec<Served>>,
}

impl Fake {
    /// Everything served so far.
    pub fn log(&self) -> Vec<Served> {
        self.served.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// The newest `[scene <n>]` or `Scene <n>:` the text names.
fn newest_scene(text: &str) -> Option<usize> {
    (1..=SCENES.len())
        .rev()
        .find(|&n| text.contains(&story::scene_marker(n)) || text.contains(&format!("Scene {n}:")))
}

fn recap_of(n: usize) -> String {
    format!("Scene {n}: {}", SCENES[n - 1].recap)
}

/// `<type>-<lowercase name>`, as recapd names a lore job's subject.
pub fn subject(kind: &str, name: &str) -> String {
    let name: Vec<String> = name.split_whitespace().map(str::to_lowercase).collect();
    format!("{kind}-{}", name.join(" "))
}

/// The story's fact lines of `text`, in order, each once.
fn facts_in(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if story::is_fact(line) && !out.contains(&line) {
            out.push(line);
        }
    }
    out
}

/// The uid on the `{{lore_registry}}` line naming `name` in quotes
/// (`- uid <uid>: <type> "<name>" ...`).
fn uid_of(prompt: &str, name: &str) -> Option<String> {
    let quoted = format!("\"{}\"", name.to_lowercase());
    let line = prompt
        .lines()
        .find(|l| l.to_lowercase().contains(&quoted) && l.contains("uid "))?;
    let after = &line[line.find("uid ")? + 4..];
    let uid: String = after
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != ':')
        .collect();
    (!uid.is_empty()).then_some(uid)
}

/// The answer to one request, and what it was about; `Err` is a reason
/// (answered as a 500: the script does not know the request).
fn answer(kind: &str, prompt: &str) -> Result<(Value, String), String> {
    let scene = newest_scene(prompt);
    let no_scene = || format!("{kind}: no scene marker in the prompt");
    match kind {
        "scene_recap" => {
            let n = scene.ok_or_else(no_scene)?;
            Ok((
                json!({"recap": recap_of(n), "scene_name": format!("Scene {n}")}),
                String::new(),
            ))
        }
        "running_recap" => {
            let n = scene.ok_or_else(no_scene)?;
            let recaps: Vec<String> = (1..=n).map(recap_of).collect();
            Ok((json!({"recap": recaps.join("\n")}), String::new()))
        }
        "lore_extract" => {
            let n = scene.ok_or_else(no_scene)?;
            let entities: Vec<Value> = SCENES[n - 1]
                .mentions
                .iter()
                .map(|m| {
                    json!({"content": m.facts, "keywords": m.keywords, "name": m.name, "type": m.kind})
                })
                .collect();
            Ok((json!({ "entities": entities }), format!("scene {n}")))
        }
        "lore_resolve" => {
            let mention =
                story::mention_in(prompt).ok_or("lore_resolve: no entity of the story")?;
            let uid = match mention.standing {
                Standing::Ambiguous(Some(same)) => Some(
                    uid_of(prompt, same)
                        .ok_or_else(|| format!("lore_resolve: {same} is not in the listing"))?,
                ),
                _ => None,
            };
            Ok((json!({ "uid": uid }), subject(mention.kind, mention.name)))
        }
        "lore_merge" => {
            let mention = story::mention_in(prompt).ok_or("lore_merge: no entity of the story")?;
            let content = facts_in(prompt).join("\n");
            Ok((
                json!({"content": content, "name": Value::Null}),
                subject(mention.kind, mention.name),
            ))
        }
        "lore_compact" => {
            let facts = facts_in(prompt);
            let kept = &facts[facts.len().saturating_sub(COMPACT_KEEPS)..];
            Ok((json!({"content": kept.join("\n")}), String::new()))
        }
        other => Err(format!("no script for requests of schema {other:?}")),
    }
}

/// `POST /v1/chat/completions`.
pub async fn complete(
    State(fake): State<Arc<Fake>>,
    Json(body): Json<Value>,
) -> Result<Json<Value>, (StatusCode, String)> {
    let arrived = SystemTime::now();
    let kind = body["response_format"]["json_schema"]["name"]
        .as_str()
        .unwrap_or("none")
        .to_owned();
    let prompt: String = body["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let (value, about) =
        answer(&kind, &prompt).map_err(|why| (StatusCode::INTERNAL_SERVER_ERROR, why))?;
    let content = value.to_string();
    let tokens_in = u64::from(tokens::count(TokenizerKind::O200kBase, &prompt));
    let tokens_out = u64::from(tokens::count(TokenizerKind::O200kBase, &content));
    let answered = SystemTime::now();
    if let Ok(mut served) = fake.served.lock() {
        served.push(Served {
            kind,
            about,
            arrived,
            answered,
            tokens_in,
            tokens_out,
        });
    }
    Ok(Json(json!({
        "id": "bench-lore",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                  "total_tokens": tokens_in + tokens_out}
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resolution_names_the_uid_of_the_entry_the_script_says() {
        let captain = &SCENES[2].mentions[2];
        let prompt = format!(
            "A scene told this:\n{}\n\n- uid 0: character \"Mara Voss\" (also: mara) - Mara Voss is a sergeant.\n- uid 4: location \"Harbor Market\" - Harbor Market fills the quay.",
            captain.facts.join("\n")
        );
        let (value, about) = answer("lore_resolve", &prompt).expect("scripted");
        assert_eq!(value, json!({"uid": "0"}));
        assert_eq!(about, "character-captain voss");
    }

    #[test]
    fn a_different_entity_resolves_to_null() {
        let gate = &SCENES[3].mentions[2];
        let prompt = format!(
            "{}\n- uid 4: location \"Harbor Market\" - Harbor Market fills the quay.",
            gate.facts[0]
        );
        let (value, _) = answer("lore_resolve", &prompt).expect("scripted");
        assert_eq!(value, json!({"uid": null}));
    }

    #[test]
    fn a_merge_keeps_the_entry_and_adds_the_new_facts_once() {
        let old = SCENES[0].mentions[0].facts;
        let new = SCENES[1].mentions[0].facts;
        let prompt = format!(
            "The entry now:\n{}\n\nA new scene told this about it:\n{}\n{}\n",
            old.join("\n"),
            new.join("\n"),
            old[0]
        );
        let (value, about) = answer("lore_merge", &prompt).expect("scripted");
        let expected: Vec<&str> = old.iter().chain(new.iter()).copied().collect();
        assert_eq!(value["content"], json!(expected.join("\n")));
        assert_eq!(about, "character-mara voss");
    }

    #[test]
    fn an_unknown_schema_is_refused() {
        assert!(answer("scene_break", "[scene 1]").is_err());
        assert!(answer("lore_extract", "no marker").is_err());
    }
}
