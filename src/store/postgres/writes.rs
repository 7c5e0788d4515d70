//! The SQL of each row write, with its parameters owned so that a batch's
//! statements can be sent together.

use tokio_postgres::types::ToSql;

use super::to_json;
use crate::store::global_settings_key;
use crate::store::{StoreError, Write};

/// A statement's parameters, owned, so a batch's statements can be sent
/// together.
pub(super) type Param = Box<dyn ToSql + Sync + Send>;

/// Claims a chat's generation: moves it on by one if it is the one given
/// (inserting the chat at 1 when it has none), and returns the new one; no
/// row when another writer moved it first.
pub(super) const CLAIM: &str = "INSERT INTO chat_clock AS c (chat_id, generation, changed_at)
     VALUES ($1, $2::bigint + 1, now())
     ON CONFLICT (chat_id) DO UPDATE SET generation = c.generation + 1, changed_at = now()
     WHERE c.generation = $2::bigint
     RETURNING c.generation";

fn text(value: &str) -> Param {
    Box::new(value.to_owned())
}

/// The SQL and parameters of one write (claims are made apart, first).
pub(super) fn statement(write: &Write) -> Result<Option<(&'static str, Vec<Param>)>, StoreError> {
    Ok(Some(match write {
        Write::Claim { .. } => return Ok(None),
        Write::Chat { chat_id, meta } => (
            "INSERT INTO chats (chat_id, needs_refresh, body) VALUES ($1, $2, $3)
             ON CONFLICT (chat_id) DO UPDATE SET needs_refresh = $2, body = $3",
            vec![
                text(chat_id),
                Box::new(meta.needs_refresh),
                Box::new(to_json(meta)?),
            ],
        ),
        Write::Message {
            chat_id,
            seq,
            message,
        } => (
            "INSERT INTO messages (chat_id, message_id, seq, body) VALUES ($1, $2, $3, $4)
             ON CONFLICT (chat_id, message_id) DO UPDATE SET seq = $3, body = $4",
            vec![
                text(chat_id),
                text(&message.id),
                Box::new(*seq),
                Box::new(to_json(message)?),
            ],
        ),
        Write::DeleteMessage {
            chat_id,
            message_id,
        } => (
            "DELETE FROM messages WHERE chat_id = $1 AND message_id = $2",
            vec![text(chat_id), text(message_id)],
        ),
        Write::Recap { chat_id, version } => (
            "INSERT INTO recaps (chat_id, version, body) VALUES ($1, $2, $3)
             ON CONFLICT (chat_id, version) DO UPDATE SET body = $3",
            vec![
                text(chat_id),
                Box::new(i64::from(version.version)),
                Box::new(to_json(version)?),
            ],
        ),
        Write::DeleteRecap { chat_id, version } => (
            "DELETE FROM recaps WHERE chat_id = $1 AND version = $2",
            vec![text(chat_id), Box::new(i64::from(*version))],
        ),
        Write::GlobalSettings { tenant, patch } => (
            "INSERT INTO kv (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = $2",
            vec![
                text(&global_settings_key(tenant)),
                Box::new(to_json(patch)?),
            ],
        ),
        // Chat clocks are locked in chat order, as claims lock them, and
        // moved on, so replicas holding these chats re-read them (and see
        // the refresh owed) before their next commit.
        Write::AllChatsOweRefresh { tenant } => (
            "WITH owed AS (
                 SELECT k.chat_id FROM chat_clock k JOIN chats c USING (chat_id)
                 WHERE CASE WHEN $1 = '' THEN strpos(c.chat_id, chr(31)) = 0
                            ELSE starts_with(c.chat_id, $1 || chr(31)) END
                 ORDER BY k.chat_id
                 FOR UPDATE OF k
             ), moved AS (
                 UPDATE chat_clock k SET generation = k.generation + 1, changed_at = now()
                 FROM owed WHERE k.chat_id = owed.chat_id
             )
             UPDATE chats c SET needs_refresh = true FROM owed WHERE c.chat_id = owed.chat_id",
            vec![text(tenant)],
        ),
        Write::ChatSettings { chat_id, settings } => (
            "INSERT INTO chat_settings (chat_id, body) VALUES ($1, $2)
             ON CONFLICT (chat_id) DO UPDATE SET body = $2",
            vec![text(chat_id), Box::new(to_json(settings)?)],
        ),
    }))
}
