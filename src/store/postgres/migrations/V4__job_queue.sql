-- The job queue. Job ids compare byte by byte (collation "C"), as in the
-- embedded store, so pages of jobs come in the same order on both; states
-- 1 and 2 are PENDING and RUNNING (JobState::code).
CREATE TABLE jobs (
    job_id text COLLATE "C" PRIMARY KEY,
    tenant text NOT NULL,
    chat_id text NOT NULL,
    state bigint NOT NULL,
    kind bigint NOT NULL,
    created_us bigint NOT NULL,
    updated_us bigint NOT NULL,
    not_before_us bigint NOT NULL,
    lease_until_us bigint,
    fence bigint NOT NULL,
    body text NOT NULL
);
CREATE INDEX jobs_by_tenant ON jobs (tenant, created_us DESC, job_id DESC);
CREATE INDEX jobs_by_chat ON jobs (tenant, chat_id, created_us DESC, job_id DESC);
CREATE INDEX jobs_open_by_chat ON jobs (tenant, chat_id, created_us, job_id)
    WHERE state IN (1, 2);
CREATE INDEX jobs_due ON jobs (state, not_before_us);
CREATE INDEX jobs_leases ON jobs (state, lease_until_us);
