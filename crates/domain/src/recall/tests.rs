//! The recall index and tier as a user sees them: what is found, what is
//! left out, and what the injection says.

use super::MAX_HITS;
use super::index::RecallIndex;
use super::search::RecallQuery;
use super::tier::{AlreadyInjected, moment_hits, refresh_recall, tier_lines};
use super::{ChunkKey, Source, StoredVector};
use crate::chat::{Chat, ChatEvent};
use crate::ids::ChatKey;
use crate::message::{Message, MessageData, NewMessage};
use crate::refresh::{InjectionKey, RefreshContext, Trigger};
use crate::settings::{Milli, Settings};
use crate::time::UnixMicros;

mod fusion;
mod timing;

fn message(id: &str, name: &str, text: &str) -> Message {
    NewMessage {
        id: id.into(),
        name: name.into(),
        text: text.into(),
        ..NewMessage::default()
    }
    .build("message", &crate::Limits::default())
    .expect("a valid message")
}

fn story() -> Chat {
    let lines = [
        (
            "m1",
            "Mira",
            "We took rooms at the Gilded Goose, the inn by the river.",
        ),
        (
            "m2",
            "Tomas",
            "The innkeeper gave me a letter sealed with green wax.",
        ),
        (
            "m3",
            "Mira",
            "I promised to keep the letter closed until the full moon.",
        ),
        ("m4", "Tomas", "The road north climbs into the hills."),
        ("m5", "Mira", "Wolves howled all night."),
        ("m6", "Tomas", "What did the sealed letter say?"),
    ];
    let mut chat = Chat::default();
    for (id, name, text) in lines {
        chat.apply(ChatEvent::MessageSent(message(id, name, text)))
            .expect("appends");
    }
    chat
}

fn settings() -> Settings {
    {
        let mut settings = Settings::default();
        settings.recall.enabled = true;
        settings.recall.query_messages = 1;
        settings.recall.exclude_recent = 1;
        settings
    }
}

/// A vector of model "toy" for each message of `chat`, `vector` of its id.
fn toy_vectors(chat: &Chat, vector: impl Fn(&str) -> Vec<f32>) -> Vec<StoredVector> {
    chat.messages()
        .map(|(_, m)| StoredVector {
            key: ChunkKey {
                message_id: m.id.clone(),
                source: Source::Message,
                part: 0,
            },
            fingerprint: super::input_fingerprint(Some(m.name.as_str()), m.text()),
            model: "toy".into(),
            vector: vector(&m.id),
        })
        .collect()
}

fn ids(hits: &[super::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.key.message_id.as_str()).collect()
}

#[test]
fn keyword_search_finds_the_letter_and_leaves_out_the_recent_window() {
    let chat = story();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    assert_eq!(index.chunk_count(), 6);
    assert_eq!(index.missing_count(), 6, "no vector yet");
    let hits = moment_hits(&chat, &index, &settings(), 10);
    // The query is m6 ("What did the sealed letter say?"), which the
    // recent window (1 message) leaves out itself.
    assert_eq!(ids(&hits)[..2], ["m2", "m3"]);
    assert!(!ids(&hits).contains(&"m6"));
    assert!(hits[0].score <= 1.0 && hits[0].score > hits[1].score);
    assert_eq!(hits[0].vector_score, None);
}

#[test]
fn vectors_rank_by_meaning_and_fuse_with_keywords() {
    let chat = story();
    // A toy space: axis 0 "letters", axis 1 "travel".
    let vector = |id: &str| match id {
        "m2" | "m3" | "m6" => vec![1.0, 0.1],
        _ => vec![0.1, 1.0],
    };
    let index = RecallIndex::build(&chat, 1000, "toy", toy_vectors(&chat, vector));
    assert_eq!(index.missing_count(), 0);
    let hits = index.search(
        &chat,
        &RecallQuery {
            text: "",
            vector: Some(&[0.0, 1.0]),
            exclude_from_seq: None,
            exclude_ids: &[],
            limit: 3,
            min_score: 0.0,
            min_similarity: 0.5,
        },
    );
    assert_eq!(hits.len(), 3, "only the travel passages pass the floor");
    assert!(ids(&hits).iter().all(|id| ["m1", "m4", "m5"].contains(id)));
    // Both rankings agree on m2/m3 for the moment's query: it is first.
    let hits = moment_hits(&chat, &index, &settings(), 10);
    assert!(["m2", "m3"].contains(&ids(&hits)[0]));
    assert!(hits[0].vector_score.is_some_and(|s| s > 0.9));
}

