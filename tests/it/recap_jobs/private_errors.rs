//! A job's `last_error` keeps the server's insides private (finding 6 of
//! the hostile-input review): it names a fixed category and an error id,
//! never the OS's, the resolver's or the endpoint's words, and the log has
//! the cause under the same id.

use recapd::grpc::pb;

use super::*;
use crate::common::fake_llm::{FakeLlm, Reply, SeenRequest};
use crate::common::logs::Logs;

/// What the upstream sends that must never reach a client.
const UPSTREAM: &str = "SECRET-UPSTREAM-BYTES";

/// The one job of `chat` once it FAILED, after one message recap was asked
/// of a server whose LLM is at `url` (one attempt per job).
async fn failed_job(url: &str, chat: &str) -> pb::Job {
    let dir = tempfile::tempdir().expect("temp dir");
    let (mut server, mut recaps) = start_with_llm(dir.path(), url, |config| {
        config.llm.llm_max_attempts = 1;
    })
    .await;
    open_chat(&mut server, chat, story_chat(4, &[])).await;
    recaps
        .generate_message_recaps(pb::GenerateMessageRecapsRequest {
            chat_id: chat.into(),
            message_ids: vec!["m1".into()],
        })
        .await
        .expect("queued");
    let jobs = wait_for_jobs(&mut recaps, chat, "the job to fail", all_finished).await;
    server.stop().await;
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(state(&jobs[0]), pb::JobState::Failed, "{:?}", jobs[0]);
    jobs[0].clone()
}

/// The error id at the end of `last_error`, after exactly `category`.
fn id_after(last_error: &str, category: &str) -> String {
    let id = last_error
        .strip_prefix(category)
        .and_then(|rest| rest.strip_prefix(" (error id "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not {category:?} and an id: {last_error:?}"));
    assert_eq!(id.len(), 16, "{last_error}");
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{last_error}");
    id.to_owned()
}

/// The warn line logged under `id`, holding `cause`.
fn assert_cause_logged(logs: &Logs, id: &str, cause: &str) {
    let lines = logs.with_id(id);
    assert!(
        lines
            .iter()
            .any(|line| line.contains(" WARN ") && line.contains(cause)),
        "no WARN line with error_id={id} and {cause:?}: {lines:#?}\n{}",
        logs.text()
    );
}

/// Finding 6: an LLM endpoint that refuses connections.
#[tokio::test]
async fn a_refused_connection_is_told_as_unreachable_with_an_id_not_the_os_error() {
    let logs = Logs::capture();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = closed.local_addr().expect("address").port();
    drop(closed);
    let job = failed_job(&format!("http://127.0.0.1:{port}/v1"), "refused").await;
    let id = id_after(&job.last_error, "the LLM endpoint could not be reached");
    for private in [
        "os error",
        "tcp",
        "Connection refused",
        "connect",
        &port.to_string(),
    ] {
        assert!(
            !job.last_error.contains(private) && !job.result.contains(private),
            "{private:?} shown: {job:?}"
        );
    }
    assert_cause_logged(&logs, &id, "Connection refused");
}

/// Finding 6: an endpoint's error body.
#[tokio::test]
async fn a_server_error_is_told_by_its_status_without_its_body() {
    let logs = Logs::capture();
    let llm = FakeLlm::start(|_: &SeenRequest| Reply::Status {
        code: 500,
        retry_after: None,
        body: format!(r#"{{"error":{{"message":"{UPSTREAM} at /srv/llm/worker.py"}}}}"#),
    })
    .await;
    let job = failed_job(&llm.url(), "status").await;
    let id = id_after(&job.last_error, "the LLM endpoint answered 500");
    assert!(!job.last_error.contains(UPSTREAM), "{job:?}");
    assert!(!job.result.contains(UPSTREAM), "{job:?}");
    assert_cause_logged(&logs, &id, UPSTREAM);
}

/// Finding 6: a bad answer's first bytes.
#[tokio::test]
async fn an_answer_that_is_not_json_is_told_so_without_its_bytes() {
    let logs = Logs::capture();
    let llm = FakeLlm::start(|_: &SeenRequest| {
        Reply::Answer(format!("I will not write JSON. {UPSTREAM}"))
    })
    .await;
    let job = failed_job(&llm.url(), "prose").await;
    let id = id_after(&job.last_error, "the answer was not JSON");
    assert!(!job.last_error.contains(UPSTREAM), "{job:?}");
    assert_cause_logged(&logs, &id, UPSTREAM);

    // The endpoint's own reply not JSON (an HTML error page with 200).
    let llm =
        FakeLlm::start(|_: &SeenRequest| Reply::Raw(format!("<html>{UPSTREAM}</html>"))).await;
    let job = failed_job(&llm.url(), "html").await;
    let id = id_after(&job.last_error, "the LLM endpoint's answer was not JSON");
    assert!(!job.last_error.contains(UPSTREAM), "{job:?}");
    assert_cause_logged(&logs, &id, UPSTREAM);
}

/// An answer whose JSON is not the schema's object shows no byte of it.
#[tokio::test]
async fn an_answer_off_its_schema_is_told_so_without_its_bytes() {
    let llm =
        FakeLlm::start(|_: &SeenRequest| Reply::Answer(format!(r#"{{"note": "{UPSTREAM}"}}"#)))
            .await;
    let job = failed_job(&llm.url(), "offschema").await;
    id_after(&job.last_error, "the answer did not follow the schema");
    assert!(!job.last_error.contains(UPSTREAM), "{job:?}");
}
