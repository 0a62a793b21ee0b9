-- rtscope run store, schema version 4, PostgreSQL dialect of sql/v4.sql:
-- characterizations (`rtscope characterize`), a head per characterization
-- (a row of runs) and one row per line of its tables.
CREATE TABLE characterizations (
    run_id        BIGINT NOT NULL PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    schema_name   TEXT   NOT NULL,
    per_bench_ns  BIGINT NOT NULL,
    interval_ns   BIGINT NOT NULL,
    priority      BIGINT NOT NULL,
    cpus          TEXT   NOT NULL,
    clock_read_ns BIGINT NOT NULL,
    complete      BIGINT NOT NULL,
    head_json     TEXT   NOT NULL
);
CREATE TABLE characterization_rows (
    run_id    BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq       BIGINT NOT NULL,
    bench     TEXT   NOT NULL,
    variant   TEXT   NOT NULL,
    cpu       BIGINT NOT NULL,
    count     BIGINT NOT NULL,
    min_ns    BIGINT NOT NULL,
    avg_ns    BIGINT NOT NULL,
    p50_ns    BIGINT NOT NULL,
    p99_ns    BIGINT NOT NULL,
    p9999_ns  BIGINT NOT NULL,
    max_ns    BIGINT NOT NULL,
    row_json  TEXT   NOT NULL,
    PRIMARY KEY (run_id, seq)
);
