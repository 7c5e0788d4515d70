//! One refresh (`refresh_memory`) and the injection it produces.

use serde::{Deserialize, Serialize};

use super::autohide::auto_hide;
use super::chat::{Chat, ChatEvent};
use super::ids::ChatKey;
use super::inclusion::compute_inclusion;
use super::settings::{Position, Role, Settings};
use super::template;

/// The extension-prompt key recapd's injection is registered under.
pub const INJECTION_KEY: &str = "auto_recap_scene";
/// The key of the message-recap tier.
pub const MESSAGE_RECAPS_KEY: &str = "auto_recap_messages";

/// Which of a chat's two injections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InjectionKey {
    /// The running scene recap (`auto_recap_scene`).
    #[default]
    Scene,
    /// The message-recap tier (`auto_recap_messages`).
    Messages,
}

impl InjectionKey {
    /// The extension-prompt key.
    pub fn as_str(self) -> &'static str {
        match self {
            InjectionKey::Scene => INJECTION_KEY,
            InjectionKey::Messages => MESSAGE_RECAPS_KEY,
        }
    }

    /// The key named `name`, if it is one.
    pub fn parse(name: &str) -> Option<InjectionKey> {
        match name {
            INJECTION_KEY => Some(InjectionKey::Scene),
            MESSAGE_RECAPS_KEY => Some(InjectionKey::Messages),
            _ => None,
        }
    }
}

/// What caused a refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[allow(missing_docs)] // one per event kind, as named
pub enum Trigger {
    ChatChanged,
    MessageSent,
    MessageReceived,
    MessageEdited,
    MessageDeleted,
    MessageSwiped,
    MoreMessagesLoaded,
    /// The refresh_requested event or the Refresh RPC.
    RefreshRequested,
    /// SetMessageData or ClearMemory.
    MessageDataChanged,
    /// A settings or enable change.
    SettingsChanged,
    /// A running-recap add, select or delete.
    RunningRecapChanged,
    /// A debounced refresh that a restart found pending.
    Startup,
    /// recapd applied a recap (or a scene break) it wrote with the LLM.
    RecapGenerated,
    /// The chat was deleted (DeleteChat or `--chat-retention`): the
    /// injection that says so. Not a refresh: not in [`Trigger::ALL`].
    ChatDeleted,
}

impl Trigger {
    /// Every trigger a refresh runs with, in declaration order: the
    /// `trigger` labels the refresh counter shows from start-up.
    pub const ALL: [Trigger; 13] = [
        Trigger::ChatChanged,
        Trigger::MessageSent,
        Trigger::MessageReceived,
        Trigger::MessageEdited,
        Trigger::MessageDeleted,
        Trigger::MessageSwiped,
        Trigger::MoreMessagesLoaded,
        Trigger::RefreshRequested,
        Trigger::MessageDataChanged,
        Trigger::SettingsChanged,
        Trigger::RunningRecapChanged,
        Trigger::Startup,
        Trigger::RecapGenerated,
    ];

    /// The trigger of an event.
    pub fn of(event: &ChatEvent) -> Trigger {
        match event {
            ChatEvent::ChatChanged(_) => Trigger::ChatChanged,
            ChatEvent::MessageSent(_) => Trigger::MessageSent,
            ChatEvent::MessageReceived(_) => Trigger::MessageReceived,
            ChatEvent::MessageEdited { .. } => Trigger::MessageEdited,
            ChatEvent::MessageDeleted { .. } => Trigger::MessageDeleted,
            ChatEvent::MessageSwiped { .. } => Trigger::MessageSwiped,
            ChatEvent::MoreMessagesLoaded(_) => Trigger::MoreMessagesLoaded,
            ChatEvent::RefreshRequested => Trigger::RefreshRequested,
        }
    }

    /// The trigger's name in logs and metrics (`message_sent`...).
    pub fn name(self) -> &'static str {
        match self {
            Trigger::ChatChanged => "chat_changed",
            Trigger::MessageSent => "message_sent",
            Trigger::MessageReceived => "message_received",
            Trigger::MessageEdited => "message_edited",
            Trigger::MessageDeleted => "message_deleted",
            Trigger::MessageSwiped => "message_swiped",
            Trigger::MoreMessagesLoaded => "more_messages_loaded",
            Trigger::RefreshRequested => "refresh_requested",
            Trigger::MessageDataChanged => "message_data_changed",
            Trigger::SettingsChanged => "settings_changed",
            Trigger::RunningRecapChanged => "running_recap_changed",
            Trigger::Startup => "startup",
            Trigger::RecapGenerated => "recap_generated",
            Trigger::ChatDeleted => "chat_deleted",
        }
    }

    /// Whether the trigger waits for `debounce_ms` of quiet (a burst becomes
    /// one refresh) instead of refreshing at once.
    pub fn is_debounced(self) -> bool {
        matches!(
            self,
            Trigger::MessageSent
                | Trigger::MessageReceived
                | Trigger::MessageEdited
                | Trigger::MessageSwiped
                | Trigger::MessageDataChanged
        )
    }
}

