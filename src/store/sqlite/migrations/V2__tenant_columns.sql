-- The tenant in a column of its own in every chat table, and the global
-- settings in a table of their own. Version 1's joined keys (T, U+001F =
-- char(31), then the chat id; the default tenant's the bare chat id) are
-- split in place; this is the only place that still knows them.
ALTER TABLE chats RENAME TO chats_v1;
ALTER TABLE messages RENAME TO messages_v1;
ALTER TABLE recaps RENAME TO recaps_v1;
ALTER TABLE chat_settings RENAME TO chat_settings_v1;
DROP INDEX IF EXISTS messages_by_seq;
CREATE TABLE global_settings (tenant TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE chats (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    needs_refresh INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE TABLE messages (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id, message_id)
);
CREATE INDEX messages_by_seq ON messages (tenant, chat_id, seq);
CREATE TABLE recaps (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id, version)
);
CREATE TABLE chat_settings (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
INSERT INTO chats (tenant, chat_id, needs_refresh, body)
    SELECT CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, 1, instr(chat_id, char(31)) - 1) ELSE '' END,
           CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, instr(chat_id, char(31)) + 1) ELSE chat_id END,
           needs_refresh, body
    FROM chats_v1;
INSERT INTO messages (tenant, chat_id, message_id, seq, body)
    SELECT CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, 1, instr(chat_id, char(31)) - 1) ELSE '' END,
           CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, instr(chat_id, char(31)) + 1) ELSE chat_id END,
           message_id, seq, body
    FROM messages_v1;
INSERT INTO recaps (tenant, chat_id, version, body)
    SELECT CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, 1, instr(chat_id, char(31)) - 1) ELSE '' END,
           CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, instr(chat_id, char(31)) + 1) ELSE chat_id END,
           version, body
    FROM recaps_v1;
INSERT INTO chat_settings (tenant, chat_id, body)
    SELECT CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, 1, instr(chat_id, char(31)) - 1) ELSE '' END,
           CASE WHEN instr(chat_id, char(31)) > 0
                THEN substr(chat_id, instr(chat_id, char(31)) + 1) ELSE chat_id END,
           body
    FROM chat_settings_v1;
INSERT INTO global_settings (tenant, body)
    SELECT CASE WHEN key = 'global_settings' THEN ''
                ELSE substr(key, length('global_settings:') + 1) END, value
    FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
DELETE FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
DROP TABLE chats_v1;
DROP TABLE messages_v1;
DROP TABLE recaps_v1;
DROP TABLE chat_settings_v1;
