//! What a client is told when the server fails, and what the operator finds
//! in the log: for INTERNAL and UNAVAILABLE a fixed sentence and an error id
//! (in the message and in the `recapd-error-id` metadata), never the cause;
//! the cause in the log under the same id. Faults of each kind, over a real
//! socket: a store that fails its commits, a commit that panics, a closed
//! store, PostgreSQL gone (its connections cut through a proxy), a stored
//! row damaged behind the server's back (on the store the tests run on); and the
//! statuses a caller causes, which keep their helpful messages.

mod faulty;

use std::time::Duration;

use recapd::grpc::observe::REQUEST_TOO_LARGE_MESSAGE;
use recapd::grpc::pb;
use recapd::grpc::status::{
    ERROR_ID_KEY, INTERNAL_ERROR, SHUTTING_DOWN, STORE_UNAVAILABLE, STORED_DATA_UNREADABLE,
    error_id,
};
use tonic::{Code, Status};

use crate::common::logs::Logs;
use crate::common::replicas::{Proxy, database_addr, fresh_schema, replica_config, url_through};
use crate::common::*;

/// A database error as PostgreSQL's driver words one, with what a client
/// must never see: an address, a user, TLS words, an SQL state.
const DRIVER_WORDS: &str = "db error: FATAL: password authentication failed for user \"recapd\" \
     at 10.0.0.7:5432 (SQLSTATE 28P01); TLS handshake: invalid peer certificate: UnknownIssuer";

/// Words of causes (SQL, drivers, TLS, paths, panics) that no status may carry.
const INTERNAL_WORDS: [&str; 12] = [
    "db error",
    "SQLSTATE",
    "FATAL",
    "TLS",
    "certificate",
    "10.0.0.7",
    "/var/lib",
    "src/",
    "panicked",
    "index out of bounds",
    "storage failed",
    "sqlite",
];

