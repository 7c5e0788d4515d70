//! A chat's recall index: its chunks, their words and their vectors, kept
//! in step with the chat message by message.
//!
//! The engine builds it from the chat and the vectors stored for it the
//! first time recall needs it, tells it which messages each commit wrote
//! ([`RecallIndex::mark`]), and brings it up to date
//! ([`RecallIndex::sync`]) before each use: only the messages marked are cut
//! again. A chunk whose text did not change keeps its vector; a vector
//! that arrives for a text that changed meanwhile is refused.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use compact_str::CompactString;

use super::chunk::chunks;
use super::keyword::KeywordIndex;
use super::search::{self, CANDIDATES, Candidates, Hit, RecallQuery};
use super::vectors::{VectorSet, centroid};
use super::{
    ChunkKey, Source, StoredVector, embedding_input, indexable, input_fingerprint, speaker,
};
use crate::chat::Chat;
use crate::message::Message;
use slots::Slots;

mod slots;

/// One chunk in the index.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Doc {
    pub key: ChunkKey,
    /// The message's position key when indexed.
    pub seq: i64,
    /// The chunk's bytes in its text.
    pub range: Range<u32>,
    /// [`input_fingerprint`] of the chunk (its speaker and text).
    pub fingerprint: u64,
}

/// A chunk that has no vector yet, for an indexing request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingChunk {
    /// The chunk.
    pub key: ChunkKey,
    /// Its [`input_fingerprint`]: the vector is for this input only.
    pub fingerprint: u64,
    /// What its vector is computed from ([`embedding_input`]: its text,
    /// after its speaker's name for a message's).
    pub text: String,
}

/// A chat's recall index (see the module documentation). Invariants:
/// `docs[s]` is `Some` exactly for the slots not in `free`; `by_message`
/// lists the slots of each message's chunks; the keyword index holds
/// exactly the present slots; a vector is held only for a present slot.
#[derive(Debug, Clone, Default)]
pub struct RecallIndex {
    chunk_chars: usize,
    model: String,
    docs: Slots,
    free: Vec<u32>,
    by_message: HashMap<CompactString, Vec<u32>>,
    keyword: KeywordIndex,
    vectors: VectorSet,
    /// Stored vectors not (yet) matched with a chunk: a chunk cut again
    /// with the same text takes its vector back from here.
    spare: HashMap<ChunkKey, (u64, Vec<f32>)>,
    dirty: BTreeSet<CompactString>,
    all_dirty: bool,
    /// The heap `by_message` holds, kept as it changes (an estimate).
    message_bytes: usize,
    /// Bumped by every change a search could see (a message cut again, a
    /// vector attached, the whole chat replaced).
    generation: u64,
}

/// The estimated heap of one message's entry in `by_message`.
fn message_entry_bytes(id: &CompactString, slots: usize) -> usize {
    id.len() + std::mem::size_of::<(CompactString, Vec<u32>)>() + 8 + slots * 4
}

/// The text a chunk of `source` is cut from.
fn source_text(message: &Message, source: Source) -> Option<&str> {
    match source {
        Source::Message => indexable(message).then(|| message.text()),
        Source::SceneRecap => message
            .data()
            .scene_recap_memory
            .as_deref()
            .filter(|t| !t.trim().is_empty() && message.data().is_visible_scene_break()),
    }
}

impl RecallIndex {
    /// The index of `chat`, chunks of at most `chunk_chars` characters,
    /// using the vectors of `stored` that `model` computed for the chunks'
    /// current texts.
    pub fn build(
        chat: &Chat,
        chunk_chars: usize,
        model: &str,
        stored: Vec<StoredVector>,
    ) -> RecallIndex {
        let mut index = RecallIndex {
            chunk_chars,
            model: model.to_owned(),
            ..RecallIndex::default()
        };
        index.keep_spare(stored);
        for (seq, message) in chat.messages() {
            index.add_message(seq, message);
        }
        index.spare.clear();
        index
    }

    fn keep_spare(&mut self, stored: Vec<StoredVector>) {
        for v in stored {
            if v.model == self.model {
                self.spare.insert(v.key, (v.fingerprint, v.vector));
            }
        }
    }

    /// The model whose vectors the index uses.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Notes that `message_id` was written (added, changed or removed): the
    /// next [`RecallIndex::sync`] cuts it again.
    pub fn mark(&mut self, message_id: &str) {
        if !self.all_dirty {
            self.dirty.insert(message_id.into());
        }
    }

