//! The embedded store: SQLite in WAL mode with `synchronous=FULL`, through
//! rusqlite's bundled build, so a commit that returned survives `kill -9`
//! and power loss, and no database server is needed.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{ChatMeta, ChatSettings, Store, StoreError, StoredChat, Write, global_settings_key};
use crate::domain::message::Message;
use crate::domain::recaps::RecapVersion;
use crate::domain::settings::SettingsPatch;

/// File name of the database inside the data directory.
pub const DB_FILE: &str = "recapd.sqlite3";

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chats (
    chat_id TEXT PRIMARY KEY,
    needs_refresh INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX IF NOT EXISTS messages_by_seq ON messages (chat_id, seq);
CREATE TABLE IF NOT EXISTS recaps (
    chat_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (chat_id, version)
);
CREATE TABLE IF NOT EXISTS chat_settings (chat_id TEXT PRIMARY KEY, body TEXT NOT NULL);
";

/// SQLite-backed [`Store`]. Writes go through one connection (SQLite has
/// one writer at a time anyway); reads use a second one, which WAL lets
/// run while a write is in progress.
pub struct SqliteStore {
    writer: Mutex<Connection>,
    reader: Mutex<Connection>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteStore")
    }
}

fn db_err(e: rusqlite::Error) -> StoreError {
    StoreError::Database(e.to_string())
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn from_json<T: DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl SqliteStore {
    /// Opens (creating when needed) the database in `data_dir`, which must
    /// exist. With `fsync_every_commit` (`synchronous=FULL`) a commit that
    /// returned survives power loss; without it (`synchronous=NORMAL`) it
    /// survives a crash of the process but maybe not of the machine.
    pub fn open(data_dir: &Path, fsync_every_commit: bool) -> Result<SqliteStore, StoreError> {
        let path = data_dir.join(DB_FILE);
        let writer = Connection::open(&path).map_err(db_err)?;
        let synchronous = if fsync_every_commit { "FULL" } else { "NORMAL" };
        writer
            .execute_batch(&format!(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;"
            ))
            .map_err(db_err)?;
        writer.execute_batch(SCHEMA).map_err(db_err)?;
        let version: Option<String> = writer
            .query_row(
                "SELECT value FROM kv WHERE key = 'schema_version'",
                [],
                |r| r.get(0),
            )
            .optional()
            .map_err(db_err)?;
        match version {
            None => {
                writer
                    .execute(
                        "INSERT INTO kv (key, value) VALUES ('schema_version', ?1)",
                        params![SCHEMA_VERSION.to_string()],
                    )
                    .map_err(db_err)?;
            }
            Some(v) if v == SCHEMA_VERSION.to_string() => {}
            Some(v) => {
                return Err(StoreError::Corrupt(format!(
                    "{} has schema version {v}; this recapd knows {SCHEMA_VERSION}",
                    path.display()
                )));
            }
        }
        let reader = Connection::open(&path).map_err(db_err)?;
        reader
            .execute_batch("PRAGMA busy_timeout=5000;")
            .map_err(db_err)?;
        Ok(SqliteStore {
            writer: Mutex::new(writer),
            reader: Mutex::new(reader),
        })
    }

    fn reader(&self) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
        self.reader
            .lock()
            .map_err(|_| StoreError::Database("reader connection poisoned".into()))
    }
}

fn execute(
    tx: &rusqlite::Transaction<'_>,
    sql: &str,
    values: impl rusqlite::Params,
) -> Result<(), StoreError> {
    tx.prepare_cached(sql)
        .and_then(|mut statement| statement.execute(values))
        .map(drop)
        .map_err(db_err)
}

fn apply(tx: &rusqlite::Transaction<'_>, write: &Write) -> Result<(), StoreError> {
    match write {
        // One process writes a data directory: nobody else can move a chat.
        Write::Claim { .. } => Ok(()),
        Write::Chat { chat_id, meta } => execute(
            tx,
            "INSERT INTO chats (chat_id, needs_refresh, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (chat_id) DO UPDATE SET needs_refresh = ?2, body = ?3",
            params![chat_id, meta.needs_refresh, to_json(meta)?],
        ),
        Write::Message {
            chat_id,
            seq,
            message,
        } => execute(
            tx,
            "INSERT INTO messages (chat_id, message_id, seq, body) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (chat_id, message_id) DO UPDATE SET seq = ?3, body = ?4",
            params![chat_id, message.id, seq, to_json(message)?],
        ),
        Write::DeleteMessage {
            chat_id,
            message_id,
        } => execute(
            tx,
            "DELETE FROM messages WHERE chat_id = ?1 AND message_id = ?2",
            params![chat_id, message_id],
        ),
        Write::Recap { chat_id, version } => execute(
            tx,
            "INSERT INTO recaps (chat_id, version, body) VALUES (?1, ?2, ?3)
             ON CONFLICT (chat_id, version) DO UPDATE SET body = ?3",
            params![chat_id, version.version, to_json(version)?],
        ),
        Write::DeleteRecap { chat_id, version } => execute(
            tx,
            "DELETE FROM recaps WHERE chat_id = ?1 AND version = ?2",
            params![chat_id, version],
        ),
        Write::GlobalSettings { tenant, patch } => execute(
            tx,
            "INSERT INTO kv (key, value) VALUES (?1, ?2)
             ON CONFLICT (key) DO UPDATE SET value = ?2",
            params![global_settings_key(tenant), to_json(patch)?],
        ),
        Write::AllChatsOweRefresh { tenant } if tenant.is_empty() => execute(
            tx,
            "UPDATE chats SET needs_refresh = 1 WHERE instr(chat_id, char(31)) = 0",
            [],
        ),
        Write::AllChatsOweRefresh { tenant } => execute(
            tx,
            "UPDATE chats SET needs_refresh = 1 WHERE substr(chat_id, 1, length(?1)) = ?1",
            params![format!("{tenant}\u{1f}")],
        ),
        Write::ChatSettings { chat_id, settings } => execute(
            tx,
            "INSERT INTO chat_settings (chat_id, body) VALUES (?1, ?2)
             ON CONFLICT (chat_id) DO UPDATE SET body = ?2",
            params![chat_id, to_json(settings)?],
        ),
    }
}

