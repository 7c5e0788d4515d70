//! Reading the header line of a SillyTavern chat file: the running-recap
//! versions (repaired where they can be), the chat's World Info state, and
//! what recapd keeps as the file had it.

use crate::time::UnixMillis;
use serde_json::value::RawValue;

use super::read::{bad, object, read};
use super::verbatim::{Kept, StHeader, StVersion, header_has, kept_len, members, version_lacks};
use super::world_info::ChatWorldInfo;
use super::{MAIN_CHAT_KEY, RECAPS_KEY};
use crate::message::Message;
use crate::recaps::RecapVersion;
use crate::{DomainError, Limits};

/// The header at file line `line`: what is kept of it, the running-recap
/// versions and the current version; the chat's World Info state goes to
/// `world_info`, a non-empty string `chat_metadata.main_chat` (its
/// parent, also kept) to `parent`, repairs to `warnings`. Scene
/// indices become the ids of the file's `messages` at those indices (an id
/// from `extra.recapd_message_id` where a message has one).
pub(super) fn header(
    text: &str,
    line: usize,
    messages: &[(i64, Message)],
    limits: &Limits,
    world_info: &mut ChatWorldInfo,
    parent: &mut Option<String>,
    warnings: &mut Vec<String>,
) -> Result<(StHeader, Vec<RecapVersion>, Option<u32>), DomainError> {
    let top = members(text).map_err(|_| bad(line, "the header must be a JSON object"))?;
    let mut header = StHeader::default();
    let mut versions = Vec::new();
    let mut current = None;
    let mut kept = Vec::new();
    for (key, value) in top {
        if key != "chat_metadata" || !value.get().starts_with('{') {
            kept.push((key, value));
            continue;
        }
        header.has |= header_has::METADATA;
        let mut kept_metadata = Vec::new();
        for (key, value) in object(line, "chat_metadata", value)? {
            if world_info.take_member(&key, value, line, warnings) {
                continue;
            }
            if key == MAIN_CHAT_KEY {
                *parent = serde_json::from_str::<String>(value.get())
                    .ok()
                    .filter(|name| !name.is_empty());
            }
            if key != RECAPS_KEY || !value.get().starts_with('{') {
                kept_metadata.push((key, value));
                continue;
            }
            header.has |= header_has::RECAPS;
            let mut kept_recaps = Vec::new();
            for (key, value) in object(line, RECAPS_KEY, value)? {
                match key.as_str() {
                    "current_version" => {
                        let number: Option<u64> =
                            read(line, "current_version", value, "a non-negative integer")?;
                        match number {
                            Some(number) => {
                                header.has |= header_has::CURRENT;
                                current = u32::try_from(number).ok();
                            }
                            None => kept_recaps.push((key, value)),
                        }
                    }
                    "versions" => {
                        let list: Option<Vec<&RawValue>> =
                            read(line, &format!("{RECAPS_KEY}.versions"), value, "an array")?;
                        match list {
                            Some(list) => {
                                header.has |= header_has::VERSIONS;
                                versions = read_versions(&list, line, messages, limits, warnings)?;
                            }
                            None => kept_recaps.push((key, value)),
                        }
                    }
                    _ => kept_recaps.push((key, value)),
                }
            }
            header.recaps = Kept::object(&kept_recaps);
        }
        header.metadata = Kept::object(&kept_metadata);
    }
    header.keys = Kept::object(&kept);
    // Like a message's, the header's kept members (other extensions'
    // `chat_metadata`, ...) count against the text limit together, with
    // the World Info state the chat keeps elsewhere.
    let kept_len = kept_len([
        header.keys.as_ref(),
        header.metadata.as_ref(),
        header.recaps.as_ref(),
    ]) + world_info.text_bytes();
    if kept_len > limits.max_text_bytes {
        return Err(bad(
            line,
            format!(
                "the header's fields recapd keeps as they are (chat_metadata, user_name, ...) \
                 total {kept_len} bytes, over the text limit of {} bytes",
                limits.max_text_bytes
            ),
        ));
    }
    renumber_duplicates(&mut versions, line, warnings)?;
    Ok((header, versions, current))
}

