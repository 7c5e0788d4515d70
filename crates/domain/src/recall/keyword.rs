//! Keyword relevance: Okapi BM25 over an inverted index of a chat's
//! chunks, kept up to date chunk by chunk.
//!
//! Words are cut, normalised (Unicode folded to ASCII where it has a
//! spelling there), stemmed and stripped of stop words by the `bm25`
//! crate's English tokenizer, so "promised" finds "promise" and "the"
//! finds nothing. BM25 with k1 = 1.2 and b = 0.75 (the usual values), and
//! the idf `ln(1 + (N - n + 0.5) / (n + 0.5))`, which is never negative:
//! a word in most chunks counts little, never against.
//!
//! Why in memory rather than in SQLite's FTS5 or PostgreSQL's full-text
//! search: the recall tier is computed inside a refresh, in memory under
//! the chat's lock, where a database round trip has no place; and one
//! implementation scores the same on both stores.

use std::collections::HashMap;
use std::sync::OnceLock;

use bm25::{DefaultTokenizer, Language, Tokenizer};

use postings::{Posting, PostingList};

mod postings;
mod top;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// The terms of `text`: normalised, stemmed, stop words left out, in
/// order, repeats kept.
pub fn terms(text: &str) -> Vec<String> {
    static TOKENIZER: OnceLock<DefaultTokenizer> = OnceLock::new();
    TOKENIZER
        .get_or_init(|| DefaultTokenizer::new(Language::English))
        .tokenize(text)
}

/// An inverted index of documents named by slot numbers (the caller's),
/// with BM25 scoring. Invariants: `postings[t]` holds each document whose
/// terms include `t` exactly once, in document order (see
/// [`postings`]); `doc_terms[d]` lists the distinct terms
/// of document `d` (empty for a free slot); `total_len` is the sum of
/// `doc_len` over documents present, `docs` their number.
#[derive(Debug, Default, Clone)]
pub struct KeywordIndex {
    ids: HashMap<Box<str>, u32>,
    postings: Vec<PostingList>,
    doc_terms: Vec<Box<[u32]>>,
    doc_len: Vec<u32>,
    present: Vec<bool>,
    total_len: u64,
    docs: u32,
    /// The heap the terms, postings (with their blocks) and term lists
    /// hold, kept as they change (an estimate: the vectors' spare capacity
    /// left out), so that reading it costs nothing.
    bytes: usize,
}

/// The estimated heap of a new term in the map and its posting list.
fn term_bytes(term: &str) -> usize {
    term.len() + std::mem::size_of::<(Box<str>, u32)>() + 8 + std::mem::size_of::<PostingList>()
}

/// The heap of `blocks` blocks of a posting list.
fn block_bytes(blocks: usize) -> usize {
    blocks * std::mem::size_of::<postings::Block>()
}

/// BM25's share of one term in one document: the term's `idf`, its count
/// `tf` in the document, the document's length `len` and the average
/// length. The one formula every search scores with (and bounds with:
/// it grows with `tf` and shrinks with `len`).
fn part(idf: f32, tf: f32, len: f32, average: f32) -> f32 {
    idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / average))
}

