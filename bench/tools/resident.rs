//! `resident`: recapd under a memory budget (`--max-resident-memory`) with
//! many more chats than fit in it.
//!
//! 1. Writes `chats` chats of `messages` messages (texts of about
//!    `text_bytes` bytes of varied words, generated from the chat and
//!    message index, so nothing is kept here) through `Publish`
//!    `chat_changed` with the full transcript, from `callers` concurrent
//!    callers, with progress on stderr.
//! 2. Reads `samples` chats in random order, one caller: `GetInjection`
//!    (the first read: cold when the chat was evicted) then at once a
//!    second `GetInjection` of the same chat (warm). After each pair it
//!    scrapes recapd's `recapd_chat_loads_total`, so each first read is
//!    known to have loaded the chat (cold) or not (it was still resident);
//!    cold figures come from the confirmed cold reads only. Every read's
//!    revision must be the one its write answered.
//! 3. Exports `verify` random chats (`ExportChat`) and compares every
//!    message's text, name and author with what was written.
//!
//! Prints one JSON line: write rate, cold and warm p50/p99 and their
//! ratios, and the server's loads/evictions deltas, resident bytes and
//! chats. Fails on any failed call, wrong revision or differing export.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use serde_json::json;
use tonic::transport::Channel;

mod corpus;

use corpus::{Rng, chat_id, message_text, random_order, speaker};

use crate::drive::connect;
use crate::scrape::{metric_sum, reset_peak, scrape, status_kb};
use crate::stats::{Summary, summarize};

type Error = Box<dyn std::error::Error>;

const LOADS: &str = "recapd_chat_loads_total";
const EVICTIONS: &str = "recapd_chat_evictions_total";
const RESIDENT_BYTES: &str = "recapd_resident_bytes";
const CHATS_RESIDENT: &str = "recapd_chats_resident";
const LOAD_SECONDS_SUM: &str = "recapd_chat_load_duration_seconds_sum";
const LOAD_SECONDS_COUNT: &str = "recapd_chat_load_duration_seconds_count";

/// `resident`: write many chats, then read them cold and warm.
#[derive(clap::Args)]
pub struct Resident {
    /// recapd's gRPC address.
    #[arg(long)]
    addr: String,
    /// recapd's `--metrics-listen` address.
    #[arg(long)]
    metrics: String,
    #[arg(long, default_value_t = 200_000)]
    chats: usize,
    /// Messages per chat, all in the chat's one `chat_changed`.
    #[arg(long, default_value_t = 20)]
    messages: usize,
    /// About this many bytes of text per message.
    #[arg(long, default_value_t = 210)]
    text_bytes: usize,
    /// Concurrent `Publish` callers while writing.
    #[arg(long, default_value_t = 32)]
    callers: usize,
    /// Chats read (first read, then warm read); distinct chats while there
    /// are enough.
    #[arg(long, default_value_t = 20_000)]
    samples: usize,
    /// Chats exported and compared with what was written.
    #[arg(long, default_value_t = 500)]
    verify: usize,
    /// Fail unless some first reads loaded their chat (the budget evicted).
    #[arg(long)]
    require_cold: bool,
    /// Chat id prefix.
    #[arg(long, default_value = "resident")]
    prefix: String,
    /// Seed of the texts and of the read order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// recapd's process id: its memory is read at each phase's end, and
    /// its peak is reset between writing and reading.
    #[arg(long)]
    pid: Option<u32>,
}

/// What the write phase left: each chat's revision after its write.
struct Written {
    revisions: Vec<u64>,
    text_bytes: u64,
    elapsed: Duration,
}

