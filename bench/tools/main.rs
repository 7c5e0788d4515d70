//! `recapd-bench`: the programs behind `bench/run.sh`.
//!
//! - `bare-server`: the baseline, a tonic server that does no work.
//! - `prepare`: gives recapd chats whose injection has a set size, and
//!   checks with a real client that the call under test answers OK.
//! - `unary`: N concurrent callers of one RPC for a while (used where h2load
//!   cannot be: each Publish needs a fresh message id).
//! - `fanout`: many Subscribe/Listen streams over a few connections, refreshes
//!   or broadcasts at a rate, delivery latency from the server's timestamp.
//! - `big-chat`: refresh cost of one appended message in a huge chat, and
//!   its cold load.
//! - `fill`: writes a data directory of a given size, for the restart figure.
//! - `soak`: mixed load for a while, watching memory and descriptors.
//! - `jobs`: recaps written by recapd through a fake LLM this process
//!   serves: jobs per second through the whole pipeline, and against the
//!   ideal rate when the fake has a latency.
//! - `replicas`: delivery latency from a Publish on one recapd replica to a
//!   Subscribe stream on another sharing its store.
//! - `resident`: many more chats than a `--max-resident-memory` budget
//!   holds, written then read in random order: cold (evicted) and warm
//!   read latency, confirmed by recapd's load and eviction counters.
//! - `eval`: a long-conversation dataset (LoCoMo layout) through a recapd it
//!   starts: jobs, scene-break precision and recall, and question answering
//!   with and without the memory (docs/evaluation.md).
//! - `world-info`: SillyTavern World Info (issue 29): ScanWorldInfo and
//!   RenderPrompt with generated books of several sizes and scan depths on
//!   a long chat, against RenderPrompt without World Info in the same run.
//! - `lore`: lorebook entries written by recapd (issue 30) for a scripted
//!   story through a fake LLM: requests and tokens per scene by kind,
//!   against the extension's requests for the same scenes, and the queue's
//!   overhead per lore job.
//! - `recall`: recall (issue 31) with a fake embeddings endpoint this
//!   process serves: indexing time and throughput, Recall latency, the
//!   recall tier's cost per refresh, memory under a budget.
//! - `hostile`: hostile World Info (issue 41): a regex key with a
//!   quadratic lookahead and a recursion chain, scanned alone; another
//!   chat's GetInjection while they scan in loops; the server's CPU after
//!   a scan whose deadline passed.
//! - `otlp-sink`: a collector stand-in for traces (issue 47): accepts OTLP
//!   spans over gRPC and HTTP and counts them, for `bench/traces.sh`.

mod bare;
mod branch;
mod data;
mod drive;
mod eval;
mod fixtures;
mod hostile;
mod import;
mod jobs;
mod lore;
mod otlp_sink;
mod recall;
mod replicas;
mod resident;
mod scrape;
mod soak;
mod stats;
mod world_info;

use clap::{Parser, Subcommand};

/// Generated code of the baseline's proto.
pub mod bench_pb {
    tonic::include_proto!("bench.v1");
}

#[derive(Parser)]
#[command(name = "recapd-bench")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the baseline.
    BareServer {
        #[arg(long)]
        listen: std::net::SocketAddr,
        #[arg(long, default_value_t = 1)]
        workers: usize,
    },
    /// Create `chats` chats on recapd whose injection is `bytes` long.
    Prepare(drive::Prepare),
    /// Drive one unary RPC with concurrent callers.
    Unary(drive::Unary),
    /// Measure stream delivery latency.
    Fanout(drive::Fanout),
    /// Refresh cost in a huge chat and its cold load.
    BigChat(data::BigChat),
    /// Fill a data directory.
    Fill(data::Fill),
    /// Mixed load for a while; fails when memory or descriptors grow.
    Soak(soak::Soak),
    /// Cross-replica delivery latency: publish on one replica, subscribe on another.
    Replicas(replicas::Replicas),
    /// Jobs through the whole pipeline with a fake LLM.
    Jobs(jobs::Jobs),
    /// Chats past a memory budget: write them, read them cold and warm.
    Resident(resident::Resident),
    /// A LoCoMo-layout dataset through recapd, scored (docs/evaluation.md).
    Eval(eval::Eval),
    /// World Info: ScanWorldInfo and RenderPrompt against RenderPrompt without it.
    WorldInfo(world_info::WorldInfo),
    /// Lore writing for a scripted story: requests per scene, queue overhead.
    Lore(lore::Lore),
    /// Recall: indexing, Recall latency, the tier's cost, memory.
    Recall(recall::Recall),
    /// Hostile World Info: bounded scans, and the chats beside them.
    Hostile(hostile::Hostile),
    /// BranchChat's time and memory at chats of several lengths.
    Branch(branch::Branch),
    /// A collector stand-in: counts OTLP spans received over gRPC and HTTP.
    OtlpSink(otlp_sink::OtlpSink),
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    match cli.command {
        Command::BareServer { listen, workers } => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_all()
                .build()?;
            runtime.block_on(bare::serve(listen))
        }
        Command::BigChat(args) => data::big_chat(args),
        Command::Fill(args) => data::fill(args),
        command => {
            // The load side gets the machine's other core(s): a runtime of its own.
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                match command {
                    Command::Prepare(args) => drive::prepare(args).await,
                    Command::Unary(args) => drive::unary(args).await,
                    Command::Fanout(args) => drive::fanout(args).await,
                    Command::Soak(args) => soak::soak(args).await,
                    Command::Replicas(args) => replicas::replicas(args).await,
                    Command::Jobs(args) => jobs::jobs(args).await,
                    Command::Resident(args) => resident::resident(args).await,
                    Command::Eval(args) => eval::eval(args).await.map(|_| ()),
                    Command::WorldInfo(args) => world_info::world_info(args).await,
                    Command::Lore(args) => lore::lore(args).await,
                    Command::Recall(args) => recall::recall(args).await,
                    Command::Branch(args) => branch::branch(args).await,
                    Command::OtlpSink(args) => otlp_sink::otlp_sink(args).await,
                    Command::Hostile(args) => hostile::hostile(args)
                        .await
                        .map_err(|e| e.to_string().into()),
                    _ => unreachable!("handled above"),
                }
            })
        }
    }
}