/// BM25's idf of a term in `df` of `n` documents.
fn idf(n: f32, df: f32) -> f32 {
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

impl KeywordIndex {
    /// Adds document `doc` with text `text`, replacing what the slot held.
    pub fn insert(&mut self, doc: u32, text: &str) {
        let words = terms(text);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for word in &words {
            let next = self.ids.len() as u32;
            let id = *self.ids.entry(word.as_str().into()).or_insert(next);
            if id as usize == self.postings.len() {
                self.postings.push(PostingList::default());
                self.bytes += term_bytes(word);
            }
            *counts.entry(id).or_default() += 1;
        }
        let slot = doc as usize;
        if self.doc_terms.len() <= slot {
            self.doc_terms.resize_with(slot + 1, Default::default);
            self.doc_len.resize(slot + 1, 0);
            self.present.resize(slot + 1, false);
        }
        if self.present[slot] {
            self.remove(doc);
        }
        self.present[slot] = true;
        let mut distinct: Vec<u32> = counts.keys().copied().collect();
        distinct.sort_unstable();
        let len = u32::try_from(words.len()).unwrap_or(u32::MAX);
        // The blocks' bounds read the length.
        self.doc_len[slot] = len;
        for (&term, &count) in &counts {
            if let Some(list) = self.postings.get_mut(term as usize) {
                let blocks = list.block_count();
                list.insert(Posting { doc, count }, &self.doc_len);
                self.bytes = (self.bytes + block_bytes(list.block_count()))
                    .saturating_sub(block_bytes(blocks));
            }
        }
        self.bytes += distinct.len() * (std::mem::size_of::<Posting>() + 4);
        self.doc_terms[slot] = distinct.into_boxed_slice();
        self.total_len += u64::from(len);
        self.docs += 1;
    }

    /// Removes document `doc` (nothing when the slot is free).
    pub fn remove(&mut self, doc: u32) {
        let slot = doc as usize;
        if !self.present.get(slot).copied().unwrap_or(false) {
            return;
        }
        self.present[slot] = false;
        let terms = std::mem::take(&mut self.doc_terms[slot]);
        self.bytes = self
            .bytes
            .saturating_sub(terms.len() * (std::mem::size_of::<Posting>() + 4));
        for term in terms.iter() {
            if let Some(list) = self.postings.get_mut(*term as usize) {
                let blocks = list.block_count();
                list.remove(doc, &self.doc_len);
                self.bytes = (self.bytes + block_bytes(list.block_count()))
                    .saturating_sub(block_bytes(blocks));
            }
        }
        self.total_len -= u64::from(self.doc_len[slot]);
        self.doc_len[slot] = 0;
        self.docs = self.docs.saturating_sub(1);
    }

    /// The distinct known terms of `query` (each once, in term order),
    /// with the number of documents and their average length; `None` when
    /// the index is empty.
    fn query_terms(&self, query: &str) -> Option<(Vec<u32>, f32, f32)> {
        if self.docs == 0 {
            return None;
        }
        let mut wanted: Vec<u32> = terms(query)
            .iter()
            .filter_map(|w| self.ids.get(w.as_str()).copied())
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let n = self.docs as f32;
        let average = (self.total_len as f32 / n).max(1.0);
        Some((wanted, n, average))
    }

    /// The query's distinct known terms with their (non-empty) lists, in
    /// term order, and what a search reads of the index besides; `None`
    /// when the index is empty.
    fn lists(&self, query: &str) -> Option<(Vec<(u32, &PostingList)>, top::Corpus<'_>)> {
        let (wanted, n, average) = self.query_terms(query)?;
        let lists = wanted
            .iter()
            .filter_map(|t| Some((*t, self.postings.get(*t as usize)?)))
            .filter(|(_, list)| !list.is_empty())
            .collect();
        let corpus = top::Corpus {
            doc_len: &self.doc_len,
            doc_terms: &self.doc_terms,
            n,
            average,
        };
        Some((lists, corpus))
    }

    /// The best `k` documents for `query` by BM25 among those `keep` lets
    /// through, as `(doc, score)` best first (ties: the lower slot): the
    /// same as scoring every document sharing a term with `query` and
    /// keeping the best `k` of those `keep` accepts, to the bit, but
    /// reading only the parts of the lists that could change the answer
    /// (see [`top`]). `keep` is asked of the documents that may be among
    /// the best `k`, and, for the search's first floor, of the rarest
    /// terms' documents, the best first, until `k` are let through.
    pub fn top(&self, query: &str, k: usize, keep: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
        match self.lists(query) {
            Some((lists, corpus)) => top::top(&lists, &corpus, k, keep),
            None => Vec::new(),
        }
    }

    /// The floor [`KeywordIndex::top`] starts from (see `top::seed`), for
    /// the tests: negative infinity when it has none.
    #[cfg(test)]
    pub fn first_floor(&self, query: &str, k: usize, keep: impl Fn(u32) -> bool) -> f32 {
        match self.lists(query) {
            Some((lists, corpus)) => top::first_floor(&lists, &corpus, k, keep),
            None => f32::NEG_INFINITY,
        }
    }

    /// The BM25 score of every document sharing a term with `query`, as
    /// `(doc, score)` in no order; each distinct query term counts once.
    /// Every entry of every list read: the oracle [`KeywordIndex::top`] is
    /// checked against, and the old search the timing compares with.
    #[cfg(test)]
    pub fn scores(&self, query: &str) -> Vec<(u32, f32)> {
        let Some((wanted, n, average)) = self.query_terms(query) else {
            return Vec::new();
        };
        let mut score = vec![0f32; self.doc_len.len()];
        let mut touched = Vec::new();
        for term in wanted {
            let list = &self.postings[term as usize];
            if list.is_empty() {
                continue;
            }
            let idf = idf(n, list.len() as f32);
            for posting in list.postings() {
                let d = posting.doc as usize;
                let tf = posting.count as f32;
                let len = self.doc_len[d] as f32;
                let part = part(idf, tf, len, average);
                if score[d] == 0.0 {
                    touched.push(posting.doc);
                }
                score[d] += part;
            }
        }
        touched
            .into_iter()
            .map(|d| (d, score[d as usize]))
            .filter(|(_, s)| *s > 0.0)
            .collect()
    }

    /// The part of [`KeywordIndex::heap_bytes`] the lists' blocks and
    /// their headers (beyond a plain vector's) account for (the timing).
    #[cfg(test)]
    pub fn block_overhead(&self) -> usize {
        self.postings
            .iter()
            .map(|list| {
                block_bytes(list.block_count()) + std::mem::size_of::<PostingList>()
                    - std::mem::size_of::<Vec<Posting>>()
            })
            .sum()
    }

    /// Checks the posting lists' invariants (tests).
    #[cfg(test)]
    fn check(&self) {
        for list in &self.postings {
            list.check(&self.doc_len);
        }
    }

    /// Bytes the index holds on the heap (an estimate kept as it changes,
    /// plus the per-slot arrays).
    pub fn heap_bytes(&self) -> usize {
        self.bytes
            + self.doc_terms.capacity() * std::mem::size_of::<Box<[u32]>>()
            + self.doc_len.capacity() * 4
            + self.present.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod random;

    fn ranked(index: &KeywordIndex, query: &str) -> Vec<u32> {
        let found = index.top(query, 1000, |_| true);
        let mut scores = index.scores(query);
        scores.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        assert_eq!(found, scores);
        found.into_iter().map(|(d, _)| d).collect()
    }

    #[test]
    fn stems_and_stop_words() {
        let words = terms("The promises she promised were kept");
        assert!(words.contains(&"promis".to_owned()) || words.contains(&"promise".to_owned()));
        assert!(!words.iter().any(|w| w == "the"));
    }

    #[test]
    fn the_rarer_word_and_the_shorter_document_rank_first() {
        let mut index = KeywordIndex::default();
        index.insert(0, "Mira walked to the market and bought bread.");
        index.insert(1, "The letter was sealed with green wax.");
        index.insert(2, "Bread, bread and more bread at the market.");
        index.insert(3, "Tomas walked home.");
        assert_eq!(ranked(&index, "green wax letter"), [1]);
        assert_eq!(ranked(&index, "bread")[0], 2);
        assert!(ranked(&index, "dragons").is_empty());
        assert!(ranked(&index, "").is_empty());
    }

    #[test]
    fn removed_documents_are_not_found_and_slots_are_reused() {
        let mut index = KeywordIndex::default();
        index.insert(0, "The Gilded Goose inn");
        index.insert(1, "A goose in the yard");
        index.remove(0);
        assert_eq!(ranked(&index, "gilded goose"), [1]);
        index.remove(0);
        index.insert(0, "The Gilded Goose again");
        assert_eq!(ranked(&index, "gilded")[0], 0);
        assert_eq!(index.docs, 2);
    }
}
