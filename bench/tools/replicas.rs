//! `replicas`: delivery latency across two recapd replicas sharing one store.
//!
//! Streams are opened on replica A (`--subscribe-addr`), events are published
//! on replica B (`--publish-addr`). An event's latency runs from just before
//! its Publish is sent to B until A delivers an injection of that chat whose
//! revision is at least the one B answered (the refresh that event ran, or a
//! later one that includes it). Both ends are timed by this process's
//! monotonic clock, so the two servers' clocks play no part.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;

use crate::drive::connect;
use crate::stats::summarize;

type Error = Box<dyn std::error::Error>;

/// recapd refuses more chat ids than this in one Subscribe.
const CHATS_PER_STREAM: usize = 1000;

/// `replicas`: subscribe on A, publish on B, time each event from send to delivery.
#[derive(clap::Args)]
pub struct Replicas {
    /// Replica A: where the Subscribe streams are opened.
    #[arg(long)]
    subscribe_addr: String,
    /// Replica B: where the events are published.
    #[arg(long)]
    publish_addr: String,
    /// Chats the events are spread over (round-robin); fresh ids each run.
    #[arg(long, default_value_t = 20)]
    chats: usize,
    /// Publish calls per second in all.
    #[arg(long, default_value_t = 50.0)]
    rate: f64,
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Seconds to wait at the end for deliveries still on the way.
    #[arg(long, default_value_t = 3.0)]
    grace: f64,
}

/// What A delivered: per chat, each revision with when it arrived.
type Received = Mutex<HashMap<usize, BTreeMap<u64, Instant>>>;

/// One Publish on B that was answered.
struct Sent {
    chat: usize,
    revision: u64,
    at: Instant,
}

fn message_event(chat_id: String, n: u64) -> pb::Event {
    let message = pb::Message {
        id: format!("x{n}"),
        text: "A message across replicas.".into(),
        is_user: n.is_multiple_of(2),
        ..Default::default()
    };
    // message_sent and message_received alternate, as in a conversation;
    // with debounce_ms 0 both refresh before Publish answers.
    let kind = if n.is_multiple_of(2) {
        pb::event::Kind::MessageSent(pb::MessageSent {
            message: Some(message),
        })
    } else {
        pb::event::Kind::MessageReceived(pb::MessageReceived {
            message: Some(message),
        })
    };
    pb::Event {
        chat_id,
        kind: Some(kind),
    }
}

