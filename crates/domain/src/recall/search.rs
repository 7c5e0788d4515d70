//! One search: keyword relevance and vector similarity, each ranked on its
//! own, then fused into one score.
//!
//! The fusion is a weighted sum of the two scores, each brought to 0..=1
//! first: the BM25 score divided by the best BM25 score of the search, and
//! the cosine similarity as it is (a passage under the similarity floor, or
//! outside a ranking's best [`CANDIDATES`], scores 0 there). The keyword
//! score weighs [`KEYWORD_WEIGHT`], the similarity the rest. The sum is
//! scaled so that 1.0 means "the best of every ranking used" (with one
//! ranking, a passage's score in it).
//!
//! Why not reciprocal rank fusion, which needs no calibration: it gives each
//! ranking the same weight whatever its scores say, so a small embeddings
//! model whose similarities are weak and broad (all-MiniLM-L6-v2 between a
//! question and a short chat turn: many turns of a conversation above 0.25)
//! pushes the passages keyword search found down. On LoCoMo it made hybrid
//! recall worse than keyword search alone in every category (any@5 0.422
//! against 0.574). A score, unlike a rank, says how sure each ranking is:
//! a passage the vector ranking barely prefers gains little. The weight was
//! chosen on LoCoMo's conversations, half by half: the best on one half
//! that is below keyword search alone in no category of question on
//! either (docs/recall.md and BENCHMARKS.md give the figures).
//!
//! Identical passages (same text once whitespace and case are set aside)
//! are returned once, the best placed one.

use std::collections::{HashMap, HashSet};

use super::index::{Doc, passage_text};
use super::{ChunkKey, MAX_HITS};
use crate::chat::Chat;
use crate::footprint::Footprint;

/// The weight of the keyword score in the fused score (the vector
/// similarity's is `1 - KEYWORD_WEIGHT`), fitted on LoCoMo (see the module
/// documentation).
pub const KEYWORD_WEIGHT: f32 = 0.65;
/// How many of each ranking's best are fused.
pub const CANDIDATES: usize = 200;

/// What to look for.
#[derive(Debug, Clone, Copy)]
pub struct RecallQuery<'a> {
    /// The words to look for (any text).
    pub text: &'a str,
    /// The direction to look in (a vector of the index's dimension); `None`:
    /// keyword search alone.
    pub vector: Option<&'a [f32]>,
    /// Chunks of messages at or after this position are left out (they are
    /// in the prompt already); `None`: none is.
    pub exclude_from_seq: Option<i64>,
    /// Chunks of these messages are left out too (the query's own messages,
    /// say).
    pub exclude_ids: &'a [&'a str],
    /// The most hits (at most [`MAX_HITS`]).
    pub limit: usize,
    /// Hits whose fused score is lower are left out.
    pub min_score: f32,
    /// A chunk enters the vector ranking only with at least this cosine
    /// similarity.
    pub min_similarity: f32,
}

/// One chunk found.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The chunk.
    pub key: ChunkKey,
    /// Its message's position.
    pub seq: i64,
    /// Its text.
    pub text: String,
    /// Its BM25 score (0: no query word in it).
    pub keyword_score: f32,
    /// Its cosine similarity with the query's direction; `None` without a
    /// direction or without a vector for the chunk.
    pub vector_score: Option<f32>,
    /// The fused score, 0..=1.
    pub score: f32,
}

/// What makes two passages the same passage: their words, whitespace runs
/// made one space and letters lower case.
pub fn passage_key(text: &str) -> String {
    // One allocation: a search keys every passage it ranks.
    let mut key = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !key.is_empty() {
            key.push(' ');
        }
        key.extend(word.chars().flat_map(char::to_lowercase));
    }
    key
}

/// A scored slot in [`best`]'s heap (and a keyword search's): the worst
/// on top (lower score, then the higher slot).
#[derive(PartialEq)]
pub(super) struct Ranked(pub f32, pub u32);

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Ranked) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Ranked) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

/// The best `k` of a ranking that `keep` lets through: `(slot, score)`
/// sorted best first (ties: the lower slot). `keep` is asked only of the
/// slots that would enter the best `k` so far, so a long ranking costs a
/// comparison per slot, not a lookup.
pub(super) fn best(
    scored: impl IntoIterator<Item = (u32, f32)>,
    k: usize,
    keep: impl Fn(u32) -> bool,
) -> Vec<(u32, f32)> {
    let mut heap: std::collections::BinaryHeap<Ranked> =
        std::collections::BinaryHeap::with_capacity(k + 1);
    for (slot, score) in scored {
        if k == 0 || score.is_nan() {
            continue;
        }
        let enters = heap.len() < k
            || heap
                .peek()
                .is_some_and(|worst| Ranked(score, slot) < *worst);
        if enters && keep(slot) {
            heap.push(Ranked(score, slot));
            if heap.len() > k {
                heap.pop();
            }
        }
    }
    heap.into_sorted_vec()
        .into_iter()
        .map(|Ranked(score, slot)| (slot, score))
        .collect()
}

/// A query as the engine compares two searches (floats by their bits):
/// two searches with equal keys over the same index generation
/// ([`super::RecallIndex::generation`]) find the same candidates.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SearchKey {
    text: String,
    vector: Option<Vec<u32>>,
    exclude_from_seq: Option<i64>,
    exclude_ids: Vec<String>,
    limit: usize,
    min_score: u32,
    min_similarity: u32,
}