impl Store for SqliteStore {
    fn commit(&self, groups: &[Vec<Write>]) -> Result<(), StoreError> {
        let mut conn = self
            .writer
            .lock()
            .map_err(|_| StoreError::Database("writer connection poisoned".into()))?;
        let tx = conn.transaction().map_err(db_err)?;
        for write in groups.iter().flatten() {
            apply(&tx, write)?;
        }
        tx.commit().map_err(db_err)
    }

    fn load_chat(&self, chat_id: &str) -> Result<Option<StoredChat>, StoreError> {
        let conn = self.reader()?;
        let row: Option<(bool, String)> = conn
            .prepare_cached("SELECT needs_refresh, body FROM chats WHERE chat_id = ?1")
            .and_then(|mut s| {
                s.query_row(params![chat_id], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
            })
            .map_err(db_err)?;
        let Some((needs_refresh, body)) = row else {
            return Ok(None);
        };
        let mut meta: ChatMeta = from_json(&body)?;
        // The column is the truth: AllChatsOweRefresh sets only the column.
        meta.needs_refresh = needs_refresh;
        let mut messages = Vec::new();
        {
            let mut stmt = conn
                .prepare_cached("SELECT seq, body FROM messages WHERE chat_id = ?1 ORDER BY seq")
                .map_err(db_err)?;
            let mut rows = stmt.query(params![chat_id]).map_err(db_err)?;
            while let Some(row) = rows.next().map_err(db_err)? {
                let seq: i64 = row.get(0).map_err(db_err)?;
                let body: String = row.get(1).map_err(db_err)?;
                let message: Message = from_json(&body)?;
                messages.push((seq, message));
            }
        }
        let mut recaps = Vec::new();
        {
            let mut stmt = conn
                .prepare_cached("SELECT body FROM recaps WHERE chat_id = ?1 ORDER BY version")
                .map_err(db_err)?;
            let mut rows = stmt.query(params![chat_id]).map_err(db_err)?;
            while let Some(row) = rows.next().map_err(db_err)? {
                let body: String = row.get(0).map_err(db_err)?;
                let version: RecapVersion = from_json(&body)?;
                recaps.push(version);
            }
        }
        Ok(Some(StoredChat {
            meta,
            messages,
            recaps,
        }))
    }

    fn load_chat_settings(&self, chat_id: &str) -> Result<Option<ChatSettings>, StoreError> {
        let conn = self.reader()?;
        let body: Option<String> = conn
            .prepare_cached("SELECT body FROM chat_settings WHERE chat_id = ?1")
            .and_then(|mut s| s.query_row(params![chat_id], |r| r.get(0)).optional())
            .map_err(db_err)?;
        body.map(|b| from_json(&b)).transpose()
    }

    fn all_chat_settings(&self) -> Result<Vec<(String, ChatSettings)>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn
            .prepare_cached("SELECT chat_id, body FROM chat_settings ORDER BY chat_id")
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(db_err)?;
        rows.map(|row| {
            let (id, body) = row.map_err(db_err)?;
            Ok((id, from_json(&body)?))
        })
        .collect()
    }

