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

impl From<DomainError> for Status {
    fn from(error: DomainError) -> Self {
        EngineError::from(error).into()
    }
}

#[cfg(test)]
mod tests;
