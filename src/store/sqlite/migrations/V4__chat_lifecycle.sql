-- Chat lifecycle: when each chat last changed and its message count
-- (ListChats, retention), and what a deleted chat leaves (its last
-- revisions, no content). Every existing chat gets its activity now: its
-- message count, and this migration's time as its last change (the time
-- of its last change was not kept; the runner puts the time, in
-- microseconds, in temp.migration_clock). IF NOT EXISTS and OR IGNORE: an older
-- recapd's upgrade from version 1 created these tables early, empty.
CREATE TABLE IF NOT EXISTS chat_activity (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    updated_us INTEGER NOT NULL,
    message_count INTEGER NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
-- Oldest change first, in the order `quiet_chats` reads.
CREATE INDEX IF NOT EXISTS chat_activity_by_time ON chat_activity (updated_us, tenant, chat_id);
CREATE TABLE IF NOT EXISTS chat_tombstones (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    revision INTEGER NOT NULL,
    message_revision INTEGER NOT NULL,
    deleted_us INTEGER NOT NULL,
    PRIMARY KEY (tenant, chat_id)
);
INSERT OR IGNORE INTO chat_activity (tenant, chat_id, updated_us, message_count)
    SELECT c.tenant, c.chat_id, (SELECT now_us FROM temp.migration_clock),
           (SELECT count(*) FROM messages m WHERE m.tenant = c.tenant AND m.chat_id = c.chat_id)
    FROM chats c;
