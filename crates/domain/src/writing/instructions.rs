//! recapd's default instructions (the LLM's prompts), one per job kind: the defaults of the
//! `scene_break_prompt`, `scene_recap_prompt`, `running_recap_prompt` and
//! `message_recap_prompt` settings. Each is sent as one `user` message
//! after its macros are replaced (see [`super::macros`]), and asks for the
//! JSON answer its kind parses (see [`super::answer`]).

/// Asks where the open scene ends, if it does.
pub const DEFAULT_SCENE_BREAK_PROMPT: &str = r##"You are reading a story written as a chat. Decide whether one scene of it has come to an end among the messages below, so that the next message starts something new: another place, a jump in time, a different set of characters, or a clear change of what the story is about.

Each message is one line: "#<number> <speaker>: <text>". Messages marked "(not eligible)" are shown for context only and cannot be the end of a scene.

Rules:
- Answer with the number of the LAST message of the scene that ended, never the first message of the new one.
- The number must be {{earliest_allowed_break}} or greater, and must belong to a message that is not marked "(not eligible)".
- If no scene clearly ends, answer false. A short pause or a change of topic inside one conversation is not a scene break.

Messages:
{{messages}}

Reply with JSON only, in this form:
{"scene_break_at": <number or false>, "rationale": "<one sentence>"}"##;

/// Asks for a recap of one scene and a short name for it.
pub const DEFAULT_SCENE_RECAP_PROMPT: &str = r##"Write a recap of the scene below from a story told as a chat between {{user}} and {{char}}. Keep what later parts of the story may need: who was there, what happened and in what order, decisions and promises, what changed between characters, and facts learned. Leave out style, small talk and anything that does not matter later. Write in the past tense and in the third person.

Scene:
{{scene_messages}}

Reply with JSON only, in this form:
{"scene_name": "<a title of at most six words>", "recap": "<the recap>"}"##;

/// Asks to fold a scene recap into the story so far.
pub const DEFAULT_RUNNING_RECAP_PROMPT: &str = r##"You keep the running memory of a story told as a chat between {{user}} and {{char}}. Below are the memory so far (it may be empty) and a recap of the scene that came next. Write the new memory: the memory so far with the new scene folded in. Keep every fact that still matters, update what the scene changed, drop what no longer matters, and keep it compact: short paragraphs or bullet points, past tense, third person.

Memory so far:
{{current_running_recap}}

Next scene:
{{scene_recap}}

Reply with JSON only, in this form:
{"recap": "<the new memory>"}"##;

/// Asks for a one- or two-sentence recap of one message.
pub const DEFAULT_MESSAGE_RECAP_PROMPT: &str = r##"Recap the chat message below, from a story between {{user}} and {{char}}, in one or two short sentences: what happened or what was said that matters later. Past tense, third person, no commentary.

Message:
{{message}}

Reply with JSON only, in this form:
{"recap": "<the recap>"}"##;
