//! The export queue: finished spans, already written as OTLP, waiting for
//! the export task.
//!
//! A span is written into the queue's last batch as it ends (under the
//! queue's lock: a few hundred bytes for most spans), so queueing it costs
//! no allocation of its own and the export task sends a batch's bytes as
//! they lie. The queue is a list of batches: a span that would pass a
//! batch's bounds ([`BATCH_SPANS`], [`BATCH_BYTES`], the latter under a
//! collector's usual 4 MiB request limit) opens the next one, and the
//! export task takes the first whole, so taking copies nothing however
//! long the queue has grown (a collector down, say). The whole queue is
//! bounded in spans ([`QUEUE_SPANS`]) and in bytes ([`QUEUE_BYTES`]): a
//! span that would pass either is not queued.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Finished spans waiting for export, at most; past it spans are dropped.
pub const QUEUE_SPANS: usize = 8192;
/// Bytes of finished spans waiting for export, at most; a span that would
/// pass it is dropped.
pub const QUEUE_BYTES: usize = 32 * 1024 * 1024;
/// Spans sent in one export request, at most.
pub const BATCH_SPANS: usize = 512;
/// Bytes of spans sent in one export request, at most, unless one span
/// alone is larger (a collector refuses requests over 4 MiB by default).
pub const BATCH_BYTES: usize = 3 * 1024 * 1024;
/// The room a new batch starts with (about 250 spans of an RPC).
const BATCH_START_BYTES: usize = 64 * 1024;

/// Why a span was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotQueued {
    /// The export task has taken its last spans: the server is stopping.
    Shutdown,
    /// [`QUEUE_SPANS`] or [`QUEUE_BYTES`] reached.
    Full,
}

/// A batch of spans written one after the other.
#[derive(Debug, Default)]
pub struct Written {
    /// `ScopeSpans.spans` entries, in the order the spans ended.
    pub bytes: Vec<u8>,
    /// How many spans.
    spans: usize,
}

impl Written {
    /// How many spans.
    pub fn spans(&self) -> usize {
        self.spans
    }

    /// Whether the batch is full: [`BATCH_SPANS`] spans or [`BATCH_BYTES`].
    fn full(&self) -> bool {
        self.spans >= BATCH_SPANS || self.bytes.len() >= BATCH_BYTES
    }
}

/// The batches waiting, and their totals.
#[derive(Debug, Default)]
struct Batches {
    /// Every batch but the last is full or closed; the last takes spans.
    list: VecDeque<Written>,
    spans: usize,
    bytes: usize,
}

/// Finished spans waiting for export, and how they wake the export task.
#[derive(Debug, Default)]
pub struct SpanQueue {
    batches: parking_lot::Mutex<Batches>,
    /// Woken by the span that finds the queue empty (which arms a batch's
    /// deadline) and by the one that fills a batch: twice a batch, not once
    /// a span.
    pub wake: Notify,
    /// Set (under the lock) when the export task takes its last spans: a
    /// span ended later is dropped.
    closed: AtomicBool,
}

