//! The id of one failure whose cause is withheld from its client: a gRPC
//! status of the server's own (`grpc::status`) or a job's error
//! (`engine::jobs`). The client sees the id; the log has it next to the
//! cause, so an operator finds one from the other.

use std::fmt;

/// The id of one failure, shown to its client (a status's message and
/// metadata, a job's `last_error`) and logged with its cause: 16 lowercase
/// hex digits of a random `u64`.
///
/// Random rather than a ULID: the log line already has its time, 64 random
/// bits make two failures sharing an id practically impossible (about one
/// chance in 2^32 after four billion failures), the id tells a client
/// nothing of the server's clock or failure rate, and it needs no crate
/// beyond `rand`, which recapd already uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorId(u64);

impl ErrorId {
    /// A fresh random id.
    pub fn new() -> ErrorId {
        ErrorId(rand::random())
    }
}

impl Default for ErrorId {
    fn default() -> Self {
        ErrorId::new()
    }
}

impl fmt::Display for ErrorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}
