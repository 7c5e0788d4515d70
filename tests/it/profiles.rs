//! Settings profiles and group chats over the API (issue 43): a bound
//! character's new chat, the resolution order, pushes after a profile
//! change, a group's disabled members, the extension's settings import,
//! and that all of it survives a restart.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

async fn put_profile(server: &mut Server, name: &str, settings: pb::Settings) -> pb::Profile {
    server
        .settings
        .put_profile(pb::PutProfileRequest {
            name: name.into(),
            settings: Some(settings),
        })
        .await
        .expect("put profile")
        .into_inner()
}

fn depth(d: i32) -> pb::Settings {
    pb::Settings {
        depth: Some(d),
        ..Default::default()
    }
}

async fn bind(
    server: &mut Server,
    target: pb::bind_profile_request::Target,
    profile: &str,
) -> Result<(), tonic::Status> {
    server
        .settings
        .bind_profile(pb::BindProfileRequest {
            target: Some(target),
            profile: profile.into(),
        })
        .await
        .map(drop)
}

fn character(key: &str) -> pb::bind_profile_request::Target {
    pb::bind_profile_request::Target::CharacterKey(key.into())
}

fn group(id: &str) -> pb::bind_profile_request::Target {
    pb::bind_profile_request::Target::GroupId(id.into())
}

async fn import_group(server: &mut Server, json: &str) -> Result<pb::Group, tonic::Status> {
    server
        .settings
        .import_group(pb::ImportGroupRequest { json: json.into() })
        .await
        .map(|r| r.into_inner())
}

/// Opens `chat` with one message, naming its character and group.
async fn open(server: &mut Server, chat: &str, character_key: &str, group_id: &str) {
    let kind = pb::event::Kind::ChatChanged(pb::ChatChanged {
        messages: vec![message("m0", "hello")],
        character_key: character_key.into(),
        group_id: group_id.into(),
    });
    server.publish(chat, kind).await.expect("publish");
}

#[tokio::test]
async fn a_new_chat_of_a_bound_character_starts_with_the_profiles_settings_and_keeps_them_after_a_restart()
 {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Server::start(dir.path()).await;
    let answered = put_profile(&mut s, "quiet", depth(7)).await;
    assert_eq!(answered.settings.as_ref().and_then(|s| s.depth), Some(7));
    assert_eq!(
        answered.settings.as_ref().and_then(|s| s.role),
        None,
        "a profile answers only the fields it sets"
    );
    bind(&mut s, character("alice.png"), "quiet").await.unwrap();
    open(&mut s, "alice-1", "alice.png", "").await;
    let settings = settings_of(&mut s, "alice-1").await;
    assert_eq!(
        (settings.depth, settings.profile.as_deref()),
        (Some(7), Some("quiet"))
    );
    assert_eq!(s.injection("alice-1").await.depth, 7);
    // Another character's chat keeps the global settings.
    open(&mut s, "bob-1", "bob.png", "").await;
    let settings = settings_of(&mut s, "bob-1").await;
    assert_eq!((settings.depth, settings.profile), (Some(2), None));

    s.stop().await;
    let mut s = Server::start(dir.path()).await;
    let listed = s
        .settings
        .list_profiles(pb::ListProfilesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.profiles.len(), 1);
    assert_eq!(
        listed
            .character_profiles
            .get("alice.png")
            .map(String::as_str),
        Some("quiet")
    );
    assert_eq!(settings_of(&mut s, "alice-1").await.depth, Some(7));
    s.stop().await;
}

