//! recapd's default instructions (the LLM's prompts), one per job kind: the defaults of the
//! `scene_break_prompt`, `scene_recap_prompt`, `running_recap_prompt` and
//! `message_recap_prompt` settings. Each is sent as one `user` message
//! after its macros are replaced (see [`crate::writing::macros`]), and asks for the
//! JSON answer its kind parses (see [`crate::writing::answer`]).
//!
//! Written for small models too: each describes its answer's keys in words
//! and in the order the answer's schema has them written
//! ([`crate::writing::schema`]), with no `<...>` placeholder a model could copy back
//! as its answer. Against the instructions before them (which showed the
//! answer as a template with placeholders), SmolLM2-135M on two LoCoMo
//! conversations wrote fewer unusable answers and failed no job
//! (BENCHMARKS.md, issue 28).

/// Asks where the open scene ends, if it does.
pub const DEFAULT_SCENE_BREAK_PROMPT: &str = r##"Below are messages of a story written as a chat, one per line: "#" and the message's number, the speaker, then the text. Lines marked "(not eligible)" are only there for context.

{{messages}}

Does a scene end at one of these messages? A scene ends when the message after it moves to another place, jumps ahead in time (a later day, "since we last talked"), brings in other characters, or starts a new subject. A pause or a new topic inside the same conversation is not the end of a scene.

Answer with a JSON object with two keys:
- "rationale": one short sentence saying why.
- "scene_break_at": the number of the LAST message before the change (a number of at least {{earliest_allowed_break}}, on a line not marked "(not eligible)"), or false if no scene ends."##;

/// Asks for a recap of one scene and a short name for it.
pub const DEFAULT_SCENE_RECAP_PROMPT: &str = r##"Here is one scene of a story told as a chat between {{user}} and {{char}}:

{{scene_messages}}

Recap this scene for someone who will continue the story later. Say who was there, what happened in order, the decisions and promises made, what changed between the characters, and the facts learned (names, places, dates, plans). Write in the past tense and the third person, without commentary.

Answer with a JSON object with two keys:
- "recap": the recap, a few sentences.
- "scene_name": a title for the scene, at most six words."##;

/// Asks to fold a scene recap into the story so far.
pub const DEFAULT_RUNNING_RECAP_PROMPT: &str = r##"You keep the memory of a story told as a chat between {{user}} and {{char}}.

The memory so far:
{{current_running_recap}}

What happened next:
{{scene_recap}}

Write the updated memory: everything from the memory so far that still matters, followed by what happened next. Keep the names, places, dates, decisions and promises. Change an old fact only when the new events change it, and never drop the rest. Write short sentences, in the past tense and the third person.

Answer with a JSON object with one key, "recap", whose value is the updated memory."##;

/// Asks for a one- or two-sentence recap of one message.
pub const DEFAULT_MESSAGE_RECAP_PROMPT: &str = r##"Recap this message from a story told as a chat between {{user}} and {{char}} in one or two short sentences: what happened or what was said that matters later. Write in the past tense and the third person, without commentary.

Message:
{{message}}

Answer with a JSON object with one key, "recap", whose value is the recap."##;
