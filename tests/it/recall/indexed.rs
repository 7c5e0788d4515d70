//! What recall indexes: every message not hidden by hand and not one of
//! the extension's memory messages, with text, auto-hidden ones included,
//! cut into passages of at most `recall_chunk_chars` on sentence
//! boundaries; and the scene recap of each visible scene break, recalled
//! as it is.

use recapd::grpc::pb;

use super::*;
use crate::common::api::set_data;

const FIRST: &str = "The captain hid the map under the floorboards.";
const SECOND: &str = "Nobody saw where the silver compass went.";
const THIRD: &str = "Later the cook found a jar of pickled plums.";
const SCENE_RECAP: &str = "Recap: the crew buried a golden idol by the mill.";

fn chat() -> Vec<pb::Message> {
    let mut hidden = line(1, "A whisper about the emerald crown.");
    hidden.hidden = true;
    vec![
        line(0, &format!("{FIRST} {SECOND} {THIRD}")),
        hidden,
        line(2, "Memory of the extension about the ruby dagger."),
        line(3, "The scene ends at the old mill."),
        line(4, "   "),
        line(5, "A quiet scene about the topaz ring."),
        line(6, "Where did we leave the golden idol?"),
        line(7, "And who took the silver compass?"),
    ]
}

/// The message ids and parts of the hits for `query`.
async fn found(server: &Server, query: &str) -> Vec<(String, u32, bool, String)> {
    recall(server, "indexed", query)
        .await
        .hits
        .into_iter()
        .map(|h| (h.message_id, h.part, h.scene_recap, h.text))
        .collect()
}

#[tokio::test]
async fn messages_are_cut_on_sentences_hidden_ones_and_memory_messages_left_out_scene_recaps_kept()
{
    let (_dir, mut server) = start_keyword().await;
    let settings = pb::Settings {
        recall_enabled: Some(true),
        recall_chunk_chars: Some(60),
        recall_exclude_recent: Some(2),
        auto_hide_scene_count: Some(1),
        ..Default::default()
    };
    open(&mut server, "indexed", chat(), settings).await;
    let memory = pb::MessageData {
        is_auto_recap_system_memory: Some(true),
        ..Default::default()
    };
    set_data(&mut server, "indexed", "m2", memory).await;
    let visible_break = pb::MessageData {
        scene_break: Some(true),
        scene_break_visible: Some(true),
        scene_recap_memory: Some(SCENE_RECAP.into()),
        ..Default::default()
    };
    set_data(&mut server, "indexed", "m3", visible_break).await;
    let invisible_break = pb::MessageData {
        scene_break: Some(true),
        scene_break_visible: Some(false),
        scene_recap_memory: Some("Recap: a hidden scene about the topaz ring.".into()),
        ..Default::default()
    };
    set_data(&mut server, "indexed", "m5", invisible_break).await;
    crate::common::api::refresh(&mut server, "indexed")
        .await
        .expect("refreshed");
    let injection = tier(&mut server, "indexed").await;
    assert_eq!(
        injection.auto_hidden_count, 4,
        "m0..=m3 are auto-hidden by the visible break"
    );

    // One passage a sentence (each under 60 characters, two over it).
    for (query, part, sentence) in [
        ("silver compass went", 1, SECOND),
        ("pickled plums", 2, THIRD),
        ("captain floorboards", 0, FIRST),
    ] {
        let hits = found(&server, query).await;
        assert!(
            hits.contains(&("m0".into(), part, false, sentence.into())),
            "{query:?}: {hits:?}"
        );
        assert!(
            hits.iter()
                .filter(|(id, ..)| id == "m0")
                .all(|(_, _, _, text)| [FIRST, SECOND, THIRD].contains(&text.as_str())),
            "{query:?}: {hits:?}"
        );
    }
    // The visible break's scene recap, as it is; not the invisible one's.
    assert!(found(&server, "golden idol").await.contains(&(
        "m3".into(),
        0,
        true,
        SCENE_RECAP.into()
    )));
    let topaz = found(&server, "topaz ring").await;
    assert!(
        topaz.iter().all(|(_, _, scene, _)| !scene),
        "an invisible break's recap is not indexed: {topaz:?}"
    );
    // Hidden by hand, a memory message of the extension, white space.
    for (query, left_out) in [("emerald crown", "m1"), ("ruby dagger", "m2")] {
        let hits = found(&server, query).await;
        assert!(
            hits.iter().all(|(id, ..)| id != left_out),
            "{left_out} is not indexed: {hits:?}"
        );
    }

    // The tier: the scene recap as it is, a message's passage after its
    // speaker's name; the last two messages (the query) left out.
    let text = tier(&mut server, "indexed").await.text;
    assert!(text.contains(&format!("\n{SCENE_RECAP}")), "{text:?}");
    assert!(!text.contains(&format!(": {SCENE_RECAP}")), "{text:?}");
    assert!(text.contains(&format!("Ann: {SECOND}")), "{text:?}");
    assert!(
        !text.contains("emerald") && !text.contains("ruby"),
        "{text:?}"
    );
    assert!(
        !text.contains("Where did we leave") && !text.contains("who took"),
        "{text:?}"
    );
    server.stop().await;
}
