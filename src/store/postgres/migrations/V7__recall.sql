-- Recall (issue 31): the vectors of each chat's passages, one row per
-- chunk (message, source: 0 the message's text, 1 its scene recap, part:
-- which piece of that text), for the text with `fingerprint`, as the
-- embeddings model `model` gave it: little-endian 32-bit floats. The
-- passages themselves and their words are not stored: recapd cuts them
-- from the messages when it loads a chat. No extension is needed: a
-- chat's vectors are searched exactly, in memory.
CREATE TABLE recall_vectors (
    tenant text NOT NULL,
    chat_id text NOT NULL,
    message_id text NOT NULL,
    source smallint NOT NULL,
    part integer NOT NULL,
    fingerprint bigint NOT NULL,
    model text NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (tenant, chat_id, message_id, source, part)
);

-- The recall tier's revision at a chat's deletion (see message_revision).
ALTER TABLE chat_tombstones ADD COLUMN recall_revision bigint NOT NULL DEFAULT 0;
