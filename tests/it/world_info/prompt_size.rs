//! RenderPrompt's answer carries each activated entry's content once
//! (issue 41's finding 3: a 1 MiB entry came back three times, in the
//! prompt, in `world_info.activated` and in the placement texts).

use prost::Message as _;

use super::*;

/// Finding 3 of issue 41 (row 3, RenderPrompt's answer): a book with one
/// activated entry of 1 MiB renders a prompt whose answer is about 1 MiB,
/// not 3; the entry is still named in `world_info.activated`.
#[tokio::test]
async fn finding_3_a_rendered_prompt_carries_a_1_mib_entry_once() {
    const MIB: usize = 1024 * 1024;
    let (_dir, mut server) = start().await;
    let content = "w".repeat(MIB);
    import_book(
        &server,
        "Huge",
        &book(&[(
            "0",
            json!({"constant": true, "ignoreBudget": true, "position": 0, "content": content}),
        )]),
    )
    .await;
    global_books(&mut server, "", &["Huge"]).await;
    set_chat(&mut server, "c", vec![said("m1", "User", "Hello.")]).await;
    let rendered = prompts(&server)
        .render_prompt(pb::RenderPromptRequest {
            chat_id: "c".into(),
            mode: pb::PromptMode::TextCompletion as i32,
            story_string: "{{wiBefore}}".into(),
            dry_run: true,
            ..Default::default()
        })
        .await
        .expect("render")
        .into_inner();
    assert!(rendered.text.contains(&content), "the prompt places it");
    let world_info = rendered.world_info.as_ref().unwrap();
    assert_eq!(world_info.activated.len(), 1);
    assert_eq!(world_info.activated[0].uid, "0");
    let size = rendered.encoded_len();
    assert!(
        (MIB..MIB + MIB / 4).contains(&size),
        "the answer is {size} bytes for one entry of {MIB}"
    );
}
