//! Jobs: the units of recap work recapd does with an LLM (scene-break
//! detection, scene recaps, running-recap merges, message recaps), and the
//! pure rules of their life: which states are terminal, what a job read
//! (so that a result whose inputs changed is never applied), and the
//! back-off between attempts.
//!
//! A job's life: PENDING → RUNNING → SUCCEEDED | FAILED | DISCARDED, with
//! RUNNING → PENDING after a failed attempt that will be retried, and
//! CANCELLED from either non-terminal state. RetryJob takes a FAILED or
//! CANCELLED job back to PENDING.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::backoff::Backoff;
use super::chat::Chat;
use super::ids::ChatKey;
use super::time::UnixMicros;

pub mod lore_data;

pub use lore_data::{EntryRead, LoreTask};

/// What a job does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// Looks for a scene break among the open scene's visible messages.
    DetectSceneBreak,
    /// Writes a break message's scene recap and scene name.
    SceneRecap,
    /// Merges a break message's scene recap into the running recap.
    RunningRecap,
    /// Writes one message's `memory`.
    MessageRecap,
    /// Rebuilds the running recap from every scene recap at once
    /// (RegenerateRunningRecap; the extension's bulk path).
    RegenerateRunningRecap,
    /// Reads a scene (and its recap) and answers the entities it
    /// establishes or changes, for the chat's lorebook.
    LoreExtract,
    /// Finds the entry an extracted entity already has, when the
    /// deterministic match is ambiguous or absent but similar entries exist.
    LoreResolve,
    /// Merges an entity's new facts into its entry (a new entry needs no
    /// request and is written by the job that found the entity new).
    LoreMerge,
    /// Rewrites an entry past `lore_compaction_threshold` tokens shorter.
    LoreCompact,
    /// Asks the embeddings endpoint for the vectors of the chat's passages
    /// that have none (recall), a batch at a time, until every one has
    /// one. It runs beside the chat's other jobs, in a lane of its own
    /// ([`JobKind::is_index`]).
    Index,
}

impl JobKind {
    /// Every kind, for metrics labels.
    pub const ALL: [JobKind; 10] = [
        JobKind::DetectSceneBreak,
        JobKind::SceneRecap,
        JobKind::RunningRecap,
        JobKind::MessageRecap,
        JobKind::LoreExtract,
        JobKind::LoreResolve,
        JobKind::LoreMerge,
        JobKind::LoreCompact,
        JobKind::Index,
        JobKind::RegenerateRunningRecap,
    ];

    /// What a job of this kind asks, and of whom: the one table from a job
    /// kind to its request. Every rule that depends on the request (its
    /// builder, instructions, schema, answer, lane) matches on this, so a
    /// new kind is a row here and the compiler lists what else it needs.
    pub const fn request(self) -> RequestKind {
        match self {
            JobKind::DetectSceneBreak => RequestKind::Recap(RecapStep::DetectSceneBreak),
            JobKind::SceneRecap => RequestKind::Recap(RecapStep::SceneRecap),
            JobKind::RunningRecap => RequestKind::Recap(RecapStep::RunningRecap),
            JobKind::MessageRecap => RequestKind::Recap(RecapStep::MessageRecap),
            JobKind::RegenerateRunningRecap => {
                RequestKind::Recap(RecapStep::RegenerateRunningRecap)
            }
            JobKind::LoreExtract => RequestKind::Lore(LoreStep::Extract),
            JobKind::LoreResolve => RequestKind::Lore(LoreStep::Resolve),
            JobKind::LoreMerge => RequestKind::Lore(LoreStep::Merge),
            JobKind::LoreCompact => RequestKind::Lore(LoreStep::Compact),
            JobKind::Index => RequestKind::Embeddings,
        }
    }

    /// Whether the kind writes the chat's lorebook (its request and its
    /// answer are the [`crate::lore`] module's).
    pub fn is_lore(self) -> bool {
        matches!(self.request(), RequestKind::Lore(_))
    }

