-- The tenant in a column of its own in every chat table, the global
-- settings and their clock in tables of their own. Existing rows move in
-- place: a chat of tenant T was stored under one key, T, the separator
-- U+001F (chr(31)), then the chat id; a settings claim under a key that
-- began with U+001E (chr(30)). This is the only place that still knows them.
CREATE TABLE global_settings (tenant text PRIMARY KEY, body text NOT NULL);
INSERT INTO global_settings (tenant, body)
    SELECT CASE WHEN key = 'global_settings' THEN ''
                ELSE substr(key, length('global_settings:') + 1) END, value
    FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
DELETE FROM kv WHERE key = 'global_settings' OR key LIKE 'global_settings:%';
CREATE TABLE settings_clock (
    tenant text PRIMARY KEY,
    generation bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO settings_clock (tenant, generation, changed_at)
    SELECT substr(chat_id, strpos(chat_id, chr(31)) + 1), generation, changed_at
    FROM chat_clock WHERE starts_with(chat_id, chr(30));
DELETE FROM chat_clock WHERE starts_with(chat_id, chr(30));

ALTER TABLE chat_clock ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE chat_clock DROP CONSTRAINT chat_clock_pkey;
UPDATE chat_clock SET tenant = split_part(chat_id, chr(31), 1),
                   chat_id = substr(chat_id, strpos(chat_id, chr(31)) + 1)
    WHERE strpos(chat_id, chr(31)) > 0;
ALTER TABLE chat_clock ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE chat_clock ADD PRIMARY KEY (tenant, chat_id);

ALTER TABLE chats ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE chats DROP CONSTRAINT chats_pkey;
UPDATE chats SET tenant = split_part(chat_id, chr(31), 1),
                   chat_id = substr(chat_id, strpos(chat_id, chr(31)) + 1)
    WHERE strpos(chat_id, chr(31)) > 0;
ALTER TABLE chats ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE chats ADD PRIMARY KEY (tenant, chat_id);

ALTER TABLE messages ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE messages DROP CONSTRAINT messages_pkey;
UPDATE messages SET tenant = split_part(chat_id, chr(31), 1),
                   chat_id = substr(chat_id, strpos(chat_id, chr(31)) + 1)
    WHERE strpos(chat_id, chr(31)) > 0;
ALTER TABLE messages ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE messages ADD PRIMARY KEY (tenant, chat_id, message_id);

ALTER TABLE recaps ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE recaps DROP CONSTRAINT recaps_pkey;
UPDATE recaps SET tenant = split_part(chat_id, chr(31), 1),
                   chat_id = substr(chat_id, strpos(chat_id, chr(31)) + 1)
    WHERE strpos(chat_id, chr(31)) > 0;
ALTER TABLE recaps ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE recaps ADD PRIMARY KEY (tenant, chat_id, version);

ALTER TABLE chat_settings ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE chat_settings DROP CONSTRAINT chat_settings_pkey;
UPDATE chat_settings SET tenant = split_part(chat_id, chr(31), 1),
                   chat_id = substr(chat_id, strpos(chat_id, chr(31)) + 1)
    WHERE strpos(chat_id, chr(31)) > 0;
ALTER TABLE chat_settings ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE chat_settings ADD PRIMARY KEY (tenant, chat_id);

DROP INDEX chats_owing_refresh;
CREATE INDEX chats_owing_refresh ON chats (tenant, chat_id) WHERE needs_refresh;
DROP INDEX messages_by_seq;
CREATE INDEX messages_by_seq ON messages (tenant, chat_id, seq);
