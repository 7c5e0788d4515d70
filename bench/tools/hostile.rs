//! `hostile`: what hostile World Info costs recapd and the chats beside it
//! (issue 41, bench/hostile.sh).
//!
//! Against a running recapd, two books an attacker may import:
//! - `redos`: one entry keyed `/(?=(a+)+$)a/`, scanned over a chat of two
//!   messages of `--redos-chars` `a` then `!` (a lookahead whose body runs
//!   to the end of the text at every start position);
//! - `chain`: a recursion chain inside the default limits: 98 entries, entry
//!   i keyed `kx{i}q` with content `kx{i+1}q` plus 35 KB of text, a starter
//!   keyed `k0`, and 500 entries of 8 keys that never match, recursion on and
//!   no recursion cap.
//!
//! It measures, one after the other: each book's ScanWorldInfo alone
//! (`--rounds` scans, the answer's status and time); GetInjection of a
//! third chat alone, one call at a time with a 1 s deadline, for
//! `--seconds` (the baseline); the same while one task scans `redos` and two
//! scan `chain` in loops (deadline misses, p50, p99); and, with
//! `--server-pid`, a `chain` scan whose 300 ms deadline passes: how long the
//! server's CPU stays busy after it (read from /proc, in 50 ms steps, until
//! a step uses under 10% of a core).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use serde_json::{Value, json};
use tonic::transport::Channel;

use crate::drive::connect;
use crate::import::import_chat;
use crate::stats::summarize;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `hostile`'s options.
#[derive(clap::Args)]
pub struct Hostile {
    /// recapd's address (host:port).
    #[arg(long)]
    addr: String,
    /// `a`s in each of the `redos` chat's two messages.
    #[arg(long, default_value_t = 200_000)]
    redos_chars: usize,
    /// Scans of each book measured alone.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Seconds of GetInjection, alone and then under the hostile scans.
    #[arg(long, default_value_t = 20.0)]
    seconds: f64,
    /// recapd's process id: then the CPU after a cancelled scan is measured.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Only the cancelled scan (with `--server-pid`): the books and chats
    /// are imported, nothing else is measured.
    #[arg(long)]
    cancel_only: bool,
}

/// The chats and books.
const REDOS: &str = "h-redos";
const CHAIN: &str = "h-chain";
const VICTIM: &str = "h-victim";

/// One entry of a World Info file, every other field left to its default.
fn entry(uid: usize, keys: &[String], content: &str) -> Value {
    json!({
        "uid": uid,
        "key": keys,
        "keysecondary": [],
        "comment": format!("entry {uid}"),
        "content": content,
        "constant": false,
        "selective": false,
        "order": 100,
        "position": 0,
        "disable": false,
    })
}

fn book(entries: Vec<Value>) -> String {
    let entries: serde_json::Map<String, Value> = entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| (i.to_string(), e))
        .collect();
    json!({ "entries": entries }).to_string()
}

/// Finding 1's book.
fn redos_book() -> String {
    book(vec![entry(
        0,
        &["/(?=(a+)+$)a/".to_owned()],
        "never placed",
    )])
}

/// Finding 2's book.
fn chain_book() -> String {
    // Filler that no key of the book matches (no `k` followed by a digit
    // or `x`).
    let filler = "the quiet river runs past the old mill and on to the sea. ".repeat(600);
    let mut entries = vec![entry(0, &["k0".to_owned()], "kx0q")];
    for i in 0..98 {
        entries.push(entry(
            entries.len(),
            &[format!("kx{i}q")],
            &format!("kx{}q {filler}", i + 1),
        ));
    }
    for i in 0..500 {
        let keys: Vec<String> = (0..8).map(|k| format!("zz{i}never{k}")).collect();
        entries.push(entry(entries.len(), &keys, "never placed"));
    }
    book(entries)
}

