//! Profiles in the engine: a chat's character and group decide its
//! settings; a profile change refreshes the chats; a failed commit leaves
//! the profiles as they were.

use super::*;
use crate::domain::profiles::{BindTarget, Group};
use crate::engine::ProfileChange;

fn depth(d: u32) -> SettingsPatch {
    SettingsPatch {
        depth: Some(d),
        ..Default::default()
    }
}

async fn depth_of(engine: &Engine, chat: &str) -> (u32, u32) {
    let settings = engine
        .chats()
        .settings(&Tenant::default(), Some(&key(chat)))
        .await
        .unwrap();
    let injection = engine
        .chats()
        .injection(&key(chat), InjectionKey::Scene)
        .await
        .unwrap();
    (settings.injection.depth, injection.depth)
}

#[tokio::test]
async fn a_chats_character_and_group_choose_its_profile_and_a_change_refreshes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir).await;
    let tenant = Tenant::default();
    let chats = engine.chats();
    for (name, d) in [("alice", 7), ("party", 8)] {
        chats
            .change_profiles(
                &tenant,
                ProfileChange::Put {
                    name: name.into(),
                    settings: Box::new(depth(d)),
                },
            )
            .await
            .unwrap();
    }
    chats
        .change_profiles(
            &tenant,
            ProfileChange::Bind {
                target: BindTarget::Character("alice.png".into()),
                profile: "alice".into(),
            },
        )
        .await
        .unwrap();
    chats
        .publish(&key("c"), ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    assert_eq!(depth_of(&engine, "c").await, (2, 2));
    // Naming its character refreshes the chat with the profile.
    chats
        .set_chat_identity(&key("c"), Some("alice.png".into()), None)
        .await
        .unwrap();
    assert_eq!(depth_of(&engine, "c").await, (7, 7));
    // A group bound to another profile wins over the character.
    chats
        .change_profiles(
            &tenant,
            ProfileChange::PutGroup {
                id: "g".into(),
                group: Group::default(),
            },
        )
        .await
        .unwrap();
    chats
        .change_profiles(
            &tenant,
            ProfileChange::Bind {
                target: BindTarget::Group("g".into()),
                profile: "party".into(),
            },
        )
        .await
        .unwrap();
    chats
        .set_chat_identity(&key("c"), None, Some("g".into()))
        .await
        .unwrap();
    assert_eq!(depth_of(&engine, "c").await, (8, 8));
    // Changing the profile refreshes the chat at once.
    chats
        .change_profiles(
            &tenant,
            ProfileChange::Put {
                name: "party".into(),
                settings: Box::new(depth(4)),
            },
        )
        .await
        .unwrap();
    assert_eq!(depth_of(&engine, "c").await, (4, 4));
    // Leaving the group: back to the character's profile.
    chats
        .set_chat_identity(&key("c"), None, Some(String::new()))
        .await
        .unwrap();
    assert_eq!(depth_of(&engine, "c").await, (7, 7));
    // An unknown chat has no identity to set.
    assert!(matches!(
        chats
            .set_chat_identity(&key("nobody"), Some("a.png".into()), None)
            .await,
        Err(EngineError::Domain(_))
    ));
}

#[tokio::test]
async fn a_profile_change_whose_commit_fails_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, store) = engine(&dir).await;
    let tenant = Tenant::default();
    store.fail.store(true, Ordering::SeqCst);
    let failed = engine
        .chats()
        .change_profiles(
            &tenant,
            ProfileChange::Put {
                name: "p".into(),
                settings: Box::new(depth(5)),
            },
        )
        .await;
    assert!(matches!(failed, Err(EngineError::Store(_))), "{failed:?}");
    assert!(engine.chats().profiles(&tenant).profiles.is_empty());
    store.fail.store(false, Ordering::SeqCst);
    // A profile whose settings fail the checks over the global ones is
    // refused, naming the profile.
    let percent = SettingsPatch {
        message_recap_context_type: Some(crate::domain::settings::ContextType::Percent),
        message_recap_context_limit: Some(50),
        ..Default::default()
    };
    let refused = engine
        .chats()
        .change_profiles(
            &tenant,
            ProfileChange::Put {
                name: "pct".into(),
                settings: Box::new(percent),
            },
        )
        .await;
    match refused {
        Err(EngineError::Domain(crate::domain::DomainError::Invalid { reason, .. })) => {
            assert!(reason.contains("\"pct\""), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(engine.chats().profiles(&tenant).profiles.is_empty());
}
