//! Table-driven placement tests: each case is an input and the exact output.

use super::*;

const S: Role = Role::System;
const U: Role = Role::User;
const A: Role = Role::Assistant;
const BEFORE: Position = Position::BeforePrompt;
const IN_PROMPT: Position = Position::InPrompt;
const IN_CHAT: Position = Position::InChat;
const NONE: Position = Position::None;

fn msg(role: Role, name: &str, content: &str) -> PromptMessage {
    PromptMessage {
        role,
        name: name.into(),
        content: content.into(),
        hidden: false,
        message_id: String::new(),
    }
}

fn hidden(role: Role, name: &str, content: &str) -> PromptMessage {
    PromptMessage {
        hidden: true,
        ..msg(role, name, content)
    }
}

fn p(key: &str, value: &str, position: Position, depth: u32, role: Role) -> ExtensionPrompt {
    ExtensionPrompt {
        key: key.into(),
        value: value.into(),
        position,
        depth,
        role,
        scan: false,
    }
}

/// m0..m{n-1}, alternating user (Ann) and assistant (Bot), oldest first.
fn history(n: usize) -> Vec<PromptMessage> {
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                msg(U, "Ann", &format!("m{i}"))
            } else {
                msg(A, "Bot", &format!("m{i}"))
            }
        })
        .collect()
}

struct Case {
    name: &'static str,
    mode: PromptMode,
    history: Vec<PromptMessage>,
    continue_last: bool,
    prompts: Vec<ExtensionPrompt>,
    text: &'static str,
    messages: Vec<PromptMessage>,
}

fn text_case(
    name: &'static str,
    history: Vec<PromptMessage>,
    prompts: Vec<ExtensionPrompt>,
    text: &'static str,
    messages: Vec<PromptMessage>,
) -> Case {
    Case {
        name,
        mode: PromptMode::TextCompletion,
        history,
        continue_last: false,
        prompts,
        text,
        messages,
    }
}

fn chat_case(
    name: &'static str,
    history: Vec<PromptMessage>,
    prompts: Vec<ExtensionPrompt>,
    messages: Vec<PromptMessage>,
) -> Case {
    Case {
        name,
        mode: PromptMode::ChatCompletion,
        history,
        continue_last: false,
        prompts,
        text: "",
        messages,
    }
}

fn continuing(mut case: Case) -> Case {
    case.continue_last = true;
    case
}

fn m(i: usize) -> PromptMessage {
    history(i + 1).pop().unwrap()
}

fn story() -> PromptMessage {
    msg(S, "", "STORY")
}

