//! Fan-out to subscribers, latest-state style: a subscriber that reads
//! slowly skips intermediate revisions but always ends at the latest one,
//! and never holds up the refresh that produced it.
//!
//! - Named chats: one `watch` receiver per chat (a refresh only replaces
//!   the chat's latest value; 10,000 subscribers cost one wake-up each).
//! - Every chat: a bounded `broadcast` channel. A subscriber that falls more
//!   than its capacity behind is not cut off: it resynchronises from every
//!   chat's latest injection, skipping only what it already has (the chats
//!   in memory, and those dropped from memory since its last catch-up,
//!   read back from the store).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use parking_lot::Mutex;
use tokio::sync::{broadcast, watch};
use tokio_stream::wrappers::{BroadcastStream, WatchStream, errors::BroadcastStreamRecvError};
use tokio_stream::{Stream, StreamMap};

use super::cache::Dropped;
use super::catch_up::CatchUp;
use super::slot::LatestInjections;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::refresh::{Injection, InjectionKey};
use crate::domain::{DomainError, Limits};
use crate::telemetry::{self, NamedCounter};

/// Injections sent to subscribers, counted once per delivery through a
/// handle kept after its first use (no registry lookup per delivery).
static UPDATES_PUSHED: NamedCounter = NamedCounter::new(telemetry::UPDATES_PUSHED);
/// Revisions slow subscribers skipped, as [`UPDATES_PUSHED`].
static UPDATES_SKIPPED: NamedCounter = NamedCounter::new(telemetry::UPDATES_SKIPPED);

type Latest = LatestInjections;

/// Open subscriptions, in all and per client connection, for the limits.
#[derive(Default)]
pub(super) struct Subscribers {
    counts: Arc<Mutex<Counts>>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_connection: HashMap<SocketAddr, usize>,
}

impl Subscribers {
    /// Counts one more subscription, or refuses it past a limit.
    pub fn admit(
        &self,
        limits: &Limits,
        connection: Option<SocketAddr>,
    ) -> Result<Permit, DomainError> {
        let mut counts = self.counts.lock();
        if counts.total >= limits.max_subscribers {
            return Err(DomainError::ResourceExhausted(format!(
                "the server has its maximum of {} open subscriptions",
                limits.max_subscribers
            )));
        }
        if let Some(connection) = connection {
            let mine = counts.per_connection.entry(connection).or_insert(0);
            if *mine >= limits.max_subscribers_per_connection {
                return Err(DomainError::ResourceExhausted(format!(
                    "a connection may have at most {} open subscriptions",
                    limits.max_subscribers_per_connection
                )));
            }
            *mine += 1;
        }
        counts.total += 1;
        Ok(Permit {
            counts: self.counts.clone(),
            connection,
        })
    }
}

/// One counted subscription; dropping it uncounts it.
pub(super) struct Permit {
    counts: Arc<Mutex<Counts>>,
    connection: Option<SocketAddr>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut counts = self.counts.lock();
        counts.total = counts.total.saturating_sub(1);
        if let Some(connection) = self.connection
            && let Some(mine) = counts.per_connection.get_mut(&connection)
        {
            *mine -= 1;
            if *mine == 0 {
                counts.per_connection.remove(&connection);
            }
        }
    }
}

enum Source {
    Chats(StreamMap<ChatKey, WatchStream<Latest>>),
    All {
        catch_up: CatchUp,
        updates: BroadcastStream<Arc<Injection>>,
        /// Only this tenant's chats are passed on.
        tenant: Tenant,
        /// The cache's eviction count when this stream last caught up:
        /// chats dropped from memory since may hold updates it missed.
        evictions_seen: u64,
        /// Reading back, after a fall behind, the latest injections of
        /// chats dropped from memory since `evictions_seen`.
        catching_up: Option<Reading>,
    },
}

/// The latest injections of chats that are no longer in memory, being read.
type Reading = Pin<Box<dyn Future<Output = Vec<Arc<Injection>>> + Send>>;

/// The stream of injections one `Subscribe` call receives, in revision
/// order per chat, never the same revision twice.
pub struct Updates {
    _permit: Permit,
    source: Source,
    queued: VecDeque<Arc<Injection>>,
    sent: HashMap<ChatKey, [u64; 3]>,
}

