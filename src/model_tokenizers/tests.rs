use super::*;
use crate::domain::settings::Settings;

/// A tiny WordLevel tokenizer.json (whitespace words, unknown words one
/// `[UNK]` each) whose file asks for truncation at 2 tokens, which a
/// count must ignore.
const WORDS: &str = r#"{
  "version": "1.0",
  "truncation": {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
  "padding": null,
  "added_tokens": [],
  "normalizer": null,
  "pre_tokenizer": {"type": "Whitespace"},
  "post_processor": null,
  "decoder": null,
  "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "hello": 1, "world": 2}, "unk_token": "[UNK]"}
}"#;

fn setup(dir: &std::path::Path) -> TokenizerSetup {
    TokenizerSetup {
        dir: Some(dir.to_owned()),
        max_file_bytes: 4096,
        max_cached: 2,
        ..TokenizerSetup::default()
    }
}

fn hugging_face(name: &str) -> InclusionSettings {
    let mut settings = Settings::default().inclusion;
    settings.tokenizer = TokenizerKind::HuggingFace;
    settings.tokenizer_name = name.to_owned();
    settings
}

#[test]
fn counts_with_a_loaded_tokenizer_json_without_its_truncation() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("words.json"), WORDS).unwrap();
    let tokenizers = Tokenizers::new(setup(dir.path()));
    tokenizers.check(&hugging_face("words")).unwrap();
    let counter = tokenizers.counter(&hugging_face("words"));
    // Five words, five tokens: past the file's truncation at 2.
    assert_eq!(counter.count("hello world hello unknown words"), 5);
    // One unknown word is one [UNK]; o200k_base splits it in two.
    assert_eq!(counter.count("helloworld"), 1);
    assert_eq!(Counter::default().count("helloworld"), 2);
    assert_eq!(counter.count(""), 0);
    assert_ne!(counter.key(), Counter::default().key());
}

#[test]
fn a_tokenizer_is_read_once_and_the_cache_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(dir.path().join(format!("{name}.json")), WORDS).unwrap();
    }
    let tokenizers = Tokenizers::new(setup(dir.path()));
    tokenizers.check(&hugging_face("a")).unwrap();
    // Read once: gone from disk, still counted with.
    std::fs::remove_file(dir.path().join("a.json")).unwrap();
    assert_eq!(
        tokenizers.counter(&hugging_face("a")).count("helloworld"),
        1
    );
    tokenizers.check(&hugging_face("b")).unwrap();
    tokenizers.check(&hugging_face("c")).unwrap();
    assert_eq!(
        tokenizers.inner.cache.lock().loaded.len(),
        2,
        "at most max_cached"
    );
    // "a" was the least recently used: evicted, and its file is gone.
    assert!(matches!(
        tokenizers.check(&hugging_face("a")),
        Err(TokenizerError::NotFound(_))
    ));
}

#[test]
fn unusable_tokenizers_are_errors_to_check_and_o200k_to_counter() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("broken.json"), "{\"not\": \"a tokenizer\"}").unwrap();
    std::fs::write(dir.path().join("large.json"), " ".repeat(5000)).unwrap();
    std::fs::create_dir(dir.path().join("folder.json")).unwrap();
    let tokenizers = Tokenizers::new(setup(dir.path()));
    let check = |name: &str| tokenizers.check(&hugging_face(name)).unwrap_err();
    assert!(matches!(check("missing"), TokenizerError::NotFound(_)));
    assert!(matches!(check("broken"), TokenizerError::Invalid { .. }));
    assert!(matches!(
        check("large"),
        TokenizerError::TooLarge { limit: 4096, .. }
    ));
    assert!(matches!(
        check("folder"),
        TokenizerError::Unreadable { .. } | TokenizerError::Invalid { .. }
    ));
    assert!(matches!(check("../etc/passwd"), TokenizerError::BadName(_)));
    assert!(matches!(check(""), TokenizerError::BadName(_)));
    // No error message names the server's directory.
    for name in ["missing", "broken", "large", "folder"] {
        let message = check(name).to_string();
        assert!(
            !message.contains(&*dir.path().to_string_lossy()),
            "{message}"
        );
    }
    for name in ["missing", "broken", "large", "folder", "../x"] {
        let counter = tokenizers.counter(&hugging_face(name));
        assert_eq!(counter.key(), Counter::default().key(), "{name}");
    }
    let without_dir = Tokenizers::default();
    assert!(matches!(
        without_dir.check(&hugging_face("words")),
        Err(TokenizerError::NoDirectory)
    ));
    assert_eq!(
        without_dir.counter(&hugging_face("words")).key(),
        Counter::default().key()
    );
    // tiktoken kinds need no directory.
    let mut cl100k = Settings::default().inclusion;
    cl100k.tokenizer = TokenizerKind::Cl100kBase;
    without_dir.check(&cl100k).unwrap();
    assert_eq!(
        without_dir.counter(&cl100k).key(),
        Counter::tiktoken(TokenizerKind::Cl100kBase).key()
    );
}