async fn write_chats(args: &Resident, channel: Channel) -> Result<Written, Error> {
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.callers.max(1) {
        let (next, done) = (next.clone(), done.clone());
        let mut events = EventServiceClient::new(channel.clone());
        let (prefix, seed, chats) = (args.prefix.clone(), args.seed, args.chats);
        let (per_chat, text_bytes) = (args.messages, args.text_bytes);
        tasks.spawn(async move {
            let (mut revisions, mut bytes) = (Vec::new(), 0u64);
            loop {
                let chat = next.fetch_add(1, Ordering::Relaxed);
                if chat >= chats {
                    return Ok::<_, String>((revisions, bytes));
                }
                let messages: Vec<pb::Message> = (0..per_chat)
                    .map(|m| {
                        let (name, is_user) = speaker(m);
                        pb::Message {
                            id: format!("m{m}"),
                            name: name.into(),
                            is_user,
                            text: message_text(seed, chat, m, text_bytes),
                            ..Default::default()
                        }
                    })
                    .collect();
                bytes += messages.iter().map(|m| m.text.len() as u64).sum::<u64>();
                let event = pb::Event {
                    chat_id: chat_id(&prefix, chat),
                    kind: Some(pb::event::Kind::ChatChanged(pb::ChatChanged {
                        messages,
                        ..Default::default()
                    })),
                };
                let answer = events
                    .publish(pb::PublishRequest { event: Some(event) })
                    .await
                    .map_err(|status| format!("publish of chat {chat}: {status}"))?;
                revisions.push((chat, answer.into_inner().revision));
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    let progress = {
        let (done, chats) = (done.clone(), args.chats);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(10));
            tick.tick().await;
            loop {
                tick.tick().await;
                let written = done.load(Ordering::Relaxed);
                let seconds = started.elapsed().as_secs_f64();
                eprintln!(
                    "resident: {written} of {chats} chats written in {seconds:.0} s ({:.0}/s)",
                    written as f64 / seconds
                );
            }
        })
    };
    let mut revisions = vec![0u64; args.chats];
    let mut text_bytes = 0;
    while let Some(result) = tasks.join_next().await {
        // On an error the progress task ends with the runtime.
        let (written, bytes) = result??;
        text_bytes += bytes;
        for (chat, revision) in written {
            revisions[chat] = revision;
        }
    }
    progress.abort();
    Ok(Written {
        revisions,
        text_bytes,
        elapsed: started.elapsed(),
    })
}

/// The server's counters and gauges at one moment (`None`: not exported).
#[derive(Clone, Copy)]
struct Server {
    loads: Option<f64>,
    evictions: Option<f64>,
    resident_bytes: Option<f64>,
    chats_resident: Option<f64>,
    load_seconds: Option<f64>,
    load_count: Option<f64>,
}

async fn server(metrics: &str) -> Result<Server, Error> {
    let text = scrape(metrics).await?;
    Ok(Server {
        loads: metric_sum(&text, LOADS),
        evictions: metric_sum(&text, EVICTIONS),
        resident_bytes: metric_sum(&text, RESIDENT_BYTES),
        chats_resident: metric_sum(&text, CHATS_RESIDENT),
        load_seconds: metric_sum(&text, LOAD_SECONDS_SUM),
        load_count: metric_sum(&text, LOAD_SECONDS_COUNT),
    })
}

/// recapd's memory at the end of a phase, MiB: the peak (`VmHWM`) since
/// the phase began, and the resident set now, all and anonymous only (its
/// own allocations; the rest is mapped files and shared memory).
#[derive(Default)]
struct Memory {
    peak: f64,
    rss: f64,
    anon: f64,
}

fn memory(pid: Option<u32>) -> Result<Option<Memory>, Error> {
    let Some(pid) = pid else { return Ok(None) };
    let mib = |field: &str| -> Result<f64, Error> {
        Ok((status_kb(pid, field)? as f64 / 1024.0).round())
    };
    Ok(Some(Memory {
        peak: mib("VmHWM")?,
        rss: mib("VmRSS")?,
        anon: mib("RssAnon")?,
    }))
}

fn delta(after: Option<f64>, before: Option<f64>) -> Option<f64> {
    Some(after? - before.unwrap_or(0.0))
}

/// The read phase's samples.
#[derive(Default)]
struct Reads {
    /// Every first read.
    first: Vec<Duration>,
    /// First reads that loaded their chat (a load counted during the pair).
    cold: Vec<Duration>,
    /// The cold reads whose pair also counted evictions (the load took
    /// the estimate over the budget and an eviction pass ran).
    cold_evicting: Vec<Duration>,
    /// First reads of chats still resident (no load).
    first_resident: usize,
    /// Every second read.
    warm: Vec<Duration>,
    /// Pairs that counted two loads or more (the warm read loaded too).
    warm_loaded: usize,
    elapsed: Duration,
}

async fn get(
    injections: &mut InjectionServiceClient<Channel>,
    id: &str,
    expected_revision: u64,
) -> Result<Duration, Error> {
    let started = Instant::now();
    let injection = injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: id.to_owned(),
            key: None,
        })
        .await
        .map_err(|status| format!("GetInjection {id}: {status}"))?
        .into_inner();
    let took = started.elapsed();
    if injection.revision != expected_revision || injection.chat_id != id {
        return Err(format!(
            "GetInjection {id}: revision {} of chat {:?}, wrote revision {expected_revision}",
            injection.revision, injection.chat_id
        )
        .into());
    }
    Ok(took)
}

