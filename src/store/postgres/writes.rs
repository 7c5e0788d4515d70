//! The SQL of each row write, with its parameters owned so that a batch's
//! statements can be sent together.

use tokio_postgres::types::ToSql;

use super::as_i64;
use crate::domain::ids::{ChatKey, ClaimKey};
use crate::domain::recall::{Source, StoredVector};
use crate::store::vectors::{fingerprint_column, to_bytes};
use crate::store::{StoreError, Write, to_json};

/// A statement's parameters, owned, so a batch's statements can be sent
/// together.
pub(super) type Param = Box<dyn ToSql + Sync + Send>;

/// Claims a chat's clock (the `generation` column): moves it on by one if it is the one given
/// (inserting the chat at 1 when it has none), and returns the new one; no
/// row when another writer moved it first.
const CLAIM_CHAT: &str = "INSERT INTO chat_clock AS c (tenant, chat_id, generation, changed_at)
     VALUES ($1, $2, $3::bigint + 1, now())
     ON CONFLICT (tenant, chat_id) DO UPDATE SET generation = c.generation + 1, changed_at = now()
     WHERE c.generation = $3::bigint
     RETURNING c.generation";

/// The same for a tenant's global settings.
const CLAIM_SETTINGS: &str = "INSERT INTO settings_clock AS c (tenant, generation, changed_at)
     VALUES ($1, $2::bigint + 1, now())
     ON CONFLICT (tenant) DO UPDATE SET generation = c.generation + 1, changed_at = now()
     WHERE c.generation = $2::bigint
     RETURNING c.generation";

/// Erases a chat ($1, $2): every row of it but its clock, which the
/// group's claim moves on (so replicas that held it conflict, and the others
/// hear of it and re-read it gone). Its tombstone ($3 revision, $4 message
/// revision, $5 deleted µs, $6 recall revision) takes their place. One statement, so the rows go
/// together; the statements after it in the batch see it done.
const DELETE_CHAT: &str = "WITH
         messages_gone AS (DELETE FROM messages WHERE tenant = $1 AND chat_id = $2),
         recaps_gone AS (DELETE FROM recaps WHERE tenant = $1 AND chat_id = $2),
         settings_gone AS (DELETE FROM chat_settings WHERE tenant = $1 AND chat_id = $2),
         jobs_gone AS (DELETE FROM jobs WHERE tenant = $1 AND chat_id = $2),
         vectors_gone AS (DELETE FROM recall_vectors WHERE tenant = $1 AND chat_id = $2),
         activity_gone AS (DELETE FROM chat_activity WHERE tenant = $1 AND chat_id = $2),
         chat_gone AS (DELETE FROM chats WHERE tenant = $1 AND chat_id = $2)
     INSERT INTO chat_tombstones
         (tenant, chat_id, revision, message_revision, deleted_us, recall_revision)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (tenant, chat_id) DO UPDATE
         SET revision = $3, message_revision = $4, deleted_us = $5, recall_revision = $6";

/// Stores recall vectors ($3.. arrays, one element per chunk) and trims
/// ($9.. arrays, one per message and source) of chat ($1, $2) in one
/// statement: the trims delete parts at or past a text's chunk count, the
/// insert replaces each chunk's row (the two never touch the same row:
/// a batch's vectors are of current chunks, below the count).
const PUT_VECTORS: &str = "WITH trimmed AS (
         DELETE FROM recall_vectors r
         USING unnest($9::text[], $10::smallint[], $11::integer[]) AS t(message_id, source, parts)
         WHERE r.tenant = $1 AND r.chat_id = $2 AND r.message_id = t.message_id
           AND r.source = t.source AND r.part >= t.parts
     )
     INSERT INTO recall_vectors
         (tenant, chat_id, message_id, source, part, fingerprint, model, vector)
     SELECT $1, $2, v.message_id, v.source, v.part, v.fingerprint, v.model, v.vector
     FROM unnest($3::text[], $4::smallint[], $5::integer[], $6::bigint[], $7::text[], $8::bytea[])
         AS v(message_id, source, part, fingerprint, model, vector)
     ON CONFLICT (tenant, chat_id, message_id, source, part) DO UPDATE
         SET fingerprint = excluded.fingerprint, model = excluded.model, vector = excluded.vector";

