use super::*;

#[test]
fn a_page_token_gives_back_the_name_it_was_made_from() {
    for name in ["a", "Eldoria", "ฮันเตอร์ 念", &"n".repeat(256), "with:colon"] {
        let token = page_token(name);
        assert_eq!(page_after(&token).unwrap().as_deref(), Some(name));
    }
    assert_eq!(page_after("").unwrap(), None);
}

#[test]
fn tokens_this_server_could_not_have_given_are_refused_on_page_token() {
    let chats_token = crate::grpc::convert::chat_page_token("a");
    for bad in [
        "zz".to_owned(),
        "abc".to_owned(),
        chats_token,
        hex("lorebooks:"),
        hex("lorebooks:a\nb"),
        hex(&format!("lorebooks:{}", "n".repeat(257))),
    ] {
        let error = page_after(&bad).unwrap_err();
        assert!(error.to_string().contains("page_token"), "{bad}: {error}");
    }
}
