//! World Info's part of a rendered prompt: the story-string macros, the
//! `{{outlet::name}}` macro, the author's note wrap and the example
//! messages. [`super`]'s module doc says where each goes and why.

use super::{ExtensionPrompt, PromptMessage, Role};
use crate::world_info::place::Placement;

/// The key of the author's note extension prompt (`authors-note.js:26`).
pub const AUTHORS_NOTE_KEY: &str = "2_floating_prompt";

/// The macros that take World Info's "before" text in a story string
/// (`script.js:4652,4654`). Handlebars names are case-sensitive.
const BEFORE_MACROS: [&str; 2] = ["{{wiBefore}}", "{{loreBefore}}"];
/// The macros that take World Info's "after" text (`script.js:4653,4655`).
const AFTER_MACROS: [&str; 2] = ["{{wiAfter}}", "{{loreAfter}}"];

/// The heading of an example block in text completion: SillyTavern's
/// default context template's `example_separator` ("***",
/// `default/content/presets/context/Default.json`) and a newline
/// (`script.js:3451-3452`).
const TEXT_BLOCK_HEADING: &str = "***\n";
/// The heading of an example block in chat completion
/// (`script.js:3452`).
const CHAT_BLOCK_HEADING: &str = "<START>\n";
/// The system message before each example dialogue in chat completion:
/// SillyTavern's default `new_example_chat_prompt` (`openai.js:109`).
const NEW_EXAMPLE_CHAT: &str = "[Example Chat]";

/// A story string with World Info's before/after texts put in.
pub(super) struct StoryString {
    /// The story string, macros replaced, with the texts its macros did
    /// not take around it; outlets not yet substituted.
    pub text: String,
    /// Whether World Info's before text went into a macro.
    pub took_before: bool,
    /// Whether World Info's after text went into a macro.
    pub took_after: bool,
}

/// Replaces the story string's `{{wiBefore}}`/`{{loreBefore}}` and
/// `{{wiAfter}}`/`{{loreAfter}}` with World Info's texts (empty without
/// World Info). With `around`, a text no macro took goes before
/// (respectively after) the story string, the non-empty parts joined with
/// `\n` (text completion, see the module doc of [`super`]).
pub(super) fn story_string(story: &str, wi: &Placement, around: bool) -> StoryString {
    let took_before = BEFORE_MACROS.iter().any(|m| story.contains(m));
    let took_after = AFTER_MACROS.iter().any(|m| story.contains(m));
    let mut text = story.to_owned();
    for m in BEFORE_MACROS {
        text = text.replace(m, &wi.before);
    }
    for m in AFTER_MACROS {
        text = text.replace(m, &wi.after);
    }
    if around {
        let before = if took_before { "" } else { wi.before.as_str() };
        let after = if took_after { "" } else { wi.after.as_str() };
        text = [before, text.as_str(), after]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
    }
    StoryString {
        text,
        took_before,
        took_after,
    }
}