    /// Notes that the whole chat was replaced (an import): every message
    /// is cut again and every vector dropped (the store drops them too: an
    /// imported chat is indexed anew).
    pub fn mark_all(&mut self) {
        self.generation += 1;
        self.all_dirty = true;
        self.dirty.clear();
        self.vectors = VectorSet::default();
    }

    /// Brings the index up to date with `chat`, with chunks of at most
    /// `chunk_chars` characters and vectors of `model` (a change of either
    /// cuts every message again; a chunk keeps its vector while its text
    /// and the model stay the same).
    pub fn sync(&mut self, chat: &Chat, chunk_chars: usize, model: &str) {
        let changes = model != self.model
            || chunk_chars != self.chunk_chars
            || self.all_dirty
            || !self.dirty.is_empty();
        if changes {
            self.generation += 1;
        }
        if model != self.model {
            self.model = model.to_owned();
            self.vectors = VectorSet::default();
            self.all_dirty = true;
        }
        if chunk_chars != self.chunk_chars {
            self.chunk_chars = chunk_chars;
            self.all_dirty = true;
        }
        if self.all_dirty {
            let kept = self.take_vectors();
            *self = RecallIndex {
                chunk_chars: self.chunk_chars,
                model: self.model.clone(),
                generation: self.generation,
                ..RecallIndex::default()
            };
            self.spare = kept;
            for (seq, message) in chat.messages() {
                self.add_message(seq, message);
            }
            self.spare.clear();
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        for id in dirty {
            let kept = self.remove_message(&id);
            self.spare.extend(kept);
            if let Some((seq, message)) = chat.message(&id) {
                self.add_message(seq, message);
            }
            self.spare.clear();
        }
    }

    /// Every held vector by chunk, for cutting again.
    fn take_vectors(&mut self) -> HashMap<ChunkKey, (u64, Vec<f32>)> {
        let mut kept = HashMap::new();
        for (slot, doc) in self.docs.iter() {
            if let (Some(doc), Some(v)) = (doc, self.vectors.get(slot)) {
                kept.insert(doc.key.clone(), (doc.fingerprint, v));
            }
        }
        kept
    }

    fn add_message(&mut self, seq: i64, message: &Message) {
        for source in [Source::Message, Source::SceneRecap] {
            let Some(text) = source_text(message, source) else {
                continue;
            };
            for (part, range) in chunks(text, self.chunk_chars).into_iter().enumerate() {
                let chunk = &text[range.clone()];
                let key = ChunkKey {
                    message_id: message.id.clone(),
                    source,
                    part: u32::try_from(part).unwrap_or(u32::MAX),
                };
                let speaker = speaker(message, source);
                let fingerprint = input_fingerprint(speaker, chunk);
                let slot = self.take_slot();
                // A message's words are searched with its speaker's name:
                // "what did Mira find" prefers Mira's lines.
                match speaker {
                    Some(name) => self.keyword.insert(slot, &format!("{name} {chunk}")),
                    None => self.keyword.insert(slot, chunk),
                }
                if let Some((stored, vector)) = self.spare.remove(&key)
                    && stored == fingerprint
                {
                    self.vectors.put(slot, &vector);
                }
                let slots = self.by_message.entry(message.id.clone()).or_default();
                slots.push(slot);
                self.message_bytes += if slots.len() == 1 {
                    message_entry_bytes(&message.id, 1)
                } else {
                    4
                };
                self.docs.put(
                    slot,
                    Doc {
                        key,
                        seq,
                        range: to_u32(range.start)..to_u32(range.end),
                        fingerprint,
                    },
                );
            }
        }
    }

    fn take_slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(slot) => slot,
            None => self.docs.push_free(),
        }
    }

    /// Removes a message's chunks; returns their vectors by chunk.
    fn remove_message(&mut self, message_id: &str) -> Vec<(ChunkKey, (u64, Vec<f32>))> {
        let mut kept = Vec::new();
        let slots = self.by_message.remove(message_id).unwrap_or_default();
        if !slots.is_empty() {
            self.message_bytes = self
                .message_bytes
                .saturating_sub(message_entry_bytes(&message_id.into(), slots.len()));
        }
        for slot in slots {
            if let Some(doc) = self.docs.take(slot) {
                if let Some(v) = self.vectors.get(slot) {
                    kept.push((doc.key, (doc.fingerprint, v)));
                }
                self.vectors.remove(slot);
                self.keyword.remove(slot);
                self.free.push(slot);
            }
        }
        kept
    }

    /// How many chunks `message_id`'s text of `source` is cut into now.
    pub fn parts(&self, message_id: &str, source: Source) -> u32 {
        let count = self.by_message.get(message_id).map_or(0, |slots| {
            slots
                .iter()
                .filter(|s| self.docs.get(**s).is_some_and(|d| d.key.source == source))
                .count()
        });
        to_u32(count)
    }

    /// The dimension of the index's vectors (0 before the first).
    pub fn dims(&self) -> usize {
        self.vectors.dims()
    }

    /// How many chunks the index holds.
    pub fn chunk_count(&self) -> usize {
        self.docs.len() - self.free.len()
    }

    /// How many chunks have a vector.
    pub fn vector_count(&self) -> usize {
        self.vectors.len()
    }

    /// How many chunks have no vector yet.
    pub fn missing_count(&self) -> usize {
        self.chunk_count() - self.vector_count()
    }

    /// Up to `limit` chunks without a vector, newest first (the recent
    /// messages make the recall tier's query), with their texts from
    /// `chat` (synced).
    pub fn missing(&self, chat: &Chat, limit: usize) -> Vec<PendingChunk> {
        let mut slots: Vec<(i64, u32, u32)> = self
            .docs
            .iter()
            .filter_map(|(slot, doc)| {
                let doc = doc?;
                (!self.vectors.has(slot)).then_some((doc.seq, doc.key.part, slot))
            })
            .collect();
        let take = limit.min(slots.len());
        if take == 0 {
            return Vec::new();
        }
        if take < slots.len() {
            slots.select_nth_unstable_by(take - 1, |a, b| (b.0, a.1).cmp(&(a.0, b.1)));
            slots.truncate(take);
        }
        slots.sort_unstable_by(|a, b| (b.0, a.1).cmp(&(a.0, b.1)));
        slots
            .into_iter()
            .filter_map(|(_, _, slot)| {
                let doc = self.docs.get(slot)?;
                let (speaker, chunk) = passage(chat, doc)?;
                Some(PendingChunk {
                    key: doc.key.clone(),
                    fingerprint: doc.fingerprint,
                    text: embedding_input(speaker, chunk),
                })
            })
            .collect()
    }

    /// Gives chunk `key` its vector, if the chunk still has the text with
    /// `fingerprint` (false otherwise, or when the vector's dimension is
    /// not the index's).
    pub fn attach(&mut self, key: &ChunkKey, fingerprint: u64, vector: &[f32]) -> bool {
        let Some(slots) = self.by_message.get(&key.message_id) else {
            return false;
        };
        for slot in slots {
            if let Some(doc) = self.docs.get(*slot)
                && doc.key == *key
            {
                let attached = doc.fingerprint == fingerprint && self.vectors.put(*slot, vector);
                if attached {
                    self.generation += 1;
                }
                return attached;
            }
        }
        false
    }

    /// The direction of `message_ids`' chunks together (the centroid of
    /// their vectors), `None` when none has a vector.
    pub fn direction<'a>(
        &self,
        message_ids: impl IntoIterator<Item = &'a str>,
    ) -> Option<Vec<f32>> {
        let mut vectors = Vec::new();
        for id in message_ids {
            for slot in self
                .by_message
                .get(id)
                .map(Vec::as_slice)
                .unwrap_or_default()
            {
                if let Some(v) = self.vectors.get(*slot) {
                    vectors.push(v);
                }
            }
        }
        centroid(vectors.iter().map(Vec::as_slice))
    }

    /// The index's generation: it changes whenever the index does in a
    /// way a search could see, so that equal queries over one generation
    /// find the same candidates.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether chunk `key` is held with the text of `fingerprint`, and a
    /// vector of `dims` numbers would fit the index (what
    /// [`RecallIndex::attach`] would accept, without attaching).
    pub fn accepts(&self, key: &ChunkKey, fingerprint: u64, dims: usize) -> bool {
        (self.dims() == 0 || self.dims() == dims)
            && self.by_message.get(&key.message_id).is_some_and(|slots| {
                slots.iter().any(|slot| {
                    self.docs
                        .get(*slot)
                        .is_some_and(|doc| doc.key == *key && doc.fingerprint == fingerprint)
                })
            })
    }

    /// The ranked candidates for `query` (see [`search`]): the index alone
    /// is read, so this may run on a snapshot of the index while the chat
    /// changes; [`Candidates::hits`] reads their texts afterwards.
    pub fn candidates(&self, query: &RecallQuery<'_>) -> Candidates {
        self.candidates_by(query, |keep| self.keyword.top(query.text, CANDIDATES, keep))
    }

    /// [`RecallIndex::candidates`] with the old keyword phase (every
    /// entry of every list scored, then the best kept), for the timing.
    #[cfg(test)]
    pub(super) fn candidates_exhaustive(&self, query: &RecallQuery<'_>) -> Candidates {
        self.candidates_by(query, |keep| {
            search::best(self.keyword.scores(query.text), CANDIDATES, keep)
        })
    }

    /// The keyword phase of [`RecallIndex::candidates`] alone, by the new
    /// path or (`exhaustive`) the old one, for the timing.
    #[cfg(test)]
    pub(super) fn keyword_phase(
        &self,
        query: &RecallQuery<'_>,
        exhaustive: bool,
    ) -> Vec<(u32, f32)> {
        let keep = self.keeper(query);
        if exhaustive {
            search::best(self.keyword.scores(query.text), CANDIDATES, &keep)
        } else {
            self.keyword.top(query.text, CANDIDATES, &keep)
        }
    }

    /// The vector phase of [`RecallIndex::candidates`] alone (empty
    /// without a direction), by the new first pass or (`plain`) the one
    /// before issue 44's ninth session, for the timing.
    #[cfg(test)]
    pub(super) fn vector_phase(&self, query: &RecallQuery<'_>, plain: bool) -> Vec<(u32, f32)> {
        let keep = self.keeper(query);
        query.vector.map_or_else(Vec::new, |q| {
            let (floor, vectors) = (query.min_similarity, &self.vectors);
            if plain {
                vectors.similar_plain(q, floor, CANDIDATES, &keep)
            } else {
                vectors.similar(q, floor, CANDIDATES, &keep)
            }
        })
    }

    /// Whether a slot may be a hit for `query`: it holds a chunk, of a
    /// message neither in the recent window nor one of the excluded ones.
    /// Reads the slots' positions only (see [`slots`]); the excluded
    /// messages' slots are looked up once.
    fn keeper<'a>(&'a self, query: &RecallQuery<'_>) -> impl Fn(u32) -> bool + use<'a> {
        let before = query.exclude_from_seq;
        let mut excluded: Vec<u32> = query
            .exclude_ids
            .iter()
            .filter_map(|id| self.by_message.get(*id))
            .flatten()
            .copied()
            .collect();
        excluded.sort_unstable();
        move |slot: u32| {
            self.docs.holds_before(slot, before) && excluded.binary_search(&slot).is_err()
        }
    }

    /// [`RecallIndex::candidates`] with `keyword` for its keyword phase
    /// (given the query's exclusions).
    fn candidates_by(
        &self,
        query: &RecallQuery<'_>,
        keyword: impl FnOnce(&dyn Fn(u32) -> bool) -> Vec<(u32, f32)>,
    ) -> Candidates {
        let doc = |slot: u32| self.docs.get(slot);
        let keep = self.keeper(query);
        let keyword = keyword(&keep);
        let vector = query.vector.map(|q| {
            self.vectors
                .similar(q, query.min_similarity, CANDIDATES, &keep)
        });
        search::rank(keyword, vector, query, doc)
    }

    /// The best chunks for `query` (see [`search`]), read from `chat`
    /// (synced).
    pub fn search(&self, chat: &Chat, query: &RecallQuery<'_>) -> Vec<Hit> {
        self.candidates(query).hits(chat)
    }

    /// Bytes the index holds on the heap (an estimate, kept as the index
    /// changes: reading it costs nothing, however big the chat).
    pub fn heap_bytes(&self) -> usize {
        let docs = self.docs.heap_bytes() + self.free.capacity() * 4;
        docs + self.message_bytes + self.keyword.heap_bytes() + self.vectors.heap_bytes()
    }
}

/// The text of chunk `doc` in `chat`, if its message still has the text
/// the chunk was cut from (its fingerprint): a passage ranked on an older
/// snapshot of the index is read only if it is unchanged.
pub(super) fn passage_text<'c>(chat: &'c Chat, doc: &Doc) -> Option<&'c str> {
    passage(chat, doc).map(|(_, chunk)| chunk)
}

/// [`passage_text`] with the speaker the chunk is embedded after.
fn passage<'c>(chat: &'c Chat, doc: &Doc) -> Option<(Option<&'c str>, &'c str)> {
    let (_, message) = chat.message(&doc.key.message_id)?;
    let text = source_text(message, doc.key.source)?;
    let chunk = text.get(doc.range.start as usize..doc.range.end as usize)?;
    let speaker = speaker(message, doc.key.source);
    (input_fingerprint(speaker, chunk) == doc.fingerprint).then_some((speaker, chunk))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
