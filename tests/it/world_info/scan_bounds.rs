//! A scan's whole work bounded, scans off the async workers, fairness
//! between tenants and cancellation (issue 41, row 2 of its table and
//! items 2 to 4): the recursion chain of row 2 inside the default limits
//! answers RESOURCE_EXHAUSTED within 2 s naming --world-info-scan-timeout,
//! other chats keep answering while such scans run, one tenant's slow
//! scans do not hold back another tenant's, and a scan whose call goes
//! away stops.
//!
//! These run the recapd binary (its own async workers, as deployed), so a
//! scan that blocked the workers would show.

use std::process::Command;
use std::time::{Duration, Instant};

use tonic::Code;

use super::*;
use crate::common::process::{Recapd, metric, scrape};

const INTERRUPTED: &str = "recapd_world_info_scans_interrupted_total";

/// Row 2's book: a recursion chain inside the default limits. Entry `c{i}`
/// (i < 98) is keyed `kx{i}q` and holds `kx{i+1}q` and 35 KB of text, a
/// starter keyed `k0` holds `kx0q`, and 500 entries of 8 keys never match:
/// with recursion on, every pass scans everything activated so far
/// against 4,000 keys (43.5 s for one scan on the old code, release
/// build).
fn chain_book() -> String {
    let filler = "The road goes on and on. ".repeat(1400);
    let mut all = serde_json::Map::new();
    let mut add = |uid: usize, key: Vec<String>, content: String| {
        all.insert(
            uid.to_string(),
            json!({
                "uid": uid, "key": key, "keysecondary": [], "comment": "",
                "content": content, "constant": false, "selective": true,
                "selectiveLogic": 0, "order": 100, "position": 0,
                "disable": false, "probability": 100, "useProbability": true,
                "depth": 4, "role": 0,
            }),
        );
    };
    add(0, vec!["k0".into()], "kx0q".into());
    for i in 0..98 {
        add(
            1 + i,
            vec![format!("kx{i}q")],
            format!("kx{}q {filler}", i + 1),
        );
    }
    for i in 0..500 {
        let keys = (0..8).map(|j| format!("never-{i}-{j}")).collect();
        add(99 + i, keys, "Nothing.".into());
    }
    json!({ "entries": all }).to_string()
}

/// A book with one entry keyed `glade`.
fn calm_book() -> String {
    book(&[("0", json!({"key": ["glade"], "content": "A quiet glade."}))])
}

/// Settings of the chain: `book` global, recursion on, no recursion cap
/// (world_info_max_recursion_steps 0, the default).
fn recursive_with(book: &str) -> pb::Settings {
    pb::Settings {
        world_info_global_books: names(&[book]),
        world_info_recursive: Some(true),
        world_info_max_recursion_steps: Some(0),
        ..Default::default()
    }
}

/// recapd with `args`, its metrics on a free port: (process, metrics
/// address, clients).
async fn recapd(dir: &Path, args: &[&str]) -> (Recapd, String, Server) {
    let metrics_addr = format!("127.0.0.1:{}", free_port());
    let mut command: Command = Recapd::command(dir);
    command.args(["--metrics-listen", &metrics_addr]).args(args);
    let recapd = Recapd::start_with(command, dir);
    let server = Server::clients(recapd.channel().await);
    (recapd, metrics_addr, server)
}

/// The book "Chain" and the chats `chats` starting it, and a chat "calm"
/// with the book "Calm".
async fn seed(server: &mut Server, chats: &[&str]) {
    import_book(server, "Chain", &chain_book()).await;
    import_book(server, "Calm", &calm_book()).await;
    for chat in chats {
        server.update_settings(chat, recursive_with("Chain")).await;
        set_chat(server, chat, vec![said("m1", "User", "Start at k0.")]).await;
    }
    server.update_settings("calm", recursive_with("Calm")).await;
    set_chat(server, "calm", vec![said("m1", "User", "To the glade.")]).await;
}

async fn interrupted(metrics_addr: &str, reason: &str) -> f64 {
    metric(
        &scrape(metrics_addr).await,
        &format!("{INTERRUPTED}{{reason=\"{reason}\"}}"),
    )
}

