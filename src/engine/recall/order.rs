//! One search of one chat's index, owned (it may run on a blocking
//! thread): the moment or the client's query, and the thresholds.
//!
//! A search of at most `--recall-inline-passages` passages runs where it
//! is asked, under the chat's lock: it costs less than handing it over. A
//! longer one runs on a blocking thread, on a snapshot of the index, and
//! its candidates' texts are read from the chat afterwards (a passage
//! changed meanwhile is left out: [`Candidates::hits`]).

use std::sync::Arc;

use crate::domain::recall::search::{Candidates, RecallQuery};
use crate::domain::recall::tier::MomentQuery;
use crate::domain::recall::{MAX_HITS, RecallIndex};
use crate::domain::settings::Settings;

/// What one search looks for, owned.
#[derive(Debug, Clone)]
pub struct Order {
    /// The text and direction looked for, and where the recent window
    /// starts.
    pub moment: MomentQuery,
    /// Whether the recent window is left out (the moment's own chat).
    pub exclude_recent: bool,
    /// The most hits.
    pub limit: usize,
    /// The lowest fused score.
    pub min_score: f32,
    /// The lowest similarity for the vector ranking.
    pub min_similarity: f32,
}

impl Order {
    /// The search of `moment` with `settings`' thresholds.
    pub fn of(moment: MomentQuery, settings: &Settings, exclude_recent: bool) -> Order {
        Order {
            moment,
            exclude_recent,
            limit: MAX_HITS,
            min_score: settings.recall.min_score.value() as f32,
            min_similarity: settings.recall.min_similarity.value() as f32,
        }
    }

    /// The query as the index reads it.
    pub fn query(&self) -> RecallQuery<'_> {
        RecallQuery {
            text: &self.moment.text,
            vector: self.moment.vector.as_deref(),
            exclude_from_seq: self.moment.exclude_from_seq.filter(|_| self.exclude_recent),
            exclude_ids: &[],
            limit: self.limit,
            min_score: self.min_score,
            min_similarity: self.min_similarity,
        }
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.moment.is_empty()
    }
}

/// Whether a search of `index` runs where it is asked (see the module
/// documentation).
pub fn inline(index: &RecallIndex, inline_limit: usize) -> bool {
    index.chunk_count() <= inline_limit
}

/// Ranks `order` on `index` on a blocking thread.
///
/// # Errors
/// The thread's panic, as a message (the search itself has no errors).
pub async fn rank_away(index: Arc<RecallIndex>, order: Order) -> Result<Candidates, String> {
    tokio::task::spawn_blocking(move || index.candidates(&order.query()))
        .await
        .map_err(|e| e.to_string())
}
