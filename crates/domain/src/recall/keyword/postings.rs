//! A term's posting list, kept in document (slot) order, cut into blocks
//! that each know the most any of their entries can score.
//!
//! Document order lets a search seek a list to a document (galloping)
//! instead of reading it whole. A block's bound is the largest count and
//! the shortest document in it: BM25's share of a term grows with the
//! count and shrinks with the length, so the score of those two together
//! is at least that of every entry, whatever the chat's average length and
//! the term's idf when the search runs (which change with every insert).
//!
//! A list of at most [`BLOCK`] entries keeps no block (most terms are
//! rare: their bound is worked out from the entries when a search needs
//! it); a longer one keeps blocks of [`BLOCK`] entries when it grows by
//! appends (new slots are the highest), split above `2 * BLOCK` when
//! inserts land in the middle (a reused slot), merged with the next when
//! removals leave room.

/// Entries a block holds when filled by appends (and the most a list
/// keeps without blocks).
pub(super) const BLOCK: usize = 64;

/// One entry: a document and how often the term is in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Posting {
    pub doc: u32,
    pub count: u32,
}

/// A run of consecutive entries of a list: its end (exclusive, an index
/// into the list), its last document, and what bounds its scores (the
/// largest count and the shortest document length among its entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Block {
    pub end: u32,
    pub last: u32,
    pub max_count: u32,
    pub min_len: u32,
}

/// One term's entries, in increasing document order. Invariants: the
/// documents are strictly increasing; `blocks` is empty when there are at
/// most [`BLOCK`] entries, and otherwise cuts them into non-empty runs
/// whose `end`s increase to the list's length, each with its exact last
/// document, largest count and shortest length.
#[derive(Debug, Clone, Default)]
pub(super) struct PostingList {
    postings: Vec<Posting>,
    blocks: Vec<Block>,
}

/// A document's length as the index holds it (0, the most a bound can
/// assume, for a slot it does not know).
fn length(doc_len: &[u32], doc: u32) -> u32 {
    doc_len.get(doc as usize).copied().unwrap_or(0)
}

