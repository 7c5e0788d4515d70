//! The one table from errors to gRPC status codes, and what a client is
//! told about each.
//!
//! A status the caller caused (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,
//! FAILED_PRECONDITION, RESOURCE_EXHAUSTED, ABORTED) carries the error's own
//! message: it names what in the request was wrong, in the caller's terms
//! (a field, a chat or job id the caller sent, a limit's flag). A failure of
//! the server's own (INTERNAL, UNAVAILABLE) carries a fixed sentence and an
//! [`ErrorId`], in the message and in the [`ERROR_ID_KEY`] metadata entry;
//! its cause (the whole error chain: a database's, a driver's or a TLS
//! library's words, a file path, a panic's message) is logged once, with
//! the same id in the `error_id` field, and never sent. A client of one
//! tenant so learns nothing of the server's insides, and an operator given
//! the id finds the cause with one grep.

use std::fmt;

use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

use crate::domain::DomainError;
use crate::engine::EngineError;
pub use crate::error_id::ErrorId;
use crate::grpc::observe::code_name;
use crate::store::StoreError;
use crate::telemetry::spans;
use crate::tls_common::with_causes;

/// The metadata key (sent in the trailers, or the headers of a
/// trailers-only answer) of a server failure's [`ErrorId`].
pub const ERROR_ID_KEY: &str = "recapd-error-id";

/// UNAVAILABLE: the store failed (a database error, a lost connection).
pub const STORE_UNAVAILABLE: &str = "the store is unavailable; retry later";
/// UNAVAILABLE: the store is closed because the server is stopping.
pub const SHUTTING_DOWN: &str = "the server is shutting down; retry later";
/// INTERNAL: a stored row could not be read back (or a value written).
pub const STORED_DATA_UNREADABLE: &str = "stored data could not be read";
/// INTERNAL: the server's own code failed (a panic).
pub const INTERNAL_ERROR: &str = "internal error";
/// UNAVAILABLE: the embeddings endpoint did not answer for a Recall query.
pub const EMBEDDINGS_UNAVAILABLE: &str =
    "the embeddings endpoint did not answer; retry later, or recall by keyword with an empty query";

/// What the client is told about an error.
enum Told<'a> {
    /// The message of this error the caller caused (a domain rule it broke,
    /// or a write that lost to another replica or runner): it names what
    /// in the request was wrong, and the caller may fix it.
    Own(&'a dyn fmt::Display),
    /// A fixed sentence and an error id; the cause goes to the log only.
    Withheld(&'static str),
}

/// The status code of each error, and what its client is told.
fn table(error: &EngineError) -> (Code, Told<'_>) {
    use Told::{Own, Withheld};
    match error {
        EngineError::Domain(domain) => {
            let code = match domain {
                DomainError::Invalid { .. } => Code::InvalidArgument,
                DomainError::NotFound(_) => Code::NotFound,
                DomainError::AlreadyExists(_) => Code::AlreadyExists,
                DomainError::ResourceExhausted(_) => Code::ResourceExhausted,
                DomainError::FailedPrecondition(_) => Code::FailedPrecondition,
            };
            (code, Own(domain))
        }
        EngineError::Store(StoreError::Database { .. }) => {
            (Code::Unavailable, Withheld(STORE_UNAVAILABLE))
        }
        EngineError::Store(StoreError::Closed) => (Code::Unavailable, Withheld(SHUTTING_DOWN)),
        // The endpoint's reason may name its URL or internals: the log has it.
        EngineError::EmbeddingsUnavailable(_) => {
            (Code::Unavailable, Withheld(EMBEDDINGS_UNAVAILABLE))
        }
        EngineError::Store(StoreError::Corrupt { .. }) => {
            (Code::Internal, Withheld(STORED_DATA_UNREADABLE))
        }
        // A bug, not an outage: retrying would meet it again.
        EngineError::Store(StoreError::Panicked(_)) | EngineError::Panicked(_) => {
            (Code::Internal, Withheld(INTERNAL_ERROR))
        }
        // Conflict: still losing to other replicas after several fresh
        // attempts; the message names the chat (or the global settings) the
        // caller wrote, and the caller's own tenant. Fenced: a job's runner
        // lost it to another (or to a cancellation) first; the message
        // names the job by the id the caller reads it by. LorebookChanged:
        // a book's edit still losing to other replicas' after several
        // fresh attempts; the message names the book the caller named.
        EngineError::Store(
            lost @ (StoreError::Conflict(_)
            | StoreError::Fenced(_)
            | StoreError::LorebookChanged(_)),
        ) => (Code::Aborted, Own(lost)),
    }
}

impl From<EngineError> for Status {
    /// The status a client receives for `error`; a withheld cause is logged
    /// here, once, with its id (every failed RPC is also logged by
    /// `grpc::observe`, with the same id).
    fn from(error: EngineError) -> Self {
        match table(&error) {
            (code, Told::Own(caller_error)) => Status::new(code, caller_error.to_string()),
            (code, Told::Withheld(message)) => withheld(code, message, &error),
        }
    }
}

/// The status of a domain refusal, by the same table. A function, not a
/// `From` impl: the domain is a crate of its own and so is tonic, so the
/// orphan rule forbids the impl (`.map_err(domain_status)?` where `?` did).
pub fn domain_status(error: DomainError) -> Status {
    EngineError::from(error).into()
}

/// The status of a failure of the server's own (`code` is INTERNAL or
/// UNAVAILABLE): `message`, a fixed sentence (hence `&'static str`), with a
/// fresh [`ErrorId`] appended and in the [`ERROR_ID_KEY`] metadata. `cause`
/// with its whole source chain is logged here, once, under the same id
/// (INTERNAL at ERROR level, a bug or damaged data; anything else at WARN,
/// an outage), and sent nowhere.
pub fn withheld(code: Code, message: &'static str, cause: &dyn std::error::Error) -> Status {
    let id = ErrorId::new();
    let chain = with_causes(cause);
    let name = code_name(code);
    // With traces on, the trace this failure is part of: one lookup leads
    // from the id to the call's spans.
    let trace_id = spans::current().map(|span| span.trace_id().to_string());
    if code == Code::Internal {
        tracing::error!(error_id = %id, code = name, cause = %chain, trace_id, "{message}");
    } else {
        tracing::warn!(error_id = %id, code = name, cause = %chain, trace_id, "{message}");
    }
    let mut metadata = MetadataMap::new();
    // Hex digits are always a valid value; were one refused, the id would
    // still be in the message.
    if let Ok(value) = MetadataValue::try_from(id.to_string()) {
        metadata.insert(ERROR_ID_KEY, value);
    }
    Status::with_metadata(code, format!("{message} (error id {id})"), metadata)
}

/// The [`ErrorId`] a status carries in its [`ERROR_ID_KEY`] metadata, as
/// sent (a status the caller caused has none).
pub fn error_id(status: &Status) -> Option<&str> {
    status.metadata().get(ERROR_ID_KEY)?.to_str().ok()
}

#[cfg(test)]
mod tests;