impl SpanQueue {
    /// Queues one span, written by `write` at the end of the last batch (a
    /// whole `ScopeSpans.spans` entry), unless the queue is closed or full,
    /// or the span would make it pass [`QUEUE_BYTES`].
    pub fn push(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), NotQueued> {
        let wake = {
            let mut guard = self.batches.lock();
            let batches = &mut *guard;
            if self.closed.load(Ordering::Relaxed) {
                return Err(NotQueued::Shutdown);
            }
            if batches.spans >= QUEUE_SPANS || batches.bytes >= QUEUE_BYTES {
                return Err(NotQueued::Full);
            }
            if batches.list.back().is_none_or(Written::full) {
                batches.list.push_back(Written {
                    bytes: Vec::with_capacity(BATCH_START_BYTES),
                    spans: 0,
                });
            }
            let last = batches
                .list
                .back_mut()
                .expect("a batch with room was just made sure of");
            let start = last.bytes.len();
            write(&mut last.bytes);
            let written = last.bytes.len() - start;
            if batches.bytes + written > QUEUE_BYTES {
                last.bytes.truncate(start);
                return Err(NotQueued::Full);
            }
            last.spans += 1;
            batches.spans += 1;
            batches.bytes += written;
            batches.spans == 1 || last.full()
        };
        if wake {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// The first batch queued, taken whole (at most [`BATCH_SPANS`] spans
    /// and [`BATCH_BYTES`], unless one span alone is larger); none when the
    /// queue is empty.
    pub fn take(&self) -> Option<Written> {
        let mut batches = self.batches.lock();
        let first = batches.list.pop_front()?;
        batches.spans -= first.spans;
        batches.bytes -= first.bytes.len();
        Some(first)
    }

    /// How many spans are queued, and whether a batch is full.
    pub fn state(&self) -> (usize, bool) {
        let batches = self.batches.lock();
        let full = batches.list.len() > 1 || batches.list.front().is_some_and(Written::full);
        (batches.spans, full)
    }

    /// Closes the queue and takes every batch in it: a span ended later is
    /// dropped, none is lost or counted twice.
    pub fn close(&self) -> VecDeque<Written> {
        let mut batches = self.batches.lock();
        self.closed.store(true, Ordering::Relaxed);
        std::mem::take(&mut *batches).list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A span of `len` bytes (its content does not matter to the queue).
    fn span(len: usize) -> impl FnOnce(&mut Vec<u8>) {
        move |out: &mut Vec<u8>| out.resize(out.len() + len, 7)
    }

    #[test]
    fn a_batch_stops_at_its_byte_bound_but_holds_at_least_one_span() {
        let queue = SpanQueue::default();
        let big = BATCH_BYTES / 3 + 1;
        for _ in 0..4 {
            queue.push(span(big)).expect("room");
        }
        queue.push(span(10)).expect("room");
        let first = queue.take().expect("queued");
        assert_eq!(first.spans(), 3, "the third span passes BATCH_BYTES");
        assert_eq!(first.bytes.len(), 3 * big);
        let second = queue.take().expect("queued");
        assert_eq!((second.spans(), second.bytes.len()), (2, big + 10));
        assert!(queue.take().is_none());
        assert_eq!(queue.state(), (0, false));

        // A span larger than a batch leaves alone.
        queue.push(span(BATCH_BYTES + 1)).expect("room");
        queue.push(span(5)).expect("room");
        assert_eq!(queue.state(), (2, true));
        assert_eq!(queue.take().expect("queued").spans(), 1);
        assert_eq!(queue.take().expect("queued").bytes, vec![7; 5]);
    }

    #[test]
    fn a_full_queue_or_a_closed_one_takes_no_span() {
        let queue = SpanQueue::default();
        for _ in 0..QUEUE_SPANS {
            queue.push(span(1)).expect("room");
        }
        assert_eq!(queue.push(span(1)), Err(NotQueued::Full));
        let all = queue.close();
        assert_eq!(all.len(), QUEUE_SPANS / BATCH_SPANS);
        assert!(all.iter().all(|batch| batch.spans() == BATCH_SPANS));
        assert_eq!(queue.push(span(1)), Err(NotQueued::Shutdown));
    }

    #[test]
    fn a_span_that_would_pass_the_byte_bound_is_not_queued() {
        let queue = SpanQueue::default();
        queue.push(span(QUEUE_BYTES - 10)).expect("room");
        assert_eq!(queue.push(span(11)), Err(NotQueued::Full));
        queue.push(span(10)).expect("exactly the bound");
        assert_eq!(queue.push(span(1)), Err(NotQueued::Full));
        let bytes: usize = queue.close().iter().map(|b| b.bytes.len()).sum();
        assert_eq!(bytes, QUEUE_BYTES, "the refused spans left nothing behind");
    }
}