/// The bound of `entries`, ending at `end`.
fn summarise(entries: &[Posting], end: usize, doc_len: &[u32]) -> Block {
    let mut block = Block {
        end: to_u32(end),
        last: entries.last().map_or(0, |p| p.doc),
        max_count: 0,
        min_len: u32::MAX,
    };
    for p in entries {
        block.max_count = block.max_count.max(p.count);
        block.min_len = block.min_len.min(length(doc_len, p.doc));
    }
    block
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl PostingList {
    /// The entries, in document order.
    pub fn postings(&self) -> &[Posting] {
        &self.postings
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.postings.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.postings.is_empty()
    }

    /// How many blocks are kept (for the heap estimate).
    pub fn block_count(&self) -> usize {
        self.blocks.len()
    }

    /// The most `score(count, length)` gives over the blocks' bounds (for
    /// a short list, over its entries), 0 for an empty list: with a
    /// `score` that grows with the count and shrinks with the length, the
    /// most any entry scores.
    pub fn bound(&self, doc_len: &[u32], score: impl Fn(u32, u32) -> f32) -> f32 {
        if self.blocks.is_empty() {
            self.postings
                .iter()
                .map(|p| score(p.count, length(doc_len, p.doc)))
                .fold(0f32, f32::max)
        } else {
            self.blocks
                .iter()
                .map(|b| score(b.max_count, b.min_len))
                .fold(0f32, f32::max)
        }
    }

    /// Where block `b` starts.
    fn start(&self, b: usize) -> usize {
        match b.checked_sub(1).and_then(|p| self.blocks.get(p)) {
            Some(previous) => previous.end as usize,
            None => 0,
        }
    }

    /// Works block `b`'s bound out again from its entries.
    fn resummarise(&mut self, b: usize, doc_len: &[u32]) {
        let start = self.start(b);
        if let Some(end) = self.blocks.get(b).map(|block| block.end as usize)
            && let Some(entries) = self.postings.get(start..end)
        {
            self.blocks[b] = summarise(entries, end, doc_len);
        }
    }

    /// Cuts the list into blocks of [`BLOCK`] (or drops them when it is
    /// short enough to keep none).
    fn rebuild(&mut self, doc_len: &[u32]) {
        self.blocks = if self.postings.len() > BLOCK {
            self.postings
                .chunks(BLOCK)
                .enumerate()
                .map(|(i, run)| summarise(run, i * BLOCK + run.len(), doc_len))
                .collect()
        } else {
            Vec::new()
        };
    }

    /// Adds `posting` in its place (its count replaced if its document is
    /// there already). `doc_len` must hold its document's length.
    pub fn insert(&mut self, posting: Posting, doc_len: &[u32]) {
        let appended = self.postings.last().is_none_or(|p| p.doc < posting.doc);
        let at = if appended {
            self.postings.len()
        } else {
            match self.postings.binary_search_by_key(&posting.doc, |p| p.doc) {
                Ok(at) => {
                    self.postings[at] = posting;
                    let b = self.blocks.partition_point(|b| b.end as usize <= at);
                    self.resummarise(b, doc_len);
                    return;
                }
                Err(at) => at,
            }
        };
        self.postings.insert(at, posting);
        if self.blocks.is_empty() {
            if self.postings.len() > BLOCK {
                self.rebuild(doc_len);
            }
            return;
        }
        let len = length(doc_len, posting.doc);
        let last = self.blocks.len() - 1;
        let b = self
            .blocks
            .partition_point(|b| b.end as usize <= at)
            .min(last);
        if appended && self.blocks[last].end as usize - self.start(last) >= BLOCK {
            self.blocks.push(Block {
                end: to_u32(self.postings.len()),
                last: posting.doc,
                max_count: posting.count,
                min_len: len,
            });
            return;
        }
        for block in &mut self.blocks[b..] {
            block.end += 1;
        }
        let block = &mut self.blocks[b];
        block.last = block.last.max(posting.doc);
        block.max_count = block.max_count.max(posting.count);
        block.min_len = block.min_len.min(len);
        let start = self.start(b);
        let end = self.blocks[b].end as usize;
        if end - start > 2 * BLOCK {
            let middle = start + (end - start) / 2;
            let first = summarise(&self.postings[start..middle], middle, doc_len);
            let second = summarise(&self.postings[middle..end], end, doc_len);
            self.blocks[b] = first;
            self.blocks.insert(b + 1, second);
        }
    }

    /// Removes document `doc`'s entry; whether there was one.
    pub fn remove(&mut self, doc: u32, doc_len: &[u32]) -> bool {
        let Ok(at) = self.postings.binary_search_by_key(&doc, |p| p.doc) else {
            return false;
        };
        self.postings.remove(at);
        if self.blocks.is_empty() {
            return true;
        }
        if self.postings.len() <= BLOCK {
            self.blocks = Vec::new();
            return true;
        }
        let b = self.blocks.partition_point(|b| b.end as usize <= at);
        if b >= self.blocks.len() {
            // Not reached (the blocks cover the list); start again.
            self.rebuild(doc_len);
            return true;
        }
        for block in &mut self.blocks[b..] {
            block.end -= 1;
        }
        let start = self.start(b);
        if self.blocks[b].end as usize == start {
            self.blocks.remove(b);
        } else if self
            .blocks
            .get(b + 1)
            .is_some_and(|next| next.end as usize - start <= BLOCK)
        {
            self.blocks.remove(b);
            self.resummarise(b, doc_len);
        } else {
            self.resummarise(b, doc_len);
        }
        true
    }

    /// Checks the invariants (tests).
    #[cfg(test)]
    pub fn check(&self, doc_len: &[u32]) {
        assert!(self.postings.windows(2).all(|w| w[0].doc < w[1].doc));
        if self.postings.len() <= BLOCK {
            assert!(self.blocks.is_empty());
            return;
        }
        assert_eq!(
            self.blocks.last().map(|b| b.end as usize),
            Some(self.postings.len())
        );
        for b in 0..self.blocks.len() {
            let (start, end) = (self.start(b), self.blocks[b].end as usize);
            assert!(start < end && end - start <= 2 * BLOCK);
            assert_eq!(
                self.blocks[b],
                summarise(&self.postings[start..end], end, doc_len)
            );
        }
    }
}
