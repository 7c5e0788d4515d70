//! Loading one chat: its rows are read on the reading thread as they are
//! stored (JSON text), and decoded by the caller, on the thread that keeps
//! the chat.
//!
//! Why the split: a loaded chat lives on in memory, so where it is
//! allocated matters. glibc gives each thread that allocates a pool
//! (arena) of its own, and memory freed into one pool serves only that
//! pool's later allocations. The engine's workers build and drop chats
//! (events, evictions); if loads were decoded on the reading thread, the
//! memory evictions free on the workers' pools would sit unused while the
//! reading thread's pool grew with every load, and the process would
//! outgrow `--max-resident-memory` (measured: 200,000 chats past a 256 MiB
//! budget peaked 170 MiB higher). Read as raw text, what the reading thread
//! allocates is short-lived and reused by its next read.
//!
//! A big chat (over [`DECODE_ON_READER`] bytes of message rows) is the
//! exception: decoding it takes milliseconds to seconds, which must not
//! hold an async worker, so the reading thread decodes it.

use crate::domain::recall::StoredVector;
use crate::domain::time::UnixMicros;
use rusqlite::{Connection, OptionalExtension, params};

use super::db_err;
use crate::domain::ids::ChatKey;
use crate::domain::jobs::Job;
use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::store::{
    ChatMeta, ChatSettings, LoadedChat, StoreError, StoredChat, Tombstone, from_json,
};

/// Bytes of message rows past which the reading thread decodes a chat
/// itself rather than handing the rows to the caller (about 2,500 messages
/// of a few hundred bytes: a few milliseconds of decoding).
const DECODE_ON_READER: usize = 1 << 20;

/// What a load hands back from the reading thread.
// The rows travel unboxed: one move per load, and the decoded chat, the
// large one, is boxed.
#[allow(clippy::large_enum_variant)]
pub(super) enum Fetched {
    /// The rows of a chat of ordinary size, for the caller to decode.
    Rows(ChatRows),
    /// A big chat, decoded on the reading thread (boxed: the enum stays
    /// the size of the rows).
    Decoded(Box<LoadedChat>),
}

/// A chat's rows as stored, read in one transaction, not yet decoded; with
/// its tombstone and activity time, read in the same transaction.
pub(super) struct ChatRows {
    /// The `chats` row: its `needs_refresh` column and its body; `None`
    /// when no event has named the chat.
    row: Option<(bool, String)>,
    /// The chat's own settings (body).
    settings: Option<String>,
    /// Its open jobs, decoded (few and small).
    jobs: Vec<Job>,
    /// Its recall vectors, decoded.
    vectors: Vec<StoredVector>,
    /// Message position keys, ascending, and where each body ends in
    /// `message_text`.
    messages: Vec<(i64, usize)>,
    /// Every message body, one after the other: one allocation for the
    /// lot rather than one per message.
    message_text: String,
    /// Running-recap version bodies, ascending.
    recaps: Vec<String>,
    /// What its latest deletion left, if it was ever deleted.
    tombstone: Option<Tombstone>,
    /// When it last changed (`chat_activity`), if it has rows.
    updated_us: Option<UnixMicros>,
}

impl ChatRows {
    /// Reads every row of `key` (the caller holds a read transaction, so
    /// that they are of one moment of the database).
    pub(super) fn read(conn: &Connection, key: &ChatKey) -> Result<ChatRows, StoreError> {
        let reading = db_err("reading a chat");
        let key_params = params![key.tenant.name(), key.id];
        let row = conn
            .prepare_cached(
                "SELECT needs_refresh, body FROM chats WHERE tenant = ?1 AND chat_id = ?2",
            )
            .and_then(|mut s| {
                s.query_row(key_params, |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(&reading)?;
        let settings = conn
            .prepare_cached("SELECT body FROM chat_settings WHERE tenant = ?1 AND chat_id = ?2")
            .and_then(|mut s| s.query_row(key_params, |r| r.get(0)).optional())
            .map_err(&reading)?;
        let jobs = super::jobs::open_jobs_of(conn, key)?;
        let (tombstone, updated_us) = super::lifecycle::tombstone_and_activity(conn, key)?;
        let vectors = super::recall::vectors_of(conn, key)?;
        let mut rows = ChatRows {
            row,
            settings,
            jobs,
            vectors,
            messages: Vec::new(),
            message_text: String::new(),
            recaps: Vec::new(),
            tombstone,
            updated_us,
        };
        if rows.row.is_none() {
            return Ok(rows);
        }
        let mut stmt = conn
            .prepare_cached(
                "SELECT seq, body FROM messages WHERE tenant = ?1 AND chat_id = ?2 ORDER BY seq",
            )
            .map_err(&reading)?;
        let mut found = stmt.query(key_params).map_err(&reading)?;
        while let Some(row) = found.next().map_err(&reading)? {
            let seq: i64 = row.get(0).map_err(&reading)?;
            let body = row.get_ref(1).map_err(&reading)?;
            let body = body
                .as_str()
                .map_err(|e| StoreError::corrupt("message".to_owned(), e))?;
            rows.message_text.push_str(body);
            rows.messages.push((seq, rows.message_text.len()));
        }
        let mut stmt = conn
            .prepare_cached(
                "SELECT body FROM recaps WHERE tenant = ?1 AND chat_id = ?2 ORDER BY version",
            )
            .map_err(&reading)?;
        let mut found = stmt.query(key_params).map_err(&reading)?;
        while let Some(row) = found.next().map_err(&reading)? {
            rows.recaps.push(row.get(0).map_err(&reading)?);
        }
        Ok(rows)
    }

    /// Whether the chat is big enough to be decoded on the reading thread.
    pub(super) fn is_big(&self) -> bool {
        self.message_text.len() > DECODE_ON_READER
    }

    /// Decodes the rows into the chat they store.
    pub(super) fn decode(self) -> Result<LoadedChat, StoreError> {
        let ChatRows {
            row,
            settings,
            jobs,
            vectors,
            messages,
            message_text,
            recaps,
            tombstone,
            updated_us,
        } = self;
        let settings = settings
            .map(|body| from_json::<ChatSettings>("chat settings", &body))
            .transpose()?;
        let Some((needs_refresh, body)) = row else {
            return Ok(LoadedChat {
                settings,
                jobs,
                vectors,
                tombstone,
                updated_us,
                ..LoadedChat::default()
            });
        };
        let mut meta: ChatMeta = from_json("chat row", &body)?;
        // The column is the truth: AllChatsOweRefresh sets only the column.
        meta.needs_refresh = needs_refresh;
        let mut start = 0;
        let messages = messages
            .into_iter()
            .map(|(seq, end)| {
                let body = message_text.get(start..end).ok_or_else(|| {
                    StoreError::corrupt("message".to_owned(), "body bounds".to_owned())
                })?;
                start = end;
                Ok((seq, from_json::<Message>("message", body)?))
            })
            .collect::<Result<_, StoreError>>()?;
        let recaps = recaps
            .iter()
            .map(|body| from_json::<RecapVersion>("running recap", body))
            .collect::<Result<_, _>>()?;
        Ok(LoadedChat {
            chat: Some(StoredChat {
                meta,
                messages,
                recaps,
            }),
            settings,
            jobs,
            vectors,
            tombstone,
            updated_us,
            ..LoadedChat::default()
        })
    }
}
