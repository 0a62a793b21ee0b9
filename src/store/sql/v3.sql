-- rtscope run store, schema version 3: studies. A study is a matrix of
-- measure configurations (cells), each run `repetitions` times; a slot is
-- one such run at its place in the study's order; an attempt is one try
-- at a slot (a try cut short by a kill or a power cut stays, marked
-- interrupted, beside the try that finished it). Runs are linked by uuid,
-- so removing a run leaves the study readable.
CREATE TABLE studies (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT    NOT NULL UNIQUE,
    name               TEXT    NOT NULL UNIQUE,
    file_text          TEXT    NOT NULL,
    file_path          TEXT,
    seed               INTEGER NOT NULL,
    created_at_unix_ns INTEGER NOT NULL,
    owner_host         TEXT,
    owner_boot_id      TEXT,
    owner_pid          INTEGER,
    owner_start_ticks  INTEGER
);
CREATE TABLE study_slots (
    study_id   INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    cell       INTEGER NOT NULL,
    repetition INTEGER NOT NULL,
    label      TEXT    NOT NULL,
    kernel     TEXT,
    PRIMARY KEY (study_id, position)
);
CREATE TABLE study_attempts (
    id                 INTEGER PRIMARY KEY,
    study_id           INTEGER NOT NULL,
    position           INTEGER NOT NULL,
    run_uuid           TEXT,
    state              TEXT    NOT NULL
        CHECK (state IN ('running', 'done', 'interrupted', 'failed')),
    detail             TEXT,
    kernel_release     TEXT    NOT NULL,
    preemption_model   TEXT    NOT NULL,
    started_at_unix_ns INTEGER NOT NULL,
    ended_at_unix_ns   INTEGER,
    FOREIGN KEY (study_id, position)
        REFERENCES study_slots (study_id, position) ON DELETE CASCADE
);
CREATE INDEX study_attempts_slot ON study_attempts (study_id, position);