/// The array parameters of [`PUT_VECTORS`] after the chat's.
fn vector_params(vectors: &[StoredVector], trims: &[(String, Source, u32)]) -> Vec<Param> {
    // As the embedded store applies the write: each chunk's last vector,
    // then the trims (a vector at or past its text's trimmed count goes).
    // One statement sees one snapshot, so both are settled here.
    let mut last: std::collections::HashMap<(&str, Source, u32), &StoredVector> =
        std::collections::HashMap::new();
    for v in vectors {
        last.insert((v.key.message_id.as_str(), v.key.source, v.key.part), v);
    }
    let trimmed = |v: &StoredVector| {
        trims.iter().any(|(id, source, parts)| {
            id.as_str() == v.key.message_id.as_str()
                && *source == v.key.source
                && v.key.part >= *parts
        })
    };
    let vectors: Vec<&StoredVector> = vectors
        .iter()
        .filter(|v| {
            last.get(&(v.key.message_id.as_str(), v.key.source, v.key.part))
                .is_some_and(|kept| std::ptr::eq(*kept, *v))
                && !trimmed(v)
        })
        .collect();
    let ids: Vec<String> = vectors
        .iter()
        .map(|v| v.key.message_id.to_string())
        .collect();
    let sources: Vec<i16> = vectors.iter().map(|v| source_code(v.key.source)).collect();
    let parts: Vec<i32> = vectors.iter().map(|v| part_column(v.key.part)).collect();
    let fingerprints: Vec<i64> = vectors
        .iter()
        .map(|v| fingerprint_column(v.fingerprint))
        .collect();
    let models: Vec<String> = vectors.iter().map(|v| v.model.clone()).collect();
    let bytes: Vec<Vec<u8>> = vectors.iter().map(|v| to_bytes(&v.vector)).collect();
    let trim_ids: Vec<String> = trims.iter().map(|t| t.0.clone()).collect();
    let trim_sources: Vec<i16> = trims.iter().map(|t| source_code(t.1)).collect();
    let trim_parts: Vec<i32> = trims.iter().map(|t| part_column(t.2)).collect();
    vec![
        Box::new(ids),
        Box::new(sources),
        Box::new(parts),
        Box::new(fingerprints),
        Box::new(models),
        Box::new(bytes),
        Box::new(trim_ids),
        Box::new(trim_sources),
        Box::new(trim_parts),
    ]
}

/// A source as its smallint column holds it.
fn source_code(source: Source) -> i16 {
    // Codes are 0 and 1.
    i16::try_from(source.code()).unwrap_or(i16::MAX)
}

/// A part number as its integer column holds it (parts are far below
/// 2^31: a chunk is at least 50 characters of a text of bounded size).
fn part_column(part: u32) -> i32 {
    i32::try_from(part).unwrap_or(i32::MAX)
}

fn text(value: &str) -> Param {
    Box::new(value.to_owned())
}

fn chat_params(chat: &ChatKey) -> Vec<Param> {
    vec![text(chat.tenant.name()), text(&chat.id)]
}

/// The SQL and parameters of a claim.
pub(super) fn claim(key: &ClaimKey, clock: i64) -> (&'static str, Vec<Param>) {
    match key {
        ClaimKey::Chat(chat) => {
            let mut params = chat_params(chat);
            params.push(Box::new(clock));
            (CLAIM_CHAT, params)
        }
        ClaimKey::GlobalSettings(tenant) => {
            (CLAIM_SETTINGS, vec![text(tenant.name()), Box::new(clock)])
        }
    }
}