    /// Whether the kind indexes passages for recall: such jobs run in a
    /// lane of their own (their own runner and concurrency, one at a time
    /// per chat beside the chat's recap and lore jobs), and ask the
    /// embeddings endpoint rather than the LLM.
    pub fn is_index(self) -> bool {
        matches!(self.request(), RequestKind::Embeddings)
    }

    /// The kind's name in logs and metrics labels.
    pub fn name(self) -> &'static str {
        match self {
            JobKind::DetectSceneBreak => "detect_scene_break",
            JobKind::SceneRecap => "scene_recap",
            JobKind::RunningRecap => "running_recap",
            JobKind::MessageRecap => "message_recap",
            JobKind::RegenerateRunningRecap => "regenerate_running_recap",
            JobKind::LoreExtract => "lore_extract",
            JobKind::LoreResolve => "lore_resolve",
            JobKind::LoreMerge => "lore_merge",
            JobKind::LoreCompact => "lore_compact",
            JobKind::Index => "index",
        }
    }

    /// Its number in the store (stable; never reused).
    pub fn code(self) -> i64 {
        match self {
            JobKind::DetectSceneBreak => 1,
            JobKind::SceneRecap => 2,
            JobKind::RunningRecap => 3,
            JobKind::MessageRecap => 4,
            JobKind::LoreExtract => 5,
            JobKind::LoreResolve => 6,
            JobKind::LoreMerge => 7,
            JobKind::LoreCompact => 8,
            JobKind::Index => 9,
            JobKind::RegenerateRunningRecap => 10,
        }
    }

    /// The kind of a stored number.
    pub fn from_code(code: i64) -> Option<JobKind> {
        JobKind::ALL.into_iter().find(|k| k.code() == code)
    }
}

/// What a job asks, and of whom ([`JobKind::request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// A recap request to the LLM ([`crate::writing`]).
    Recap(RecapStep),
    /// A lore request to the LLM ([`crate::lore`]).
    Lore(LoreStep),
    /// The embeddings endpoint's vectors for the chat's passages, asked in
    /// the index lane ([`JobLane::Index`]).
    Embeddings,
}

/// The recap request a recap job sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecapStep {
    /// [`JobKind::DetectSceneBreak`].
    DetectSceneBreak,
    /// [`JobKind::SceneRecap`].
    SceneRecap,
    /// [`JobKind::RunningRecap`].
    RunningRecap,
    /// [`JobKind::MessageRecap`].
    MessageRecap,
    /// [`JobKind::RegenerateRunningRecap`].
    RegenerateRunningRecap,
}

/// The step of the lore pipeline a lore job runs (see [`crate::lore`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoreStep {
    /// [`JobKind::LoreExtract`].
    Extract,
    /// [`JobKind::LoreResolve`].
    Resolve,
    /// [`JobKind::LoreMerge`].
    Merge,
    /// [`JobKind::LoreCompact`].
    Compact,
}

/// A runner's share of the queue: each lane runs one job of a chat at a
/// time, beside the other lane's, with its own concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobLane {
    /// Recap and lore jobs, which ask the LLM.
    Recap,
    /// Index jobs, which ask the embeddings endpoint.
    Index,
}

impl JobLane {
    /// The lane of `kind`.
    pub fn of(kind: JobKind) -> JobLane {
        match kind.request() {
            RequestKind::Recap(_) | RequestKind::Lore(_) => JobLane::Recap,
            RequestKind::Embeddings => JobLane::Index,
        }
    }

    /// Whether the stored kind code `code` is in the index lane (as the
    /// stores' queries ask).
    pub fn is_index(self) -> bool {
        self == JobLane::Index
    }
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Waiting to run (or for its back-off, its dependency, its chat).
    Pending,
    /// A request to the LLM is under way, under a lease.
    Running,
    /// Its result was applied (a detection that found nothing too).
    Succeeded,
    /// Out of attempts, or refused by the LLM for good.
    Failed,
    /// Cancelled by a client, by the removal of its message, or because the
    /// job it waited for failed or was cancelled.
    Cancelled,
    /// Its inputs changed before its result could be applied.
    Discarded,
}