/// Checks that `status` is a server failure told as it should be: `code`,
/// the message `fixed` followed by its error id, the same id in the
/// metadata, nothing of the cause. Returns the id.
fn assert_withheld(status: &Status, code: Code, fixed: &str) -> String {
    assert_eq!(status.code(), code, "{status:?}");
    let id = error_id(status)
        .unwrap_or_else(|| panic!("no {ERROR_ID_KEY} in {status:?}"))
        .to_owned();
    assert_eq!(id.len(), 16, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_eq!(status.message(), format!("{fixed} (error id {id})"));
    for words in INTERNAL_WORDS {
        assert!(
            !status
                .message()
                .to_lowercase()
                .contains(&words.to_lowercase()),
            "{words:?} reached the client: {status:?}"
        );
    }
    id
}

/// Checks that the log has the cause of failure `id` (a line with the id
/// and `cause`) and the failed RPC's own line (`method`, the same id).
fn assert_logged(logs: &Logs, id: &str, cause: &str, method: &str) {
    let lines = logs.with_id(id);
    let causes: Vec<&String> = lines.iter().filter(|l| l.contains("cause=")).collect();
    assert_eq!(causes.len(), 1, "the cause is logged once: {lines:#?}");
    assert!(causes[0].contains(cause), "{cause:?} not in {causes:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("rpc failed") && l.contains(method)),
        "no rpc line of {method} with the id: {}",
        logs.text()
    );
}

#[tokio::test]
async fn a_failing_store_is_unavailable_with_an_id_and_the_cause_in_the_log() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, store) = faulty::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    store.fail_commits(DRIVER_WORDS);
    let status = server
        .publish("c", message_sent("m2", "again"))
        .await
        .unwrap_err();
    let id = assert_withheld(&status, Code::Unavailable, STORE_UNAVAILABLE);
    assert_logged(
        &logs,
        &id,
        "storage failed: committing to /var/lib/recapd/recapd.sqlite3: db error: FATAL: password authentication failed",
        "recap.v1.EventService/Publish",
    );
    // Another failure, another id.
    let again = server
        .publish("c", message_sent("m3", "again"))
        .await
        .unwrap_err();
    assert_ne!(
        assert_withheld(&again, Code::Unavailable, STORE_UNAVAILABLE),
        id
    );
    // The store back, the server goes on.
    store.heal();
    server
        .publish("c", message_sent("m4", "healed"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_panicking_commit_is_internal_with_an_id_and_the_panic_in_the_log() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, store) = faulty::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    store.panic_next_commit(
        "index out of bounds: the len is 3 but the index is 7 (src/store/rows.rs:42)",
    );
    let status = server
        .memory
        .add_running_recap(pb::AddRunningRecapRequest {
            chat_id: "c".into(),
            content: "the story".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    let id = assert_withheld(&status, Code::Internal, INTERNAL_ERROR);
    assert_logged(
        &logs,
        &id,
        "index out of bounds: the len is 3 but the index is 7 (src/store/rows.rs:42)",
        "recap.v1.MemoryService/AddRunningRecap",
    );
    assert!(
        logs.with_id(&id).iter().any(|l| l.contains("ERROR")),
        "a panic is logged as an error: {:?}",
        logs.with_id(&id)
    );
    // Only that call failed.
    add_recap(&mut server, "c", "the story").await;
}

#[tokio::test]
async fn a_closed_store_says_the_server_is_shutting_down() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let (mut server, store) = faulty::start(dir.path()).await;
    recapd::store::ChatStore::close(&*store).await;
    let status = server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap_err();
    let id = assert_withheld(&status, Code::Unavailable, SHUTTING_DOWN);
    assert_logged(
        &logs,
        &id,
        "storage is closed",
        "recap.v1.EventService/Publish",
    );
}

#[tokio::test]
async fn a_dead_postgresql_is_unavailable_with_an_id_and_the_cause_in_the_log() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let schema = fresh_schema(dir.path());
    let proxy = Proxy::start(database_addr()).await;
    let config = replica_config(dir.path(), &url_through(proxy.addr), &schema);
    let mut server = Server::start_with(config).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    proxy.cut();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut n = 2;
    let status = loop {
        match server
            .publish("c", message_sent(&format!("m{n}"), "x"))
            .await
        {
            Err(status) => break status,
            Ok(_) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "PostgreSQL cut, yet every publish succeeds"
                );
                n += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    let id = assert_withheld(&status, Code::Unavailable, STORE_UNAVAILABLE);
    assert_logged(
        &logs,
        &id,
        "storage failed",
        "recap.v1.EventService/Publish",
    );
    proxy.restore();
    server.stop().await;
}

/// Overwrites the stored body of chat `chat` (default tenant) with text
/// that is not a chat, in the store the tests run on.
async fn damage_chat_row(data_dir: &std::path::Path, chat: &str) {
    const DAMAGED: &str = "{\"messages\": not json";
    match crate::common::config::test_postgres(data_dir) {
        Some((url, schema)) => {
            let (client, connection) = tokio_postgres::connect(&url.0, tokio_postgres::NoTls)
                .await
                .expect("the test database answers");
            tokio::spawn(connection);
            let sql = format!("UPDATE \"{schema}\".chats SET body = $1 WHERE chat_id = $2");
            let changed = client.execute(&sql, &[&DAMAGED, &chat]).await.unwrap();
            assert_eq!(changed, 1);
        }
        None => {
            let db = rusqlite::Connection::open(data_dir.join("recapd.sqlite3")).unwrap();
            let changed = db
                .execute(
                    "UPDATE chats SET body = ?1 WHERE chat_id = ?2",
                    rusqlite::params![DAMAGED, chat],
                )
                .unwrap();
            assert_eq!(changed, 1);
        }
    }
}

#[tokio::test]
async fn a_damaged_row_is_internal_with_an_id_and_the_row_in_the_log() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    server.stop().await;
    damage_chat_row(dir.path(), "c").await;
    let mut server = Server::start(dir.path()).await;
    let status = server
        .injections
        .get_injection(pb::GetInjectionRequest {
            chat_id: "c".into(),
            key: None,
        })
        .await
        .unwrap_err();
    let id = assert_withheld(&status, Code::Internal, STORED_DATA_UNREADABLE);
    assert_logged(
        &logs,
        &id,
        "stored data is unreadable",
        "recap.v1.InjectionService/GetInjection",
    );
    server.stop().await;
}

