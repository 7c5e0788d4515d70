//! RenderPrompt places what the scan activated where SillyTavern does
//! (§3; crates/domain/src/prompt.rs's module doc maps each place to
//! SillyTavern's lines), in text and chat completion, and its
//! `world_info` is what ScanWorldInfo answers for the same seed.

use super::*;

/// One entry per place, all keyed on "lantern" (positions WI:855-864).
fn lantern_book() -> String {
    let keyed = |fields: Value| {
        let mut fields = fields;
        fields["key"] = json!(["lantern"]);
        fields
    };
    book(&[
        (
            "0",
            keyed(json!({"position": 0, "order": 20, "content": "Before B."})),
        ),
        (
            "1",
            keyed(json!({"position": 0, "order": 10, "content": "Before A."})),
        ),
        ("2", keyed(json!({"position": 1, "content": "After."}))),
        (
            "3",
            keyed(json!({"position": 4, "depth": 1, "role": 0, "content": "Depth lore."})),
        ),
        ("4", keyed(json!({"position": 2, "content": "Note top."}))),
        (
            "5",
            keyed(json!({"position": 3, "content": "Note bottom."})),
        ),
        (
            "6",
            keyed(json!({"position": 7, "outletName": "maps", "content": "Map of the vale."})),
        ),
        (
            "7",
            keyed(json!({"position": 5, "content": "{{user}}: Top example?\n{{char}}: Yes."})),
        ),
        (
            "8",
            keyed(json!({"position": 6, "content": "{{user}}: Bottom example?\n{{char}}: No."})),
        ),
    ])
}

/// A chat that mentions the lantern, with a running recap injected in
/// chat at depth 1 as a system message, the depth of entry 3.
async fn lantern_chat(server: &mut Server) {
    import_book(server, "Lantern", &lantern_book()).await;
    global_books(server, "", &["Lantern"]).await;
    set_chat(
        server,
        "c",
        vec![
            said("m1", "User", "I light the lantern."),
            said("m2", "Seraphina", "It glows."),
        ],
    )
    .await;
    server
        .update_settings(
            "c",
            pb::Settings {
                position: Some(pb::InjectionPosition::InChat as i32),
                depth: Some(1),
                role: Some(pb::InjectionRole::System as i32),
                template: Some("Memory: {{running_recap}}".into()),
                ..Default::default()
            },
        )
        .await;
    add_recap(server, "c", "They met at dusk.").await;
    injection_holds(server, "c", "auto_recap_scene", "dusk").await;
}

fn render_request(mode: pb::PromptMode, story: &str) -> pb::RenderPromptRequest {
    pb::RenderPromptRequest {
        chat_id: "c".into(),
        mode: mode as i32,
        story_string: story.into(),
        authors_note: Some(pb::ExtensionPrompt {
            key: String::new(),
            value: "Keep it short.".into(),
            position: pb::InjectionPosition::InPrompt as i32,
            depth: 0,
            role: pb::InjectionRole::System as i32,
            scan: false,
        }),
        examples: vec!["<START>\nUser: Hi?\nSeraphina: Hello.".into()],
        dry_run: true,
        seed: 9,
        ..Default::default()
    }
}

async fn render(server: &Server, request: pb::RenderPromptRequest) -> pb::RenderPromptResponse {
    prompts(server)
        .render_prompt(request)
        .await
        .expect("render")
        .into_inner()
}

fn message(role: pb::InjectionRole, name: &str, content: &str, id: &str) -> pb::PromptMessage {
    pb::PromptMessage {
        role: role as i32,
        name: name.into(),
        content: content.into(),
        hidden: false,
        message_id: id.into(),
    }
}

/// The history with the recap and the depth entry merged at depth 1:
/// IN_CHAT prompts of one depth and role are joined in sorted key order
/// (SC:3251), `auto_recap_scene` before `customDepthWI_1_0` (WI:5116-5127).
fn expected_history() -> Vec<pb::PromptMessage> {
    vec![
        message(
            pb::InjectionRole::User,
            "User",
            "I light the lantern.",
            "m1",
        ),
        message(
            pb::InjectionRole::System,
            "",
            "Memory: They met at dusk.\nDepth lore.",
            "",
        ),
        message(pb::InjectionRole::Assistant, "Seraphina", "It glows.", "m2"),
    ]
}

