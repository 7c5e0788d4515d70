//! World Info in a rendered prompt. Line numbers are SillyTavern 1.18.0
//! (51ad27f): `script.js` (SC), `world-info.js` (WI), `openai.js` (OAI),
//! `PromptManager.js` (PM), `macros.js`; "facts §3" is the facts file.

use std::collections::BTreeMap;

use super::super::world_info::authors_note;
use super::*;
use crate::world_info::place::{DepthPrompt, place};
use crate::world_info::types::{Activated, WiPosition};

fn wi() -> Placement {
    Placement::default()
}

fn outlets(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The input every test starts from: story "STORY", nothing else.
fn input<'a>(mode: PromptMode, history: &'a [PromptMessage]) -> PromptInput<'a> {
    PromptInput {
        mode,
        story_string: "STORY",
        history,
        continue_last: false,
        prompts: &[],
        world_info: None,
        authors_note: None,
        examples: &[],
        user_name: "Ann",
        char_name: "Bot",
    }
}

fn text(input: PromptInput<'_>) -> String {
    render_prompt(input).text
}

fn before_after() -> Placement {
    Placement {
        before: "WB".into(),
        after: "WA".into(),
        ..wi()
    }
}

// ---- before / after

#[test]
fn text_completion_without_macros_puts_before_and_after_around_the_story_string() {
    // Default.json: anchorBefore, system, wiBefore, description..scenario,
    // wiAfter, persona, anchorAfter, each followed by "\n" when non-empty.
    let wi = before_after();
    let prompts = [p("a", "B", BEFORE, 0, S), p("b", "I", IN_PROMPT, 0, S)];
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        prompts: &prompts,
        ..input(PromptMode::TextCompletion, &[])
    });
    assert_eq!(rendered.text, "B\nWB\nSTORY\nWA\nI\n");
    let only_before = Placement {
        before: "WB".into(),
        ..wi.clone()
    };
    let only_before = Placement {
        after: String::new(),
        ..only_before
    };
    assert_eq!(
        text(PromptInput {
            world_info: Some(&only_before),
            ..input(PromptMode::TextCompletion, &[])
        }),
        "WB\nSTORY"
    );
    // An empty story string: only the non-empty parts.
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "WB\nWA"
    );
}

#[test]
fn story_string_macros_take_the_texts() {
    // SC:4652-4655: wiBefore and loreBefore are both the before text,
    // wiAfter and loreAfter the after text; every occurrence.
    let wi = before_after();
    let story = "{{wiBefore}}|{{loreBefore}}|X|{{wiAfter}}|{{loreAfter}}";
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: story,
            ..input(PromptMode::TextCompletion, &[])
        }),
        "WB|WB|X|WA|WA"
    );
    // A macro for one side only: the other side goes around.
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "{{loreBefore}}:X",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "WB:X\nWA"
    );
    // Handlebars names are case-sensitive: `{{WIBEFORE}}` is no macro here.
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "{{WIBEFORE}}",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "WB\n{{WIBEFORE}}\nWA"
    );
    // Without World Info the macros read as empty (Handlebars renders a
    // missing value as empty).
    assert_eq!(
        text(PromptInput {
            story_string: "[{{wiBefore}}]",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "[]"
    );
}

#[test]
fn chat_completion_places_before_and_after_after_the_main_prompt() {
    // PM:2087-2135: main, worldInfoBefore, (character definitions),
    // worldInfoAfter, dialogueExamples, chatHistory; extension prompts go
    // at the start/end of main (OAI:1132-1138); wi_format `{0}` (OAI:106).
    let wi = before_after();
    let history = history(1);
    let prompts = [p("a", "B", BEFORE, 0, S), p("b", "I", IN_PROMPT, 0, U)];
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        prompts: &prompts,
        ..input(PromptMode::ChatCompletion, &history)
    });
    assert_eq!(rendered.text, "");
    assert_eq!(
        rendered.messages,
        vec![
            msg(S, "", "B"),
            story(),
            msg(U, "", "I"),
            msg(S, "", "WB"),
            msg(S, "", "WA"),
            m(0),
        ]
    );
    // A macro takes its text; no message for it then.
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        story_string: "STORY {{wiAfter}}",
        ..input(PromptMode::ChatCompletion, &[])
    });
    assert_eq!(
        rendered.messages,
        vec![msg(S, "", "STORY WA"), msg(S, "", "WB")]
    );
}

