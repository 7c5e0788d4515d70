use super::*;

#[test]
fn a_token_names_the_chat_it_was_made_after() {
    for id in ["a", "chat-1", "ünï cödé", &"x".repeat(ids::MAX_ID_BYTES)] {
        let token = chat_page_token(id);
        assert_eq!(chat_page_after(&token).unwrap().as_deref(), Some(id));
    }
    assert_eq!(chat_page_after("").unwrap(), None);
}

#[test]
fn a_token_the_server_did_not_give_is_refused() {
    let jobs_token = hex("1700000000:job-1");
    for bad in [
        "zz",
        "abc",
        &jobs_token,
        &hex("chats:"),
        &"a".repeat(MAX_TOKEN_CHARS + 2),
    ] {
        let error = chat_page_after(bad).unwrap_err();
        assert!(error.to_string().contains("page_token"), "{bad}: {error}");
    }
}
