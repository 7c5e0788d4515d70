use super::*;
use crate::chat::ChatEvent;
use crate::chat::tests::msg;

fn chat_of(texts: &[&str]) -> Chat {
    let mut chat = Chat::default();
    let messages = texts
        .iter()
        .enumerate()
        .map(|(i, text)| msg(&format!("m{i}"), text))
        .collect();
    chat.apply(ChatEvent::ChatChanged(messages))
        .expect("a valid chat");
    chat
}

#[test]
fn terminal_states_are_the_four_ends() {
    let terminal: Vec<_> = JobState::ALL
        .into_iter()
        .filter(|s| s.is_terminal())
        .collect();
    assert_eq!(
        terminal,
        [
            JobState::Succeeded,
            JobState::Failed,
            JobState::Cancelled,
            JobState::Discarded
        ]
    );
}

#[test]
fn codes_round_trip() {
    for kind in JobKind::ALL {
        assert_eq!(JobKind::from_code(kind.code()), Some(kind));
    }
    for state in JobState::ALL {
        assert_eq!(JobState::from_code(state.code()), Some(state));
    }
    assert_eq!(JobState::from_code(0), None);
}

#[test]
fn clip_cuts_at_a_character_not_a_byte() {
    assert_eq!(clip("héllo", 2), "hé…");
    assert_eq!(clip("héllo", 5), "héllo");
    assert_eq!(clip("", 0), "");
}

#[test]
fn fingerprint_is_stable_across_builds() {
    // FNV-1a of "a": a published test vector.
    assert_eq!(fingerprint_text("a"), 0xaf63_dc4c_8601_ec8c);
}

#[test]
fn an_edit_hide_or_swipe_changes_what_was_read_but_a_new_message_does_not() {
    let mut chat = chat_of(&["one", "two"]);
    let read = ReadSet {
        messages: chat
            .messages()
            .map(|(_, m)| (m.id.to_string(), fingerprint(m)))
            .collect(),
        ..ReadSet::default()
    };
    assert!(messages_unchanged(&read, &chat));
    chat.apply(ChatEvent::MessageSent(msg("m2", "three")))
        .expect("a new message");
    assert!(
        messages_unchanged(&read, &chat),
        "appended messages do not matter"
    );
    let mut edited = chat.clone();
    edited
        .apply(ChatEvent::MessageEdited {
            message_id: "m1".into(),
            text: "changed".into(),
        })
        .expect("an edit");
    assert!(!messages_unchanged(&read, &edited));
    let mut deleted = chat.clone();
    deleted
        .apply(ChatEvent::MessageDeleted {
            message_id: "m0".into(),
        })
        .expect("a delete");
    assert!(!messages_unchanged(&read, &deleted));
}

#[test]
fn backoff_doubles_to_its_cap_and_honours_retry_after() {
    let ms = Duration::from_millis;
    let policy = Backoff::default();
    assert_eq!(retry_pause(&policy, 1, 1.0, None), ms(1000));
    assert_eq!(retry_pause(&policy, 2, 1.0, None), ms(2000));
    assert_eq!(retry_pause(&policy, 3, 1.0, None), ms(4000));
    assert_eq!(retry_pause(&policy, 30, 1.0, None), ms(60_000));
    assert_eq!(retry_pause(&policy, 3, 0.5, None), ms(2000));
    assert_eq!(retry_pause(&policy, 3, 0.0, None), ms(0));
    assert_eq!(retry_pause(&policy, 1, 0.1, Some(ms(5000))), ms(5000));
}

#[test]
fn lore_work_is_the_same_only_for_the_same_entity_of_the_same_scene() {
    let key = ChatKey::untenanted("c");
    let mut merge = Job::new(
        "j".into(),
        key,
        JobKind::LoreMerge,
        "m9".into(),
        UnixMicros(0),
        true,
    );
    merge.subject = "character-alice".into();
    assert!(merge.same_work(JobKind::LoreMerge, "m9", "character-alice"));
    // Another entity of the scene, or the same entity in another scene, is
    // other work: a scene's facts are never dropped as a duplicate.
    assert!(!merge.same_work(JobKind::LoreMerge, "m9", "location-inn"));
    assert!(!merge.same_work(JobKind::LoreMerge, "m12", "character-alice"));
    assert!(!merge.same_work(JobKind::LoreResolve, "m9", "character-alice"));
    merge.state = JobState::Succeeded;
    assert!(!merge.same_work(JobKind::LoreMerge, "m9", "character-alice"));
}

#[test]
fn a_lore_task_survives_the_store_round_trip() {
    let key = ChatKey::untenanted("c");
    let mut job = Job::new(
        "j".into(),
        key,
        JobKind::LoreMerge,
        "m9".into(),
        UnixMicros(0),
        true,
    );
    job.subject = "character-alice".into();
    job.lore = Some(crate::lore::LoreTask {
        entity: Some(crate::lore::Entity {
            kind: "character".into(),
            name: "Alice".into(),
            keywords: vec!["the smith".into()],
            content: vec!["Alice is a smith.".into()],
        }),
        uid: Some("3".into()),
        candidates: vec![],
        compacted: true,
    });
    let text = serde_json::to_string(&job).expect("a job serialises");
    let mut back: Job = serde_json::from_str(&text).expect("and reads back");
    back.chat = job.chat.clone();
    assert_eq!(back, job);
    // A job stored before lore existed reads with no subject and no task.
    let old = text.replace(r#","subject":"character-alice""#, "").replace(
        &format!(r#","lore":{}"#, serde_json::to_string(&job.lore).unwrap()),
        "",
    );
    let old: Job = serde_json::from_str(&old).expect("an older job reads");
    assert!(old.subject.is_empty() && old.lore.is_none());
}
