//! Token counting: tiktoken's vocabularies, or a tokenizer the caller
//! loaded ([`Counter`]); and [`JoinedCount`], which counts a growing
//! `\n`-joined text exactly, without re-counting its start when the
//! vocabulary is tiktoken's.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::num::NonZeroU32;
use std::sync::Arc;

use tiktoken_rs::CoreBPE;

use super::settings::TokenizerKind;

fn bpe(kind: TokenizerKind) -> &'static CoreBPE {
    match kind {
        TokenizerKind::O200kBase | TokenizerKind::HuggingFace | TokenizerKind::LlmEndpoint => {
            tiktoken_rs::o200k_base_singleton()
        }
        TokenizerKind::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        TokenizerKind::P50kBase => tiktoken_rs::p50k_base_singleton(),
        TokenizerKind::R50kBase => tiktoken_rs::r50k_base_singleton(),
    }
}

/// Loads a vocabulary ahead of its first use (the first load takes a while).
pub fn warm_up(kind: TokenizerKind) {
    let _ = bpe(kind);
}

/// The number of tokens of `text` with `kind`'s tiktoken vocabulary,
/// special-token markers counted as text. A kind whose tokenizer is loaded
/// by the caller (`HuggingFace`, `LlmEndpoint`) counts with o200k_base
/// here, its fallback:
/// a chat's counts go through its [`Counter`].
pub fn count(kind: TokenizerKind, text: &str) -> u32 {
    if text.is_empty() {
        return 0;
    }
    u32::try_from(bpe(kind).count_ordinary(text)).unwrap_or(u32::MAX)
}

/// A tokenizer the caller loaded (a model's own, say), counting
/// synchronously. Implementations never panic and bound their work by the
/// text's length.
pub trait CountTokens: Send + Sync {
    /// The number of tokens of `text`, special tokens not added.
    fn count(&self, text: &str) -> u32 {
        self.count_final(text).0
    }

    /// The number of tokens of `text`, and whether it is final: `false`
    /// for an estimate that a later count of the same text may correct (a
    /// tokenizer asked over the network, whose answer has not come yet).
    /// An estimate must not be kept as the text's count.
    fn count_final(&self, text: &str) -> (u32, bool);

    /// Whether any count this counter gave was an estimate.
    fn estimated(&self) -> bool {
        false
    }
}

/// What a chat's token counts are made with: a tiktoken vocabulary, or a
/// tokenizer the caller loaded, known by a name. Cheap to clone.
#[derive(Clone)]
pub struct Counter {
    how: How,
    key: CounterKey,
}

#[derive(Clone)]
enum How {
    Tiktoken(TokenizerKind),
    Loaded(Arc<dyn CountTokens>),
}

/// Tells counters apart, for caches of counts: two counters with the same
/// key count alike. Four bytes, never zero (so an `Option` of a key and a
/// count stays eight bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CounterKey(NonZeroU32);

impl Counter {
    /// Counts with `kind`'s tiktoken vocabulary (o200k_base for a kind
    /// whose tokenizer is loaded by the caller, as [`count`]).
    pub fn tiktoken(kind: TokenizerKind) -> Counter {
        let kind = match kind {
            TokenizerKind::HuggingFace | TokenizerKind::LlmEndpoint => TokenizerKind::O200kBase,
            other => other,
        };
        let number = match kind {
            TokenizerKind::O200kBase | TokenizerKind::HuggingFace | TokenizerKind::LlmEndpoint => 1,
            TokenizerKind::Cl100kBase => 2,
            TokenizerKind::P50kBase => 3,
            TokenizerKind::R50kBase => 4,
        };
        Counter {
            how: How::Tiktoken(kind),
            key: CounterKey(NonZeroU32::MIN.saturating_add(number - 1)),
        }
    }

    /// Counts with `counter`, a tokenizer loaded by the caller and known
    /// as `name` (equal names must count alike). Its key is a 31-bit hash
    /// of the name, so two names could share a key: the cost is a cached
    /// count reused across them, only until the text changes.
    pub fn loaded(name: &str, counter: Arc<dyn CountTokens>) -> Counter {
        let mut hasher = std::hash::DefaultHasher::new();
        name.hash(&mut hasher);
        // The high bit set: never zero, never a tiktoken key (1..=4).
        let number = (hasher.finish() as u32) | 0x8000_0000;
        Counter {
            how: How::Loaded(counter),
            key: CounterKey(NonZeroU32::new(number).unwrap_or(NonZeroU32::MAX)),
        }
    }

    /// The number of tokens of `text` (an estimate when the counter has
    /// none yet: see [`Counter::count_final`]).
    pub fn count(&self, text: &str) -> u32 {
        self.count_final(text).0
    }

    /// The number of tokens of `text`, and whether it is final (`false`:
    /// an estimate, which a cache of counts must not keep).
    pub fn count_final(&self, text: &str) -> (u32, bool) {
        if text.is_empty() {
            return (0, true);
        }
        match &self.how {
            How::Tiktoken(kind) => (count(*kind, text), true),
            How::Loaded(counter) => counter.count_final(text),
        }
    }

