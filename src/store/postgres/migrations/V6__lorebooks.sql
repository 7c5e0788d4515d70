-- Lorebooks (issue 29): each tenant's SillyTavern World Info files, by
-- name, as the text recapd exports. `version` changes at every write (see
-- store::lorebooks); a write names the version it read. Names compare
-- byte by byte (collation "C", as the embedded store's BINARY), so the
-- primary key's index serves ListLorebooks' pages in that order whatever
-- the database's locale.
CREATE TABLE lorebooks (
    tenant text NOT NULL,
    name text COLLATE "C" NOT NULL,
    json text NOT NULL,
    entry_count bigint NOT NULL,
    updated_us bigint NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (tenant, name)
);
