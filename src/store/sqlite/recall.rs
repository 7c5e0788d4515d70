//! Recall vectors in the embedded store (`recall_vectors`): written by
//! [`Write::RecallVectors`], removed with their message
//! ([`Write::DeleteMessage`]), their chat's import ([`Write::ReplaceChat`])
//! and their chat ([`Write::DeleteChat`]), read with their chat.

use rusqlite::{Connection, Transaction, params};

use super::db_err;
use super::writes::execute;
use crate::domain::ids::ChatKey;
use crate::domain::recall::{ChunkKey, Source, StoredVector};
use crate::store::StoreError;
use crate::store::vectors::{fingerprint_column, from_bytes, to_bytes};

/// [`Write::RecallVectors`](crate::store::Write::RecallVectors).
pub(super) fn put_vectors(
    tx: &Transaction<'_>,
    chat: &ChatKey,
    vectors: &[StoredVector],
    trims: &[(String, Source, u32)],
) -> Result<(), StoreError> {
    for v in vectors {
        execute(
            tx,
            "INSERT INTO recall_vectors
                 (tenant, chat_id, message_id, source, part, fingerprint, model, vector)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
             ON CONFLICT (tenant, chat_id, message_id, source, part) DO UPDATE
                 SET fingerprint = ?6, model = ?7, vector = ?8",
            params![
                chat.tenant.name(),
                chat.id,
                v.key.message_id.as_str(),
                v.key.source.code(),
                v.key.part,
                fingerprint_column(v.fingerprint),
                v.model,
                to_bytes(&v.vector)
            ],
        )?;
    }
    for (message_id, source, parts) in trims {
        execute(
            tx,
            "DELETE FROM recall_vectors
             WHERE tenant = ?1 AND chat_id = ?2 AND message_id = ?3 AND source = ?4 AND part >= ?5",
            params![
                chat.tenant.name(),
                chat.id,
                message_id,
                source.code(),
                parts
            ],
        )?;
    }
    Ok(())
}

/// Removes the vectors of one message's passages.
pub(super) fn delete_message_vectors(
    tx: &Transaction<'_>,
    chat: &ChatKey,
    message_id: &str,
) -> Result<(), StoreError> {
    execute(
        tx,
        "DELETE FROM recall_vectors WHERE tenant = ?1 AND chat_id = ?2 AND message_id = ?3",
        params![chat.tenant.name(), chat.id, message_id],
    )
}

/// The vectors stored for `chat`, in the caller's read transaction.
pub(super) fn vectors_of(
    conn: &Connection,
    chat: &ChatKey,
) -> Result<Vec<StoredVector>, StoreError> {
    let reading = db_err("reading a chat's recall vectors");
    let mut stmt = conn
        .prepare_cached(
            "SELECT message_id, source, part, fingerprint, model, vector FROM recall_vectors
             WHERE tenant = ?1 AND chat_id = ?2",
        )
        .map_err(&reading)?;
    let mut rows = stmt
        .query(params![chat.tenant.name(), chat.id])
        .map_err(&reading)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(&reading)? {
        let message_id: String = row.get(0).map_err(&reading)?;
        let source: i64 = row.get(1).map_err(&reading)?;
        let source = Source::from_code(source).ok_or_else(|| {
            StoreError::corrupt("recall vector".to_owned(), format!("source {source}"))
        })?;
        let part: u32 = row.get(2).map_err(&reading)?;
        let fingerprint: i64 = row.get(3).map_err(&reading)?;
        let model: String = row.get(4).map_err(&reading)?;
        let bytes = row.get_ref(5).map_err(&reading)?;
        let bytes = bytes
            .as_blob()
            .map_err(|e| StoreError::corrupt("recall vector".to_owned(), e))?;
        out.push(StoredVector {
            key: ChunkKey {
                message_id: message_id.into(),
                source,
                part,
            },
            fingerprint: fingerprint.cast_unsigned(),
            model,
            vector: from_bytes(bytes)?,
        });
    }
    Ok(out)
}
