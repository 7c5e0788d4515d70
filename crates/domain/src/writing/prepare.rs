//! From a job to the request it sends the LLM: which messages it reads,
//! the macros of its instructions filled in, the token bound, and what it
//! recorded having read.
//!
//! Each kind's instructions are a setting (named `*_prompt` on the wire):
//! `scene_break_prompt` (detection), `scene_recap_prompt`,
//! `running_recap_prompt` (merge) and `message_recap_prompt`. Every kind
//! knows `{{user}}` and `{{char}}` besides its own macros (see
//! [`super::macros`]); another kind's macro in its instructions stays as
//! written.
//!
//! Bound: with `max_context_tokens` set, a whole request may use
//! `max_context_tokens - llm_max_tokens` tokens (counted by the caller's
//! tokenizer), so that the answer still fits in the model's context.

use super::candidates::{Candidates, detection_candidates};
use super::check::{check_for, merge_check};
use super::macros::{
    CHAR, CURRENT_RUNNING_RECAP, EARLIEST_ALLOWED_BREAK, MESSAGE, MESSAGES, SCENE_MESSAGES,
    SCENE_RECAP, Speakers, USER, candidate_lines, expand, speakers,
};
use super::merge::merge_base;
use super::schema::{answer_schema, recap_max_chars};
use crate::chat::Chat;
use crate::jobs::{
    JobKind, ReadSet, RecapStep, RequestKind, fingerprint, fingerprint_text, messages_unchanged,
};
use crate::lore::prepare::LoreInput;
pub(crate) use crate::request::prepared::{
    Bound, Scene, gone, instructions, prepared, visible_break,
};
pub use crate::request::prepared::{PrepareError, Prepared};
use crate::settings::Settings;

/// The request of a job of `kind` on `chat` under `settings`. `message_id`
/// is the job's message (ignored by a detection, which looks at the open
/// scene); `count_tokens` counts a text's tokens with the chat's
/// tokenizer.
///
/// - Detection: never [`PrepareError::Gone`]; [`PrepareError::NothingToDo`]
///   when no candidate can be a valid break. Over the bound it drops its
///   oldest candidates, but keeps at least `scene_break_min_messages + 1`
///   eligible ones (so that the shortened list would still be ready for a
///   detection of its own, and holds a valid break); if that is still too
///   long, [`PrepareError::TooLong`]. Dropped candidates keep nothing of
///   theirs in the request or in the read set; the others keep the
///   eligibility and the earliest allowed break of the whole open scene.
/// - Scene recap: Gone when the message is missing or not a visible break;
///   NothingToDo when its scene has no visible message (all hidden or
///   thoughts). The scene is the messages after the previous visible break
///   through the break itself, those hidden by hand and thoughts left out;
///   auto-hide does not matter (old scenes can be recapped again).
/// - Merge: Gone when the message is missing or not a visible break;
///   NothingToDo when it has no non-empty scene recap.
/// - Message recap: Gone when the message is missing; NothingToDo when its
///   text is blank.
///
/// Every kind but detection is TooLong over the bound.
pub fn prepare(
    kind: JobKind,
    chat: &Chat,
    settings: &Settings,
    message_id: &str,
    lore: &LoreInput<'_>,
    count_tokens: &dyn Fn(&str) -> usize,
) -> Result<Prepared, PrepareError> {
    let bound = Bound::of(settings, count_tokens);
    let names = speakers(chat);
    let step = match kind.request() {
        RequestKind::Recap(step) => step,
        RequestKind::Lore(_) => {
            // A lore request makes its own schema and check (a resolution's
            // schema lists the uids it shows).
            return crate::lore::prepare::prepare(
                kind,
                chat,
                settings,
                message_id,
                lore,
                count_tokens,
            );
        }
        // Index jobs ask the embeddings endpoint, never the LLM (the
        // engine's index lane prepares them).
        RequestKind::Embeddings => {
            return Err(PrepareError::Gone(
                "an index job is not written with the LLM".to_owned(),
            ));
        }
    };
    let mut prepared = match step {
        RecapStep::DetectSceneBreak => detection(chat, settings, &names, &bound),
        RecapStep::SceneRecap => scene_recap(chat, settings, &names, message_id, &bound),
        RecapStep::RunningRecap => merge(chat, settings, &names, message_id, &bound),
        RecapStep::RegenerateRunningRecap => regenerate(chat, settings, &names, &bound),
        RecapStep::MessageRecap => message_recap(chat, settings, &names, message_id, &bound),
    }?;
    let (name, schema) = answer_schema(kind, settings, prepared.candidates.as_ref());
    prepared.schema_name = name;
    prepared.schema = schema;
    if !matches!(
        kind,
        JobKind::RunningRecap | JobKind::RegenerateRunningRecap
    ) {
        prepared.check = check_for(kind, instructions(kind, settings));
    }
    Ok(prepared)
}

