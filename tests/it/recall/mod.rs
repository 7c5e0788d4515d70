//! Recall (issue 31) over a real socket: the recall tier
//! (`auto_recap_recall`), RecallService, and the index jobs that fetch
//! passages' vectors from an embeddings endpoint (the fake of
//! `common::fake_embeddings`), as a client sees them.
//!
//! Every chat here tells one [`story`]: an early passage about a brass key
//! ([`KEY_PASSAGE`], m1) that the last two messages (the tier's query)
//! come back to, one other early passage sharing a word with them
//! ([`BUCKLE_PASSAGE`], m3), and passages sharing none. The recent window
//! (the last 10 messages) is m6..=m15.

use std::time::Duration;

use recapd::grpc::pb;
use recapd::grpc::pb::recall_service_client::RecallServiceClient;
use recapd::grpc::pb::recap_service_client::RecapServiceClient;
use tonic::transport::Channel;

use crate::common::fake_embeddings::FakeEmbeddings;
use crate::common::{self, Server};
pub use crate::recap_jobs::{all_finished, jobs_of, kind, state};

mod background;
mod branches;
mod duplicates;
mod erasure;
mod failures;
mod indexed;
mod indexing;
mod keyword;
mod requests;
mod restart;
mod scope;
mod stale;

/// The recall tier's key.
pub const KEY: &str = "auto_recap_recall";
/// The embedding model the servers here ask for.
pub const MODEL: &str = "fake-embed";
/// The story's early passage the tier's query is about (m1, said by Bob).
pub const KEY_PASSAGE: &str = "The old lighthouse keeper gave us a brass key shaped like a fish.";
/// The other early passage sharing a word ("brass") with the query (m3).
pub const BUCKLE_PASSAGE: &str = "I polished the brass buckle of my belt until it shone.";
/// A query only [`KEY_PASSAGE`] answers, by keyword and by vector.
pub const FISH_QUERY: &str = "a key shaped like a fish";
/// The recall tier's default template, before `{{recall}}`.
pub const HEADER: &str = "Earlier in this story (recalled passages, best match first):\n";

/// The story's texts, m0..=m15; even ids are Ann's, odd ids Bob's.
pub const STORY: [&str; 16] = [
    "We sailed out of the harbor before sunrise.",
    KEY_PASSAGE,
    "Gulls followed our boat for hours.",
    BUCKLE_PASSAGE,
    "By noon the wind had turned cold and sharp.",
    "We ate bread and smoked cheese below deck.",
    "A storm gathered over the western islands.",
    "Rain hammered the sails all evening.",
    "Marta fell asleep wrapped in wool blankets.",
    "At dawn the sea was calm again.",
    "We spotted green cliffs on the horizon.",
    "The village there had a crooked stone church.",
    "Children sold apples near the pier.",
    "An innkeeper offered us rooms for two silver coins.",
    "Behind the inn stood a locked iron door covered in rust.",
    "Maybe the brass key from the lighthouse keeper opens it.",
];

/// One line of a chat: `m<index>`, Ann's when even, Bob's when odd.
pub fn line(index: usize, text: &str) -> pb::Message {
    let ann = index.is_multiple_of(2);
    pb::Message {
        id: format!("m{index}"),
        text: text.into(),
        name: if ann { "Ann" } else { "Bob" }.into(),
        is_user: ann,
        ..Default::default()
    }
}

/// The story's messages.
pub fn story() -> Vec<pb::Message> {
    STORY
        .iter()
        .enumerate()
        .map(|(i, text)| line(i, text))
        .collect()
}

/// How a message passage reads in the tier: after its speaker's name.
pub fn said(index: usize) -> String {
    let name = if index.is_multiple_of(2) {
        "Ann"
    } else {
        "Bob"
    };
    format!("{name}: {}", STORY[index])
}

/// `recall_enabled` on, nothing else.
pub fn recall_on() -> pb::Settings {
    pb::Settings {
        recall_enabled: Some(true),
        ..Default::default()
    }
}

/// A keyword-only server (no embeddings endpoint) on a fresh directory,
/// every trigger refreshing at once.
pub async fn start_keyword() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = Server::start(dir.path()).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

/// A config using `fake` for recall's vectors, `batch` passages a request,
/// a 10 ms back-off.
pub fn indexing_config(
    dir: &std::path::Path,
    fake: &FakeEmbeddings,
    batch: u64,
) -> recapd::config::Config {
    let mut config = common::test_config(dir);
    with_embeddings(&mut config, fake, batch);
    config
}

/// Points `config` at `fake` (see [`indexing_config`]).
pub fn with_embeddings(config: &mut recapd::config::Config, fake: &FakeEmbeddings, batch: u64) {
    config.embedding.embedding_url = Some(fake.url());
    config.embedding.embedding_model = MODEL.into();
    config.embedding.embedding_batch_size = batch;
    config.embedding.embedding_backoff_base = Duration::from_millis(10);
    config.embedding.embedding_timeout = Duration::from_secs(20);
}

/// An in-process server using `fake` (see [`indexing_config`]), every
/// trigger refreshing at once.
pub async fn start_indexing(dir: &std::path::Path, fake: &FakeEmbeddings, batch: u64) -> Server {
    let mut server = Server::start_with(indexing_config(dir, fake, batch)).await;
    server.set_global_debounce(0).await;
    server
}

