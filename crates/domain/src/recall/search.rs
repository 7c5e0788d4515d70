//! One search: keyword relevance and vector similarity, each ranked on its
//! own, fused by reciprocal rank.
//!
//! Reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009) scores a
//! chunk `1 / (60 + rank)` in each ranking it appears in and adds them
//! up. It needs no calibration between BM25's unbounded scores and
//! cosine similarities, which live on scales that differ per model and
//! per chat, and it is what the hybrid search of most search engines
//! does. recapd scales the sum so that 1.0 means "ranked first by every
//! method used" (one method without an embeddings endpoint, two with
//! one): a chunk first in one ranking only scores 0.5 with both in use.
//! Each ranking keeps its best [`CANDIDATES`]; lower ranks would add less
//! than 1/260 each.

use super::index::Doc;
use super::{ChunkKey, MAX_HITS};

/// The rank constant of reciprocal rank fusion (the paper's 60).
pub const RRF_K: f32 = 60.0;
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

/// The best of a ranking: `(slot, score)` sorted best first, at most
/// [`CANDIDATES`], those `keep` refuses left out first.
fn best(mut scored: Vec<(u32, f32)>, keep: impl Fn(u32) -> bool) -> Vec<(u32, f32)> {
    scored.retain(|(slot, _)| keep(*slot));
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if scored.len() > CANDIDATES {
        scored.select_nth_unstable_by(CANDIDATES - 1, order);
        scored.truncate(CANDIDATES);
    }
    scored.sort_unstable_by(order);
    scored
}

/// Fuses the keyword scores and (with a direction) the vector scores of
/// the index's slots into the query's hits, best first (ties: the newer
/// message, then chunk order). `doc` gives a slot's chunk, `text` a
/// chunk's text (read for the hits only: a lookup in the chat per scored
/// passage would cost more than the search).
pub(super) fn fuse<'i>(
    keyword: Vec<(u32, f32)>,
    vector: Option<Vec<(u32, f32)>>,
    query: &RecallQuery<'_>,
    doc: impl Fn(u32) -> Option<&'i Doc>,
    text: impl Fn(&Doc) -> Option<&'i str>,
) -> Vec<Hit> {
    let keep = |slot: u32| {
        doc(slot).is_some_and(|doc| {
            query.exclude_from_seq.is_none_or(|from| doc.seq < from)
                && !query.exclude_ids.contains(&doc.key.message_id.as_str())
        })
    };
    let lists = if vector.is_some() { 2.0 } else { 1.0 };
    let top = lists / (RRF_K + 1.0);
    let mut fused: std::collections::HashMap<u32, (f32, f32, Option<f32>)> =
        std::collections::HashMap::new();
    for (rank, (slot, score)) in best(keyword, keep).into_iter().enumerate() {
        let entry = fused.entry(slot).or_insert((0.0, 0.0, None));
        entry.0 += 1.0 / (RRF_K + rank as f32 + 1.0);
        entry.1 = score;
    }
    for (rank, (slot, score)) in best(vector.unwrap_or_default(), keep)
        .into_iter()
        .enumerate()
    {
        let entry = fused.entry(slot).or_insert((0.0, 0.0, None));
        entry.0 += 1.0 / (RRF_K + rank as f32 + 1.0);
        entry.2 = Some(score);
    }
    let mut hits: Vec<Hit> = fused
        .into_iter()
        .filter_map(|(slot, (rrf, keyword_score, vector_score))| {
            let doc = doc(slot)?;
            let score = (rrf / top).min(1.0);
            let text = if score >= query.min_score {
                text(doc)?
            } else {
                ""
            };
            (score >= query.min_score).then(|| Hit {
                key: doc.key.clone(),
                seq: doc.seq,
                text: text.to_owned(),
                keyword_score,
                vector_score,
                score,
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(b.seq.cmp(&a.seq))
            .then(a.key.cmp(&b.key))
    });
    hits.truncate(query.limit.min(MAX_HITS));
    hits
}
