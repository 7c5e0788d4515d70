-- The first schema: a chat of tenant T stored under one key, T, U+001F,
-- then the chat id; a tenant's global settings in kv. Tables are created in
-- the store's own schema (the runner sets search_path to it).
CREATE TABLE kv (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE chat_clock (
    chat_id text PRIMARY KEY,
    generation bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE chats (
    chat_id text PRIMARY KEY,
    needs_refresh boolean NOT NULL,
    body text NOT NULL
);
CREATE INDEX chats_owing_refresh ON chats (chat_id) WHERE needs_refresh;
CREATE TABLE messages (
    chat_id text NOT NULL,
    message_id text NOT NULL,
    seq bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX messages_by_seq ON messages (chat_id, seq);
CREATE TABLE recaps (
    chat_id text NOT NULL,
    version bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (chat_id, version)
);
CREATE TABLE chat_settings (chat_id text PRIMARY KEY, body text NOT NULL);
