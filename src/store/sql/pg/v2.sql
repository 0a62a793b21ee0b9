-- rtscope run store, schema version 2, PostgreSQL dialect of sql/v2.sql:
-- who is writing a running run (host, boot, process and its start time).
ALTER TABLE runs ADD COLUMN owner_host TEXT;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_pid BIGINT;
ALTER TABLE runs ADD COLUMN owner_start_ticks BIGINT;
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