/// A SillyTavern chat file of `messages` (user and character alternating).
fn chat_file(messages: &[String]) -> Vec<u8> {
    let mut out = json!({
        "user_name": "User",
        "character_name": "Char",
        "create_date": "2026-01-01@00h00m00s",
        "chat_metadata": {},
    })
    .to_string();
    for (i, text) in messages.iter().enumerate() {
        out.push('\n');
        out.push_str(
            &json!({
                "name": if i % 2 == 0 { "User" } else { "Char" },
                "is_user": i % 2 == 0,
                "is_system": false,
                "send_date": "2026-01-01@00h00m00s",
                "mes": text,
                "swipes": [text],
                "swipe_id": 0,
                "extra": {},
            })
            .to_string(),
        );
    }
    out.push('\n');
    out.into_bytes()
}

/// Gives `chat_id` the book `name`, recursion on, no recursion cap.
async fn apply_book(
    settings: &mut SettingsServiceClient<Channel>,
    chat_id: &str,
    name: &str,
) -> Result<(), Error> {
    settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: chat_id.to_owned(),
            settings: Some(pb::Settings {
                world_info_global_books: Some(pb::StringList {
                    values: vec![name.to_owned()],
                }),
                world_info_recursive: Some(true),
                world_info_max_recursion_steps: Some(0),
                world_info_depth: Some(2),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await?;
    Ok(())
}

fn scan_request(chat_id: &str, seed: u64) -> pb::ScanWorldInfoRequest {
    pb::ScanWorldInfoRequest {
        chat_id: chat_id.to_owned(),
        generation_type: "normal".to_owned(),
        dry_run: true,
        seed,
        ..Default::default()
    }
}

/// One scan: its time and its status code's name, with what it activated.
async fn scan_once(
    books: &mut LorebookServiceClient<Channel>,
    chat_id: &str,
    seed: u64,
    deadline: Option<Duration>,
) -> (Duration, String) {
    let mut request = tonic::Request::new(scan_request(chat_id, seed));
    if let Some(deadline) = deadline {
        request.set_timeout(deadline);
    }
    let started = Instant::now();
    let outcome = books.scan_world_info(request).await;
    let took = started.elapsed();
    let status = match outcome {
        Ok(answer) => format!("OK/{}-activated", answer.into_inner().activated.len()),
        Err(status) => format!("{:?}", status.code()),
    };
    (took, status)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort_unstable();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// GetInjection of the victim chat, one at a time with a 1 s deadline,
/// for `seconds`: one summary line.
async fn victim_calls(channel: Channel, seconds: f64, label: &str) -> Result<String, Error> {
    let mut injections = InjectionServiceClient::new(channel);
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut missed = 0usize;
    while Instant::now() < until {
        let mut request = tonic::Request::new(pb::GetInjectionRequest {
            chat_id: VICTIM.to_owned(),
            key: None,
        });
        request.set_timeout(Duration::from_secs(1));
        let t = Instant::now();
        match injections.get_injection(request).await {
            Ok(_) => samples.push(t.elapsed()),
            Err(status) if status.code() == tonic::Code::DeadlineExceeded => {
                missed += 1;
                samples.push(t.elapsed());
            }
            Err(status) => return Err(format!("GetInjection: {status}").into()),
        }
        // About 100 calls a second: a client polling, not a load test.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let summary = summarize(samples, started.elapsed());
    Ok(format!(
        "{label} calls={} missed_1s_deadline={missed} p50_ms={:.3} p99_ms={:.3} max_ms={:.3}",
        summary.count,
        ms(summary.p50),
        ms(summary.p99),
        ms(summary.max)
    ))
}

/// CPU seconds (user + system) of process `pid` so far.
fn cpu_seconds(pid: u32) -> Result<f64, Error> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command's closing parenthesis: utime is the 12th,
    // stime the 13th (fields 14 and 15 of proc(5)).
    let rest = stat.rsplit_once(')').ok_or("unreadable /proc stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<f64, Error> {
        Ok(fields.get(i).ok_or("short /proc stat")?.parse::<f64>()?)
    };
    // Linux's USER_HZ is 100 on every architecture recapd runs on.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

pub async fn hostile(args: Hostile) -> Result<(), Error> {
    let channel = connect(&args.addr)
        .await
        .map_err(|e| -> Error { e.to_string().into() })?;
    let mut books = LorebookServiceClient::new(channel.clone())
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    let mut memory =
        MemoryServiceClient::new(channel.clone()).max_encoding_message_size(usize::MAX);
    let mut settings = SettingsServiceClient::new(channel.clone());

    for (name, json) in [(REDOS, redos_book()), (CHAIN, chain_book())] {
        books
            .import_lorebook(pb::ImportLorebookRequest {
                name: name.to_owned(),
                json,
            })
            .await?;
    }
    let a_run = format!("{}!", "a".repeat(args.redos_chars));
    import_chat(&mut memory, REDOS, &chat_file(&[a_run.clone(), a_run])).await?;
    import_chat(
        &mut memory,
        CHAIN,
        &chat_file(&["we set out for k0 at dawn".to_owned(), "onwards".to_owned()]),
    )
    .await?;
    import_chat(
        &mut memory,
        VICTIM,
        &chat_file(&["hello".to_owned(), "hi there".to_owned()]),
    )
    .await?;
    apply_book(&mut settings, REDOS, REDOS).await?;
    apply_book(&mut settings, CHAIN, CHAIN).await?;

    if !args.cancel_only {
        measure_scans(&mut books, &args, &channel).await?;
    }
    if let Some(pid) = args.server_pid {
        cancelled_scan(&mut books, pid).await?;
    }
    Ok(())
}

/// Each book's scans alone, then GetInjection alone and under scan loops.
async fn measure_scans(
    books: &mut LorebookServiceClient<Channel>,
    args: &Hostile,
    channel: &Channel,
) -> Result<(), Error> {
    for chat in [REDOS, CHAIN] {
        let mut times = Vec::new();
        let mut statuses = Vec::new();
        for round in 0..args.rounds {
            let (took, status) = scan_once(books, chat, round as u64 + 1, None).await;
            times.push(took);
            if !statuses.contains(&status) {
                statuses.push(status);
            }
        }
        println!(
            "hostile_scan book={chat} rounds={} median_ms={:.1} max_ms={:.1} status={}",
            args.rounds,
            ms(median(times.clone())),
            ms(times.iter().copied().max().unwrap_or_default()),
            statuses.join(",")
        );
    }

    println!(
        "{}",
        victim_calls(channel.clone(), args.seconds, "victim_alone").await?
    );
    let stop = Arc::new(AtomicBool::new(false));
    let mut loops = tokio::task::JoinSet::new();
    for chat in [REDOS, CHAIN, CHAIN] {
        let stop = stop.clone();
        // Each loop on a connection of its own, as separate clients.
        let channel = connect(&args.addr)
            .await
            .map_err(|e| -> Error { e.to_string().into() })?;
        loops.spawn(async move {
            let mut books = LorebookServiceClient::new(channel);
            let mut scans = 0u64;
            while !stop.load(Ordering::Relaxed) {
                scan_once(&mut books, chat, scans + 1, None).await;
                scans += 1;
            }
            scans
        });
    }
    let under_load =
        victim_calls(channel.clone(), args.seconds, "victim_under_hostile_scans").await;
    stop.store(true, Ordering::Relaxed);
    let mut hostile_scans = 0;
    while let Some(done) = loops.join_next().await {
        hostile_scans += done?;
    }
    println!("{} hostile_scans={hostile_scans}", under_load?);
    Ok(())
}

/// A `chain` scan whose 300 ms deadline passes, and the server's CPU after.
async fn cancelled_scan(books: &mut LorebookServiceClient<Channel>, pid: u32) -> Result<(), Error> {
    let deadline = Duration::from_millis(300);
    let (took, status) = scan_once(books, CHAIN, 7, Some(deadline)).await;
    let cancelled_at = Instant::now();
    let mut before = cpu_seconds(pid)?;
    let mut busy_for = Duration::ZERO;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = cpu_seconds(pid)?;
        let used = now - before;
        before = now;
        busy_for = cancelled_at.elapsed();
        if used < 0.005 {
            break;
        }
    }
    println!(
        "cancelled_scan deadline_ms={:.0} answered_ms={:.1} status={status} cpu_busy_after_ms={:.0}",
        ms(deadline),
        ms(took),
        ms(busy_for)
    );
    Ok(())
}
