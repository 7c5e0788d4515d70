use super::*;
use crate::telemetry::captured_log::logged;

fn conflict() -> EngineError {
    StoreError::Conflict(crate::domain::ids::ClaimKey::Chat(
        crate::domain::ids::ChatKey::untenanted("c"),
    ))
    .into()
}

#[test]
fn caller_caused_errors_have_their_code_and_keep_their_message() {
    let cases = [
        (
            EngineError::from(DomainError::invalid("depth", "too deep")),
            Code::InvalidArgument,
        ),
        (
            DomainError::NotFound("chat \"x\"".into()).into(),
            Code::NotFound,
        ),
        (
            DomainError::AlreadyExists("message \"m\"".into()).into(),
            Code::AlreadyExists,
        ),
        (
            DomainError::FailedPrecondition("no --llm-url is set".into()).into(),
            Code::FailedPrecondition,
        ),
        (
            DomainError::ResourceExhausted("--max-jobs-per-chat".into()).into(),
            Code::ResourceExhausted,
        ),
        (StoreError::Fenced("job-1".into()).into(), Code::Aborted),
        (
            StoreError::LorebookChanged("Eldoria".into()).into(),
            Code::Aborted,
        ),
        (conflict(), Code::Aborted),
    ];
    for (error, expected) in cases {
        let text = error.to_string();
        let (status, log) = logged(|| Status::from(error));
        assert_eq!(status.code(), expected);
        assert_eq!(status.message(), text);
        assert_eq!(error_id(&status), None, "{status:?}");
        assert_eq!(log, "", "a caller's mistake logs nothing here");
    }
}

#[test]
fn server_failures_get_a_fixed_message_and_an_id_and_log_the_cause() {
    let cases = [
        (
            StoreError::database(
                "committing",
                "connection to server at \"10.0.0.7\", port 5432 failed: FATAL: password authentication failed for user \"recapd\"",
            )
            .into(),
            Code::Unavailable,
            STORE_UNAVAILABLE,
            "password authentication failed",
        ),
        (
            StoreError::Closed.into(),
            Code::Unavailable,
            SHUTTING_DOWN,
            "storage is closed",
        ),
        (
            StoreError::corrupt("chat row of /var/lib/recapd/recapd.sqlite3", "bad json at line 1").into(),
            Code::Internal,
            STORED_DATA_UNREADABLE,
            "/var/lib/recapd/recapd.sqlite3",
        ),
        (
            StoreError::Panicked("index out of bounds: the len is 3 but the index is 7".into()).into(),
            Code::Internal,
            INTERNAL_ERROR,
            "index out of bounds",
        ),
        (
            EngineError::Panicked("chat state missing after load at src/engine/slot.rs:80".into()),
            Code::Internal,
            INTERNAL_ERROR,
            "src/engine/slot.rs",
        ),
    ];
    for (error, code, fixed, cause) in cases {
        let (status, log) = logged(|| Status::from(error));
        assert_eq!(status.code(), code);
        let id = error_id(&status)
            .expect("a server failure has an id")
            .to_owned();
        assert_eq!(id.len(), 16);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        assert_eq!(status.message(), format!("{fixed} (error id {id})"));
        assert!(!status.message().contains(cause), "{status:?}");
        // One line, with the id, the code and the whole cause.
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 1, "{log}");
        assert!(lines[0].contains(&format!("error_id={id}")), "{log}");
        assert!(lines[0].contains(cause), "{log}");
        assert!(lines[0].contains(code_name(code)), "{log}");
        let level = if code == Code::Internal {
            "ERROR"
        } else {
            "WARN"
        };
        assert!(lines[0].contains(level), "{log}");
    }
}

#[test]
fn each_failure_gets_its_own_id() {
    let ids: std::collections::HashSet<String> = (0..100)
        .map(|_| {
            let status = Status::from(EngineError::from(StoreError::Closed));
            error_id(&status).expect("an id").to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 100);
}

#[test]
fn the_cause_chain_is_logged_whole() {
    let inner = std::io::Error::other("certificate expired at /etc/recapd/ca.pem");
    let error = EngineError::from(StoreError::database("connecting", inner));
    let (status, log) = logged(|| Status::from(error));
    assert!(
        log.contains("storage failed: connecting: certificate expired"),
        "{log}"
    );
    assert!(!status.message().contains("certificate"), "{status:?}");
    assert!(!status.message().contains("/etc"), "{status:?}");
}
