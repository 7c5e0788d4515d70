-- Lorebooks (issue 29): each tenant's SillyTavern World Info files, by
-- name, as the text recapd exports. `version` changes at every write (see
-- store::lorebooks); a write names the version it read. Names compare as
-- bytes (BINARY), the order ListLorebooks pages in.
CREATE TABLE lorebooks (
    tenant TEXT NOT NULL,
    name TEXT NOT NULL,
    json TEXT NOT NULL,
    entry_count INTEGER NOT NULL,
    updated_us INTEGER NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (tenant, name)
);