#[test]
fn an_edit_drops_the_chunk_vector_and_a_stale_vector_is_refused() {
    let mut chat = story();
    let stored = vec![StoredVector {
        key: ChunkKey {
            message_id: "m2".into(),
            source: Source::Message,
            part: 0,
        },
        fingerprint: super::input_fingerprint(
            Some("Tomas"),
            "The innkeeper gave me a letter sealed with green wax.",
        ),
        model: "toy".into(),
        vector: vec![1.0, 0.0],
    }];
    let mut index = RecallIndex::build(&chat, 1000, "toy", stored.clone());
    assert_eq!(index.vector_count(), 1);
    chat.apply(ChatEvent::MessageEdited {
        message_id: "m2".into(),
        text: "The innkeeper gave me a parcel.".into(),
    })
    .expect("edits");
    index.mark("m2");
    index.sync(&chat, 1000, "toy");
    assert_eq!(index.vector_count(), 0, "the old text's vector is gone");
    assert!(!index.attach(&stored[0].key, stored[0].fingerprint, &[1.0, 0.0]));
    let pending = index.missing(&chat, 100);
    let m2 = pending
        .iter()
        .find(|p| p.key.message_id == "m2")
        .expect("m2 needs a vector again");
    assert_eq!(
        m2.text, "Tomas: The innkeeper gave me a parcel.",
        "a message's passage is embedded after its speaker's name"
    );
    assert!(index.attach(&m2.key, m2.fingerprint, &[1.0, 0.0]));
    assert_eq!(pending[0].key.message_id, "m6", "newest first");
    // An unchanged message cut again keeps its vector.
    index.mark("m2");
    index.sync(&chat, 1000, "toy");
    assert_eq!(index.vector_count(), 1);
    // Another model's vectors do not count.
    index.sync(&chat, 1000, "other");
    assert_eq!(index.vector_count(), 0);
}

#[test]
fn deleted_and_hidden_messages_are_not_found() {
    let mut chat = story();
    let mut index = RecallIndex::build(&chat, 1000, "", Vec::new());
    chat.apply(ChatEvent::MessageDeleted {
        message_id: "m2".into(),
    })
    .expect("deletes");
    index.mark("m2");
    index.sync(&chat, 1000, "");
    let hits = moment_hits(&chat, &index, &settings(), 10);
    assert!(!ids(&hits).contains(&"m2"));
    assert_eq!(index.chunk_count(), 5);
}

#[test]
fn scene_recaps_are_found_under_their_scene_break() {
    let mut chat = story();
    chat.set_message_data(
        "m4",
        &MessageData {
            scene_break: Some(true),
            scene_recap_memory: Some("They argued about the green wax seal.".into()),
            ..MessageData::default()
        },
    )
    .expect("sets data");
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let hits = moment_hits(
        &chat,
        &index,
        &{
            let mut settings = settings();
            settings.recall.min_score = Milli(0);
            settings
        },
        10,
    );
    let recap = hits
        .iter()
        .find(|h| h.key.source == Source::SceneRecap)
        .expect("the scene recap is found");
    assert_eq!(recap.key.message_id, "m4");
}

#[test]
fn the_tier_fits_its_budget_and_goes_where_its_settings_say() {
    let chat = story();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let key = ChatKey::default();
    let s = {
        let mut settings = settings();
        settings.recall.max_tokens = 15;
        settings.recall.template = "Recalled:\n{{recall}}".into();
        settings
    };
    let ctx = RefreshContext {
        counter: &crate::tokens::Counter::default(),
        chat: &key,
        settings: &s,
        enabled: true,
        revision: 3,
        trigger: Trigger::MessageSent,
        now_us: UnixMicros(5),
    };
    let count = |t: &str| t.split_whitespace().count() as u32;
    let lines = |chat: &Chat, s: &Settings| {
        Some(tier_lines(
            chat,
            moment_hits(chat, &index, s, MAX_HITS),
            &AlreadyInjected::default(),
        ))
    };
    let tier = refresh_recall(&chat, lines(&chat, &s), ctx, count);
    assert_eq!(tier.key, InjectionKey::Recall);
    assert_eq!(
        tier.text,
        "Recalled:\nTomas: The innkeeper gave me a letter sealed with green wax."
    );
    assert_eq!(
        (tier.position, tier.depth),
        (s.recall.position, s.recall.depth)
    );
    let off = {
        let mut settings = s.clone();
        settings.recall.enabled = false;
        settings
    };
    let tier = refresh_recall(
        &chat,
        lines(&chat, &off),
        RefreshContext {
            counter: &crate::tokens::Counter::default(),
            settings: &off,
            ..ctx
        },
        count,
    );
    assert!(tier.text.is_empty());
    let nothing = refresh_recall(&Chat::default(), Some(Vec::new()), ctx, count);
    assert!(nothing.text.is_empty(), "no hits inject nothing");
}

