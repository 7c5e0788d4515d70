//! The HUGGING_FACE tokenizer over the API: a chat set to a model's own
//! `tokenizer.json` (all-MiniLM-L6-v2's, kept in
//! tests/fixtures/tokenizers/) reports the counts Hugging Face's own
//! Python library gives, which differ from o200k_base's; its threshold and
//! budget use them; and a tokenizer that cannot be used is refused to the
//! caller that named it.

use crate::common::api::*;
use crate::common::*;
use recapd::grpc::pb;
use tonic::Code;

/// The directory holding `all-minilm-l6-v2.json`.
fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers")
}

const NAME: &str = "all-minilm-l6-v2";

/// Varied texts and their counts without special tokens, as given by
/// Python's `tokenizers` 0.23.3 (the package's reference implementation):
///
/// ```text
/// python3 -c 'import json, sys; from tokenizers import Tokenizer
/// t = Tokenizer.from_file("tests/fixtures/tokenizers/all-minilm-l6-v2.json")
/// t.no_truncation(); t.no_padding()
/// print([len(t.encode(x, add_special_tokens=False).ids) for x in json.load(sys.stdin)])'
/// ```
///
/// with the texts below as a JSON list on standard input.
const TEXTS: [(&str, u32); 13] = [
    ("hello world", 2),
    ("The quick brown fox jumps over the lazy dog.", 10),
    ("Café, naïve résumé: déjà vu à l'hôtel Zoë.", 14),
    ("彼女は市場でパンを買った。", 13),
    ("东京和北京都是大城市", 10),
    ("I love it 🙂🎉👍🏽 so much!!!", 9),
    (
        "Pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism",
        26,
    ),
    ("Line one\nLine two\n\n\tTabbed line", 7),
    ("<|endoftext|> [CLS] [SEP] [MASK] are just text", 14),
    ("2024-06-01T12:34:56Z costs $1,234.56 (≈ €1.1k)", 28),
    ("Привет, как дела? Ελληνικά κείμενα.", 31),
    ("   leading and trailing spaces   ", 4),
    (
        "Eldoria's knight-commander—Ser Aldric—swore: \"Never again!\"",
        21,
    ),
];

/// A server that reads tokenizers from the fixtures, every trigger at once.
async fn start_with_tokenizers() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.tokenizers_dir = Some(fixtures());
    let mut server = Server::start_with(config).await;
    server.set_global_debounce(0).await;
    (dir, server)
}

fn hugging_face(name: &str) -> pb::Settings {
    pb::Settings {
        tokenizer: Some(pb::Tokenizer::HuggingFace as i32),
        tokenizer_name: Some(name.to_owned()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_chat_with_a_models_tokenizer_counts_as_hugging_faces_library_does() {
    let (_dir, mut s) = start_with_tokenizers().await;
    let messages = TEXTS
        .iter()
        .enumerate()
        .map(|(i, (text, _))| message(&format!("m{i:02}"), text))
        .collect();
    s.publish("c", chat_changed(messages)).await.unwrap();
    let counts = |lines: Vec<pb::MessageInclusion>| -> Vec<u32> {
        lines.iter().map(|l| l.token_count).collect()
    };
    let o200k_counts: Vec<u32> = TEXTS.iter().map(|(text, _)| o200k(text)).collect();
    assert_eq!(counts(inclusion(&mut s, "c").await), o200k_counts);

    let answered = update(&mut s, "c", hugging_face(NAME), &[]).await.unwrap();
    assert_eq!(answered.tokenizer, Some(pb::Tokenizer::HuggingFace as i32));
    assert_eq!(answered.tokenizer_name.as_deref(), Some(NAME));
    let expected: Vec<u32> = TEXTS.iter().map(|(_, n)| *n).collect();
    assert_eq!(counts(inclusion(&mut s, "c").await), expected);
    let differing = expected
        .iter()
        .zip(&o200k_counts)
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        differing >= 10,
        "{expected:?} against o200k's {o200k_counts:?}"
    );

    // Another chat keeps the default vocabulary.
    s.publish("other", chat_changed(vec![message("x", TEXTS[6].0)]))
        .await
        .unwrap();
    assert_eq!(
        counts(inclusion(&mut s, "other").await),
        vec![o200k(TEXTS[6].0)]
    );
}

#[tokio::test]
async fn the_threshold_and_the_injection_use_the_models_counts() {
    let (_dir, mut s) = start_with_tokenizers().await;
    // 26 tokens for the model, 22 for o200k_base: a threshold of 24
    // excludes it with one and keeps it with the other.
    let (long_words, model_count) = TEXTS[6];
    assert!(o200k(long_words) < 24, "{}", o200k(long_words));
    s.publish("c", chat_changed(vec![message("m", long_words)]))
        .await
        .unwrap();
    set_memory(&mut s, "c", "m", long_words).await;
    let threshold = pb::Settings {
        message_length_threshold: Some(24),
        message_recaps_enabled: Some(true),
        ..Default::default()
    };
    update(&mut s, "c", threshold, &[]).await.unwrap();
    assert_eq!(
        reasons(&mut s, "c").await,
        expect_reasons(&[("m", "message_length_threshold")])
    );
    update(&mut s, "c", hugging_face(NAME), &[]).await.unwrap();
    let lines = inclusion(&mut s, "c").await;
    assert!(lines[0].included, "{lines:?}");
    assert_eq!(lines[0].token_count, model_count);

    // The message-recap tier's injection is counted with the model too.
    let mut updates = subscribe(&mut s, &["c"], 0).await;
    let mut tier = None;
    refresh(&mut s, "c").await.unwrap();
    let wait = std::time::Duration::from_secs(10);
    while let Ok(Some(injection)) = tokio::time::timeout(wait, updates.message())
        .await
        .expect("an injection within 10 s")
    {
        if injection.text.contains(long_words) {
            tier = Some(injection);
            break;
        }
    }
    let tier = tier.expect("the tier's injection is pushed");
    assert_ne!(tier.token_count, o200k(&tier.text), "{:?}", tier.text);
    assert!(tier.token_count >= model_count, "{tier:?}");
}

#[tokio::test]
async fn a_tokenizer_that_cannot_be_used_is_refused_to_the_caller_that_named_it() {
    let (_dir, mut s) = start_with_tokenizers().await;
    assert_code(
        update(&mut s, "c", hugging_face("no-such-model"), &[]).await,
        Code::InvalidArgument,
        "settings.tokenizer_name",
    );
    for bad in ["../all-minilm-l6-v2", "a/b", ".hidden", &"x".repeat(129)] {
        assert_code(
            update(&mut s, "", hugging_face(bad), &[]).await,
            Code::InvalidArgument,
            "settings.tokenizer_name",
        );
    }
    assert_code(
        update(&mut s, "c", hugging_face(""), &[]).await,
        Code::InvalidArgument,
        "settings.tokenizer_name",
    );
    // Nothing was applied.
    let settings = settings_of(&mut s, "c").await;
    assert_eq!(settings.tokenizer, Some(pb::Tokenizer::O200kBase as i32));
    assert_eq!(settings.tokenizer_name.as_deref(), Some(""));
    // The global settings take it as well.
    update(&mut s, "", hugging_face(NAME), &[]).await.unwrap();

    // Without --tokenizers-dir the server has no model tokenizers.
    let (_dir, mut plain) = start().await;
    assert_code(
        update(&mut plain, "c", hugging_face(NAME), &[]).await,
        Code::FailedPrecondition,
        "--tokenizers-dir",
    );
}