/// The result of one refresh of one chat: what to inject and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The chat. Not stored with the injection: the row it is stored in is
    /// keyed by it, and the engine puts it back on load.
    #[serde(skip)]
    pub chat: ChatKey,
    /// Which of the chat's injections this is.
    #[serde(default)]
    pub key: InjectionKey,
    /// The injection text; empty injects nothing.
    pub text: String,
    /// Where it goes.
    pub position: Position,
    /// How deep, for IN_CHAT.
    pub depth: u32,
    /// As which role.
    pub role: Role,
    /// Whether World Info scans it.
    pub scan: bool,
    /// Whether memory was enabled for the chat.
    pub enabled: bool,
    /// +1 per refresh of the chat, never going back.
    pub revision: u64,
    /// The running-recap version the text came from.
    pub running_recap_version: Option<u32>,
    /// Tokens of `text`.
    pub token_count: u32,
    /// Length of the chat prefix auto-hide hides.
    pub auto_hidden_count: u32,
    /// What caused the refresh; `None` only for revision 0.
    pub trigger: Option<Trigger>,
    /// When it ran, in microseconds since the Unix epoch; 0 for revision 0.
    pub refreshed_at_us: i64,
    /// The chat was deleted: this is its last injection (see
    /// [`Injection::deleted`]). Never stored: a deleted chat keeps only a
    /// tombstone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

impl Injection {
    /// The answer for a chat that has never been refreshed: revision 0,
    /// empty text, placed where a refresh would place it now: as its
    /// settings say, or, when the injection is off (the chat is disabled,
    /// or for the message-recap tier the tier is off), like every disabled
    /// injection (IN_PROMPT, depth 0, SYSTEM, no scan).
    pub fn unrefreshed(
        chat: &ChatKey,
        settings: &Settings,
        enabled: bool,
        key: InjectionKey,
    ) -> Injection {
        let (position, depth, role, scan) = match key {
            InjectionKey::Scene if enabled => (
                settings.position,
                settings.depth,
                settings.role,
                settings.scan,
            ),
            InjectionKey::Messages if enabled && settings.message_recaps_enabled => (
                settings.message_recaps_position,
                settings.message_recaps_depth,
                settings.message_recaps_role,
                settings.message_recaps_scan,
            ),
            InjectionKey::Scene | InjectionKey::Messages => DISABLED_PLACE,
        };
        Injection {
            chat: chat.clone(),
            key,
            text: String::new(),
            position,
            depth,
            role,
            scan,
            enabled,
            revision: 0,
            running_recap_version: None,
            token_count: 0,
            auto_hidden_count: 0,
            trigger: None,
            refreshed_at_us: 0,
            deleted: false,
        }
    }

    /// The last injection of a deleted chat, told to its subscribers:
    /// `deleted`, empty text, placed like a disabled injection, at
    /// `revision` (the one after the chat's latest of `key`).
    pub fn deleted(chat: &ChatKey, key: InjectionKey, revision: u64, now_us: i64) -> Injection {
        let (position, depth, role, scan) = DISABLED_PLACE;
        Injection {
            chat: chat.clone(),
            key,
            text: String::new(),
            position,
            depth,
            role,
            scan,
            enabled: false,
            revision,
            running_recap_version: None,
            token_count: 0,
            auto_hidden_count: 0,
            trigger: Some(Trigger::ChatDeleted),
            refreshed_at_us: now_us,
            deleted: true,
        }
    }
}

/// Where a disabled injection is registered, as the extension does:
/// IN_PROMPT, depth 0, SYSTEM, no scan.
const DISABLED_PLACE: (Position, u32, Role, bool) = (Position::InPrompt, 0, Role::System, false);

/// What makes a refresh one of a kind: everything the chat's state does
/// not give.
#[derive(Debug, Clone, Copy)]
pub struct RefreshContext<'a> {
    /// The chat.
    pub chat: &'a ChatKey,
    /// Its effective settings.
    pub settings: &'a Settings,
    /// Whether memory is enabled for it ([`Settings::chat_enabled`]).
    pub enabled: bool,
    /// The revision the result gets.
    pub revision: u64,
    /// What caused the refresh.
    pub trigger: Trigger,
    /// The time, in microseconds since the Unix epoch.
    pub now_us: i64,
}

