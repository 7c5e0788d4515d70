-- Chat lifecycle (issue 16). chat_activity says when each chat last
-- changed and how many messages it has (ListChats, --chat-retention);
-- chat_tombstones keeps the last revisions of a deleted chat, so that one
-- re-created under its id continues above them. ListChats pages by chat id
-- byte by byte (collation "C", as the embedded store's BINARY), which the
-- new index of chats serves whatever the database's locale; retention
-- reads the quiet chats oldest first from chat_activity_by_change, in its
-- order, without a sort. Every existing chat gets its activity now: its
-- message count, and the migration's time as its last change.
CREATE TABLE chat_activity (
    tenant text NOT NULL,
    chat_id text NOT NULL,
    updated_us bigint NOT NULL,
    message_count bigint NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE INDEX chat_activity_by_change ON chat_activity (updated_us, tenant, chat_id);
CREATE TABLE chat_tombstones (
    tenant text NOT NULL,
    chat_id text NOT NULL,
    revision bigint NOT NULL,
    message_revision bigint NOT NULL,
    deleted_us bigint NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
CREATE INDEX chats_by_id_bytes ON chats (tenant, chat_id COLLATE "C");
INSERT INTO chat_activity (tenant, chat_id, updated_us, message_count)
    SELECT c.tenant, c.chat_id, (extract(epoch FROM now()) * 1000000)::bigint, count(m.message_id)
    FROM chats c LEFT JOIN messages m USING (tenant, chat_id)
    GROUP BY c.tenant, c.chat_id;