#[tokio::test]
async fn row_2_a_recursion_chain_answers_resource_exhausted_within_two_seconds() {
    // Issue 41, row 2: 43.5 s for one scan before; now the scan's time
    // budget (--world-info-scan-timeout, 1s by default) stops it.
    let dir = tempfile::tempdir().unwrap();
    let (recapd, metrics_addr, mut server) = recapd(dir.path(), &[]).await;
    seed(&mut server, &["c"]).await;
    // The first scan also reads the 3.6 MB book into the parsed books'
    // cache (not the activation's work, and slow in a debug build on a
    // busy machine): it is refused the same way, and the next one is
    // timed.
    for scan in 1..=2 {
        let started = Instant::now();
        let status = try_scan(&server, scan_request("c"))
            .await
            .expect_err("the chain runs past the budget");
        let took = started.elapsed();
        assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
        assert!(
            status.message().contains("--world-info-scan-timeout"),
            "{status:?}"
        );
        // Loose for a debug build on a busy CI machine (the release figure
        // is bench/hostile.sh's); before, 43.5 s.
        if scan == 2 {
            assert!(took < Duration::from_secs(10), "answered after {took:?}");
        }
    }
    assert_eq!(interrupted(&metrics_addr, "budget").await, 2.0);
    // A scan of another chat with a small book still activates.
    assert_eq!(uids(&scan(&server, scan_request("calm")).await), ["0"]);
    server.stop().await;
    drop(recapd);
}

#[tokio::test]
async fn row_2_other_chats_keep_answering_while_chains_are_scanned() {
    // Issue 41, row 2: while the chain was scanned, every GetInjection of
    // another chat missed a 1 s deadline (the scan ran on an async
    // worker). Three tasks scan the chain in a loop, two at once (one per
    // scan thread); GetInjection of another chat never misses a 5 s
    // deadline here (loose for a debug build on a busy CI machine; the 1 s
    // deadline and the p99 are bench/hostile.sh's).
    let dir = tempfile::tempdir().unwrap();
    let (recapd, _metrics, mut server) = recapd(
        dir.path(),
        &["--workers", "2", "--world-info-scans-per-tenant", "2"],
    )
    .await;
    seed(&mut server, &["h1", "h2", "h3"]).await;
    let until = Instant::now() + Duration::from_secs(4);
    let mut scanners = Vec::new();
    for chat in ["h1", "h2", "h3"] {
        let mut books = lorebooks(&server);
        scanners.push(tokio::spawn(async move {
            let mut scans = 0;
            while Instant::now() < until {
                let status = books
                    .scan_world_info(scan_request(chat))
                    .await
                    .expect_err("the chain runs past the budget");
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                scans += 1;
            }
            scans
        }));
    }
    let mut calls = 0;
    while Instant::now() < until {
        let call = server.injections.get_injection(pb::GetInjectionRequest {
            chat_id: "calm".into(),
            key: None,
        });
        let answer = tokio::time::timeout(Duration::from_secs(5), call).await;
        assert!(
            matches!(answer, Ok(Ok(_))),
            "GetInjection #{calls} missed its 5 s deadline or failed: {answer:?}"
        );
        calls += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut scans = 0;
    for scanner in scanners {
        scans += scanner.await.expect("a scanner");
    }
    assert!(scans >= 3, "the chains were scanned {scans} times");
    server.stop().await;
    drop(recapd);
}

#[tokio::test]
async fn a_scan_whose_deadline_passes_stops_and_frees_its_tenants_turn() {
    // Item 4: a ScanWorldInfo or RenderPrompt whose deadline passed stops
    // its activation. The budget is raised to a minute so only the
    // cancellation can stop it; with one scan of the tenant at a time
    // (the default), the next scan of the tenant runs only once the
    // cancelled one has stopped.
    let dir = tempfile::tempdir().unwrap();
    let (recapd, metrics_addr, mut server) =
        recapd(dir.path(), &["--world-info-scan-timeout", "60s"]).await;
    seed(&mut server, &["c"]).await;
    let mut request = Request::new(scan_request("c"));
    request.set_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let status = lorebooks(&server)
        .scan_world_info(request)
        .await
        .expect_err("the deadline passes first");
    assert!(
        matches!(status.code(), Code::Cancelled | Code::DeadlineExceeded),
        "{status:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "{status:?}");
    // Uncancelled, the scan would hold the tenant's turn for its whole
    // minute of budget.
    let calm = Instant::now();
    assert_eq!(uids(&scan(&server, scan_request("calm")).await), ["0"]);
    assert!(
        calm.elapsed() < Duration::from_secs(20),
        "the next scan of the tenant waited {:?}",
        calm.elapsed()
    );
    assert_eq!(interrupted(&metrics_addr, "cancelled").await, 1.0);
    // RenderPrompt runs the same scan.
    let mut request = Request::new(pb::RenderPromptRequest {
        chat_id: "c".into(),
        mode: pb::PromptMode::TextCompletion as i32,
        ..Default::default()
    });
    request.set_timeout(Duration::from_millis(200));
    let status = prompts(&server)
        .render_prompt(request)
        .await
        .expect_err("the deadline passes first");
    assert!(
        matches!(status.code(), Code::Cancelled | Code::DeadlineExceeded),
        "{status:?}"
    );
    assert_eq!(uids(&scan(&server, scan_request("calm")).await), ["0"]);
    assert_eq!(interrupted(&metrics_addr, "cancelled").await, 2.0);
    assert_eq!(interrupted(&metrics_addr, "budget").await, 0.0);
    server.stop().await;
    drop(recapd);
}

const ACME: &str = "acme-token-0123456789";
const GLOBEX: &str = "globex-token-9876543210";

impl Tenant {
    /// The book `name` holding `json`, and the chat `chat` with it as its
    /// global book, recursion on, and one message.
    async fn chat_with_book(&mut self, chat: &str, name: &str, json: String, text: &str) {
        self.books
            .import_lorebook(pb::ImportLorebookRequest {
                name: name.into(),
                json,
            })
            .await
            .expect("imports");
        self.settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: chat.into(),
                settings: Some(recursive_with(name)),
                clear: vec![],
            })
            .await
            .expect("settings");
        let event = pb::Event {
            chat_id: chat.into(),
            kind: Some(chat_changed(vec![said("m1", "User", text)])),
        };
        self.events
            .publish(pb::PublishRequest { event: Some(event) })
            .await
            .expect("publish");
    }
}