impl JobState {
    /// Every state, for metrics labels.
    pub const ALL: [JobState; 6] = [
        JobState::Pending,
        JobState::Running,
        JobState::Succeeded,
        JobState::Failed,
        JobState::Cancelled,
        JobState::Discarded,
    ];

    /// Whether the job is over (nothing more happens unless RetryJob).
    pub fn is_terminal(self) -> bool {
        !matches!(self, JobState::Pending | JobState::Running)
    }

    /// The state's name in logs and metrics labels.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Pending => "pending",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
            JobState::Discarded => "discarded",
        }
    }

    /// Its number in the store (stable; never reused).
    pub fn code(self) -> i64 {
        match self {
            JobState::Pending => 1,
            JobState::Running => 2,
            JobState::Succeeded => 3,
            JobState::Failed => 4,
            JobState::Cancelled => 5,
            JobState::Discarded => 6,
        }
    }

    /// The state of a stored number.
    pub fn from_code(code: i64) -> Option<JobState> {
        JobState::ALL.into_iter().find(|s| s.code() == code)
    }
}

/// Who runs a RUNNING job, until when. Another replica may take the job
/// over once `until_us` has passed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The process holding it (a random id per server start).
    pub owner: String,
    /// When it expires, in µs since the epoch.
    pub until_us: UnixMicros,
}

/// What a running job read from its chat, to tell at apply time whether
/// its result still fits: one fingerprint per message in its prompt, and
/// for a merge the running-recap version it was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadSet {
    /// Each message the prompt showed, with [`fingerprint`] of it then.
    pub messages: Vec<(String, u64)>,
    /// For a merge: the version given as the current running recap
    /// (`None`: none was).
    pub recap_version: Option<u32>,
    /// For a merge: [`fingerprint_text`] of the scene recap it merged.
    pub scene_recap: Option<u64>,
    /// For a lore merge or compaction: the entry it was given, as it was
    /// then (a client's edit meanwhile makes the answer stale).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<EntryRead>,
}

/// One job. The id is the idempotency key of the write that applies its
/// result: that write commits together with the job's move to a terminal
/// state, and only while the job's `fence` is the one its runner claimed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// Server-chosen, unique across tenants.
    pub id: String,
    /// The chat (and so the tenant) it works on.
    #[serde(skip)]
    pub chat: ChatKey,
    /// What it does.
    pub kind: JobKind,
    /// Where it is.
    pub state: JobState,
    /// The break message (scene recap, merge), the recapped message, or for
    /// a detection the newest message it examined (empty before it ran).
    pub message_id: String,
    /// Requests made for it since it was queued (or retried).
    pub attempts: u32,
    /// Why the latest attempt failed; empty when none did.
    pub last_error: String,
    /// A short text: the break found, the recap written, or why nothing
    /// was applied.
    pub result: String,
    /// When it was queued, µs since the epoch.
    pub created_us: UnixMicros,
    /// When it last changed, µs since the epoch.
    pub updated_us: UnixMicros,
    /// It does not run before this (debounce, back-off), µs since the epoch.
    pub not_before_us: UnixMicros,
    /// Queued by a trigger rather than by a client's request (an automatic
    /// job past `--max-jobs-per-chat` is dropped instead of refused).
    pub automatic: bool,
    /// The job it waits for (a merge waits for its scene recap).
    pub depends_on: Option<String>,
    /// Held while RUNNING.
    pub lease: Option<Lease>,
    /// Bumped at every claim; a result is applied only under the fence its
    /// runner claimed.
    pub fence: u64,
    /// What the running attempt read (set when it starts).
    pub read: ReadSet,
    /// Why it was cancelled and by what, when a dependency's failure did
    /// it: the job whose RetryJob queues it again.
    pub cancelled_by: Option<String>,
    /// What a lore job is about beyond its scene, as [`same_work`] compares
    /// it: `<type>-<normalised name>` for a resolution or merge, the
    /// entry's uid for a compaction; empty for every other kind (and for an
    /// extraction, which is about its whole scene).
    ///
    /// [`same_work`]: Job::same_work
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subject: String,
    /// The W3C `traceparent` of the traced call or event that queued the
    /// job, so that its attempts, which run later and maybe on another
    /// replica, link back to it; empty when that was not traced.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub traced_by: String,
    /// A lore resolution's, merge's or compaction's input (the entity's new
    /// facts, the entry); `None` for every other kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lore: Option<LoreTask>,
}