async fn read_chats(
    args: &Resident,
    channel: Channel,
    revisions: &[u64],
    before: &Server,
) -> Result<Reads, Error> {
    let (mut loads_before, mut evictions_before) = (before.loads, before.evictions);
    let mut injections = InjectionServiceClient::new(channel);
    let mut rng = Rng(args.seed.wrapping_mul(31).wrapping_add(7));
    let order = random_order(&mut rng, args.chats, args.samples);
    let mut reads = Reads::default();
    let started = Instant::now();
    for chat in order {
        let id = chat_id(&args.prefix, chat);
        let first = get(&mut injections, &id, revisions[chat]).await?;
        let warm = get(&mut injections, &id, revisions[chat]).await?;
        reads.first.push(first);
        reads.warm.push(warm);
        let exposition = scrape(&args.metrics).await?;
        let loads = metric_sum(&exposition, LOADS);
        let evictions = metric_sum(&exposition, EVICTIONS);
        if let (Some(after), Some(before)) = (loads, loads_before) {
            let loaded = after - before;
            if loaded < 0.5 {
                reads.first_resident += 1;
            } else {
                reads.cold.push(first);
                if delta(evictions, evictions_before).is_some_and(|d| d > 0.5) {
                    reads.cold_evicting.push(first);
                }
                if loaded > 1.5 {
                    reads.warm_loaded += 1;
                }
            }
        }
        (loads_before, evictions_before) = (loads, evictions);
    }
    reads.elapsed = started.elapsed();
    Ok(reads)
}