// ---- at depth

#[test]
fn depth_prompts_merge_with_other_in_chat_prompts_by_key() {
    // SC:3251: IN_CHAT prompts of one depth and role are joined in sorted
    // key order; World Info's key is `customDepthWI_2_0` (SC:4611).
    let wi = Placement {
        depth: vec![DepthPrompt {
            depth: 2,
            role: S,
            text: "LORE".into(),
        }],
        ..wi()
    };
    let history = history(4);
    let prompts = [
        p("zz_last", "LAST", IN_CHAT, 2, S),
        p("auto_recap_scene", "RECAP", IN_CHAT, 2, S),
    ];
    for mode in [PromptMode::TextCompletion, PromptMode::ChatCompletion] {
        let rendered = render_prompt(PromptInput {
            world_info: Some(&wi),
            prompts: &prompts,
            ..input(mode, &history)
        });
        let chat: Vec<PromptMessage> = rendered
            .messages
            .into_iter()
            .filter(|m| m.content != "STORY")
            .collect();
        assert_eq!(
            chat,
            vec![m(0), m(1), msg(S, "", "RECAP\nLORE\nLAST"), m(2), m(3)]
        );
    }
}

#[test]
fn depth_prompts_of_two_roles_make_one_block() {
    // SC (doChatInject): one message per role at a depth, assistant, user,
    // system once reversed back; a user message takes the last user's name.
    let wi = Placement {
        depth: vec![
            DepthPrompt {
                depth: 1,
                role: S,
                text: "SYS".into(),
            },
            DepthPrompt {
                depth: 1,
                role: U,
                text: "USR".into(),
            },
        ],
        ..wi()
    };
    let history = history(2);
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(
        rendered.messages,
        vec![m(0), msg(U, "Ann", "USR"), msg(S, "", "SYS"), m(1)]
    );
}

#[test]
fn world_info_depth_key_replaces_a_request_prompt_of_that_key() {
    // SC:8866-8867: a later setExtensionPrompt under a key replaces it;
    // World Info's are set after the request's (facts §3, SC:4608-4614).
    let wi = Placement {
        depth: vec![DepthPrompt {
            depth: 1,
            role: S,
            text: "NEW".into(),
        }],
        ..wi()
    };
    let history = history(2);
    let prompts = [p("customDepthWI_1_0", "OLD", IN_CHAT, 1, S)];
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        prompts: &prompts,
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.messages, vec![m(0), msg(S, "", "NEW"), m(1)]);
}

// ---- author's note

fn note(value: &str) -> ExtensionPrompt {
    ExtensionPrompt {
        key: "note".into(),
        value: value.into(),
        position: IN_CHAT,
        depth: 1,
        role: U,
        scan: true,
    }
}

#[test]
fn authors_note_wrap() {
    // WI:5150: `${top}\n${note}\n${bottom}` without one leading and one
    // trailing "\n"; WI:5151 re-sets it under its key (authors-note.js:26)
    // with its position, depth, role and scan.
    let wrap = |top: &str, value: &str, bottom: &str| {
        let wi = Placement {
            an_top: top.into(),
            an_bottom: bottom.into(),
            ..wi()
        };
        authors_note(&note(value), &wi)
    };
    let wrapped = wrap("T1\nT2", "NOTE", "B");
    assert_eq!(
        wrapped,
        ExtensionPrompt {
            key: "2_floating_prompt".into(),
            value: "T1\nT2\nNOTE\nB".into(),
            ..note("")
        }
    );
    assert_eq!(wrap("", "NOTE", "").value, "NOTE");
    assert_eq!(wrap("", "NOTE", "B").value, "NOTE\nB");
    assert_eq!(wrap("T", "NOTE", "").value, "T\nNOTE");
    // Only one newline each side goes.
    assert_eq!(wrap("", "\nN\n", "").value, "\nN\n");
    assert_eq!(wrap("T", "", "").value, "T\n");
    assert_eq!(wrap("", "", "").value, "");
}

