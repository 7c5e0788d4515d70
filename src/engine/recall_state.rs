//! A chat's recall index as the engine holds it, and the searches its
//! recall tier ran.
//!
//! The index sits behind an `Arc` so that a search of a long chat can read
//! a snapshot of it on a blocking thread, away from the chat's lock
//! (`super::recall`). While such a search holds the snapshot, the
//! index is not changed under it (that would copy it): what the chat's
//! commits wrote meanwhile, and the vectors an index job brought, wait in
//! [`Deferred`] and are applied by the first sync that finds the index
//! alone again. A small index (at most `--recall-inline-passages`
//! passages) is copied instead, so that a small chat never waits.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use builds::{OFF_WORKER_MESSAGES, off_the_workers};

use crate::domain::chat::Chat;
use crate::domain::footprint::Footprint;
use crate::domain::recall::index::PendingChunk;
use crate::domain::recall::search::{Candidates, SearchKey};
use crate::domain::recall::{ChunkKey, RecallIndex, Source, StoredVector};
use crate::domain::settings::Settings;
use crate::store;

mod builds;

/// A chat's recall index as held: built the first time recall needs it
/// (a refresh with `recall_enabled`, a Recall, an index job), from the
/// chat and the vectors loaded with it; then kept in step by every commit
/// ([`RecallState::note_writes`]). Lives under the chat's lock (in a
/// mutex of its own, which only the holder of the chat's lock takes).
#[derive(Debug, Default)]
pub struct RecallState {
    /// The index, once built (most chats never build one).
    index: Option<Arc<RecallIndex>>,
    /// The vectors loaded with the chat, until the index is built from them.
    pub stored: Vec<StoredVector>,
    /// The chat's latest index job FAILED (the endpoint refused it, or
    /// it gave up): no index job is queued for the chat on its own until
    /// one succeeds (RetryJob runs the failed one again), so a permanent
    /// refusal does not make a job fail after job. Held in memory only: a
    /// chat loaded again tries once more.
    pub indexing_failed: bool,
    /// What changed while a search held the index.
    deferred: Deferred,
    /// The recall tier's latest searches.
    pub searches: TierSearches,
}

/// Changes to an index that a search held when they came: applied, in
/// order, by the next sync that has the index alone.
#[derive(Debug, Default)]
struct Deferred {
    /// Messages written (to cut again).
    marks: BTreeSet<String>,
    /// The whole chat was replaced.
    all: bool,
    /// Vectors accepted for passages, to attach.
    vectors: Vec<(ChunkKey, u64, Vec<f32>)>,
}

impl Deferred {
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.marks.is_empty() && !self.all && self.vectors.is_empty()
    }

    /// Applies the changes to `index` (held alone).
    fn apply(&mut self, index: &mut RecallIndex) {
        if std::mem::take(&mut self.all) {
            index.mark_all();
        }
        for id in std::mem::take(&mut self.marks) {
            index.mark(&id);
        }
        for (key, fingerprint, vector) in std::mem::take(&mut self.vectors) {
            // Refused when the passage changed meanwhile: it stays to be
            // indexed again, as any vector that comes too late.
            index.attach(&key, fingerprint, &vector);
        }
    }

    fn heap_bytes(&self) -> usize {
        self.marks.iter().map(|m| m.len() + 32).sum::<usize>()
            + self
                .vectors
                .iter()
                .map(|(key, _, v)| 48 + key.message_id.heap_bytes() + v.capacity() * 4)
                .sum::<usize>()
    }
}

impl RecallState {
    /// The index, brought up to date with `chat` (built the first time,
    /// from the vectors loaded with the chat), with `settings`' chunk size
    /// and the vectors of `model` (the embeddings model; empty without
    /// one, which no vector matches). While a search holds an index of
    /// more than `inline_limit` passages, the index is returned as the
    /// search has it and the changes wait for the next sync. The first
    /// build of a chat of `OFF_WORKER_MESSAGES` or more runs off the
    /// async workers (`off_the_workers`).
    pub fn synced(
        &mut self,
        chat: &Chat,
        settings: &Settings,
        model: &str,
        inline_limit: usize,
    ) -> &Arc<RecallIndex> {
        let chunk_chars = settings.recall.chunk_chars as usize;
        let stored = &mut self.stored;
        let index = self.index.get_or_insert_with(|| {
            let mut build = || RecallIndex::build(chat, chunk_chars, model, std::mem::take(stored));
            Arc::new(if chat.len() >= OFF_WORKER_MESSAGES {
                off_the_workers(build)
            } else {
                build()
            })
        });
        let alone = Arc::get_mut(index).is_some();
        if alone || index.chunk_count() <= inline_limit {
            // Alone: changed in place; shared but small: copied.
            let index = Arc::make_mut(index);
            self.deferred.apply(index);
            index.sync(chat, chunk_chars, model);
        }
        index
    }

