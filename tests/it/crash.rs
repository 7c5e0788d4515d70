//! Crash safety: recapd is killed with SIGKILL at random moments while many
//! clients write; after each restart every acknowledged write is there
//! exactly once, nothing unacknowledged is half-applied (each chat is the
//! result of a prefix of its client's operations), and revisions never go
//! back. `RECAPD_CRASH_CYCLES` sets the number of cycles (CI: 10).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::process::Recapd;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use tonic::transport::Channel;

const CLIENTS: usize = 8;

/// What one client's chat has been told and what was acknowledged.
#[derive(Default, Clone)]
struct Ledger {
    /// Operations sent, in order; `acked` is how many got an OK.
    sent: usize,
    acked: usize,
    /// Highest revision an answer reported.
    revision: u64,
    /// Running-recap contents acknowledged, in order.
    recaps: Vec<String>,
}

/// Operation `k` of a chat: 3 steps per message.
///   k % 3 == 0: Publish message_sent m{k/3}
///   k % 3 == 1: SetMessageData m{k/3}.memory = "memory {k/3}"
///   k % 3 == 2: AddRunningRecap "recap {k/3}"
async fn run_client(channel: Channel, chat: String, ledger: Arc<Mutex<Ledger>>) {
    let mut events = EventServiceClient::new(channel.clone());
    let mut memory = MemoryServiceClient::new(channel);
    for k in 0.. {
        ledger.lock().unwrap().sent = k + 1;
        let n = k / 3;
        let result = match k % 3 {
            0 => {
                let message = pb::Message {
                    id: format!("m{n}"),
                    text: format!("message {n}"),
                    ..Default::default()
                };
                let event = pb::Event {
                    chat_id: chat.clone(),
                    kind: Some(pb::event::Kind::MessageSent(pb::MessageSent {
                        message: Some(message),
                    })),
                };
                events
                    .publish(pb::PublishRequest { event: Some(event) })
                    .await
                    .map(|r| Some(r.into_inner().revision))
            }
            1 => {
                let data = pb::MessageData {
                    memory: Some(format!("memory {n}")),
                    ..Default::default()
                };
                let request = pb::SetMessageDataRequest {
                    edit: false,
                    chat_id: chat.clone(),
                    message_id: format!("m{n}"),
                    data: Some(data),
                };
                memory.set_message_data(request).await.map(|_| None)
            }
            _ => {
                let request = pb::AddRunningRecapRequest {
                    chat_id: chat.clone(),
                    content: format!("recap {n}"),
                    ..Default::default()
                };
                memory.add_running_recap(request).await.map(|_| None)
            }
        };
        match result {
            Ok(revision) => {
                let mut ledger = ledger.lock().unwrap();
                ledger.acked = k + 1;
                if let Some(r) = revision {
                    ledger.revision = ledger.revision.max(r);
                }
                if k % 3 == 2 {
                    ledger.recaps.push(format!("recap {n}"));
                }
            }
            Err(_) => return, // the server is gone
        }
    }
}

