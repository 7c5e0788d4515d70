//! Helpers for the replica tests: configs of several recapd sharing one
//! PostgreSQL schema, and a TCP proxy in front of PostgreSQL that a test
//! can cut (every connection dropped, new ones refused) and restore, to
//! play a database outage for one replica or all.

use std::hash::{Hash, Hasher};
use std::net::SocketAddr;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use recapd::config::{Config, StoreUrl};

use super::{test_config, test_database_url};
use recapd::grpc::pb;
use recapd::grpc::pb::event_service_client::EventServiceClient;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::{Duration, Instant};
use tonic::transport::Channel;

use super::{Server, message_sent};

/// Waits until `server` sees the global debounce another replica set.
pub async fn wait_for_debounce(server: &mut Server, ms: i64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.global_settings().await.debounce_ms != Some(ms) {
        assert!(
            Instant::now() < deadline,
            "the global change never reached this replica"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until `reader` holds `chat` at least at the revision `writer`
/// holds it (notifications are asynchronous).
pub async fn catch_up(reader: &mut Server, writer: &mut Server, chat: &str) {
    let target = writer.injection(chat).await.revision;
    let deadline = Instant::now() + Duration::from_secs(5);
    while reader.injection(chat).await.revision < target {
        assert!(
            Instant::now() < deadline,
            "a replica never caught up with revision {target} of {chat}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Publishes `count` message events `{prefix}0...` to `chat`, 10 ms apart,
/// through an outage; returns the acknowledged ids and how many calls were
/// refused (each must be UNAVAILABLE).
pub async fn publish_through_outage(
    mut events: EventServiceClient<Channel>,
    chat: &'static str,
    prefix: &'static str,
    count: usize,
) -> (Vec<String>, usize) {
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for i in 0..count {
        let id = format!("{prefix}{i}");
        let sent = events
            .publish(pb::PublishRequest {
                event: Some(pb::Event {
                    chat_id: chat.into(),
                    kind: Some(message_sent(&id, "under load")),
                }),
            })
            .await;
        match sent {
            Ok(_) => acknowledged.push(id),
            Err(status) => {
                assert_eq!(status.code(), tonic::Code::Unavailable, "{status:?}");
                refused += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (acknowledged, refused)
}

/// A fresh schema name for one test (`rt_` and a hash of `dir`, so the test
/// script's clean-up finds it).
pub fn fresh_schema(dir: &Path) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    ("replicas", dir).hash(&mut hasher);
    format!("rt_{:016x}", hasher.finish())
}

/// A replica's config: its own data directory (unused) and port, the shared
/// database `url` and `schema`, a 1 s resync.
pub fn replica_config(dir: &Path, url: &str, schema: &str) -> Config {
    let mut config = test_config(dir);
    config.store = Some(StoreUrl(url.to_owned()));
    config.store_schema = schema.to_owned();
    config.resync_interval = std::time::Duration::from_secs(1);
    config
}

/// The test database's host and port.
pub fn database_addr() -> SocketAddr {
    let config = tokio_postgres::Config::from_str(&test_database_url()).expect("a test URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
        _ => "127.0.0.1".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let host = if host == "localhost" {
        "127.0.0.1".to_owned()
    } else {
        host
    };
    format!("{host}:{port}")
        .parse()
        .expect("an IP host in RECAPD_TEST_DATABASE_URL")
}

/// The test database URL, reached through `proxy`.
pub fn url_through(proxy: SocketAddr) -> String {
    let config = tokio_postgres::Config::from_str(&test_database_url()).expect("a test URL");
    let user = config.get_user().unwrap_or("root");
    let db = config.get_dbname().unwrap_or("test");
    format!("postgres://{user}@{proxy}/{db}")
}

/// A TCP proxy to PostgreSQL that can be cut and restored.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    up: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// Starts forwarding to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let up = Arc::new(AtomicBool::new(true));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = {
            let up = up.clone();
            let links = links.clone();
            tokio::spawn(async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    if !up.load(Ordering::SeqCst) {
                        continue; // dropped: refused
                    }
                    let link = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(target).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    links.lock().unwrap().push(link);
                }
            })
        };
        Proxy {
            addr,
            up,
            links,
            accept,
        }
    }

    /// The database goes away: open connections drop, new ones are refused.
    pub fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    /// The database is back.
    pub fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