#[tokio::test]
async fn text_completion_places_every_position_around_the_story_string() {
    let (_dir, mut server) = start().await;
    lantern_chat(&mut server).await;
    let rendered = render(
        &server,
        render_request(pb::PromptMode::TextCompletion, "Story: {{outlet::maps}}"),
    )
    .await;
    // Before: lists end ascending by order (WI:5084-5143), joined "\n"
    // (WI:5146), before the story string, after after it (default context
    // template, §3); the outlet where {{outlet::maps}} is (macros.js:668);
    // the author's note wrapped by AN top and bottom (WI:5149-5153), an
    // IN_PROMPT prompt; examples top, the request's, bottom (SC:4580-4596),
    // each block "***\n" block "\n".
    let expected = concat!(
        "Before A.\nBefore B.\nStory: Map of the vale.\nAfter.\n",
        "Note top.\nKeep it short.\nNote bottom.\n",
        "***\nUser: Top example?\nSeraphina: Yes.\n",
        "***\nUser: Hi?\nSeraphina: Hello.\n",
        "***\nUser: Bottom example?\nSeraphina: No.\n",
    );
    assert_eq!(rendered.text, expected);
    assert_eq!(rendered.messages, expected_history());

    // The story string's own {{wiBefore}} and {{wiAfter}} take the texts
    // (SC:4652-4655): nothing is added around it.
    let rendered = render(
        &server,
        render_request(
            pb::PromptMode::TextCompletion,
            "Sys.\n{{wiBefore}}\nDesc.\n{{wiAfter}}",
        ),
    )
    .await;
    assert!(
        rendered
            .text
            .starts_with("Sys.\nBefore A.\nBefore B.\nDesc.\nAfter.\nNote top.\n"),
        "{:?}",
        rendered.text
    );
    server.stop().await;
}

