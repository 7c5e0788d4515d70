//! Names and keys of the entries recapd writes: how a name is normalised
//! for matching, the `comment` an entry carries (`<type>-<name>`), and how
//! an entity's keywords become an entry's keys.

use super::EntityTypes;
use super::clean::{clean_name, defuse_key};

/// Leading words a name may carry that do not make it another name ("The
/// Silver Stag" is "Silver Stag").
const ARTICLES: [&str; 3] = ["the", "a", "an"];

/// Keys that would bring an entry into the prompt on almost every message
/// and say nothing about whom or what: pronouns, people in general, and
/// the type words themselves. recapd's own list.
const GENERIC_WORDS: &[&str] = &[
    "i",
    "me",
    "my",
    "you",
    "your",
    "he",
    "him",
    "his",
    "she",
    "her",
    "hers",
    "it",
    "its",
    "we",
    "us",
    "our",
    "they",
    "them",
    "their",
    "this",
    "that",
    "these",
    "those",
    "man",
    "woman",
    "men",
    "women",
    "boy",
    "girl",
    "guy",
    "person",
    "people",
    "someone",
    "somebody",
    "everyone",
    "anyone",
    "nobody",
    "stranger",
    "friend",
    "thing",
    "things",
    "something",
    "place",
    "room",
    "here",
    "there",
    "user",
    "char",
    "character",
    "location",
    "item",
    "faction",
    "lore",
    "event",
    "document",
    "rule",
    "entity",
    "name",
    "unknown",
    "none",
];

/// Keys about time rather than about an entity: they match whatever
/// happens and go stale at once. recapd's own list.
const TEMPORAL_WORDS: &[&str] = &[
    "now",
    "then",
    "today",
    "tonight",
    "yesterday",
    "tomorrow",
    "later",
    "earlier",
    "soon",
    "recently",
    "currently",
    "before",
    "after",
    "morning",
    "noon",
    "afternoon",
    "evening",
    "night",
    "midnight",
    "dawn",
    "dusk",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "moment",
    "time",
    "once",
    "always",
    "never",
    "still",
    "again",
];

/// `name` as matching compares it: lowercase, every run of characters that
/// are neither letters nor digits (punctuation, spaces) made one space,
/// trimmed, and a leading article ("the", "a", "an") dropped when more
/// follows it.
pub fn normalise_name(name: &str) -> String {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let words = match words.split_first() {
        Some((first, rest)) if !rest.is_empty() && ARTICLES.contains(first) => rest,
        _ => &words[..],
    };
    words.join(" ")
}

/// The `comment` of the entry of an entity of type `kind` named `name`:
/// `<kind>-<name>` (the name as written, cleaned: [`clean_name`]); the
/// name alone for an entry without a type.
pub fn entry_comment(kind: &str, name: &str) -> String {
    let name = clean_name(name);
    if kind.is_empty() {
        name
    } else {
        format!("{}-{name}", clean_name(kind))
    }
}

/// Keywords from an LLM as keys may hold them: each [`defuse_key`]ed.
pub fn defuse_keys(keywords: &[String]) -> Vec<String> {
    keywords.iter().map(|k| defuse_key(k)).collect()
}

/// The type and name an entry's `comment` gives, when it has the shape
/// `<type>-<name>` with a type of `types` and a non-blank name.
pub fn parse_comment(comment: &str, types: &EntityTypes) -> Option<(String, String)> {
    // Type names hold no `-`, so the first one ends the type.
    let (kind, name) = comment.trim().split_once('-')?;
    let name = name.trim();
    if name.is_empty() || types.get(kind).is_none() {
        return None;
    }
    Some((kind.to_owned(), name.to_owned()))
}

/// A key as written to an entry: trimmed, lowercase, inner whitespace
/// collapsed.
fn key_form(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether a key is worth keeping: not blank, not only digits and
/// punctuation, not a generic or temporal word (compared normalised), and
/// for Latin text at least two characters (one CJK character is a name).
fn worth_keeping(key: &str) -> bool {
    let normalised = normalise_name(key);
    if normalised.is_empty() || !normalised.chars().any(char::is_alphabetic) {
        return false;
    }
    if normalised.is_ascii() && normalised.chars().count() < 2 {
        return false;
    }
    !GENERIC_WORDS.contains(&normalised.as_str()) && !TEMPORAL_WORDS.contains(&normalised.as_str())
}

/// An entry's keys from its name and keywords: each lowercased, trimmed
/// and its whitespace collapsed; the name first, made plain text
/// ([`defuse_key`]: a name is never a regex key or a macro); generic and
/// temporal words, blanks and repeats (compared normalised) dropped; at
/// most `max`. Keywords are taken as given: keywords from an LLM are
/// defused by the caller ([`defuse_keys`]), a book's own keys are kept.
pub fn clean_keys(name: &str, keywords: &[String], max: usize) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let name = defuse_key(name);
    for candidate in std::iter::once(name.as_str()).chain(keywords.iter().map(String::as_str)) {
        if keys.len() >= max {
            break;
        }
        let key = key_form(candidate);
        if !worth_keeping(&key) {
            continue;
        }
        let normalised = normalise_name(&key);
        if seen.contains(&normalised) {
            continue;
        }
        seen.push(normalised);
        keys.push(key);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lore::default_entity_types;

    #[test]
    fn names_normalise_without_case_punctuation_or_a_leading_article() {
        assert_eq!(normalise_name("  The Silver  Stag! "), "silver stag");
        assert_eq!(normalise_name("Lady Mira-Vale"), "lady mira vale");
        assert_eq!(normalise_name("The"), "the");
        assert_eq!(normalise_name("Ævar Þórsson"), "ævar þórsson");
        assert_eq!(normalise_name("東京"), "東京");
    }

    #[test]
    fn comments_name_the_type_and_read_back() {
        let types = default_entity_types();
        assert_eq!(entry_comment("character", " Mira "), "character-Mira");
        assert_eq!(
            parse_comment("character-Mira-Vale", &types),
            Some(("character".into(), "Mira-Vale".into()))
        );
        assert_eq!(parse_comment("person-Mira", &types), None);
        assert_eq!(parse_comment("character- ", &types), None);
        assert_eq!(parse_comment("Eldoria", &types), None);
        assert_eq!(entry_comment("", "Eldoria"), "Eldoria");
    }

    #[test]
    fn keys_put_the_name_first_and_drop_generic_temporal_and_repeated_words() {
        let keywords: Vec<String> = [
            "She",
            "the captain",
            "Yesterday",
            "Mira",
            "",
            "7",
            "x",
            "Night",
            "Captain",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(clean_keys("Mira", &keywords, 10), ["mira", "the captain"]);
        // Non-Latin one-character names are names.
        assert_eq!(clean_keys("林", &[], 10), ["林"]);
    }

    #[test]
    fn keys_stop_at_the_maximum() {
        let keywords: Vec<String> = (0..20).map(|i| format!("alias{i}")).collect();
        let keys = clean_keys("Mira", &keywords, 3);
        assert_eq!(keys, ["mira", "alias0", "alias1"]);
    }
}