fn cases() -> Vec<Case> {
    vec![
        // ---- text completion: around the story string
        text_case("no prompts", history(2), vec![], "STORY", vec![m(0), m(1)]),
        text_case(
            "before prompt",
            history(1),
            vec![p("k", "B", BEFORE, 0, S)],
            "B\nSTORY",
            vec![m(0)],
        ),
        text_case(
            "in prompt",
            history(1),
            vec![p("k", "I", IN_PROMPT, 0, S)],
            "STORY\nI\n",
            vec![m(0)],
        ),
        text_case(
            "both sides",
            vec![],
            vec![p("x", "I", IN_PROMPT, 0, S), p("y", "B", BEFORE, 0, S)],
            "B\nSTORY\nI\n",
            vec![],
        ),
        text_case(
            "joined in key order",
            vec![],
            vec![
                p("b", "second", BEFORE, 0, S),
                p("a", "first", BEFORE, 0, S),
            ],
            "first\nsecond\nSTORY",
            vec![],
        ),
        text_case(
            "values trimmed",
            vec![],
            vec![
                p("k", "  B \n", BEFORE, 0, S),
                p("l", "\tI  ", IN_PROMPT, 0, S),
            ],
            "B\nSTORY\nI\n",
            vec![],
        ),
        text_case(
            "empty value skipped",
            vec![],
            vec![p("k", "", BEFORE, 0, S), p("l", "I", IN_PROMPT, 0, S)],
            "STORY\nI\n",
            vec![],
        ),
        text_case(
            "blank value skipped",
            vec![],
            vec![p("k", "  \n ", IN_PROMPT, 0, S)],
            "STORY",
            vec![],
        ),
        text_case(
            "none never placed",
            history(1),
            vec![p("k", "N", NONE, 0, S)],
            "STORY",
            vec![m(0)],
        ),
        text_case(
            "same key: the later replaces",
            vec![],
            vec![p("k", "old", BEFORE, 0, S), p("k", "new", BEFORE, 0, S)],
            "new\nSTORY",
            vec![],
        ),
        text_case(
            "same key: a later empty value removes",
            vec![],
            vec![p("k", "old", BEFORE, 0, S), p("k", "", BEFORE, 0, S)],
            "STORY",
            vec![],
        ),
        text_case(
            "same key: a later position moves it",
            history(1),
            vec![p("k", "v", BEFORE, 0, S), p("k", "v", IN_CHAT, 0, S)],
            "STORY",
            vec![m(0), msg(S, "", "v")],
        ),
        text_case(
            "role ignored around the story string",
            vec![],
            vec![
                p("b", "user's", BEFORE, 0, U),
                p("a", "system's", BEFORE, 0, S),
                p("c", "assistant's", BEFORE, 0, A),
            ],
            "system's\nuser's\nassistant's\nSTORY",
            vec![],
        ),
        text_case(
            "scan never changes placement",
            vec![],
            vec![ExtensionPrompt {
                scan: true,
                ..p("k", "B", BEFORE, 0, S)
            }],
            "B\nSTORY",
            vec![],
        ),
        // ---- IN_CHAT, both modes
        text_case(
            "depth 2 of 5 (reference example)",
            history(5),
            vec![p("r", "R", IN_CHAT, 2, S)],
            "STORY",
            vec![m(0), m(1), m(2), msg(S, "", "R"), m(3), m(4)],
        ),
        text_case(
            "depth counts visible messages only",
            vec![m(0), m(1), m(2), hidden(A, "Bot", "m3"), m(4)],
            vec![p("r", "R", IN_CHAT, 2, S)],
            "STORY",
            vec![m(0), m(1), msg(S, "", "R"), m(2), m(4)],
        ),
        text_case(
            "depth 0 goes after the last",
            history(2),
            vec![p("r", "R", IN_CHAT, 0, S)],
            "STORY",
            vec![m(0), m(1), msg(S, "", "R")],
        ),
        continuing(text_case(
            "depth 0 goes before the last when continuing",
            history(2),
            vec![p("r", "R", IN_CHAT, 0, S)],
            "STORY",
            vec![m(0), msg(S, "", "R"), m(1)],
        )),
        continuing(text_case(
            "continuing: depth 0 and depth 1 land together but stay two blocks",
            history(2),
            vec![p("a", "zero", IN_CHAT, 0, S), p("b", "one", IN_CHAT, 1, S)],
            "STORY",
            vec![m(0), msg(S, "", "one"), msg(S, "", "zero"), m(1)],
        )),
        continuing(text_case(
            "continuing: blocks of depth 0 and 1 keep their own roles",
            history(2),
            vec![
                p("z", "z0", IN_CHAT, 0, S),
                p("s", "s1", IN_CHAT, 1, S),
                p("a", "a1", IN_CHAT, 1, A),
            ],
            "STORY",
            vec![
                m(0),
                msg(A, "Bot", "a1"),
                msg(S, "", "s1"),
                msg(S, "", "z0"),
                m(1),
            ],
        )),
        continuing(text_case(
            "continuing: depth 0 counts as 1, deeper blocks count it as inserted",
            history(3),
            vec![p("z", "Z", IN_CHAT, 0, S), p("t", "T", IN_CHAT, 2, S)],
            "STORY",
            vec![m(0), msg(S, "", "T"), m(1), msg(S, "", "Z"), m(2)],
        )),
        continuing(text_case(
            "continuing with no history: depth 0 is the whole chat",
            vec![],
            vec![p("z", "Z", IN_CHAT, 0, U)],
            "STORY",
            vec![msg(U, "", "Z")],
        )),
        text_case(
            "a block past the history goes first, after shallower blocks moved",
            history(3),
            vec![
                p("u", "u1", IN_CHAT, 1, U),
                p("s", "s10", IN_CHAT, 10, S),
                p("a", "a10", IN_CHAT, 10, A),
            ],
            "STORY",
            vec![
                msg(A, "Bot", "a10"),
                msg(S, "", "s10"),
                m(0),
                m(1),
                msg(U, "Ann", "u1"),
                m(2),
            ],
        ),
        text_case(
            "joined text trimmed at its start: a leading blank value leaves no line",
            history(1),
            vec![p("a", "  ", IN_CHAT, 0, S), p("b", " x ", IN_CHAT, 0, S)],
            "STORY",
            vec![m(0), msg(S, "", "x")],
        ),
        text_case(
            "joined text trimmed at its start only: blank values later stay lines",
            history(1),
            vec![
                p("a", "x", IN_CHAT, 0, S),
                p("b", " ", IN_CHAT, 0, S),
                p("c", "y", IN_CHAT, 0, S),
                p("d", "\t", IN_CHAT, 0, S),
            ],
            "STORY",
            vec![m(0), msg(S, "", "x\n\ny\n")],
        ),
        text_case(
            "deeper than the history goes first",
            history(2),
            vec![p("r", "R", IN_CHAT, 9, S)],
            "STORY",
            vec![msg(S, "", "R"), m(0), m(1)],
        ),
        text_case(
            "two depths beyond the history: the deeper first",
            history(2),
            vec![
                p("a", "five", IN_CHAT, 5, S),
                p("b", "seven", IN_CHAT, 7, S),
            ],
            "STORY",
            vec![msg(S, "", "seven"), msg(S, "", "five"), m(0), m(1)],
        ),
        text_case(
            "roles at one depth: assistant, user, system",
            history(2),
            vec![
                p("s", "sys", IN_CHAT, 1, S),
                p("u", "usr", IN_CHAT, 1, U),
                p("a", "ast", IN_CHAT, 1, A),
            ],
            "STORY",
            vec![
                m(0),
                msg(A, "Bot", "ast"),
                msg(U, "Ann", "usr"),
                msg(S, "", "sys"),
                m(1),
            ],
        ),
        text_case(
            "one message per role per depth, joined in key order",
            history(1),
            vec![
                p("z", "last", IN_CHAT, 0, U),
                p("m", "middle", IN_CHAT, 0, U),
                p("a", "first", IN_CHAT, 0, U),
            ],
            "STORY",
            vec![m(0), msg(U, "Ann", "first\nmiddle\nlast")],
        ),
        text_case(
            "several depths keep their places",
            history(5),
            vec![
                p("one", "R1", IN_CHAT, 1, S),
                p("two", "R2", IN_CHAT, 2, S),
                p("four", "R4", IN_CHAT, 4, S),
            ],
            "STORY",
            vec![
                m(0),
                msg(S, "", "R4"),
                m(1),
                m(2),
                msg(S, "", "R2"),
                m(3),
                msg(S, "", "R1"),
                m(4),
            ],
        ),
        text_case(
            "names: user and assistant take the latest speaker's, system none",
            vec![
                msg(U, "Ann", "hi"),
                msg(A, "Bot", "yo"),
                msg(U, "Zed", "hey"),
            ],
            vec![p("u", "U!", IN_CHAT, 0, U), p("a", "A!", IN_CHAT, 0, A)],
            "STORY",
            vec![
                msg(U, "Ann", "hi"),
                msg(A, "Bot", "yo"),
                msg(U, "Zed", "hey"),
                msg(A, "Bot", "A!"),
                msg(U, "Zed", "U!"),
            ],
        ),
        text_case(
            "hidden messages never appear",
            vec![hidden(U, "Ann", "secret"), hidden(A, "Bot", "secret too")],
            vec![p("r", "R", IN_CHAT, 1, S)],
            "STORY",
            vec![msg(S, "", "R")],
        ),
        text_case(
            "an empty history still gets IN_CHAT prompts",
            vec![],
            vec![p("r", "R", IN_CHAT, 3, A)],
            "STORY",
            vec![msg(A, "", "R")],
        ),
        text_case(
            "empty IN_CHAT value skipped",
            history(1),
            vec![p("r", " ", IN_CHAT, 0, S)],
            "STORY",
            vec![m(0)],
        ),
        text_case(
            "depth beyond 1000 counts as 1000",
            history(1),
            vec![p("r", "R", IN_CHAT, 5000, S)],
            "STORY",
            vec![msg(S, "", "R"), m(0)],
        ),
        // ---- chat completion
        chat_case(
            "chat: main prompt then history",
            history(2),
            vec![],
            vec![story(), m(0), m(1)],
        ),
        chat_case(
            "chat: before prompt at the start",
            history(1),
            vec![p("k", "B", BEFORE, 0, S)],
            vec![msg(S, "", "B"), story(), m(0)],
        ),
        chat_case(
            "chat: in prompt at the end of the main prompt",
            history(1),
            vec![p("k", "I", IN_PROMPT, 0, U)],
            vec![story(), msg(U, "", "I"), m(0)],
        ),
        chat_case(
            "chat: one message per role, system, user, assistant",
            vec![],
            vec![
                p("c", "ast", BEFORE, 0, A),
                p("b", "usr", BEFORE, 0, U),
                p("a", "sys", BEFORE, 0, S),
                p("d", "sys2", BEFORE, 0, S),
            ],
            vec![
                msg(S, "", "sys\nsys2"),
                msg(U, "", "usr"),
                msg(A, "", "ast"),
                story(),
            ],
        ),
        chat_case(
            "chat: everything together",
            vec![m(0), hidden(A, "Bot", "gone"), m(2)],
            vec![
                p("b", "B", BEFORE, 0, S),
                p("i", "I", IN_PROMPT, 0, S),
                p("c", "C", IN_CHAT, 1, S),
                p("n", "N", NONE, 0, S),
                p("e", "", IN_PROMPT, 0, S),
            ],
            vec![
                msg(S, "", "B"),
                story(),
                msg(S, "", "I"),
                m(0),
                msg(S, "", "C"),
                m(2),
            ],
        ),
        chat_case(
            "chat: roles at one depth: assistant, user, system",
            history(1),
            vec![
                p("a", "ast", IN_CHAT, 0, A),
                p("s", "sys", IN_CHAT, 0, S),
                p("u", "usr", IN_CHAT, 0, U),
            ],
            vec![
                story(),
                m(0),
                msg(A, "", "ast"),
                msg(U, "Ann", "usr"),
                msg(S, "", "sys"),
            ],
        ),
        continuing(chat_case(
            "chat: continuing, depth 0 and depth 1 stay two blocks",
            history(2),
            vec![p("a", "zero", IN_CHAT, 0, U), p("b", "one", IN_CHAT, 1, U)],
            vec![
                story(),
                m(0),
                msg(U, "Ann", "one"),
                msg(U, "Ann", "zero"),
                m(1),
            ],
        )),
        continuing(chat_case(
            "chat: continuing moves depth 0 before the last",
            history(2),
            vec![p("r", "R", IN_CHAT, 0, A)],
            vec![story(), m(0), msg(A, "Bot", "R"), m(1)],
        )),
    ]
}

#[test]
fn every_placement_rule_and_their_combinations() {
    let cases = cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for case in cases {
        let rendered = render_prompt(PromptInput {
            mode: case.mode,
            story_string: "STORY",
            history: &case.history,
            continue_last: case.continue_last,
            prompts: &case.prompts,
            world_info: None,
            authors_note: None,
            examples: &[],
            user_name: "",
            char_name: "",
        });
        assert_eq!(rendered.text, case.text, "{}: text", case.name);
        assert_eq!(rendered.messages, case.messages, "{}: messages", case.name);
    }
}

mod chat;

mod world_info;
