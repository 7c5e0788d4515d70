//! The one table from errors to gRPC status codes.

use tonic::{Code, Status};

use crate::domain::DomainError;
use crate::engine::EngineError;
use crate::store::StoreError;

/// The status code for each error.
fn code(error: &EngineError) -> Code {
    match error {
        EngineError::Domain(DomainError::Invalid { .. }) => Code::InvalidArgument,
        EngineError::Domain(DomainError::NotFound(_)) => Code::NotFound,
        EngineError::Domain(DomainError::AlreadyExists(_)) => Code::AlreadyExists,
        EngineError::Domain(DomainError::ResourceExhausted(_)) => Code::ResourceExhausted,
        EngineError::Domain(DomainError::FailedPrecondition(_)) => Code::FailedPrecondition,
        EngineError::Store(StoreError::Database { .. } | StoreError::Closed) => Code::Unavailable,
        EngineError::Store(StoreError::Corrupt { .. }) => Code::Internal,
        // A bug, not an outage: retrying would meet it again.
        EngineError::Store(StoreError::Panicked(_)) | EngineError::Panicked(_) => Code::Internal,
        // Still losing to other replicas after several fresh attempts.
        EngineError::Store(StoreError::Conflict(_)) => Code::Aborted,
        // A job's runner lost it to another (or to a cancellation) first.
        EngineError::Store(StoreError::Fenced(_)) => Code::Aborted,
    }
}

impl From<EngineError> for Status {
    fn from(error: EngineError) -> Self {
        // Every failed RPC is logged once, by grpc::observe.
        Status::new(code(&error), error.to_string())
    }
}

/// The status of a domain refusal, by the same table. A function, not a
/// `From` impl: the domain is a crate of its own and so is tonic, so the
/// orphan rule forbids the impl (`.map_err(domain_status)?` where `?` did).
pub fn domain_status(error: DomainError) -> Status {
    EngineError::from(error).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_has_its_code_and_keeps_its_message() {
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
                StoreError::database("committing", "disk full").into(),
                Code::Unavailable,
            ),
            (StoreError::Closed.into(), Code::Unavailable),
            (
                StoreError::corrupt("chat row", "bad json").into(),
                Code::Internal,
            ),
            (
                StoreError::Panicked("index out of bounds".into()).into(),
                Code::Internal,
            ),
            (
                EngineError::Panicked("chat state missing after load".into()),
                Code::Internal,
            ),
            (
                StoreError::Conflict(crate::domain::ids::ClaimKey::Chat(
                    crate::domain::ids::ChatKey::untenanted("c"),
                ))
                .into(),
                Code::Aborted,
            ),
        ];
        for (error, expected) in cases {
            let text = error.to_string();
            let status = Status::from(error);
            assert_eq!(status.code(), expected);
            assert_eq!(status.message(), text);
        }
    }
}
