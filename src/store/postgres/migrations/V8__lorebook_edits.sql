-- A lorebook's entry edits (issue 41): an entry put or deleted is a row of
-- its own here (the entry's new JSON text, NULL for a deletion) instead of
-- a rewrite of the whole book. Reading a book replays its edits in `seq`
-- order on the `lorebooks` row's text; a write of the whole book (an
-- import, or a compaction once the edits' bytes, `log_bytes`, pass the
-- book's) deletes them. Existing books have no edits: their rows are read
-- as before.
ALTER TABLE lorebooks ADD COLUMN log_bytes bigint NOT NULL DEFAULT 0;
CREATE TABLE lorebook_edits (
    tenant text NOT NULL,
    name text COLLATE "C" NOT NULL,
    seq bigint NOT NULL,
    uid text NOT NULL,
    json text,
    PRIMARY KEY (tenant, name, seq)
);