/// `refresh_memory`: (1) auto-hide, always; (2) a disabled chat gets empty
/// text, registered like the extension does (IN_PROMPT, depth 0, SYSTEM, no
/// scan); (3) otherwise the template applied to the current running recap,
/// at the configured place. `count_tokens` counts the text.
pub fn refresh(
    chat: &Chat,
    ctx: RefreshContext<'_>,
    count_tokens: impl FnOnce(&str) -> u32,
) -> Injection {
    let s = ctx.settings;
    let hidden = auto_hide(chat, s.auto_hide_scene_count);
    let auto_hidden_count = u32::try_from(hidden.count).unwrap_or(u32::MAX);
    let (text, position, depth, role, scan, version) = if ctx.enabled {
        let current = chat.recaps().current();
        let text = template::render(&s.template, current.map(|v| v.content.as_str()));
        let version = current.filter(|_| !text.is_empty()).map(|v| v.version);
        (text, s.position, s.depth, s.role, s.scan, version)
    } else {
        let (position, depth, role, scan) = DISABLED_PLACE;
        (String::new(), position, depth, role, scan, None)
    };
    let token_count = if text.is_empty() {
        0
    } else {
        count_tokens(&text)
    };
    Injection {
        chat: ctx.chat.clone(),
        key: InjectionKey::Scene,
        text,
        position,
        depth,
        role,
        scan,
        enabled: ctx.enabled,
        revision: ctx.revision,
        running_recap_version: version,
        token_count,
        auto_hidden_count,
        trigger: Some(ctx.trigger),
        refreshed_at_us: ctx.now_us,
        deleted: false,
    }
}

/// The message-recap tier in the same refresh: when memory is enabled for
/// the chat and `message_recaps_enabled` is on, the recaps the inclusion
/// pass includes, oldest first, one per line, through the tier's template,
/// at the tier's place; otherwise empty text (registered like a disabled
/// chat's). `ctx.revision` is the tier's own next revision.
pub fn refresh_message_recaps(
    chat: &Chat,
    ctx: RefreshContext<'_>,
    count_tokens: impl FnOnce(&str) -> u32,
) -> Injection {
    let s = ctx.settings;
    let hidden = auto_hide(chat, s.auto_hide_scene_count);
    let (text, position, depth, role, scan) = if ctx.enabled && s.message_recaps_enabled {
        let lines = compute_inclusion(chat, s);
        let recaps: Vec<String> = lines
            .iter()
            .filter(|line| line.included)
            .filter_map(|line| {
                chat.message(&line.message_id)
                    .and_then(|(_, m)| m.data().memory_text(s.show_prefill))
            })
            .collect();
        let joined = recaps.join("\n");
        let text = template::render_with(
            &s.message_recaps_template,
            template::MESSAGE_RECAPS_PLACEHOLDER,
            Some(&joined),
        );
        (
            text,
            s.message_recaps_position,
            s.message_recaps_depth,
            s.message_recaps_role,
            s.message_recaps_scan,
        )
    } else {
        let (position, depth, role, scan) = DISABLED_PLACE;
        (String::new(), position, depth, role, scan)
    };
    let token_count = if text.is_empty() {
        0
    } else {
        count_tokens(&text)
    };
    Injection {
        chat: ctx.chat.clone(),
        key: InjectionKey::Messages,
        text,
        position,
        depth,
        role,
        scan,
        enabled: ctx.enabled,
        revision: ctx.revision,
        running_recap_version: None,
        token_count,
        auto_hidden_count: u32::try_from(hidden.count).unwrap_or(u32::MAX),
        trigger: Some(ctx.trigger),
        refreshed_at_us: ctx.now_us,
        deleted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::chat::tests::msg;
    use crate::domain::message::MessageData;
    use crate::domain::recaps::NewRecap;
    use crate::domain::settings::SettingsPatch;

    static CHAT: std::sync::LazyLock<ChatKey> =
        std::sync::LazyLock::new(|| ChatKey::untenanted("c"));

    fn ctx(settings: &Settings, enabled: bool) -> RefreshContext<'_> {
        RefreshContext {
            chat: &CHAT,
            settings,
            enabled,
            revision: 7,
            trigger: Trigger::ChatChanged,
            now_us: 1,
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
            0,
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
        let room = u64::from(crate::domain::tokens::count(on.tokenizer, "fourth"));
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
}
