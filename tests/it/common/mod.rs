//! Shared harness for the integration tests: a real recapd on an ephemeral
//! port over a temporary data directory, and clients connected to it.

use std::path::Path;
use std::time::Duration;

use recapd::app::App;
use recapd::config::Config;
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use recapd::grpc::pb::injection_service_client::InjectionServiceClient;
use recapd::grpc::pb::memory_service_client::MemoryServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use recapd::grpc::pb::settings_service_client::SettingsServiceClient;
use tonic::transport::Channel;

pub mod api;
pub mod config;
pub mod fake_chats;
pub mod fake_embeddings;
pub mod fake_llm;
pub mod logs;
pub mod otlp_collector;
pub mod process;
pub mod replicas;
pub mod settings_doc;
pub mod unary_only;
pub mod wire;

pub use config::{on_postgres, test_config, test_database_url};

/// A loopback port nothing listens on right now, for a server that takes
/// its port as an argument (a child recapd, a proxy).
///
/// Ports come from below the kernel's ephemeral range, and each call in
/// this process gets a different one. The OS's pick for port 0 would be
/// from that range, which every in-process server on port 0 and every
/// outgoing connection also draws from: between this call and the child's
/// bind, another test could take the port, and the child's clients would
/// talk to that test's server. Where the ephemeral range leaves no room
/// below it, the OS's pick it is.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOWEST: u32 = 10_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    let span = ephemeral_low.saturating_sub(LOWEST);
    if span >= 1_000 {
        // Test processes running side by side start at places far apart:
        // their ids are often consecutive, and starts one port apart made
        // two processes pick the same port for children started at the
        // same moment (before either bound it), so a test could talk to
        // another test's server. The id is scattered by a multiplicative
        // hash (Knuth's constant, 2^32 / golden ratio).
        let start = std::process::id().wrapping_mul(2_654_435_761) % span;
        for _ in 0..span {
            let offset = NEXT.fetch_add(1, Ordering::Relaxed);
            let port = u16::try_from(LOWEST + (start + offset) % span)
                .expect("below the ephemeral range, so below 65536");
            if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds an ephemeral port");
    listener
        .local_addr()
        .expect("a bound socket has an address")
        .port()
}

/// A running server with one client per service.
pub struct Server {
    /// The in-process server; `None` for clients of a child process.
    pub app: Option<App>,
    pub events: EventServiceClient<Channel>,
    pub memory: MemoryServiceClient<Channel>,
    pub settings: SettingsServiceClient<Channel>,
    pub injections: InjectionServiceClient<Channel>,
    pub recaps: RecapServiceClient<Channel>,
    pub channel: Channel,
}

impl Server {
    /// Starts recapd on `data_dir`.
    pub async fn start(data_dir: &Path) -> Server {
        Server::start_with(test_config(data_dir)).await
    }

    /// Starts recapd with `config`.
    pub async fn start_with(config: Config) -> Server {
        let app = App::build(config).await.expect("recapd starts");
        let channel = Channel::from_shared(format!("http://{}", app.local_addr()))
            .expect("valid uri")
            .connect()
            .await
            .expect("connects");
        let mut server = Server::clients(channel);
        server.app = Some(app);
        server
    }

    /// Clients of a server running elsewhere (a child process).
    pub fn clients(channel: Channel) -> Server {
        Server {
            app: None,
            events: EventServiceClient::new(channel.clone()),
            memory: MemoryServiceClient::new(channel.clone()),
            settings: SettingsServiceClient::new(channel.clone()),
            injections: InjectionServiceClient::new(channel.clone()),
            recaps: RecapServiceClient::new(channel.clone()),
            channel,
        }
    }

    /// Stops the server and waits for it.
    pub async fn stop(self) {
        let Server {
            app,
            channel,
            events,
            memory,
            settings,
            injections,
            recaps,
        } = self;
        drop((channel, events, memory, settings, injections, recaps));
        if let Some(app) = app {
            app.shutdown().await;
        }
    }

    /// Publishes one event; returns the revision.
    pub async fn publish(
        &mut self,
        chat_id: &str,
        kind: pb::event::Kind,
    ) -> Result<u64, tonic::Status> {
        self.events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: chat_id.into(),
                    kind: Some(kind),
                }),
            })
            .await
            .map(|r| r.into_inner().revision)
    }

    /// Sets the global debounce (0 makes every trigger immediate).
    pub async fn set_global_debounce(&mut self, ms: i64) {
        self.update_settings(
            "",
            pb::Settings {
                debounce_ms: Some(ms),
                ..Default::default()
            },
        )
        .await;
    }

    /// Sets the fields present in `settings` on `chat` (empty: the global
    /// settings); panics if the server refuses them.
    pub async fn update_settings(&mut self, chat: &str, settings: pb::Settings) {
        self.settings
            .update_settings(pb::UpdateSettingsRequest {
                chat_id: chat.into(),
                settings: Some(settings),
                clear: vec![],
            })
            .await
            .expect("settings update");
    }

    /// The global settings.
    pub async fn global_settings(&mut self) -> pb::Settings {
        self.settings
            .get_settings(pb::GetSettingsRequest {
                chat_id: String::new(),
            })
            .await
            .expect("get settings")
            .into_inner()
    }

    /// The chat's current injection.
    pub async fn injection(&mut self, chat_id: &str) -> pb::Injection {
        self.injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: chat_id.into(),
                key: None,
            })
            .await
            .expect("get injection")
            .into_inner()
    }
}

/// A message with one swipe.
pub fn message(id: &str, text: &str) -> pb::Message {
    pb::Message {
        id: id.into(),
        text: text.into(),
        name: "Alice".into(),
        ..Default::default()
    }
}

pub fn chat_changed(messages: Vec<pb::Message>) -> pb::event::Kind {
    pb::event::Kind::ChatChanged(pb::ChatChanged {
        messages,
        ..Default::default()
    })
}

pub fn message_sent(id: &str, text: &str) -> pb::event::Kind {
    let mut m = message(id, text);
    m.is_user = true;
    pb::event::Kind::MessageSent(pb::MessageSent { message: Some(m) })
}

pub fn message_received(id: &str, text: &str) -> pb::event::Kind {
    pb::event::Kind::MessageReceived(pb::MessageReceived {
        message: Some(message(id, text)),
    })
}

pub fn message_deleted(id: &str) -> pb::event::Kind {
    pb::event::Kind::MessageDeleted(pb::MessageDeleted {
        message_id: id.into(),
    })
}

pub fn refresh_requested() -> pb::event::Kind {
    pb::event::Kind::RefreshRequested(pb::RefreshRequested {})
}

/// Adds a running-recap version with `content`.
pub async fn add_recap(
    server: &mut Server,
    chat_id: &str,
    content: &str,
) -> pb::RunningRecapVersion {
    server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: chat_id.into(),
            content: content.into(),
            ..Default::default()
        })
        .await
        .expect("add recap")
        .into_inner()
}

/// Receives the next stream item within `secs` seconds.
pub async fn next_within(
    stream: &mut tonic::Streaming<pb::Injection>,
    secs: u64,
) -> Option<pb::Injection> {
    match tokio::time::timeout(Duration::from_secs(secs), stream.message()).await {
        Ok(Ok(item)) => item,
        Ok(Err(status)) => panic!("stream failed: {status}"),
        Err(_) => None,
    }
}

/// The trigger of an injection.
pub fn trigger(injection: &pb::Injection) -> pb::RefreshTrigger {
    pb::RefreshTrigger::try_from(injection.trigger).expect("known trigger")
}
