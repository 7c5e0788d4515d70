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
