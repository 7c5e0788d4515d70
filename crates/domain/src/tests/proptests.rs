//! Property tests: random sequences of events, data changes, recap changes
//! and settings never make the domain panic, and its invariants hold after
//! every step.

use crate::time::{UnixMicros, UnixMillis};
use proptest::prelude::*;

use crate::Limits;
use crate::autohide::auto_hide;
use crate::chat::{Chat, ChatEvent};
use crate::inclusion::{Exclusion, compute_inclusion};
use crate::message::{MessageData, NewMessage};
use crate::recaps::NewRecap;
use crate::refresh::{RefreshContext, Trigger, refresh};
use crate::settings::{ContextType, Settings, SettingsPatch};
use crate::tokens::{self};

/// One step a client could cause.
#[derive(Debug, Clone)]
enum Step {
    Event(ChatEvent),
    Data(usize, MessageData),
    Clear(usize),
    AddRecap(Option<usize>),
    SelectRecap(u32),
    DeleteRecap(u32),
    Settings(Box<SettingsPatch>),
}

fn id(n: usize) -> String {
    format!("m{}", n % 12)
}

fn new_message(
    n: usize,
    text: String,
    swipes: usize,
    hidden: bool,
    user: bool,
) -> crate::message::Message {
    NewMessage {
        id: id(n),
        text,
        hidden,
        is_user: user,
        swipes: (0..swipes).map(|i| format!("swipe {i}")).collect(),
        swipe_id: 0,
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("generated messages are valid")
}

fn message() -> impl Strategy<Value = crate::message::Message> {
    (
        0usize..12,
        "[a-z .\n]{0,20}",
        0usize..3,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(n, text, swipes, hidden, user)| new_message(n, text, swipes, hidden, user))
}

fn data() -> impl Strategy<Value = MessageData> {
    (
        proptest::option::of("[a-z ]{0,12}"),
        proptest::option::of(any::<bool>()),
        proptest::option::of(any::<bool>()),
        proptest::option::of(any::<bool>()),
        proptest::option::of("[a-z]{0,5}"),
    )
        .prop_map(
            |(memory, exclude, scene_break, visible, scene_recap)| MessageData {
                memory,
                exclude,
                scene_break,
                scene_break_visible: visible,
                scene_recap_memory: scene_recap,
                ..Default::default()
            },
        )
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        proptest::collection::vec(message(), 0..6)
            .prop_map(|m| Step::Event(ChatEvent::ChatChanged(m))),
        message().prop_map(|m| Step::Event(ChatEvent::MessageSent(m))),
        message().prop_map(|m| Step::Event(ChatEvent::MessageReceived(m))),
        (0usize..12, "[a-z ]{0,10}").prop_map(|(n, text)| Step::Event(ChatEvent::MessageEdited {
            message_id: id(n),
            text
        })),
        (0usize..12).prop_map(|n| Step::Event(ChatEvent::MessageDeleted { message_id: id(n) })),
        (0usize..12, 0u32..4, "[a-z]{0,5}").prop_map(|(n, swipe_id, text)| Step::Event(
            ChatEvent::MessageSwiped {
                message_id: id(n),
                swipe_id,
                text
            }
        )),
        proptest::collection::vec(message(), 0..3)
            .prop_map(|m| Step::Event(ChatEvent::MoreMessagesLoaded(m))),
        Just(Step::Event(ChatEvent::RefreshRequested)),
        (0usize..12, data()).prop_map(|(n, d)| Step::Data(n, d)),
        (0usize..12).prop_map(Step::Clear),
        proptest::option::of(0usize..12).prop_map(Step::AddRecap),
        (0u32..6).prop_map(Step::SelectRecap),
        (0u32..6).prop_map(Step::DeleteRecap),
        (
            proptest::option::of(0u64..40),
            proptest::option::of(0u32..4),
            any::<bool>()
        )
            .prop_map(|(limit, hide, percent)| {
                Step::Settings(Box::new(SettingsPatch {
                    message_recap_context_limit: limit,
                    message_recap_context_type: Some(if percent {
                        ContextType::Percent
                    } else {
                        ContextType::Absolute
                    }),
                    max_context_tokens: Some(200),
                    auto_hide_scene_count: hide,
                    ..Default::default()
                }))
            }),
    ]
}

