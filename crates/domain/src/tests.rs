use super::*;

/// How many cases a property test runs: `PROPTEST_CASES` when it is set
/// (a longer run by hand, or a shorter one), else `default`, the count
/// each test picks so that it takes seconds in a debug build.
pub(crate) fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

#[test]
fn text_at_the_limit_is_accepted_and_one_byte_more_is_not() {
    let limits = Limits {
        max_text_bytes: 4,
        ..Limits::default()
    };
    assert!(limits.check_text("text", "abcd").is_ok());
    let err = limits.check_text("text", "abcde").unwrap_err();
    assert!(err.to_string().contains("invalid text"), "{err}");
}

#[test]
fn a_chat_at_the_limit_is_accepted_and_one_message_more_is_exhausted() {
    let limits = Limits {
        max_messages_per_chat: 3,
        ..Limits::default()
    };
    assert!(limits.check_chat_size(3).is_ok());
    assert!(matches!(
        limits.check_chat_size(4),
        Err(DomainError::ResourceExhausted(_))
    ));
}

mod proptests;
