//! The eviction policy on the cache alone: what is counted, what goes
//! first, what never goes, and what the eviction log tells an all-chats
//! stream. No engine, no store: slots are filled by hand as a load would.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{ChatCache, Dropped, LogDrops};
use crate::domain::Limits;
use crate::domain::chat::{Chat, ChatEvent};
use crate::domain::ids::ChatKey;
use crate::domain::message::{Message, NewMessage};
use crate::domain::refresh::Trigger;
use crate::engine::slot::{Debounce, Resident};
use crate::store::LoadedChat;

fn key(chat: &str) -> ChatKey {
    ChatKey::untenanted(chat)
}

/// A chat of `n` messages of 1,000 bytes.
fn chat_of(n: usize) -> Chat {
    let messages = (0..n)
        .map(|i| {
            NewMessage {
                id: format!("m{i}"),
                text: format!("{i:>1000}"),
                ..Default::default()
            }
            .build("message", &Limits::default())
            .expect("a valid message")
        })
        .collect::<Vec<Message>>();
    let mut chat = Chat::default();
    chat.apply(ChatEvent::ChatChanged(messages))
        .expect("a valid transcript");
    chat
}

/// Loads `chat` into its slot with `n` messages, as the engine's load and
/// commit do: under the chat's lock, then counted.
fn fill(cache: &ChatCache, chat: &str, n: usize, log: LogDrops) {
    let slot = cache.slot(&key(chat));
    let mut state = slot.state.try_lock().expect("nobody else holds the slot");
    let mut resident = Resident::from_store(&slot.key, LoadedChat::default());
    resident.chat = Some(Arc::new(chat_of(n)));
    *state = Some(resident);
    cache.account(&slot, state.as_ref(), log);
}

fn held(cache: &ChatCache, chat: &str) -> bool {
    cache.resident(&key(chat)).is_some()
}

/// The sum of every slot's estimate, counted apart from the total.
fn counted(cache: &ChatCache) -> usize {
    cache
        .slots()
        .iter()
        .map(|slot| slot.bytes.load(Ordering::Acquire))
        .sum()
}

#[test]
fn the_total_is_the_sum_of_the_slots_and_follows_their_state() {
    let cache = ChatCache::new(0);
    assert_eq!(cache.total(), 0);
    fill(&cache, "small", 2, &|| false);
    let small = cache.total();
    fill(&cache, "big", 40, &|| false);
    assert_eq!(cache.total(), counted(&cache));
    let big = cache.total() - small;
    assert!(
        (40_000..120_000).contains(&big),
        "{big} bytes for 40 KB of text"
    );
    // The big chat shrinks: its estimate follows.
    fill(&cache, "big", 1, &|| false);
    assert!(cache.total() < small + 10_000);
    assert_eq!(cache.total(), counted(&cache));
}

#[test]
fn a_forgotten_slot_gives_its_bytes_back_unless_someone_holds_it() {
    let cache = ChatCache::new(0);
    let slot = cache.slot(&key("empty"));
    assert_eq!(cache.total(), slot.bytes_with(None));
    let other = slot.clone();
    cache.forget(slot);
    assert!(held(&cache, "empty"), "held elsewhere: kept");
    cache.forget(other);
    assert!(!held(&cache, "empty"));
    assert_eq!(cache.total(), 0);
}

#[test]
fn past_the_budget_the_least_recently_used_chats_go_first() {
    // About ten chats of 10 KB fit.
    let cache = ChatCache::new(150_000);
    for i in 0..10 {
        fill(&cache, &format!("c{i}"), 10, &|| false);
    }
    // c0 is used again: now c1 is the least recently used.
    drop(cache.slot(&key("c0")));
    // More chats until the budget is passed (whatever a chat's exact
    // estimate): the fill that passes it runs an eviction pass.
    let mut last = 10;
    while held(&cache, "c1") {
        assert!(last < 30, "20 more chats of 10 KB never passed 150 KB");
        fill(&cache, &format!("c{last}"), 10, &|| false);
        last += 1;
    }
    assert!(held(&cache, "c0"), "used again: kept");
    assert!(held(&cache, &format!("c{}", last - 1)), "just filled: kept");
    let total = cache.total();
    // A pass goes down to 90% of the budget.
    assert!(total <= 135_000, "{total} over the target");
    assert_eq!(total, counted(&cache));
}

