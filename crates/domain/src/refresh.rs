//! One refresh (`refresh_memory`) and the injection it produces.

use serde::{Deserialize, Serialize};

use super::autohide::auto_hide;
use super::chat::{Chat, ChatEvent};
use super::encoding::EncodingCache;
use super::ids::ChatKey;
use super::inclusion::compute_inclusion;
use super::settings::ExtensionPrompt;
use super::settings::{Position, Role, Settings};
use super::template;
use super::time::UnixMicros;
use super::tokens::Counter;

/// The extension-prompt key recapd's injection is registered under.
pub const INJECTION_KEY: &str = "auto_recap_scene";
/// The key of the message-recap tier.
pub const MESSAGE_RECAPS_KEY: &str = "auto_recap_messages";
/// The key of the recall tier.
pub const RECALL_KEY: &str = "auto_recap_recall";

/// Which of a chat's injections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum InjectionKey {
    /// The running scene recap (`auto_recap_scene`).
    #[default]
    Scene,
    /// The message-recap tier (`auto_recap_messages`).
    Messages,
    /// The recall tier (`auto_recap_recall`): passages of the chat's
    /// history found again (`recall`).
    Recall,
}

impl InjectionKey {
    /// The extension-prompt key.
    pub fn as_str(self) -> &'static str {
        match self {
            InjectionKey::Scene => INJECTION_KEY,
            InjectionKey::Messages => MESSAGE_RECAPS_KEY,
            InjectionKey::Recall => RECALL_KEY,
        }
    }

    /// The key named `name`, if it is one.
    pub fn parse(name: &str) -> Option<InjectionKey> {
        match name {
            INJECTION_KEY => Some(InjectionKey::Scene),
            MESSAGE_RECAPS_KEY => Some(InjectionKey::Messages),
            RECALL_KEY => Some(InjectionKey::Recall),
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
    /// recapd indexed passages of the chat for recall.
    RecallIndexed,
    /// The LLM endpoint counted texts that a refresh had to estimate (the
    /// LLM_ENDPOINT tokenizer).
    TokensCounted,
    /// A search for the recall tier of a long chat, run away from the
    /// chat's lock, finished.
    RecallSearched,
    /// The chat was deleted (DeleteChat or `--chat-retention`): the
    /// injection that says so. Not a refresh: not in [`Trigger::ALL`].
    ChatDeleted,
}

impl Trigger {
    /// Every trigger a refresh runs with, in declaration order: the
    /// `trigger` labels the refresh counter shows from start-up.
    pub const ALL: [Trigger; 16] = [
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
        Trigger::RecallIndexed,
        Trigger::TokensCounted,
        Trigger::RecallSearched,
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
            Trigger::RecallIndexed => "recall_indexed",
            Trigger::TokensCounted => "tokens_counted",
            Trigger::RecallSearched => "recall_searched",
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
    pub refreshed_at_us: UnixMicros,
    /// The chat was deleted: this is its last injection (see
    /// [`Injection::deleted`]). Never stored: a deleted chat keeps only a
    /// tombstone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
    /// This injection's wire form, encoded by the gRPC layer the first time
    /// it is served and then served as is to every reader of this revision
    /// (see [`EncodingCache`] for why it must not change once filled).
    /// Never stored; empty in a clone and in a value just built or loaded.
    #[serde(skip)]
    pub encoded: EncodingCache,
}

impl Injection {
    /// The injection as the extension prompt SillyTavern would register:
    /// its key, text, position, depth, role and scan flag.
    pub fn extension_prompt(&self) -> ExtensionPrompt {
        ExtensionPrompt {
            key: self.key.as_str().to_owned(),
            value: self.text.clone(),
            position: self.position,
            depth: self.depth,
            role: self.role,
            scan: self.scan,
        }
    }

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
                settings.injection.position,
                settings.injection.depth,
                settings.injection.role,
                settings.injection.scan,
            ),
            InjectionKey::Messages if enabled && settings.tier.enabled => (
                settings.tier.position,
                settings.tier.depth,
                settings.tier.role,
                settings.tier.scan,
            ),
            InjectionKey::Recall if enabled && settings.recall.enabled => (
                settings.recall.position,
                settings.recall.depth,
                settings.recall.role,
                settings.recall.scan,
            ),
            InjectionKey::Scene | InjectionKey::Messages | InjectionKey::Recall => DISABLED_PLACE,
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
            refreshed_at_us: UnixMicros::EPOCH,
            deleted: false,
            encoded: EncodingCache::default(),
        }
    }

    /// The last injection of a deleted chat, told to its subscribers:
    /// `deleted`, empty text, placed like a disabled injection, at
    /// `revision` (the one after the chat's latest of `key`).
    pub fn deleted(
        chat: &ChatKey,
        key: InjectionKey,
        revision: u64,
        now_us: UnixMicros,
    ) -> Injection {
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
            encoded: EncodingCache::default(),
        }
    }
}

/// Where a disabled injection is registered, as the extension does:
/// IN_PROMPT, depth 0, SYSTEM, no scan.
const DISABLED_PLACE: (Position, u32, Role, bool) = (Position::InPrompt, 0, Role::System, false);

/// Where a disabled injection is registered: IN_PROMPT, depth 0, SYSTEM,
/// no scan (position, depth, role, scan).
pub fn disabled_place() -> (Position, u32, Role, bool) {
    DISABLED_PLACE
}

/// What makes a refresh one of a kind: everything the chat's state does
/// not give.
#[derive(Debug, Clone, Copy)]
pub struct RefreshContext<'a> {
    /// The chat.
    pub chat: &'a ChatKey,
    /// Its effective settings.
    pub settings: &'a Settings,
    /// What counts its tokens (the tokenizer its settings name, as the
    /// caller resolved it).
    pub counter: &'a Counter,
    /// Whether memory is enabled for it ([`Settings::chat_enabled`]).
    pub enabled: bool,
    /// The revision the result gets.
    pub revision: u64,
    /// What caused the refresh.
    pub trigger: Trigger,
    /// The time, in microseconds since the Unix epoch.
    pub now_us: UnixMicros,
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
    let hidden = auto_hide(chat, s.inclusion.auto_hide_scene_count);
    let auto_hidden_count = u32::try_from(hidden.count).unwrap_or(u32::MAX);
    let (text, position, depth, role, scan, version) = if ctx.enabled {
        let current = chat.recaps().current();
        let text = template::render(&s.injection.template, current.map(|v| v.content.as_str()));
        let version = current.filter(|_| !text.is_empty()).map(|v| v.version);
        (
            text,
            s.injection.position,
            s.injection.depth,
            s.injection.role,
            s.injection.scan,
            version,
        )
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
        encoded: EncodingCache::default(),
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
    let hidden = auto_hide(chat, s.inclusion.auto_hide_scene_count);
    let (text, position, depth, role, scan) = if ctx.enabled && s.tier.enabled {
        let lines = compute_inclusion(chat, s, ctx.counter);
        let recaps: Vec<String> = lines
            .iter()
            .filter(|line| line.included)
            .filter_map(|line| {
                chat.message(&line.message_id)
                    .and_then(|(_, m)| m.data().memory_text(s.inclusion.show_prefill))
            })
            .collect();
        let joined = recaps.join("\n");
        let text = template::render_with(
            &s.tier.template,
            template::MESSAGE_RECAPS_PLACEHOLDER,
            Some(&joined),
        );
        (
            text,
            s.tier.position,
            s.tier.depth,
            s.tier.role,
            s.tier.scan,
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
        encoded: EncodingCache::default(),
    }
}

#[cfg(test)]
mod tests;