    /// Whether any count this counter gave was an estimate: counts cached
    /// under its key would then be wrong, so a caller keeps none of them.
    pub fn estimated(&self) -> bool {
        match &self.how {
            How::Tiktoken(_) => false,
            How::Loaded(counter) => counter.estimated(),
        }
    }

    /// Tells this counter apart from others.
    pub fn key(&self) -> CounterKey {
        self.key
    }

    /// The tiktoken vocabulary this counter uses; `None` for a loaded one.
    pub fn tiktoken_kind(&self) -> Option<TokenizerKind> {
        match &self.how {
            How::Tiktoken(kind) => Some(*kind),
            How::Loaded(_) => None,
        }
    }
}

impl Default for Counter {
    /// o200k_base, the default setting's vocabulary.
    fn default() -> Counter {
        Counter::tiktoken(TokenizerKind::O200kBase)
    }
}

impl fmt::Debug for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.how {
            How::Tiktoken(kind) => write!(f, "Counter::Tiktoken({kind:?})"),
            How::Loaded(_) => write!(f, "Counter::Loaded({:?})", self.key),
        }
    }
}

/// The exact token count of `part0 + "\n" + part1 + "\n" + ...`, grown one
/// part at a time while counting only the newest end of the text (with a
/// tiktoken vocabulary; a loaded tokenizer's pieces are not known, so with
/// one every peek counts the whole joined text: correct, and quadratic in
/// the parts joined).
///
/// tiktoken splits text with a regex into pieces and encodes each piece on
/// its own, so the count of a text is the sum of the counts of two halves
/// whenever the cut falls on a piece boundary that no later text can move.
/// A space between two ASCII lowercase letters is such a boundary in all
/// four vocabularies' patterns (a word piece never contains a space after a
/// letter, and a piece starting with " x" does not depend on what came
/// before). Everything before the last such boundary is counted once and
/// kept as a number; only the text after it (the tail) is counted again.
#[derive(Debug, Clone)]
pub struct JoinedCount {
    counter: Counter,
    settled_tokens: u64,
    tail: String,
    tail_tokens: u64,
    parts: usize,
}

/// The count the text would have with one more part, ready to be accepted.
#[derive(Debug, Clone)]
pub struct NextCount {
    /// Tokens of the whole joined text including the new part.
    pub total: u64,
    tail: String,
    tail_tokens: u64,
}

impl JoinedCount {
    /// An empty text counted with `counter`.
    pub fn new(counter: &Counter) -> Self {
        JoinedCount {
            counter: counter.clone(),
            settled_tokens: 0,
            tail: String::new(),
            tail_tokens: 0,
            parts: 0,
        }
    }

    /// Tokens of the text so far.
    pub fn total(&self) -> u64 {
        self.settled_tokens + self.tail_tokens
    }

    /// How the count would be after joining `part` (nothing changes yet).
    pub fn peek(&self, part: &str) -> NextCount {
        let mut tail = String::with_capacity(self.tail.len() + 1 + part.len());
        tail.push_str(&self.tail);
        if self.parts > 0 {
            tail.push('\n');
        }
        tail.push_str(part);
        let tail_tokens = u64::from(self.counter.count(&tail));
        NextCount {
            total: self.settled_tokens + tail_tokens,
            tail,
            tail_tokens,
        }
    }

    /// Joins the part that `next` was peeked for.
    pub fn accept(&mut self, next: NextCount) {
        self.parts += 1;
        let cut = self
            .counter
            .tiktoken_kind()
            .and_then(|_| last_stable_cut(&next.tail));
        match cut {
            Some(cut) => {
                let (settled, tail) = next.tail.split_at(cut);
                self.settled_tokens += u64::from(self.counter.count(settled));
                self.tail = tail.to_owned();
                self.tail_tokens = u64::from(self.counter.count(&self.tail));
            }
            None => {
                self.tail = next.tail;
                self.tail_tokens = next.tail_tokens;
            }
        }
    }
}

/// The byte index of the last stable cut, if any: before a space that sits
/// between two ASCII lowercase letters, or right after a `\n` that follows
/// a non-space and is followed by a letter. Such a newline is a whitespace
/// run of its own, so every vocabulary's pattern ends the piece holding it
/// the same way whatever follows (a letter is never part of it), and starts
/// a new piece at the letter: this lets text without spaces (CJK, for one)
/// be cut at the joins between memories.
fn last_stable_cut(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (1..bytes.len()).rev().find(|&i| {
        let space_between_words = bytes[i] == b' '
            && bytes[i - 1].is_ascii_lowercase()
            && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
        let letter_after_newline = bytes[i - 1] == b'\n'
            && i >= 2
            && !text[..i - 1]
                .chars()
                .next_back()
                .is_some_and(char::is_whitespace)
            && text.is_char_boundary(i)
            && text[i..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() && !c.is_numeric());
        space_between_words || letter_after_newline
    })
}

#[cfg(test)]
mod tests;
