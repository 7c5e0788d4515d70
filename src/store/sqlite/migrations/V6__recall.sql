-- Recall (issue 31): the vectors of each chat's passages, one row per
-- chunk (message, source: 0 the message's text, 1 its scene recap, part:
-- which piece of that text), for the text with `fingerprint`, as the
-- embeddings model `model` gave it: little-endian 32-bit floats. The
-- passages themselves and their words are not stored: recapd cuts them
-- from the messages when it loads a chat.
CREATE TABLE recall_vectors (
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    source INTEGER NOT NULL,
    part INTEGER NOT NULL,
    fingerprint INTEGER NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (tenant, chat_id, message_id, source, part)
) WITHOUT ROWID;

-- The recall tier's revision at a chat's deletion (see message_revision).
ALTER TABLE chat_tombstones ADD COLUMN recall_revision INTEGER NOT NULL DEFAULT 0;
