//! Finding the entry an entity already has, without asking the model when
//! the answer is sure.
//!
//! In order, among the book's entries:
//! 1. the same type and the same normalised name: one such entry is the
//!    entity's; several are ambiguous;
//! 2. otherwise the same type and a name the other side knows as an alias
//!    (the entity's name among the entry's keys, or the entry's name among
//!    the entity's keywords): one is the entity's, several ambiguous;
//! 3. otherwise the entries that look alike are ambiguous (the model
//!    decides): an entry without a type whose name or a key is the
//!    entity's name, an entry of another type with the same name, and an
//!    entry of the same type sharing a significant word of the name;
//! 4. otherwise the entity is new.

use super::Entity;
use super::keys::normalise_name;
use super::registry::{Registry, RegistryEntry};

/// What the deterministic match found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// Exactly one entry is the entity's.
    Existing(String),
    /// No entry is, and none is similar: a new entry.
    New,
    /// Several entries could be, or none is but some are similar: the
    /// model decides among these uids (most likely first).
    Ambiguous(Vec<String>),
}

/// Words too common in names to make two names alike ("Lord", "of").
const WEAK_NAME_WORDS: &[&str] = &[
    "of", "and", "the", "lord", "lady", "sir", "king", "queen", "prince", "princess", "mr", "mrs",
    "ms", "dr", "old", "new", "great", "little", "big", "north", "south", "east", "west",
];

/// The words of a normalised name that can make two names alike: at
/// least three characters (one for non-Latin scripts), not a weak word.
fn significant_words(normalised: &str) -> Vec<&str> {
    normalised
        .split(' ')
        .filter(|w| (!w.is_ascii() || w.len() >= 3) && !WEAK_NAME_WORDS.contains(w))
        .collect()
}

/// The uids of `entries`.
fn uids<'a>(entries: impl Iterator<Item = &'a RegistryEntry>) -> Vec<String> {
    entries.map(|e| e.uid.clone()).collect()
}

/// One uid is the entity's; several are ambiguous; none is `None`.
fn decided(found: Vec<String>) -> Option<Resolution> {
    match found.len() {
        0 => None,
        1 => found.into_iter().next().map(Resolution::Existing),
        _ => Some(Resolution::Ambiguous(found)),
    }
}

/// The entry `entity` has in `registry`.
pub fn resolve(entity: &Entity, registry: &Registry) -> Resolution {
    let name = normalise_name(&entity.name);
    let keywords: Vec<String> = entity.keywords.iter().map(|k| normalise_name(k)).collect();
    let same_type = || registry.entries.iter().filter(|e| e.kind == entity.kind);
    if let Some(found) = decided(uids(
        same_type().filter(|e| normalise_name(&e.name) == name),
    )) {
        return found;
    }
    let known_as = |e: &&RegistryEntry| {
        e.aliases.iter().any(|a| normalise_name(a) == name)
            || keywords.contains(&normalise_name(&e.name))
    };
    if let Some(found) = decided(uids(same_type().filter(known_as))) {
        return found;
    }
    let words = significant_words(&name);
    let alike = registry.entries.iter().filter(|e| {
        let other = normalise_name(&e.name);
        if e.kind.is_empty() {
            return other == name || e.aliases.iter().any(|a| normalise_name(a) == name);
        }
        if e.kind != entity.kind {
            return other == name;
        }
        let theirs = significant_words(&other);
        words.iter().any(|w| theirs.contains(w))
            || e.aliases.iter().any(|a| {
                significant_words(&normalise_name(a))
                    .iter()
                    .any(|w| words.contains(w))
            })
    });
    let alike = uids(alike);
    if alike.is_empty() {
        Resolution::New
    } else {
        Resolution::Ambiguous(alike)
    }
}

