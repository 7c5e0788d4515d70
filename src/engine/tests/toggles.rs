//! The global toggle (`use_global_toggle_state`) seen through
//! SetChatEnabled: which switch a chat's toggle changes, and what every
//! chat then follows.

use super::*;

#[tokio::test]
async fn set_chat_enabled_under_the_global_toggle_sets_the_global_switch() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir).await;
    let tenant = Tenant::default();
    let global = |patch: SettingsPatch| SettingsUpdate {
        patch,
        clear: vec![],
    };
    engine
        .chats()
        .update_settings(
            &tenant,
            None,
            global(SettingsPatch {
                use_global_toggle_state: Some(true),
                ..Default::default()
            }),
        )
        .await
        .unwrap();
    engine
        .chats()
        .publish(&key("known"), ChatEvent::ChatChanged(vec![message("a")]))
        .await
        .unwrap();
    // A chat not yet known: the global switch flips, revision 0.
    assert_eq!(
        engine
            .chats()
            .set_chat_enabled(&key("new"), false)
            .await
            .unwrap(),
        (false, 0)
    );
    assert!(
        !engine
            .chats()
            .settings(&tenant, None)
            .await
            .unwrap()
            .chat
            .global_toggle_state
    );
    let known = engine
        .chats()
        .injection(&key("known"), InjectionKey::Scene)
        .await
        .unwrap();
    assert_eq!(
        (known.enabled, known.trigger),
        (false, Some(Trigger::SettingsChanged))
    );
    let (enabled, revision) = engine
        .chats()
        .set_chat_enabled(&key("known"), false)
        .await
        .unwrap();
    assert_eq!((enabled, revision), (false, known.revision + 1));
    // The chat's own value was not stored: with the global toggle off,
    // default_chat_enabled (true) decides.
    engine
        .chats()
        .update_settings(
            &tenant,
            None,
            global(SettingsPatch {
                use_global_toggle_state: Some(false),
                ..Default::default()
            }),
        )
        .await
        .unwrap();
    let known = engine
        .chats()
        .injection(&key("known"), InjectionKey::Scene)
        .await
        .unwrap();
    assert!(known.enabled);
    assert!(
        !engine
            .chats()
            .settings(&tenant, None)
            .await
            .unwrap()
            .chat
            .global_toggle_state
    );
}

#[tokio::test]
async fn set_chat_enabled_under_the_toggle_changes_the_switch_the_chat_follows() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, _store) = engine(&dir).await;
    let tenant = Tenant::default();
    let update = |patch: SettingsPatch| SettingsUpdate {
        patch,
        clear: vec![],
    };
    // The tenant's switch is off; both chats follow a toggle, A its own.
    engine
        .chats()
        .update_settings(
            &tenant,
            None,
            update(SettingsPatch {
                global_toggle_state: Some(false),
                ..Default::default()
            }),
        )
        .await
        .unwrap();
    for (chat, own_switch) in [("a", Some(false)), ("b", None)] {
        engine
            .chats()
            .update_settings(
                &tenant,
                Some(&key(chat)),
                update(SettingsPatch {
                    use_global_toggle_state: Some(true),
                    global_toggle_state: own_switch,
                    ..Default::default()
                }),
            )
            .await
            .unwrap();
    }
    let (enabled, _) = engine
        .chats()
        .set_chat_enabled(&key("a"), true)
        .await
        .unwrap();
    assert!(enabled, "A follows its own switch, which was turned on");
    let settings = |chat: &'static str| {
        let engine = engine.clone();
        let tenant = tenant.clone();
        async move {
            engine
                .chats()
                .settings(&tenant, Some(&key(chat)))
                .await
                .unwrap()
        }
    };
    assert!(settings("a").await.chat.global_toggle_state);
    // B follows the tenant's switch, which A's call left off.
    assert!(!settings("b").await.chat.global_toggle_state);
    // B's call turns the tenant's switch on.
    let (enabled, _) = engine
        .chats()
        .set_chat_enabled(&key("b"), true)
        .await
        .unwrap();
    assert!(enabled);
    assert!(
        engine
            .chats()
            .settings(&tenant, None)
            .await
            .unwrap()
            .chat
            .global_toggle_state
    );
}
