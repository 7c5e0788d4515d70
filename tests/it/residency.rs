//! Memory bounded by `--max-resident-memory`, on the real binary (so that
//! its RSS is its own): chats past the budget are dropped from memory least
//! recently used first and come back from the store exactly as they were;
//! a watched chat, or one owing a debounced refresh, stays; a chat many
//! callers read at once is loaded once; and the estimate the budget is
//! kept against matches the memory the process really uses.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use recapd::grpc::pb;

use crate::common::api::{set_memory, subscribe};
use crate::common::process::{Recapd, metric, scrape};
use crate::common::*;

/// Messages per chat, and bytes of text per message: a chat holds about
/// 20 KB of text.
const MESSAGES: usize = 20;
const TEXT_BYTES: usize = 1000;

/// Words for message texts, so that no two messages are alike.
const WORDS: [&str; 16] = [
    "lantern", "harbour", "quiet", "ember", "violet", "stone", "river", "thistle", "copper",
    "meadow", "shadow", "willow", "amber", "falcon", "cinder", "hollow",
];

/// The text of message `m` of chat `chat`, `TEXT_BYTES` long.
fn text(chat: usize, m: usize) -> String {
    let mut text = format!("{chat}/{m}:");
    let mut i = chat * 31 + m * 7;
    while text.len() < TEXT_BYTES {
        text.push(' ');
        text.push_str(WORDS[i % WORDS.len()]);
        i = i.wrapping_mul(17).wrapping_add(5);
    }
    text.truncate(TEXT_BYTES);
    text
}

/// A recapd child process with a budget and a metrics endpoint.
struct Budgeted {
    process: Recapd,
    server: Server,
    metrics: String,
    _dir: tempfile::TempDir,
}

impl Budgeted {
    async fn start(budget: &str) -> Budgeted {
        let dir = tempfile::tempdir().unwrap();
        let metrics = format!("127.0.0.1:{}", free_port());
        let mut command = Recapd::command(dir.path());
        command.args([
            "--max-resident-memory",
            budget,
            "--metrics-listen",
            &metrics,
        ]);
        let process = Recapd::start_with(command, dir.path());
        let server = Server::clients(process.channel().await);
        Budgeted {
            process,
            server,
            metrics,
            _dir: dir,
        }
    }

    async fn metric(&self, name: &str) -> f64 {
        metric(&scrape(&self.metrics).await, name)
    }

    /// Writes chats `range` (named `c<i>`), eight at a time: each a full
    /// transcript in one ChatChanged.
    async fn write_chats(&self, range: std::ops::Range<usize>) {
        let mut writes = FuturesUnordered::new();
        let mut next = range.start;
        loop {
            while writes.len() < 8 && next < range.end {
                let mut server = Server::clients(self.server.channel.clone());
                let chat = next;
                next += 1;
                writes.push(async move {
                    let messages = (0..MESSAGES)
                        .map(|m| message(&format!("m{m}"), &text(chat, m)))
                        .collect();
                    server
                        .publish(&format!("c{chat}"), chat_changed(messages))
                        .await
                        .expect("the chat is written");
                });
            }
            if writes.next().await.is_none() {
                return;
            }
        }
    }
}

