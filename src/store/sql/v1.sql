-- rtscope run store, schema version 1 (the first one). Frozen: a copy
-- lives in tests/fixtures/store/schema-v1.sql; later changes are new
-- migrations, never edits of this file.
CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid               TEXT    NOT NULL UNIQUE,
    status             TEXT    NOT NULL
                       CHECK (status IN ('running', 'complete', 'interrupted')),
    source_kind        TEXT    NOT NULL,
    source_format      TEXT,
    label              TEXT,
    started_at_unix_ns INTEGER NOT NULL,
    duration_ns        INTEGER NOT NULL,
    kernel_release     TEXT    NOT NULL,
    preemption_model   TEXT    NOT NULL,
    threads            INTEGER NOT NULL,
    samples            INTEGER NOT NULL,
    p9999_ns           INTEGER,
    max_ns             INTEGER,
    fingerprint_hash   TEXT    NOT NULL,
    record_json        TEXT    NOT NULL,
    saved_at_unix_ns   INTEGER NOT NULL
);
CREATE INDEX runs_by_start ON runs (started_at_unix_ns);

CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE thread_data (
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    thread        INTEGER NOT NULL,
    histogram     BLOB    NOT NULL,
    outliers_json TEXT    NOT NULL,
    PRIMARY KEY (run_id, thread)
) WITHOUT ROWID;

CREATE TABLE windows (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    thread INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    min_ns INTEGER NOT NULL,
    avg_ns INTEGER NOT NULL,
    max_ns INTEGER NOT NULL,
    p99_ns INTEGER NOT NULL,
    missed INTEGER NOT NULL,
    PRIMARY KEY (run_id, thread, seq)
) WITHOUT ROWID;
