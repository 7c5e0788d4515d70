//! The lore check: how many of a conversation's per-session facts (the
//! dataset's `events_session_N`) ended up in some entry of the chat's book
//! that recapd wrote with `auto_lore` on.
//!
//! The rule (docs/evaluation.md): a fact's salient words are its words,
//! lowercased, split at anything but letters and digits, without English
//! function words and words too common to tell anything (see [`STOPWORDS`])
//! and without words of fewer than three characters, each reduced by a
//! crude suffix stemmer ([`stem`]); a fact counts as kept when at least
//! two thirds of its distinct salient words are among the words of one
//! entry (its content, keys and comment, read the same way). A fact with
//! no salient word is not counted.

use std::collections::BTreeSet;

use serde_json::Value;

use super::layout::SessionFacts;

/// Words that tell nothing about a fact: English function words, and
/// words common in the dataset's facts whatever they are about.
pub const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "day",
    "did",
    "do",
    "does",
    "during",
    "each",
    "first",
    "for",
    "from",
    "get",
    "gets",
    "go",
    "goes",
    "going",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "last",
    "like",
    "made",
    "make",
    "makes",
    "many",
    "me",
    "more",
    "most",
    "my",
    "new",
    "next",
    "no",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "time",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "week",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "year",
    "you",
    "your",
];

/// The shortest salient word.
const MIN_WORD_CHARS: usize = 3;

/// `word` without a plural, past or gerund ending, so that "adopts",
/// "adopted" and "adopting" compare equal: strips `ing` (leaving at least
/// 3 characters), `ed`, `es` (at least 3), `s` (at least 3, not after
/// another `s`).
pub fn stem(word: &str) -> &str {
    for suffix in ["ing", "ed", "es"] {
        if let Some(root) = word.strip_suffix(suffix)
            && root.len() >= 3
        {
            return root;
        }
    }
    match word.strip_suffix('s') {
        Some(root) if root.len() >= 3 && !root.ends_with('s') => root,
        _ => word,
    }
}

/// The salient words of `text`, stemmed.
pub fn salient_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= MIN_WORD_CHARS && !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w).to_owned())
        .collect()
}

/// One entry of the chat's book, as the check reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct BookEntry {
    pub comment: String,
    /// Its words: content, keys and comment.
    words: BTreeSet<String>,
}

impl BookEntry {
    /// An entry from its fields.
    pub fn new(comment: &str, keys: &[String], content: &str) -> BookEntry {
        let mut words = salient_words(content);
        words.extend(salient_words(&keys.join(" ")));
        words.extend(salient_words(comment));
        BookEntry {
            comment: comment.to_owned(),
            words,
        }
    }

    /// The entries of an exported SillyTavern World Info file.
    pub fn of_book(json: &str) -> Result<Vec<BookEntry>, serde_json::Error> {
        let book: Value = serde_json::from_str(json)?;
        let entries = book["entries"].as_object().cloned().unwrap_or_default();
        Ok(entries
            .values()
            .map(|e| {
                let keys: Vec<String> = e["key"]
                    .as_array()
                    .map(|k| {
                        k.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                BookEntry::new(
                    e["comment"].as_str().unwrap_or_default(),
                    &keys,
                    e["content"].as_str().unwrap_or_default(),
                )
            })
            .collect())
    }
}

/// One fact and where it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct FactFound {
    pub session: u32,
    pub fact: String,
    /// The comment of the entry holding most of its salient words, when
    /// it holds at least two thirds of them.
    pub entry: Option<String>,
    /// Its salient words found in that best entry, and in all.
    pub best_words: usize,
    pub words: usize,
}

/// The lore check of one conversation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoreCheck {
    /// Entries in the chat's book.
    pub entries: usize,
    /// Every fact with salient words, in session order.
    pub facts: Vec<FactFound>,
}

impl LoreCheck {
    /// The facts kept in some entry.
    pub fn found(&self) -> usize {
        self.facts.iter().filter(|f| f.entry.is_some()).count()
    }
}

/// Whether `matched` of `words` salient words is at least two thirds.
fn mostly(matched: usize, words: usize) -> bool {
    words > 0 && matched * 3 >= words * 2
}

/// Checks each fact of `sessions` against the book's `entries`.
pub fn check(sessions: &[SessionFacts], entries: &[BookEntry]) -> LoreCheck {
    let mut facts = Vec::new();
    for session in sessions {
        for fact in &session.facts {
            let words = salient_words(fact);
            if words.is_empty() {
                continue;
            }
            let best = entries
                .iter()
                .map(|e| (e, words.iter().filter(|w| e.words.contains(*w)).count()))
                .max_by_key(|(_, n)| *n);
            let best_words = best.map_or(0, |(_, n)| n);
            facts.push(FactFound {
                session: session.session,
                fact: fact.clone(),
                entry: best
                    .filter(|(_, n)| mostly(*n, words.len()))
                    .map(|(e, _)| e.comment.clone()),
                best_words,
                words: words.len(),
            });
        }
    }
    LoreCheck {
        entries: entries.len(),
        facts,
    }
}

#[cfg(test)]
mod tests;
