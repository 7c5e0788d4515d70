-- The job queue. States 1 and 2 are PENDING and RUNNING (JobState::code).
-- IF NOT EXISTS: an older recapd's upgrade from version 1 created the
-- tables of every later version at once, empty.
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    state INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    created_us INTEGER NOT NULL,
    updated_us INTEGER NOT NULL,
    not_before_us INTEGER NOT NULL,
    lease_until_us INTEGER,
    fence INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, created_us DESC, job_id DESC);
CREATE INDEX IF NOT EXISTS jobs_by_chat ON jobs (tenant, chat_id, created_us DESC, job_id DESC);
CREATE INDEX IF NOT EXISTS jobs_open_by_chat ON jobs (tenant, chat_id, created_us, job_id)
    WHERE state IN (1, 2);
CREATE INDEX IF NOT EXISTS jobs_due ON jobs (state, not_before_us);
CREATE INDEX IF NOT EXISTS jobs_leases ON jobs (state, lease_until_us);
