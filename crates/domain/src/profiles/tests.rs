use super::*;

fn depth(d: u32) -> SettingsPatch {
    SettingsPatch {
        depth: Some(d),
        ..SettingsPatch::default()
    }
}

/// A tenant with profiles `chat` (depth 7), `group` (depth 8), `character`
/// (depth 9) and `default` (depth 5), `group` bound to group g1 (which
/// lists chat c-listed and disables bob.png) and `character` to alice.png.
fn tenant() -> Profiles {
    let mut p = Profiles::default();
    p.put_profile("chat", depth(7)).unwrap();
    p.put_profile("group", depth(8)).unwrap();
    p.put_profile("character", depth(9)).unwrap();
    p.put_profile("default", depth(5)).unwrap();
    p.put_group(
        "g1",
        Group {
            name: "G".into(),
            members: vec!["alice.png".into(), "bob.png".into()],
            disabled_members: vec!["bob.png".into()],
            chats: vec!["c-listed".into()],
        },
    )
    .unwrap();
    p.bind(&BindTarget::Group("g1".into()), "group").unwrap();
    p.bind(&BindTarget::Character("alice.png".into()), "character")
        .unwrap();
    p
}

fn resolved(
    p: &Profiles,
    global: &Settings,
    chat: ChatIdentity<'_>,
    own: Option<&str>,
) -> Settings {
    let own = own.map(|name| SettingsPatch {
        profile: Some(name.to_owned()),
        ..SettingsPatch::default()
    });
    resolve(global, p, &p.chat_groups(), chat, own.as_ref())
}

#[test]
fn resolution_order_own_then_group_then_character_then_default() {
    let p = tenant();
    let global = Settings::default().with(&SettingsPatch {
        profile: Some("default".into()),
        depth: Some(3),
        ..SettingsPatch::default()
    });
    let alice_in_group = ChatIdentity {
        chat_id: "c1",
        character_key: Some("alice.png"),
        group_id: Some("g1"),
    };
    let s = resolved(&p, &global, alice_in_group, Some("chat"));
    assert_eq!(
        (s.injection.depth, s.chat.profile.as_deref()),
        (7, Some("chat"))
    );
    let s = resolved(&p, &global, alice_in_group, None);
    assert_eq!(
        (s.injection.depth, s.chat.profile.as_deref()),
        (8, Some("group"))
    );
    let alice = ChatIdentity {
        group_id: None,
        ..alice_in_group
    };
    let s = resolved(&p, &global, alice, None);
    assert_eq!(
        (s.injection.depth, s.chat.profile.as_deref()),
        (9, Some("character"))
    );
    let nobody = ChatIdentity {
        chat_id: "c2",
        ..ChatIdentity::default()
    };
    let s = resolved(&p, &global, nobody, None);
    assert_eq!(
        (s.injection.depth, s.chat.profile.as_deref()),
        (5, Some("default"))
    );
    // An empty own choice: no profile at all, the global settings apply.
    let s = resolved(&p, &global, alice_in_group, Some(""));
    assert_eq!((s.injection.depth, s.chat.profile), (3, None));
    // A name that names no profile is passed over.
    let s = resolved(&p, &global, alice_in_group, Some("gone"));
    assert_eq!(s.chat.profile.as_deref(), Some("group"));
}

#[test]
fn own_overrides_beat_the_profile() {
    let p = tenant();
    let own = SettingsPatch {
        depth: Some(1),
        ..SettingsPatch::default()
    };
    let chat = ChatIdentity {
        chat_id: "c",
        character_key: Some("alice.png"),
        group_id: None,
    };
    let s = resolve(&Settings::default(), &p, &p.chat_groups(), chat, Some(&own));
    assert_eq!(
        (s.injection.depth, s.chat.profile.as_deref()),
        (1, Some("character"))
    );
}