    fn load_global_settings(&self) -> Result<Vec<(String, SettingsPatch)>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn
            .prepare_cached(
                "SELECT key, value FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%'",
            )
            .map_err(db_err)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(db_err)?;
        rows.map(|row| {
            let (key, body) = row.map_err(db_err)?;
            let tenant = key.strip_prefix("global_settings:").unwrap_or("");
            Ok((tenant.to_owned(), from_json(&body)?))
        })
        .collect()
    }

    fn chat_ids(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn
            .prepare_cached("SELECT chat_id FROM chats ORDER BY chat_id")
            .map_err(db_err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(db_err)?;
        rows.map(|r| r.map_err(db_err)).collect()
    }

    fn chats_needing_refresh(&self) -> Result<Vec<String>, StoreError> {
        let conn = self.reader()?;
        let mut stmt = conn
            .prepare_cached("SELECT chat_id FROM chats WHERE needs_refresh ORDER BY chat_id")
            .map_err(db_err)?;
        let rows = stmt.query_map([], |r| r.get(0)).map_err(db_err)?;
        rows.map(|r| r.map_err(db_err)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Limits;
    use crate::domain::message::NewMessage;

    fn message(id: &str) -> Message {
        NewMessage {
            id: id.into(),
            text: format!("text of {id}"),
            ..Default::default()
        }
        .build("message", &Limits::default())
        .unwrap()
    }

    #[test]
    fn rows_survive_reopening_and_load_in_position_order() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = SqliteStore::open(dir.path(), true).unwrap();
            let chat = |m: &str, seq| Write::Message {
                chat_id: "c".into(),
                seq,
                message: message(m),
            };
            store
                .commit(&[
                    vec![
                        Write::Chat {
                            chat_id: "c".into(),
                            meta: ChatMeta {
                                revision: 3,
                                needs_refresh: true,
                                ..Default::default()
                            },
                        },
                        chat("b", 5),
                        chat("a", -1),
                    ],
                    vec![Write::GlobalSettings {
                        tenant: String::new(),
                        patch: SettingsPatch {
                            depth: Some(9),
                            ..Default::default()
                        },
                    }],
                ])
                .unwrap();
            store
                .commit(&[vec![
                    Write::DeleteMessage {
                        chat_id: "c".into(),
                        message_id: "b".into(),
                    },
                    chat("z", 7),
                ]])
                .unwrap();
        }
        let store = SqliteStore::open(dir.path(), true).unwrap();
        let chat = store.load_chat("c").unwrap().unwrap();
        assert_eq!(chat.meta.revision, 3);
        let ids: Vec<&str> = chat.messages.iter().map(|(_, m)| m.id.as_str()).collect();
        assert_eq!(ids, ["a", "z"]);
        let globals = store.load_global_settings().unwrap();
        assert_eq!(globals.len(), 1);
        assert_eq!((globals[0].0.as_str(), globals[0].1.depth), ("", Some(9)));
        assert_eq!(store.chats_needing_refresh().unwrap(), ["c"]);
        assert!(store.load_chat("other").unwrap().is_none());
        assert_eq!(store.chat_ids().unwrap(), ["c"]);
    }

    #[test]
    fn tenants_with_unusual_names_keep_their_own_settings_and_refreshes() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path(), true).unwrap();
        let chat = |id: &str| Write::Chat {
            chat_id: id.into(),
            meta: ChatMeta::default(),
        };
        let global = |tenant: &str, depth| Write::GlobalSettings {
            tenant: tenant.into(),
            patch: SettingsPatch {
                depth: Some(depth),
                ..Default::default()
            },
        };
        store
            .commit(&[vec![
                chat("plain"),
                chat("café\u{1f}c1"),
                chat(":x\u{1f}c2"),
                chat("x\u{1f}c3"),
                global(":x", 1),
                global("x", 2),
                global("", 3),
            ]])
            .unwrap();
        let mut globals = store.load_global_settings().unwrap();
        globals.sort_by(|a, b| a.0.cmp(&b.0));
        let depths: Vec<(&str, Option<u32>)> =
            globals.iter().map(|(t, p)| (t.as_str(), p.depth)).collect();
        assert_eq!(depths, [("", Some(3)), (":x", Some(1)), ("x", Some(2))]);
        let owe = |tenant: &str| {
            store
                .commit(&[vec![Write::AllChatsOweRefresh {
                    tenant: tenant.into(),
                }]])
                .unwrap();
            let owed = store.chats_needing_refresh().unwrap();
            store
                .commit(&[vec![
                    chat("plain"),
                    chat("café\u{1f}c1"),
                    chat(":x\u{1f}c2"),
                    chat("x\u{1f}c3"),
                ]])
                .unwrap();
            owed
        };
        assert_eq!(owe("café"), ["café\u{1f}c1"]);
        assert_eq!(owe(":x"), [":x\u{1f}c2"]);
        assert_eq!(owe(""), ["plain"]);
    }

    #[test]
    fn chat_settings_exist_without_the_chat() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path(), true).unwrap();
        let settings = ChatSettings {
            enabled: Some(false),
            ..Default::default()
        };
        store
            .commit(&[vec![Write::ChatSettings {
                chat_id: "later".into(),
                settings: settings.clone(),
            }]])
            .unwrap();
        assert_eq!(store.load_chat_settings("later").unwrap(), Some(settings));
        assert!(store.load_chat("later").unwrap().is_none());
        assert_eq!(store.all_chat_settings().unwrap().len(), 1);
    }
}