/// Exports `args.verify` random chats and compares them with what was
/// written; answers the number of differing chats and the first difference.
async fn verify_chats(args: &Resident, channel: Channel) -> Result<(usize, String), Error> {
    let mut memory = MemoryServiceClient::new(channel);
    let mut rng = Rng(args.seed.wrapping_mul(97).wrapping_add(13));
    let mut differing = 0;
    let mut first_difference = String::new();
    for chat in random_order(&mut rng, args.chats, args.verify.min(args.chats)) {
        let id = chat_id(&args.prefix, chat);
        let jsonl = memory
            .export_chat(pb::ExportChatRequest {
                chat_id: id.clone(),
            })
            .await
            .map_err(|status| format!("ExportChat {id}: {status}"))?
            .into_inner()
            .jsonl;
        let mut lines = Vec::new();
        for line in String::from_utf8(jsonl)?.lines() {
            let value: serde_json::Value = serde_json::from_str(line)?;
            if value.get("mes").is_some() {
                lines.push(value);
            }
        }
        let difference = if lines.len() != args.messages {
            Some(format!("{} messages, wrote {}", lines.len(), args.messages))
        } else {
            lines.iter().enumerate().find_map(|(m, line)| {
                let (name, is_user) = speaker(m);
                let text = message_text(args.seed, chat, m, args.text_bytes);
                (line["mes"] != text.as_str() || line["name"] != name || line["is_user"] != is_user)
                    .then(|| format!("message {m} reads back as {line}"))
            })
        };
        if let Some(difference) = difference {
            if differing == 0 {
                first_difference = format!("{id}: {difference}");
            }
            differing += 1;
        }
    }
    Ok((differing, first_difference))
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn ratio(a: Duration, b: Duration) -> f64 {
    (a.as_secs_f64() / b.as_secs_f64().max(1e-9) * 100.0).round() / 100.0
}

pub async fn resident(args: Resident) -> Result<(), Error> {
    let channel = connect(&args.addr).await?;
    let at_start = server(&args.metrics).await?;
    let written = write_chats(&args, channel.clone()).await?;
    let after_write = server(&args.metrics).await?;
    let write_memory = memory(args.pid)?.unwrap_or_default();
    if let Some(pid) = args.pid {
        reset_peak(pid)?;
    }
    eprintln!(
        "resident: {} chats written in {:.1} s; reading {} chats cold then warm",
        args.chats,
        written.elapsed.as_secs_f64(),
        args.samples
    );
    let reads = read_chats(&args, channel.clone(), &written.revisions, &after_write).await?;
    let after_read = server(&args.metrics).await?;
    let read_memory = memory(args.pid)?.unwrap_or_default();
    let (differing, first_difference) = verify_chats(&args, channel).await?;
    let after_verify = server(&args.metrics).await?;

    let first = summarize(reads.first.clone(), reads.elapsed);
    let cold = summarize(reads.cold.clone(), reads.elapsed);
    let cold_evicting = summarize(reads.cold_evicting.clone(), reads.elapsed);
    let warm = summarize(reads.warm.clone(), reads.elapsed);
    // With no confirmed cold read (no loads metric), the first reads stand in.
    let cold_or_first: &Summary = if cold.count > 0 { &cold } else { &first };
    let write_seconds = written.elapsed.as_secs_f64();
    let load_ms = match (
        delta(after_read.load_seconds, after_write.load_seconds),
        delta(after_read.load_count, after_write.load_count),
    ) {
        (Some(seconds), Some(count)) if count > 0.0 => Some((seconds / count * 1e6).round() / 1e3),
        _ => None,
    };
    println!(
        "{}",
        json!({
            "chats": args.chats,
            "messages_per_chat": args.messages,
            "text_mb": (written.text_bytes as f64 / 1e5).round() / 10.0,
            "text_bytes": written.text_bytes,
            "write_seconds": (write_seconds * 10.0).round() / 10.0,
            "writes_per_s": (args.chats as f64 / write_seconds).round(),
            "write_text_mb_per_s": (written.text_bytes as f64 / 1e6 / write_seconds * 10.0).round() / 10.0,
            "samples": reads.first.len(),
            "cold_reads": cold.count,
            "first_reads_resident": reads.first_resident,
            "warm_reads_that_loaded": reads.warm_loaded,
            "first_p50_ms": ms(first.p50),
            "first_p99_ms": ms(first.p99),
            "cold_p50_ms": ms(cold.p50),
            "cold_p99_ms": ms(cold.p99),
            "cold_max_ms": ms(cold.max),
            "cold_evicting_reads": cold_evicting.count,
            "cold_evicting_p50_ms": ms(cold_evicting.p50),
            "cold_evicting_p99_ms": ms(cold_evicting.p99),
            "warm_p50_ms": ms(warm.p50),
            "warm_p99_ms": ms(warm.p99),
            "cold_warm_p50_ratio": ratio(cold_or_first.p50, warm.p50),
            "cold_warm_p99_ratio": ratio(cold_or_first.p99, warm.p99),
            "server_load_mean_ms": load_ms,
            "loads_during_write": delta(after_write.loads, at_start.loads),
            "evictions_during_write": delta(after_write.evictions, at_start.evictions),
            "loads_during_read": delta(after_read.loads, after_write.loads),
            "evictions_during_read": delta(after_read.evictions, after_write.evictions),
            "peak_rss_mib_write": args.pid.map(|_| write_memory.peak),
            "rss_mib_after_write": args.pid.map(|_| write_memory.rss),
            "anon_mib_after_write": args.pid.map(|_| write_memory.anon),
            "peak_rss_mib_read": args.pid.map(|_| read_memory.peak),
            "rss_mib_after_read": args.pid.map(|_| read_memory.rss),
            "anon_mib_after_read": args.pid.map(|_| read_memory.anon),
            "resident_bytes_after_write": after_write.resident_bytes,
            "chats_resident_after_write": after_write.chats_resident,
            "resident_bytes_after_read": after_read.resident_bytes,
            "chats_resident_after_read": after_read.chats_resident,
            "verified_chats": args.verify.min(args.chats),
            "verify_loads": delta(after_verify.loads, after_read.loads),
            "verify_differing": differing,
        })
    );
    if differing > 0 {
        return Err(
            format!("{differing} chats read back differently; first: {first_difference}").into(),
        );
    }
    if args.require_cold && cold.count == 0 {
        return Err(
            "no read loaded its chat: nothing was evicted (is --max-resident-memory set?)".into(),
        );
    }
    Ok(())
}
