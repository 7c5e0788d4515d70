//! `jobs`: recaps written by recapd, end to end, against a fake
//! OpenAI-compatible LLM served by this process (`--llm-listen`; recapd is
//! started by the script with `--llm-url` pointing at it).
//!
//! It opens `chats` chats of `per_chat` messages, asks for a message recap
//! of each message (GenerateMessageRecaps), and times until every job has
//! SUCCEEDED: each job is a claim commit, one request to the fake (which
//! answers after `latency_ms`), and the commit that applies the recap and
//! refreshes the chat. It prints the jobs per second, the ideal rate
//! `concurrency / latency` when the fake has a latency, their ratio, and
//! the most requests the fake saw in flight at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;

use crate::drive::connect;

type Error = Box<dyn std::error::Error>;

/// `jobs`: jobs through the whole pipeline with a fake LLM.
#[derive(clap::Args)]
pub struct Jobs {
    /// recapd (started with `--llm-url http://LLM_LISTEN/v1`).
    #[arg(long)]
    addr: String,
    /// Where this process serves the fake LLM.
    #[arg(long)]
    llm_listen: std::net::SocketAddr,
    /// The fake's answer time, ms (0: at once).
    #[arg(long, default_value_t = 0)]
    latency_ms: u64,
    /// recapd's --llm-concurrency, for the ideal rate.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    #[arg(long, default_value_t = 20)]
    chats: usize,
    /// Messages (and so jobs) per chat.
    #[arg(long, default_value_t = 10)]
    per_chat: usize,
    /// Chat id prefix (fresh per run on a shared store).
    #[arg(long, default_value = "jobs")]
    prefix: String,
}

/// What the fake counts.
#[derive(Default)]
struct Fake {
    latency: Duration,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    requests: AtomicUsize,
}

async fn complete(
    State(fake): State<Arc<Fake>>,
    Json(_body): Json<serde_json::Value>,
) -> Json<serde_json::Value> {
    let now = fake.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    fake.max_in_flight.fetch_max(now, Ordering::SeqCst);
    fake.requests.fetch_add(1, Ordering::SeqCst);
    if !fake.latency.is_zero() {
        tokio::time::sleep(fake.latency).await;
    }
    fake.in_flight.fetch_sub(1, Ordering::SeqCst);
    Json(serde_json::json!({
        "id": "bench",
        "object": "chat.completion",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": "{\"recap\": \"A short recap of the message.\"}"},
            "finish_reason": "stop"
        }],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    }))
}

pub async fn jobs(args: Jobs) -> Result<(), Error> {
    let fake = Arc::new(Fake {
        latency: Duration::from_millis(args.latency_ms),
        ..Fake::default()
    });
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind(args.llm_listen).await?;
    tokio::spawn(async move { axum::serve(listener, app).await });

    let channel = connect(&args.addr).await?;
    let mut events = EventServiceClient::new(channel.clone());
    let mut recaps = RecapServiceClient::new(channel);
    let chat_ids: Vec<String> = (0..args.chats)
        .map(|c| format!("{}-{c}", args.prefix))
        .collect();
    for chat in &chat_ids {
        let messages = (0..args.per_chat)
            .map(|i| pb::Message {
                id: format!("m{i}"),
                name: if i % 2 == 0 { "Ann" } else { "Bob" }.into(),
                is_user: i % 2 == 0,
                text: format!("Message {i} of the benchmark chat, a sentence or two long so the prompt is of a usual size."),
                ..Default::default()
            })
            .collect();
        events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: chat.clone(),
                    kind: Some(pb::event::Kind::ChatChanged(pb::ChatChanged {
                        messages,
                        ..Default::default()
                    })),
                }),
            })
            .await?;
    }
    let started = Instant::now();
    for chat in &chat_ids {
        recaps
            .generate_message_recaps(pb::GenerateMessageRecapsRequest {
                chat_id: chat.clone(),
                message_ids: (0..args.per_chat).map(|i| format!("m{i}")).collect(),
            })
            .await?;
    }
    let total = args.chats * args.per_chat;
    loop {
        let open = recaps
            .list_jobs(pb::ListJobsRequest {
                chat_id: String::new(),
                states: vec![pb::JobState::Pending as i32, pb::JobState::Running as i32],
                page_size: 1,
                page_token: String::new(),
            })
            .await?
            .into_inner();
        if open.jobs.is_empty() {
            break;
        }
        if started.elapsed() > Duration::from_secs(600) {
            return Err("jobs did not finish within 600 s".into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut succeeded = 0;
    for chat in &chat_ids {
        let page = recaps
            .list_jobs(pb::ListJobsRequest {
                chat_id: chat.clone(),
                states: vec![pb::JobState::Succeeded as i32],
                page_size: 1000,
                page_token: String::new(),
            })
            .await?
            .into_inner();
        succeeded += page.jobs.len();
    }
    if succeeded != total {
        return Err(format!("{succeeded} of {total} jobs succeeded").into());
    }
    let rate = total as f64 / elapsed;
    let max_in_flight = fake.max_in_flight.load(Ordering::SeqCst);
    let requests = fake.requests.load(Ordering::SeqCst);
    if args.latency_ms == 0 {
        println!(
            "jobs={total} seconds={elapsed:.3} jobs_per_s={rate:.1} requests={requests} max_in_flight={max_in_flight}"
        );
    } else {
        let ideal = args.concurrency as f64 * 1000.0 / args.latency_ms as f64;
        println!(
            "jobs={total} seconds={elapsed:.3} jobs_per_s={rate:.1} ideal_per_s={ideal:.1} ratio={:.2} requests={requests} max_in_flight={max_in_flight} concurrency={}",
            rate / ideal,
            args.concurrency
        );
    }
    if max_in_flight > args.concurrency {
        return Err(format!(
            "{max_in_flight} requests were in flight at once, over --llm-concurrency {}",
            args.concurrency
        )
        .into());
    }
    Ok(())
}
