//! recapd's default lore instructions: the defaults of the
//! `lore_extract_prompt`, `lore_resolve_prompt`, `lore_merge_prompt` and
//! `lore_compact_prompt` settings, and of `lore_book_name_template`. Each
//! prompt is sent as one `user` message after its macros are replaced (see
//! [`crate::lore::prepare`]), and asks for the JSON answer its kind parses (see
//! [`crate::lore::answer`]).
//!
//! Written, as the recap instructions are, for small models too: the
//! answer's keys are described in words, in the order the answer's schema
//! has them, with no `<...>` placeholder a model could copy back.

/// Asks which entities a scene establishes or changes.
pub const DEFAULT_LORE_EXTRACT_PROMPT: &str = r##"Here is one scene of a story told as a chat between {{user}} and {{char}}:

{{scene_messages}}

A recap of the scene:
{{scene_recap}}

You keep the story's encyclopedia: one entry per named person, place or thing, so that the story can remind itself of them when they come up again. List the entities this scene introduces or tells something new about. Leave out passing mentions with nothing to remember, and leave out moods and what is happening right now (the recap keeps those): keep what will still be true later.

The types of entity:
{{lore_entity_types}}

Answer with a JSON object with one key, "entities": a list (empty when the scene has nothing to keep) of objects with four keys:
- "content": the facts, a list of short sentences, each one fact that still holds at the end of the scene. When the scene changed something (a new title, a move, a death), give only the new state.
- "keywords": other words the story uses for it (other names, nicknames, titles), as a list; may be empty.
- "name": its proper name as the story uses it.
- "type": one of the types above."##;

/// Asks which existing entry, if any, is the entity's.
pub const DEFAULT_LORE_RESOLVE_PROMPT: &str = r##"You keep the encyclopedia of a story told as a chat between {{user}} and {{char}}. A scene told this about a {{entity_type}} called "{{entity_name}}":
{{entity}}

The encyclopedia already has these entries, one per line: the entry's uid, its type and name, other names, and a summary:
{{lore_registry}}

Is "{{entity_name}}" the same {{entity_type}} as one of these entries, known under another name or a title? Only say so if the facts fit; a different person or place with a similar name is a new entity.

Answer with a JSON object with one key, "uid": the uid of the entry that is the same entity (as a string), or null if it is a new one."##;

/// Asks to fold new facts into an entry.
pub const DEFAULT_LORE_MERGE_PROMPT: &str = r##"You keep the encyclopedia entry of a {{entity_type}} called "{{entity_name}}" in a story told as a chat between {{user}} and {{char}}.

The entry now:
{{entry}}

A new scene told this about it:
{{entity}}

Write the entry again with the new facts in it. Where a new fact changes an old one (a new title, a new home, a new owner, a death), keep only the new one: the entry says what is true now, not what used to be. Keep every old fact the scene did not change. Write short sentences, one fact each, without repeating yourself.

Answer with a JSON object with two keys:
- "content": the whole new entry, one fact per line.
- "name": the name the story now uses for it, when that changed; otherwise the name above."##;

/// Asks to rewrite an entry that grew too long, shorter.
pub const DEFAULT_LORE_COMPACT_PROMPT: &str = r##"You keep the encyclopedia entry of a {{entity_type}} called "{{entity_name}}" in a story told as a chat between {{user}} and {{char}}. It has grown too long:
{{entry}}

Write it again in fewer words: keep every fact that still holds and could matter later, merge facts that say the same thing, drop repetition and anything no longer true. One fact per line.

Answer with a JSON object with one key, "content": the shorter entry."##;

/// The default name of the book recapd creates for a chat.
pub const DEFAULT_LORE_BOOK_NAME_TEMPLATE: &str = "recapd lore - {{char}} - {{chat}}";
