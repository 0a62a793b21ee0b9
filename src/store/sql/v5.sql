-- rtscope run store: monitor windows (`rtscope monitor`). A monitor is a
-- named measurement that runs without end and is restarted (by systemd,
-- or by hand) as new runs: monitor_runs links each run to the monitor and
-- to the run of the same monitor before it. Every finished window of
-- every thread is one row of monitor_windows: its summary always, its
-- histogram (blob, as runs' histograms) only while recent; retention
-- clears old histograms, then deletes old rows. Plain portable SQL.
CREATE TABLE monitor_runs (
    run_uuid           TEXT    NOT NULL PRIMARY KEY,
    monitor            TEXT    NOT NULL,
    host               TEXT    NOT NULL,
    previous_run_uuid  TEXT,
    started_at_unix_ns INTEGER NOT NULL
);
CREATE INDEX monitor_runs_by_monitor ON monitor_runs (monitor, host, started_at_unix_ns);
CREATE TABLE monitor_windows (
    monitor          TEXT    NOT NULL,
    host             TEXT    NOT NULL,
    run_uuid         TEXT    NOT NULL,
    thread           INTEGER NOT NULL,
    cpu              INTEGER,
    start_unix_ns    INTEGER NOT NULL,
    end_unix_ns      INTEGER NOT NULL,
    samples          INTEGER NOT NULL,
    wakeups          INTEGER NOT NULL,
    missed           INTEGER NOT NULL,
    min_ns           INTEGER,
    avg_ns           INTEGER,
    p99_ns           INTEGER,
    max_ns           INTEGER,
    sub_bucket_bits  INTEGER,
    histogram        BLOB,
    PRIMARY KEY (monitor, host, thread, start_unix_ns)
);
CREATE INDEX monitor_windows_by_end ON monitor_windows (monitor, host, end_unix_ns);