fn apply(chat: &mut Chat, settings: &mut Settings, step: Step) {
    // Refusals are fine; panics and broken invariants are not.
    let _ = match step {
        Step::Event(event) => chat.apply(event).map(drop),
        Step::Data(n, d) => chat.set_message_data(&id(n), &d).map(drop),
        Step::Clear(n) => chat.clear_memory(&id(n)).map(drop),
        Step::AddRecap(scene) => chat
            .add_recap(
                NewRecap {
                    content: "recap".into(),
                    new_scene_message_id: scene.map(id),
                    ..Default::default()
                },
                UnixMillis(0),
            )
            .map(drop),
        Step::SelectRecap(v) => chat.select_recap(v).map(drop),
        Step::DeleteRecap(v) => chat.delete_recap(v).map(drop),
        Step::Settings(patch) => {
            *settings = settings.with(&patch);
            Ok(())
        }
    };
}

fn check_invariants(chat: &Chat, settings: &Settings) {
    // The running footprint equals a count from scratch.
    assert_eq!(chat.resident_bytes(), chat.resident_bytes_recounted());
    // Ids are unique and each message is found by its id.
    let ids: Vec<&str> = chat.messages().map(|(_, m)| m.id.as_str()).collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len());
    for (seq, m) in chat.messages() {
        assert_eq!(chat.message(&m.id).map(|(s, _)| s), Some(seq));
        assert!(m.current_swipe() < m.swipes.len());
    }
    // Recap versions are unique and the current one exists.
    let versions: Vec<u32> = chat.recaps().versions().map(|v| v.version).collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]));
    if let Some(current) = chat.recaps().current_version() {
        assert!(versions.contains(&current));
    } else {
        assert!(versions.is_empty());
    }
    // Auto-hide hides a prefix.
    let hidden = auto_hide(chat, settings.inclusion.auto_hide_scene_count);
    let flags: Vec<bool> = chat.messages().map(|(seq, _)| hidden.hides(seq)).collect();
    assert!(
        flags.windows(2).all(|w| w[0] || !w[1]),
        "auto-hide is a prefix: {flags:?}"
    );
    assert_eq!(flags.iter().filter(|h| **h).count(), hidden.count);
    // Inclusion obeys the budget and stops at the first memory over it.
    let lines = compute_inclusion(chat, settings, &crate::tokens::Counter::default());
    if let Some(limit) = settings.token_limit() {
        let included: Vec<String> = lines
            .iter()
            .rev()
            .filter(|l| l.included)
            .map(|l| {
                chat.message(&l.message_id)
                    .and_then(|(_, m)| m.data().memory_text(settings.inclusion.show_prefill))
                    .unwrap_or_default()
            })
            .collect();
        let joined = included.join("\n");
        assert!(u64::from(tokens::count(settings.inclusion.tokenizer, &joined)) <= limit);
        let mut limit_hit = false;
        for line in lines.iter().rev() {
            if line.excluded == Some(Exclusion::TokenLimit) {
                limit_hit = true;
            }
            assert!(
                !(limit_hit && line.included),
                "nothing older than the budget's end is included"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: super::proptest_cases(200), ..ProptestConfig::default() })]

    #[test]
    fn random_steps_keep_every_invariant(steps in proptest::collection::vec(step(), 1..40)) {
        let mut chat = Chat::default();
        let mut settings = Settings::default();
        let mut revision = 0;
        for step in steps {
            apply(&mut chat, &mut settings, step);
            check_invariants(&chat, &settings);
            let ctx = RefreshContext { counter: &crate::tokens::Counter::default(), chat: &crate::ids::ChatKey::untenanted("c"), settings: &settings, enabled: true, revision: revision + 1, trigger: Trigger::RefreshRequested, now_us: UnixMicros(0) };
            let injection = refresh(&chat, ctx, |t| tokens::count(settings.inclusion.tokenizer, t));
            prop_assert_eq!(injection.revision, revision + 1);
            revision = injection.revision;
            prop_assert_eq!(injection.auto_hidden_count as usize, auto_hide(&chat, settings.inclusion.auto_hide_scene_count).count);
        }
    }
}
