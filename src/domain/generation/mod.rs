//! What recapd asks an LLM and what it makes of the answers, as pure rules:
//! which messages a detection looks at and which may be a break, the
//! prompts' macros, recapd's default prompts, and answer parsing.

pub mod prompts;