/// Everything a client can read of a chat: its injection, its exported
/// file and a message's data.
async fn read_back(server: &mut Server, chat: &str) -> (pb::Injection, Vec<u8>, pb::MessageData) {
    let injection = server.injection(chat).await;
    let file = server
        .memory
        .export_chat(pb::ExportChatRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("the chat exports")
        .into_inner()
        .jsonl;
    let data = crate::common::api::data(server, chat, "m3").await;
    (injection, file, data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evicted_chats_come_back_exactly_and_memory_stays_within_the_budget() {
    const CHATS: usize = 2000; // 40 MB of text against an 8 MiB budget
    let mut b = Budgeted::start("8MiB").await;
    let idle_rss = b.process.rss_bytes();
    b.write_chats(0..CHATS).await;
    // Recap data on every tenth chat, so that injections differ and carry
    // a template's output.
    for chat in (0..CHATS).step_by(10) {
        let id = format!("c{chat}");
        set_memory(&mut b.server, &id, "m3", &format!("memory of chat {chat}")).await;
        add_recap(&mut b.server, &id, &format!("So far in chat {chat}.")).await;
    }
    let mut written = Vec::new();
    for chat in (0..CHATS).step_by(50) {
        let id = format!("c{chat}");
        written.push((id.clone(), read_back(&mut b.server, &id).await));
    }
    // The reads above loaded chats back; write more so that every chat
    // read is out of memory again.
    b.write_chats(CHATS..CHATS + 600).await;
    let evicted = b.metric("recapd_chat_evictions_total").await;
    assert!(evicted >= CHATS as f64 / 2.0, "only {evicted} evictions");
    let loads_before = b.metric("recapd_chat_loads_total").await;
    for (id, before) in &written {
        let after = read_back(&mut b.server, id).await;
        assert_eq!(&after, before, "{id} came back different");
        assert!(
            !after.1.is_empty() && after.0.revision >= 1,
            "{id} read back empty"
        );
    }
    let loads = b.metric("recapd_chat_loads_total").await - loads_before;
    assert!(
        loads >= written.len() as f64,
        "{loads} loads for {} evicted chats read back",
        written.len()
    );
    // The margin: the store's page cache, gRPC and allocator slack.
    const MARGIN: u64 = 32 << 20;
    let grown = b.process.rss_bytes().saturating_sub(idle_rss);
    let resident = b.metric("recapd_resident_bytes").await;
    assert!(
        grown <= (8 << 20) + MARGIN,
        "RSS grew by {} MiB over idle with an 8 MiB budget (estimate now {:.1} MiB)",
        grown >> 20,
        resident / 1048576.0
    );
    assert!(
        resident <= (8 << 20) as f64,
        "estimate {resident} over budget"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_estimate_matches_the_memory_the_process_uses() {
    const CHATS: usize = 1500; // 30 MB of text, no budget
    let b = Budgeted::start("0").await;
    // One chat first: what every chat shares (tokenizer tables, first
    // connections, the store's first pages) is in the baseline.
    b.write_chats(0..1).await;
    let rss_before = b.process.rss_bytes();
    let estimate_before = b.metric("recapd_resident_bytes").await;
    b.write_chats(1..CHATS).await;
    let rss = b.process.rss_bytes().saturating_sub(rss_before) as f64;
    let estimate = b.metric("recapd_resident_bytes").await - estimate_before;
    let text = ((CHATS - 1) * MESSAGES * TEXT_BYTES) as f64;
    println!(
        "{} chats: RSS +{:.1} MiB, estimate +{:.1} MiB, text {:.1} MiB; {:.0} bytes per chat of {} text bytes",
        CHATS - 1,
        rss / 1048576.0,
        estimate / 1048576.0,
        text / 1048576.0,
        estimate / (CHATS - 1) as f64,
        MESSAGES * TEXT_BYTES
    );
    assert!(
        (estimate - rss).abs() <= 0.25 * rss,
        "estimate +{estimate} bytes vs RSS +{rss} bytes: more than 25% apart"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_chat_stays_in_memory_and_its_stream_sees_every_refresh() {
    let mut b = Budgeted::start("2MiB").await;
    b.server.set_global_debounce(0).await;
    b.server
        .publish("watched", message_sent("w0", "Hello."))
        .await
        .unwrap();
    let mut stream = subscribe(&mut b.server, &["watched"], 0).await;
    let first = next_within(&mut stream, 5).await.expect("the snapshot");
    let mut expected = first.revision;
    for round in 1..=5 {
        // 100 chats of 20 KB: the budget over and over.
        b.write_chats(round * 100..round * 100 + 100).await;
        b.server
            .publish("watched", message_sent(&format!("w{round}"), "And again."))
            .await
            .unwrap();
        expected += 1;
        let update = next_within(&mut stream, 5)
            .await
            .unwrap_or_else(|| panic!("round {round}: no update for the watched chat"));
        assert_eq!(update.revision, expected, "round {round}");
    }
    assert!(b.metric("recapd_chat_evictions_total").await > 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_debounced_burst_across_evictions_refreshes_once() {
    // Long enough that the burst (150 chats written between its two
    // events, several seconds on a loaded machine) fits in half of it.
    const DEBOUNCE_MS: i64 = 20_000;
    let mut b = Budgeted::start("2MiB").await;
    b.write_chats(0..1).await;
    b.server.set_global_debounce(DEBOUNCE_MS).await;
    // (Read after the settings change, which refreshes the chat itself.)
    let before = b.server.injection("c0").await.revision;
    let evictions = b.metric("recapd_chat_evictions_total").await;
    let burst = Instant::now();
    b.server
        .publish("c0", message_sent("a", "First of the burst."))
        .await
        .unwrap();
    b.write_chats(1..150).await;
    b.server
        .publish("c0", message_received("b", "Last of the burst."))
        .await
        .unwrap();
    assert!(
        burst.elapsed() < Duration::from_millis(DEBOUNCE_MS as u64 / 2),
        "the burst took {:?}: too slow to test the debounce",
        burst.elapsed()
    );
    // More chats during the quiet period: memory keeps turning over
    // while the burst's refresh is pending.
    b.write_chats(150..300).await;
    assert!(b.metric("recapd_chat_evictions_total").await > evictions);
    // After the quiet period, and some more: exactly one refresh.
    tokio::time::sleep(Duration::from_millis(DEBOUNCE_MS as u64 + 2000)).await;
    let after = b.server.injection("c0").await;
    assert_eq!(after.revision, before + 1, "one refresh for the burst");
    assert_eq!(trigger(&after), pb::RefreshTrigger::MessageReceived);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_reads_of_an_evicted_chat_load_it_once() {
    let b = Budgeted::start("2MiB").await;
    b.write_chats(0..1).await;
    // The oldest chat of many more than fit: out of memory.
    b.write_chats(1..200).await;
    let loads = b.metric("recapd_chat_loads_total").await;
    let reads: Vec<_> = (0..32)
        .map(|_| {
            let mut server = Server::clients(b.server.channel.clone());
            tokio::spawn(async move { server.injection("c0").await })
        })
        .collect();
    let mut revisions = Vec::new();
    for read in reads {
        revisions.push(read.await.unwrap().revision);
    }
    assert!(revisions.iter().all(|&r| r == revisions[0] && r >= 1));
    assert_eq!(
        b.metric("recapd_chat_loads_total").await - loads,
        1.0,
        "32 concurrent reads of an evicted chat"
    );
}