#[tokio::test]
async fn chat_completion_places_every_position_as_messages() {
    let (_dir, mut server) = start().await;
    lantern_chat(&mut server).await;
    let rendered = render(
        &server,
        render_request(pb::PromptMode::ChatCompletion, "Story: {{outlet::maps}}"),
    )
    .await;
    assert_eq!(rendered.text, "");
    let system = |content: &str| message(pb::InjectionRole::System, "", content, "");
    // Main prompt, IN_PROMPT (the author's note), worldInfoBefore and
    // worldInfoAfter as system messages (PromptManager.js:2087-2135,
    // openai.js:106,780-792), then the examples, then the history.
    assert_eq!(
        rendered.messages[..4],
        [
            system("Story: Map of the vale."),
            system("Note top.\nKeep it short.\nNote bottom."),
            system("Before A.\nBefore B."),
            system("After."),
        ]
    );
    let history = expected_history();
    let n = rendered.messages.len();
    assert_eq!(rendered.messages[n - history.len()..], history[..]);
    // Three example blocks (top, the request's, bottom), each opened by
    // "[Example Chat]" (openai.js:109) and spoken by example_user and
    // example_assistant (openai.js:720-778).
    let examples = &rendered.messages[4..n - history.len()];
    let openings: Vec<usize> = examples
        .iter()
        .enumerate()
        .filter(|(_, m)| m.content == "[Example Chat]")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(openings.len(), 3, "{examples:?}");
    let text: Vec<&str> = examples.iter().map(|m| m.content.as_str()).collect();
    let at = |needle: &str| {
        text.iter()
            .position(|t| t.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in {text:?}"))
    };
    assert!(at("Top example?") < at("Hi?") && at("Hi?") < at("Bottom example?"));
    assert!(
        examples
            .iter()
            .any(|m| m.name == "example_user" && m.content.contains("Hi?"))
    );
    assert!(
        examples
            .iter()
            .any(|m| m.name == "example_assistant" && m.content.contains("Hello."))
    );

    // With the macros, the main prompt holds the texts and no separate
    // before/after message is added.
    let rendered = render(
        &server,
        render_request(
            pb::PromptMode::ChatCompletion,
            "Sys.\n{{wiBefore}}\nDesc.\n{{wiAfter}}",
        ),
    )
    .await;
    assert_eq!(
        rendered.messages[..3],
        [
            system("Sys.\nBefore A.\nBefore B.\nDesc.\nAfter."),
            system("Note top.\nKeep it short.\nNote bottom."),
            system("[Example Chat]"),
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn render_prompts_world_info_is_what_scan_world_info_answers_for_the_seed() {
    let (_dir, mut server) = start().await;
    lantern_chat(&mut server).await;
    let rendered = render(
        &server,
        render_request(pb::PromptMode::TextCompletion, "Story."),
    )
    .await;
    let scanned = scan(
        &server,
        pb::ScanWorldInfoRequest {
            dry_run: true,
            seed: 9,
            ..scan_request("c")
        },
    )
    .await;
    // RenderPrompt's answer names the same activation, without the texts
    // its prompt already carries (each entry's content once).
    let expected = pb::ScanWorldInfoResponse {
        activated: scanned
            .activated
            .iter()
            .map(|e| pb::ActivatedEntry {
                content: String::new(),
                ..e.clone()
            })
            .collect(),
        ..Default::default()
    };
    assert_eq!(rendered.world_info.as_ref(), Some(&expected));
    // The answer itself, as §3 says each list is built.
    assert_eq!(scanned.before, "Before A.\nBefore B.");
    assert_eq!(scanned.after, "After.");
    assert_eq!(scanned.an_top, "Note top.");
    assert_eq!(scanned.an_bottom, "Note bottom.");
    assert_eq!(
        scanned.depth,
        [pb::DepthPrompt {
            depth: 1,
            role: pb::InjectionRole::System as i32,
            text: "Depth lore.".into(),
        }]
    );
    assert_eq!(
        scanned.outlets.get("maps").map(String::as_str),
        Some("Map of the vale.")
    );
    assert_eq!(
        scanned.examples_top,
        ["User: Top example?\nSeraphina: Yes."]
    );
    assert_eq!(
        scanned.examples_bottom,
        ["User: Bottom example?\nSeraphina: No."]
    );
    // Without a chat there is no World Info.
    let mut request = render_request(pb::PromptMode::TextCompletion, "Story.");
    request.chat_id = String::new();
    assert_eq!(render(&server, request).await.world_info, None);
    server.stop().await;
}

#[tokio::test]
async fn the_authors_note_is_scanned_when_its_scan_flag_is_on() {
    let (_dir, mut server) = start().await;
    lantern_chat(&mut server).await;
    // A history that never names the lantern; only the note does.
    let request = |scan: bool| {
        let mut request = render_request(pb::PromptMode::TextCompletion, "Story.");
        request.history = vec![message(pb::InjectionRole::User, "User", "Hello.", "")];
        request.examples = vec![];
        let note = request.authors_note.as_mut().unwrap();
        note.value = "Mind the lantern.".into();
        note.scan = scan;
        request
    };
    // SillyTavern sets the note (script.js:4560) before its World Info
    // scan (script.js:4576), flagged with allowWIScan
    // (authors-note.js:383-388); scan-flagged prompts are scanned (§2).
    let off = render(&server, request(false)).await;
    assert!(off.world_info.unwrap().activated.is_empty());
    assert_eq!(off.text, "Story.\nMind the lantern.\n");
    let on = render(&server, request(true)).await;
    assert_eq!(on.world_info.unwrap().activated.len(), 9);
    assert!(
        on.text
            .contains("\nNote top.\nMind the lantern.\nNote bottom.\n"),
        "{:?}",
        on.text
    );
    server.stop().await;
}

#[tokio::test]
async fn entries_without_a_position_or_depth_activate_but_are_placed_nowhere() {
    let (_dir, mut server) = start().await;
    // Raw entries as a file may hold them: the scanner reads them without
    // the editor's defaults (§1 "Defaults are filled only when the editor
    // renders the book").
    let raw = json!({"entries": {
        "0": {"uid": 0, "key": ["orb"], "content": "No position."},
        "1": {"uid": 1, "key": ["orb"], "content": "No depth.", "position": 4},
        "2": {"uid": 2, "key": ["orb"], "content": "Deep.", "position": 4, "depth": 0, "role": 2},
    }});
    import_book(&server, "Raw", &raw.to_string()).await;
    global_books(&mut server, "", &["Raw"]).await;
    set_chat(
        &mut server,
        "c",
        vec![
            said("m1", "Seraphina", "Behold."),
            said("m2", "User", "An orb!"),
        ],
    )
    .await;
    let answer = scan(&server, scan_request("c")).await;
    let by_uid = |uid: &str| {
        answer
            .activated
            .iter()
            .find(|e| e.uid == uid)
            .unwrap_or_else(|| panic!("{uid} not activated: {answer:?}"))
    };
    // No `position`: activated, placed nowhere (WI:5093-5143 has no
    // default case): -1 in the answer.
    assert_eq!(by_uid("0").position, -1);
    // At depth without `depth`: never inserted (§7): depth -1.
    assert_eq!((by_uid("1").position, by_uid("1").depth), (4, -1));
    assert_eq!((by_uid("2").position, by_uid("2").depth), (4, 0));
    assert_eq!((answer.before.as_str(), answer.after.as_str()), ("", ""));
    assert_eq!(
        answer.depth,
        [pb::DepthPrompt {
            depth: 0,
            role: pb::InjectionRole::Assistant as i32,
            text: "Deep.".into(),
        }]
    );
    // Placed by RenderPrompt at depth 0, after the last message, as an
    // assistant message named as the latest assistant message
    // (RenderPromptResponse.messages, PromptMessage.name).
    let rendered = prompts(&server)
        .render_prompt(pb::RenderPromptRequest {
            chat_id: "c".into(),
            mode: pb::PromptMode::TextCompletion as i32,
            story_string: "Story.".into(),
            ..Default::default()
        })
        .await
        .expect("render")
        .into_inner();
    assert_eq!(rendered.text, "Story.");
    assert_eq!(
        rendered.messages.last(),
        Some(&message(
            pb::InjectionRole::Assistant,
            "Seraphina",
            "Deep.",
            ""
        ))
    );
    assert_eq!(rendered.messages.len(), 3);
    server.stop().await;
}