#[tokio::test]
async fn one_tenants_slow_scans_do_not_delay_another_tenants_scan() {
    // Item 3: with one scan of a tenant at a time and two scan threads,
    // acme's chains (each stopped by a 10 s budget) take one thread and
    // queue for it; globex's scan takes the other at once. Without the
    // tenant's limit, acme's scans would hold both threads for 10 s.
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, format!("acme {ACME}\nglobex {GLOBEX}\n")).unwrap();
    let tokens = tokens.to_str().unwrap().to_owned();
    let data = dir.path().join("data");
    let mut command: Command = Recapd::command(&data);
    command.args([
        "--auth-tokens-file",
        &tokens,
        "--workers",
        "2",
        "--world-info-scan-threads",
        "2",
        "--world-info-scans-per-tenant",
        "1",
        "--world-info-scan-timeout",
        "10s",
    ]);
    let recapd = Recapd::start_with(command, &data);
    let channel = recapd.channel().await;
    let mut acme = Tenant::new(&channel, ACME);
    let mut globex = Tenant::new(&channel, GLOBEX);
    acme.chat_with_book("c", "Chain", chain_book(), "Start at k0.")
        .await;
    globex
        .chat_with_book("c", "Calm", calm_book(), "To the glade.")
        .await;
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut books = acme.books.clone();
        slow.push(tokio::spawn(async move {
            books.scan_world_info(scan_request("c")).await
        }));
    }
    // Acme's first chain runs, its others wait for acme's turn.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let answer = globex
        .books
        .scan_world_info(scan_request("c"))
        .await
        .expect("globex's scan")
        .into_inner();
    let took = started.elapsed();
    assert_eq!(uids(&answer), ["0"]);
    // Loose for a debug build on a busy CI machine.
    assert!(
        took < Duration::from_secs(5),
        "globex waited {took:?} behind acme's scans"
    );
    // Acme's calls go away: their scans are cancelled.
    for scan in slow {
        scan.abort();
    }
    drop(recapd);
}