/// The SQL and parameters of one write (claims are made apart, first).
pub(super) fn statement(write: &Write) -> Result<Option<(&'static str, Vec<Param>)>, StoreError> {
    let with = |chat: &ChatKey, more: Vec<Param>| {
        let mut params = chat_params(chat);
        params.extend(more);
        params
    };
    Ok(Some(match write {
        // Claims are made apart, first; a whole chat, apart, last
        // (`replace::replace_chat`).
        Write::Claim { .. } | Write::ReplaceChat { .. } => return Ok(None),
        // Its fence, if it expects one, is checked apart, first
        // (`jobs::check_fences`).
        Write::Job { job, .. } => super::jobs::put_job(job)?,
        Write::PurgeJobs { finished_before_us } => super::jobs::purge_jobs(*finished_before_us),
        // Its answer (a row only when applied) is checked by the commit.
        Write::Lorebook(put) => super::lorebooks::put_lorebook(put),
        Write::LorebookEntry(put) => super::lorebooks::put_lorebook_entry(put),
        Write::DeleteLorebook(delete) => super::lorebooks::delete_lorebook(delete),
        // Its jobs' rows were locked with the batch's (`jobs::lock_jobs`).
        Write::DeleteChat { chat, tombstone } => (
            DELETE_CHAT,
            with(
                chat,
                vec![
                    Box::new(as_i64(tombstone.revision)),
                    Box::new(as_i64(tombstone.message_revision)),
                    Box::new(tombstone.deleted_us.0),
                    Box::new(as_i64(tombstone.recall_revision)),
                ],
            ),
        ),
        Write::Activity {
            chat,
            message_count,
            updated_us,
        } => (
            "INSERT INTO chat_activity (tenant, chat_id, updated_us, message_count)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant, chat_id) DO UPDATE SET updated_us = $3, message_count = $4",
            with(
                chat,
                vec![Box::new(updated_us.0), Box::new(as_i64(*message_count))],
            ),
        ),
        Write::Chat { chat, meta } => (
            "INSERT INTO chats (tenant, chat_id, needs_refresh, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant, chat_id) DO UPDATE SET needs_refresh = $3, body = $4",
            with(
                chat,
                vec![
                    Box::new(meta.needs_refresh),
                    Box::new(to_json("chat row", meta)?),
                ],
            ),
        ),
        Write::Message { chat, seq, message } => (
            "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (tenant, chat_id, message_id) DO UPDATE SET seq = $4, body = $5",
            with(
                chat,
                vec![
                    text(&message.id),
                    Box::new(*seq),
                    Box::new(to_json("message", message)?),
                ],
            ),
        ),
        Write::DeleteMessage { chat, message_id } => (
            "WITH vectors_gone AS (
                 DELETE FROM recall_vectors WHERE tenant = $1 AND chat_id = $2 AND message_id = $3
             )
             DELETE FROM messages WHERE tenant = $1 AND chat_id = $2 AND message_id = $3",
            with(chat, vec![text(message_id)]),
        ),
        Write::RecallVectors {
            chat,
            vectors,
            trims,
        } => (PUT_VECTORS, with(chat, vector_params(vectors, trims))),
        Write::Recap { chat, version } => (
            "INSERT INTO recaps (tenant, chat_id, version, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (tenant, chat_id, version) DO UPDATE SET body = $4",
            with(
                chat,
                vec![
                    Box::new(i64::from(version.version)),
                    Box::new(to_json("running recap", version)?),
                ],
            ),
        ),
        Write::DeleteRecap { chat, version } => (
            "DELETE FROM recaps WHERE tenant = $1 AND chat_id = $2 AND version = $3",
            with(chat, vec![Box::new(i64::from(*version))]),
        ),
        Write::GlobalSettings { tenant, patch } => (
            "INSERT INTO global_settings (tenant, body) VALUES ($1, $2)
             ON CONFLICT (tenant) DO UPDATE SET body = $2",
            vec![
                text(tenant.name()),
                Box::new(to_json("global settings", patch)?),
            ],
        ),
        Write::Profiles { tenant, profiles } => (
            "INSERT INTO profiles (tenant, body) VALUES ($1, $2)
             ON CONFLICT (tenant) DO UPDATE SET body = $2",
            vec![
                text(tenant.name()),
                Box::new(to_json("profiles", profiles)?),
            ],
        ),
        // Chat clocks are locked in chat order, byte by byte as claims are
        // sorted (hence the "C" collation), and moved on, so replicas
        // holding these chats re-read them (and see the refresh owed) before
        // their next commit.
        Write::AllChatsOweRefresh { tenant } => (
            "WITH owed AS (
                 SELECT k.tenant, k.chat_id FROM chat_clock k JOIN chats c USING (tenant, chat_id)
                 WHERE k.tenant = $1
                 ORDER BY k.chat_id COLLATE \"C\"
                 FOR UPDATE OF k
             ), moved AS (
                 UPDATE chat_clock k SET generation = k.generation + 1, changed_at = now()
                 FROM owed WHERE k.tenant = owed.tenant AND k.chat_id = owed.chat_id
             )
             UPDATE chats c SET needs_refresh = true
             FROM owed WHERE c.tenant = owed.tenant AND c.chat_id = owed.chat_id",
            vec![text(tenant.name())],
        ),
        Write::ChatSettings { chat, settings } => (
            "INSERT INTO chat_settings (tenant, chat_id, body) VALUES ($1, $2, $3)
             ON CONFLICT (tenant, chat_id) DO UPDATE SET body = $3",
            with(chat, vec![Box::new(to_json("chat settings", settings)?)]),
        ),
    }))
}
