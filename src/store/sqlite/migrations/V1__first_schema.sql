-- The first recapd's schema: a chat of tenant T stored under one key,
-- T, U+001F, then the chat id (the default tenant's under the bare chat
-- id); a tenant's global settings in kv under 'global_settings' (default
-- tenant) or 'global_settings:T'. Version 2 splits those keys.
CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE chats (chat_id TEXT PRIMARY KEY, needs_refresh INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE messages (chat_id TEXT NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (chat_id, message_id));
CREATE INDEX messages_by_seq ON messages (chat_id, seq);
CREATE TABLE recaps (chat_id TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (chat_id, version));
CREATE TABLE chat_settings (chat_id TEXT PRIMARY KEY, body TEXT NOT NULL);
