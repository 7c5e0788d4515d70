use super::*;
use crate::chat::tests::msg;
use crate::message::MessageData;
use crate::recaps::NewRecap;
use crate::settings::SettingsPatch;
use crate::time::{UnixMicros, UnixMillis};

static CHAT: std::sync::LazyLock<ChatKey> = std::sync::LazyLock::new(|| ChatKey::untenanted("c"));
static COUNTER: std::sync::LazyLock<Counter> = std::sync::LazyLock::new(Counter::default);

fn ctx(settings: &Settings, enabled: bool) -> RefreshContext<'_> {
    RefreshContext {
        counter: &COUNTER,
        chat: &CHAT,
        settings,
        enabled,
        revision: 7,
        trigger: Trigger::ChatChanged,
        now_us: UnixMicros(1),
    }
}

fn chat_with_recap(content: &str) -> Chat {
    let mut chat = Chat::default();
    let messages = (0..4).map(|i| msg(&format!("m{i}"), "t")).collect();
    chat.apply(ChatEvent::ChatChanged(messages)).unwrap();
    for id in ["m0", "m2"] {
        let data = MessageData {
            scene_break: Some(true),
            ..Default::default()
        };
        chat.set_message_data(id, &data).unwrap();
    }
    chat.add_recap(
        NewRecap {
            content: content.into(),
            ..Default::default()
        },
        UnixMillis(0),
    )
    .unwrap();
    chat
}

#[test]
fn enabled_refresh_renders_the_template_at_the_configured_place() {
    let s = Settings::default().with(&SettingsPatch {
        template: Some("MEM: {{running_recap}}".into()),
        depth: Some(4),
        ..Default::default()
    });
    let inj = refresh(&chat_with_recap("they met"), ctx(&s, true), |t| {
        t.len() as u32
    });
    assert_eq!(inj.text, "MEM: they met");
    assert_eq!(
        (inj.position, inj.depth, inj.role, inj.scan),
        (Position::BeforePrompt, 4, Role::System, false)
    );
    assert_eq!(inj.token_count, 13);
    assert_eq!(inj.running_recap_version, Some(0));
    assert_eq!(inj.auto_hidden_count, 1);
    assert_eq!(inj.revision, 7);
    assert!(inj.enabled);
}

#[test]
fn disabled_refresh_is_empty_but_still_auto_hides() {
    let s = Settings::default();
    let inj = refresh(&chat_with_recap("they met"), ctx(&s, false), |_| {
        panic!("nothing to count")
    });
    assert_eq!(inj.text, "");
    assert!(!inj.enabled);
    assert_eq!((inj.position, inj.depth), (Position::InPrompt, 0));
    assert_eq!(inj.auto_hidden_count, 1);
    assert_eq!(inj.running_recap_version, None);
}

#[test]
fn an_unrefreshed_injection_is_placed_where_a_refresh_would_place_it() {
    let s = Settings::default().with(&SettingsPatch {
        position: Some(Position::InChat),
        depth: Some(3),
        role: Some(Role::User),
        scan: Some(true),
        message_recaps_enabled: Some(true),
        ..Default::default()
    });
    let place = |i: Injection| (i.position, i.depth, i.role, i.scan, i.revision);
    let scene = |enabled| Injection::unrefreshed(&CHAT, &s, enabled, InjectionKey::Scene);
    assert_eq!(
        place(scene(true)),
        (Position::InChat, 3, Role::User, true, 0)
    );
    let disabled = (Position::InPrompt, 0, Role::System, false, 0);
    assert_eq!(place(scene(false)), disabled);
    assert!(!scene(false).enabled);
    let tier = |s: &Settings, enabled| {
        place(Injection::unrefreshed(
            &CHAT,
            s,
            enabled,
            InjectionKey::Messages,
        ))
    };
    assert_eq!(
        tier(&s, true),
        (Position::InChat, 4, Role::System, false, 0)
    );
    assert_eq!(tier(&s, false), disabled);
    let tier_off = s.with(&SettingsPatch {
        message_recaps_enabled: Some(false),
        ..Default::default()
    });
    assert_eq!(tier(&tier_off, true), disabled);
    // The same places as a refresh of the never-refreshed chat.
    let chat = Chat::default();
    for enabled in [true, false] {
        let refreshed = refresh(&chat, ctx(&s, enabled), |_| 0);
        let unrefreshed = scene(enabled);
        assert_eq!(
            (unrefreshed.position, unrefreshed.depth, unrefreshed.role),
            (refreshed.position, refreshed.depth, refreshed.role)
        );
        assert_eq!(unrefreshed.scan, refreshed.scan);
    }
}