#[tokio::test]
async fn pinned_chats_are_never_dropped() {
    // A 1-byte budget: everything that may go, goes.
    let cache = ChatCache::new(1);
    // Each fill's pass drops every chat not pinned by then: each is
    // pinned right after its fill.
    fill(&cache, "held", 3, &|| false);
    let held_elsewhere = cache.slot(&key("held"));
    fill(&cache, "watched", 3, &|| false);
    let watcher = cache.slot(&key("watched")).latest.subscribe();
    fill(&cache, "locked", 3, &|| false);
    let locked_slot = cache.slot(&key("locked"));
    let lock = locked_slot.state.clone().try_lock_owned().expect("free");
    drop(locked_slot);
    fill(&cache, "job", 3, &|| false);
    cache.job_started(&key("job"));
    fill(&cache, "owing", 3, &|| false);
    {
        let slot = cache.slot(&key("owing"));
        let mut state = slot.state.try_lock().expect("free");
        let resident = state.as_mut().expect("filled");
        resident.debounce = Some(Debounce {
            trigger: Trigger::MessageSent,
            deadline: tokio::time::Instant::now(),
            timer: tokio::spawn(std::future::pending()),
            traced_by: Vec::new(),
        });
    }
    fill(&cache, "free", 3, &|| false);
    // The next fill passes the budget: its pass drops what may go.
    fill(&cache, "next", 1, &|| false);
    fill(&cache, "last", 1, &|| false);
    for chat in ["held", "watched", "locked", "job", "owing"] {
        assert!(held(&cache, chat), "{chat} is pinned");
    }
    assert!(!held(&cache, "free") && !held(&cache, "next"));
    // Unpinned, they go at the next pass.
    drop((held_elsewhere, watcher, lock));
    cache.job_ended(&key("job"));
    assert!(cache.running_jobs().is_empty());
    fill(&cache, "again", 1, &|| false);
    for chat in ["held", "watched", "locked", "job"] {
        assert!(!held(&cache, chat), "{chat} is no longer pinned");
    }
    assert!(held(&cache, "owing"), "its refresh is still pending");
}

#[test]
fn the_eviction_log_names_announced_chats_dropped_while_streams_were_open() {
    let cache = ChatCache::new(1);
    let seen = cache.evictions_logged();
    // Dropped while no stream is open: not logged.
    fill(&cache, "quiet", 1, &|| false);
    cache
        .slot(&key("quiet"))
        .announced
        .store(true, Ordering::Release);
    fill(&cache, "a", 1, &|| false);
    assert!(!held(&cache, "quiet"));
    assert_eq!(cache.evicted_since(seen), (Dropped::None, seen));
    // Announced and dropped while one is: logged; never announced: not.
    for chat in ["b", "c"] {
        fill(&cache, chat, 1, &|| true);
        cache
            .slot(&key(chat))
            .announced
            .store(true, Ordering::Release);
    }
    fill(&cache, "d", 1, &|| true);
    fill(&cache, "e", 1, &|| true);
    let (dropped, now) = cache.evicted_since(seen);
    assert_eq!(dropped, Dropped::These(vec![key("b"), key("c")]));
    assert_eq!(now, seen + 2);
    // A stream that has seen them all has nothing to read back.
    assert_eq!(cache.evicted_since(now), (Dropped::None, now));
}

#[test]
fn clones_share_one_cache() {
    let cache = ChatCache::new(0);
    let clone = cache.clone();
    fill(&clone, "shared", 1, &|| false);
    assert!(held(&cache, "shared"));
    assert_eq!(cache.total(), clone.total());
}
