-- rtscope run store: monitor windows (`rtscope monitor`). A monitor is a
-- named measurement that runs without end and is restarted (by systemd,
-- or by hand) as new runs: monitor_runs links each run to the monitor and
-- to the run of the same monitor before it. Every finished window of
-- every thread is one row of monitor_windows (its summary, kept long)
-- and, while recent, one row of monitor_window_histograms (its histogram,
-- a blob as runs' histograms); retention deletes old histograms, then old
-- summaries. Plain portable SQL.
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
    PRIMARY KEY (monitor, host, thread, start_unix_ns)
);
CREATE INDEX monitor_windows_by_end ON monitor_windows (monitor, host, end_unix_ns);
-- The histograms of recent windows, apart from the summaries: retention
-- deletes whole rows here (oldest first), so their space is reused,
-- where clearing a column in place would leave every old summary's
-- page as large as when it held its histogram.
CREATE TABLE monitor_window_histograms (
    monitor          TEXT    NOT NULL,
    host             TEXT    NOT NULL,
    thread           INTEGER NOT NULL,
    start_unix_ns    INTEGER NOT NULL,
    end_unix_ns      INTEGER NOT NULL,
    sub_bucket_bits  INTEGER NOT NULL,
    histogram        BLOB    NOT NULL,
    PRIMARY KEY (monitor, host, thread, start_unix_ns)
);
CREATE INDEX monitor_window_histograms_by_end ON monitor_window_histograms (monitor, host, end_unix_ns);