#[test]
fn authors_note_is_placed_with_world_info_around_it() {
    let wi = Placement {
        an_top: "TOP".into(),
        an_bottom: "BOTTOM".into(),
        ..wi()
    };
    let history = history(2);
    let note = note("NOTE");
    // A request prompt under the note's key is replaced (SC:8866-8867).
    let prompts = [p("2_floating_prompt", "OLD", IN_PROMPT, 0, S)];
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        authors_note: Some(&note),
        prompts: &prompts,
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.text, "STORY");
    assert_eq!(
        rendered.messages,
        vec![m(0), msg(U, "Ann", "TOP\nNOTE\nBOTTOM"), m(1)]
    );
    // Without World Info the note is placed as it is.
    let rendered = render_prompt(PromptInput {
        authors_note: Some(&note),
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.messages, vec![m(0), msg(U, "Ann", "NOTE"), m(1)]);
}

#[test]
fn without_an_authors_note_its_top_and_bottom_go_nowhere() {
    // WI:5149: only when the note is inserted (`shouldWIAddPrompt`).
    let wi = Placement {
        an_top: "TOP".into(),
        an_bottom: "BOTTOM".into(),
        ..wi()
    };
    let history = history(2);
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.text, "STORY");
    assert_eq!(rendered.messages, history);
}

// ---- outlets

fn with_outlets() -> Placement {
    Placement {
        outlets: outlets(&[("mood", "calm"), ("pad", " p ")]),
        ..wi()
    }
}

