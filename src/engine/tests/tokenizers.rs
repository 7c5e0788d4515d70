//! The tokenizers the stored settings name are loaded at start
//! (`Chats::preload_tokenizers`), so that the first refresh of a chat
//! after a start reads no tokenizer file under the chat's lock.

use super::*;
use crate::model_tokenizers::{TokenizerSetup, Tokenizers};
use crate::store::SqliteStore;

/// all-MiniLM-L6-v2's `tokenizer.json`, kept in the test fixtures.
const NAME: &str = "all-minilm-l6-v2";
/// 26 tokens for that tokenizer (tests/it/api_tokenizers.rs has the
/// reference counts), another count for o200k_base.
const TEXT: &str = "Pneumonoultramicroscopicsilicovolcanoconiosis and antidisestablishmentarianism";

async fn engine_with(data: &tempfile::TempDir, tokenizers: &std::path::Path) -> Engine {
    let store = SqliteStore::open(data.path(), true).await.unwrap();
    let options = crate::engine::EngineOptions {
        tokenizers: Tokenizers::new(TokenizerSetup {
            dir: Some(tokenizers.to_owned()),
            ..TokenizerSetup::default()
        }),
        ..crate::engine::EngineOptions::default()
    };
    Engine::new(Stores::single(Arc::new(store)), options)
        .await
        .unwrap()
}

fn message_with_text(id: &str, text: &str) -> Message {
    NewMessage {
        id: id.into(),
        text: text.into(),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .unwrap()
}

async fn count(engine: &Engine) -> u32 {
    engine.chats().inclusion(&key("c")).await.unwrap()[0].token_count
}

#[tokio::test]
async fn a_tokenizer_the_settings_name_is_loaded_at_start() {
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let file = files.path().join(format!("{NAME}.json"));
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/tokenizers")
        .join(format!("{NAME}.json"));
    std::fs::copy(&fixture, &file).unwrap();
    {
        let engine = engine_with(&data, files.path()).await;
        engine
            .chats()
            .publish(
                &key("c"),
                ChatEvent::ChatChanged(vec![message_with_text("m", TEXT)]),
            )
            .await
            .unwrap();
        engine
            .chats()
            .update_settings(
                &Tenant::default(),
                Some(&key("c")),
                SettingsUpdate {
                    patch: SettingsPatch {
                        tokenizer: Some(crate::domain::settings::TokenizerKind::HuggingFace),
                        tokenizer_name: Some(NAME.to_owned()),
                        ..Default::default()
                    },
                    clear: vec![],
                },
            )
            .await
            .unwrap();
        assert_eq!(count(&engine).await, 26);
    }
    // A start without the preload, the file gone: the chat's first count
    // cannot read it and falls back to o200k_base.
    let bytes = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();
    let cold = engine_with(&data, files.path()).await;
    assert_ne!(count(&cold).await, 26);
    drop(cold);
    // With the preload, the tokenizer is in memory before the chat is read
    // (the file removed afterwards does not matter).
    std::fs::write(&file, bytes).unwrap();
    let engine = engine_with(&data, files.path()).await;
    engine
        .chats()
        .clone()
        .preload_tokenizers(tokio_util::sync::CancellationToken::new())
        .await;
    std::fs::remove_file(&file).unwrap();
    assert_eq!(count(&engine).await, 26);
}