/// An extraction's entities with those of one type and normalised name
/// combined into one (the first's name; keywords and content lines
/// unioned, in order), blank names dropped.
pub fn combine(entities: Vec<Entity>) -> Vec<Entity> {
    let mut combined: Vec<(String, Entity)> = Vec::new();
    for entity in entities {
        let key = format!("{}\u{0}{}", entity.kind, normalise_name(&entity.name));
        if normalise_name(&entity.name).is_empty() {
            continue;
        }
        match combined.iter_mut().find(|(k, _)| *k == key) {
            Some((_, into)) => {
                for keyword in entity.keywords {
                    if !into.keywords.contains(&keyword) {
                        into.keywords.push(keyword);
                    }
                }
                for line in entity.content {
                    if !into.content.contains(&line) {
                        into.content.push(line);
                    }
                }
            }
            None => combined.push((key, entity)),
        }
    }
    combined.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(uid: &str, kind: &str, name: &str, aliases: &[&str]) -> RegistryEntry {
        RegistryEntry {
            uid: uid.into(),
            kind: kind.into(),
            name: name.into(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            synopsis: String::new(),
            content: String::new(),
            locked: false,
        }
    }

    fn entity(kind: &str, name: &str, keywords: &[&str]) -> Entity {
        Entity {
            kind: kind.into(),
            name: name.into(),
            keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
            content: vec!["a fact".into()],
        }
    }

    fn registry(entries: Vec<RegistryEntry>) -> Registry {
        Registry { entries }
    }

    #[test]
    fn the_same_type_and_name_is_the_entry_without_asking() {
        let r = registry(vec![
            entry("0", "character", "Mira", &["mira"]),
            entry("1", "location", "Mira", &["mira"]),
        ]);
        assert_eq!(
            resolve(&entity("character", "  mira ", &[]), &r),
            Resolution::Existing("0".into())
        );
        // A place of the same name is not the character's entry, but alike.
        assert_eq!(
            resolve(&entity("item", "Mira", &[]), &r),
            Resolution::Ambiguous(vec!["0".into(), "1".into()])
        );
    }

    #[test]
    fn an_alias_on_either_side_finds_the_entry() {
        let r = registry(vec![entry(
            "4",
            "location",
            "The Silver Stag",
            &["silver stag", "the stag"],
        )]);
        assert_eq!(
            resolve(&entity("location", "The Stag", &[]), &r),
            Resolution::Existing("4".into())
        );
        let r = registry(vec![entry(
            "4",
            "location",
            "Silver Stag",
            &["silver stag"],
        )]);
        assert_eq!(
            resolve(&entity("location", "Stag Inn", &["the silver stag"]), &r),
            Resolution::Existing("4".into())
        );
    }

    #[test]
    fn two_entries_known_by_the_name_are_ambiguous() {
        let r = registry(vec![
            entry("1", "character", "Aldric Vane", &["the captain"]),
            entry("2", "character", "Mira Holt", &["the captain"]),
        ]);
        assert_eq!(
            resolve(&entity("character", "The Captain", &[]), &r),
            Resolution::Ambiguous(vec!["1".into(), "2".into()])
        );
    }

    #[test]
    fn a_shared_name_word_asks_and_a_weak_or_unrelated_one_does_not() {
        let r = registry(vec![
            entry("1", "character", "Captain Marcus", &[]),
            entry("2", "character", "Lord Byron", &[]),
        ]);
        assert_eq!(
            resolve(&entity("character", "Marcus", &[]), &r),
            Resolution::Ambiguous(vec!["1".into()])
        );
        assert_eq!(
            resolve(&entity("character", "Lord Ash", &[]), &r),
            Resolution::New
        );
        assert_eq!(
            resolve(&entity("character", "Oda", &[]), &r),
            Resolution::New
        );
    }

    #[test]
    fn an_untyped_entry_of_that_name_is_for_the_model_to_decide() {
        let r = registry(vec![entry("7", "", "Eldoria", &["eldoria"])]);
        assert_eq!(
            resolve(&entity("location", "Eldoria", &[]), &r),
            Resolution::Ambiguous(vec!["7".into()])
        );
    }

    #[test]
    fn combining_unions_one_entitys_facts_and_keeps_others_apart() {
        let combined = combine(vec![
            Entity {
                kind: "character".into(),
                name: "Mira".into(),
                keywords: vec!["captain".into()],
                content: vec!["Leads the guard.".into()],
            },
            entity("location", "Mira", &[]),
            Entity {
                kind: "character".into(),
                name: "mira".into(),
                keywords: vec!["captain".into(), "holt".into()],
                content: vec!["Leads the guard.".into(), "Has a scar.".into()],
            },
            entity("character", " ", &[]),
        ]);
        assert_eq!(combined.len(), 2);
        assert_eq!(combined[0].name, "Mira");
        assert_eq!(combined[0].keywords, ["captain", "holt"]);
        assert_eq!(combined[0].content, ["Leads the guard.", "Has a scar."]);
        assert_eq!(combined[1].kind, "location");
    }
}
