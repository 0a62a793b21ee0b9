//! The store's schema: a list of migrations, applied in order, each in
//! one transaction, tracked by `PRAGMA user_version`. A migration, once
//! released, is never edited: later changes are new migrations (the first
//! schema is frozen in tests/fixtures/store/schema-v1.sql and a test
//! checks it). Never drops user data.

use super::{Result, Store, StoreError};
use rusqlite::TransactionBehavior;

/// `PRAGMA application_id` of an rtscope store ("rtsc").
pub const APPLICATION_ID: i64 = 0x7274_7363;

/// One step from version `version - 1` to `version`.
pub struct Migration {
    pub version: i64,
    pub summary: &'static str,
    pub sql: &'static str,
}

/// Every schema version, oldest first.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        summary: "runs, tags, per-thread histograms and outliers, window series",
        sql: include_str!("sql/v1.sql"),
    },
    Migration {
        version: 2,
        summary: "the writer of a running run, to tell interrupted runs",
        sql: include_str!("sql/v2.sql"),
    },
    Migration {
        version: 3,
        summary: "studies, their runs in order, and the attempts at each",
        sql: include_str!("sql/v3.sql"),
    },
    Migration {
        version: 4,
        summary: "characterizations (rtscope characterize) and their table rows",
        sql: include_str!("sql/v4.sql"),
    },
    Migration {
        version: 5,
        summary: "monitor runs and their windows (summaries, recent histograms)",
        sql: include_str!("sql/v5.sql"),
    },
];

/// The schema version this rtscope writes.
pub const CURRENT_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// Bring a store at `from` up to [`CURRENT_VERSION`]. The version is
/// read again inside the write transaction, so two processes opening an
/// old store at once migrate it once.
pub fn migrate(store: &Store, from: i64) -> Result<()> {
    if from == CURRENT_VERSION {
        return Ok(());
    }
    let c = store.conn();
    let tx = rusqlite::Transaction::new_unchecked(c, TransactionBehavior::Immediate)
        .map_err(|e| store.err("starting the schema upgrade", e))?;
    let now: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| store.err("reading the schema version", e))?;
    if now > CURRENT_VERSION {
        return Err(StoreError::Newer {
            path: store.path().to_path_buf(),
            found: now,
            known: CURRENT_VERSION,
        });
    }
    if now == 0 {
        tx.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID};"))
            .map_err(|e| store.err("creating the store", e))?;
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > now) {
        tx.execute_batch(m.sql).map_err(|e| {
            store.err(
                &format!(
                    "upgrading the schema to version {} ({})",
                    m.version, m.summary
                ),
                e,
            )
        })?;
        tx.execute_batch(&format!("PRAGMA user_version = {};", m.version))
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
    fn versions_are_consecutive() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i as i64 + 1);
        }
    }
}