impl Updates {
    pub(super) fn chats(
        receivers: Vec<(ChatKey, watch::Receiver<Latest>)>,
        permit: Permit,
    ) -> Updates {
        let mut queued = VecDeque::new();
        let mut map = StreamMap::with_capacity(receivers.len());
        for (chat_id, mut receiver) in receivers {
            queued.extend(receiver.borrow_and_update().all());
            map.insert(chat_id, WatchStream::from_changes(receiver));
        }
        Updates {
            _permit: permit,
            source: Source::Chats(map),
            queued,
            sent: HashMap::new(),
        }
        .opened()
    }

    pub(super) fn all_chats(
        catch_up: CatchUp,
        receiver: broadcast::Receiver<Arc<Injection>>,
        permit: Permit,
        tenant: Tenant,
        evictions_seen: u64,
    ) -> Updates {
        Updates {
            _permit: permit,
            source: Source::All {
                catch_up,
                updates: BroadcastStream::new(receiver),
                tenant,
                evictions_seen,
                catching_up: None,
            },
            queued: VecDeque::new(),
            sent: HashMap::new(),
        }
        .opened()
    }

    /// Whether `injection` is newer than what this subscriber has of its
    /// chat; records it as sent when it is.
    fn is_new(&mut self, injection: &Injection) -> bool {
        // Per chat, the revision sent of each key; no allocation once known.
        let slot = match injection.key {
            InjectionKey::Scene => 0,
            InjectionKey::Messages => 1,
            InjectionKey::Recall => 2,
        };
        let sent = match self.sent.get_mut(&injection.chat) {
            Some(revisions) => &mut revisions[slot],
            None => &mut self.sent.entry(injection.chat.clone()).or_insert([0, 0, 0])[slot],
        };
        if injection.revision <= *sent {
            return false;
        }
        if *sent > 0 {
            UPDATES_SKIPPED.increment(injection.revision - *sent - 1);
        }
        *sent = injection.revision;
        UPDATES_PUSHED.increment(1);
        true
    }

    fn opened(self) -> Self {
        metrics::gauge!(telemetry::SUBSCRIBERS).increment(1.0);
        self
    }
}

impl Drop for Updates {
    fn drop(&mut self) {
        metrics::gauge!(telemetry::SUBSCRIBERS).decrement(1.0);
    }
}

impl Stream for Updates {
    type Item = Arc<Injection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(next) = this.queued.pop_front() {
                if this.is_new(&next) {
                    return Poll::Ready(Some(next));
                }
                continue;
            }
            let next = match &mut this.source {
                Source::Chats(map) => match ready!(Pin::new(map).poll_next(cx)) {
                    Some((_, latest)) => {
                        this.queued.extend(latest.all());
                        continue;
                    }
                    None => return Poll::Ready(None),
                },
                Source::All {
                    catch_up,
                    updates,
                    tenant,
                    evictions_seen,
                    catching_up,
                } => {
                    if let Some(reading) = catching_up {
                        let mut latest = ready!(reading.as_mut().poll(cx));
                        *catching_up = None;
                        latest.sort_by(|a, b| a.chat.cmp(&b.chat));
                        this.queued.extend(latest);
                        continue;
                    }
                    match ready!(Pin::new(updates).poll_next(cx)) {
                        Some(Ok(injection)) if injection.chat.tenant == *tenant => injection,
                        Some(Ok(_)) => continue, // another tenant's chat
                        Some(Err(BroadcastStreamRecvError::Lagged(skipped))) => {
                            tracing::debug!(
                                skipped,
                                "all-chats subscriber fell behind; resynchronising"
                            );
                            let mut latest = catch_up.latest_in_memory(tenant);
                            latest.sort_by(|a, b| a.chat.cmp(&b.chat));
                            this.queued.extend(latest);
                            // Chats dropped from memory since the last catch-up
                            // are read back: an update missed may be theirs.
                            let (dropped, seen) = catch_up.evicted_since(*evictions_seen);
                            *evictions_seen = seen;
                            if dropped != Dropped::None {
                                let catch_up = catch_up.clone();
                                let tenant = tenant.clone();
                                *catching_up = Some(Box::pin(async move {
                                    catch_up.latest_of_dropped(&tenant, dropped).await
                                }));
                            }
                            continue;
                        }
                        None => return Poll::Ready(None),
                    }
                }
            };
            if this.is_new(&next) {
                return Poll::Ready(Some(next));
            }
        }
    }
}
