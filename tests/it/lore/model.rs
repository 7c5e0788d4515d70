//! The fake model of the lore tests: a careful model that answers the
//! scripted lore prompts ([`super::lore_settings`]) from what they hold,
//! and a script that can hold one request (to act while it runs, or to
//! kill the server before it is answered).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::as_the_model_writes;
use crate::common::fake_llm::{Reply, SeenRequest};

/// The kind line of a scripted prompt (`lore_extract`, `lore_merge`,
/// `scene`...).
pub fn kind_of(prompt: &str) -> &str {
    crate::recap_jobs::kind_of(prompt)
}

/// The `SUBJECT=` line of a scripted resolve, merge or compaction prompt:
/// `<type>-<name>`.
pub fn subject_of(prompt: &str) -> &str {
    prompt
        .lines()
        .find_map(|l| l.strip_prefix("SUBJECT="))
        .unwrap_or("")
}

/// One entity of an extraction's answer.
pub fn entity(kind: &str, name: &str, keywords: &[&str], content: &[&str]) -> Value {
    json!({"type": kind, "name": name, "keywords": keywords, "content": content})
}

/// What the fake model knows of a story: what each scene establishes, and
/// which entry each ambiguous name is.
#[derive(Debug, Clone, Default)]
pub struct Story {
    /// `(needle, entities)`: an extraction whose scene lines hold `needle`
    /// answers `entities` (the first scene that matches).
    pub scenes: Vec<(String, Vec<Value>)>,
    /// `(entity name, entry name)`: a resolution of the entity answers the
    /// uid the registry lists for the entry of that name; `None` (and any
    /// name not here): a new entity.
    pub same_as: Vec<(String, Option<String>)>,
    /// `(entry content needle, canonical name)`: a merge into an entry
    /// whose content holds the needle answers that name.
    pub renames: Vec<(String, String)>,
}

impl Story {
    /// A story of these scenes.
    pub fn of(scenes: &[(&str, Vec<Value>)]) -> Story {
        Story {
            scenes: scenes
                .iter()
                .map(|(needle, entities)| ((*needle).to_owned(), entities.clone()))
                .collect(),
            ..Story::default()
        }
    }

    /// This story where the model says `entity` is the entry named `entry`
    /// (`None`: a new one).
    pub fn same_as(mut self, entity: &str, entry: Option<&str>) -> Story {
        self.same_as
            .push((entity.to_owned(), entry.map(str::to_owned)));
        self
    }

    /// This story where a merge into an entry holding `needle` renames it
    /// `name`.
    pub fn rename(mut self, needle: &str, name: &str) -> Story {
        self.renames.push((needle.to_owned(), name.to_owned()));
        self
    }

    /// The careful model's answer (JSON with prose around it, as models
    /// write) to a scripted prompt.
    pub fn answer(&self, prompt: &str) -> String {
        match kind_of(prompt) {
            "lore_extract" => {
                let (_, entities) = self
                    .scenes
                    .iter()
                    .find(|(needle, _)| prompt.contains(needle.as_str()))
                    .unwrap_or_else(|| panic!("an extraction of an unscripted scene: {prompt}"));
                format!(
                    "Entities of the scene:\n```json\n{}\n```",
                    json!({ "entities": entities })
                )
            }
            "lore_resolve" => {
                let subject = subject_of(prompt);
                let name = subject.split_once('-').map_or("", |(_, n)| n);
                let target = self
                    .same_as
                    .iter()
                    .find(|(entity, _)| entity.eq_ignore_ascii_case(name))
                    .and_then(|(_, entry)| entry.clone());
                let uid = target.map(|entry| {
                    listed_uid(prompt, &entry)
                        .unwrap_or_else(|| panic!("the registry does not list {entry:?}: {prompt}"))
                });
                format!("The answer: {}", json!({ "uid": uid }))
            }
            "lore_merge" => {
                let entry = section(prompt, "ENTRY:", Some("FACTS:"));
                let facts = section(prompt, "FACTS:", None);
                let content = merged(&entry, &facts).join("\n");
                let name = self
                    .renames
                    .iter()
                    .find(|(needle, _)| entry.iter().any(|l| l.contains(needle.as_str())))
                    .map(|(_, name)| name.clone());
                json!({ "content": content, "name": name }).to_string()
            }
            "lore_compact" => {
                let entry = section(prompt, "ENTRY:", None);
                let content: Vec<&str> = entry
                    .iter()
                    .map(String::as_str)
                    .filter(|l| !l.starts_with("(minor)"))
                    .collect();
                format!("Shorter:\n{}", json!({ "content": content.join("\n") }))
            }
            _ => crate::recap_jobs::story_answer(prompt),
        }
    }
}

