//! `Chat::resident_bytes` against real allocations: chats built through
//! the domain API as the store loads them (`Chat::from_parts` of decoded
//! rows) and as events make them (`apply` of appends, or of one
//! `ChatChanged` with the whole transcript), with every allocation counted
//! by a tracking global allocator as glibc's malloc spends it. The sum of
//! the estimates must be within 10% of what was allocated.
//!
//! `cargo test --release --test footprint -- --nocapture` prints bytes per
//! chat, per message and the ratio to the text the chats hold.

use std::alloc::System;
use std::sync::atomic::{AtomicIsize, Ordering};

use recapd::domain::Limits;
use recapd::domain::chat::{Chat, ChatEvent};
use recapd::domain::footprint::allocation_bytes;
use recapd::domain::message::{Message, MessageData, NewMessage};
use tracking_allocator::{AllocationGroupId, AllocationRegistry, AllocationTracker, Allocator};

#[global_allocator]
static GLOBAL: Allocator<System> = Allocator::system();

/// Live bytes, each allocation counted as glibc spends it.
static LIVE_CHUNKS: AtomicIsize = AtomicIsize::new(0);
/// Live bytes as requested.
static LIVE_REQUESTED: AtomicIsize = AtomicIsize::new(0);

struct Counter;

/// Sizes fit an `isize`: no allocation is larger.
fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

impl AllocationTracker for Counter {
    fn allocated(&self, _addr: usize, size: usize, _wrapped: usize, _group: AllocationGroupId) {
        LIVE_CHUNKS.fetch_add(signed(allocation_bytes(size)), Ordering::Relaxed);
        LIVE_REQUESTED.fetch_add(signed(size), Ordering::Relaxed);
    }

    fn deallocated(
        &self,
        _addr: usize,
        size: usize,
        _wrapped: usize,
        _source: AllocationGroupId,
        _current: AllocationGroupId,
    ) {
        LIVE_CHUNKS.fetch_sub(signed(allocation_bytes(size)), Ordering::Relaxed);
        LIVE_REQUESTED.fetch_sub(signed(size), Ordering::Relaxed);
    }
}

const CHATS: usize = 2_000;
const MESSAGES: usize = 20;

/// What a scenario adds to the plain messages.
#[derive(Clone, Copy, PartialEq)]
enum Extras {
    /// 210-byte texts only: the typical chat.
    Plain,
    /// Every third message has a memory, every tenth is a scene break
    /// with a scene recap, every seventh has two swipes.
    Mixed,
}

fn text(chat: usize, i: usize) -> String {
    // 200 to 220 bytes.
    let len = 200 + (chat + i) % 21;
    let sentence = "The ships came in on the evening tide and the harbour filled with voices. ";
    sentence.repeat(3)[..len].to_owned()
}

