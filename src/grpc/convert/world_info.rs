//! World Info conversions: the scan's request parts and its answer.

use crate::domain::world_info::place::Placement;
use crate::domain::world_info::types::{Activated, GenerationType, ScanTexts};
use crate::domain::{DomainError, Limits};
use crate::grpc::pb;

/// A request's generation type: SillyTavern's name, empty for `normal`.
pub fn generation_type(name: &str) -> Result<GenerationType, DomainError> {
    if name.is_empty() {
        return Ok(GenerationType::Normal);
    }
    GenerationType::from_name(name).ok_or_else(|| {
        DomainError::invalid(
            "generation_type",
            format!("{name:?} is none of normal, continue, impersonate, swipe, regenerate, quiet"),
        )
    })
}

/// A request's character and persona texts, checked against the text
/// limit; unset: all empty.
pub fn texts(texts: Option<pb::WorldInfoTexts>, limits: &Limits) -> Result<ScanTexts, DomainError> {
    let Some(pb::WorldInfoTexts {
        persona_description,
        character_description,
        character_personality,
        character_depth_prompt,
        scenario,
        creator_notes,
        character_name,
        character_filter_name,
        character_tags,
        user_name,
    }) = texts
    else {
        return Ok(ScanTexts::default());
    };
    for (field, text) in [
        ("texts.persona_description", &persona_description),
        ("texts.character_description", &character_description),
        ("texts.character_personality", &character_personality),
        ("texts.character_depth_prompt", &character_depth_prompt),
        ("texts.scenario", &scenario),
        ("texts.creator_notes", &creator_notes),
        ("texts.character_name", &character_name),
        ("texts.character_filter_name", &character_filter_name),
        ("texts.user_name", &user_name),
    ] {
        limits.check_text(field, text)?;
    }
    for (i, tag) in character_tags.iter().enumerate() {
        limits.check_text(format_args!("texts.character_tags[{i}]"), tag)?;
    }
    Ok(ScanTexts {
        persona_description,
        character_description,
        character_personality,
        character_depth_prompt,
        scenario,
        creator_notes,
        character_name,
        character_filter_name,
        character_tags,
        user_name,
    })
}

/// One activation as ScanWorldInfo answers it: the entries in the scan's
/// final order, and their placement.
pub fn scan_response(activated: &[Activated], placement: &Placement) -> pb::ScanWorldInfoResponse {
    let Placement {
        before,
        after,
        depth,
        an_top,
        an_bottom,
        examples_top,
        examples_bottom,
        outlets,
    } = placement;
    pb::ScanWorldInfoResponse {
        activated: activated.iter().map(activated_entry).collect(),
        before: before.clone(),
        after: after.clone(),
        depth: depth
            .iter()
            .map(|d| pb::DepthPrompt {
                depth: d.depth,
                role: pb::InjectionRole::from(d.role) as i32,
                text: d.text.clone(),
            })
            .collect(),
        an_top: an_top.clone(),
        an_bottom: an_bottom.clone(),
        examples_top: examples_top.clone(),
        examples_bottom: examples_bottom.clone(),
        outlets: outlets
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    }
}

/// One activation as RenderPrompt answers it beside the prompt it
/// rendered: the activated entries without their `content`, and no
/// placement texts. The rendered prompt carries World Info's text, so the
/// answer holds each entry's content once, not three times
/// (ScanWorldInfo answers the texts apart).
pub fn prompt_scan_response(activated: &[Activated]) -> pb::ScanWorldInfoResponse {
    pb::ScanWorldInfoResponse {
        activated: activated.iter().map(activated_entry_meta).collect(),
        ..Default::default()
    }
}

/// An activated entry's answer without its content.
fn activated_entry_meta(entry: &Activated) -> pb::ActivatedEntry {
    let Activated {
        book,
        uid,
        position,
        depth,
        role,
        order,
        outlet_name,
        content: _,
    } = entry;
    pb::ActivatedEntry {
        book: book.clone(),
        uid: uid.clone(),
        position: position.map_or(-1, |p| p.number() as i32),
        depth: depth.map_or(-1, |d| i32::try_from(d).unwrap_or(i32::MAX)),
        role: pb::InjectionRole::from(*role) as i32,
        order: *order,
        content: String::new(),
        outlet_name: outlet_name.clone(),
    }
}

fn activated_entry(entry: &Activated) -> pb::ActivatedEntry {
    pb::ActivatedEntry {
        content: entry.content.clone(),
        ..activated_entry_meta(entry)
    }
}
