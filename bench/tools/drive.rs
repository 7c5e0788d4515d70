//! The load side: preparing recapd, unary load, and stream fan-out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use prost::Message as _;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::transport::Channel;

use crate::bench_pb;
use crate::bench_pb::bare_service_client::BareServiceClient;
use crate::stats::summarize;

type Error = Box<dyn std::error::Error>;

pub(crate) async fn connect(addr: &str) -> Result<Channel, Error> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match Channel::from_shared(format!("http://{addr}"))?
            .connect()
            .await
        {
            Ok(channel) => return Ok(channel),
            Err(_) if Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await
            }
            Err(e) => return Err(format!("{addr}: {e}").into()),
        }
    }
}

/// `prepare`: chats `bench-0`.. with an injection of about `bytes` bytes.
#[derive(clap::Args)]
pub struct Prepare {
    #[arg(long)]
    addr: String,
    #[arg(long, default_value_t = 1)]
    chats: usize,
    #[arg(long, default_value_t = 2048)]
    bytes: usize,
}

pub async fn prepare(args: Prepare) -> Result<(), Error> {
    let channel = connect(&args.addr).await?;
    let events = EventServiceClient::new(channel.clone());
    let memory = MemoryServiceClient::new(channel.clone());
    let mut settings = SettingsServiceClient::new(channel.clone());
    let mut injections = InjectionServiceClient::new(channel);
    // A blank template: the injection is the recap itself, `bytes` long.
    settings
        .update_settings(pb::UpdateSettingsRequest {
            chat_id: String::new(),
            settings: Some(pb::Settings {
                template: Some(String::new()),
                ..Default::default()
            }),
            clear: vec![],
        })
        .await?;
    let content: String = "They met at the inn and talked until dawn. "
        .chars()
        .cycle()
        .take(args.bytes)
        .collect();
    // Many chats at once: their commits are grouped, as in production.
    let mut tasks = tokio::task::JoinSet::new();
    let content = std::sync::Arc::new(content);
    for worker in 0..64.min(args.chats.max(1)) {
        let (mut events, mut memory, content) = (events.clone(), memory.clone(), content.clone());
        let chats = args.chats;
        tasks.spawn(async move {
            for i in (worker..chats).step_by(64) {
                let chat_id = format!("bench-{i}");
                let event = pb::Event {
                    chat_id: chat_id.clone(),
                    kind: Some(pb::event::Kind::ChatChanged(pb::ChatChanged {
                        messages: vec![pb::Message {
                            id: "m0".into(),
                            text: "Hello".into(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    })),
                };
                events
                    .publish(pb::PublishRequest { event: Some(event) })
                    .await?;
                let recap = pb::AddRunningRecapRequest {
                    chat_id,
                    content: (*content).clone(),
                    ..Default::default()
                };
                memory.add_running_recap(recap).await?;
            }
            Ok::<(), tonic::Status>(())
        });
    }
    while let Some(result) = tasks.join_next().await {
        result??;
    }
    // The check h2load cannot make: the call under test answers OK.
    let injection = injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "bench-0".into(),
            key: None,
        })
        .await?
        .into_inner();
    if injection.text.len() != args.bytes {
        return Err(format!(
            "injection is {} bytes, wanted {}",
            injection.text.len(),
            args.bytes
        )
        .into());
    }
    println!(
        "prepared chats={} injection_bytes={} reply_bytes={} status=OK",
        args.chats,
        injection.text.len(),
        injection.encoded_len()
    );
    Ok(())
}

/// `unary`: `callers` concurrent callers, one connection per address.
#[derive(clap::Args)]
pub struct Unary {
    /// `publish` (recapd Publish of message_sent, one chat per caller
    /// unless `--one-chat`) or `bare` (the baseline's Unary with
    /// `reply-bytes`).
    #[arg(long)]
    target: String,
    /// Server address; repeat it to spread the callers round-robin over
    /// several servers (e.g. recapd replicas sharing one store). Each caller
    /// keeps to one address, so a chat is only written through one of them.
    #[arg(long, required = true)]
    addr: Vec<String>,
    #[arg(long, default_value_t = 50)]
    callers: usize,
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    #[arg(long, default_value_t = 2)]
    reply_bytes: u32,
    /// With `publish`: every caller writes the same chat (message ids stay
    /// unique), so all of them wait on that one chat's commits.
    #[arg(long)]
    one_chat: bool,
}

pub async fn unary(args: Unary) -> Result<(), Error> {
    let mut channels = Vec::new();
    for addr in &args.addr {
        channels.push(connect(addr).await?);
    }
    let failures = Arc::new(AtomicU64::new(0));
    let run = format!(
        "{:x}",
        SystemTime::now().duration_since(UNIX_EPOCH)?.as_micros()
    );
    let chat_of = |caller: usize| {
        let chat = if args.one_chat { 0 } else { caller };
        format!("pub-{run}-{chat}")
    };
    if args.target == "publish" {
        let chats = if args.one_chat { 1 } else { args.callers };
        for caller in 0..chats {
            let mut events = EventServiceClient::new(channels[caller % channels.len()].clone());
            let event = pb::Event {
                chat_id: chat_of(caller),
                kind: Some(pb::event::Kind::ChatChanged(pb::ChatChanged {
                    messages: vec![],
                    ..Default::default()
                })),
            };
            events
                .publish(pb::PublishRequest { event: Some(event) })
                .await?;
        }
    }
    let deadline = Instant::now() + Duration::from_secs_f64(args.seconds);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..args.callers {
        let channel = channels[caller % channels.len()].clone();
        let failures = failures.clone();
        let target = args.target.clone();
        let chat_id = chat_of(caller);
        let reply_bytes = args.reply_bytes;
        tasks.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut request_bytes = 0u64;
            let mut events = EventServiceClient::new(channel.clone());
            let mut bare = BareServiceClient::new(channel);
            let mut n = 0u64;
            while Instant::now() < deadline {
                n += 1;
                let t = Instant::now();
                let ok = if target == "publish" {
                    let message = pb::Message {
                        id: format!("m{caller}-{n}"),
                        text: "A message.".into(),
                        is_user: true,
                        ..Default::default()
                    };
                    let event = pb::Event {
                        chat_id: chat_id.clone(),
                        kind: Some(pb::event::Kind::MessageSent(pb::MessageSent {
                            message: Some(message),
                        })),
                    };
                    let request = pb::PublishRequest { event: Some(event) };
                    request_bytes += request.encoded_len() as u64;
                    events.publish(request).await.is_ok()
                } else {
                    let request = bench_pb::BareRequest {
                        padding: vec![],
                        reply_bytes,
                    };
                    request_bytes += request.encoded_len() as u64;
                    bare.unary(request).await.is_ok()
                };
                if ok {
                    samples.push(t.elapsed());
                } else {
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            }
            (samples, request_bytes, n)
        }));
    }
    let (mut samples, mut request_bytes, mut requests) = (Vec::new(), 0u64, 0u64);
    for task in tasks {
        let (task_samples, task_bytes, task_requests) = task.await?;
        samples.extend(task_samples);
        request_bytes += task_bytes;
        requests += task_requests;
    }
    let summary = summarize(samples, started.elapsed());
    let failed = failures.load(Ordering::Relaxed);
    // The mean encoded request message (without the 5-byte gRPC prefix), so
    // that a comparison (bench/run.sh's Redis anchor) can send values of the
    // same size.
    println!(
        "{} failures={failed} addrs={} one_chat={} request_bytes={}",
        summary.line(&format!("unary target={}", args.target)),
        args.addr.len(),
        args.one_chat,
        request_bytes.checked_div(requests).unwrap_or(0)
    );
    if failed > 0 {
        return Err(format!("{failed} calls failed").into());
    }
    Ok(())
}