fn message(chat: usize, i: usize, extras: Extras) -> (Message, Option<MessageData>) {
    let two_swipes = extras == Extras::Mixed && i % 7 == 3;
    let body = text(chat, i);
    let message = NewMessage {
        id: format!("m{i}"),
        name: if i.is_multiple_of(2) { "Alice" } else { "Bob" }.into(),
        is_user: i.is_multiple_of(2),
        swipes: if two_swipes {
            vec![body.clone(), body[..150].to_owned()]
        } else {
            vec![]
        },
        text: if two_swipes { String::new() } else { body },
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("generated messages are valid");
    let data =
        (extras == Extras::Mixed && (i.is_multiple_of(3) || i % 10 == 9)).then(|| MessageData {
            memory: (i.is_multiple_of(3))
                .then(|| format!("Recap of message {i}: the ships came in.")),
            scene_break: (i % 10 == 9).then_some(true),
            scene_recap_memory: (i % 10 == 9).then(|| "The crew reached the harbour. ".repeat(4)),
            ..Default::default()
        });
    (message, data)
}

/// The text bytes a chat holds: every swipe's text and every data string.
fn text_bytes(chat: &Chat) -> usize {
    chat.messages()
        .map(|(_, m)| {
            let data = m.data();
            m.swipes.iter().map(|s| s.text.len()).sum::<usize>()
                + [&data.memory, &data.scene_recap_memory]
                    .into_iter()
                    .flatten()
                    .map(String::len)
                    .sum::<usize>()
        })
        .sum()
}

/// One chat as the store loads it: its rows decoded from their stored
/// JSON, then rebuilt.
fn loaded(rows: &[(i64, String)]) -> Chat {
    let messages = rows
        .iter()
        .map(|(seq, json)| (*seq, serde_json::from_str(json).expect("a stored message")))
        .collect();
    Chat::from_parts(messages, vec![], None)
}

/// One chat as events make it: appended one at a time, data set after.
fn appended(chat: usize, extras: Extras) -> Chat {
    let mut built = Chat::default();
    for i in 0..MESSAGES {
        let (message, data) = message(chat, i, extras);
        let id = message.id.clone();
        built
            .apply(ChatEvent::MessageSent(message))
            .expect("fresh id");
        if let Some(data) = data {
            built.set_message_data(&id, &data).expect("message exists");
        }
    }
    built
}

/// One chat as a client opening it makes it: its whole transcript in one
/// `ChatChanged`, data set after.
fn opened(chat: usize, extras: Extras) -> Chat {
    let (messages, data): (Vec<Message>, Vec<Option<MessageData>>) =
        (0..MESSAGES).map(|i| message(chat, i, extras)).unzip();
    let ids: Vec<_> = messages.iter().map(|m| m.id.clone()).collect();
    let mut built = Chat::default();
    built
        .apply(ChatEvent::ChatChanged(messages))
        .expect("distinct ids");
    for (id, data) in ids.iter().zip(data) {
        if let Some(data) = data {
            built.set_message_data(id, &data).expect("message exists");
        }
    }
    built
}

struct Measured {
    estimate: usize,
    chunks: isize,
    requested: isize,
    text: usize,
}

/// Builds the chats `build` makes, measuring what stays allocated.
fn measure(build: impl Fn(usize) -> Chat) -> Measured {
    let chunks = LIVE_CHUNKS.load(Ordering::Relaxed);
    let requested = LIVE_REQUESTED.load(Ordering::Relaxed);
    let mut chats = Vec::with_capacity(CHATS);
    for c in 0..CHATS {
        chats.push(build(c));
    }
    let chunks = LIVE_CHUNKS.load(Ordering::Relaxed) - chunks;
    let requested = LIVE_REQUESTED.load(Ordering::Relaxed) - requested;
    Measured {
        estimate: chats.iter().map(Chat::resident_bytes).sum(),
        chunks,
        requested,
        text: chats.iter().map(text_bytes).sum(),
    }
}

fn report(label: &str, m: &Measured) -> f64 {
    let measured = m.chunks as f64;
    let per_chat = measured / CHATS as f64;
    let per_message = per_chat / MESSAGES as f64;
    let text_per_chat = m.text as f64 / CHATS as f64;
    let error = (m.estimate as f64 - measured) / measured;
    println!(
        "{label:>16}: measured {per_chat:>7.0} B/chat ({per_message:.0} B/message, \
         requested {:.0} B/chat), estimate {:.0} B/chat ({:+.2}%, {} vs {}), text {text_per_chat:.0} \
         B/chat, ratio {:.2}x text, overhead {:.0} B/message beyond text",
        m.requested as f64 / CHATS as f64,
        m.estimate as f64 / CHATS as f64,
        error * 100.0,
        m.estimate,
        m.chunks,
        per_chat / text_per_chat,
        (per_chat - text_per_chat) / MESSAGES as f64,
    );
    error
}

#[test]
fn resident_bytes_is_within_ten_percent_of_what_chats_allocate() {
    AllocationRegistry::set_global_tracker(Counter).expect("the only tracker");
    AllocationRegistry::enable_tracking();
    println!(
        "inline sizes: Chat {} B, Message {} B",
        std::mem::size_of::<Chat>(),
        std::mem::size_of::<Message>()
    );
    for extras in [Extras::Plain, Extras::Mixed] {
        let name = if extras == Extras::Plain {
            "plain"
        } else {
            "mixed"
        };
        // The stored rows, made before measuring: what a load decodes.
        let rows: Vec<Vec<(i64, String)>> = (0..CHATS)
            .map(|c| {
                let chat = appended(c, extras);
                chat.messages()
                    .map(|(seq, m)| (seq, serde_json::to_string(m).expect("serializable")))
                    .collect()
            })
            .collect();
        let from_rows = measure(|c| loaded(&rows[c]));
        let by_events = measure(|c| appended(c, extras));
        let by_opening = measure(|c| opened(c, extras));
        for (how, m) in [
            ("loaded", &from_rows),
            ("appended", &by_events),
            ("opened", &by_opening),
        ] {
            let error = report(&format!("{name}, {how}"), m);
            assert!(
                error.abs() <= 0.10,
                "{name}, {how}: estimate off by {error:+.3}"
            );
        }
    }
    AllocationRegistry::disable_tracking();
}
