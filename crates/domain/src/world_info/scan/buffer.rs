//! The text a scan matches keys against (`WorldInfoBuffer`,
//! world-info.js:199-476), built once per pass for each different shape.

use std::collections::HashMap;

use crate::world_info::entry::{Entry, MatchExtras, is_js_space};

use super::GlobalTexts;

/// Most messages a scan reads (`MAX_SCAN_DEPTH`, world-info.js:98).
pub(crate) const MAX_SCAN_DEPTH: usize = 1000;
/// Put before every message and text (`MATCHER`, world-info.js:297).
const MATCHER: &str = "\u{1}";
/// Joins them (`JOINER`).
const JOINER: &str = "\n\u{1}";

/// One haystack and, made when first asked, its lowercase form.
#[derive(Debug)]
pub(crate) struct Haystack {
    /// As built.
    pub(crate) raw: String,
    lower: Option<String>,
}

impl Haystack {
    /// JavaScript's `toLowerCase` of it (Rust's `to_lowercase`: the same
    /// Unicode mapping, final sigma included).
    pub(crate) fn lower(&mut self) -> &str {
        self.lower.get_or_insert_with(|| self.raw.to_lowercase())
    }
}

/// The scan's buffer: messages newest first, injected prompts, the
/// recursion buffer and the min-activations skew.
pub(crate) struct Buffer<'a> {
    /// Trimmed messages, newest first, at most [`MAX_SCAN_DEPTH`].
    depth_buffer: Vec<String>,
    texts: &'a GlobalTexts<'a>,
    inject: Vec<String>,
    recurse: Vec<String>,
    skew: i64,
    global_depth: i64,
    /// Haystacks of the current pass by (depth, match flags, recursion
    /// buffer included).
    cache: HashMap<(i64, u8, bool), Haystack>,
}

fn extras_bits(m: &MatchExtras) -> u8 {
    u8::from(m.persona_description)
        | u8::from(m.character_description) << 1
        | u8::from(m.character_personality) << 2
        | u8::from(m.character_depth_prompt) << 3
        | u8::from(m.scenario) << 4
        | u8::from(m.creator_notes) << 5
}

impl<'a> Buffer<'a> {
    /// `messages_newest_first`: the scan's message texts (names already
    /// prefixed when the setting asks), newest first.
    pub(crate) fn new(
        messages_newest_first: impl Iterator<Item = String>,
        texts: &'a GlobalTexts<'a>,
        inject: Vec<String>,
        global_depth: u32,
    ) -> Buffer<'a> {
        Buffer {
            depth_buffer: messages_newest_first
                .take(MAX_SCAN_DEPTH)
                .map(|m| m.trim_matches(is_js_space).to_string())
                .collect(),
            texts,
            inject,
            recurse: Vec::new(),
            skew: 0,
            global_depth: i64::from(global_depth),
            cache: HashMap::new(),
        }
    }

    /// The global depth plus the min-activations skew (`getDepth`).
    pub(crate) fn depth(&self) -> i64 {
        self.global_depth + self.skew
    }

    /// One more message for min activations (`advanceScan`).
    pub(crate) fn advance(&mut self) {
        self.skew += 1;
        self.cache.clear();
    }

    /// Adds activated text to the recursion buffer (`addRecurse`).
    pub(crate) fn add_recurse(&mut self, text: String) {
        self.recurse.push(text);
        self.cache.clear();
    }

    /// The recursion buffer holds text (`hasRecurse`).
    pub(crate) fn has_recurse(&self) -> bool {
        !self.recurse.is_empty()
    }

    /// The haystack for `entry` (`get`, world-info.js:279-328);
    /// `min_activations`: the pass is a min-activations pass (no recursion
    /// buffer then).
    pub(crate) fn get(&mut self, entry: &Entry, min_activations: bool) -> &mut Haystack {
        let depth = entry.scan_depth.unwrap_or_else(|| self.depth());
        let bits = extras_bits(&entry.match_extras);
        let with_recurse = !self.recurse.is_empty() && !min_activations;
        let key = if depth <= 0 {
            (0, 0, false)
        } else {
            (depth, bits, with_recurse)
        };
        if !self.cache.contains_key(&key) {
            let raw = self.build(depth, &entry.match_extras, with_recurse);
            self.cache.insert(key, Haystack { raw, lower: None });
        }
        self.cache
            .get_mut(&key)
            .expect("invariant: the haystack was just inserted under this key")
    }

    fn build(&self, depth: i64, extras: &MatchExtras, with_recurse: bool) -> String {
        if depth <= 0 {
            return String::new();
        }
        let depth = usize::try_from(depth)
            .unwrap_or(MAX_SCAN_DEPTH)
            .min(MAX_SCAN_DEPTH);
        let shown = &self.depth_buffer[..depth.min(self.depth_buffer.len())];
        let mut out = String::from(MATCHER);
        out.push_str(&shown.join(JOINER));
        let t = self.texts;
        for (on, text) in [
            (extras.persona_description, t.persona_description),
            (extras.character_description, t.character_description),
            (extras.character_personality, t.character_personality),
            (extras.character_depth_prompt, t.character_depth_prompt),
            (extras.scenario, t.scenario),
            (extras.creator_notes, t.creator_notes),
        ] {
            if on && !text.is_empty() {
                out.push_str(JOINER);
                out.push_str(text);
            }
        }
        if !self.inject.is_empty() {
            out.push_str(JOINER);
            out.push_str(&self.inject.join(JOINER));
        }
        if with_recurse {
            out.push_str(JOINER);
            out.push_str(&self.recurse.join(JOINER));
        }
        out
    }
}
