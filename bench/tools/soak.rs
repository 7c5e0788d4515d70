//! `soak`: mixed load against a running recapd for a while, sampling its
//! resident memory and open file descriptors; fails when either grows by
//! more than 5% after warm-up. The load keeps the stored state bounded (old
//! messages and recap versions are deleted as new ones come), so growth
//! means a leak, not data.

use std::time::{Duration, Instant};

use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::transport::Channel;

use crate::scrape::status_kb;

type Error = Box<dyn std::error::Error>;

#[derive(clap::Args)]
pub struct Soak {
    #[arg(long)]
    addr: String,
    /// recapd's process id, whose memory and descriptors are sampled.
    #[arg(long)]
    pid: u32,
    #[arg(long, default_value_t = 600.0)]
    seconds: f64,
    #[arg(long, default_value_t = 32)]
    chats: usize,
}

fn sample(pid: u32) -> Result<(u64, usize), Error> {
    let rss_kb = status_kb(pid, "VmRSS")?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))?.count();
    Ok((rss_kb, fds))
}

fn publish(chat: &str, kind: pb::event::Kind) -> pb::PublishRequest {
    pb::PublishRequest {
        event: Some(pb::Event {
            chat_id: chat.into(),
            kind: Some(kind),
        }),
    }
}

async fn chat_worker(
    channel: Channel,
    chat: String,
    deadline: Instant,
) -> Result<u64, tonic::Status> {
    let mut events = EventServiceClient::new(channel.clone());
    let mut memory = MemoryServiceClient::new(channel.clone());
    let mut injections = InjectionServiceClient::new(channel.clone());
    events
        .publish(publish(
            &chat,
            pb::event::Kind::ChatChanged(pb::ChatChanged::default()),
        ))
        .await?;
    let mut n: u64 = 0;
    while Instant::now() < deadline {
        n += 1;
        let message = pb::Message {
            id: format!("m{n}"),
            text: format!("message number {n} of a long soak"),
            ..Default::default()
        };
        events
            .publish(publish(
                &chat,
                pb::event::Kind::MessageSent(pb::MessageSent {
                    message: Some(message),
                }),
            ))
            .await?;
        let data = pb::MessageData {
            memory: Some(format!("recap of {n}")),
            scene_break: Some(n.is_multiple_of(10)),
            ..Default::default()
        };
        memory
            .set_message_data(pb::SetMessageDataRequest {
                edit: false,
                chat_id: chat.clone(),
                message_id: format!("m{n}"),
                data: Some(data),
            })
            .await?;
        if n > 40 {
            events
                .publish(publish(
                    &chat,
                    pb::event::Kind::MessageDeleted(pb::MessageDeleted {
                        message_id: format!("m{}", n - 40),
                    }),
                ))
                .await?;
        }
        if n.is_multiple_of(10) {
            let v = memory
                .add_running_recap(pb::AddRunningRecapRequest {
                    chat_id: chat.clone(),
                    content: format!("the story up to {n}"),
                    ..Default::default()
                })
                .await?
                .into_inner()
                .version;
            if v >= 3 {
                let _ = memory
                    .delete_running_recap(pb::DeleteRunningRecapRequest {
                        chat_id: chat.clone(),
                        version: v - 3,
                    })
                    .await;
            }
        }
        injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat.clone(),
                key: None,
            })
            .await?;
        if n.is_multiple_of(5) {
            injections
                .get_inclusion(pb::GetInclusionRequest {
                    chat_id: chat.clone(),
                })
                .await?;
        }
        if n.is_multiple_of(7) {
            // A subscription that comes and goes.
            let mut stream = injections
                .subscribe(pb::SubscribeRequest {
                    chat_ids: vec![chat.clone()],
                    max_updates: 2,
                })
                .await?
                .into_inner();
            let _ = tokio::time::timeout(Duration::from_millis(50), stream.message()).await;
        }
    }
    Ok(n)
}

pub async fn soak(args: Soak) -> Result<(), Error> {
    let channel = Channel::from_shared(format!("http://{}", args.addr))?
        .connect()
        .await?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.seconds);
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..args.chats {
        workers.spawn(chat_worker(channel.clone(), format!("soak-{i}"), deadline));
    }
    let warm_up = Duration::from_secs_f64(args.seconds * 0.2);
    let mut baseline: Option<(u64, usize)> = None;
    let mut peak = (0u64, 0usize);
    while Instant::now() < deadline {
        tokio::time::sleep(
            Duration::from_secs(5).min(deadline.saturating_duration_since(Instant::now())),
        )
        .await;
        let (rss, fds) = sample(args.pid)?;
        let elapsed = started.elapsed();
        println!(
            "soak t={:.0}s rss_kb={rss} fds={fds}",
            elapsed.as_secs_f64()
        );
        if elapsed >= warm_up {
            match baseline {
                None => baseline = Some((rss, fds)),
                Some(_) => peak = (peak.0.max(rss), peak.1.max(fds)),
            }
        }
    }
    let mut operations = 0;
    while let Some(result) = workers.join_next().await {
        operations += result??;
    }
    let (rss0, fds0) = baseline.ok_or("the run ended before warm-up did")?;
    let (rss1, fds1) = (peak.0.max(rss0), peak.1.max(fds0));
    let rss_growth = (rss1 as f64 - rss0 as f64) / rss0 as f64 * 100.0;
    let fd_growth = (fds1 as f64 - fds0 as f64) / fds0 as f64 * 100.0;
    println!(
        "soak seconds={:.0} message_rounds={operations} rss_after_warmup_kb={rss0} rss_peak_kb={rss1} rss_growth_pct={rss_growth:.1} fds_after_warmup={fds0} fds_peak={fds1} fd_growth_pct={fd_growth:.1}",
        args.seconds
    );
    if rss_growth > 5.0 || fd_growth > 5.0 {
        return Err(format!(
            "grew by more than 5% after warm-up: rss {rss_growth:.1}%, fds {fd_growth:.1}%"
        )
        .into());
    }
    Ok(())
}
