use super::*;

#[test]
fn ordinary_ids_pass() {
    assert!(check_chat_id("chat_id", "alice/chat-2024-01-01 @12h").is_ok());
    assert!(check_message_id("message_id", "ü").is_ok());
}

#[test]
fn empty_long_and_control_ids_are_refused_naming_the_field() {
    for bad in ["", "a\nb", "tab\there", "nul\0"] {
        let err = check_chat_id("chat_id", bad).unwrap_err();
        assert!(err.to_string().starts_with("invalid chat_id"), "{err}");
    }
    let long = "x".repeat(MAX_ID_BYTES + 1);
    assert!(check_chat_id("chat_id", &long).is_err());
    assert!(check_chat_id("chat_id", &long[1..]).is_ok());
}

#[test]
fn tenants_keep_their_chats_apart() {
    let acme = Tenant("acme".into()).chat("chat-1");
    let default = ChatKey::untenanted("chat-1");
    assert_ne!(acme, default);
    assert_eq!((acme.tenant.name(), acme.id.as_str()), ("acme", "chat-1"));
    assert_eq!(default.tenant.name(), "");
    assert_eq!(acme.to_string(), r#""chat-1" of tenant "acme""#);
    assert_eq!(default.to_string(), r#""chat-1""#);
}