/// The non-blank lines of a scripted prompt between the line `from` and
/// the line `to` (or the end).
fn section(prompt: &str, from: &str, to: Option<&str>) -> Vec<String> {
    prompt
        .lines()
        .skip_while(|l| *l != from)
        .skip(1)
        .take_while(|l| Some(*l) != to)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The attribute a fact sets (`Title: knight` sets `Title`), if it is one.
fn attribute(line: &str) -> Option<&str> {
    let (attribute, _) = line.split_once(": ")?;
    (!attribute.contains(' ')).then_some(attribute)
}

/// A careful merge: the entry's lines, but those whose attribute a new
/// fact sets and those a fact repeats, then the new facts.
fn merged(entry: &[String], facts: &[String]) -> Vec<String> {
    let superseded: Vec<&str> = facts.iter().filter_map(|f| attribute(f)).collect();
    let mut lines: Vec<String> = entry
        .iter()
        .filter(|l| !attribute(l).is_some_and(|a| superseded.contains(&a)))
        .filter(|l| !facts.contains(l))
        .cloned()
        .collect();
    lines.extend(facts.iter().cloned());
    lines
}

/// The uid the registry listing in `prompt` gives the entry named
/// `name`: the listing's line holding `"<name>"` and `uid <uid>:`.
fn listed_uid(prompt: &str, name: &str) -> Option<String> {
    let quoted = format!("\"{name}\"");
    prompt
        .lines()
        .filter(|l| l.contains(&quoted))
        .find_map(|l| {
            let rest = &l[l.find("uid ")? + 4..];
            let uid: String = rest
                .chars()
                .take_while(|c| !matches!(c, ':' | ' ' | ')'))
                .collect();
            (!uid.is_empty()).then_some(uid)
        })
}

/// The fake's script: the [`Story`] answered at once, except the first
/// request of kind `hold` once [`Script::arm`] was called, which is
/// answered after a pause (so a test can act while it runs, or kill the
/// server before it is answered).
pub struct Script {
    story: Story,
    hold: Option<(&'static str, Duration)>,
    armed: AtomicBool,
    held: AtomicUsize,
}

impl Script {
    /// The story answered at once, always.
    pub fn story(story: Story) -> Arc<Script> {
        Arc::new(Script {
            story,
            hold: None,
            armed: AtomicBool::new(false),
            held: AtomicUsize::new(0),
        })
    }

    /// The story, with the first request of `kind` after [`Script::arm`]
    /// answered only after `pause`.
    pub fn holding(story: Story, kind: &'static str, pause: Duration) -> Arc<Script> {
        Arc::new(Script {
            story,
            hold: Some((kind, pause)),
            armed: AtomicBool::new(false),
            held: AtomicUsize::new(0),
        })
    }

    /// From now on, the next request of the held kind is held.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// How many requests were held so far (0 or 1).
    pub fn held(&self) -> usize {
        self.held.load(Ordering::SeqCst)
    }

    /// Waits (up to 20 s) until the held request has arrived.
    pub async fn wait_held(&self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while self.held() == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the request to hold never came"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The reply to `request`.
    pub fn reply(&self, request: &SeenRequest) -> Reply {
        let answer = Reply::Answer(as_the_model_writes(
            request,
            self.story.answer(&request.prompt),
        ));
        match self.hold {
            Some((held, pause))
                if kind_of(&request.prompt) == held
                    && self.armed.load(Ordering::SeqCst)
                    && self.held.fetch_add(1, Ordering::SeqCst) == 0 =>
            {
                answer.after(pause)
            }
            _ => answer,
        }
    }

    /// This script as the fake's script function.
    pub fn as_fake(self: &Arc<Script>) -> impl Fn(&SeenRequest) -> Reply + Send + Sync + 'static {
        let script = self.clone();
        move |request| script.reply(request)
    }
}

/// The prompts the fake got of lore kind `kind`, in order.
pub fn prompts_of(requests: &[SeenRequest], kind: &str) -> Vec<String> {
    requests
        .iter()
        .filter(|r| kind_of(&r.prompt) == kind)
        .map(|r| r.prompt.clone())
        .collect()
}
