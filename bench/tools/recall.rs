//! `recall`: the cost of recall (issue 31) against a running recapd started
//! with `--embedding-url http://EMBED_LISTEN/v1`, whose embeddings this
//! process fakes (`recall/fake.rs`: deterministic vectors, a fixed
//! latency). Three phases, one per run (`bench/recall.sh` starts a fresh
//! recapd for each):
//!
//! - `growth`: a generated chat of `--messages` messages (`recall/corpus.rs`)
//!   with `recall_enabled` imported through ImportChatStream; the time
//!   until its index job SUCCEEDED; the server's memory then; Recall for
//!   the chat's moment (empty query) and for text queries, interleaved;
//!   then the same chat without recall imported beside it, and blocks of
//!   Refresh calls on each chat in turn, then blocks of one appended
//!   message and a Refresh (on the chat with recall, the new message's
//!   index job let end before the next): the refresh with the recall tier
//!   against the refresh without, in the same minutes, the tier's own
//!   histogram, and recapd's CPU time per call on each side (read from
//!   `/proc/<pid>/task/*/schedstat`, so what other processes on the
//!   server's CPU take does not count in it; the latencies do include it).
//! - `throughput`: `--chats` chats imported with recall off, then turned on
//!   globally; passages indexed per second until every index job
//!   SUCCEEDED, against the ideal `concurrency x batch / latency`.
//! - `memory`: `--chats` chats indexed one after the other under a small
//!   `--max-resident-memory`, then read in turn (Recall of the moment):
//!   the server's RSS and `recapd_resident_bytes`, loads and evictions
//!   after each step.
//!
//! Each phase prints `key=value` lines.

pub(crate) mod corpus;
mod fake;
mod phases;
mod rpc;

use std::time::{Duration, Instant};

use crate::drive::connect;
use crate::stats::{Summary, summarize};
use fake::Fake;
use rpc::{Clients, buckets, cpu_ms, memory, quantile_ms};

type Error = Box<dyn std::error::Error>;

/// The tier's histogram.
const TIER: &str = "recapd_recall_tier_duration_seconds";
/// Recall's search histogram.
const SEARCH: &str = "recapd_recall_search_duration_seconds";

/// Which measurement.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Growth,
    Throughput,
    Memory,
}

/// `recall`'s options.
#[derive(clap::Args)]
pub struct Recall {
    /// recapd's gRPC address.
    #[arg(long)]
    addr: String,
    /// recapd's `--metrics-listen` address.
    #[arg(long)]
    metrics: String,
    /// Where this process serves the fake embeddings endpoint.
    #[arg(long)]
    embed_listen: std::net::SocketAddr,
    /// recapd's process id, for its VmRSS.
    #[arg(long)]
    pid: Option<u32>,
    #[arg(long, value_enum, default_value = "growth")]
    phase: Phase,
    /// Messages per chat.
    #[arg(long, default_value_t = 100_000)]
    messages: usize,
    /// Chats (throughput, memory).
    #[arg(long, default_value_t = 8)]
    chats: usize,
    /// The fake's answer time, ms.
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// recapd's --embedding-concurrency, for the ideal rate.
    #[arg(long, default_value_t = 2)]
    concurrency: usize,
    /// recapd's --embedding-batch-size, for the ideal rate.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// The vectors' dimension.
    #[arg(long, default_value_t = 384)]
    dims: usize,
    /// Measured Recall calls of each kind (growth).
    #[arg(long, default_value_t = 500)]
    samples: usize,
    /// Measured refresh rounds (growth).
    #[arg(long, default_value_t = 300)]
    rounds: usize,
    /// Unmeasured calls or rounds first.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
    /// At most this long per measurement (at least 20 samples).
    #[arg(long, default_value_t = 90.0)]
    max_seconds: f64,
    /// Reads of the chats in turn (memory).
    #[arg(long, default_value_t = 2)]
    cycles: usize,
    /// Most time the index jobs may take, seconds.
    #[arg(long, default_value_t = 1800)]
    index_timeout: u64,
    /// Seed of the texts.
    #[arg(long, default_value_t = 31)]
    seed: u64,
    /// recapd runs without an embeddings endpoint (growth): keyword
    /// search alone, nothing indexed.
    #[arg(long)]
    keyword_only: bool,
}

