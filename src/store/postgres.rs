//! A run store in a shared PostgreSQL database: the URL (`postgresql://`
//! or `postgres://`, checked before anything connects, shown without its
//! password), the connection (no TLS), the store's identity
//! (`rtscope_meta`: application id and schema version, the PostgreSQL
//! counterpart of SQLite's pragmas) and its migrations, serialized
//! between hosts by an advisory lock. Same refusal rules as an SQLite
//! file: a database with other tables and no `rtscope_meta` is not ours,
//! a newer schema is refused, nothing is written then.

use super::db::{Db, DbError, PgConn};
use super::pglink::ConnectError;
use super::schema::{APPLICATION_ID, CURRENT_VERSION, MIGRATIONS};
use super::{Result, Store, StoreError};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long connecting (TCP connect, start-up and authentication
/// together) may take before the server counts as unreachable, unless the
/// URL says otherwise (`?connect_timeout=N`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// TCP keepalive and user timeout of the connection: a server gone
/// without a word (cable pulled, host down) is noticed by the kernel.
const TCP_DEAD_AFTER: Duration = Duration::from_secs(30);

/// True when `s` names a PostgreSQL database rather than a file.
pub fn is_url(s: &str) -> bool {
    s.starts_with("postgresql://") || s.starts_with("postgres://")
}

/// The connection settings of `url`, or why it cannot be used.
pub fn parse(url: &str) -> Result<postgres::Config> {
    let bad = |detail: String| StoreError::BadUrl {
        url: crate::redact::url(url),
        detail,
    };
    if !is_url(url) {
        return Err(bad("it does not start with postgresql://".into()));
    }
    let mut config: postgres::Config = url.parse().map_err(|e| bad(format!("{e}")))?;
    if config.get_hosts().is_empty() {
        return Err(bad("it names no host".into()));
    }
    if config.get_dbname().is_none() {
        return Err(bad("it names no database (…/DBNAME at the end)".into()));
    }
    if config.get_user().is_none() {
        return Err(bad("it names no user (USER@ before the host)".into()));
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if !url.contains("keepalives") && !url.contains("tcp_user_timeout") {
        config
            .keepalives(true)
            .keepalives_idle(TCP_DEAD_AFTER)
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3)
            .tcp_user_timeout(TCP_DEAD_AFTER);
    }
    config.application_name("rtscope");
    Ok(config)
}

/// Connect with `config` (`shown`: the URL for messages), the whole
/// handshake bounded by its `connect_timeout`, and ended early when
/// `stop` is set ([`StoreError::ConnectInterrupted`]).
pub fn connect_config(config: &postgres::Config, shown: &str, stop: &AtomicBool) -> Result<PgConn> {
    let handshake = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    PgConn::connect(config, handshake, stop).map_err(|e| match e {
        ConnectError::Interrupted => StoreError::ConnectInterrupted {
            url: shown.to_string(),
        },
        e => StoreError::Unreachable {
            url: shown.to_string(),
            detail: e.to_string(),
        },
    })
}

/// `(application_id, schema version, tables in the current schema)` of
/// the database behind `store`, read without writing.
fn identify(store: &Store) -> Result<(i64, i64, i64)> {
    let mut db = store.db();
    let err = |e: DbError| store.err("reading what the database holds", e);
    let tables: i64 = db
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
            &[],
        )
        .and_then(|r| r.get(0))
        .map_err(err)?;
    let has_meta: bool = db
        .query_one("SELECT to_regclass('rtscope_meta') IS NOT NULL", &[])
        .and_then(|r| r.get(0))
        .map_err(err)?;
    if !has_meta {
        return Ok((0, 0, tables));
    }
    Ok((
        meta(&mut db, "application_id").map_err(err)?,
        meta(&mut db, "schema_version").map_err(err)?,
        tables,
    ))
}

fn meta(db: &mut Db, key: &str) -> Result<i64, DbError> {
    Ok(db
        .query_opt(
            "SELECT value FROM rtscope_meta WHERE key = ?1",
            &crate::args![key],
        )?
        .map(|r| r.get(0))
        .transpose()?
        .unwrap_or(0))
}

/// Open the PostgreSQL store at `url`, making and migrating the schema
/// of an empty database. `stop` (set by a signal) ends the wait for the
/// server's first answer.
pub fn open(url: &str, stop: &AtomicBool) -> Result<Store> {
    let (store, version, _) = connect_ours(url, stop)?;
    migrate(&store, version)?;
    let _ = super::runs::mark_interrupted(&store);
    Ok(store)
}

