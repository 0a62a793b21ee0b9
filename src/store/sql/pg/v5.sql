-- rtscope run store, schema version 5, PostgreSQL dialect of sql/v5.sql:
-- monitor runs (linked across restarts) and their windows (summaries
-- always, histograms while recent, in a table of their own).
CREATE TABLE monitor_runs (
    run_uuid           TEXT   NOT NULL PRIMARY KEY,
    monitor            TEXT   NOT NULL,
    host               TEXT   NOT NULL,
    previous_run_uuid  TEXT,
    started_at_unix_ns BIGINT NOT NULL
);
CREATE INDEX monitor_runs_by_monitor ON monitor_runs (monitor, host, started_at_unix_ns);
CREATE TABLE monitor_windows (
    monitor          TEXT   NOT NULL,
    host             TEXT   NOT NULL,
    run_uuid         TEXT   NOT NULL,
    thread           BIGINT NOT NULL,
    cpu              BIGINT,
    start_unix_ns    BIGINT NOT NULL,
    end_unix_ns      BIGINT NOT NULL,
    samples          BIGINT NOT NULL,
    wakeups          BIGINT NOT NULL,
    missed           BIGINT NOT NULL,
    min_ns           BIGINT,
    avg_ns           BIGINT,
    p99_ns           BIGINT,
    max_ns           BIGINT,
    PRIMARY KEY (monitor, host, thread, start_unix_ns)
);
CREATE INDEX monitor_windows_by_end ON monitor_windows (monitor, host, end_unix_ns);
-- The histograms of recent windows, apart from the summaries: retention
-- deletes whole rows here (oldest first), so their space is reused,
-- where clearing a column in place would leave every old summary's
-- page as large as when it held its histogram.
CREATE TABLE monitor_window_histograms (
    monitor          TEXT   NOT NULL,
    host             TEXT   NOT NULL,
    thread           BIGINT NOT NULL,
    start_unix_ns    BIGINT NOT NULL,
    end_unix_ns      BIGINT NOT NULL,
    sub_bucket_bits  BIGINT NOT NULL,
    histogram        BYTEA  NOT NULL,
    PRIMARY KEY (monitor, host, thread, start_unix_ns)
);
CREATE INDEX monitor_window_histograms_by_end ON monitor_window_histograms (monitor, host, end_unix_ns);
