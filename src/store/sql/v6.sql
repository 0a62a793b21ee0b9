-- rtscope run store, schema version 6: studies that reboot
-- (`rtscope study FILE --reboot`). A round is one `--reboot` started by a
-- person: its plan (the boot it started from, the mechanism, the reboot
-- limit, the resume unit) as JSON, and where it stands (active, paused,
-- stopped, done). Every boot the round asks for is a row of study_boots,
-- written before the boot is arranged and the machine rebooted, then
-- marked arrived, missed (the machine came up otherwise), failed (the
-- configuration cannot be booted: the study goes on without it) or
-- cancelled. Plain portable SQL.
CREATE TABLE study_rounds (
    study_id           INTEGER NOT NULL,
    round              INTEGER NOT NULL,
    plan               TEXT    NOT NULL,
    state              TEXT    NOT NULL,
    detail             TEXT,
    started_at_unix_ns INTEGER NOT NULL,
    updated_at_unix_ns INTEGER NOT NULL,
    PRIMARY KEY (study_id, round)
);
CREATE TABLE study_boots (
    id               INTEGER PRIMARY KEY,
    study_id         INTEGER NOT NULL,
    round            INTEGER NOT NULL,
    config           TEXT    NOT NULL,
    target           TEXT    NOT NULL,
    state            TEXT    NOT NULL,
    detail           TEXT,
    boot_id          TEXT    NOT NULL,
    asked_at_unix_ns INTEGER NOT NULL,
    ended_at_unix_ns INTEGER
);
CREATE INDEX study_boots_by_study ON study_boots (study_id, round, id);
