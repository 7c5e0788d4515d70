use super::*;

#[test]
fn a_hint_that_names_many_chats_is_spread_over_several_notifications() {
    let small = Hint {
        replica: "r".into(),
        chats: vec![("t".into(), "c".into(), 2)],
        tenants: vec!["t".into()],
        all: false,
    };
    let payloads = small.encode().unwrap();
    assert_eq!(payloads.len(), 1);
    let decoded: Hint = serde_json::from_str(&payloads[0]).unwrap();
    assert_eq!(
        decoded.into_changes(),
        [
            Change::GlobalSettings(vec![Tenant("t".into())]),
            Change::Chats(vec![(Tenant("t".into()).chat("c"), 2)])
        ]
    );
    let chats: Vec<(String, String, u64)> = (0..2000)
        .map(|i| ("tenant".to_owned(), format!("chat-{i}"), i))
        .collect();
    let big = Hint {
        replica: "r".into(),
        chats: chats.clone(),
        tenants: vec!["t".into()],
        all: false,
    };
    let payloads = big.encode().unwrap();
    assert!(payloads.len() > 1);
    let mut named = Vec::new();
    let mut tenants = Vec::new();
    for payload in &payloads {
        assert!(payload.len() <= MAX_PAYLOAD, "{}", payload.len());
        let hint: Hint = serde_json::from_str(payload).unwrap();
        assert!(!hint.all);
        named.extend(hint.chats);
        tenants.extend(hint.tenants);
    }
    assert_eq!(named, chats);
    assert_eq!(tenants, ["t"]);
}
