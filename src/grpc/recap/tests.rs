//! RecapService called as a trait: what each RPC refuses before the
//! engine, and what ListJobs and WatchJobs answer over an engine whose
//! jobs are set by the test.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio_stream::StreamExt;
use tokio_util::sync::CancellationToken;
use tonic::{Code, Request, Status};

use super::RecapApi;
use crate::domain::Limits;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::jobs::{Job, JobKind, JobState};
use crate::domain::time::UnixMicros;
use crate::engine::{Engine, JobsStore};
use crate::grpc::pb;
use crate::grpc::pb::recap_service_server::RecapService;
use crate::store::Stores;

struct Fixture {
    api: RecapApi,
    engine: Engine,
    store: Arc<JobsStore>,
    shutdown: CancellationToken,
    _dir: tempfile::TempDir,
}

async fn fixture(limits: Limits) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(JobsStore::open(dir.path()).await);
    let engine = Engine::new(
        Stores::single(store.clone()),
        crate::engine::EngineOptions {
            limits,
            ..crate::engine::EngineOptions::default()
        },
    )
    .await
    .unwrap();
    let shutdown = CancellationToken::new();
    Fixture {
        api: RecapApi::new(engine.clone(), shutdown.clone()),
        engine,
        store,
        shutdown,
        _dir: dir,
    }
}

/// A request made by `tenant`, as the auth layer marks it.
fn as_tenant<T>(tenant: &str, message: T) -> Request<T> {
    let mut request = Request::new(message);
    request.extensions_mut().insert(Tenant(tenant.to_owned()));
    request
}

/// Asserts INVALID_ARGUMENT naming `field`.
fn invalid<T>(result: Result<T, Status>, field: &str) {
    let Err(status) = result else {
        panic!("{field}: accepted");
    };
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status.message().contains(field),
        "{:?} should name {field}",
        status.message()
    );
}

/// A job of `tenant`'s chat `chat`, queued at `created_us`.
fn job(tenant: &str, chat: &str, id: &str, created_us: i64) -> Job {
    Job::new(
        id.into(),
        ChatKey {
            tenant: Tenant(tenant.into()),
            id: chat.into(),
        },
        JobKind::MessageRecap,
        "m".into(),
        UnixMicros(created_us),
        false,
    )
}

fn list(chat_id: &str, states: Vec<i32>, page_size: u32, page_token: &str) -> pb::ListJobsRequest {
    pb::ListJobsRequest {
        chat_id: chat_id.into(),
        states,
        page_size,
        page_token: page_token.into(),
    }
}

#[tokio::test]
async fn bad_ids_are_refused_by_field_before_the_engine() {
    let f = fixture(Limits::default()).await;
    let long = "x".repeat(crate::domain::ids::MAX_ID_BYTES + 1);
    invalid(
        f.api
            .generate_scene_recap(Request::new(pb::GenerateSceneRecapRequest {
                chat_id: String::new(),
                message_id: "m".into(),
            }))
            .await,
        "chat_id",
    );
    invalid(
        f.api
            .generate_scene_recap(Request::new(pb::GenerateSceneRecapRequest {
                chat_id: "c".into(),
                message_id: String::new(),
            }))
            .await,
        "message_id",
    );
    invalid(
        f.api
            .detect_scene_breaks(Request::new(pb::DetectSceneBreaksRequest {
                chat_id: "a\nb".into(),
            }))
            .await,
        "chat_id",
    );
    invalid(
        f.api
            .generate_running_recap(Request::new(pb::GenerateRunningRecapRequest {
                chat_id: "c".into(),
                message_id: long.clone(),
            }))
            .await,
        "message_id",
    );
    invalid(
        f.api
            .generate_lore(Request::new(pb::GenerateLoreRequest {
                chat_id: String::new(),
                message_id: "m1".into(),
            }))
            .await,
        "chat_id",
    );
    invalid(
        f.api
            .generate_lore(Request::new(pb::GenerateLoreRequest {
                chat_id: "c".into(),
                message_id: long.clone(),
            }))
            .await,
        "message_id",
    );
    invalid(
        f.api
            .generate_message_recaps(Request::new(pb::GenerateMessageRecapsRequest {
                chat_id: "c".into(),
                message_ids: vec!["a".into(), "a".into(), String::new()],
            }))
            .await,
        "message_ids[2]",
    );
    invalid(
        f.api
            .generate_message_recaps(Request::new(pb::GenerateMessageRecapsRequest {
                chat_id: "c".into(),
                message_ids: (0..1001).map(|i| i.to_string()).collect(),
            }))
            .await,
        "message_ids",
    );
    invalid(
        f.api
            .cancel_job(Request::new(pb::CancelJobRequest {
                job_id: String::new(),
            }))
            .await,
        "job_id",
    );
    invalid(
        f.api
            .retry_job(Request::new(pb::RetryJobRequest { job_id: long }))
            .await,
        "job_id",
    );
    invalid(
        f.api
            .watch_jobs(Request::new(pb::WatchJobsRequest {
                chat_ids: vec!["a".into(), "\u{0}".into()],
            }))
            .await,
        "chat_ids[1]",
    );
    invalid(
        f.api
            .watch_jobs(Request::new(pb::WatchJobsRequest {
                chat_ids: (0..1001).map(|i| i.to_string()).collect(),
            }))
            .await,
        "chat_ids",
    );
}

