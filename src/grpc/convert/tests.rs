use super::*;
use crate::domain::settings::{Position, Role, Settings};

#[test]
fn settings_round_trip_through_the_wire() {
    let s = Settings::default();
    let wire = pb::Settings::from(&s);
    let back = Settings::default().with(&settings_patch(Some(wire)).unwrap());
    assert_eq!(back, s);
}

#[test]
fn changed_and_optional_settings_round_trip_through_the_wire() {
    let s = {
        let mut settings = Settings::default();
        settings.injection.role = Role::Assistant;
        settings.inclusion.message_recap_context_limit = Some(40);
        settings.inclusion.max_context_tokens = Some(u64::MAX);
        settings.chat.disabled_character_keys = vec!["bob".into()];
        settings.chat.debounce_ms = 0;
        settings
    };
    let wire = pb::Settings::from(&s);
    assert_eq!(wire.role, Some(pb::InjectionRole::Assistant as i32));
    assert_eq!(wire.max_context_tokens, Some(i64::MAX), "saturates");
    let back = Settings::default().with(&settings_patch(Some(wire)).unwrap());
    assert_eq!(back.inclusion.max_context_tokens, Some(i64::MAX as u64));
    assert_eq!(back, {
        let mut settings = s;
        settings.inclusion.max_context_tokens = Some(i64::MAX as u64);
        settings
    });
    // Unset optional settings are absent on the wire.
    let defaults = pb::Settings::from(&Settings::default());
    assert_eq!(defaults.max_context_tokens, None);
    assert_eq!(defaults.message_recap_context_limit, None);
}

#[test]
fn unknown_and_unspecified_enums_and_bad_numbers_are_refused_by_name() {
    let cases = [
        (
            pb::Settings {
                position: Some(99),
                ..Default::default()
            },
            "settings.position",
        ),
        (
            pb::Settings {
                position: Some(0),
                ..Default::default()
            },
            "settings.position",
        ),
        (
            pb::Settings {
                role: Some(7),
                ..Default::default()
            },
            "settings.role",
        ),
        (
            pb::Settings {
                tokenizer: Some(-1),
                ..Default::default()
            },
            "settings.tokenizer",
        ),
        (
            pb::Settings {
                depth: Some(1001),
                ..Default::default()
            },
            "depth",
        ),
        (
            pb::Settings {
                message_recap_context_limit: Some(-1),
                ..Default::default()
            },
            "settings.message_recap_context_limit",
        ),
        (
            pb::Settings {
                debounce_ms: Some(-5),
                ..Default::default()
            },
            "debounce_ms",
        ),
    ];
    for (wire, field) in cases {
        let err = settings_patch(Some(wire)).unwrap_err();
        assert!(err.to_string().contains(field), "{err} should name {field}");
    }
}

#[test]
fn world_info_settings_round_trip_and_unspecified_strategy_is_refused() {
    use crate::domain::settings::{BookNames, CharacterStrategy};
    let s = {
        let mut settings = Settings::default();
        settings.world_info.depth = 7;
        settings.world_info.character_strategy = CharacterStrategy::Evenly;
        settings.world_info.global_books = BookNames(vec!["Eldoria".into()]);
        settings.world_info.character_books = BookNames(vec![]);
        settings.world_info.chat_book = "chat lore".into();
        settings
    };
    let wire = pb::Settings::from(&s);
    assert_eq!(
        wire.world_info_character_strategy,
        Some(pb::WorldInfoCharacterStrategy::Evenly as i32)
    );
    assert_eq!(
        wire.world_info_global_books,
        Some(pb::StringList {
            values: vec!["Eldoria".into()]
        })
    );
    // An empty list is present on the wire, so an update can set it.
    assert_eq!(
        wire.world_info_character_books,
        Some(pb::StringList { values: vec![] })
    );
    let back = Settings::default().with(&settings_patch(Some(wire)).unwrap());
    assert_eq!(back, s);

    for bad in [0, 4] {
        let err = settings_patch(Some(pb::Settings {
            world_info_character_strategy: Some(bad),
            ..Default::default()
        }))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("settings.world_info_character_strategy"),
            "{err}"
        );
    }
}

#[test]
fn positions_and_roles_map_to_sillytavern_order() {
    // proto value - 2 = SillyTavern's extension_prompt_types value.
    assert_eq!(pb::InjectionPosition::from(Position::None) as i32 - 2, -1);
    assert_eq!(
        pb::InjectionPosition::from(Position::InPrompt) as i32 - 2,
        0
    );
    assert_eq!(pb::InjectionPosition::from(Position::InChat) as i32 - 2, 1);
    assert_eq!(
        pb::InjectionPosition::from(Position::BeforePrompt) as i32 - 2,
        2
    );
    assert_eq!(pb::InjectionRole::from(Role::Assistant) as i32 - 1, 2);
}

#[test]
fn an_event_without_kind_or_chat_is_refused() {
    let limits = Limits::default();
    let no_kind = pb::Event {
        chat_id: "c".into(),
        kind: None,
    };
    assert!(
        event(Some(no_kind), &limits)
            .unwrap_err()
            .to_string()
            .contains("event.kind")
    );
    let no_chat = pb::Event {
        chat_id: String::new(),
        kind: Some(pb::event::Kind::RefreshRequested(pb::RefreshRequested {})),
    };
    assert!(
        event(Some(no_chat), &limits)
            .unwrap_err()
            .to_string()
            .contains("event.chat_id")
    );
    assert!(event(None, &limits).is_err());
}

#[test]
fn timestamps_split_milliseconds() {
    assert_eq!(
        timestamp(UnixMillis(1_500)),
        Timestamp {
            seconds: 1,
            nanos: 500_000_000
        }
    );
    // Before the epoch, the nanoseconds stay positive.
    assert_eq!(
        timestamp_us(UnixMicros(-1)),
        Timestamp {
            seconds: -1,
            nanos: 999_999_000
        }
    );
}