#[test]
fn a_listed_chat_is_in_its_group_and_gets_its_disabled_members() {
    let p = tenant();
    let listed = ChatIdentity {
        chat_id: "c-listed",
        ..ChatIdentity::default()
    };
    let s = resolved(&p, &Settings::default(), listed, None);
    assert_eq!(s.group_disabled_members, vec!["bob.png".to_owned()]);
    assert_eq!(s.chat.profile.as_deref(), Some("group"));
    let alone = ChatIdentity {
        chat_id: "c-alone",
        character_key: Some("bob.png"),
        group_id: None,
    };
    let s = resolved(&p, &Settings::default(), alone, None);
    assert!(s.group_disabled_members.is_empty());
}

#[test]
fn names_are_checked_and_counts_bounded() {
    let mut p = Profiles::default();
    assert!(matches!(
        p.put_profile("", depth(1)),
        Err(DomainError::Invalid { .. })
    ));
    assert!(matches!(
        p.put_profile("a\nb", depth(1)),
        Err(DomainError::Invalid { .. })
    ));
    let nested = SettingsPatch {
        profile: Some("x".into()),
        ..SettingsPatch::default()
    };
    assert!(matches!(
        p.put_profile("x", nested),
        Err(DomainError::Invalid { .. })
    ));
    for i in 0..MAX_PROFILES {
        p.put_profile(&format!("p{i}"), depth(1)).unwrap();
    }
    assert!(matches!(
        p.put_profile("one-more", depth(1)),
        Err(DomainError::ResourceExhausted(_))
    ));
    // Replacing one is not a new one.
    p.put_profile("p0", depth(2)).unwrap();
    assert!(matches!(
        p.bind(&BindTarget::Character("a.png".into()), "unknown"),
        Err(DomainError::NotFound(_))
    ));
    p.bind(&BindTarget::Character("a.png".into()), "p0")
        .unwrap();
    p.bind(&BindTarget::Character("a.png".into()), "").unwrap();
    assert!(p.character_profiles.is_empty());
    assert!(matches!(
        p.delete_profile("unknown"),
        Err(DomainError::NotFound(_))
    ));
}

#[test]
fn st_group_files_are_read_and_hostile_ones_refused() {
    let (id, group) = parse_st_group(
        r#"{"id":"1700000000000","name":"Party","members":["a.png","b.png","a.png"],
            "disabled_members":["b.png"],"chats":["Party - 2024-01-01"],"fav":false,
            "chat_id":"Party - 2024-01-01"}"#,
    )
    .unwrap();
    assert_eq!(id, "1700000000000");
    assert_eq!(group.name, "Party");
    assert_eq!(group.members, vec!["a.png", "b.png"]);
    assert_eq!(group.disabled_members, vec!["b.png"]);
    assert_eq!(group.chats, vec!["Party - 2024-01-01"]);
    let (id, _) = parse_st_group(r#"{"id":1700000000000}"#).unwrap();
    assert_eq!(id, "1700000000000");
    for (json, field) in [
        ("[]", "json"),
        ("{", "json"),
        (r#"{"name":"x"}"#, "json.id"),
        (r#"{"id":""}"#, "json.id"),
        (r#"{"id":"g","members":"a.png"}"#, "json.members"),
        (
            r#"{"id":"g","disabled_members":[1]}"#,
            "json.disabled_members[0]",
        ),
        (r#"{"id":"g","chats":["\u0001"]}"#, "json.chats[0]"),
    ] {
        match parse_st_group(json) {
            Err(DomainError::Invalid { field: got, .. }) => assert_eq!(got, field, "{json}"),
            other => panic!("{json}: {other:?}"),
        }
    }
    let many: Vec<String> = (0..=MAX_GROUP_MEMBERS)
        .map(|i| format!("\"m{i}\""))
        .collect();
    let json = format!(r#"{{"id":"g","members":[{}]}}"#, many.join(","));
    assert!(matches!(
        parse_st_group(&json),
        Err(DomainError::Invalid { field, .. }) if field == "json.members"
    ));
}