/// Waits until A has delivered, for every chat, a revision >= `wanted[chat]`.
async fn wait_delivered(
    received: &Received,
    wanted: &[u64],
    timeout: Duration,
) -> Result<(), usize> {
    let deadline = Instant::now() + timeout;
    loop {
        let missing = {
            let received = received.lock().unwrap();
            wanted
                .iter()
                .enumerate()
                .filter(|(chat, rev)| {
                    received
                        .get(chat)
                        .and_then(|revs| revs.last_key_value())
                        .is_none_or(|(last, _)| last < rev)
                })
                .count()
        };
        if missing == 0 {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(missing);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub async fn replicas(args: Replicas) -> Result<(), Error> {
    let chats = args.chats.max(1);
    let run = format!(
        "{:x}",
        SystemTime::now().duration_since(UNIX_EPOCH)?.as_micros()
    );
    let chat_ids: Vec<String> = (0..chats).map(|i| format!("xr-{run}-{i}")).collect();
    let index: Arc<HashMap<String, usize>> = Arc::new(
        chat_ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.clone(), i))
            .collect(),
    );
    let publish = connect(&args.publish_addr).await?;
    let subscribe = connect(&args.subscribe_addr).await?;
    let mut events = EventServiceClient::new(publish.clone());
    let mut settings = SettingsServiceClient::new(publish);

    // On B: debounce_ms 0 for these chats only (so message_sent/received
    // refresh before Publish answers), then create each chat with an
    // immediate refresh (chat_changed).
    let mut revision = vec![0u64; chats];
    for (chat, chat_id) in chat_ids.iter().enumerate() {
        settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: chat_id.clone(),
                settings: Some(pb::Settings {
                    debounce_ms: Some(0),
                    ..Default::default()
                }),
                clear: vec![],
            })
            .await?;
        let event = pb::Event {
            chat_id: chat_id.clone(),
            kind: Some(pb::event::Kind::ChatChanged(pb::ChatChanged {
                messages: vec![],
                ..Default::default()
            })),
        };
        revision[chat] = events
            .publish(pb::PublishRequest { event: Some(event) })
            .await?
            .into_inner()
            .revision;
    }

    // On A: streams of up to 1000 chats each, over one connection.
    let received: Arc<Received> = Arc::new(Mutex::new(HashMap::new()));
    let duplicates = Arc::new(AtomicU64::new(0));
    let stop = tokio_util::sync::CancellationToken::new();
    let mut streams = Vec::new();
    for ids in chat_ids.chunks(CHATS_PER_STREAM) {
        let mut stream = InjectionServiceClient::new(subscribe.clone())
            .subscribe(pb::SubscribeRequest {
                chat_ids: ids.to_vec(),
                max_updates: 0,
            })
            .await?
            .into_inner();
        let (received, duplicates, stop, index) = (
            received.clone(),
            duplicates.clone(),
            stop.clone(),
            index.clone(),
        );
        streams.push(tokio::spawn(async move {
            loop {
                let next = tokio::select! {
                    _ = stop.cancelled() => return Ok(()),
                    m = stream.message() => m?,
                };
                let at = Instant::now();
                let Some(injection) = next else {
                    return Err(tonic::Status::unavailable("stream ended"));
                };
                if !(injection.key.is_empty() || injection.key == "auto_recap_scene") {
                    continue;
                }
                let Some(&chat) = index.get(&injection.chat_id) else {
                    continue;
                };
                let mut received = received.lock().unwrap();
                if received
                    .entry(chat)
                    .or_default()
                    .insert(injection.revision, at)
                    .is_some()
                {
                    duplicates.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }

    // A's snapshot: proves A reads what B wrote.
    if let Err(missing) = wait_delivered(&received, &revision, Duration::from_secs(10)).await {
        return Err(format!(
            "replica A sent no snapshot for {missing} of {chats} chats created on B: \
             do the two replicas share one store?"
        )
        .into());
    }
    // A live refresh per chat: proves refreshes on B reach A's streams, and
    // that message events refresh at once (debounce_ms 0 took effect).
    let mut n = 0u64;
    for (chat, chat_id) in chat_ids.iter().enumerate() {
        n += 1;
        let answered = events
            .publish(pb::PublishRequest {
                event: Some(message_event(chat_id.clone(), n)),
            })
            .await?
            .into_inner()
            .revision;
        if answered <= revision[chat] {
            return Err(format!(
                "{chat_id}: Publish of a message answered revision {answered} after {}: \
                 the refresh was not immediate (debounce_ms is not 0?)",
                revision[chat]
            )
            .into());
        }
        revision[chat] = answered;
    }
    if let Err(missing) = wait_delivered(&received, &revision, Duration::from_secs(10)).await {
        return Err(format!(
            "replica A delivered no live refresh for {missing} of {chats} chats refreshed on B \
             within 10 s: refreshes do not cross replicas"
        )
        .into());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    // Measured: Publish on B at `rate`, round-robin over the chats.
    let failures = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / args.rate.max(0.001)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut pending = tokio::task::JoinSet::new();
    let mut attempted = 0u64;
    while started.elapsed().as_secs_f64() < args.seconds {
        ticker.tick().await;
        let chat = (attempted as usize) % chats;
        n += 1;
        attempted += 1;
        let event = message_event(chat_ids[chat].clone(), n);
        let mut events = events.clone();
        let failures = failures.clone();
        pending.spawn(async move {
            let at = Instant::now();
            match events
                .publish(pb::PublishRequest { event: Some(event) })
                .await
            {
                Ok(answer) => Some((
                    Sent {
                        chat,
                        revision: answer.into_inner().revision,
                        at,
                    },
                    at.elapsed(),
                )),
                Err(status) => {
                    if failures.fetch_add(1, Ordering::Relaxed) < 5 {
                        eprintln!("publish failed: {status}");
                    }
                    None
                }
            }
        });
    }
    let mut sent = Vec::new();
    let mut publish_latency = Vec::new();
    while let Some(result) = pending.join_next().await {
        if let Some((s, answered)) = result? {
            publish_latency.push(answered);
            sent.push(s);
        }
    }
    let elapsed = started.elapsed();

    // Stragglers: wait until every chat's last answered revision arrived.
    let mut last = vec![0u64; chats];
    for s in &sent {
        last[s.chat] = last[s.chat].max(s.revision);
    }
    let _ = wait_delivered(&received, &last, Duration::from_secs_f64(args.grace)).await;
    stop.cancel();
    for stream in streams {
        if let Err(status) = stream.await? {
            eprintln!("stream on A failed: {status}");
        }
    }

    // An event counts as delivered by the first injection of its chat with a
    // revision >= its own; `skipped` of those came with a later revision
    // (allowed: a slow reader may skip revisions). A delivery seen before
    // the Publish was sent would mean the answer's revision predates the
    // event's refresh: reported as `early`, which fails the run.
    let received = received.lock().unwrap();
    let (mut samples, mut lost, mut skipped, mut early) = (Vec::new(), 0u64, 0u64, 0u64);
    for s in &sent {
        let first = received
            .get(&s.chat)
            .and_then(|revs| revs.range(s.revision..).next());
        match first {
            None => lost += 1,
            Some((&rev, &at)) => {
                if rev != s.revision {
                    skipped += 1;
                }
                if at < s.at {
                    early += 1;
                } else {
                    samples.push(at - s.at);
                }
            }
        }
    }
    let failed = failures.load(Ordering::Relaxed);
    let delivered = samples.len();
    let summary = summarize(samples, elapsed);
    let answers = summarize(publish_latency, elapsed);
    println!(
        "replicas sent={attempted} answered={} received={delivered} lost={lost} skipped={skipped} \
         early={early} failed={failed} duplicates={} chats={chats} rate={} \
         p50_ms={:.3} p99_ms={:.3} max_ms={:.3} publish_p50_ms={:.3} publish_p99_ms={:.3}",
        sent.len(),
        duplicates.load(Ordering::Relaxed),
        args.rate,
        summary.p50.as_secs_f64() * 1e3,
        summary.p99.as_secs_f64() * 1e3,
        summary.max.as_secs_f64() * 1e3,
        answers.p50.as_secs_f64() * 1e3,
        answers.p99.as_secs_f64() * 1e3,
    );
    if lost > 0 || failed > 0 || early > 0 {
        return Err(format!(
            "{lost} events never delivered on A, {failed} publishes failed, {early} delivered early"
        )
        .into());
    }
    Ok(())
}