    /// The state of a chat loaded with the vectors `stored` (the index is
    /// built from them when recall first needs it).
    pub fn loaded(stored: Vec<StoredVector>) -> RecallState {
        RecallState {
            stored,
            ..RecallState::default()
        }
    }

    /// Notes the rows a commit wrote, so the index cuts those messages
    /// again at its next sync (nothing before the index is built: it is
    /// built from the chat as it then is).
    pub fn note_writes(&mut self, writes: &[store::Write]) {
        let Some(index) = &mut self.index else {
            return;
        };
        let mut alone = Arc::get_mut(index);
        let deferred = &mut self.deferred;
        for write in writes {
            let id = match write {
                store::Write::Message { message, .. } => message.id.as_str(),
                store::Write::DeleteMessage { message_id, .. } => message_id.as_str(),
                store::Write::ReplaceChat { .. } => {
                    match alone.as_deref_mut() {
                        Some(index) => index.mark_all(),
                        None => {
                            deferred.all = true;
                            deferred.marks.clear();
                            deferred.vectors.clear();
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            match alone.as_deref_mut() {
                Some(index) => index.mark(id),
                None => {
                    deferred.marks.insert(id.to_owned());
                }
            }
        }
    }

    /// Gives chunk `key` its vector if the chunk still has the text with
    /// `fingerprint` and the vector fits the index (false otherwise). While
    /// a search holds the index, the vector is accepted by that check and
    /// attached at the next sync.
    pub fn attach(&mut self, key: &ChunkKey, fingerprint: u64, vector: &[f32]) -> bool {
        let Some(index) = &mut self.index else {
            return false;
        };
        if let Some(index) = Arc::get_mut(index) {
            return index.attach(key, fingerprint, vector);
        }
        let dims = self
            .deferred
            .vectors
            .first()
            .map_or(vector.len(), |(_, _, v)| v.len());
        let accepted = dims == vector.len() && index.accepts(key, fingerprint, vector.len());
        if accepted {
            self.deferred
                .vectors
                .push((key.clone(), fingerprint, vector.to_vec()));
        }
        accepted
    }

    /// The dimension of the index's vectors (0 before the first).
    pub fn dims(&self) -> usize {
        match self.index.as_deref().map_or(0, RecallIndex::dims) {
            0 => self.deferred.vectors.first().map_or(0, |(_, _, v)| v.len()),
            dims => dims,
        }
    }

    /// How many chunks `message_id`'s text of `source` is cut into now.
    pub fn parts(&self, message_id: &str, source: Source) -> u32 {
        self.index
            .as_deref()
            .map_or(0, |index| index.parts(message_id, source))
    }

    /// How many chunks have no vector yet (those waiting to be attached
    /// count as having one).
    pub fn missing_count(&self) -> usize {
        self.index.as_deref().map_or(0, |index| {
            index
                .missing_count()
                .saturating_sub(self.deferred.vectors.len())
        })
    }

    /// Up to `limit` chunks without a vector, newest first (see
    /// [`RecallIndex::missing`]), those waiting to be attached left out.
    pub fn missing(&self, chat: &Chat, limit: usize) -> Vec<PendingChunk> {
        let Some(index) = self.index.as_deref() else {
            return Vec::new();
        };
        let waiting: HashSet<&ChunkKey> = self.deferred.vectors.iter().map(|(k, _, _)| k).collect();
        let mut chunks = index.missing(chat, limit + waiting.len());
        chunks.retain(|c| !waiting.contains(&c.key));
        chunks.truncate(limit);
        chunks
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.index
            .as_deref()
            .map_or(0, |i| size_of::<RecallIndex>() + i.heap_bytes())
            + self
                .stored
                .iter()
                .map(|v| {
                    size_of::<StoredVector>()
                        + v.vector.capacity() * size_of::<f32>()
                        + v.model.capacity()
                        + v.key.message_id.heap_bytes()
                })
                .sum::<usize>()
            + self.deferred.heap_bytes()
            + self.searches.heap_bytes()
    }

    /// Whether changes wait for a search to let go of the index.
    #[cfg(test)]
    fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }
}

/// One search's answer: the query and index generation it was for, and
/// what it ranked.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The query.
    pub key: SearchKey,
    /// The searched index's generation.
    pub generation: u64,
    /// The ranked passages.
    pub candidates: Candidates,
}

impl Answer {
    fn heap_bytes(&self) -> usize {
        self.key.heap_bytes() + self.candidates.heap_bytes()
    }
}

/// The recall tier's searches of one chat (its own index's and its
/// `recall_chats`'), by searched chat id: the latest answer of each, and
/// what background searches are running or have finished.
#[derive(Debug, Default)]
pub struct TierSearches {
    /// The latest answer for each searched chat.
    answers: HashMap<String, Answer>,
    /// Shared with the background searches' tasks.
    background: Arc<parking_lot::Mutex<Background>>,
}

/// What the background searches of one chat's tier share with it.
#[derive(Debug, Default)]
pub struct Background {
    /// The searched chats whose search is running.
    pub running: HashSet<String>,
    /// Finished searches, not yet read by a refresh.
    pub done: Vec<(String, Answer)>,
}

impl TierSearches {
    /// The answer for `searched` when it is for `key` over `generation`
    /// (after taking in what background searches finished).
    pub fn current(&mut self, searched: &str, key: &SearchKey, generation: u64) -> Option<&Answer> {
        self.take_finished();
        self.answers
            .get(searched)
            .filter(|a| a.key == *key && a.generation == generation)
    }

    /// The latest answer for `searched`, whatever it was for.
    pub fn latest(&self, searched: &str) -> Option<&Answer> {
        self.answers.get(searched)
    }

    /// Keeps `answer` as `searched`'s latest.
    pub fn keep(&mut self, searched: &str, answer: Answer) {
        self.answers.insert(searched.to_owned(), answer);
    }

    /// Marks a background search of `searched` as running; false when one
    /// already is.
    pub fn start(&self, searched: &str) -> bool {
        self.background.lock().running.insert(searched.to_owned())
    }

    /// The handle a background search reports to.
    pub fn reporter(&self) -> Arc<parking_lot::Mutex<Background>> {
        self.background.clone()
    }

    /// Forgets the answers of chats no longer searched (`searched` lists
    /// those that are).
    pub fn retain(&mut self, searched: &[&str]) {
        self.answers.retain(|id, _| searched.contains(&id.as_str()));
    }

    fn take_finished(&mut self) {
        let done = std::mem::take(&mut self.background.lock().done);
        for (searched, answer) in done {
            self.answers.insert(searched, answer);
        }
    }

    fn heap_bytes(&self) -> usize {
        self.answers
            .iter()
            .map(|(id, a)| id.capacity() + size_of::<Answer>() + a.heap_bytes())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::chat::ChatEvent;
    use crate::domain::ids::ChatKey;
    use crate::domain::message::NewMessage;
    use crate::domain::recall::search::RecallQuery;

    fn sent(chat: &mut Chat, id: &str, text: &str) -> store::Write {
        let message = NewMessage {
            id: id.into(),
            name: "Ann".into(),
            text: text.into(),
            ..NewMessage::default()
        }
        .build("message", &crate::domain::Limits::default())
        .expect("a valid message");
        chat.apply(ChatEvent::MessageSent(message))
            .expect("appends");
        let (seq, message) = chat.message(id).expect("just sent");
        store::Write::Message {
            chat: ChatKey::untenanted("c"),
            seq,
            message: message.clone(),
        }
    }

    fn chat() -> Chat {
        let mut chat = Chat::default();
        sent(&mut chat, "m1", "The brass key opens the iron door.");
        sent(&mut chat, "m2", "Gulls followed the boat.");
        chat
    }

    fn found(index: &RecallIndex, chat: &Chat, text: &str) -> Vec<String> {
        let query = RecallQuery {
            text,
            vector: None,
            exclude_from_seq: None,
            exclude_ids: &[],
            limit: 10,
            min_score: 0.0,
            min_similarity: 0.0,
        };
        index
            .search(chat, &query)
            .into_iter()
            .map(|h| h.key.message_id.to_string())
            .collect()
    }

    fn settings() -> Settings {
        let mut settings = Settings::default();
        settings.recall.enabled = true;
        settings
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn a_long_chat_built_off_the_workers_finds_its_messages() {
        let mut chat = chat();
        for k in 0..OFF_WORKER_MESSAGES {
            sent(
                &mut chat,
                &format!("x{k}"),
                &format!("Filler line number {k}."),
            );
        }
        let in_task = chat.clone();
        let from_worker = tokio::spawn(async move {
            let mut state = RecallState::default();
            found(
                state.synced(&in_task, &settings(), "m", 0),
                &in_task,
                "brass key",
            )
        });
        assert_eq!(from_worker.await.expect("the task ends"), ["m1"]);
        // From the runtime's own thread (block_on) too.
        let mut state = RecallState::default();
        assert_eq!(
            found(state.synced(&chat, &settings(), "m", 0), &chat, "brass key"),
            ["m1"]
        );
    }

    #[test]
    fn a_large_index_a_search_holds_waits_for_it_then_catches_up() {
        let mut chat = chat();
        let mut state = RecallState::default();
        let snapshot = state.synced(&chat, &settings(), "m", 0).clone();
        let write = sent(&mut chat, "m3", "A locked chest under the stairs.");
        state.note_writes(&[write]);
        // The search holds the index: neither cut again nor copied.
        let index = state.synced(&chat, &settings(), "m", 0);
        assert!(Arc::ptr_eq(index, &snapshot));
        assert!(found(index, &chat, "locked chest").is_empty());
        assert!(state.has_deferred());
        drop(snapshot);
        // Alone again: the next sync applies what waited.
        let index = state.synced(&chat, &settings(), "m", 0);
        assert_eq!(found(index, &chat, "locked chest"), ["m3"]);
        assert!(!state.has_deferred());
    }

    #[test]
    fn a_small_index_a_search_holds_is_copied_and_synced_at_once() {
        let mut chat = chat();
        let mut state = RecallState::default();
        let snapshot = state.synced(&chat, &settings(), "m", 100).clone();
        let write = sent(&mut chat, "m3", "A locked chest under the stairs.");
        state.note_writes(&[write]);
        let index = state.synced(&chat, &settings(), "m", 100);
        assert!(!Arc::ptr_eq(index, &snapshot));
        assert_eq!(found(index, &chat, "locked chest"), ["m3"]);
        // The search's snapshot is as it was.
        assert!(found(&snapshot, &chat, "locked chest").is_empty());
    }

    #[test]
    fn a_vector_that_comes_while_a_search_holds_the_index_is_attached_after() {
        let chat = chat();
        let mut state = RecallState::default();
        let snapshot = state.synced(&chat, &settings(), "m", 0).clone();
        assert_eq!(state.missing_count(), 2);
        let pending = state.missing(&chat, 10);
        let first = &pending[0];
        assert!(state.attach(&first.key, first.fingerprint, &[1.0, 0.0]));
        assert!(
            !state.attach(&pending[1].key, pending[1].fingerprint, &[1.0, 0.0, 0.0]),
            "another dimension than the waiting vector's"
        );
        assert!(!state.attach(&pending[1].key, pending[1].fingerprint + 1, &[0.0, 1.0]));
        // Waiting to be attached: not asked for again.
        assert_eq!(state.missing_count(), 1);
        assert_eq!(state.missing(&chat, 10).len(), 1);
        assert_eq!(state.dims(), 2);
        assert_eq!(snapshot.vector_count(), 0);
        drop(snapshot);
        let index = state.synced(&chat, &settings(), "m", 0);
        assert_eq!(index.vector_count(), 1);
        assert_eq!(state.missing_count(), 1);
    }
}
