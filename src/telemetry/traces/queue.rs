//! The export queue: finished spans, already written as OTLP, waiting for
//! the export task.
//!
//! A span is written into one buffer as it ends (under the queue's lock:
//! a few hundred bytes for most spans), so queueing it costs no allocation
//! of its own and the export task sends a batch's bytes as they lie. The
//! queue is bounded in spans ([`QUEUE_SPANS`]) and in bytes
//! ([`QUEUE_BYTES`]), a batch in spans ([`BATCH_SPANS`]) and in bytes
//! ([`BATCH_BYTES`], under a collector's usual 4 MiB request limit).

use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Finished spans waiting for export, at most; past it spans are dropped.
pub const QUEUE_SPANS: usize = 8192;
/// Bytes of finished spans waiting for export, at most (a span that finds
/// the queue under it is queued whole); past it spans are dropped.
pub const QUEUE_BYTES: usize = 32 * 1024 * 1024;
/// Spans sent in one export request, at most.
pub const BATCH_SPANS: usize = 512;
/// Bytes of spans sent in one export request, at most, unless one span
/// alone is larger (a collector refuses requests over 4 MiB by default).
pub const BATCH_BYTES: usize = 3 * 1024 * 1024;

/// Why a span was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotQueued {
    /// The export task has taken its last spans: the server is stopping.
    Shutdown,
    /// [`QUEUE_SPANS`] or [`QUEUE_BYTES`] reached.
    Full,
}

/// Spans written one after the other, and where each ends.
#[derive(Debug, Default)]
pub struct Written {
    /// `ScopeSpans.spans` entries, in the order the spans ended.
    pub bytes: Vec<u8>,
    /// The end of each span in `bytes`.
    ends: Vec<usize>,
}

impl Written {
    /// How many spans.
    pub fn spans(&self) -> usize {
        self.ends.len()
    }

    /// Whether a batch is full: [`BATCH_SPANS`] spans or [`BATCH_BYTES`].
    fn full(&self) -> bool {
        self.ends.len() >= BATCH_SPANS || self.bytes.len() >= BATCH_BYTES
    }

    /// The first batch (at most [`BATCH_SPANS`] spans and [`BATCH_BYTES`],
    /// at least one span), taken out; the rest stay. Taken whole, the
    /// buffer starts again with `capacity`.
    pub fn take_batch(&mut self, capacity: usize) -> Written {
        let most = self.ends.len().min(BATCH_SPANS);
        let count = self.ends[..most]
            .partition_point(|&end| end <= BATCH_BYTES)
            .max(most.min(1));
        if count == self.ends.len() {
            return std::mem::replace(
                self,
                Written {
                    bytes: Vec::with_capacity(capacity),
                    ends: Vec::with_capacity(BATCH_SPANS),
                },
            );
        }
        let cut = self.ends[count - 1];
        let rest_bytes = self.bytes.split_off(cut);
        let mut rest_ends = self.ends.split_off(count);
        rest_ends.iter_mut().for_each(|end| *end -= cut);
        std::mem::replace(
            self,
            Written {
                bytes: rest_bytes,
                ends: rest_ends,
            },
        )
    }
}

/// Finished spans waiting for export, and how they wake the export task.
#[derive(Debug, Default)]
pub struct SpanQueue {
    written: parking_lot::Mutex<Written>,
    /// Woken by the span that finds the queue empty (which arms a batch's
    /// deadline) and by the one that fills a batch: twice a batch, not once
    /// a span.
    pub wake: Notify,
    /// Set (under the lock) when the export task takes its last spans: a
    /// span ended later is dropped.
    closed: AtomicBool,
}

impl SpanQueue {
    /// Queues one span, written by `write` at the end of the queue's buffer
    /// (a whole `ScopeSpans.spans` entry), unless the queue is closed or
    /// full.
    pub fn push(&self, write: impl FnOnce(&mut Vec<u8>)) -> Result<(), NotQueued> {
        let wake = {
            let mut written = self.written.lock();
            if self.closed.load(Ordering::Relaxed) {
                return Err(NotQueued::Shutdown);
            }
            if written.ends.len() >= QUEUE_SPANS || written.bytes.len() >= QUEUE_BYTES {
                return Err(NotQueued::Full);
            }
            let was_full = written.full();
            write(&mut written.bytes);
            let end = written.bytes.len();
            written.ends.push(end);
            written.ends.len() == 1 || (!was_full && written.full())
        };
        if wake {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// The first batch queued (see [`Written::take_batch`]); none when the
    /// queue is empty.
    pub fn take(&self) -> Option<Written> {
        let mut written = self.written.lock();
        if written.ends.is_empty() {
            return None;
        }
        // Room for about as much as the batch taken: no growing while
        // spans are pushed at a steady pace.
        let capacity = written.bytes.len().min(BATCH_BYTES);
        Some(written.take_batch(capacity))
    }

    /// How many spans are queued, and whether a batch is full.
    pub fn state(&self) -> (usize, bool) {
        let written = self.written.lock();
        (written.ends.len(), written.full())
    }

    /// Closes the queue and takes everything in it: a span ended later is
    /// dropped, none is lost or counted twice.
    pub fn close(&self) -> Written {
        let mut written = self.written.lock();
        self.closed.store(true, Ordering::Relaxed);
        std::mem::take(&mut *written)
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
        assert_eq!(first.spans(), 2, "a third span would pass BATCH_BYTES");
        assert_eq!(first.bytes.len(), 2 * big);
        let second = queue.take().expect("queued");
        assert_eq!((second.spans(), second.bytes.len()), (3, 2 * big + 10));
        assert!(queue.take().is_none());

        // A span larger than a batch leaves alone.
        queue.push(span(BATCH_BYTES + 1)).expect("room");
        queue.push(span(5)).expect("room");
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
        let mut all = queue.close();
        assert_eq!(all.spans(), QUEUE_SPANS);
        assert_eq!(queue.push(span(1)), Err(NotQueued::Shutdown));
        let mut batches = 0;
        while all.spans() > 0 {
            assert_eq!(all.take_batch(0).spans(), BATCH_SPANS);
            batches += 1;
        }
        assert_eq!(batches, QUEUE_SPANS / BATCH_SPANS);

        let queue = SpanQueue::default();
        queue.push(span(QUEUE_BYTES)).expect("room");
        assert_eq!(queue.push(span(1)), Err(NotQueued::Full), "bytes bound");
    }
}
