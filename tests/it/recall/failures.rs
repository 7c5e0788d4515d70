//! The embeddings endpoint failing: server errors and rate limits are
//! retried until the index is complete; a refusal (400) fails the job
//! with the reason, recapd leaves it failed, and RetryJob runs it again.

use recapd::grpc::pb;
use tonic::Code;

use super::*;
use crate::common::fake_embeddings::FakeEmbeddings;

#[tokio::test]
async fn server_errors_and_rate_limits_are_retried_until_every_passage_has_its_vector() {
    for code in [500, 429] {
        let fake = FakeEmbeddings::start().await;
        fake.fail_next(3, code);
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server = start_indexing(dir.path(), &fake, 32).await;
        let mut recaps = recaps_client(&server);
        open(&mut server, "story", story(), recall_on()).await;
        let jobs = wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
        let index = index_jobs(&jobs);
        assert_eq!(index.len(), 1, "{code}: the same job retried: {jobs:#?}");
        assert_eq!(
            fake.request_count(),
            4,
            "{code}: three refused, the fourth answered"
        );
        assert_eq!(stored_vectors(dir.path(), "story").await, 16, "{code}");
        let found = recall(&server, "story", FISH_QUERY).await;
        assert!(
            found.hits[0].vector_score.is_some(),
            "{code}: {:?}",
            found.hits[0]
        );
        server.stop().await;
    }
}

#[tokio::test]
async fn a_refusal_fails_the_job_with_its_reason_and_retry_job_completes_it() {
    let fake = FakeEmbeddings::start().await;
    fake.fail_next(1, 400);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut server = start_indexing(dir.path(), &fake, 32).await;
    let mut recaps = recaps_client(&server);
    open(&mut server, "story", story(), recall_on()).await;
    let failed = eventually("the refused index job to fail", || {
        let mut recaps = recaps.clone();
        async move {
            let jobs = jobs_of(&mut recaps, "story").await;
            index_jobs(&jobs)
                .into_iter()
                .find(|j| state(j) == pb::JobState::Failed)
        }
    })
    .await;
    assert_eq!(failed.attempts, 1, "a 400 is not retried: {failed:?}");
    assert!(failed.last_error.contains("400"), "{failed:?}");

    // The job stays failed until RetryJob: recapd does not queue another
    // index job for the chat on its own (against a permanent refusal,
    // such a job would fail at once, and the next, and so on).
    let retried = recaps
        .retry_job(pb::RetryJobRequest {
            job_id: failed.job_id.clone(),
        })
        .await
        .expect("RetryJob of the failed index job (FAILED_PRECONDITION: another index job was queued meanwhile)")
        .into_inner();
    assert_eq!(retried.attempts, 0);
    let jobs = wait_for_index(&mut recaps, "story", pb::JobState::Succeeded).await;
    let index = index_jobs(&jobs);
    assert_eq!(
        index.iter().map(|j| j.job_id.as_str()).collect::<Vec<_>>(),
        [failed.job_id.as_str()],
        "the failed job itself ran again, and no other: {jobs:#?}"
    );
    assert_eq!(fake.request_count(), 2, "one refused, one answered");
    assert_eq!(stored_vectors(dir.path(), "story").await, 16);
    let again = recaps
        .retry_job(pb::RetryJobRequest {
            job_id: failed.job_id.clone(),
        })
        .await
        .expect_err("a succeeded job cannot be retried");
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    server.stop().await;
}
