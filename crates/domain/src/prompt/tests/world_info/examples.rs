//! World Info's example messages in a rendered prompt, and activated
//! entries end to end; sources as in [`super`].

use super::*;

// ---- examples

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn text_completion_examples_follow_the_story_string() {
    // SC:3442-3456 with Default.json's example_separator "***"; World Info
    // top texts first, bottom last (SC:4580-4596); after the story string
    // (SC:5133-5136), which ends with "\n" (power-user.js:2256-2261).
    let wi = Placement {
        examples_top: strings(&["T1", "T2"]),
        examples_bottom: strings(&["B1"]),
        ..wi()
    };
    let examples = strings(&["<START>\nAnn: hi\nBot: yo", "Bot: solo"]);
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            examples: &examples,
            ..input(PromptMode::TextCompletion, &[])
        }),
        "STORY\n***\nT1\n***\nT2\n***\nAnn: hi\nBot: yo\n***\nBot: solo\n***\nB1\n"
    );
    // After IN_PROMPT text, which already ends with "\n".
    let prompts = [p("a", "I", IN_PROMPT, 0, S)];
    assert_eq!(
        text(PromptInput {
            examples: &examples[1..],
            prompts: &prompts,
            ..input(PromptMode::TextCompletion, &[])
        }),
        "STORY\nI\n***\nBot: solo\n"
    );
    // Nothing before them: no newline.
    assert_eq!(
        text(PromptInput {
            examples: &examples[1..],
            story_string: "",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "***\nBot: solo\n"
    );
}

#[test]
fn example_texts_are_split_at_start_lines() {
    // SC:3443-3453: empty and a lone `<START>` give nothing; `<START>` in
    // any case splits; a text not starting with `<START>` is trimmed and
    // given one, so a `<START>` after leading space leaves an empty block.
    let examples = strings(&["", "<START>", "<START>\nA\n<start>\n  B  ", " <START>x"]);
    assert_eq!(
        text(PromptInput {
            examples: &examples,
            story_string: "",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "***\nA\n***\nB\n***\n\n***\nx\n"
    );
}

#[test]
fn chat_completion_examples_are_example_messages() {
    // OAI:647-658 (`<START>` heading replaced, first line skipped),
    // OAI:720-778 (split at `Ann:` / `Bot:`, the first speaker prefix
    // removed, trimmed; lines before the first speaker join the first
    // message), OAI:1092-1124 (`[Example Chat]` before each dialogue,
    // system messages named example_user / example_assistant), PM:2087-2135
    // (after worldInfoAfter, before the history).
    let wi = Placement {
        after: "WA".into(),
        examples_bottom: strings(&["just text"]),
        ..wi()
    };
    let examples = strings(&["<START>\nAnn: hi\nBot: yo\nthere\n<START>\nintro\nAnn: a Ann: b"]);
    let history = history(1);
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        examples: &examples,
        ..input(PromptMode::ChatCompletion, &history)
    });
    assert_eq!(
        rendered.messages,
        vec![
            story(),
            msg(S, "", "WA"),
            msg(S, "", "[Example Chat]"),
            msg(S, "example_user", "hi"),
            msg(S, "example_assistant", "yo\nthere"),
            msg(S, "", "[Example Chat]"),
            msg(S, "example_user", "intro\n a Ann: b"),
            msg(S, "", "[Example Chat]"),
            m(0),
        ]
    );
}

// ---- from activated entries

fn activated(position: WiPosition, order: f64, content: &str) -> Activated {
    Activated {
        book: "b".into(),
        uid: content.into(),
        position: Some(position),
        depth: Some(1),
        role: Role::System,
        order,
        outlet_name: "o".into(),
        content: content.into(),
    }
}

#[test]
fn activated_entries_end_to_end() {
    // Facts §3 with WI:5084-5153: each list ascending by order (outlets
    // descending), each text where the sections above put it.
    let entries = [
        activated(WiPosition::Before, 2.0, "before2"),
        activated(WiPosition::Before, 1.0, "before1"),
        activated(WiPosition::After, 1.0, "after"),
        activated(WiPosition::AtDepth, 5.0, "depth5"),
        activated(WiPosition::AtDepth, 3.0, "depth3"),
        activated(WiPosition::AnTop, 1.0, "antop"),
        activated(WiPosition::ExamplesTop, 1.0, "ex1"),
        activated(WiPosition::ExamplesTop, 2.0, "ex2"),
        activated(WiPosition::Outlet, 1.0, "out1"),
        activated(WiPosition::Outlet, 2.0, "out2"),
    ];
    let placement = place(&entries);
    let history = history(2);
    let note = note("NOTE");
    let rendered = render_prompt(PromptInput {
        world_info: Some(&placement),
        authors_note: Some(&note),
        story_string: "{{outlet::o}}",
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(
        rendered.text,
        "before1\nbefore2\nout2\nout1\nafter\n***\nex2\n***\nex1\n"
    );
    assert_eq!(
        rendered.messages,
        vec![
            m(0),
            msg(U, "Ann", "antop\nNOTE"),
            msg(S, "", "depth3\ndepth5"),
            m(1),
        ]
    );
}

// ---- any input

/// Text made of the pieces the parsers look for, multi-byte characters and
/// line terminators, so every slicing path is taken.
fn tricky_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    proptest::collection::vec(
        prop_oneof![
            Just("{{outlet::".to_owned()),
            Just("{{OutLet::".to_owned()),
            Just("}}".to_owned()),
            Just("}".to_owned()),
            Just("{".to_owned()),
            Just("<START>".to_owned()),
            Just("<start>".to_owned()),
            Just("Ann:".to_owned()),
            Just("Bot:".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("\u{2028}".to_owned()),
            Just("é".to_owned()),
            Just("水".to_owned()),
            Just("🙂".to_owned()),
            Just(" ".to_owned()),
            Just("mood".to_owned()),
            Just("{{wiBefore}}".to_owned()),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest::proptest! {
    /// No input panics, and a text without `{{` is unchanged by outlet
    /// substitution (only the macro is replaced, `macros.js:668`).
    #[test]
    fn any_text_renders_without_panicking(
        story in tricky_text(),
        example in tricky_text(),
        value in tricky_text(),
        outlet in tricky_text(),
    ) {
        let wi = Placement {
            before: outlet.clone(),
            examples_top: vec![example.clone()],
            outlets: outlets(&[("mood", &outlet)]),
            ..wi()
        };
        let prompts = [p("a", &value, IN_CHAT, 1, U), p("b", &value, IN_PROMPT, 0, S)];
        let note = note(&value);
        let examples = [example.clone()];
        let history = history(3);
        for mode in [PromptMode::TextCompletion, PromptMode::ChatCompletion] {
            render_prompt(PromptInput {
                world_info: Some(&wi),
                authors_note: Some(&note),
                prompts: &prompts,
                examples: &examples,
                story_string: &story,
                ..input(mode, &history)
            });
        }
        if !story.contains("{{") {
            proptest::prop_assert_eq!(
                super::super::super::world_info::substitute_outlets(&story, &wi),
                story
            );
        }
    }
}