pub async fn recall(args: Recall) -> Result<(), Error> {
    let fake = Fake::serve(
        args.embed_listen,
        Duration::from_millis(args.latency_ms),
        args.dims,
    )
    .await?;
    let mut c = Clients::new(connect(&args.addr).await?);
    match args.phase {
        Phase::Growth => growth(&args, &fake, &mut c).await,
        Phase::Throughput => phases::throughput(&args, &fake, &mut c).await,
        Phase::Memory => phases::memory_phase(&args, &mut c).await,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Whether a measurement loop goes on: until `wanted` samples, or past
/// its time budget once it has 20.
fn more(args: &Recall, taken: usize, wanted: usize, started: Instant) -> bool {
    taken < wanted && (taken < 20 || started.elapsed() < Duration::from_secs_f64(args.max_seconds))
}

async fn growth(args: &Recall, fake: &Fake, c: &mut Clients) -> Result<(), Error> {
    let n = args.messages;
    let timeout = Duration::from_secs(args.index_timeout);
    let on = "rc-on".to_owned();
    let off = "rc-off";
    let file = corpus::chat_file(args.seed, 0, n);
    c.set_recall(&on, true).await?;
    let cpu_start = cpu_ms(args.pid)?;
    let import = c.import(&on, &file, n).await?;
    let cpu_imported = cpu_ms(args.pid)?;
    let indexing = Instant::now();
    if !args.keyword_only {
        c.wait_indexed(
            std::slice::from_ref(&on),
            Duration::from_millis(50),
            timeout,
        )
        .await?;
    }
    let index_s = indexing.elapsed().as_secs_f64();
    let indexed = fake.counts();
    let index_cpu_ms = cpu_ms(args.pid)? - cpu_imported;
    let after_index = memory(&args.metrics, args.pid).await?;
    eprintln!(
        "recall: {n} messages imported in {:.0} ms, {} passages indexed in {index_s:.1} s",
        ms(import),
        indexed.inputs
    );

    // Recall: the moment and text queries, interleaved.
    let search_before = buckets(&crate::scrape::scrape(&args.metrics).await?, SEARCH);
    let (mut moment, mut query) = (Vec::new(), Vec::new());
    let (mut found_own, mut moment_hits, mut without_vectors) = (0usize, 0usize, 0usize);
    let mut rng = corpus::Rng(args.seed);
    let started = Instant::now();
    let mut round = 0;
    let mut recall_cpu = 0.0;
    while round < args.warmup || more(args, moment.len(), args.samples, started) {
        let about = rng.below(n.saturating_sub(20).max(1));
        let text = corpus::query_about(args.seed, 0, about, 6);
        let keep = round >= args.warmup;
        if round == args.warmup {
            recall_cpu = cpu_ms(args.pid)?;
        }
        for kind in if round % 2 == 0 { [0, 1] } else { [1, 0] } {
            if kind == 0 {
                let (answer, took) = c.recall(&on, "", 10).await?;
                moment_hits += answer.hits.len();
                without_vectors += usize::from(!answer.used_vectors);
                if keep {
                    moment.push(took);
                }
            } else {
                let (answer, took) = c.recall(&on, &text, 10).await?;
                without_vectors += usize::from(!answer.used_vectors);
                let own = corpus::message_id(about);
                found_own += usize::from(answer.hits.iter().any(|h| h.message_id == own));
                if keep {
                    query.push(took);
                }
            }
        }
        round += 1;
    }
    let recall_elapsed = started.elapsed();
    let recall_rounds = round.max(1) as f64;
    let recall_cpu_per_call = (cpu_ms(args.pid)? - recall_cpu) / (2 * moment.len()).max(1) as f64;
    let search_after = buckets(&crate::scrape::scrape(&args.metrics).await?, SEARCH);
    if without_vectors > 0 && !args.keyword_only {
        return Err(format!("{without_vectors} Recall answers did not use vectors").into());
    }

    // Refresh with the tier against without, same chat, same minutes:
    // the refresh alone, then after an appended message.
    c.import(off, &file, n).await?;
    let alone = refresh_rounds(args, c, &on, off, false).await?;
    let appended = refresh_rounds(args, c, &on, off, true).await?;
    let [moment, query] = [moment, query].map(|s| summarize(s, recall_elapsed));
    let hist = |b: &[(f64, f64)], a: &[(f64, f64)], q| {
        quantile_ms(b, a, q).map_or("none".to_owned(), |v| format!("{v:.3}"))
    };
    println!(
        "recall_growth messages={n} passages={} dims={} import_ms={:.0} index_s={index_s:.2} \
         index_per_s={:.0} index_requests={} import_cpu_ms={:.0} index_cpu_ms={:.0} \
         index_cpu_us_per_passage={:.1} rss_mib={:.0} resident_mib={:.1} chats_resident={} \
         recall_cpu_ms_per_call={recall_cpu_per_call:.3} moment_p50_ms={:.3} moment_p99_ms={:.3} query_p50_ms={:.3} query_p99_ms={:.3} \
         recalls={} moment_hits_mean={:.1} query_found_own={:.3} search_p50_ms={} search_p99_ms={} \
         {} {}",
        indexed.inputs,
        args.dims,
        ms(import),
        indexed.inputs as f64 / index_s.max(1e-9),
        indexed.requests,
        cpu_imported - cpu_start,
        index_cpu_ms,
        index_cpu_ms * 1e3 / indexed.inputs.max(1) as f64,
        after_index.rss_mib,
        after_index.resident_mib,
        after_index.chats_resident,
        ms(moment.p50),
        ms(moment.p99),
        ms(query.p50),
        ms(query.p99),
        moment.count,
        moment_hits as f64 / recall_rounds,
        found_own as f64 / recall_rounds,
        hist(&search_before, &search_after, 0.5),
        hist(&search_before, &search_after, 0.99),
        alone.fields("refresh"),
        appended.fields("append"),
    );
    Ok(())
}

/// What a series of refresh rounds measured: the Refresh and Publish
/// calls on the chat with the tier and on the chat without, and the
/// tier's histogram over the rounds.
struct Rounds {
    refresh_on: Summary,
    refresh_off: Summary,
    publish_on: Summary,
    publish_off: Summary,
    tier_p50_ms: Option<f64>,
    tier_p99_ms: Option<f64>,
    tiers: f64,
    /// recapd's CPU time per call (with `append`: per Publish and Refresh,
    /// and on `on` the index job of the message), ms: on, off.
    cpu_on_ms: f64,
    cpu_off_ms: f64,
}

impl Rounds {
    /// Its `key=value` fields, keys starting with `label`.
    fn fields(&self, label: &str) -> String {
        let ms = |s: &Summary, q: f64| ms(if q < 0.9 { s.p50 } else { s.p99 });
        let opt = |v: Option<f64>| v.map_or("none".to_owned(), |v| format!("{v:.3}"));
        let mut out = format!(
            "{label}_rounds={} {label}_on_p50_ms={:.3} {label}_on_p99_ms={:.3} {label}_off_p50_ms={:.3} \
             {label}_off_p99_ms={:.3} {label}_added_p50_ms={:.3} {label}_added_p99_ms={:.3} \
             {label}_tier_p50_ms={} {label}_tier_p99_ms={} {label}_tiers={:.0} \
             {label}_cpu_on_ms={:.3} {label}_cpu_off_ms={:.3} {label}_cpu_added_ms={:.3}",
            self.refresh_on.count,
            ms(&self.refresh_on, 0.5),
            ms(&self.refresh_on, 0.99),
            ms(&self.refresh_off, 0.5),
            ms(&self.refresh_off, 0.99),
            ms(&self.refresh_on, 0.5) - ms(&self.refresh_off, 0.5),
            ms(&self.refresh_on, 0.99) - ms(&self.refresh_off, 0.99),
            opt(self.tier_p50_ms),
            opt(self.tier_p99_ms),
            self.tiers,
            self.cpu_on_ms,
            self.cpu_off_ms,
            self.cpu_on_ms - self.cpu_off_ms,
        );
        if self.publish_on.count > 0 {
            out.push_str(&format!(
                " {label}_publish_on_p50_ms={:.3} {label}_publish_on_p99_ms={:.3} \
                 {label}_publish_off_p50_ms={:.3} {label}_publish_off_p99_ms={:.3}",
                ms(&self.publish_on, 0.5),
                ms(&self.publish_on, 0.99),
                ms(&self.publish_off, 0.5),
                ms(&self.publish_off, 0.99),
            ));
        }
        out
    }
}

/// Calls of one chat in a row, between two readings of recapd's CPU time.
const BLOCK: usize = 10;

/// Blocks of [`BLOCK`] Refresh calls of the chat with the tier (`on`), then
/// of the chat without (`off`), alternating (so both see the same machine
/// minutes), each block's CPU time read; with `append`, each Refresh
/// follows a Publish `message_sent` of a new message, and on `on` the
/// message's index job is let end before the next call (its CPU time
/// counts in the block: the cost of a message with recall on).
async fn refresh_rounds(
    args: &Recall,
    c: &mut Clients,
    on: &str,
    off: &str,
    append: bool,
) -> Result<Rounds, Error> {
    let mut samples: [Vec<Duration>; 4] = Default::default();
    let mut cpu = [0.0f64; 2];
    let warmup_blocks = 2 * args.warmup.div_ceil(BLOCK);
    let mut tier_before = Vec::new();
    let mut started = Instant::now();
    let mut block = 0;
    let mut call = 0;
    loop {
        let keep = block >= warmup_blocks;
        if block == warmup_blocks {
            tier_before = buckets(&crate::scrape::scrape(&args.metrics).await?, TIER);
            started = Instant::now();
        }
        // Stop only after a pair of blocks.
        if keep && block % 2 == 0 && !more(args, samples[0].len(), args.rounds, started) {
            break;
        }
        let side = block % 2;
        let chat = if side == 0 { on } else { off };
        let cpu_before = cpu_ms(args.pid)?;
        for _ in 0..BLOCK {
            let publish = if append {
                let text = corpus::message_text(args.seed, 1, call);
                Some(c.append(chat, format!("x{call}"), text).await?)
            } else {
                None
            };
            call += 1;
            let refresh = c.refresh(chat).await?;
            let waiting = Instant::now();
            while append && side == 0 && c.indexing(on).await? {
                if waiting.elapsed() > Duration::from_secs(30) {
                    return Err("the appended message's index job did not end in 30 s".into());
                }
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            if keep {
                samples[side * 2].push(refresh);
                samples[side * 2 + 1].extend(publish);
            }
        }
        if keep {
            cpu[side] += cpu_ms(args.pid)? - cpu_before;
        }
        block += 1;
    }
    let elapsed = started.elapsed();
    let tier_after = buckets(&crate::scrape::scrape(&args.metrics).await?, TIER);
    let per_call = |side: usize| cpu[side] / samples[side * 2].len().max(1) as f64;
    let (cpu_on_ms, cpu_off_ms) = (per_call(0), per_call(1));
    let [refresh_on, publish_on, refresh_off, publish_off] = samples.map(|s| summarize(s, elapsed));
    Ok(Rounds {
        refresh_on,
        refresh_off,
        publish_on,
        publish_off,
        tier_p50_ms: quantile_ms(&tier_before, &tier_after, 0.5),
        tier_p99_ms: quantile_ms(&tier_before, &tier_after, 0.99),
        tiers: tier_after.last().map_or(0.0, |l| l.1) - tier_before.last().map_or(0.0, |l| l.1),
        cpu_on_ms,
        cpu_off_ms,
    })
}
