-- rtscope run store, schema version 4: characterizations (`rtscope
-- characterize`). A characterization is a row of `runs` whose
-- source_kind is 'characterization' (so it shares the run ids and uuids,
-- `rtscope runs` lists it and `runs rm` removes it); its head is here,
-- and each row of its tables is one row of characterization_rows, the
-- summary in columns and the whole row (histogram, OS-noise and
-- inversion details) as JSON text. Plain portable SQL.
CREATE TABLE characterizations (
    run_id        INTEGER NOT NULL PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    schema_name   TEXT    NOT NULL,
    per_bench_ns  INTEGER NOT NULL,
    interval_ns   INTEGER NOT NULL,
    priority      INTEGER NOT NULL,
    cpus          TEXT    NOT NULL,
    clock_read_ns INTEGER NOT NULL,
    complete      INTEGER NOT NULL,
    head_json     TEXT    NOT NULL
);
CREATE TABLE characterization_rows (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    bench     TEXT    NOT NULL,
    variant   TEXT    NOT NULL,
    cpu       INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    min_ns    INTEGER NOT NULL,
    avg_ns    INTEGER NOT NULL,
    p50_ns    INTEGER NOT NULL,
    p99_ns    INTEGER NOT NULL,
    p9999_ns  INTEGER NOT NULL,
    max_ns    INTEGER NOT NULL,
    row_json  TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
