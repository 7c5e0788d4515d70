//! Tests of [`super::JobFailure`]: each kind of endpoint error has its
//! category, and the id a client reads is the one logged with the cause.

use std::time::Duration;

use super::*;
use crate::domain::jobs::JobKind;
use crate::domain::time::UnixMicros;
use crate::telemetry::captured_log::logged;

fn retryable(kind: FailureKind, reason: &str) -> LlmError {
    LlmError::Retryable {
        kind,
        reason: reason.into(),
        retry_after: Some(Duration::from_secs(1)),
    }
}

fn job() -> (ChatKey, Job) {
    let chat = ChatKey::untenanted("c1");
    let job = Job::new(
        "job-7".into(),
        chat.clone(),
        JobKind::SceneRecap,
        "m3".into(),
        UnixMicros(1),
        false,
    );
    (chat, job)
}

#[test]
fn each_endpoint_error_kind_has_its_category() {
    let cases = [
        (
            FailureKind::Unreachable,
            "tcp connect error: Connection refused (os error 111)",
            "the LLM endpoint could not be reached",
        ),
        (
            FailureKind::Status(500),
            "HTTP 500 Internal Server Error: SECRET-UPSTREAM-BYTES",
            "the LLM endpoint answered 500",
        ),
        (
            FailureKind::TimedOut,
            "no answer within 120 s",
            "the LLM endpoint timed out",
        ),
        (
            FailureKind::NotJson,
            "the answer is not JSON: <html>",
            "the LLM endpoint's answer was not JSON",
        ),
        (
            FailureKind::Malformed,
            "the answer is an error: upstream overloaded",
            "the LLM endpoint's answer did not follow its API",
        ),
        (
            FailureKind::Empty,
            "the answer is empty",
            "the LLM endpoint's answer was empty",
        ),
        (
            FailureKind::TooLong,
            "the answer is over 8388608 bytes",
            "the LLM endpoint's answer was too long",
        ),
        (
            FailureKind::NoModel,
            "no model named",
            "no model named: set --llm-model or the chat's llm_model",
        ),
        (
            FailureKind::NotSent,
            "the request could not be built: builder error",
            "the request to the LLM endpoint could not be built",
        ),
    ];
    for (kind, reason, shown) in cases {
        let failure = JobFailure::of(Endpoint::Llm, &retryable(kind, reason));
        assert_eq!(failure.to_string(), shown, "{kind:?}");
    }
    let embeddings = JobFailure::of(
        Endpoint::Embeddings,
        &LlmError::Fatal {
            kind: FailureKind::Status(401),
            reason: "HTTP 401: bad key".into(),
        },
    );
    assert_eq!(
        embeddings.to_string(),
        "the embeddings endpoint answered 401"
    );
    assert_eq!(
        JobFailure::of(
            Endpoint::Embeddings,
            &retryable(
                FailureKind::Unreachable,
                "dns error: failed to lookup address"
            )
        )
        .to_string(),
        "the embeddings endpoint could not be reached"
    );
}

#[test]
fn the_client_reads_the_category_and_the_id_the_log_has_with_the_cause() {
    let (chat, job) = job();
    let cause = "tcp connect error: Connection refused (os error 111)";
    let (shown, log) = logged(|| {
        JobFailure::of(Endpoint::Llm, &retryable(FailureKind::Unreachable, cause))
            .report(&chat, &job, cause)
    });
    let id = shown
        .strip_prefix("the LLM endpoint could not be reached (error id ")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("not a category and an id: {shown}"));
    assert_eq!(id.len(), 16, "{shown}");
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{shown}");
    assert!(
        !shown.contains("os error") && !shown.contains("refused"),
        "{shown}"
    );
    let line = log
        .lines()
        .find(|line| line.contains(&format!("error_id={id}")))
        .unwrap_or_else(|| panic!("no log line with the id {id}: {log}"));
    assert!(line.contains(" WARN "), "{line}");
    assert!(line.contains("Connection refused (os error 111)"), "{line}");
    assert!(line.contains("job=job-7") && line.contains("c1"), "{line}");
    assert!(line.contains("category=\"unreachable\""), "{line}");
}

#[test]
fn every_report_has_its_own_id() {
    let (chat, job) = job();
    let ((a, b), _) = logged(|| {
        (
            JobFailure::AnswerNotJson.report(&chat, &job, "x"),
            JobFailure::AnswerNotJson.report(&chat, &job, "x"),
        )
    });
    assert_ne!(a, b);
    assert!(a.starts_with("the answer was not JSON (error id "), "{a}");
}

#[test]
fn a_cause_with_line_breaks_stays_on_its_line_in_the_log() {
    let (chat, job) = job();
    let (_, log) =
        logged(|| JobFailure::NotApplied.report(&chat, &job, "Mira\r\n2026-01-01 INFO fake line"));
    assert_eq!(log.lines().count(), 1, "{log}");
}

#[test]
fn a_reason_recapd_wrote_is_shown_and_cut_so_the_id_fits() {
    let (chat, job) = job();
    let reason = "the new running recap has 12 characters, fewer than 400 (x)".repeat(10);
    let (shown, _) =
        logged(|| JobFailure::AnswerRefused(reason.clone()).report(&chat, &job, &reason));
    assert!(
        shown.starts_with("the answer did not pass its checks: the new running recap has 12"),
        "{shown}"
    );
    assert!(shown.chars().count() <= 300, "{shown}");
    assert!(shown.contains("(error id "), "{shown}");
}