#[tokio::test]
async fn list_jobs_refuses_a_bad_chat_state_page_size_or_token() {
    let f = fixture(Limits::default()).await;
    let running = pb::JobState::Running as i32;
    invalid(
        f.api
            .list_jobs(Request::new(list("\u{7}", vec![], 0, "")))
            .await,
        "chat_id",
    );
    invalid(
        f.api
            .list_jobs(Request::new(list("", vec![running, 0], 0, "")))
            .await,
        "states[1]",
    );
    invalid(
        f.api
            .list_jobs(Request::new(list("", vec![99], 0, "")))
            .await,
        "states[0]",
    );
    invalid(
        f.api
            .list_jobs(Request::new(list("", vec![], 1001, "")))
            .await,
        "page_size",
    );
    invalid(
        f.api
            .list_jobs(Request::new(list("", vec![], 0, "not a token")))
            .await,
        "page_token",
    );
    assert!(f.store.queries().is_empty(), "nothing reached the store");
}

#[tokio::test]
async fn list_jobs_pages_newest_first_through_its_tokens() {
    let f = fixture(Limits::default()).await;
    for i in 0..5 {
        f.store.put(job("", "c", &format!("j{i}"), 1_000 + i));
    }
    f.store.put(job("other", "c", "theirs", 2_000));
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let page = f
            .api
            .list_jobs(Request::new(list("", vec![], 2, &token)))
            .await
            .unwrap()
            .into_inner();
        pages.push(
            page.jobs
                .iter()
                .map(|j| j.job_id.clone())
                .collect::<Vec<_>>(),
        );
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(pages, [vec!["j4", "j3"], vec!["j2", "j1"], vec!["j0"]]);
    let queries = f.store.queries();
    assert!(
        queries.iter().all(|q| q.limit == 3),
        "one more than the page"
    );
    assert_eq!(queries[1].after, Some((UnixMicros(1_003), "j3".to_owned())));
    // A page that ends exactly at the last job has no next page.
    let all = f
        .api
        .list_jobs(Request::new(list("c", vec![], 5, "")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((all.jobs.len(), all.next_page_token.as_str()), (5, ""));
    // 0 means 100.
    f.api
        .list_jobs(Request::new(list("", vec![], 0, "")))
        .await
        .unwrap();
    assert_eq!(f.store.queries().last().unwrap().limit, 101);
}

#[tokio::test]
async fn list_jobs_reads_the_callers_tenant_chat_and_states_only() {
    let f = fixture(Limits::default()).await;
    f.store.put(job("", "c", "mine", 1));
    let mut theirs = job("t2", "c", "theirs", 2);
    theirs.state = JobState::Failed;
    f.store.put(theirs);
    f.store.put(job("t2", "d", "other-chat", 3));
    let failed = pb::JobState::Failed as i32;
    let answer = f
        .api
        .list_jobs(as_tenant("t2", list("c", vec![failed], 0, "")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(answer.jobs.len(), 1);
    assert_eq!(
        (
            answer.jobs[0].job_id.as_str(),
            answer.jobs[0].chat_id.as_str()
        ),
        ("theirs", "c")
    );
    assert_eq!(answer.jobs[0].state, failed);
    let query = f.store.queries().pop().unwrap();
    assert_eq!(query.tenant, Tenant("t2".into()));
    assert_eq!(query.chat_id.as_deref(), Some("c"));
    assert_eq!(query.states, [JobState::Failed]);
}

#[tokio::test]
async fn a_store_failure_passes_through_as_unavailable() {
    let f = fixture(Limits::default()).await;
    f.store.fail_reads.store(true, Ordering::SeqCst);
    let status = f
        .api
        .list_jobs(Request::new(list("", vec![], 0, "")))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::Unavailable);
}

#[tokio::test]
async fn watch_jobs_streams_the_callers_changes_until_shutdown() {
    let f = fixture(Limits::default()).await;
    let mut stream = f
        .api
        .watch_jobs(as_tenant(
            "t2",
            pb::WatchJobsRequest {
                chat_ids: vec!["c".into(), "c".into()],
            },
        ))
        .await
        .unwrap()
        .into_inner();
    f.engine
        .jobs()
        .publish_job_change(job("", "c", "not-mine", 1));
    let mut mine = job("t2", "c", "mine", 1_500_000);
    f.engine.jobs().publish_job_change(mine.clone());
    mine.state = JobState::Running;
    mine.attempts = 1;
    f.engine.jobs().publish_job_change(mine);
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(
        (
            first.job_id.as_str(),
            first.state,
            first.created_at.unwrap().seconds
        ),
        ("mine", pb::JobState::Pending as i32, 1)
    );
    let second = stream.next().await.unwrap().unwrap();
    assert_eq!(
        (second.state, second.attempts),
        (pb::JobState::Running as i32, 1)
    );
    f.shutdown.cancel();
    assert!(stream.next().await.is_none(), "ends at shutdown");
}

#[tokio::test]
async fn watch_jobs_past_the_subscriber_limit_is_resource_exhausted() {
    let f = fixture(Limits {
        max_subscribers: 1,
        ..Limits::default()
    })
    .await;
    let _open = f
        .api
        .watch_jobs(Request::new(pb::WatchJobsRequest { chat_ids: vec![] }))
        .await
        .unwrap();
    let status = f
        .api
        .watch_jobs(Request::new(pb::WatchJobsRequest { chat_ids: vec![] }))
        .await
        .err()
        .expect("refused");
    assert_eq!(status.code(), Code::ResourceExhausted);
}
