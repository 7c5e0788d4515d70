//! `recall`'s `throughput` and `memory` phases (see `recall.rs`).

use std::time::{Duration, Instant};

use super::fake::Fake;
use super::rpc::{Clients, Memory, memory};
use super::{Recall, corpus, ms};

type Error = Box<dyn std::error::Error>;

/// Indexing throughput: `--chats` chats of `--messages` messages, imported
/// with recall off, then recall turned on globally (every chat refreshed,
/// its index built, its index job queued); passages per second until
/// every index job SUCCEEDED, against `concurrency x batch / latency`.
pub async fn throughput(args: &Recall, fake: &Fake, c: &mut Clients) -> Result<(), Error> {
    let chats: Vec<String> = (0..args.chats).map(|k| format!("tp-{k}")).collect();
    c.set_recall("", false).await?;
    for (k, chat) in chats.iter().enumerate() {
        let file = corpus::chat_file(args.seed, k, args.messages);
        c.import(chat, &file, args.messages).await?;
    }
    let before = fake.counts();
    if before.inputs != 0 {
        return Err("passages were indexed before recall was turned on".into());
    }
    let started = Instant::now();
    c.set_recall("", true).await?;
    c.wait_indexed(
        &chats,
        Duration::from_millis(20),
        Duration::from_secs(args.index_timeout),
    )
    .await?;
    let seconds = started.elapsed().as_secs_f64();
    let counts = fake.counts();
    let rate = counts.inputs as f64 / seconds;
    let line = format!(
        "recall_throughput chats={} messages={} passages={} requests={} seconds={seconds:.2} \
         passages_per_s={rate:.0} busy_seconds={:.2} max_in_flight={} concurrency={} batch={} latency_ms={}",
        args.chats,
        args.messages,
        counts.inputs,
        counts.requests,
        counts.busy_seconds,
        counts.max_in_flight,
        args.concurrency,
        args.batch,
        args.latency_ms,
    );
    if args.latency_ms == 0 {
        println!("{line}");
    } else {
        let ideal = (args.concurrency * args.batch) as f64 * 1000.0 / args.latency_ms as f64;
        println!("{line} ideal_per_s={ideal:.0} ratio={:.3}", rate / ideal);
    }
    if counts.max_in_flight > args.concurrency {
        return Err(format!(
            "{} requests were in flight at once, over --embedding-concurrency {}",
            counts.max_in_flight, args.concurrency
        )
        .into());
    }
    Ok(())
}

fn memory_line(step: &str, m: &Memory, base: &Memory, call_ms: Option<f64>) {
    println!(
        "recall_memory step={step} rss_mib={:.0} resident_mib={:.1} chats_resident={} loads={} evictions={} call_ms={}",
        m.rss_mib,
        m.resident_mib,
        m.chats_resident,
        m.loads - base.loads,
        m.evictions - base.evictions,
        call_ms.map_or("none".to_owned(), |v| format!("{v:.0}")),
    );
}

/// Memory under a budget: `--chats` chats of `--messages` messages with
/// recall on, each imported and indexed in turn, then each read in turn
/// (Recall of its moment, which loads an evicted chat and its vectors),
/// `--cycles` times; the memory after each step.
pub async fn memory_phase(args: &Recall, c: &mut Clients) -> Result<(), Error> {
    let chats: Vec<String> = (0..args.chats).map(|k| format!("mem-{k}")).collect();
    c.set_recall("", true).await?;
    let base = memory(&args.metrics, args.pid).await?;
    memory_line("start", &base, &base, None);
    for (k, chat) in chats.iter().enumerate() {
        let file = corpus::chat_file(args.seed, k, args.messages);
        let started = Instant::now();
        c.import(chat, &file, args.messages).await?;
        c.wait_indexed(
            std::slice::from_ref(chat),
            Duration::from_millis(50),
            Duration::from_secs(args.index_timeout),
        )
        .await?;
        let took = ms(started.elapsed());
        memory_line(
            &format!("indexed-{chat}"),
            &memory(&args.metrics, args.pid).await?,
            &base,
            Some(took),
        );
    }
    for cycle in 0..args.cycles {
        for chat in &chats {
            let (answer, took) = c.recall(chat, "", 10).await?;
            if answer.hits.is_empty() || !answer.used_vectors {
                return Err(format!("Recall of {chat} found nothing by vector").into());
            }
            memory_line(
                &format!("recall-{cycle}-{chat}"),
                &memory(&args.metrics, args.pid).await?,
                &base,
                Some(ms(took)),
            );
        }
    }
    Ok(())
}