/// [`open`] for commands that only read: an empty database is `None`
/// (they never create a store).
pub fn open_existing(url: &str, stop: &AtomicBool) -> Result<Option<Store>> {
    let (store, version, fresh) = connect_ours(url, stop)?;
    if fresh {
        return Ok(None);
    }
    migrate(&store, version)?;
    let _ = super::runs::mark_interrupted(&store);
    Ok(Some(store))
}

/// [`open_existing`] for a reader that must never write (`rtscope
/// serve`): no migration (a store of an older schema is refused, as a
/// read-only SQLite file is), no marking, and a session whose
/// transactions are read-only.
pub fn open_read_only(url: &str, stop: &AtomicBool) -> Result<Option<Store>> {
    let (store, version, fresh) = connect_ours(url, stop)?;
    if fresh {
        return Ok(None);
    }
    if version != CURRENT_VERSION {
        return Err(StoreError::ReadOnly {
            path: store.path().to_path_buf(),
            what: format!(
                "its schema version {version} needs upgrading to {CURRENT_VERSION}: run `rtscope runs` on it once"
            ),
        });
    }
    store
        .db()
        .batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        .map_err(|e| store.err("making the session read-only", e))?;
    Ok(Some(store))
}

/// Connect to `url` and refuse a database that is not an rtscope store,
/// or one of a newer schema: the store, its schema version, and whether
/// the database is empty.
fn connect_ours(url: &str, stop: &AtomicBool) -> Result<(Store, i64, bool)> {
    let config = parse(url)?;
    let shown = crate::redact::url(url);
    let store = Store::from_pg(connect_config(&config, &shown, stop)?, shown);
    let (app, version, tables) = identify(&store)?;
    let fresh = app == 0 && version == 0 && tables == 0;
    if !fresh && app != APPLICATION_ID {
        return Err(StoreError::NotOurs {
            path: store.path().to_path_buf(),
        });
    }
    if version > CURRENT_VERSION {
        return Err(StoreError::Newer {
            path: store.path().to_path_buf(),
            found: version,
            known: CURRENT_VERSION,
        });
    }
    Ok((store, version, fresh))
}

/// Bring the database up to [`CURRENT_VERSION`], in one transaction
/// under an advisory lock, reading the version again once the lock is
/// held: many hosts opening an old (or empty) store at once migrate it
/// once.
fn migrate(store: &Store, from: i64) -> Result<()> {
    if from == CURRENT_VERSION {
        return Ok(());
    }
    let mut tx = store.tx("starting the schema upgrade")?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(?1)",
        &crate::args![APPLICATION_ID],
    )
    .map_err(|e| store.err("waiting for another host's schema upgrade", e))?;
    tx.batch(
        "CREATE TABLE IF NOT EXISTS rtscope_meta (key TEXT PRIMARY KEY, value BIGINT NOT NULL)",
    )
    .map_err(|e| store.err("creating the store", e))?;
    let now: i64 = tx
        .query_opt(
            "SELECT value FROM rtscope_meta WHERE key = 'schema_version'",
            &[],
        )
        .and_then(|r| r.map(|r| r.get(0)).transpose())
        .map_err(|e| store.err("reading the schema version", e))?
        .unwrap_or(0);
    if now > CURRENT_VERSION {
        return Err(StoreError::Newer {
            path: store.path().to_path_buf(),
            found: now,
            known: CURRENT_VERSION,
        });
    }
    let set = "INSERT INTO rtscope_meta (key, value) VALUES (?1, ?2) \
               ON CONFLICT (key) DO UPDATE SET value = excluded.value";
    if now == 0 {
        tx.execute(set, &crate::args!["application_id", APPLICATION_ID])
            .map_err(|e| store.err("creating the store", e))?;
    }
    for m in MIGRATIONS.iter().filter(|m| m.version > now) {
        tx.batch(m.pg_sql).map_err(|e| {
            store.err(
                &format!(
                    "upgrading the schema to version {} ({})",
                    m.version, m.summary
                ),
                e,
            )
        })?;
        tx.execute(set, &crate::args!["schema_version", m.version])
            .map_err(|e| store.err("recording the schema version", e))?;
    }
    tx.commit()
        .map_err(|e| store.err("committing the schema upgrade", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_and_checked_before_connecting() {
        assert!(is_url("postgresql://u@h/db"));
        assert!(is_url("postgres://u@h/db"));
        assert!(!is_url("/var/lib/rtscope.db"));
        parse("postgresql://me@127.0.0.1:5432/rt").unwrap();
        for bad in [
            "postgresql://me@127.0.0.1:notaport/rt",
            "postgresql://me@127.0.0.1:5432",
            "postgresql:///rt",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(matches!(e, StoreError::BadUrl { .. }), "{bad}: {e}");
        }
    }
}
