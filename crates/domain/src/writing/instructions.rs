//! recapd's default instructions (the LLM's prompts), one per recap job
//! kind: the defaults of the recap prompt settings. They are the settings'
//! defaults, so they are written beside them
//! (`settings/writing_instructions.rs`) and named here too.

pub use crate::settings::{
    DEFAULT_MESSAGE_RECAP_PROMPT, DEFAULT_RUNNING_RECAP_PROMPT, DEFAULT_SCENE_BREAK_PROMPT,
    DEFAULT_SCENE_RECAP_PROMPT,
};