/// The running-recap versions of the header at file line `line`.
fn read_versions(
    list: &[&RawValue],
    line: usize,
    messages: &[(i64, Message)],
    limits: &Limits,
    warnings: &mut Vec<String>,
) -> Result<Vec<RecapVersion>, DomainError> {
    use version_lacks::*;
    let mut versions = Vec::with_capacity(list.len());
    for (entry, v) in list.iter().enumerate() {
        let number = |value: &RawValue, what: &str| -> Result<Option<u64>, DomainError> {
            read(line, what, value, "a non-negative integer")
        };
        let mut lacks = TIMESTAMP | CONTENT | SCENE_COUNT | EXCLUDED_COUNT | PREV_SCENE_INDEX;
        lacks |= NEW_SCENE_INDEX;
        let mut version = None;
        let mut read_version = RecapVersion {
            version: 0,
            created_at_ms: UnixMillis(0),
            content: String::new(),
            scene_count: 0,
            excluded_count: 0,
            prev_scene_message_id: None,
            new_scene_message_id: None,
            st: None,
            carried_from: None,
        };
        let mut scenes: [Option<u64>; 2] = [None, None];
        let mut kept = Vec::new();
        for (key, value) in object(line, "a running-recap version", v)? {
            let (bit, known) = match key.as_str() {
                "version" => {
                    version = number(value, "version")?;
                    (0, version.is_some())
                }
                "timestamp" => match serde_json::from_str::<i64>(value.get()) {
                    Ok(t) => {
                        read_version.created_at_ms = UnixMillis(t);
                        (TIMESTAMP, true)
                    }
                    // Another spelling (a fraction, a string) is kept.
                    Err(_) => (0, false),
                },
                "content" => {
                    let content = read::<String>(line, "content", value, "a string")?;
                    let known = content.is_some();
                    read_version.content = content.unwrap_or_default();
                    limits
                        .check_text("jsonl", &read_version.content)
                        .map_err(|_| bad(line, "a running recap is over the text limit"))?;
                    (CONTENT, known)
                }
                "scene_count" | "excluded_count" => {
                    let count = number(value, &key)?;
                    let count = count.map(|c| c.min(u64::from(u32::MAX)) as u32);
                    if key == "scene_count" {
                        read_version.scene_count = count.unwrap_or(0);
                        (SCENE_COUNT, count.is_some())
                    } else {
                        read_version.excluded_count = count.unwrap_or(0);
                        (EXCLUDED_COUNT, count.is_some())
                    }
                }
                // `null` is what an export writes for no scene.
                "prev_scene_index" => {
                    scenes[0] = number(value, "prev_scene_index")?;
                    (PREV_SCENE_INDEX, true)
                }
                "new_scene_index" => {
                    scenes[1] = number(value, "new_scene_index")?;
                    (NEW_SCENE_INDEX, true)
                }
                _ => (0, false),
            };
            if known {
                lacks &= !bit;
            } else {
                kept.push((key, value));
            }
        }
        let version =
            version.ok_or_else(|| bad(line, "a running-recap version needs its number"))?;
        let version = u32::try_from(version).map_err(|_| bad(line, "version is too large"))?;
        // The extension skips its cleanup in disabled chats, so a version
        // can name a scene whose messages were deleted since: it is kept,
        // without the scene reference.
        let at = |i: u64| usize::try_from(i).ok().and_then(|i| messages.get(i));
        let mut scene = |index: Option<u64>, what: &str| match index.map(|i| (i, at(i))) {
            None => None,
            Some((_, Some((_, m)))) => Some(m.id.as_str().to_owned()),
            Some((i, None)) => {
                warnings.push(format!(
                    "line {line}: running-recap version {version} (entry {} of versions): \
                     {what} {i} points past the last message ({} messages); kept \
                     with no scene reference",
                    entry + 1,
                    messages.len()
                ));
                None
            }
        };
        read_version.prev_scene_message_id = scene(scenes[0], "prev_scene_index");
        read_version.new_scene_message_id = scene(scenes[1], "new_scene_index");
        read_version.version = version;
        // Every version read from a file keeps its place in the file, so an
        // export writes them in the file's order.
        read_version.st = Some(Box::new(StVersion {
            lacks,
            keys: Kept::object(&kept),
            position: Some(u32::try_from(entry).unwrap_or(u32::MAX)),
        }));
        versions.push(read_version);
    }
    Ok(versions)
}

/// The extension's edit path numbers a new version `versions.length + 1`,
/// which can repeat a number already used: every version whose number was
/// already seen, in file order, becomes the highest number so far + 1 (the
/// first one keeps its number, so `current_version` still names it).
fn renumber_duplicates(
    versions: &mut [RecapVersion],
    line: usize,
    warnings: &mut Vec<String>,
) -> Result<(), DomainError> {
    let mut highest = versions.iter().map(|v| v.version).max().unwrap_or(0);
    let mut seen = std::collections::HashSet::new();
    for v in versions.iter_mut() {
        if seen.insert(v.version) {
            continue;
        }
        let old = v.version;
        highest = highest
            .checked_add(1)
            .ok_or_else(|| bad(line, "version is too large to renumber a duplicate"))?;
        v.version = highest;
        seen.insert(highest);
        warnings.push(format!(
            "line {line}: running-recap version {old} appears more than once; \
             this one is now version {highest}"
        ));
    }
    Ok(())
}