#[test]
fn outlet_macro_syntax() {
    // macros.js:668 `/{{outlet::(.+?)}}/gi`, the name trimmed; an outlet
    // nothing fills reads as empty (macros.js:597-600).
    let wi = with_outlets();
    let story = "A {{outlet::mood}} {{OUTLET:: mood }} [{{outlet::none}}] {{outlet::}} {{outlet::a\nb}} {{{outlet::mood}}}";
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: story,
            ..input(PromptMode::TextCompletion, &[])
        }),
        "A calm calm [] {{outlet::}} {{outlet::a\nb}} {calm}"
    );
    // `.+?` stops at the first "}}" after at least one character.
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "{{outlet::mood}}}",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "calm}"
    );
    // A name may hold `}` and `}}` when no `}}` ends it earlier: here it
    // is `}}mood`, which no outlet has.
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "{{outlet::}}mood}}",
            ..input(PromptMode::TextCompletion, &[])
        }),
        ""
    );
    // Without World Info every outlet is empty.
    assert_eq!(
        text(PromptInput {
            story_string: "<{{outlet::mood}}>",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "<>"
    );
}

#[test]
fn unclosed_outlet_macros_stay_as_written_and_cost_one_pass() {
    // macros.js:668 `/{{outlet::(.+?)}}/gi`: `.` stops at a line break, so
    // macros left open on a line stay as written, and one on the next
    // line is still substituted.
    let wi = with_outlets();
    assert_eq!(
        text(PromptInput {
            world_info: Some(&wi),
            story_string: "{{outlet::a {{outlet::b\r{{outlet::mood}} {{outlet::",
            ..input(PromptMode::TextCompletion, &[])
        }),
        "{{outlet::a {{outlet::b\rcalm {{outlet::"
    );
    // A long line of open macros (a book's content can be one) is read in
    // one pass, not once per macro: this would take minutes otherwise.
    let open = "{{outlet::x ".repeat(100_000);
    let rendered = text(PromptInput {
        world_info: Some(&wi),
        story_string: &open,
        ..input(PromptMode::TextCompletion, &[])
    });
    assert!(
        rendered.trim_end() == open.trim_end(),
        "the open macros are kept as written ({} bytes in, {} out)",
        open.len(),
        rendered.len()
    );
}

#[test]
fn outlets_are_substituted_in_prompts_not_in_the_history() {
    // SC:3266-3268: joined extension prompt texts are substituted (then
    // trimmed for BEFORE/IN_PROMPT, SC:4656-4657; trimmed at the start in
    // chat); the story string after World Info's texts go in
    // (power-user.js:2248-2251). The history is not a prompt text.
    let wi = Placement {
        before: "B {{outlet::mood}}".into(),
        depth: vec![DepthPrompt {
            depth: 1,
            role: S,
            text: "D {{outlet::mood}}".into(),
        }],
        an_top: "T {{outlet::mood}}".into(),
        ..with_outlets()
    };
    let history = vec![msg(U, "Ann", "{{outlet::mood}}"), msg(A, "Bot", "x")];
    let note = note("N {{outlet::mood}}");
    let prompts = [
        p("a", "X", IN_PROMPT, 0, S),
        p("b", "{{outlet::pad}}", IN_PROMPT, 0, S),
        p("c", "{{outlet::pad}}", BEFORE, 0, S),
    ];
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        authors_note: Some(&note),
        prompts: &prompts,
        story_string: "S {{outlet::mood}}",
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.text, "p\nB calm\nS calm\nX\n p\n");
    assert_eq!(
        rendered.messages,
        vec![
            history[0].clone(),
            msg(U, "Ann", "T calm\nN calm"),
            msg(S, "", "D calm"),
            history[1].clone(),
        ]
    );
    // Chat completion: the before message too (the depth-1 prompt goes
    // first in an empty history).
    let rendered = render_prompt(PromptInput {
        world_info: Some(&wi),
        ..input(PromptMode::ChatCompletion, &[])
    });
    assert_eq!(
        rendered.messages,
        vec![story(), msg(S, "", "B calm"), msg(S, "", "D calm")]
    );
}

#[test]
fn an_in_chat_message_empty_after_substitution_is_not_placed() {
    // SC (doChatInject): the substituted, start-trimmed text is inserted
    // only when non-empty.
    let history = history(2);
    let prompts = [p("a", "{{outlet::none}}", IN_CHAT, 1, S)];
    let rendered = render_prompt(PromptInput {
        prompts: &prompts,
        ..input(PromptMode::TextCompletion, &history)
    });
    assert_eq!(rendered.messages, history);
}

#[test]
fn depth_prompts_deeper_than_sillytaverns_loop_are_never_placed() {
    // SC:499 MAX_INJECTION_DEPTH = 10000; the injection loops run 0..=10000
    // (SC:5575, OAI:811): a deeper prompt matches no depth. Below it, a
    // depth past the request limit (1000) still counts messages.
    let depth = |depth: u32, text: &str| DepthPrompt {
        depth,
        role: S,
        text: text.into(),
    };
    let deep = Placement {
        depth: vec![depth(1500, "DEEP"), depth(10_001, "NEVER")],
        ..wi()
    };
    let long = history(1502);
    let rendered = render_prompt(PromptInput {
        world_info: Some(&deep),
        ..input(PromptMode::TextCompletion, &long)
    });
    assert_eq!(rendered.messages.len(), 1503);
    assert_eq!(rendered.messages[2], msg(S, "", "DEEP"));
    let deepest = Placement {
        depth: vec![depth(10_000, "FIRST"), depth(10_001, "NEVER")],
        ..wi()
    };
    let short = history(2);
    let rendered = render_prompt(PromptInput {
        world_info: Some(&deepest),
        ..input(PromptMode::TextCompletion, &short)
    });
    assert_eq!(rendered.messages, vec![msg(S, "", "FIRST"), m(0), m(1)]);
}

mod examples;
