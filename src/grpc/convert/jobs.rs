//! RecapService's conversions: domain jobs to the wire, job kinds and
//! states both ways, the id lists requests carry, and ListJobs's paging
//! (page sizes and opaque page tokens).

use std::collections::HashSet;

use super::{enum_value, pb, timestamp};
use crate::domain::jobs::{Job, JobKind, JobState};
use crate::domain::time::UnixMicros;
use crate::domain::{DomainError, ids};

/// A ListJobs page's size when the request asks 0.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The largest ListJobs page a request may ask.
pub const MAX_PAGE_SIZE: usize = 1000;

/// Most message ids one GenerateMessageRecaps may name.
pub const MAX_MESSAGE_IDS: usize = 1000;

/// Longest page token this server gives: the hex of the longest
/// `created_us:job_id`.
const MAX_TOKEN_CHARS: usize = 2 * (20 + 1 + ids::MAX_ID_BYTES);

impl From<&Job> for pb::Job {
    fn from(job: &Job) -> Self {
        let Job {
            id,
            chat,
            kind,
            state,
            message_id,
            attempts,
            last_error,
            result,
            created_us,
            updated_us,
            // The queue's own bookkeeping, which the API does not show:
            // when the job may run next, whether a trigger queued it, what
            // it waits for, who runs it under which fence, what its
            // attempt read, and what cancelled it (its `result` says why).
            not_before_us: _not_before_us,
            automatic: _automatic,
            depends_on: _depends_on,
            lease: _lease,
            fence: _fence,
            read: _read,
            cancelled_by: _cancelled_by,
            subject,
            // A lore job's input (the entity's facts), shown through
            // `subject` and `result`, not whole.
            lore: _lore,
            // The queuing call's trace, for the attempts' span links only.
            traced_by: _traced_by,
        } = job;
        pb::Job {
            job_id: id.clone(),
            // The tenant is the caller's own, so only the chat's id is shown.
            chat_id: chat.id.clone(),
            kind: pb::JobKind::from(*kind).into(),
            state: pb::JobState::from(*state).into(),
            message_id: message_id.clone(),
            attempts: *attempts,
            last_error: last_error.clone(),
            created_at: Some(timestamp(created_us.to_millis())),
            updated_at: Some(timestamp(updated_us.to_millis())),
            result: result.clone(),
            subject: subject.clone(),
        }
    }
}

impl From<JobKind> for pb::JobKind {
    fn from(kind: JobKind) -> Self {
        match kind {
            JobKind::DetectSceneBreak => pb::JobKind::DetectSceneBreak,
            JobKind::SceneRecap => pb::JobKind::SceneRecap,
            JobKind::RunningRecap => pb::JobKind::RunningRecap,
            JobKind::MessageRecap => pb::JobKind::MessageRecap,
            JobKind::LoreExtract => pb::JobKind::LoreExtract,
            JobKind::LoreResolve => pb::JobKind::LoreResolve,
            JobKind::LoreMerge => pb::JobKind::LoreMerge,
            JobKind::LoreCompact => pb::JobKind::LoreCompact,
            JobKind::Index => pb::JobKind::Index,
            JobKind::RegenerateRunningRecap => pb::JobKind::RegenerateRunningRecap,
        }
    }
}

impl From<JobState> for pb::JobState {
    fn from(state: JobState) -> Self {
        match state {
            JobState::Pending => pb::JobState::Pending,
            JobState::Running => pb::JobState::Running,
            JobState::Succeeded => pb::JobState::Succeeded,
            JobState::Failed => pb::JobState::Failed,
            JobState::Cancelled => pb::JobState::Cancelled,
            JobState::Discarded => pb::JobState::Discarded,
        }
    }
}

/// The error for an UNSPECIFIED enum value in `field`.
fn unspecified(field: &str) -> DomainError {
    DomainError::invalid(field, "must not be UNSPECIFIED")
}

/// A job kind from request field `field`; UNSPECIFIED or a number the
/// proto does not define is INVALID_ARGUMENT naming the field.
pub fn job_kind(field: &str, value: i32) -> Result<JobKind, DomainError> {
    Ok(match enum_value::<pb::JobKind>(field, value)? {
        pb::JobKind::Unspecified => return Err(unspecified(field)),
        pb::JobKind::DetectSceneBreak => JobKind::DetectSceneBreak,
        pb::JobKind::SceneRecap => JobKind::SceneRecap,
        pb::JobKind::RunningRecap => JobKind::RunningRecap,
        pb::JobKind::MessageRecap => JobKind::MessageRecap,
        pb::JobKind::LoreExtract => JobKind::LoreExtract,
        pb::JobKind::LoreResolve => JobKind::LoreResolve,
        pb::JobKind::LoreMerge => JobKind::LoreMerge,
        pb::JobKind::LoreCompact => JobKind::LoreCompact,
        pb::JobKind::Index => JobKind::Index,
        pb::JobKind::RegenerateRunningRecap => JobKind::RegenerateRunningRecap,
    })
}