impl SearchKey {
    /// The key of `query`.
    pub fn of(query: &RecallQuery<'_>) -> SearchKey {
        SearchKey {
            text: query.text.to_owned(),
            vector: query
                .vector
                .map(|v| v.iter().map(|x| x.to_bits()).collect()),
            exclude_from_seq: query.exclude_from_seq,
            exclude_ids: query
                .exclude_ids
                .iter()
                .map(|id| (*id).to_owned())
                .collect(),
            limit: query.limit,
            min_score: query.min_score.to_bits(),
            min_similarity: query.min_similarity.to_bits(),
        }
    }

    /// Bytes the key holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.vector.as_ref().map_or(0, |v| v.capacity() * 4)
            + self.exclude_ids.iter().map(String::capacity).sum::<usize>()
    }
}

/// One passage a search ranked, before its text is read: where it is in
/// the chat (its chunk, position, bytes and text fingerprint, as the index
/// held them) and its scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    doc: Doc,
    score: f32,
    keyword: f32,
    vector: Option<f32>,
}

/// A search's ranked passages, best first (ties: the newer message, then
/// chunk order), those under the query's `min_score` left out, identical
/// passages not yet told apart (their texts are not read). Owned and
/// independent of the index, so that a search can run on a snapshot of
/// the index away from the chat and its texts be read from the chat
/// later ([`Candidates::hits`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Candidates {
    ranked: Vec<Candidate>,
    limit: usize,
}

impl Candidates {
    /// How many passages were ranked.
    pub fn len(&self) -> usize {
        self.ranked.len()
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.ranked.is_empty()
    }

    /// The hits, best first: the query's `limit` at most, identical
    /// passages once (the best placed), each passage's text read from
    /// `chat`. A passage whose message changed since the search (its text
    /// is no longer the one ranked) or is gone is left out.
    pub fn hits(&self, chat: &Chat) -> Vec<Hit> {
        let limit = self.limit.min(MAX_HITS);
        let mut seen = HashSet::new();
        let mut hits = Vec::with_capacity(limit.min(self.ranked.len()));
        for candidate in &self.ranked {
            if hits.len() >= limit {
                break;
            }
            let Some(text) = passage_text(chat, &candidate.doc) else {
                continue;
            };
            if !seen.insert(passage_key(text)) {
                continue;
            }
            hits.push(Hit {
                key: candidate.doc.key.clone(),
                seq: candidate.doc.seq,
                text: text.to_owned(),
                keyword_score: candidate.keyword,
                vector_score: candidate.vector,
                score: candidate.score,
            });
        }
        hits
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.ranked.capacity() * std::mem::size_of::<Candidate>()
            + self
                .ranked
                .iter()
                .map(|c| c.doc.key.message_id.heap_bytes())
                .sum::<usize>()
    }
}

/// Fuses the keyword ranking and (with a direction) the vector ranking of
/// the index's slots, each its best [`CANDIDATES`] as [`best`] gives them
/// (the query's exclusions applied), into ranked candidates (see the
/// module documentation). `doc` gives a slot's chunk.
pub(super) fn rank<'i>(
    keyword: Vec<(u32, f32)>,
    vector: Option<Vec<(u32, f32)>>,
    query: &RecallQuery<'_>,
    doc: impl Fn(u32) -> Option<&'i Doc>,
) -> Candidates {
    let vector = vector.unwrap_or_default();
    let limit = query.limit;
    // Each ranking's best score (the lists are sorted best first); a
    // ranking without candidates takes no part.
    let best_keyword = keyword.first().map_or(0.0, |(_, s)| *s);
    let best_vector = vector.first().map_or(0.0, |(_, s)| s.max(0.0));
    let (keyword_weight, vector_weight) = match (best_keyword > 0.0, best_vector > 0.0) {
        (true, true) => (KEYWORD_WEIGHT, 1.0 - KEYWORD_WEIGHT),
        (true, false) => (1.0, 0.0),
        (false, true) => (0.0, 1.0),
        (false, false) => return Candidates::default(),
    };
    // 1.0: the best BM25 score and the best similarity in one passage.
    let top = keyword_weight + vector_weight * best_vector;
    // slot -> (fused score, BM25 score, similarity)
    let mut fused: HashMap<u32, (f32, f32, Option<f32>)> =
        HashMap::with_capacity(keyword.len() + vector.len());
    for (slot, score) in keyword.into_iter().filter(|_| best_keyword > 0.0) {
        fused.insert(slot, (keyword_weight * score / best_keyword, score, None));
    }
    for (slot, similarity) in vector {
        let entry = fused.entry(slot).or_insert((0.0, 0.0, None));
        entry.0 += vector_weight * similarity.max(0.0);
        entry.2 = Some(similarity);
    }
    let mut ranked: Vec<Candidate> = fused
        .into_iter()
        .filter_map(|(slot, (score, keyword, vector))| {
            let score = (score / top).clamp(0.0, 1.0);
            let doc = doc(slot)?;
            (score >= query.min_score).then(|| Candidate {
                doc: doc.clone(),
                score,
                keyword,
                vector,
            })
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.doc.seq.cmp(&a.doc.seq))
            .then(a.doc.key.cmp(&b.doc.key))
    });
    Candidates { ranked, limit }
}
