//! The fixtures' format: one case, its books, its scans and SillyTavern's
//! expected output per scan (written by tools/st-oracle).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The fixtures' directory.
pub(crate) fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/world_info/conformance")
}

/// A book's `entries` in the order the file writes them, each entry's
/// text as written (its hash covers the text in key order).
pub(crate) struct OrderedEntries(pub(crate) Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for OrderedEntries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<OrderedEntries, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Box<RawValue>>()? {
                    out.push((k, v));
                }
                Ok(OrderedEntries(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// A book file as the cases hold it (other members ignored, as the scan does).
#[derive(Deserialize)]
pub(crate) struct BookFile {
    pub(crate) entries: OrderedEntries,
}

/// A book's name and its entries in an order: a list keeps the cases' book order.
pub(crate) struct Books(pub(crate) Vec<(String, BookFile)>);

impl<'de> Deserialize<'de> for Books {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Books;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of books")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Books, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, BookFile>()? {
                    out.push((k, v));
                }
                Ok(Books(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The chat's character: its name ({{char}}), avatar file (character
/// filters compare its name without extension) and tags.
#[derive(Deserialize)]
pub(crate) struct Character {
    pub(crate) name: String,
    pub(crate) avatar: String,
    #[serde(default)]
    pub(crate) tags: Vec<String>,
}

/// One chat message; `is_system` ones are hidden and never scanned.
#[derive(Deserialize)]
pub(crate) struct Message {
    pub(crate) name: String,
    pub(crate) text: String,
    #[serde(default)]
    pub(crate) is_system: bool,
}

/// One extension prompt; its text is scanned when `scan` is set.
#[derive(Deserialize)]
pub(crate) struct Prompt {
    pub(crate) value: String,
    pub(crate) scan: bool,
}

/// The texts entries' `match*` flags add to their haystack.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Texts {
    pub(crate) persona_description: String,
    pub(crate) character_description: String,
    pub(crate) character_personality: String,
    pub(crate) character_depth_prompt: String,
    pub(crate) scenario: String,
    pub(crate) creator_notes: String,
}

/// One scan of a case: its input (books and settings it replaces from
/// then on) and SillyTavern's output (`expected`).
#[derive(Deserialize)]
pub(crate) struct Scan {
    pub(crate) messages: Vec<Message>,
    #[serde(default)]
    pub(crate) generation_type: Option<String>,
    #[serde(default)]
    pub(crate) dry_run: bool,
    #[serde(default)]
    pub(crate) global_texts: Texts,
    #[serde(default)]
    pub(crate) extension_prompts: Vec<Prompt>,
    #[serde(default)]
    pub(crate) books: Option<Books>,
    #[serde(default)]
    pub(crate) settings: Option<serde_json::Map<String, Value>>,
    pub(crate) expected: Value,
}

/// One case: the world it runs in and its scans, in order.
#[derive(Deserialize)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) about: String,
    pub(crate) user: String,
    pub(crate) character: Option<Character>,
    pub(crate) books: Books,
    /// Books given as file text, parsed by the runner as written.
    #[serde(default)]
    pub(crate) books_raw: BTreeMap<String, String>,
    pub(crate) global_books: Vec<String>,
    pub(crate) character_books: Vec<String>,
    pub(crate) chat_book: Option<String>,
    pub(crate) persona_book: Option<String>,
    pub(crate) settings: serde_json::Map<String, Value>,
    pub(crate) max_context: u32,
    #[serde(default)]
    pub(crate) timed_initial: Option<Value>,
    pub(crate) scans: Vec<Scan>,
}