/// Opens `chat` with `messages`, then applies `settings` to it.
pub async fn open(
    server: &mut Server,
    chat: &str,
    messages: Vec<pb::Message>,
    settings: pb::Settings,
) {
    server
        .publish(chat, common::chat_changed(messages))
        .await
        .expect("chat opened");
    server.update_settings(chat, settings).await;
}

/// The recall tier of `chat`.
pub async fn try_tier(server: &mut Server, chat: &str) -> Result<pb::Injection, tonic::Status> {
    server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: chat.into(),
            key: Some(KEY.into()),
        })
        .await
        .map(|r| r.into_inner())
}

/// The recall tier of `chat`; panics on an error.
pub async fn tier(server: &mut Server, chat: &str) -> pb::Injection {
    try_tier(server, chat).await.expect("the recall tier")
}

/// A RecallService client of `server`.
pub fn recall_client(server: &Server) -> RecallServiceClient<Channel> {
    RecallServiceClient::new(server.channel.clone())
}

/// A RecapService client of `server` (jobs).
pub fn recaps_client(server: &Server) -> RecapServiceClient<Channel> {
    RecapServiceClient::new(server.channel.clone())
}

/// Recall on `chat` for `query`, 10 hits, the chat's minimum score.
pub async fn try_recall(
    server: &Server,
    chat: &str,
    query: &str,
) -> Result<pb::RecallResponse, tonic::Status> {
    recall_client(server)
        .recall(pb::RecallRequest {
            chat_id: chat.into(),
            query: query.into(),
            limit: 0,
            min_score: None,
        })
        .await
        .map(|r| r.into_inner())
}

/// [`try_recall`]; panics on an error.
pub async fn recall(server: &Server, chat: &str, query: &str) -> pb::RecallResponse {
    try_recall(server, chat, query).await.expect("recall")
}

/// The hits' texts, best first.
pub fn texts(response: &pb::RecallResponse) -> Vec<&str> {
    response.hits.iter().map(|h| h.text.as_str()).collect()
}

/// The chat's index jobs, newest first.
pub fn index_jobs(jobs: &[pb::Job]) -> Vec<pb::Job> {
    jobs.iter()
        .filter(|j| kind(j) == pb::JobKind::Index)
        .cloned()
        .collect()
}

/// Waits (up to 20 s) until the chat has index jobs and every one is
/// terminal, and its newest ended `expected`; returns the chat's jobs.
pub async fn wait_for_index(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    expected: pb::JobState,
) -> Vec<pb::Job> {
    wait_for_index_within(recaps, chat, expected, Duration::from_secs(20)).await
}

/// [`wait_for_index`], waiting up to `within`.
pub async fn wait_for_index_within(
    recaps: &mut RecapServiceClient<Channel>,
    chat: &str,
    expected: pb::JobState,
    within: Duration,
) -> Vec<pb::Job> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let jobs = jobs_of(recaps, chat).await;
        let index = index_jobs(&jobs);
        if !index.is_empty() && all_finished(&index) {
            assert_eq!(
                state(&index[0]),
                expected,
                "the newest index job of {chat}: {index:#?}"
            );
            return jobs;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the index jobs of {chat} never finished within {within:?}: {jobs:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `probe` (up to 20 s) until it gives `Some`.
pub async fn eventually<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(found) = probe().await {
            return found;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The next item of `stream` (within 20 s) that `wanted` accepts; the
/// others are skipped.
pub async fn next_push(
    stream: &mut tonic::Streaming<pb::Injection>,
    wanted: impl Fn(&pb::Injection) -> bool,
) -> pb::Injection {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match tokio::time::timeout(left, stream.message()).await {
            Ok(Ok(Some(item))) if wanted(&item) => return item,
            Ok(Ok(Some(_))) => {}
            other => panic!("no push as wanted within 20 s: {other:?}"),
        }
    }
}

/// The rows of `recall_vectors` the store of `data_dir` holds for `chat`
/// (any tenant).
pub async fn stored_vectors(data_dir: &std::path::Path, chat: &str) -> i64 {
    match common::config::test_postgres(data_dir) {
        Some((url, schema)) => {
            let (client, connection) = tokio_postgres::connect(&url.0, tokio_postgres::NoTls)
                .await
                .expect("the test database answers");
            tokio::spawn(connection);
            let sql =
                format!("SELECT count(*) FROM \"{schema}\".recall_vectors WHERE chat_id = $1");
            client
                .query_one(&sql, &[&chat])
                .await
                .expect("recall_vectors is readable")
                .get(0)
        }
        None => {
            let db = rusqlite::Connection::open(data_dir.join("recapd.sqlite3"))
                .expect("the data directory's database opens");
            db.busy_timeout(Duration::from_secs(5))
                .expect("a busy timeout");
            db.query_row(
                "SELECT count(*) FROM recall_vectors WHERE chat_id = ?1",
                rusqlite::params![chat],
                |row| row.get(0),
            )
            .expect("recall_vectors is readable")
        }
    }
}
