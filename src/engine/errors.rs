//! Why an engine operation failed, and every error the engine makes, in
//! one place: each is an associated function of [`EngineError`] named for
//! the case, so a call site reads as the case it reports.

use crate::domain::DomainError;
use crate::domain::ids::ChatKey;
use crate::model_tokenizers::TokenizerError;
use crate::store::StoreError;

/// Why an engine operation failed. Nothing of a failed operation is applied.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request broke a domain rule.
    #[error(transparent)]
    Domain(#[from] DomainError),
    /// The store failed; the operation was not acknowledged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The engine's own code panicked while serving the call; nothing of it
    /// was acknowledged, and the engine goes on serving other calls.
    #[error("internal error: {0}")]
    Panicked(String),
    /// The embeddings endpoint did not answer for a Recall's query (the
    /// reason, never the API key).
    #[error("the embeddings endpoint did not answer: {0}")]
    EmbeddingsUnavailable(String),
}

impl EngineError {
    /// The chat is not known (no event named it, or it was deleted).
    pub(super) fn unknown_chat(chat: &ChatKey) -> EngineError {
        DomainError::NotFound(format!("chat {:?}", chat.id)).into()
    }

    /// The job is not known (or not of the chat named).
    pub(super) fn unknown_job(job_id: &str) -> EngineError {
        DomainError::NotFound(format!("job {job_id:?}")).into()
    }

    /// A recap-writing call while recapd has no LLM.
    pub(super) fn no_llm() -> EngineError {
        DomainError::FailedPrecondition(
            "recapd has no LLM to write recaps with (start it with --llm-url)".into(),
        )
        .into()
    }

    /// A request that needs the embeddings endpoint on a server without one.
    pub(super) fn no_embedder() -> EngineError {
        DomainError::FailedPrecondition(
            "recapd has no embeddings endpoint to index passages with (start it with --embedding-url)"
                .into(),
        )
        .into()
    }

    /// A settings update named a tokenizer that cannot be used: without
    /// `--tokenizers-dir` or `--llm-url`, or an LLM endpoint that cannot
    /// count, FAILED_PRECONDITION; otherwise INVALID_ARGUMENT on
    /// `settings.tokenizer_name` (its file is missing, unreadable, too
    /// large or not a tokenizer).
    pub(super) fn tokenizer(error: TokenizerError) -> EngineError {
        match error {
            TokenizerError::NoDirectory
            | TokenizerError::NoEndpoint
            | TokenizerError::EndpointCannotCount(_) => {
                DomainError::FailedPrecondition(error.to_string())
            }
            other => DomainError::invalid("settings.tokenizer_name", other.to_string()),
        }
        .into()
    }

    /// The answer of a queued event whose group ended without answering
    /// it: the task serving it panicked.
    pub(super) fn lost_answer() -> EngineError {
        EngineError::Panicked("the chat's operation ended without an answer".into())
    }

    /// A panic caught while the chat was locked, with its message.
    pub(super) fn panicked(panic: &(dyn std::any::Any + Send)) -> EngineError {
        EngineError::Panicked(crate::store::panic_message(panic))
    }

    /// The same error again, for another caller that failed with it (the
    /// events of one commit group fail together). A store error's source
    /// is kept as its message.
    pub(super) fn copy(&self) -> EngineError {
        match self {
            EngineError::Domain(error) => EngineError::Domain(error.clone()),
            EngineError::Store(error) => EngineError::Store(error.copy()),
            EngineError::Panicked(message) => EngineError::Panicked(message.clone()),
            EngineError::EmbeddingsUnavailable(reason) => {
                EngineError::EmbeddingsUnavailable(reason.clone())
            }
        }
    }

    /// The error for a task of the engine's that did not finish.
    pub(super) fn from_join(error: tokio::task::JoinError) -> EngineError {
        match error.try_into_panic() {
            Ok(panic) => EngineError::panicked(&*panic),
            // Cancelled: only at runtime shutdown.
            Err(_) => StoreError::Closed.into(),
        }
    }

    /// An import's chat was not there to take: an earlier attempt took
    /// it without putting it back (cannot happen: an attempt that fails
    /// by a conflict puts it back first).
    pub(super) fn import_lost() -> EngineError {
        EngineError::Panicked("the imported chat was taken by an earlier attempt".into())
    }
}