/// `fanout`: streams spread over chats (topics), refreshes (triggers) at a rate.
#[derive(clap::Args)]
pub struct Fanout {
    /// `recapd` (Subscribe, Refresh) or `bare` (Listen, Trigger).
    #[arg(long)]
    target: String,
    #[arg(long)]
    addr: String,
    #[arg(long, default_value_t = 10_000)]
    subscribers: usize,
    /// Chats (topics) the subscribers are spread over; recapd's must be prepared.
    #[arg(long, default_value_t = 1)]
    chats: usize,
    #[arg(long, default_value_t = 8)]
    connections: usize,
    /// Refreshes per second in all; with one chat, one every 1/rate s.
    #[arg(long, default_value_t = 5.0)]
    rate: f64,
    #[arg(long, default_value_t = 4.0)]
    seconds: f64,
    /// Broadcast size for the baseline (recapd's is its injection).
    #[arg(long, default_value_t = 2048)]
    payload_bytes: u32,
    /// Only open the streams, report, and hold them for this many seconds
    /// (for resident memory per idle subscriber).
    #[arg(long)]
    hold_idle: Option<f64>,
}

fn micros_since_epoch(ts: &prost_types::Timestamp) -> i64 {
    ts.seconds * 1_000_000 + i64::from(ts.nanos) / 1000
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

pub async fn fanout(args: Fanout) -> Result<(), Error> {
    let recapd = args.target == "recapd";
    let mut channels = Vec::new();
    for _ in 0..args.connections.max(1) {
        channels.push(connect(&args.addr).await?);
    }
    let measuring = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let (samples_tx, mut samples_rx) = tokio::sync::mpsc::unbounded_channel::<Vec<Duration>>();
    let stop = tokio_util::sync::CancellationToken::new();
    let opened = Arc::new(AtomicU64::new(0));
    for i in 0..args.subscribers {
        let channel = channels[i % channels.len()].clone();
        let chat = format!("bench-{}", i % args.chats.max(1));
        let measuring = measuring.clone();
        let received = received.clone();
        let samples_tx = samples_tx.clone();
        let stop = stop.clone();
        let opened = opened.clone();
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let result: Result<(), tonic::Status> = async {
                if recapd {
                    let mut stream = InjectionServiceClient::new(channel)
                        .subscribe(pb::SubscribeRequest { chat_ids: vec![chat], max_updates: 0 })
                        .await?
                        .into_inner();
                    opened.fetch_add(1, Ordering::Relaxed);
                    loop {
                        let next = tokio::select! { _ = stop.cancelled() => break, m = stream.message() => m? };
                        let Some(injection) = next else { break };
                        received.fetch_add(1, Ordering::Relaxed);
                        if measuring.load(Ordering::Relaxed)
                            && let Some(at) = &injection.refreshed_at
                        {
                            samples.push(Duration::from_micros((now_micros() - micros_since_epoch(at)).max(0) as u64));
                        }
                    }
                } else {
                    let mut stream = BareServiceClient::new(channel)
                        .listen(bench_pb::ListenRequest { topic: chat })
                        .await?
                        .into_inner();
                    opened.fetch_add(1, Ordering::Relaxed);
                    loop {
                        let next = tokio::select! { _ = stop.cancelled() => break, m = stream.message() => m? };
                        let Some(reply) = next else { break };
                        received.fetch_add(1, Ordering::Relaxed);
                        if measuring.load(Ordering::Relaxed)
                            && let Some(at) = &reply.sent_at
                        {
                            samples.push(Duration::from_micros((now_micros() - micros_since_epoch(at)).max(0) as u64));
                        }
                    }
                }
                Ok(())
            }
            .await;
            if let Err(status) = result {
                eprintln!("stream failed: {status}");
            }
            let _ = samples_tx.send(samples);
        });
    }
    drop(samples_tx);
    let deadline = Instant::now() + Duration::from_secs(60);
    while (opened.load(Ordering::Relaxed) as usize) < args.subscribers {
        if Instant::now() > deadline {
            return Err(format!(
                "only {} of {} streams opened",
                opened.load(Ordering::Relaxed),
                args.subscribers
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(hold) = args.hold_idle {
        println!(
            "fanout target={} idle_streams={}",
            args.target, args.subscribers
        );
        tokio::time::sleep(Duration::from_secs_f64(hold)).await;
        stop.cancel();
        return Ok(());
    }

    // Triggers get a connection of their own: on one shared with thousands
    // of open streams they would queue behind them in the client.
    let control = connect(&args.addr).await?;
    let injections = InjectionServiceClient::new(control.clone());
    let bare = BareServiceClient::new(control);
    let trigger = |n: usize| {
        let chat = format!("bench-{}", n % args.chats.max(1));
        let mut injections = injections.clone();
        let mut bare = bare.clone();
        let payload_bytes = args.payload_bytes;
        async move {
            if recapd {
                injections
                    .refresh(pb::RefreshRequest { chat_id: chat })
                    .await
                    .map(drop)
            } else {
                bare.trigger(bench_pb::TriggerRequest {
                    topic: chat,
                    payload_bytes,
                })
                .await
                .map(drop)
            }
        }
    };
    // Warm-up: every stream receives something before measuring.
    let before = received.load(Ordering::Relaxed);
    let mut warm_up = tokio::task::JoinSet::new();
    for n in 0..args.chats.max(1) {
        warm_up.spawn(trigger(n));
        if warm_up.len() >= 64 {
            warm_up
                .join_next()
                .await
                .ok_or("warm-up task missing")???;
        }
    }
    while let Some(result) = warm_up.join_next().await {
        result??;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while ((received.load(Ordering::Relaxed) - before) as usize) < args.subscribers {
        if Instant::now() > deadline {
            return Err("warm-up broadcast did not reach every stream".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;

    measuring.store(true, Ordering::SeqCst);
    let started = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / args.rate.max(0.001));
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut sent = 0usize;
    let mut pending = tokio::task::JoinSet::new();
    while started.elapsed().as_secs_f64() < args.seconds {
        ticker.tick().await;
        let call = trigger(sent);
        pending.spawn(call);
        sent += 1;
    }
    while let Some(result) = pending.join_next().await {
        result??;
    }
    let elapsed = started.elapsed();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    measuring.store(false, Ordering::SeqCst);
    stop.cancel();
    let mut samples = Vec::new();
    while let Some(batch) = samples_rx.recv().await {
        samples.extend(batch);
    }
    let expected_min = if args.chats <= 1 {
        sent * args.subscribers
    } else {
        0
    };
    let summary = summarize(samples, elapsed);
    println!(
        "{} triggers={sent} subscribers={} chats={}",
        summary.line(&format!("fanout target={}", args.target)),
        args.subscribers,
        args.chats
    );
    if args.chats <= 1 && summary.count < expected_min / 2 {
        return Err(format!("only {} of {} deliveries", summary.count, expected_min).into());
    }
    Ok(())
}