/// Whether what a job of `kind` on `message_id` read (`read`, from its
/// [`Prepared`]) still holds in `chat`: every message it read is there
/// with the same fingerprint, and for a merge the version it would build
/// on and the scene recap it merged are the same. Messages added since do
/// not matter.
pub fn read_unchanged(kind: JobKind, read: &ReadSet, chat: &Chat, message_id: &str) -> bool {
    if !messages_unchanged(read, chat) {
        return false;
    }
    if kind.is_lore() {
        return crate::lore::prepare::scene_unchanged(read, chat, message_id);
    }
    if kind == JobKind::RegenerateRunningRecap {
        // It edits the current version: another current one since is a
        // change.
        return chat.recaps().current_version() == read.recap_version;
    }
    if kind != JobKind::RunningRecap {
        return true;
    }
    let scene_recap = chat
        .message(message_id)
        .and_then(|(_, m)| m.data().scene_recap_memory.as_deref())
        .map(fingerprint_text);
    merge_base(chat, message_id).map(|v| v.version) == read.recap_version
        && scene_recap == read.scene_recap
}

fn detection(
    chat: &Chat,
    settings: &Settings,
    names: &Speakers,
    bound: &Bound<'_>,
) -> Result<Prepared, PrepareError> {
    let all = detection_candidates(chat, settings);
    let min = settings.writing.scene_break_min_messages as usize;
    if !all.ready(settings) {
        return Err(PrepareError::NothingToDo(format!(
            "no break possible yet: the open scene has {} eligible messages, a break needs {}",
            all.eligible_count(),
            min.saturating_add(1)
        )));
    }
    let render = |shown: &Candidates| -> String {
        let earliest = shown
            .earliest_allowed_break
            .map(|e| e.to_string())
            .unwrap_or_default();
        expand(
            &settings.writing.scene_break_prompt,
            &[
                (MESSAGES, &candidate_lines(&shown.list)),
                (EARLIEST_ALLOWED_BREAK, &earliest),
                (USER, &names.user),
                (CHAR, &names.char),
            ],
        )
    };
    let request = render(&all);
    let (shown, request) = if bound.fits(&request) {
        (all, request)
    } else {
        shortened(&all, min, bound, &render)?
    };
    let read = ReadSet {
        messages: shown
            .list
            .iter()
            .filter_map(|c| chat.message(&c.message_id))
            .map(|(_, m)| (m.id.as_str().to_owned(), fingerprint(m)))
            .collect(),
        ..ReadSet::default()
    };
    let message_id = shown
        .newest()
        .map(|c| c.message_id.clone())
        .unwrap_or_default();
    Ok(prepared(request, read, message_id, Some(shown)))
}

/// The most of the newest of `all` whose request fits the bound, and that
/// request: never fewer than `min + 1` eligible candidates and every
/// ineligible one (the newest), so that some valid break is shown; when
/// even those do not fit, [`PrepareError::TooLong`].
fn shortened(
    all: &Candidates,
    min: usize,
    bound: &Bound<'_>,
    render: &dyn Fn(&Candidates) -> String,
) -> Result<(Candidates, String), PrepareError> {
    let ineligible = all.list.len() - all.eligible_count();
    let fewest = min.saturating_add(1).saturating_add(ineligible);
    let smallest = all.keep_newest(fewest);
    let smallest_request = render(&smallest);
    if let Err(PrepareError::TooLong(reason)) = bound.check(&smallest_request) {
        return Err(PrepareError::TooLong(format!(
            "{reason}, even with only the newest {} of the open scene's {} messages",
            smallest.list.len(),
            all.list.len()
        )));
    }
    // Binary search between `fewest` (fits) and all (does not): fewer
    // candidates make a shorter request.
    let (mut fits, mut too_many) = (smallest.list.len(), all.list.len());
    let mut best = (smallest, smallest_request);
    while too_many - fits > 1 {
        let middle = fits + (too_many - fits) / 2;
        let candidates = all.keep_newest(middle);
        let request = render(&candidates);
        if bound.fits(&request) {
            fits = middle;
            best = (candidates, request);
        } else {
            too_many = middle;
        }
    }
    Ok(best)
}

fn scene_recap(
    chat: &Chat,
    settings: &Settings,
    names: &Speakers,
    message_id: &str,
    bound: &Bound<'_>,
) -> Result<Prepared, PrepareError> {
    let scene = Scene::of(chat, message_id)?;
    let request = expand(
        &settings.writing.scene_recap_prompt,
        &[
            (SCENE_MESSAGES, &scene.lines()),
            (USER, &names.user),
            (CHAR, &names.char),
        ],
    );
    bound.check(&request)?;
    let read = ReadSet {
        messages: scene.read_messages(),
        ..ReadSet::default()
    };
    Ok(prepared(request, read, message_id.to_owned(), None))
}

