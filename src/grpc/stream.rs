//! The `Subscribe` response stream.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio_stream::Stream;
use tokio_util::sync::WaitForCancellationFutureOwned;
use tonic::Status;

use super::wire::WireInjection;
use crate::engine::Updates;

/// Injections for one `Subscribe` call, each sent as its cached encoding
/// (see [`WireInjection`]). Ends
/// after `max_updates` messages (when > 0), or with a clean end of stream
/// when the server shuts down.
pub struct InjectionStream {
    updates: Updates,
    remaining: Option<u32>,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl InjectionStream {
    /// Wraps `updates`; `max_updates == 0` means no limit.
    pub fn new(
        updates: Updates,
        max_updates: u32,
        shutdown: WaitForCancellationFutureOwned,
    ) -> Self {
        InjectionStream {
            updates,
            remaining: (max_updates > 0).then_some(max_updates),
            shutdown: Box::pin(shutdown),
        }
    }
}

impl Stream for InjectionStream {
    type Item = Result<WireInjection, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.remaining == Some(0) || self.shutdown.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.updates).poll_next(cx) {
            Poll::Ready(Some(injection)) => {
                if let Some(remaining) = self.remaining.as_mut() {
                    *remaining -= 1;
                }
                Poll::Ready(Some(Ok(WireInjection(injection))))
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}