impl Job {
    /// A new PENDING job created at `now_us` (µs since the epoch), which may
    /// run from then on.
    pub fn new(
        id: String,
        chat: ChatKey,
        kind: JobKind,
        message_id: String,
        now_us: UnixMicros,
        automatic: bool,
    ) -> Job {
        Job {
            id,
            chat,
            kind,
            state: JobState::Pending,
            message_id,
            attempts: 0,
            last_error: String::new(),
            result: String::new(),
            created_us: now_us,
            updated_us: now_us,
            not_before_us: now_us,
            automatic,
            depends_on: None,
            lease: None,
            fence: 0,
            read: ReadSet::default(),
            cancelled_by: None,
            subject: String::new(),
            traced_by: String::new(),
            lore: None,
        }
    }

    /// Whether `self` and a request for (`kind`, `message_id`, `subject`)
    /// are the same work: at most one non-terminal job exists per chat,
    /// kind, message and subject (per chat and kind for detections, which
    /// name no message up front). `subject` is empty but for lore jobs
    /// (see [`Job::subject`]).
    pub fn same_work(&self, kind: JobKind, message_id: &str, subject: &str) -> bool {
        self.kind == kind
            && !self.state.is_terminal()
            && (kind == JobKind::DetectSceneBreak || self.message_id == message_id)
            && self.subject == subject
    }
}

/// At most `max` characters of `text`, with `…` when cut: a job's result
/// or error is a short note, never a copy of a whole answer.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A stable 64-bit FNV-1a hash (the same across builds and platforms, so
/// a fingerprint stored before a restart still compares after it).
pub fn fingerprint_text(text: &str) -> u64 {
    fingerprint_parts(&[text])
}

/// [`fingerprint_text`] of `parts` written one after the other, without
/// building that text.
pub fn fingerprint_parts(parts: &[&str]) -> u64 {
    parts.iter().fold(0xcbf2_9ce4_8422_2325, |hash, part| {
        fnv1a(hash, part.as_bytes())
    })
}

fn fnv1a(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What of a message a prompt depends on: its current text and swipe, its
/// hidden state, whether it is a thought, and whether it is a visible scene
/// break. A change to any of them changes the fingerprint.
pub fn fingerprint(message: &super::message::Message) -> u64 {
    let mut hash = fingerprint_text(message.text());
    let flags = [
        u8::from(message.hidden),
        u8::from(message.is_thoughts),
        u8::from(message.data().is_visible_scene_break()),
    ];
    hash = fnv1a(hash, &flags);
    hash = fnv1a(hash, &(message.swipe_id as u64).to_le_bytes());
    fnv1a(hash, message.name.as_bytes())
}

/// Whether every message `read` names is still in `chat` with the same
/// fingerprint. (Messages added since do not matter.)
pub fn messages_unchanged(read: &ReadSet, chat: &Chat) -> bool {
    read.messages.iter().all(|(id, print)| {
        chat.message(id)
            .is_some_and(|(_, message)| fingerprint(message) == *print)
    })
}

/// The pause before attempt `attempts + 1` after `attempts` failed ones:
/// `policy`'s delay for that many failures (with `random`, a uniform draw
/// in 0.0..1.0, for its jitter), and never shorter than a server's
/// `Retry-After`.
pub fn retry_pause(
    policy: &Backoff,
    attempts: u32,
    random: f64,
    retry_after: Option<Duration>,
) -> Duration {
    policy
        .delay(attempts, random)
        .max(retry_after.unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests;
