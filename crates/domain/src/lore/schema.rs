//! The JSON schema of each lore answer (H2).

use serde_json::Value;

use crate::jobs::JobKind;
use crate::settings::Settings;

/// The schema of lore job `kind`'s answer and its name; `uids` are the
/// entries a resolution's request shows.
pub fn answer_schema(kind: JobKind, settings: &Settings, uids: &[String]) -> (&'static str, Value) {
    todo!("H2: {kind:?} {} {uids:?}", settings.auto_lore)
}