/// A keyword query for `text`, ten hits, no thresholds, nothing left out.
fn words(text: &str) -> RecallQuery<'_> {
    RecallQuery {
        text,
        vector: None,
        exclude_from_seq: None,
        exclude_ids: &[],
        limit: 10,
        min_score: 0.0,
        min_similarity: 0.0,
    }
}

#[test]
fn the_generation_moves_with_every_change_a_search_could_see() {
    let mut chat = story();
    let mut index = RecallIndex::build(&chat, 1000, "m", Vec::new());
    let query = words("sealed letter");
    let generation = index.generation();
    let first = index.candidates(&query);
    assert_eq!(ids(&first.hits(&chat))[..2], ["m6", "m2"]);
    // A sync with nothing marked changes nothing.
    index.sync(&chat, 1000, "m");
    assert_eq!(index.generation(), generation);
    assert_eq!(index.candidates(&query), first);
    // An edit cuts the message again: a new generation, and the next
    // search sees it.
    chat.apply(ChatEvent::MessageEdited {
        message_id: "m4".into(),
        text: "Another sealed letter, sealed twice: a sealed letter.".into(),
    })
    .expect("edits");
    index.mark("m4");
    index.sync(&chat, 1000, "m");
    let edited = index.generation();
    assert_ne!(edited, generation);
    assert_eq!(ids(&index.search(&chat, &query))[0], "m4");
    // So does a vector attached since.
    let with_vector = RecallQuery {
        vector: Some(&[1.0, 0.0]),
        ..query
    };
    let before = index.search(&chat, &with_vector);
    assert!(before.iter().all(|h| h.vector_score.is_none()));
    let key = ChunkKey {
        message_id: "m5".into(),
        source: Source::Message,
        part: 0,
    };
    let fingerprint = super::input_fingerprint(Some("Mira"), "Wolves howled all night.");
    assert!(index.accepts(&key, fingerprint, 2));
    assert!(!index.accepts(&key, fingerprint + 1, 2));
    assert!(index.attach(&key, fingerprint, &[1.0, 0.0]));
    assert_ne!(index.generation(), edited);
    assert!(
        !index.accepts(&key, fingerprint, 3),
        "the index holds 2 dimensions now"
    );
    let after = index.search(&chat, &with_vector);
    let m5 = after
        .iter()
        .find(|h| h.key.message_id == "m5")
        .expect("found by its vector");
    assert!(m5.vector_score.is_some_and(|s| s > 0.99));
}

#[test]
fn candidates_ranked_before_an_edit_leave_the_edited_passage_out() {
    let mut chat = story();
    let index = RecallIndex::build(&chat, 1000, "m", Vec::new());
    let query = words("sealed letter");
    let candidates = index.candidates(&query);
    assert_eq!(ids(&candidates.hits(&chat))[..2], ["m6", "m2"]);
    // The chat changes while the (snapshot's) candidates wait: the edited
    // passage is not read with its new text under its old rank.
    chat.apply(ChatEvent::MessageEdited {
        message_id: "m6".into(),
        text: "Nothing about it any more.".into(),
    })
    .expect("edits");
    let hits = candidates.hits(&chat);
    assert_eq!(ids(&hits)[0], "m2");
    assert!(hits.iter().all(|h| h.key.message_id != "m6"));
}