#[tokio::test]
async fn a_chats_own_profile_beats_its_groups_which_beats_its_characters() {
    let (_dir, mut s) = start().await;
    put_profile(&mut s, "own", depth(5)).await;
    put_profile(&mut s, "party", depth(6)).await;
    put_profile(&mut s, "alice", depth(7)).await;
    let g = import_group(
        &mut s,
        r#"{"id":"1700000000000","name":"Party","members":["alice.png","bob.png"],"chats":["party-chat"]}"#,
    )
    .await
    .unwrap();
    assert_eq!(g.chats, vec!["party-chat"]);
    bind(&mut s, group("1700000000000"), "party").await.unwrap();
    bind(&mut s, character("alice.png"), "alice").await.unwrap();

    // A chat the group lists is in it without saying so.
    open(&mut s, "party-chat", "alice.png", "").await;
    assert_eq!(settings_of(&mut s, "party-chat").await.depth, Some(6));
    // So is one that says so.
    open(&mut s, "party-2", "alice.png", "1700000000000").await;
    assert_eq!(settings_of(&mut s, "party-2").await.depth, Some(6));
    // Alice alone: her character's profile.
    open(&mut s, "alice-alone", "alice.png", "").await;
    assert_eq!(settings_of(&mut s, "alice-alone").await.depth, Some(7));
    // The chat's own choice wins over both.
    let answered = update(
        &mut s,
        "party-chat",
        pb::Settings {
            profile: Some("own".into()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!(
        (answered.depth, answered.profile.as_deref()),
        (Some(5), Some("own"))
    );
    assert_eq!(s.injection("party-chat").await.depth, 5);
    // And an empty choice means no profile: the global settings.
    let answered = update(
        &mut s,
        "party-chat",
        pb::Settings {
            profile: Some(String::new()),
            ..Default::default()
        },
        &[],
    )
    .await
    .unwrap();
    assert_eq!((answered.depth, answered.profile), (Some(2), None));
    // The chat's own overrides beat its profile.
    update(&mut s, "alice-alone", depth(9), &[]).await.unwrap();
    assert_eq!(settings_of(&mut s, "alice-alone").await.depth, Some(9));
    // ListChats shows each chat's character and group.
    let listed = s
        .memory
        .list_chats(pb::ListChatsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let shown: Vec<(&str, &str, &str)> = listed
        .chats
        .iter()
        .map(|c| {
            (
                c.chat_id.as_str(),
                c.character_key.as_str(),
                c.group_id.as_str(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            ("alice-alone", "alice.png", ""),
            ("party-2", "alice.png", "1700000000000"),
            ("party-chat", "alice.png", "1700000000000"),
        ]
    );
}

#[tokio::test]
async fn a_profile_change_pushes_a_new_injection_to_a_subscriber_of_a_chat_using_it() {
    let (_dir, mut s) = start().await;
    put_profile(&mut s, "p", depth(7)).await;
    bind(&mut s, character("alice.png"), "p").await.unwrap();
    open(&mut s, "c", "alice.png", "").await;
    let before = s.injection("c").await;
    assert_eq!(before.depth, 7);
    let mut stream = subscribe(&mut s, &["c"], 0).await;
    put_profile(&mut s, "p", depth(3)).await;
    let mut pushed = None;
    while let Some(update) = next_within(&mut stream, 10).await {
        if update.revision > before.revision {
            pushed = Some(update);
            break;
        }
    }
    let pushed = pushed.expect("the subscriber is pushed the chat's new injection");
    assert_eq!(pushed.depth, 3);
    assert_eq!(trigger(&pushed), pb::RefreshTrigger::SettingsChanged);
    // Deleting it leaves the chat with the global settings.
    s.settings
        .delete_profile(pb::DeleteProfileRequest { name: "p".into() })
        .await
        .unwrap();
    assert_eq!(s.injection("c").await.depth, 2);
    let gone = s
        .settings
        .get_profile(pb::GetProfileRequest { name: "p".into() })
        .await;
    assert_code(gone, Code::NotFound, "profile");
}

#[tokio::test]
async fn a_disabled_group_member_is_left_out_in_the_group_chat_only() {
    let (_dir, mut s) = start().await;
    import_group(
        &mut s,
        r#"{"id":"g1","name":"Party","members":["alice.png","bob.png"],
            "disabled_members":["bob.png"],"chats":["party"]}"#,
    )
    .await
    .unwrap();
    let messages = || {
        vec![
            msg_with("a", "alice speaks", |m| {
                m.character_key = "alice.png".into()
            }),
            msg_with("b", "bob speaks", |m| m.character_key = "bob.png".into()),
        ]
    };
    s.publish("party", chat_changed(messages())).await.unwrap();
    s.publish("bob-alone", chat_changed(messages()))
        .await
        .unwrap();
    for chat in ["party", "bob-alone"] {
        set_memory(&mut s, chat, "a", "alice's memory").await;
        set_memory(&mut s, chat, "b", "bob's memory").await;
    }
    assert_eq!(
        reasons(&mut s, "party").await,
        expect_reasons(&[("a", "included"), ("b", "disabled_group_member")])
    );
    assert_eq!(
        reasons(&mut s, "bob-alone").await,
        expect_reasons(&[("a", "included"), ("b", "included")])
    );
    // The group chat exports with SillyTavern's group chat header; the
    // one-on-one chat without it.
    for (chat, group_header) in [("party", true), ("bob-alone", false)] {
        let file = s
            .memory
            .export_chat(pb::ExportChatRequest {
                chat_id: chat.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .jsonl;
        let first = String::from_utf8(file).unwrap();
        let first = first.lines().next().unwrap().to_owned();
        assert_eq!(
            first.starts_with(r#"{"user_name":"unused","character_name":"unused""#),
            group_header,
            "{chat}: {first}"
        );
    }
    // Enabling him again (SetGroupMembers) brings his memory back.
    let g = s
        .settings
        .set_group_members(pb::SetGroupMembersRequest {
            group_id: "g1".into(),
            disabled_members: vec![],
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(g.members, vec!["alice.png", "bob.png"]);
    assert!(g.disabled_members.is_empty());
    assert_eq!(
        reasons(&mut s, "party").await,
        expect_reasons(&[("a", "included"), ("b", "included")])
    );
    let listed = s
        .settings
        .list_groups(pb::ListGroupsRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(listed.groups[0].name, "Party");
}

#[tokio::test]
async fn hostile_group_files_and_bad_names_are_refused_with_their_field() {
    let (_dir, mut s) = start().await;
    assert_code(
        import_group(&mut s, "[1,2]").await,
        Code::InvalidArgument,
        "json",
    );
    assert_code(
        import_group(&mut s, r#"{"name":"no id"}"#).await,
        Code::InvalidArgument,
        "json.id",
    );
    assert_code(
        import_group(&mut s, r#"{"id":"g","members":{"a":1}}"#).await,
        Code::InvalidArgument,
        "json.members",
    );
    let many: Vec<String> = (0..20_000).map(|i| format!("\"c{i}\"")).collect();
    assert_code(
        import_group(
            &mut s,
            &format!(r#"{{"id":"g","chats":[{}]}}"#, many.join(",")),
        )
        .await,
        Code::InvalidArgument,
        "json.chats",
    );
    assert_code(
        bind(&mut s, character("a.png"), "unknown").await,
        Code::NotFound,
        "unknown",
    );
    let bad_name = s
        .settings
        .put_profile(pb::PutProfileRequest {
            name: "a\u{1}".into(),
            settings: Some(depth(1)),
        })
        .await;
    assert_code(bad_name, Code::InvalidArgument, "name");
    let nested = s
        .settings
        .put_profile(pb::PutProfileRequest {
            name: "n".into(),
            settings: Some(pb::Settings {
                profile: Some("other".into()),
                ..Default::default()
            }),
        })
        .await;
    assert_code(nested, Code::InvalidArgument, "settings.profile");
    let unknown_group = s
        .settings
        .get_group(pb::GetGroupRequest {
            group_id: "nope".into(),
        })
        .await;
    assert_code(unknown_group, Code::NotFound, "nope");
}

#[tokio::test]
async fn import_settings_reads_the_extensions_profiles_and_bindings() {
    let (_dir, mut s) = start().await;
    import_group(
        &mut s,
        r#"{"id":"g1","members":["alice.png"],"chats":["party"]}"#,
    )
    .await
    .unwrap();
    let json = r#"{
        "running_scene_recap_depth": 3,
        "profiles": {
            "Default": {"running_scene_recap_depth": 3, "debug_mode": true},
            "Deep": {"running_scene_recap_depth": 9},
            "Group": {"running_scene_recap_depth": 8}
        },
        "character_profiles": {"alice.png": "Deep", "carol.png": "Gone"},
        "chat_profiles": {"g1": "Group", "solo-chat": "Default"},
        "disabled_group_characters": {"g1": ["bob.png"], "g2": ["dan.png"]}
    }"#;
    let imported = s
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: String::new(),
            json: json.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        imported.ignored_keys,
        vec![
            "character_profiles.carol.png".to_owned(),
            "profiles.Default.debug_mode".to_owned()
        ]
    );
    let listed = s
        .settings
        .list_profiles(pb::ListProfilesRequest {})
        .await
        .unwrap()
        .into_inner();
    let names: Vec<&str> = listed.profiles.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["Deep", "Default", "Group"]);
    assert_eq!(
        listed
            .character_profiles
            .get("alice.png")
            .map(String::as_str),
        Some("Deep")
    );
    assert_eq!(
        listed.group_profiles.get("g1").map(String::as_str),
        Some("Group")
    );
    // chat_profiles' key that is no group: that chat's own choice.
    let solo = settings_of(&mut s, "solo-chat").await;
    assert_eq!(solo.profile.as_deref(), Some("Default"));
    // disabled_group_characters: added to the group, or a new group.
    let g1 = s
        .settings
        .get_group(pb::GetGroupRequest {
            group_id: "g1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (g1.disabled_members, g1.profile.as_str()),
        (vec!["bob.png".to_owned()], "Group")
    );
    let g2 = s
        .settings
        .get_group(pb::GetGroupRequest {
            group_id: "g2".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(g2.disabled_members, vec!["dan.png"]);
    // The group's chat and Alice's chat resolve through them.
    open(&mut s, "party", "", "").await;
    assert_eq!(settings_of(&mut s, "party").await.depth, Some(8));
    open(&mut s, "alice-chat", "alice.png", "").await;
    assert_eq!(settings_of(&mut s, "alice-chat").await.depth, Some(9));

    // A chat's import applies only that chat's entry, and no profile.
    let chat_json = r#"{
        "profiles": {"Other": {"running_scene_recap_depth": 1}},
        "chat_profiles": {"other-chat": "Deep", "solo-chat": "Group"}
    }"#;
    let imported = s
        .settings
        .import_settings(pb::ImportSettingsRequest {
            chat_id: "other-chat".into(),
            json: chat_json.into(),
        })
        .await
        .unwrap()
        .into_inner();
    let answered = imported.settings.unwrap();
    assert_eq!(
        (answered.depth, answered.profile.as_deref()),
        (Some(9), Some("Deep"))
    );
    let solo = settings_of(&mut s, "solo-chat").await;
    assert_eq!(solo.profile.as_deref(), Some("Default"), "unchanged");
    let listed = s
        .settings
        .list_profiles(pb::ListProfilesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.profiles.len(), 3, "no profile from a chat's import");
}

#[tokio::test]
async fn an_imported_chat_takes_its_characters_profile_and_a_given_group() {
    let (_dir, mut s) = start().await;
    put_profile(&mut s, "alice", depth(7)).await;
    put_profile(&mut s, "party", depth(6)).await;
    bind(&mut s, character("alice.png"), "alice").await.unwrap();
    bind(&mut s, group("g1"), "party").await.unwrap();
    let file = concat!(
        r#"{"user_name":"Ann","character_name":"Alice","create_date":"2024-01-01"}"#,
        "\n",
        r#"{"name":"Ann","is_user":true,"mes":"hi"}"#,
        "\n",
        r#"{"name":"Alice","is_user":false,"mes":"hello","original_avatar":"alice.png"}"#,
        "\n"
    );
    for (chat, group_id, expected) in [("one", "", 7), ("in-group", "g1", 6)] {
        s.memory
            .import_chat(pb::ImportChatRequest {
                chat_id: chat.into(),
                jsonl: file.as_bytes().to_vec(),
                group_id: group_id.into(),
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(
            settings_of(&mut s, chat).await.depth,
            Some(expected),
            "{chat}"
        );
        // An imported file's header is exported as the file had it, in a
        // group or not.
        let exported = s
            .memory
            .export_chat(pb::ExportChatRequest {
                chat_id: chat.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .jsonl;
        assert!(
            String::from_utf8(exported)
                .unwrap()
                .starts_with(r#"{"user_name":"Ann","character_name":"Alice""#),
            "{chat}"
        );
    }
}
