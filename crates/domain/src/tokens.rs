//! Token counting with tiktoken's vocabularies, and [`JoinedCount`], which
//! counts a growing `\n`-joined text exactly without re-counting its start.

use tiktoken_rs::CoreBPE;

use super::settings::TokenizerKind;

fn bpe(kind: TokenizerKind) -> &'static CoreBPE {
    match kind {
        TokenizerKind::O200kBase => tiktoken_rs::o200k_base_singleton(),
        TokenizerKind::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        TokenizerKind::P50kBase => tiktoken_rs::p50k_base_singleton(),
        TokenizerKind::R50kBase => tiktoken_rs::r50k_base_singleton(),
    }
}

/// Loads a vocabulary ahead of its first use (the first load takes a while).
pub fn warm_up(kind: TokenizerKind) {
    let _ = bpe(kind);
}

/// The number of tokens of `text`, special-token markers counted as text.
pub fn count(kind: TokenizerKind, text: &str) -> u32 {
    if text.is_empty() {
        return 0;
    }
    u32::try_from(bpe(kind).count_ordinary(text)).unwrap_or(u32::MAX)
}

/// The exact token count of `part0 + "\n" + part1 + "\n" + ...`, grown one
/// part at a time while counting only the newest end of the text.
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
    kind: TokenizerKind,
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
    /// An empty text counted with `kind`.
    pub fn new(kind: TokenizerKind) -> Self {
        JoinedCount {
            kind,
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
        let tail_tokens = u64::from(count(self.kind, &tail));
        NextCount {
            total: self.settled_tokens + tail_tokens,
            tail,
            tail_tokens,
        }
    }

    /// Joins the part that `next` was peeked for.
    pub fn accept(&mut self, next: NextCount) {
        self.parts += 1;
        match last_stable_cut(&next.tail) {
            Some(cut) => {
                let (settled, tail) = next.tail.split_at(cut);
                self.settled_tokens += u64::from(count(self.kind, settled));
                self.tail = tail.to_owned();
                self.tail_tokens = u64::from(count(self.kind, &self.tail));
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