fn merge(
    chat: &Chat,
    settings: &Settings,
    names: &Speakers,
    message_id: &str,
    bound: &Bound<'_>,
) -> Result<Prepared, PrepareError> {
    let (_, break_message) = visible_break(chat, message_id)?;
    let scene_recap = break_message
        .data()
        .scene_recap_memory
        .as_deref()
        .filter(|r| !r.is_empty())
        .ok_or_else(|| {
            PrepareError::NothingToDo(format!(
                "message {message_id:?} has no scene recap to merge"
            ))
        })?;
    let base = merge_base(chat, message_id);
    let request = expand(
        &settings.writing.running_recap_prompt,
        &[
            (SCENE_RECAP, scene_recap),
            (
                CURRENT_RUNNING_RECAP,
                base.map_or("", |v| v.content.as_str()),
            ),
            (USER, &names.user),
            (CHAR, &names.char),
        ],
    );
    bound.check(&request)?;
    let read = ReadSet {
        messages: vec![(
            break_message.id.as_str().to_owned(),
            fingerprint(break_message),
        )],
        recap_version: base.map(|v| v.version),
        scene_recap: Some(fingerprint_text(scene_recap)),
        entry: None,
    };
    let mut merge = prepared(request, read, message_id.to_owned(), None);
    merge.check = merge_check(
        &settings.writing.running_recap_prompt,
        base.map_or("", |v| v.content.as_str()),
        scene_recap,
        settings.writing.running_recap_min_ratio.0,
        usize::try_from(recap_max_chars(settings)).unwrap_or(usize::MAX),
    );
    Ok(merge)
}

/// A regeneration: every scene recap but the newest
/// `running_recap_exclude_latest` ([`super::regeneration_scenes`]) in one
/// request with the merge's instructions, the scenes in the scene-recap
/// macro and the current version in the running-recap macro (it edits the
/// current version, as the extension's bulk path does). NothingToDo when
/// no scene has a recap.
fn regenerate(
    chat: &Chat,
    settings: &Settings,
    names: &Speakers,
    bound: &Bound<'_>,
) -> Result<Prepared, PrepareError> {
    let scenes = super::regeneration_scenes(chat, settings.writing.running_recap_exclude_latest);
    if scenes.is_empty() {
        return Err(PrepareError::NothingToDo(
            "no scene has a recap to build the running recap from".to_owned(),
        ));
    }
    let scene_recaps = super::scene_recaps_text(&scenes);
    let current = chat.recaps().current();
    let base = current.map_or("", |v| v.content.as_str());
    let request = expand(
        &settings.writing.running_recap_prompt,
        &[
            (SCENE_RECAP, &scene_recaps),
            (CURRENT_RUNNING_RECAP, base),
            (USER, &names.user),
            (CHAR, &names.char),
        ],
    );
    bound.check(&request)?;
    let read = ReadSet {
        messages: scenes
            .iter()
            .map(|m| (m.id.as_str().to_owned(), fingerprint(m)))
            .collect(),
        recap_version: chat.recaps().current_version(),
        scene_recap: Some(fingerprint_text(&scene_recaps)),
        entry: None,
    };
    let mut regenerate = prepared(request, read, String::new(), None);
    regenerate.check = merge_check(
        &settings.writing.running_recap_prompt,
        base,
        &scene_recaps,
        settings.writing.running_recap_min_ratio.0,
        usize::try_from(recap_max_chars(settings)).unwrap_or(usize::MAX),
    );
    Ok(regenerate)
}

fn message_recap(
    chat: &Chat,
    settings: &Settings,
    names: &Speakers,
    message_id: &str,
    bound: &Bound<'_>,
) -> Result<Prepared, PrepareError> {
    let (_, message) = chat
        .message(message_id)
        .ok_or_else(|| PrepareError::Gone(gone(message_id)))?;
    if message.text().trim().is_empty() {
        return Err(PrepareError::NothingToDo(format!(
            "message {message_id:?} has no text to recap"
        )));
    }
    let request = expand(
        &settings.writing.message_recap_prompt,
        &[
            (MESSAGE, message.text()),
            (USER, &names.user),
            (CHAR, &names.char),
        ],
    );
    bound.check(&request)?;
    let read = ReadSet {
        messages: vec![(message.id.as_str().to_owned(), fingerprint(message))],
        ..ReadSet::default()
    };
    Ok(prepared(request, read, message_id.to_owned(), None))
}

#[cfg(test)]
mod tests;