/// A job state from request field `field`, checked as [`job_kind`].
pub fn job_state(field: &str, value: i32) -> Result<JobState, DomainError> {
    Ok(match enum_value::<pb::JobState>(field, value)? {
        pb::JobState::Unspecified => return Err(unspecified(field)),
        pb::JobState::Pending => JobState::Pending,
        pb::JobState::Running => JobState::Running,
        pb::JobState::Succeeded => JobState::Succeeded,
        pb::JobState::Failed => JobState::Failed,
        pb::JobState::Cancelled => JobState::Cancelled,
        pb::JobState::Discarded => JobState::Discarded,
    })
}

/// ListJobs's `states`, each checked by its place (`states[1]`).
pub fn job_states(values: &[i32]) -> Result<Vec<JobState>, DomainError> {
    values
        .iter()
        .enumerate()
        .map(|(i, value)| job_state(&format!("states[{i}]"), *value))
        .collect()
}

/// Checks a request's `job_id`. Job ids are the server's, but a request
/// may carry anything: the same rules as chat and message ids apply
/// (non-empty, at most [`ids::MAX_ID_BYTES`] bytes, no control characters).
pub fn job_id(id: &str) -> Result<(), DomainError> {
    ids::check_message_id("job_id", id)
}

/// Checks a list of ids (`field[i]` names a bad one, `check` says what a
/// good one is), at most `max` of them, and drops repeats, keeping the
/// first of each in order.
pub fn unique_ids(
    field: &str,
    list: Vec<String>,
    max: usize,
    check: fn(&str, &str) -> Result<(), DomainError>,
) -> Result<Vec<String>, DomainError> {
    if list.len() > max {
        return Err(DomainError::invalid(
            field,
            format!("{} ids is more than {max}", list.len()),
        ));
    }
    let mut seen = HashSet::with_capacity(list.len());
    let mut unique = Vec::with_capacity(list.len());
    for (i, id) in list.into_iter().enumerate() {
        check(&format!("{field}[{i}]"), &id)?;
        if seen.insert(id.clone()) {
            unique.push(id);
        }
    }
    Ok(unique)
}

/// ListJobs's `page_size` as a number of jobs: 0 is
/// [`DEFAULT_PAGE_SIZE`], more than [`MAX_PAGE_SIZE`] is INVALID_ARGUMENT.
pub fn page_size(size: u32) -> Result<usize, DomainError> {
    match usize::try_from(size) {
        Ok(0) => Ok(DEFAULT_PAGE_SIZE),
        Ok(size) if size <= MAX_PAGE_SIZE => Ok(size),
        _ => Err(DomainError::invalid(
            "page_size",
            format!("{size} is more than {MAX_PAGE_SIZE}"),
        )),
    }
}

/// The `next_page_token` after a page ending with `last`: the hex of its
/// `created_us:job_id`, its place in ListJobs's order. Clients treat it as
/// opaque.
pub fn page_token(last: &Job) -> String {
    hex(&format!("{}:{}", last.created_us.0, last.id))
}

/// `plain`'s bytes in lowercase hex: a page token's form.
pub(crate) fn hex(plain: &str) -> String {
    let mut token = String::with_capacity(plain.len() * 2);
    for byte in plain.bytes() {
        token.push(char::from(HEX[usize::from(byte >> 4)]));
        token.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    token
}

/// The text a page token made by [`hex`] holds; `None` for a token that
/// is not lowercase hex of UTF-8 or is longer than `max_chars`.
pub(crate) fn unhex(token: &str, max_chars: usize) -> Option<String> {
    if token.len() > max_chars || !token.len().is_multiple_of(2) {
        return None;
    }
    let bytes = token
        .as_bytes()
        .chunks_exact(2)
        .map(|pair| Some((nibble(pair[0])? << 4) | nibble(pair[1])?))
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        _ => None,
    }
}

/// The place a ListJobs request's `page_token` names (`None` for an empty
/// token: the first page). A token this server could not have given is
/// INVALID_ARGUMENT on `page_token`.
pub fn page_after(token: &str) -> Result<Option<(UnixMicros, String)>, DomainError> {
    if token.is_empty() {
        return Ok(None);
    }
    let malformed = || DomainError::invalid("page_token", "is not a token ListJobs gave");
    let plain = unhex(token, MAX_TOKEN_CHARS).ok_or_else(malformed)?;
    let (created_us, job_id) = plain.split_once(':').ok_or_else(malformed)?;
    let created_us: i64 = created_us.parse().map_err(|_| malformed())?;
    ids::check_message_id("page_token", job_id).map_err(|_| malformed())?;
    Ok(Some((UnixMicros(created_us), job_id.to_owned())))
}

#[cfg(test)]
mod tests;
