//! `branch`: BranchChat's cost (issue 45). Chats of each length are
//! imported (the recall benchmark's corpus: generated lines of two
//! speakers), then branched at their last message `--samples` times in
//! turn; each call's time, and recapd's resident memory before and after
//! (VmRSS and `recapd_resident_bytes`: each branch is a chat in memory).

use std::time::{Duration, Instant};

use clap::Args;
use recapd::grpc::pb;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::transport::Channel;

use crate::import::import_chat;
use crate::recall::corpus;
use crate::scrape::{metric_sum, scrape, status_kb};

type Error = Box<dyn std::error::Error>;

/// `recapd-bench branch`'s options.
#[derive(Args)]
pub struct Branch {
    /// recapd's gRPC address.
    #[arg(long)]
    addr: String,
    /// recapd's metrics address.
    #[arg(long)]
    metrics: String,
    /// recapd's process id (for its VmRSS).
    #[arg(long)]
    pid: u32,
    /// Chat lengths, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1000,100000")]
    lengths: Vec<usize>,
    /// Branches of each chat.
    #[arg(long, default_value_t = 5)]
    samples: usize,
}

/// recapd's VmRSS and `recapd_resident_bytes`, MiB.
async fn memory(args: &Branch) -> Result<(f64, f64), Error> {
    let rss = status_kb(args.pid, "VmRSS")? as f64 / 1024.0;
    let metrics = scrape(&args.metrics).await?;
    let resident = metric_sum(&metrics, "recapd_resident_bytes").unwrap_or(0.0) / 1_048_576.0;
    Ok((rss, resident))
}

pub async fn branch(args: Branch) -> Result<(), Error> {
    let channel = Channel::from_shared(format!("http://{}", args.addr))?
        .connect()
        .await?;
    let mut memory_client = MemoryServiceClient::new(channel)
        .max_decoding_message_size(usize::MAX)
        .max_encoding_message_size(usize::MAX);
    for &length in &args.lengths {
        let chat = format!("source-{length}");
        let file = corpus::chat_file(7, 0, length);
        let started = Instant::now();
        import_chat(&mut memory_client, &chat, &file).await?;
        let import_ms = started.elapsed().as_secs_f64() * 1e3;
        let last = format!("m{}", length - 1);
        let (rss_before, resident_before) = memory(&args).await?;
        let mut took: Vec<Duration> = Vec::new();
        for sample in 0..args.samples {
            let started = Instant::now();
            let made = memory_client
                .branch_chat(pb::BranchChatRequest {
                    chat_id: chat.clone(),
                    message_id: last.clone(),
                    new_chat_id: format!("branch-{length}-{sample}"),
                })
                .await?
                .into_inner();
            took.push(started.elapsed());
            if made.message_count as usize != length {
                return Err(format!(
                    "a branch of {chat} at {last} holds {} messages, not {length}",
                    made.message_count
                )
                .into());
            }
        }
        let (rss_after, resident_after) = memory(&args).await?;
        took.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "branch messages={length} samples={} import_ms={import_ms:.0} p50_ms={:.1} max_ms={:.1} \
             rss_mib_per_branch={:.1} resident_mib_per_branch={:.1}",
            args.samples,
            ms(took[took.len() / 2]),
            ms(took[took.len() - 1]),
            (rss_after - rss_before) / args.samples as f64,
            (resident_after - resident_before) / args.samples as f64,
        );
    }
    Ok(())
}