/// Substitutes every `{{outlet::name}}` in `text` with the outlet's text
/// (empty for an outlet nothing fills), as `macros.js:668` does: `outlet`
/// in any ASCII case, the name at least one character up to the first
/// `}}`, on one line, trimmed. The inserted text is not scanned again.
pub(super) fn substitute_outlets(text: &str, wi: &Placement) -> String {
    const OPEN: &str = "{{outlet::";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = find_open(rest, OPEN) {
        let name_start = start + OPEN.len();
        match outlet_name_end(&rest[name_start..]) {
            Ok(len) => {
                out.push_str(&rest[..start]);
                out.push_str(wi.outlet(&rest[name_start..name_start + len]));
                rest = &rest[name_start + len + 2..];
            }
            Err(line) => {
                // No match at this `{{`. The regex would try again one
                // character on, but no macro can start before the line's
                // end: each would need a `}}` this search did not find.
                // Skipping there keeps a long line of unclosed macros
                // linear.
                out.push_str(&rest[..name_start + line]);
                rest = &rest[name_start + line..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The byte index of the first `open` in `text`, ASCII case-insensitive.
fn find_open(text: &str, open: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let needle = open.as_bytes();
    (0..bytes.len().checked_sub(needle.len())? + 1)
        .find(|&i| bytes[i..i + needle.len()].eq_ignore_ascii_case(needle))
}

/// The byte length of the name of an outlet macro starting at `after`'s
/// start: the shortest non-empty run without a line terminator that `}}`
/// follows (JavaScript's `(.+?)}}`). When there is none, `Err` with the
/// byte offset of the line's end (its terminator, or the text's end): no
/// `}}` comes before it.
fn outlet_name_end(after: &str) -> Result<usize, usize> {
    let mut chars = after.char_indices();
    let Some((_, first)) = chars.next() else {
        return Err(0);
    };
    if is_line_terminator(first) {
        return Err(0);
    }
    let mut end = first.len_utf8();
    loop {
        if after[end..].starts_with("}}") {
            return Ok(end);
        }
        let Some((at, c)) = chars.next() else {
            return Err(after.len());
        };
        if is_line_terminator(c) {
            return Err(at);
        }
        end += c.len_utf8();
    }
}

/// JavaScript's line terminators, which `.` does not match.
fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// The request's author's note with World Info's AN top/bottom texts
/// around its value (`world-info.js:5149-5153`): top, the note and bottom
/// joined with `\n`, then one leading and one trailing `\n` removed. Under
/// [`AUTHORS_NOTE_KEY`], the note's position, depth, role and scan kept.
pub(super) fn authors_note(note: &ExtensionPrompt, wi: &Placement) -> ExtensionPrompt {
    let wrapped = format!("{}\n{}\n{}", wi.an_top, note.value, wi.an_bottom);
    let wrapped = wrapped.strip_prefix('\n').unwrap_or(&wrapped);
    let wrapped = wrapped.strip_suffix('\n').unwrap_or(wrapped);
    ExtensionPrompt {
        key: AUTHORS_NOTE_KEY.to_owned(),
        value: wrapped.to_owned(),
        ..note.clone()
    }
}

/// The example blocks, in order: World Info's examples-top texts, the
/// request's examples, World Info's examples-bottom texts, each parsed
/// into blocks (`script.js:4557,4580-4596`) with `heading`, outlets
/// substituted first.
fn example_blocks(examples: &[String], wi: &Placement, heading: &str) -> Vec<String> {
    wi.examples_top
        .iter()
        .chain(examples)
        .chain(&wi.examples_bottom)
        .flat_map(|raw| parse_examples(&substitute_outlets(raw, wi), heading))
        .collect()
}

/// SillyTavern's `parseMesExamples` (`script.js:3442-3456`): nothing for an
/// empty text or a lone `<START>`; a text not starting with `<START>` gets
/// one; each part after a `<START>` (any case) becomes `heading`, the part
/// trimmed, and `\n`.
fn parse_examples(raw: &str, heading: &str) -> Vec<String> {
    if raw.is_empty() || raw == "<START>" {
        return Vec::new();
    }
    let owned;
    let text = if raw.starts_with("<START>") {
        raw
    } else {
        owned = format!("<START>\n{}", js_trim(raw));
        owned.as_str()
    };
    split_start(text)
        .into_iter()
        .skip(1)
        .map(|block| format!("{heading}{}\n", js_trim(block)))
        .collect()
}

/// `text` split at every `<START>`, ASCII case-insensitive.
fn split_start(text: &str) -> Vec<&str> {
    const START: &str = "<START>";
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(i) = find_open(rest, START) {
        parts.push(&rest[..i]);
        rest = &rest[i + START.len()..];
    }
    parts.push(rest);
    parts
}

/// JavaScript's `String.prototype.trim`: white space and line terminators,
/// U+FEFF included.
fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// Text completion's examples: the blocks joined, each `***\n`, the block
/// and `\n` (`script.js:4962`, 5133-5136); empty when there are none.
pub(super) fn text_examples(examples: &[String], wi: &Placement) -> String {
    example_blocks(examples, wi, TEXT_BLOCK_HEADING).concat()
}

/// Chat completion's example messages (`openai.js:647-658`, 720-778,
/// 1092-1124): per block, a system message `[Example Chat]`, then the
/// block's messages, each a system message named `example_user` or
/// `example_assistant`.
pub(super) fn chat_examples(
    examples: &[String],
    wi: &Placement,
    user_name: &str,
    char_name: &str,
) -> Vec<PromptMessage> {
    let mut messages = Vec::new();
    for block in example_blocks(examples, wi, CHAT_BLOCK_HEADING) {
        messages.push(system_message("", NEW_EXAMPLE_CHAT));
        let block = block.replace('\r', "");
        messages.extend(
            dialogue(&block, user_name, char_name)
                .into_iter()
                .map(|(name, content)| system_message(name, &content)),
        );
    }
    messages
}

/// A system message.
fn system_message(name: &str, content: &str) -> PromptMessage {
    PromptMessage {
        role: Role::System,
        name: name.to_owned(),
        content: content.to_owned(),
        hidden: false,
        message_id: String::new(),
    }
}

/// SillyTavern's `parseExampleIntoIndividual` (`openai.js:720-778`) for
/// one block, without group chats: the first line (the block's heading) is
/// skipped; a line starting `<user>:` starts a user message, one starting
/// `<char>:` a character message; lines before the first such line join
/// the first message; each message is its lines joined with `\n`, the
/// first `<speaker>:` in it removed, trimmed. Gives (name, content) pairs.
fn dialogue(block: &str, user_name: &str, char_name: &str) -> Vec<(&'static str, String)> {
    let user_prefix = format!("{user_name}:");
    let char_prefix = format!("{char_name}:");
    let mut result = Vec::new();
    let mut lines: Vec<&str> = Vec::new();
    let mut in_user = false;
    let mut in_bot = false;
    let mut flush = |lines: &mut Vec<&str>, prefix: &str, name: &'static str| {
        let joined = lines.join("\n").replacen(prefix, "", 1);
        result.push((name, js_trim(&joined).to_owned()));
        lines.clear();
    };
    for line in block.split('\n').skip(1) {
        if line.starts_with(&user_prefix) {
            in_user = true;
            if in_bot {
                flush(&mut lines, &char_prefix, "example_assistant");
            }
            in_bot = false;
        } else if line.starts_with(&char_prefix) {
            in_bot = true;
            if in_user {
                flush(&mut lines, &user_prefix, "example_user");
            }
            in_user = false;
        }
        lines.push(line);
    }
    if in_user {
        flush(&mut lines, &user_prefix, "example_user");
    } else if in_bot {
        flush(&mut lines, &char_prefix, "example_assistant");
    }
    result
}
