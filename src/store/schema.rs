//! The store's schema: a list of migrations, applied in order, each in
//! one transaction, tracked by `PRAGMA user_version` (SQLite) or the
//! `rtscope_meta` table (PostgreSQL). Every migration exists in both
//! dialects, with the same version number (`sql/vN.sql`,
//! `sql/pg/vN.sql`). A migration, once released, is never edited: later
//! changes are new migrations (the first schema is frozen in
//! tests/fixtures/store/schema-v1.sql and a test checks it). Never drops
//! user data.

use super::{Result, Store, StoreError};

/// `PRAGMA application_id` of an rtscope store ("rtsc").
pub const APPLICATION_ID: i64 = 0x7274_7363;

/// One step from version `version - 1` to `version`.
pub struct Migration {
    pub version: i64,
    pub summary: &'static str,
    /// SQLite dialect.
    pub sql: &'static str,
    /// PostgreSQL dialect of the same step.
    pub pg_sql: &'static str,
}

/// Every schema version, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        summary: "runs, tags, per-thread histograms and outliers, window series",
        sql: include_str!("sql/v1.sql"),
        pg_sql: include_str!("sql/pg/v1.sql"),
    },
    Migration {
        version: 2,
        summary: "the writer of a running run, to tell interrupted runs",
        sql: include_str!("sql/v2.sql"),
        pg_sql: include_str!("sql/pg/v2.sql"),
    },
    Migration {
        version: 3,
        summary: "studies, their runs in order, and the attempts at each",
        sql: include_str!("sql/v3.sql"),
        pg_sql: include_str!("sql/pg/v3.sql"),
    },
    Migration {
        version: 4,
        summary: "characterizations (rtscope characterize) and their table rows",
        sql: include_str!("sql/v4.sql"),
        pg_sql: include_str!("sql/pg/v4.sql"),
    },
    Migration {
        version: 5,
        summary: "monitor runs and their windows (summaries, recent histograms)",
        sql: include_str!("sql/v5.sql"),
        pg_sql: include_str!("sql/pg/v5.sql"),
    },
    Migration {
        version: 6,
        summary: "studies that reboot: their rounds and every boot asked for",
        sql: include_str!("sql/v6.sql"),
        pg_sql: include_str!("sql/pg/v6.sql"),
    },
];

/// The schema version this rtscope writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// Indexes that serve reads only: they change no data and an rtscope that
/// does not know them keeps working (SQLite maintains them on its
/// writes), so they are not a schema version (which would make an older
/// rtscope refuse the store) but made, if missing, by every writable
/// open of an SQLite store.
///
/// `runs_listed` holds every column of a run's row but its record: a
/// run's list (`rtscope serve`) reads it alone. In the table the record
/// (tens of kB, in overflow pages) comes before the owner and save time
/// columns, so reading those walked each run's overflow chain: 240 MB
/// of pages for 10 000 runs, 70 ms a list; 20 ms with the index, 1.6 MB.
/// (PostgreSQL keeps a large record out of line, TOAST: its rows are
/// narrow without it.)
pub const SQLITE_READ_INDEXES: &str = "CREATE INDEX IF NOT EXISTS runs_listed ON runs (id, uuid, \
     status, source_kind, source_format, label, started_at_unix_ns, duration_ns, kernel_release, \
     preemption_model, threads, samples, p9999_ns, max_ns, fingerprint_hash, saved_at_unix_ns, \
     owner_host, owner_boot_id, owner_pid, owner_start_ticks);";

/// Bring a store at `from` up to [`CURRENT_VERSION`]. The version is
/// read again inside the write transaction, so two processes opening an
/// old store at once migrate it once.
pub fn migrate(store: &Store, from: i64) -> Result<()> {
    if from == CURRENT_VERSION {
        return Ok(());
    }
    let mut tx = store.tx("starting the schema upgrade")?;
    let now: i64 = tx
        .query_one("PRAGMA user_version", &[])
        .and_then(|r| r.get(0))
        .map_err(|e| store.err("reading the schema version", e))?;
    if now > CURRENT_VERSION {
        return Err(StoreError::Newer {
            path: store.path().to_path_buf(),
            found: now,
            known: CURRENT_VERSION,
        });
    }
    if now == 0 {
        tx.batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))
            .map_err(|e| store.err("creating the store", e))?;
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > now) {
        tx.batch(m.sql).map_err(|e| {
            store.err(
                &format!(
                    "upgrading the schema to version {} ({})",
                    m.version, m.summary
                ),
                e,
            )
        })?;
        tx.batch(&format!("PRAGMA user_version = {};", m.version))
            .map_err(|e| store.err("recording the schema version", e))?;
    }
    tx.commit()
        .map_err(|e| store.err("committing the schema upgrade", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_schema_is_frozen() {
        assert_eq!(
            MIGRATIONS[0].sql,
            include_str!("../../tests/fixtures/store/schema-v1.sql"),
            "migration 1 was edited: add a new migration instead"
        );
    }

    #[test]
    fn every_migration_has_a_postgresql_dialect() {
        for m in MIGRATIONS {
            assert!(
                !m.pg_sql.trim().is_empty(),
                "v{} has no PostgreSQL SQL",
                m.version
            );
            for word in ["PRAGMA", "WITHOUT ROWID", "AUTOINCREMENT", " BLOB"] {
                assert!(
                    !m.pg_sql.contains(word),
                    "v{}'s PostgreSQL SQL has SQLite's {word}",
                    m.version
                );
            }
        }
    }

    #[test]
    fn versions_are_consecutive() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1);
        }
    }
}