#[tokio::test]
async fn statuses_the_caller_caused_keep_their_message_and_have_no_id() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    server
        .publish("c", chat_changed(vec![message("m1", "hello")]))
        .await
        .unwrap();
    let mut refused = Vec::new();
    // INVALID_ARGUMENT: an id with a control character.
    refused.push(
        server
            .injections
            .get_injection(pb::GetInjectionRequest {
                chat_id: "a\u{0}b".into(),
                key: None,
            })
            .await
            .unwrap_err(),
    );
    // NOT_FOUND: a running-recap version that does not exist.
    refused.push(
        server
            .memory
            .select_running_recap(pb::SelectRunningRecapRequest {
                chat_id: "c".into(),
                version: 99,
            })
            .await
            .unwrap_err(),
    );
    // ALREADY_EXISTS: a message id twice.
    refused.push(
        server
            .publish(
                "d",
                chat_changed(vec![message("m", "a"), message("m", "b")]),
            )
            .await
            .unwrap_err(),
    );
    // FAILED_PRECONDITION: a recap asked of a server with no LLM.
    refused.push(
        server
            .recaps
            .generate_running_recap(pb::GenerateRunningRecapRequest {
                chat_id: "c".into(),
                message_id: "m1".into(),
            })
            .await
            .unwrap_err(),
    );
    // RESOURCE_EXHAUSTED: a request over --max-request-bytes.
    refused.push(
        server
            .publish("c", message_sent("big", &"x".repeat(5 << 20)))
            .await
            .unwrap_err(),
    );
    let expected = [
        (Code::InvalidArgument, "chat_id"),
        (Code::NotFound, "running recap version 99"),
        (Code::AlreadyExists, "\"m\""),
        (Code::FailedPrecondition, "--llm-url"),
        (Code::ResourceExhausted, REQUEST_TOO_LARGE_MESSAGE),
    ];
    for (status, (code, words)) in refused.iter().zip(expected) {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(
            status.message().contains(words),
            "{words:?} not in {status:?}"
        );
        assert!(!status.message().contains("error id"), "{status:?}");
        assert_eq!(error_id(status), None, "{status:?}");
    }
    assert!(!logs.text().contains("error_id"), "{}", logs.text());
    server.stop().await;
}

#[tokio::test]
async fn an_export_cut_by_shutdown_is_unavailable_with_an_id() {
    let logs = Logs::capture();
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path()).await;
    // About 12 MB of chat: more than the export's chunks in flight.
    let text = "x".repeat(1000 * 1000);
    server
        .publish("c", chat_changed(vec![message("m0", "start")]))
        .await
        .unwrap();
    for i in 1..=12 {
        server
            .publish("c", message_sent(&format!("m{i}"), &text))
            .await
            .unwrap();
    }
    let mut chunks = server
        .memory
        .export_chat_stream(pb::ExportChatStreamRequest {
            chat_id: "c".into(),
        })
        .await
        .unwrap()
        .into_inner();
    chunks.message().await.unwrap().expect("a first chunk");
    let app = server.app.take().unwrap();
    let stopping = tokio::spawn(app.shutdown());
    let end = loop {
        match chunks.message().await {
            Ok(Some(_)) => {}
            other => break other,
        }
    };
    let status = end.expect_err("an export cut short ends with an error");
    // The connection may also be reset first (UNKNOWN, nothing of recapd's
    // in it); the end recapd sends is a fixed message with an id.
    if status.code() == Code::Unavailable {
        let id = assert_withheld(
            &status,
            Code::Unavailable,
            "the server is shutting down; the export is incomplete",
        );
        let lines = logs.with_id(&id);
        assert!(
            lines
                .iter()
                .any(|l| l.contains("cause=") && l.contains("export of chat \"c\"")),
            "{lines:#?}"
        );
    } else {
        assert_eq!(status.code(), Code::Unknown, "{status:?}");
        assert_eq!(error_id(&status), None, "{status:?}");
    }
    tokio::time::timeout(Duration::from_secs(20), stopping)
        .await
        .expect("the server stops")
        .unwrap();
}
