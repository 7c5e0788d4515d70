//! LorebookService over a real socket, on the store the harness selects
//! (`RECAPD_TEST_STORE=postgres` runs the same cases on PostgreSQL): books
//! imported and exported JSON-equal (SillyTavern's own and community files,
//! tests/fixtures/world_info/README.md), across a restart; tenants kept
//! apart; limits; refused files with their reason; entry editing, also
//! concurrent; character cards.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::common::*;
use recapd::grpc::pb;
use recapd::grpc::pb::lorebook_service_client::LorebookServiceClient;

mod entries;
mod entry_store;
mod size;
mod store;
mod tenants;
mod types;

/// A fixture's path.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/world_info")
        .join(name)
}

/// A fixture's text.
fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The real World Info files of the fixtures (README.md there says where
/// each comes from).
const BOOKS: [&str; 4] = [
    "Eldoria.json",
    "Eldoria_V10_reduced.json",
    "Nen_Encyclopedia_HxH.json",
    "Vina_HxH.json",
];

/// A client of the server's LorebookService.
fn lorebooks(server: &Server) -> LorebookServiceClient<Channel> {
    LorebookServiceClient::new(server.channel.clone())
}

async fn import(
    client: &mut LorebookServiceClient<Channel>,
    name: &str,
    json: &str,
) -> Result<pb::Lorebook, Status> {
    client
        .import_lorebook(pb::ImportLorebookRequest {
            name: name.into(),
            json: json.into(),
        })
        .await
        .map(tonic::Response::into_inner)
}

async fn export(client: &mut LorebookServiceClient<Channel>, name: &str) -> Result<String, Status> {
    client
        .export_lorebook(pb::ExportLorebookRequest { name: name.into() })
        .await
        .map(|r| r.into_inner().json)
}

async fn list_all(
    client: &mut LorebookServiceClient<Channel>,
    page_size: u32,
) -> Vec<pb::Lorebook> {
    let mut books = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_lorebooks(pb::ListLorebooksRequest {
                page_size,
                page_token,
            })
            .await
            .expect("lists")
            .into_inner();
        books.extend(page.lorebooks);
        if page.next_page_token.is_empty() {
            return books;
        }
        page_token = page.next_page_token;
    }
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

/// Fails with the status's code unless it is `code` and its message holds
/// every one of `words`.
fn refused<T: std::fmt::Debug>(result: Result<T, Status>, code: Code, words: &[&str]) {
    let status = result.expect_err("refused");
    assert_eq!(status.code(), code, "{status:?}");
    for word in words {
        assert!(status.message().contains(word), "{word:?} in {status:?}");
    }
}

#[tokio::test]
async fn real_books_export_json_equal_to_their_files_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    for name in BOOKS {
        let text = fixture_text(name);
        let book = import(&mut client, name, &text).await.expect(name);
        let entries = json(&text)["entries"].as_object().unwrap().len();
        assert_eq!(book.name, name);
        assert_eq!(book.entry_count as usize, entries, "{name}");
        assert!(book.updated_at.is_some());
        assert_eq!(
            json(&export(&mut client, name).await.unwrap()),
            json(&text),
            "{name}"
        );
    }
    server.stop().await;

    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    for name in BOOKS {
        let text = fixture_text(name);
        assert_eq!(
            json(&export(&mut client, name).await.unwrap()),
            json(&text),
            "{name}"
        );
    }
    // Listed by name as bytes ("E" < "N" < "V"; "Eldoria.json" < "Eldoria_": '.' < '_').
    let listed: Vec<String> = list_all(&mut client, 0)
        .await
        .into_iter()
        .map(|b| b.name)
        .collect();
    assert_eq!(listed, BOOKS);
    server.stop().await;
}

#[tokio::test]
async fn numbers_keep_their_spelling_and_members_their_order() {
    // Issue 29: "numbers as written"; JSON.parse keeps the last of two
    // members of one name (ECMA-262 JSON.parse, InternalizeJSONProperty).
    let file = r#"{"entries":{"7":{"uid":7,"order":1.0,"depth":1e3,"big":12345678901234567890,"key":["ก","念"],"z":1,"a":2}},"zeta":{"n":-0.0},"alpha":[]}"#;
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    import(&mut client, "numbers", file).await.unwrap();
    let out = export(&mut client, "numbers").await.unwrap();
    for spelled in ["1.0", "1e3", "12345678901234567890", "-0.0"] {
        assert!(out.contains(spelled), "{spelled} in {out}");
    }
    assert!(out.find("\"zeta\"").unwrap() < out.find("\"alpha\"").unwrap());
    assert!(out.find("\"z\"").unwrap() < out.find("\"a\"").unwrap());
    assert_eq!(json(&out), json(file));
    server.stop().await;
}

