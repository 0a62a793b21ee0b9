-- rtscope run store, schema version 2: who is writing a running run
-- (host, boot, process and its start time), so that a run whose process
-- is gone (SIGKILL, crash, power cut) is shown as interrupted. Runs
-- written by version 1 have no owner: a 'running' one is interrupted.
ALTER TABLE runs ADD COLUMN owner_host TEXT;
ALTER TABLE runs ADD COLUMN owner_boot_id TEXT;
ALTER TABLE runs ADD COLUMN owner_pid INTEGER;
ALTER TABLE runs ADD COLUMN owner_start_ticks INTEGER;
CREATE INDEX runs_running ON runs (status) WHERE status = 'running';