#[test]
fn a_vector_of_the_bare_text_is_computed_again_with_the_speaker() {
    // Before the speaker's name was embedded with a message's passage,
    // vectors were stored for the bare text: such a vector no longer
    // matches, so the chat is indexed again rather than ranked on it.
    let chat = story();
    let key = ChunkKey {
        message_id: "m5".into(),
        source: Source::Message,
        part: 0,
    };
    let bare = StoredVector {
        key: key.clone(),
        fingerprint: crate::jobs::fingerprint_text("Wolves howled all night."),
        model: "toy".into(),
        vector: vec![1.0, 0.0],
    };
    let index = RecallIndex::build(&chat, 1000, "toy", vec![bare.clone()]);
    assert_eq!(index.vector_count(), 0);
    let pending = index.missing(&chat, 100);
    let m5 = pending
        .iter()
        .find(|p| p.key == key)
        .expect("m5 is asked again");
    assert_eq!(m5.text, "Mira: Wolves howled all night.");
    assert_eq!(
        m5.fingerprint,
        crate::jobs::fingerprint_text("Mira: Wolves howled all night."),
        "the fingerprint is that of what the endpoint is asked for"
    );
    let named = StoredVector {
        fingerprint: m5.fingerprint,
        ..bare
    };
    let index = RecallIndex::build(&chat, 1000, "toy", vec![named]);
    assert_eq!(index.vector_count(), 1, "the named text's vector is kept");
}

#[test]
fn a_speakers_name_finds_their_lines() {
    let chat = story();
    let index = RecallIndex::build(&chat, 1000, "", Vec::new());
    let query = words;
    // m2 (Tomas) and m3 (Mira) both speak of the letter: the name decides
    // which comes first.
    let rank = |hits: &[super::Hit], id: &str| {
        ids(hits)
            .iter()
            .position(|h| *h == id)
            .expect("both letters are found")
    };
    let hits = index.search(&chat, &query("the letter Tomas got"));
    assert!(rank(&hits, "m2") < rank(&hits, "m3"), "{:?}", ids(&hits));
    let hits = index.search(&chat, &query("the letter Mira keeps"));
    assert!(rank(&hits, "m3") < rank(&hits, "m2"), "{:?}", ids(&hits));
    let hits = index.search(&chat, &query("Tomas"));
    assert_eq!(ids(&hits).len(), 3, "his three lines: {:?}", ids(&hits));
    assert!(ids(&hits).iter().all(|id| ["m2", "m4", "m6"].contains(id)));
    assert_eq!(
        hits[0].text.split_once(':').map(|(name, _)| name),
        None,
        "the passage is the message's text, without the name"
    );
}

#[test]
fn the_querys_own_messages_and_the_recent_window_are_left_out_by_both_rankings() {
    let mut chat = story();
    // Every message on one axis: the vector ranking finds them all.
    let stored = |chat: &Chat| toy_vectors(chat, |_| vec![1.0, 0.1]);
    let mut index = RecallIndex::build(&chat, 1000, "toy", stored(&chat));
    let seq = |chat: &Chat, id: &str| chat.message(id).map(|(seq, _)| seq);
    let search = |chat: &Chat, index: &RecallIndex, exclude_from_seq, exclude_ids| {
        let hits = index.search(
            chat,
            &RecallQuery {
                vector: Some(&[1.0, 0.0]),
                exclude_from_seq,
                exclude_ids,
                ..words("the sealed letter")
            },
        );
        ids(&hits)
            .iter()
            .map(|id| (*id).to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(search(&chat, &index, None, &[]).len(), 6);
    // m2 by its id, m3 and after by the window: m1 alone is left, found
    // by its vector only.
    assert_eq!(search(&chat, &index, seq(&chat, "m3"), &["m2"]), ["m1"]);
    // A slot freed by a deletion and taken by a new message: the new one
    // is its own message, left out by its id, and the window moves on.
    chat.apply(ChatEvent::MessageDeleted {
        message_id: "m1".into(),
    })
    .expect("deletes");
    chat.apply(ChatEvent::MessageSent(message(
        "m7",
        "Mira",
        "Another sealed letter came at dawn.",
    )))
    .expect("appends");
    index.mark("m1");
    index.mark("m7");
    index.sync(&chat, 1000, "toy");
    for key in stored(&chat) {
        index.attach(&key.key, key.fingerprint, &key.vector);
    }
    let found = search(&chat, &index, None, &["m7", "m6"]);
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(
        !found
            .iter()
            .any(|id| ["m1", "m6", "m7"].contains(&id.as_str()))
    );
    assert_eq!(search(&chat, &index, seq(&chat, "m7"), &[]).len(), 5);
}
