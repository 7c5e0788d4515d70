//! The export queue: when batches leave, and what shutdown does with what
//! is left. Paused time: the batch delay passes in no time.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::InstrumentationScope;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState,
};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks, SpanProcessor};

use super::queue::{BATCH_SPANS, Written};
use super::{BATCH_DELAY, ExportingProcessor, Sink};

/// An exporter that records the size of each batch it is sent.
#[derive(Debug, Clone, Default)]
struct Recording(Arc<Mutex<Vec<usize>>>);

impl Recording {
    fn batches(&self) -> Vec<usize> {
        self.0.lock().expect("not poisoned").clone()
    }
}

impl Sink for Recording {
    async fn send(&self, batch: Written) -> Result<(), String> {
        self.0.lock().expect("not poisoned").push(batch.spans());
        Ok(())
    }
}

fn span(n: u64) -> SpanData {
    SpanData {
        span_context: SpanContext::new(
            TraceId::from(u128::from(n) + 1),
            SpanId::from(n + 1),
            TraceFlags::SAMPLED,
            false,
            TraceState::NONE,
        ),
        parent_span_id: SpanId::INVALID,
        parent_span_is_remote: false,
        span_kind: SpanKind::Internal,
        name: "span".into(),
        start_time: SystemTime::UNIX_EPOCH,
        end_time: SystemTime::UNIX_EPOCH,
        attributes: Vec::new(),
        dropped_attributes_count: 0,
        events: SpanEvents::default(),
        links: SpanLinks::default(),
        status: Status::Unset,
        instrumentation_scope: InstrumentationScope::builder("test").build(),
    }
}

/// Lets the export task run until it waits again.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_lone_span_leaves_after_the_batch_delay_and_a_full_batch_at_once() {
    let exported = Recording::default();
    let (processor, flusher) = ExportingProcessor::start(exported.clone(), Duration::from_secs(10));
    processor.on_end(span(0));
    settle().await;
    assert!(exported.batches().is_empty(), "not before the delay");
    tokio::time::sleep(BATCH_DELAY + Duration::from_millis(10)).await;
    settle().await;
    assert_eq!(exported.batches(), vec![1]);

    // A full batch leaves without waiting; what comes after it waits for
    // its own delay.
    for n in 0..(BATCH_SPANS as u64 + 3) {
        processor.on_end(span(n));
    }
    settle().await;
    assert_eq!(exported.batches(), vec![1, BATCH_SPANS]);
    tokio::time::sleep(BATCH_DELAY + Duration::from_millis(10)).await;
    settle().await;
    assert_eq!(exported.batches(), vec![1, BATCH_SPANS, 3]);

    // Shutdown sends what is queued; a span ended after it is not queued.
    processor.on_end(span(1));
    processor.on_end(span(2));
    flusher.flush_and_stop(Duration::from_secs(1)).await;
    assert_eq!(exported.batches(), vec![1, BATCH_SPANS, 3, 2]);
    processor.on_end(span(3));
    assert_eq!(processor.queue.state().0, 0, "dropped, not queued");
}