#[tokio::test]
async fn a_book_the_size_of_the_largest_real_one_imports_under_the_default_limits() {
    // soranokiseki1437/eldoria-worldbook @3bb79f5 output/Eldoria_V10.28.1.json
    // is 3,507,913 bytes with 947 entries (facts file §6; its longest
    // content is 10,475 bytes). A book of that size and shape, made here,
    // fits the default --max-request-bytes (4 MiB) and every default limit.
    let mut entries = serde_json::Map::new();
    let content = "艾尔多利亚的森林深处，".repeat(120); // 3,960 bytes
    for uid in 0..947 {
        entries.insert(
            uid.to_string(),
            serde_json::json!({
                "uid": uid, "key": [format!("钥匙{uid}")], "keysecondary": [],
                "comment": format!("条目 {uid}"), "content": content,
                "constant": uid < 16, "selective": true, "order": 100,
                "position": if uid < 814 { 4 } else { 1 }, "depth": 2,
                "disable": false, "excludeRecursion": false,
            }),
        );
    }
    let file = serde_json::json!({"entries": entries, "_meta": {"version": "10.28.1"}}).to_string();
    assert!(
        (3_500_000..4_000_000).contains(&file.len()),
        "{}",
        file.len()
    );
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let book = import(&mut client, "Eldoria_V10", &file).await.unwrap();
    assert_eq!(book.entry_count, 947);
    assert_eq!(
        json(&export(&mut client, "Eldoria_V10").await.unwrap()),
        json(&file)
    );
    server.stop().await;
}

