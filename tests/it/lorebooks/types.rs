//! SillyTavern's entry field types on the way in (issue 41, finding 9: a
//! key given as a nested array and a content given as a 3 MB JSON object
//! were accepted and stored): ImportLorebook, ImportCharacterBook and
//! PutLorebookEntry refuse a field SillyTavern defines given another JSON
//! type, with INVALID_ARGUMENT naming it, a short message, and nothing
//! stored.

use super::*;

/// A JSON object of about 3 MB (finding 9's content).
fn three_megabyte_object() -> String {
    format!(r#"{{"text":"{}","more":[1,2,3]}}"#, "x".repeat(3 << 20))
}

/// Fails unless the status is INVALID_ARGUMENT whose message names `path`
/// and says what came, in under 300 bytes (the value is never echoed).
fn refused_naming(status: Status, path: &str, got: &str) {
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let message = status.message();
    assert!(message.len() < 300, "{} bytes", message.len());
    assert!(message.contains(path), "{path} in {message}");
    assert!(message.contains(got), "{got} in {message}");
}

fn put(name: &str, uid: &str, fields: &str) -> pb::PutLorebookEntryRequest {
    pb::PutLorebookEntryRequest {
        name: name.into(),
        uid: uid.into(),
        fields: fields.into(),
    }
}

/// Finding 9 on ImportLorebook: a nested-array key and an object content
/// are refused naming the field; no book is stored. Shapes SillyTavern
/// itself writes (role and probability null, numbers in strings where the
/// `/setentryfield` command puts them, unknown members) still import.
#[tokio::test]
async fn finding_9_import_refuses_wrong_field_types_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let nested_key = r#"{"entries":{"0":{"key":["a","b",["x","y"]],"content":"c"}}}"#;
    let status = import(&mut client, "hostile", nested_key)
        .await
        .expect_err("a nested key is refused");
    refused_naming(
        status,
        "entries.0.key[2]",
        "expected a string, got an array",
    );
    let object_content = format!(
        r#"{{"entries":{{"5":{{"key":["k"],"content":{}}}}}}}"#,
        three_megabyte_object()
    );
    let status = import(&mut client, "hostile", &object_content)
        .await
        .expect_err("an object content is refused");
    refused_naming(
        status,
        "entries.5.content",
        "expected a string, got an object",
    );
    for (file, path, got) in [
        (
            r#"{"entries":{"1":{"key":"plain"}}}"#,
            "entries.1.key",
            "got a string",
        ),
        (
            r#"{"entries":{"1":{"constant":"yes"}}}"#,
            "entries.1.constant",
            "expected a boolean",
        ),
        (
            r#"{"entries":{"1":{"order":[100]}}}"#,
            "entries.1.order",
            "got an array",
        ),
        (
            r#"{"entries":{"1":"text"}}"#,
            "entries.1",
            "expected an object",
        ),
    ] {
        let status = import(&mut client, "hostile", file).await.expect_err(file);
        refused_naming(status, path, got);
    }
    assert!(list_all(&mut client, 0).await.is_empty(), "nothing stored");
    // What SillyTavern writes is taken.
    let written = r#"{"entries":{"0":{"uid":0,"key":["a"],"content":"c","role":null,
        "probability":null,"sticky":"3","caseSensitive":null,"delayUntilRecursion":true,
        "characterFilter":{"isExclude":false,"names":[],"tags":[]},"extensions":[1],"myTool":{}}}}"#;
    assert_eq!(
        import(&mut client, "written", written)
            .await
            .unwrap()
            .entry_count,
        1
    );
    server.stop().await;
}

/// Finding 9 on PutLorebookEntry: the same values as fields are refused
/// naming `fields.<name>`, for a new entry and an existing one; the book
/// is unchanged.
#[tokio::test]
async fn finding_9_put_refuses_wrong_field_types_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let file = fixture_text("Eldoria.json");
    import(&mut client, "Eldoria", &file).await.unwrap();
    let before = export(&mut client, "Eldoria").await.unwrap();
    let object_content = format!(r#"{{"content":{}}}"#, three_megabyte_object());
    for uid in ["", "0"] {
        let status = client
            .put_lorebook_entry(put("Eldoria", uid, r#"{"key":[["x","y"]]}"#))
            .await
            .expect_err("a nested key is refused");
        refused_naming(status, "fields.key[0]", "expected a string, got an array");
        let status = client
            .put_lorebook_entry(put("Eldoria", uid, &object_content))
            .await
            .expect_err("an object content is refused");
        refused_naming(status, "fields.content", "expected a string, got an object");
    }
    assert_eq!(
        export(&mut client, "Eldoria").await.unwrap(),
        before,
        "nothing stored"
    );
    // Right types are taken.
    let entry = client
        .put_lorebook_entry(put(
            "Eldoria",
            "",
            r#"{"key":["x"],"content":"y","sticky":2,"caseSensitive":null}"#,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(json(&entry.json)["key"], serde_json::json!(["x"]));
    server.stop().await;
}

/// A character card whose converted book breaks the types (a `keys` that
/// is a nested array) is refused the same way, naming the converted
/// entry's field; nothing stored.
#[tokio::test]
async fn finding_9_a_card_with_wrong_field_types_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let card = r#"{"spec":"chara_card_v2","data":{"name":"Ann","character_book":{"name":"B",
        "entries":[{"id":3,"keys":[["x"]],"content":"c","enabled":true}]}}}"#;
    let status = client
        .import_character_book(pb::ImportCharacterBookRequest {
            name: String::new(),
            card: card.as_bytes().to_vec(),
        })
        .await
        .expect_err("refused");
    refused_naming(
        status,
        "entries.3.key[0]",
        "expected a string, got an array",
    );
    assert!(list_all(&mut client, 0).await.is_empty(), "nothing stored");
    server.stop().await;
}
