//! Key matching (`matchKeys`, world-info.js:337-365) and group scoring
//! (`getScore`, world-info.js:428-475).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::world_info::entry::{Entry, is_js_space};

use super::WorldInfoSettings;
use super::buffer::Haystack;
use super::regex::{CompiledKeys, KeyRegex, parse_key_regex};

/// Compiled regex keys (from their books' [`CompiledKeys`], or compiled
/// for this scan when macros changed a key's text) and macro-substituted
/// keys, each looked up once per scan, and the regex keys that overran
/// their bound.
pub(crate) struct Matcher<'a> {
    settings: &'a WorldInfoSettings,
    substitute: &'a dyn Fn(&str) -> String,
    backtrack_limit: usize,
    /// [`super::ScanLimits::regex_work_limit`].
    work_limit: u64,
    regexes: HashMap<String, Option<Arc<KeyRegex>>>,
    substituted: HashMap<String, String>,
    /// (book, uid, key) of each overrun, in the order found, once each.
    pub(crate) overruns: Vec<(String, String, String)>,
    overrun_seen: HashSet<(String, String, String)>,
    /// Regex keys (as tested) that overran in this scan.
    overrun_keys: HashSet<String>,
}

/// Which entry a match is for (to report an overrun).
pub(crate) struct Who<'e> {
    /// The entry's book.
    pub(crate) book: &'e str,
    /// The entry.
    pub(crate) entry: &'e Entry,
    /// The compiled keys of the entry's book version, when the caller
    /// keeps them.
    pub(crate) compiled: Option<&'e CompiledKeys>,
}

impl<'a> Matcher<'a> {
    /// A matcher for one scan.
    pub(crate) fn new(
        settings: &'a WorldInfoSettings,
        substitute: &'a dyn Fn(&str) -> String,
        backtrack_limit: usize,
        work_limit: u64,
    ) -> Matcher<'a> {
        Matcher {
            settings,
            substitute,
            backtrack_limit,
            work_limit,
            regexes: HashMap::new(),
            substituted: HashMap::new(),
            overruns: Vec::new(),
            overrun_seen: HashSet::new(),
            overrun_keys: HashSet::new(),
        }
    }

    /// `substituteParams(key)` then, when that is not empty, its trimmed
    /// form (world-info.js:4802-4805); `None` for an empty substitution.
    /// Macros in keys are substituted once per scan.
    pub(crate) fn prepared_key(&mut self, key: &str) -> Option<String> {
        if !self.substituted.contains_key(key) {
            let s = (self.substitute)(key);
            self.substituted.insert(key.to_string(), s);
        }
        let s = self.substituted.get(key)?;
        if s.is_empty() {
            None
        } else {
            Some(s.trim_matches(is_js_space).to_string())
        }
    }

    /// `matchKeys(haystack, needle, entry)`. An overrun regex key counts
    /// as no match and is reported.
    pub(crate) fn matches(&mut self, hay: &mut Haystack, needle: &str, who: &Who<'_>) -> bool {
        if !self.regexes.contains_key(needle) {
            let entry = who.entry;
            let stored = entry
                .key
                .iter()
                .chain(&entry.keysecondary)
                .any(|k| k == needle);
            let compiled = match who.compiled {
                // A key as the book writes it: compiled once per version.
                Some(keys) if stored => keys.get(needle, self.backtrack_limit),
                // A key macros changed (or no book cache): for this scan.
                _ => parse_key_regex(needle, self.backtrack_limit).map(Arc::new),
            };
            self.regexes.insert(needle.to_string(), compiled);
        }
        if let Some(Some(re)) = self.regexes.get(needle) {
            // A key that overran once is not run again in this scan: a
            // hostile key costs one bound per scan, not one per entry.
            if self.overrun_keys.contains(needle) {
                self.report(who, needle);
                return false;
            }
            return match re.test(&hay.raw, self.work_limit) {
                Ok(found) => found,
                Err(_) => {
                    self.overrun_keys.insert(needle.to_string());
                    self.report(who, needle);
                    false
                }
            };
        }
        let entry = who.entry;
        let case_sensitive = entry.case_sensitive.unwrap_or(self.settings.case_sensitive);
        let whole_words = entry
            .match_whole_words
            .unwrap_or(self.settings.match_whole_words);
        let (hay, needle): (&str, std::borrow::Cow<'_, str>) = if case_sensitive {
            (&hay.raw, needle.into())
        } else {
            (hay.lower(), needle.to_lowercase().into())
        };
        if !whole_words {
            return hay.contains(needle.as_ref());
        }
        // `split(/\s+/)` gives more than one word as soon as the needle
        // holds white space anywhere (a leading or trailing run makes an
        // empty word, which still counts): then a plain substring test.
        if needle.chars().any(is_js_space) {
            return hay.contains(needle.as_ref());
        }
        whole_word_match(hay, &needle)
    }

    /// Records that `needle` overran for this entry (once per entry and key).
    fn report(&mut self, who: &Who<'_>, needle: &str) {
        let report = (
            who.book.to_string(),
            who.entry.uid.clone(),
            needle.to_string(),
        );
        if self.overrun_seen.insert(report.clone()) {
            self.overruns.push(report);
        }
    }

    /// `getScore` (world-info.js:428-475): primary keys found, plus
    /// secondary keys found for AND_ANY, or for AND_ALL when all are found.
    /// Keys are matched as written (no macros, no trim), as there.
    pub(crate) fn score(&mut self, hay: &mut Haystack, who: &Who<'_>) -> u32 {
        let entry = who.entry;
        let mut primary = 0;
        for key in &entry.key {
            if self.matches(hay, key, who) {
                primary += 1;
            }
        }
        let mut secondary = 0;
        for key in &entry.keysecondary {
            if self.matches(hay, key, who) {
                secondary += 1;
            }
        }
        if entry.key.is_empty() {
            return 0;
        }
        if !entry.keysecondary.is_empty() {
            match entry.selective_logic_raw {
                Some(0.0) => return primary + secondary,
                Some(3.0) => {
                    return if secondary as usize == entry.keysecondary.len() {
                        primary + secondary
                    } else {
                        primary
                    };
                }
                _ => {}
            }
        }
        primary
    }
}

/// JavaScript's `\W`: anything but an ASCII letter, digit or `_`.
fn is_js_non_word(c: char) -> bool {
    !(c.is_ascii_alphanumeric() || c == '_')
}

/// `/(?:^|\W)(needle)(?:$|\W)/.test(hay)`: the needle with the start or a
/// non-word character before it and the end or one after it.
fn whole_word_match(hay: &str, needle: &str) -> bool {
    let mut from = 0;
    while let Some(found) = hay.get(from..).and_then(|rest| rest.find(needle)) {
        let start = from + found;
        let end = start + needle.len();
        let before_ok = hay[..start].chars().next_back().is_none_or(is_js_non_word);
        let after_ok = hay[end..].chars().next().is_none_or(is_js_non_word);
        if before_ok && after_ok {
            return true;
        }
        // Next start: one character further.
        match hay[start..].chars().next() {
            Some(c) => from = start + c.len_utf8(),
            None => break,
        }
    }
    false
}