#[test]
fn no_recap_gives_empty_text() {
    let s = Settings::default();
    let inj = refresh(&Chat::default(), ctx(&s, true), |_| 99);
    assert_eq!(
        (
            inj.text.as_str(),
            inj.token_count,
            inj.running_recap_version
        ),
        ("", 0, None)
    );
}

#[test]
fn a_current_version_that_names_no_version_gives_empty_text() {
    let s = Settings::default();
    let recapped = chat_with_recap("they met");
    let messages = recapped
        .messages()
        .map(|(seq, m)| (seq, m.clone()))
        .collect();
    let versions = recapped.recaps().versions().cloned().collect();
    let dangling = Chat::from_parts(messages, versions, Some(9));
    let inj = refresh(&dangling, ctx(&s, true), |_| 99);
    assert_eq!(
        (
            inj.text.as_str(),
            inj.running_recap_version,
            inj.token_count
        ),
        ("", None, 0)
    );
}

#[test]
fn the_message_recap_tier_lists_included_recaps_oldest_first() {
    let mut chat = Chat::default();
    let messages = (0..4).map(|i| msg(&format!("m{i}"), "t")).collect();
    chat.apply(ChatEvent::ChatChanged(messages)).unwrap();
    for (id, memory) in [("m0", "first"), ("m2", "third"), ("m3", "fourth")] {
        let data = MessageData {
            memory: Some(memory.into()),
            ..Default::default()
        };
        chat.set_message_data(id, &data).unwrap();
    }
    let off = Settings::default();
    let tier = refresh_message_recaps(&chat, ctx(&off, true), |_| 1);
    assert_eq!(
        (tier.key, tier.text.as_str()),
        (InjectionKey::Messages, ""),
        "off by default"
    );
    let on = off.with(&SettingsPatch {
        message_recaps_enabled: Some(true),
        message_recaps_template: Some("Recent:\n{{message_recaps}}".into()),
        ..Default::default()
    });
    let tier = refresh_message_recaps(&chat, ctx(&on, true), |t| t.len() as u32);
    assert_eq!(tier.text, "Recent:\nfirst\nthird\nfourth");
    assert_eq!(
        (tier.position, tier.depth, tier.role),
        (Position::InChat, 4, Role::System)
    );
    assert_eq!(tier.token_count, tier.text.len() as u32);
    // The budget of the inclusion pass applies: room for "fourth" alone.
    let room = u64::from(crate::tokens::count(on.inclusion.tokenizer, "fourth"));
    let tight = on.with(&SettingsPatch {
        message_recap_context_limit: Some(room),
        ..Default::default()
    });
    assert_eq!(
        refresh_message_recaps(&chat, ctx(&tight, true), |_| 1).text,
        "Recent:\nfourth"
    );
    // A disabled chat gets nothing.
    assert_eq!(
        refresh_message_recaps(&chat, ctx(&on, false), |_| 1).text,
        ""
    );
}

#[test]
fn debounced_triggers_are_the_frequent_message_events() {
    assert!(Trigger::MessageSent.is_debounced());
    assert!(Trigger::MessageDataChanged.is_debounced());
    assert!(!Trigger::MessageDeleted.is_debounced());
    assert!(!Trigger::ChatChanged.is_debounced());
    assert!(!Trigger::SettingsChanged.is_debounced());
}

#[test]
fn all_lists_every_trigger_once() {
    // No wildcard: a new trigger does not compile until it has a place.
    let position = |trigger: Trigger| match trigger {
        Trigger::ChatChanged => 0,
        Trigger::MessageSent => 1,
        Trigger::MessageReceived => 2,
        Trigger::MessageEdited => 3,
        Trigger::MessageDeleted => 4,
        Trigger::MessageSwiped => 5,
        Trigger::MoreMessagesLoaded => 6,
        Trigger::RefreshRequested => 7,
        Trigger::MessageDataChanged => 8,
        Trigger::SettingsChanged => 9,
        Trigger::RunningRecapChanged => 10,
        Trigger::Startup => 11,
        Trigger::RecapGenerated => 12,
        Trigger::RecallIndexed => 13,
        Trigger::TokensCounted => 14,
        Trigger::RecallSearched => 15,
        // Not a refresh: no place in ALL.
        Trigger::ChatDeleted => usize::MAX,
    };
    for (index, trigger) in Trigger::ALL.into_iter().enumerate() {
        assert_eq!(position(trigger), index, "{trigger:?}");
    }
    assert!(!Trigger::ALL.contains(&Trigger::ChatDeleted));
    let names: std::collections::BTreeSet<&str> =
        Trigger::ALL.into_iter().map(Trigger::name).collect();
    assert_eq!(names.len(), Trigger::ALL.len());
}