/// Checks one chat against its ledger after a restart.
async fn verify(channel: Channel, chat: &str, ledger: &Ledger) {
    let mut injections = InjectionServiceClient::new(channel.clone());
    let mut memory = MemoryServiceClient::new(channel);
    if ledger.acked == 0 && ledger.sent <= 1 {
        return; // the chat may or may not exist
    }
    let lines = injections
        .get_inclusion(pb::GetInclusionRequest {
            chat_id: chat.into(),
        })
        .await
        .expect("an acknowledged chat exists")
        .into_inner()
        .messages;
    // Messages: m0, m1, ... with no gap (a prefix), at least every acked one,
    // at most one more (the unacknowledged last operation may have landed).
    let ids: Vec<String> = lines.iter().map(|l| l.message_id.clone()).collect();
    let expected: Vec<String> = (0..ids.len()).map(|n| format!("m{n}")).collect();
    assert_eq!(
        ids, expected,
        "{chat}: messages are a gap-free prefix, each once"
    );
    let acked_messages = ledger.acked.div_ceil(3);
    let sent_messages = ledger.sent.div_ceil(3);
    assert!(
        ids.len() >= acked_messages && ids.len() <= sent_messages,
        "{chat}: {} messages, acked {acked_messages}, sent {sent_messages}",
        ids.len()
    );
    // Memories: set on every message whose SetMessageData was acked; a
    // memory on a later message only if that operation was sent.
    for (n, id) in ids.iter().enumerate() {
        let data = memory
            .get_message_data(pb::GetMessageDataRequest {
                swipe_id: None,
                chat_id: chat.into(),
                message_id: id.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        let op = 3 * n + 1;
        if op < ledger.acked {
            assert_eq!(
                data.memory.as_deref(),
                Some(format!("memory {n}").as_str()),
                "{chat}: acked memory of {id}"
            );
        } else if op >= ledger.sent {
            assert_eq!(data.memory, None, "{chat}: memory of {id} was never sent");
        }
    }
    // Running recaps: the acked ones in order, plus at most the one in flight.
    let versions = memory
        .list_running_recaps(pb::ListRunningRecapsRequest {
            chat_id: chat.into(),
        })
        .await
        .unwrap()
        .into_inner()
        .versions;
    let contents: Vec<String> = versions.iter().map(|v| v.content.clone()).collect();
    assert!(
        contents.starts_with(&ledger.recaps),
        "{chat}: acked recaps {:?} in {contents:?}",
        ledger.recaps
    );
    assert!(
        contents.len() <= ledger.recaps.len() + 1,
        "{chat}: {contents:?} vs {:?}",
        ledger.recaps
    );
    let numbers: Vec<u32> = versions.iter().map(|v| v.version).collect();
    assert_eq!(
        numbers,
        (0..numbers.len() as u32).collect::<Vec<_>>(),
        "{chat}: versions once each"
    );
    // Revisions never go back.
    let injection = injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: chat.into(),
            key: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        injection.revision >= ledger.revision,
        "{chat}: revision {} went back from {}",
        injection.revision,
        ledger.revision
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_write_survives_kill_9() {
    let cycles: usize = std::env::var("RECAPD_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let mut all: HashMap<String, Ledger> = HashMap::new();
    let mut seed = 0x9e37_79b9_u64;
    for cycle in 0..cycles {
        let mut server = Recapd::start(dir.path());
        let channel = server.channel().await;
        // Everything from earlier cycles is still there.
        for (chat, ledger) in &all {
            verify(channel.clone(), chat, ledger).await;
        }
        let mut ledgers = Vec::new();
        for client in 0..CLIENTS {
            let chat = format!("crash-{cycle}-{client}");
            let ledger = Arc::new(Mutex::new(Ledger::default()));
            tokio::spawn(run_client(channel.clone(), chat.clone(), ledger.clone()));
            ledgers.push((chat, ledger));
        }
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let run_ms = 150 + (seed >> 33) % 600;
        tokio::time::sleep(Duration::from_millis(run_ms)).await;
        server.kill9();
        // Let every client notice the server is gone before reading its ledger.
        tokio::time::sleep(Duration::from_millis(100)).await;
        for (chat, ledger) in ledgers {
            all.insert(chat, ledger.lock().unwrap().clone());
        }
        let acked: usize = all.values().map(|l| l.acked).sum();
        eprintln!(
            "cycle {cycle}: killed after {run_ms} ms; {acked} operations acknowledged so far"
        );
    }
    let mut server = Recapd::start(dir.path());
    let channel = server.channel().await;
    for (chat, ledger) in &all {
        verify(channel.clone(), chat, ledger).await;
    }
    assert!(
        all.values().map(|l| l.acked).sum::<usize>() > 0,
        "the clients got something acknowledged"
    );
    server.kill9();
}
