//! [`Write::ReplaceChat`](crate::store::Write::ReplaceChat) on PostgreSQL:
//! a whole chat written inside the batch's transaction in statements of a
//! bounded size, each bounded in time, so that neither the rows' JSON nor
//! one call's wait grows with the chat.

use deadpool_postgres::Transaction;

use super::{bounded, pg_err};
use crate::domain::chat::Chat;
use crate::domain::ids::ChatKey;
use crate::store::{StoreError, to_json};

/// Most bytes of message bodies sent in one statement.
const CHUNK_BYTES: usize = 4 << 20;
/// Most messages sent in one statement.
const CHUNK_ROWS: usize = 2000;

const INSERT_MESSAGES: &str = "INSERT INTO messages (tenant, chat_id, message_id, seq, body)
     SELECT $1, $2, m.id, m.seq, m.body
     FROM unnest($3::text[], $4::bigint[], $5::text[]) AS m (id, seq, body)";

const INSERT_RECAPS: &str = "INSERT INTO recaps (tenant, chat_id, version, body)
     SELECT $1, $2, r.version, r.body
     FROM unnest($3::bigint[], $4::text[]) AS r (version, body)";

/// Deletes the chat's messages and versions and inserts `content`'s, in
/// `tx`.
pub(super) async fn replace_chat(
    tx: &Transaction<'_>,
    chat: &ChatKey,
    content: &Chat,
) -> Result<(), StoreError> {
    let writing = pg_err("writing a whole chat");
    let (tenant, id) = (chat.tenant.name(), chat.id.as_str());
    bounded(async {
        tx.execute(
            "DELETE FROM messages WHERE tenant = $1 AND chat_id = $2",
            &[&tenant, &id],
        )
        .await
        .map_err(&writing)?;
        tx.execute(
            "DELETE FROM recaps WHERE tenant = $1 AND chat_id = $2",
            &[&tenant, &id],
        )
        .await
        .map_err(&writing)?;
        tx.execute(
            "DELETE FROM recall_vectors WHERE tenant = $1 AND chat_id = $2",
            &[&tenant, &id],
        )
        .await
        .map_err(&writing)
    })
    .await?;
    let insert = bounded(async { tx.prepare(INSERT_MESSAGES).await.map_err(&writing) }).await?;
    let mut ids: Vec<&str> = Vec::new();
    let mut seqs: Vec<i64> = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    let mut bytes = 0;
    let mut messages = content.messages().peekable();
    while let Some((seq, message)) = messages.next() {
        let body = to_json("message", message)?;
        bytes += body.len();
        ids.push(&message.id);
        seqs.push(seq);
        bodies.push(body);
        if bytes >= CHUNK_BYTES || ids.len() >= CHUNK_ROWS || messages.peek().is_none() {
            bounded(async {
                tx.execute(&insert, &[&tenant, &id, &ids, &seqs, &bodies])
                    .await
                    .map_err(&writing)
            })
            .await?;
            ids.clear();
            seqs.clear();
            bodies.clear();
            bytes = 0;
        }
    }
    let mut versions: Vec<i64> = Vec::new();
    let mut bodies: Vec<String> = Vec::new();
    for version in content.recaps().versions() {
        versions.push(i64::from(version.version));
        bodies.push(to_json("running recap", version)?);
    }
    if !versions.is_empty() {
        bounded(async {
            tx.execute(INSERT_RECAPS, &[&tenant, &id, &versions, &bodies])
                .await
                .map_err(&writing)
        })
        .await?;
    }
    Ok(())
}