#[tokio::test]
async fn files_sillytavern_refuses_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    // src/endpoints/worldinfo.js:116-117 at 51ad27f: no `entries`, refused.
    for (file, reason) in [
        ("not json", "json"),
        ("[1,2]", "json"),
        (r#"{"name":"x"}"#, "entries"),
        (r#"{"entries":[]}"#, "entries"),
        ("", "json"),
    ] {
        refused(
            import(&mut client, "bad", file).await,
            Code::InvalidArgument,
            &[reason],
        );
    }
    // Hostile nesting (100,000 levels inside an entry) crashes nothing:
    // the book is taken or refused as `json`, and the server goes on.
    let deep = format!(
        r#"{{"entries":{{"0":{{"x":{}{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    match import(&mut client, "deep", &deep).await {
        Ok(book) => {
            assert_eq!(book.entry_count, 1);
            assert_eq!(export(&mut client, "deep").await.unwrap().len(), deep.len());
            client
                .delete_lorebook(pb::DeleteLorebookRequest {
                    name: "deep".into(),
                })
                .await
                .unwrap();
        }
        Err(status) => assert_eq!(status.code(), Code::InvalidArgument, "{status:?}"),
    }
    // What SillyTavern writes is taken: sparse entries, role null, keys
    // that look like numbers, card-style members at the top (keys that are
    // JSON numbers are refused: lorebooks/types.rs).
    let odd = r#"{"name":"card-style","entries":{"3":{"key":["12","a"],"role":null},"9":{"content":"x"}}}"#;
    assert_eq!(
        import(&mut client, "odd", odd).await.unwrap().entry_count,
        2
    );
    assert_eq!(
        list_all(&mut client, 0).await.len(),
        1,
        "the refused stored nothing"
    );
    // Names: 1..=256 bytes, no control characters (Lorebook.name).
    for name in ["", &"n".repeat(257), "a\nb", "tab\t"] {
        refused(
            import(&mut client, name, odd).await,
            Code::InvalidArgument,
            &["name"],
        );
        refused(
            export(&mut client, name).await,
            Code::InvalidArgument,
            &["name"],
        );
    }
    import(&mut client, &"n".repeat(256), odd).await.unwrap();
    refused(
        export(&mut client, "missing").await,
        Code::NotFound,
        &["missing"],
    );
    refused(
        client
            .delete_lorebook(pb::DeleteLorebookRequest {
                name: "missing".into(),
            })
            .await,
        Code::NotFound,
        &["missing"],
    );
    refused(
        client
            .list_lorebooks(pb::ListLorebooksRequest {
                page_size: 0,
                page_token: "not-a-token".into(),
            })
            .await,
        Code::InvalidArgument,
        &["page_token"],
    );
    refused(
        client
            .list_lorebooks(pb::ListLorebooksRequest {
                page_size: 1001,
                page_token: String::new(),
            })
            .await,
        Code::InvalidArgument,
        &["page_size"],
    );
    server.stop().await;
}

#[tokio::test]
async fn lists_page_by_name_as_bytes_and_deleted_books_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let book = r#"{"entries":{}}"#;
    // As bytes: "B" < "a" < "z" < "é" (0xC3) < "念" (0xE5).
    for name in ["念", "z", "a", "é", "B"] {
        import(&mut client, name, book).await.unwrap();
    }
    let names = |books: Vec<pb::Lorebook>| books.into_iter().map(|b| b.name).collect::<Vec<_>>();
    assert_eq!(
        names(list_all(&mut client, 2).await),
        ["B", "a", "z", "é", "念"]
    );
    client
        .delete_lorebook(pb::DeleteLorebookRequest { name: "z".into() })
        .await
        .unwrap();
    refused(export(&mut client, "z").await, Code::NotFound, &["z"]);
    assert_eq!(names(list_all(&mut client, 1).await), ["B", "a", "é", "念"]);
    // Importing under a name replaces the book of that name.
    import(&mut client, "a", r#"{"entries":{"0":{"content":"new"}}}"#)
        .await
        .unwrap();
    assert_eq!(
        json(&export(&mut client, "a").await.unwrap()),
        json(r#"{"entries":{"0":{"content":"new"}}}"#)
    );
    assert_eq!(list_all(&mut client, 0).await.len(), 4);
    server.stop().await;
}

#[tokio::test]
async fn limits_refuse_with_resource_exhausted_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.lorebooks.max_lorebooks_per_tenant = 2;
    config.lorebooks.max_lorebook_entries = 2;
    config.lorebooks.max_lorebook_key_bytes = 8;
    config.lorebooks.max_lorebook_content_bytes = 16;
    let server = Server::start_with(config).await;
    let mut client = lorebooks(&server);
    let two = r#"{"entries":{"0":{"key":["12345678"],"content":"sixteen bytes..."},"1":{}}}"#;
    import(&mut client, "one", two).await.unwrap();
    import(&mut client, "two", two).await.unwrap();
    refused(
        import(&mut client, "three", two).await,
        Code::ResourceExhausted,
        &["--max-lorebooks-per-tenant"],
    );
    // Replacing a book is not a new one.
    import(&mut client, "two", two).await.unwrap();
    for (file, flag) in [
        (
            r#"{"entries":{"0":{},"1":{},"2":{}}}"#,
            "--max-lorebook-entries",
        ),
        (
            r#"{"entries":{"5":{"key":["123456789"]}}}"#,
            "--max-lorebook-key-bytes",
        ),
        (
            r#"{"entries":{"5":{"keysecondary":["123456789"]}}}"#,
            "--max-lorebook-key-bytes",
        ),
        (
            r#"{"entries":{"5":{"content":"seventeen bytes.."}}}"#,
            "--max-lorebook-content-bytes",
        ),
    ] {
        refused(
            import(&mut client, "two", file).await,
            Code::ResourceExhausted,
            &[flag],
        );
    }
    // An edit past a limit changes nothing.
    let put = |uid: &str, fields: &str| pb::PutLorebookEntryRequest {
        name: "two".into(),
        uid: uid.into(),
        fields: fields.into(),
    };
    refused(
        client
            .put_lorebook_entry(put("0", r#"{"content":"seventeen bytes.."}"#))
            .await,
        Code::ResourceExhausted,
        &["--max-lorebook-content-bytes", "0"],
    );
    refused(
        client
            .put_lorebook_entry(put("", r#"{"content":"x"}"#))
            .await,
        Code::ResourceExhausted,
        &["--max-lorebook-entries"],
    );
    assert_eq!(json(&export(&mut client, "two").await.unwrap()), json(two));
    server.stop().await;
}

#[tokio::test]
async fn a_character_cards_book_is_stored_as_sillytavern_converts_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path()).await;
    let mut client = lorebooks(&server);
    let card = std::fs::read(fixture("default_Seraphina.png")).unwrap();
    let book = client
        .import_character_book(pb::ImportCharacterBookRequest {
            name: String::new(),
            card: card.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    // Named as SillyTavern names it: `character_book.name` when set, else
    // "<character>'s Lorebook" (world-info.js:5625 at 51ad27f); Seraphina's
    // book is named "Eldoria" (tests/fixtures/world_info/README.md).
    assert_eq!(book.name, "Eldoria");
    let expected = json(&fixture_text("Seraphina_converted.json"));
    assert_eq!(
        json(&export(&mut client, &book.name).await.unwrap()),
        expected
    );
    assert_eq!(
        book.entry_count as usize,
        expected["entries"].as_object().unwrap().len()
    );
    // Under a name of the caller's choice; the card's JSON works too.
    let sakana = fixture_text("Sakana_card.json");
    let named = client
        .import_character_book(pb::ImportCharacterBookRequest {
            name: "mine".into(),
            card: sakana.into_bytes(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(named.name, "mine");
    assert_eq!(
        json(&export(&mut client, "mine").await.unwrap()),
        json(&fixture_text("Sakana_converted.json"))
    );
    refused(
        client
            .import_character_book(pb::ImportCharacterBookRequest {
                name: "x".into(),
                card: b"\x89PNG\r\n\x1a\n truncated".to_vec(),
            })
            .await,
        Code::InvalidArgument,
        &["card"],
    );
    server.stop().await;
}

#[tokio::test]
async fn new_books_imported_at_once_never_pass_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = test_config(dir.path());
    config.lorebooks.max_lorebooks_per_tenant = 3;
    let server = Server::start_with(config).await;
    let client = lorebooks(&server);
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..12 {
        let mut client = client.clone();
        tasks.spawn(
            async move { import(&mut client, &format!("book {n}"), r#"{"entries":{}}"#).await },
        );
    }
    let (mut stored, mut refused) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        match done.unwrap() {
            Ok(_) => stored += 1,
            Err(status) => {
                assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
                refused += 1;
            }
        }
    }
    assert_eq!((stored, refused), (3, 9));
    assert_eq!(list_all(&mut client.clone(), 0).await.len(), 3);
    server.stop().await;
}
