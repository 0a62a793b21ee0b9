//! The run store: every run, measured or imported, kept in one SQLite
//! file (WAL mode, versioned schema with migrations), or in a shared
//! PostgreSQL database when `--db` is a `postgresql://` URL. This module
//! owns where the store is (`--db`, `RTSCOPE_DB`, the XDG default),
//! opening it safely (never writing to a file or database that is not
//! ours, is damaged, or comes from a newer rtscope), and the typed errors
//! every caller turns into a one-line message.
//!
//! Layout: `db` (the backend layer both engines share: values, rows,
//! transactions, placeholders), `pglink` (a PostgreSQL connection whose
//! every wait is bounded), `postgres` (URL, connection, identity of a
//! PostgreSQL store), `schema` (DDL and migrations, both dialects),
//! `codec` (how a record is split into rows and put back together),
//! `runs` (queries), `owner` (which process is writing a running run),
//! `checkpoint` (the observer that saves a run while it is measured),
//! `spool` (where checkpoints go while PostgreSQL is unreachable), `push`
//! (copying runs between stores). Never measures; never runs on a
//! measuring thread.

pub mod boots;
pub mod characterizations;
pub mod checkpoint;
pub mod codec;
pub mod db;
pub mod pglink;
pub mod postgres;
pub mod push;
pub mod runs;
pub mod schema;
pub mod spool;
pub mod studies;
pub mod windows;

use db::{Db, DbError, Tx};
use rusqlite::{Connection, OpenFlags};
use std::cell::{RefCell, RefMut};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use thiserror::Error;

pub use runs::{HostCache, Origin, RowHead, RunFilter, RunRow, RunState};

/// File name of the store inside its data directory.
pub const FILE_NAME: &str = "rtscope.db";
/// How long a command waits for another process's write to finish.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// What went wrong with the store, with what to do about it.
#[derive(Debug, Error)]
pub enum StoreError {
    /// No `--db`, no `RTSCOPE_DB`, and no directory for the default store.
    #[error(
        "no run store location: neither XDG_DATA_HOME nor HOME is set (root then uses /var/lib/rtscope/rtscope.db); choose a file with --db PATH or RTSCOPE_DB"
    )]
    NoLocation,
    /// The directory an SQLite store goes in cannot be made.
    #[error(
        "cannot create the directory of the run store {path}: {err}; choose another file with --db PATH"
    )]
    CreateDir { path: PathBuf, err: std::io::Error },
    /// An SQLite store's file cannot be opened or set up (a directory,
    /// no permission, WAL mode refused); `detail` says which.
    #[error(
        "cannot open the run store {path}: {detail}; check the path and its permissions, or choose another file with --db PATH"
    )]
    Open { path: PathBuf, detail: String },
    /// The store, or the way to it, may not be read by this process (a
    /// directory on its path that is not searchable, a file not
    /// readable), or a part of its path is not a directory: never taken
    /// for "no store yet". `reason` says which.
    #[error(
        "cannot read the run store {path}: {reason}; check its permissions and those of the directories above it (or run as the user who owns it), or choose another file with --db PATH"
    )]
    Unreadable { path: PathBuf, reason: String },
    /// The file is not an SQLite database (SQLite's NOTADB).
    #[error(
        "{path} is not an rtscope run store (it is not an SQLite database, or it is damaged); move it aside or choose another file with --db PATH"
    )]
    NotADatabase { path: PathBuf },
    /// An empty file (or an SQLite database with nothing in it) where a
    /// store should be: rtscope makes its stores whole, in one rename,
    /// so this is none of its own; readers and writers refuse it alike.
    #[error(
        "{path} is empty, not an rtscope run store (rtscope never leaves an empty store: it makes one whole); remove it, and the next command that saves a run creates the store there, or choose another file with --db PATH"
    )]
    Empty { path: PathBuf },
    /// A database of another program (its application id is not ours).
    #[error(
        "{path} is an SQLite database of another program, not an rtscope run store; choose another file with --db PATH"
    )]
    NotOurs { path: PathBuf },
    /// SQLite found the store damaged (its CORRUPT); `detail` is its
    /// message.
    #[error(
        "the run store {path} is damaged ({detail}); copy it aside (sqlite3 {path} .recover may save its runs) and use a new file"
    )]
    Corrupt { path: PathBuf, detail: String },
    /// The store was written by a newer rtscope (schema version `found`).
    #[error(
        "the run store {path} has schema version {found}, newer than this rtscope understands ({known}); upgrade rtscope, or choose another file with --db PATH"
    )]
    Newer {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    /// Another process held the store for longer than [`BUSY_TIMEOUT`].
    #[error(
        "the run store {path} is locked by another process (waited {waited_s} s); try again when it has finished"
    )]
    Locked { path: PathBuf, waited_s: u64 },
    /// The disk of the store is full (`what`: what was being done).
    #[error(
        "no space left on the disk of the run store {path} while {what}; nothing was changed: free some space and try again"
    )]
    Full { path: PathBuf, what: String },
    /// The store may not be written by this process.
    #[error("the run store {path} is read-only ({what}); use a writable file with --db PATH")]
    ReadOnly { path: PathBuf, what: String },
    /// Any other failure of the database while doing `what`, with the
    /// database's own message.
    #[error("{what} in the run store {path} failed: {detail}")]
    Sql {
        path: PathBuf,
        what: String,
        detail: String,
    },
    /// A run reference (id, `last`, uuid prefix) that names no run.
    #[error("no run '{reference}' in {path}: `rtscope runs` lists the stored runs")]
    NoRun { reference: String, path: PathBuf },
    /// A run asked for by reference, and the store does not exist.
    #[error("no run '{reference}': the run store {path} does not exist yet (nothing was saved)")]
    NoStore { reference: String, path: PathBuf },
    /// A uuid prefix that matches more than one stored run.
    #[error(
        "run reference '{reference}' matches several runs: give more digits of the uuid, or the id"
    )]
    Ambiguous { reference: String },
    /// A stored run whose parts cannot be read back (`detail` says which).
    #[error("run {id} in {path} cannot be read: {detail}")]
    BadRun {
        id: i64,
        path: PathBuf,
        detail: String,
    },
    /// A relabel asked of a run that is being measured (its next
    /// checkpoint would write the old label back).
    #[error("run {id} is being measured now: relabel it once it has ended")]
    RelabelRunning { id: i64 },
    /// A checkpoint interval below [`checkpoint::MIN_INTERVAL_NS`].
    #[error(
        "--checkpoint {} is below the 1s minimum",
        crate::units::fmt_duration(*interval_ns)
    )]
    CheckpointTooShort { interval_ns: u64 },
    /// A part of a record or characterization (`what`) that cannot be laid
    /// out in the store's format (its JSON, a histogram blob); `detail` is
    /// the encoder's message. Nothing of it was written.
    #[error("cannot store {what}: {detail}")]
    Encode { what: String, detail: String },
    /// The PostgreSQL server did not answer, or the connection broke.
    #[error(
        "cannot reach the PostgreSQL run store {url}: {detail}; check that the server runs and accepts connections, and the URL (postgresql://USER@HOST:PORT/DBNAME)"
    )]
    Unreachable { url: String, detail: String },
    /// A signal ended the wait for the PostgreSQL server.
    #[error(
        "interrupted while connecting to the PostgreSQL run store {url}: a signal ended the wait for the server (nothing was read or written)"
    )]
    ConnectInterrupted { url: String },
    /// A `postgresql://` URL that cannot be parsed.
    #[error(
        "'{url}' is not a usable PostgreSQL URL: {detail}; write it as postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME"
    )]
    BadUrl { url: String, detail: String },
    /// The run ended while its PostgreSQL store was unreachable: it is
    /// kept whole in the local spool, as run `id` there.
    #[error(
        "the PostgreSQL store {url} could not be reached when the run ended: the whole run is kept in the local spool {} as run {id}; send it when the server is back with: rtscope --db {} push {id} --to {url}",
        spool.display(), spool.display()
    )]
    Spooled {
        url: String,
        spool: PathBuf,
        id: i64,
    },
    /// A store location ([`check_location`]) that is neither a file path
    /// nor a PostgreSQL URL; the text says what is wrong with it.
    #[error(
        "{0}; a run store is an SQLite file (--db PATH) or a PostgreSQL database (--db postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME)"
    )]
    BadLocation(String),
    /// A record refused before it is saved ([`RunRecord::validate`]).
    ///
    /// [`RunRecord::validate`]: crate::record::RunRecord::validate
    #[error(transparent)]
    InvalidRecord(#[from] crate::record::InvalidRecord),
}

impl StoreError {
    /// Turn an SQLite error into the error a person can act on.
    pub fn from_sql(path: &Path, what: &str, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode as C;
        let path = path.to_path_buf();
        let detail = e.to_string();
        match e.sqlite_error_code() {
            Some(C::NotADatabase) => StoreError::NotADatabase { path },
            Some(C::DatabaseCorrupt) => StoreError::Corrupt { path, detail },
            Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => StoreError::Locked {
                path,
                waited_s: BUSY_TIMEOUT.as_secs(),
            },
            Some(C::DiskFull) => StoreError::Full {
                path,
                what: what.to_string(),
            },
            Some(C::ReadOnly) | Some(C::PermissionDenied) => StoreError::ReadOnly {
                path,
                what: what.to_string(),
            },
            Some(C::CannotOpen) => StoreError::Open { path, detail },
            Some(C::SystemIoFailure) if disk_nearly_full(&path) => StoreError::Full {
                path,
                what: what.to_string(),
            },
            _ => StoreError::Sql {
                path,
                what: what.to_string(),
                detail,
            },
        }
    }

    /// Turn a backend error into the error a person can act on.
    pub fn from_db(path: &Path, what: &str, e: DbError) -> StoreError {
        match e {
            DbError::Sqlite(e) => StoreError::from_sql(path, what, e),
            ref pe @ DbError::Postgres(ref p) => {
                if pe.is_connection() {
                    StoreError::Unreachable {
                        url: path.display().to_string(),
                        detail: pglink::error_text(p),
                    }
                } else {
                    StoreError::Sql {
                        path: path.to_path_buf(),
                        what: what.to_string(),
                        detail: pglink::error_text(p),
                    }
                }
            }
            e @ (DbError::NoAnswer(_) | DbError::Lost) => StoreError::Unreachable {
                url: path.display().to_string(),
                detail: format!("{what}: {e}"),
            },
            other => StoreError::Sql {
                path: path.to_path_buf(),
                what: what.to_string(),
                detail: other.to_string(),
            },
        }
    }

    /// True when the store was busy (a checkpoint may simply retry later).
    pub fn is_locked(&self) -> bool {
        matches!(self, StoreError::Locked { .. })
    }

    /// True when a PostgreSQL server could not be reached.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, StoreError::Unreachable { .. })
    }

    /// True when a signal ended the wait for the store's server.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, StoreError::ConnectInterrupted { .. })
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// True when the file system of `path` has (almost) no space left: SQLite
/// reports some writes that fail for lack of space as plain I/O errors.
fn disk_nearly_full(path: &Path) -> bool {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    rustix::fs::statvfs(dir)
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize) < 256 * 1024)
        .unwrap_or(false)
}

/// Whether an SQLite store's file is there: `false` only when nothing is
/// at `path` (or a dangling link); a path this process may not look
/// through, or through a file, is [`StoreError::Unreadable`], never "no
/// store yet" (a store another user keeps private was listed as empty).
fn is_present(path: &Path) -> Result<bool> {
    match std::fs::metadata(path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(unreadable(path, &e)),
    }
}

/// [`StoreError::Unreadable`] for the system's error `e` on `path`.
fn unreadable(path: &Path, e: &std::io::Error) -> StoreError {
    use std::io::ErrorKind as K;
    let reason = match e.kind() {
        K::PermissionDenied => "permission denied".to_string(),
        K::NotADirectory => "a part of its path is a file, not a directory".to_string(),
        _ => e.to_string(),
    };
    StoreError::Unreadable {
        path: path.to_path_buf(),
        reason,
    }
}

/// The error of SQLite's failure `e` to open the file at `path` (`what`:
/// how): the system's own reason when the file cannot even be read
/// (SQLite says only "unable to open database file").
fn open_failed(path: &Path, what: &str, e: rusqlite::Error) -> StoreError {
    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::CannotOpen)
        && let Err(io) = std::fs::File::open(path)
        && io.kind() != std::io::ErrorKind::NotFound
    {
        return unreadable(path, &io);
    }
    StoreError::from_sql(path, what, e)
}

/// The system's store directory: the monitor service's store
/// (`RTSCOPE_DB=/var/lib/rtscope/rtscope.db`), and root's when it has no
/// home. `RTSCOPE_SYSTEM_STORE_DIR` puts it elsewhere (tests).
pub const SYSTEM_DIR: &str = "/var/lib/rtscope";

/// The default store:
/// 1. `$XDG_DATA_HOME/rtscope/rtscope.db` (XDG base directory rules: a
///    relative XDG_DATA_HOME is ignored);
/// 2. for root, the system store `/var/lib/rtscope/rtscope.db` when it
///    exists (so `sudo rtscope runs` reads what the monitor service
///    saves) or when HOME is unset (a unit, cron);
/// 3. `$HOME/.local/share/rtscope/rtscope.db`.
pub fn default_path() -> Option<PathBuf> {
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let system = nonempty("RTSCOPE_SYSTEM_STORE_DIR")
        .unwrap_or_else(|| PathBuf::from(SYSTEM_DIR))
        .join(FILE_NAME);
    let root = crate::sys::sched::euid() == 0;
    let system_exists = root && system.exists();
    choose_default(
        nonempty("XDG_DATA_HOME"),
        nonempty("HOME"),
        root.then_some((system, system_exists)),
    )
}

/// [`default_path`]'s rule, on its inputs: `system` is root's system
/// store and whether it exists (`None` for other users).
fn choose_default(
    xdg_data_home: Option<PathBuf>,
    home: Option<PathBuf>,
    system: Option<(PathBuf, bool)>,
) -> Option<PathBuf> {
    if let Some(x) = xdg_data_home.filter(|p| p.is_absolute()) {
        return Some(x.join("rtscope").join(FILE_NAME));
    }
    if let Some((path, exists)) = system
        && (exists || home.is_none())
    {
        return Some(path);
    }
    home.map(|h| h.join(".local/share/rtscope").join(FILE_NAME))
}

/// True when a store location is a PostgreSQL URL rather than a file.
pub fn is_url(path: &Path) -> bool {
    postgres::is_url(&path.to_string_lossy())
}

/// Check a store location as given (`--db`, `RTSCOPE_DB`, `push --to`):
/// a `postgresql://` or `postgres://` URL, or a file path. Refused rather
/// than taken for a file name (which made files and directories named
/// after them, a password in the name): an empty location, one with
/// white space at either end, a libpq `key=value` connection string, and
/// anything that looks like a URL of another kind (`x://…`, `mysql://…`,
/// `postgresql:/host/db`, `sqlite:/x.db`), `-` (a store is no stream)
/// and SQLite's `:memory:` (a store that vanishes). A path such as
/// `./a:b.db` stays a file. No message shows a password.
pub fn check_location(s: &str) -> Result<PathBuf> {
    let shown = || crate::redact::url(s);
    if s.is_empty() {
        return Err(StoreError::BadLocation(
            "the store location is empty (--db '' or an empty RTSCOPE_DB): leave both out for the default store, or give one"
                .into(),
        ));
    }
    if s == "-" {
        return Err(StoreError::BadLocation(
            "'-' is no store: a run store is kept in a file, not on standard input or output; give a file name (./- for a file named '-')"
                .into(),
        ));
    }
    if s == ":memory:" {
        return Err(StoreError::BadLocation(
            "':memory:' is SQLite's in-memory database, gone when the command ends, so nothing would be kept or found in it; give a file name (./:memory: for a file of that name)"
                .into(),
        ));
    }
    if s.trim() != s {
        return Err(StoreError::BadLocation(format!(
            "'{}' starts or ends with white space (a quoting slip?): write it without",
            shown()
        )));
    }
    if postgres::is_url(s) {
        return Ok(PathBuf::from(s));
    }
    if let Some(url) = conninfo_as_url(s) {
        return Err(StoreError::BadLocation(format!(
            "'{}' is a libpq key=value connection string, which rtscope does not read: write it as a URL, here {url} (for a file of that name, put ./ before it)",
            shown()
        )));
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return Ok(PathBuf::from(s));
    };
    let scheme_like = |min_len: usize| {
        scheme.len() >= min_len
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    };
    let other_kind = || StoreError::BadUrl {
        url: shown(),
        detail: if scheme.is_empty() {
            "it has no scheme before ://".into()
        } else {
            format!(
                "rtscope keeps runs in an SQLite file (give its path) or a PostgreSQL database, not in '{scheme}:'"
            )
        },
    };
    // Any scheme://, even of one letter or none: a file path never
    // looks like that by accident.
    if rest.starts_with("//") && (scheme.is_empty() || scheme_like(1)) {
        let lower = scheme.to_ascii_lowercase();
        if lower == "postgresql" || lower == "postgres" {
            return Err(StoreError::BadUrl {
                url: shown(),
                detail: "write the scheme in lower case (postgresql://)".into(),
            });
        }
        return Err(other_kind());
    }
    if !scheme_like(2) {
        return Ok(PathBuf::from(s));
    }
    let lower = scheme.to_ascii_lowercase();
    if lower == "postgresql" || lower == "postgres" {
        return Err(StoreError::BadUrl {
            url: shown(),
            detail: "postgresql: must be followed by // (postgresql://USER@HOST/DBNAME)".into(),
        });
    }
    if rest.starts_with('/')
        || matches!(
            lower.as_str(),
            "mysql" | "mariadb" | "sqlite" | "sqlite3" | "file" | "http" | "https"
        )
    {
        return Err(other_kind());
    }
    Ok(PathBuf::from(s))
}

/// The keywords of a libpq connection string (PQconndefaults).
const LIBPQ_KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "require_auth",
    "channel_binding",
    "connect_timeout",
    "client_encoding",
    "options",
    "application_name",
    "fallback_application_name",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_count",
    "tcp_user_timeout",
    "replication",
    "gssencmode",
    "sslmode",
    "sslnegotiation",
    "sslcompression",
    "sslcert",
    "sslkey",
    "sslpassword",
    "sslcertmode",
    "sslrootcert",
    "sslcrl",
    "sslcrldir",
    "sslsni",
    "requirepeer",
    "ssl_min_protocol_version",
    "ssl_max_protocol_version",
    "krbsrvname",
    "gsslib",
    "gssdelegation",
    "service",
    "target_session_attrs",
    "load_balance_hosts",
];

/// When `s` is a libpq `key=value` connection string (it starts with a
/// libpq keyword and `=`): the URL to write instead, with the host, port,
/// user and database it names and `PASSWORD` in place of a password.
fn conninfo_as_url(s: &str) -> Option<String> {
    let key_len = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let (key, after) = s.split_at(key_len);
    if !LIBPQ_KEYWORDS.contains(&key) || !after.trim_start().starts_with('=') {
        return None;
    }
    // The plain words of the usual keys (a quoted value stays a
    // placeholder: the URL is a hint, not a translation).
    let value = |k: &str| {
        s.split_whitespace()
            .find_map(|w| w.strip_prefix(k)?.strip_prefix('='))
            .filter(|v| !v.is_empty() && !v.starts_with('\''))
    };
    let user = value("user").unwrap_or("USER");
    let password = if s.contains("password") {
        ":PASSWORD"
    } else {
        ""
    };
    let host = value("host").or(value("hostaddr")).unwrap_or("HOST");
    let port = value("port").map(|p| format!(":{p}")).unwrap_or_default();
    let db = value("dbname").unwrap_or("DBNAME");
    Some(format!("postgresql://{user}{password}@{host}{port}/{db}"))
}

/// The store to use: `chosen` (`--db`) when given, else `RTSCOPE_DB`,
/// else [`default_path`]. Every command is handed its `--db` by
/// `src/cli/` and locates its store here (a PostgreSQL URL is carried as
/// a path too; [`is_url`] tells them apart).
pub fn locate(chosen: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = chosen {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("RTSCOPE_DB").filter(|v| !v.is_empty()) {
        return check_location(&p.to_string_lossy());
    }
    default_path().ok_or(StoreError::NoLocation)
}

/// An open run store.
pub struct Store {
    db: RefCell<Db>,
    /// The file, or the PostgreSQL URL without its password (for messages).
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Open the store at `path`, creating it (and its directory) when
    /// missing, whole and at once ([`create_whole`]: never an empty or
    /// half-made file at `path`, however many processes create it
    /// together), and bring its schema up to date. Refuses, without
    /// writing anything, a file that is not an rtscope store, is empty, is
    /// damaged, or has a newer schema.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_or_stop(path, &AtomicBool::new(false))
    }

    /// [`Store::open`], whose wait for a PostgreSQL server ends when
    /// `stop` is set, already or by a signal meanwhile
    /// ([`StoreError::ConnectInterrupted`]). An SQLite file never waits.
    pub fn open_or_stop(path: &Path, stop: &AtomicBool) -> Result<Store> {
        if is_url(path) {
            return postgres::open(&path.to_string_lossy(), stop);
        }
        // The directories this call makes are removed again when the open
        // fails; nothing that was there before is.
        let mut created = CreatedHere::default();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && !dir.is_dir()
        {
            created.dirs = dir
                .ancestors()
                .take_while(|d| !d.as_os_str().is_empty() && d.symlink_metadata().is_err())
                .map(Path::to_path_buf)
                .collect();
            std::fs::create_dir_all(dir).map_err(|err| StoreError::CreateDir {
                path: path.to_path_buf(),
                err,
            })?;
        }
        if path.is_dir() {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                detail: "it is a directory".into(),
            });
        }
        match path.symlink_metadata() {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => create_whole(path)?,
            Err(e) => return Err(unreadable(path, &e)),
        }
        // Never SQLITE_OPEN_CREATE here: the store is made whole above,
        // and a file that went away since is not made again empty.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| open_failed(path, "opening", e))?;
        let store = Store {
            db: RefCell::new(Db::Sqlite(conn)),
            path: path.to_path_buf(),
        };
        store.prepare(false)?;
        created.keep();
        Ok(store)
    }

    /// Open the store at `path` if it exists (`None` otherwise): for
    /// commands that only read, so that they never create a store.
    pub fn open_existing(path: &Path) -> Result<Option<Store>> {
        Store::open_existing_or_stop(path, &AtomicBool::new(false))
    }

    /// [`Store::open_existing`], whose wait for a PostgreSQL server ends
    /// when `stop` is set ([`StoreError::ConnectInterrupted`]).
    pub fn open_existing_or_stop(path: &Path, stop: &AtomicBool) -> Result<Option<Store>> {
        if is_url(path) {
            return postgres::open_existing(&path.to_string_lossy(), stop);
        }
        if !is_present(path)? {
            return Ok(None);
        }
        match Store::open(path) {
            // Someone else's store (e.g. root's, under sudo): read it
            // without writing anything.
            Err(StoreError::ReadOnly { .. }) => Store::open_read_only(path).map(Some),
            other => other.map(Some),
        }
    }

    /// Open an existing store for reading only, never writing to it
    /// (`None` when it does not exist): no migration, no marking of runs
    /// whose process died (their state is worked out on every read
    /// anyway). An SQLite file is opened read-only, and sees what writers
    /// commit later; where SQLite cannot open it so (no writer active and
    /// its directory not ours to write), immutable, as a snapshot. A
    /// PostgreSQL session is set read-only. For `rtscope serve`, which
    /// holds a store for a long time.
    pub fn open_existing_read_only_or_stop(
        path: &Path,
        stop: &AtomicBool,
    ) -> Result<Option<Store>> {
        if is_url(path) {
            return postgres::open_read_only(&path.to_string_lossy(), stop);
        }
        if !is_present(path)? {
            return Ok(None);
        }
        if path.is_dir() {
            return Err(StoreError::Open {
                path: path.to_path_buf(),
                detail: "it is a directory".into(),
            });
        }
        match Store::open_read_only_as(path, false) {
            Ok(s) => {
                s.set_busy_timeout(BUSY_TIMEOUT)?;
                Ok(Some(s))
            }
            Err(live) => Store::open_read_only(path).map(Some).map_err(|_| live),
        }
    }

    /// Open an existing store that this process may not write: read-only,
    /// and immutable when no writer is active (no `-wal` file), since the
    /// WAL index cannot be created then. No migration, no marking.
    fn open_read_only(path: &Path) -> Result<Store> {
        Store::open_read_only_as(path, true)
    }

    /// [`Store::open_read_only`]; `snapshot`: immutable when no writer
    /// is active, else read-only and live.
    fn open_read_only_as(path: &Path, snapshot: bool) -> Result<Store> {
        let mut wal = path.as_os_str().to_os_string();
        wal.push("-wal");
        let mut uri = String::from("file:");
        for c in path.to_string_lossy().chars() {
            match c {
                '?' | '#' | '%' => uri.push_str(&format!("%{:02X}", c as u32)),
                c => uri.push(c),
            }
        }
        if snapshot && !Path::new(&wal).exists() {
            uri.push_str("?immutable=1");
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&uri, flags)
            .map_err(|e| open_failed(path, "opening it read-only", e))?;
        let store = Store {
            db: RefCell::new(Db::Sqlite(conn)),
            path: path.to_path_buf(),
        };
        let (app, version, tables) = store.identify()?;
        if app == 0 && version == 0 && tables == 0 {
            return Err(StoreError::Empty {
                path: store.path.clone(),
            });
        }
        if app != schema::APPLICATION_ID {
            return Err(StoreError::NotOurs {
                path: store.path.clone(),
            });
        }
        if version > schema::CURRENT_VERSION {
            return Err(StoreError::Newer {
                path: store.path.clone(),
                found: version,
                known: schema::CURRENT_VERSION,
            });
        }
        if version != schema::CURRENT_VERSION {
            return Err(StoreError::ReadOnly {
                path: store.path.clone(),
                what: format!(
                    "its schema version {version} needs upgrading to {}: open it once as a user who may write it",
                    schema::CURRENT_VERSION
                ),
            });
        }
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A PostgreSQL store opened from `url` (shown as `shown`).
    pub(crate) fn from_pg(conn: db::PgConn, shown: String) -> Store {
        Store {
            db: RefCell::new(Db::Postgres(Box::new(conn))),
            path: PathBuf::from(shown),
        }
    }

    /// True for a shared PostgreSQL store, false for an SQLite file.
    pub fn is_postgres(&self) -> bool {
        self.db.borrow().is_postgres()
    }

    /// The connection, for one statement or query at a time.
    pub(crate) fn db(&self) -> RefMut<'_, Db> {
        self.db.borrow_mut()
    }

    /// Start a write transaction (`what` names it in errors).
    pub(crate) fn tx(&self, what: &str) -> Result<Tx<'_>> {
        Tx::begin(self.db.borrow_mut()).map_err(|e| self.err(what, e))
    }

    /// How long each PostgreSQL statement may wait for the server's
    /// answer before the connection is given up (nothing for SQLite).
    pub fn set_answer_timeout(&self, t: Duration) {
        if let Db::Postgres(pg) = &mut *self.db.borrow_mut() {
            pg.set_answer_timeout(t);
        }
    }

    /// How long to wait for another writer before giving up (SQLite; a
    /// PostgreSQL writer waits for row locks as the server decides).
    pub fn set_busy_timeout(&self, t: Duration) -> Result<()> {
        match &*self.db.borrow() {
            Db::Sqlite(c) => c
                .busy_timeout(t)
                .map_err(|e| StoreError::from_sql(&self.path, "setting the busy timeout", e)),
            Db::Postgres(_) => Ok(()),
        }
    }

    /// Open the connection again when it broke or was given up (a
    /// PostgreSQL server that was restarted, or did not answer in time),
    /// waiting at most `wait` (zero: start connecting in the background,
    /// a later call finds the connection open); nothing to do for SQLite
    /// or a live connection.
    pub fn reconnect(&self, wait: Duration) -> Result<()> {
        let mut db = self.db.borrow_mut();
        if let Db::Postgres(pg) = &mut *db {
            pg.reconnect(wait).map_err(|e| StoreError::Unreachable {
                url: self.path.display().to_string(),
                detail: e.to_string(),
            })?;
        }
        Ok(())
    }

    /// True when the PostgreSQL connection broke or was given up (the
    /// server stopped, went away, or did not answer in time).
    pub fn connection_lost(&self) -> bool {
        match &*self.db.borrow() {
            Db::Postgres(pg) => pg.is_lost(),
            Db::Sqlite(_) => false,
        }
    }

    pub(crate) fn err(&self, what: &str, e: impl Into<DbError>) -> StoreError {
        StoreError::from_db(&self.path, what, e.into())
    }

    /// Check what the file is before changing anything, then set the
    /// connection up and migrate.
    /// `(application_id, user_version, number of schema objects)`: the
    /// first reads, which fail on a file that is not a database.
    fn identify(&self) -> Result<(i64, i64, i64)> {
        let db = self.db.borrow();
        let Db::Sqlite(c) = &*db else {
            unreachable!("identify is for SQLite stores; PostgreSQL ones use postgres::identify")
        };
        let app: i64 = c
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .map_err(|e| self.err("opening it", e))?;
        let version: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err("reading the schema version", e))?;
        let tables: i64 = c
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .map_err(|e| self.err("reading the schema", e))?;
        Ok((app, version, tables))
    }

    /// `new`: the database is the one [`create_whole`] is making, which
    /// may be empty; at a store's path an empty one is refused
    /// ([`StoreError::Empty`]), as readers refuse it.
    fn prepare(&self, new: bool) -> Result<()> {
        self.set_busy_timeout(BUSY_TIMEOUT)?;
        let (app, version, tables) = self.identify()?;
        let fresh = app == 0 && version == 0 && tables == 0;
        if fresh && !new {
            return Err(StoreError::Empty {
                path: self.path.clone(),
            });
        }
        if !fresh && app != schema::APPLICATION_ID {
            return Err(StoreError::NotOurs {
                path: self.path.clone(),
            });
        }
        if version > schema::CURRENT_VERSION {
            return Err(StoreError::Newer {
                path: self.path.clone(),
                found: version,
                known: schema::CURRENT_VERSION,
            });
        }
        self.set_up_sqlite()?;
        schema::migrate(self, version)?;
        self.db()
            .batch(schema::SQLITE_READ_INDEXES)
            .map_err(|e| self.err("indexing the runs for their list", e))?;
        // Best effort: the state is worked out again on every read anyway.
        let _ = runs::mark_interrupted(self);
        Ok(())
    }

    fn set_up_sqlite(&self) -> Result<()> {
        let db = self.db.borrow();
        let Db::Sqlite(c) = &*db else {
            return Ok(());
        };
        // Durable commits: a checkpoint that returned is on disk (a power
        // cut loses at most what came after it).
        c.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 67108864;",
        )
        .map_err(|e| self.err("setting up the connection", e))?;
        let mode: String = c
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.err("switching to WAL mode", e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Open {
                path: self.path.clone(),
                detail: format!(
                    "SQLite refused WAL mode (journal mode is '{mode}'; is it on a network file system?)"
                ),
            });
        }
        Ok(())
    }
}

/// Make a new SQLite store at `path`, which did not exist, whole: its
/// schema is written to a file of its own in the same directory, closed,
/// then renamed to `path` if nothing is there yet (`RENAME_NOREPLACE`, or
/// a hard link where the file system has no such rename). Another
/// process that made the store first wins; this one then opens theirs.
/// So a store's path never holds a store half made: before, parallel
/// imports into a new store met its empty file and took it for another
/// program's, or found it locked, and lost their runs.
fn create_whole(path: &Path) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| FILE_NAME.into());
    let tmp = path.with_file_name(format!(
        ".{name}.new-{}-{}",
        std::process::id(),
        &crate::record::new_run_uuid()[..8]
    ));
    // The new file and SQLite's side files are removed, whatever happens.
    let mut made = CreatedHere::default();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = tmp.as_os_str().to_os_string();
        p.push(suffix);
        made.files.push(PathBuf::from(p));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&tmp, flags)
        .map_err(|e| StoreError::from_sql(path, "creating it", e))?;
    // Messages name the store asked for, not the file it is made in.
    let store = Store {
        db: RefCell::new(Db::Sqlite(conn)),
        path: path.to_path_buf(),
    };
    store.prepare(true)?;
    // Closing the last connection writes the WAL back into the file.
    let Db::Sqlite(conn) = store.db.into_inner() else {
        unreachable!("made as SQLite above")
    };
    conn.close()
        .map_err(|(_, e)| StoreError::from_sql(path, "creating it", e))?;
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    let placed = match renameat_with(CWD, &tmp, CWD, path, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => std::fs::hard_link(&tmp, path),
        other => other.map_err(std::io::Error::from),
    };
    match placed {
        Ok(()) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                // Best effort: the new name on disk with the file.
                let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
            }
            Ok(())
        }
        // Another process made it meanwhile: theirs is the store.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => Err(StoreError::Full {
            path: path.to_path_buf(),
            what: "creating it".into(),
        }),
        Err(e) => Err(StoreError::Open {
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// The files and directories one [`Store::open`] made, removed on drop
/// unless kept (the open succeeded): files first, then the directories,
/// deepest first and only when empty.
#[derive(Default)]
struct CreatedHere {
    files: Vec<PathBuf>,
    /// Deepest first.
    dirs: Vec<PathBuf>,
}

impl CreatedHere {
    fn keep(mut self) {
        self.files.clear();
        self.dirs.clear();
    }
}

impl Drop for CreatedHere {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Nanoseconds since the Unix epoch, now.
pub(crate) fn now_unix_ns() -> u64 {
    crate::sys::clock::unix_now_ns()
}

#[cfg(test)]
pub(crate) mod test_util {
    use std::path::PathBuf;

    /// A fresh directory for a test store, removed on drop.
    pub struct TempStore(pub PathBuf);

    impl TempStore {
        pub fn new(name: &str) -> TempStore {
            let d = std::env::temp_dir().join(format!(
                "rtscope-store-{name}-{}",
                crate::record::new_run_uuid()
            ));
            std::fs::create_dir_all(&d).unwrap();
            TempStore(d)
        }

        pub fn db(&self) -> PathBuf {
            self.0.join("rtscope.db")
        }
    }

    impl Drop for TempStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::TempStore;
    use super::*;

    #[test]
    fn locations_that_look_like_urls_are_refused() {
        for ok in [
            "postgresql://u@h/db",
            "postgres://u@h/db",
            "/var/lib/rtscope.db",
            "./a:b.db",
            "a:b.db",
            "runs.db",
        ] {
            assert_eq!(check_location(ok).unwrap(), PathBuf::from(ok), "{ok}");
        }
        for bad in [
            "mysql://x/y",
            "postgresql:/127.0.0.1/rtscope",
            "postgres:rtscope",
            "POSTGRESQL://u@h/db",
            "sqlite:///tmp/x.db",
            "file:/tmp/x.db",
            "mariadb:x",
        ] {
            assert!(
                matches!(check_location(bad), Err(StoreError::BadUrl { .. })),
                "{bad}"
            );
        }
        let e = check_location("mysql://u:secret@h/db")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("secret"), "{e}");
        for bad in ["x://", "x://y", "://y", "Z+1://y", "POSTGRES://u@h/db"] {
            assert!(
                matches!(check_location(bad), Err(StoreError::BadUrl { .. })),
                "{bad}"
            );
        }
        for bad in [
            "",
            " postgresql://u:secret@h/db",
            "postgresql://u:secret@h/db ",
            "runs.db\n",
            "host=h password=secret dbname=x",
            "dbname = x",
            "user=u",
            "-",
            ":memory:",
        ] {
            let e = check_location(bad).unwrap_err();
            assert!(matches!(e, StoreError::BadLocation(_)), "{bad}: {e}");
            assert!(!e.to_string().contains("secret"), "{e}");
        }
        let e = check_location("host=db.lab port=5433 user=me password=secret dbname=rt")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("libpq key=value") && e.contains("postgresql://me:PASSWORD@db.lab:5433/rt"),
            "{e}"
        );
        for ok in [
            "hostname.db",
            "./host=h",
            "a=b.db",
            "./x://y",
            "./-",
            "./:memory:",
        ] {
            assert_eq!(check_location(ok).unwrap(), PathBuf::from(ok), "{ok}");
        }
    }

    #[test]
    fn creates_and_reopens_at_the_current_schema() {
        let t = TempStore::new("open");
        let db = t.0.join("sub/dir/rtscope.db");
        let s = Store::open(&db).unwrap();
        let v: i64 = s
            .db()
            .query_one("PRAGMA user_version", &[])
            .unwrap()
            .get(0)
            .unwrap();
        assert_eq!(v, schema::CURRENT_VERSION);
        drop(s);
        Store::open(&db).unwrap();
        assert!(
            Store::open_existing(&t.0.join("missing.db"))
                .unwrap()
                .is_none()
        );
        assert!(!t.0.join("missing.db").exists());
    }

    #[test]
    fn a_read_only_store_sees_later_runs_and_writes_nothing() {
        let t = TempStore::new("read-only");
        let db = t.0.join("rtscope.db");
        let stop = AtomicBool::new(false);
        assert!(
            Store::open_existing_read_only_or_stop(&db, &stop)
                .unwrap()
                .is_none()
        );
        assert!(!db.exists(), "a reader made a store");
        let mut w = Store::open(&db).unwrap();
        let mut rec = crate::record::synthetic(&[vec![1_000, 2_000]]);
        w.insert(&rec).unwrap();
        let mut r = Store::open_existing_read_only_or_stop(&db, &stop)
            .unwrap()
            .unwrap();
        assert_eq!(r.list().unwrap().len(), 1);
        // A run saved while the reader is open is seen by it.
        rec.run_uuid = "f".repeat(32);
        w.insert(&rec).unwrap();
        assert_eq!(r.list().unwrap().len(), 2);
        let e = r.relabel(1, Some("x"));
        assert!(matches!(e, Err(StoreError::ReadOnly { .. })), "{e:?}");
        drop(w);
        drop(r);
        let junk = t.0.join("junk.db");
        std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
        let e = Store::open_existing_read_only_or_stop(&junk, &stop).unwrap_err();
        assert!(matches!(e, StoreError::NotADatabase { .. }), "{e}");
        assert_eq!(std::fs::read(&junk).unwrap(), vec![b'x'; 8192]);
        // A newer rtscope's store is newer, not "needs upgrading".
        Connection::open(&db)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99;")
            .unwrap();
        let e = Store::open_existing_read_only_or_stop(&db, &stop).unwrap_err();
        assert!(matches!(e, StoreError::Newer { found: 99, .. }), "{e}");
        assert!(e.to_string().contains("newer than this rtscope"), "{e}");
        // A path through a file is unreadable, not "no store yet".
        let through = junk.join("rtscope.db");
        for e in [
            Store::open_existing_read_only_or_stop(&through, &stop).unwrap_err(),
            Store::open_existing(&through).unwrap_err(),
        ] {
            assert!(matches!(e, StoreError::Unreadable { .. }), "{e}");
            assert!(e.to_string().contains("cannot read the run store"), "{e}");
        }
    }

    #[test]
    fn refuses_foreign_damaged_and_newer_files_without_writing() {
        let t = TempStore::new("refuse");
        let junk = t.0.join("junk.db");
        std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
        let e = Store::open(&junk).unwrap_err();
        assert!(matches!(e, StoreError::NotADatabase { .. }), "{e}");
        assert_eq!(std::fs::read(&junk).unwrap(), vec![b'x'; 8192]);

        let other = t.0.join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        let before = std::fs::read(&other).unwrap();
        let e = Store::open(&other).unwrap_err();
        assert!(matches!(e, StoreError::NotOurs { .. }), "{e}");
        assert_eq!(std::fs::read(&other).unwrap(), before);

        let newer = t.0.join("newer.db");
        drop(Store::open(&newer).unwrap());
        Connection::open(&newer)
            .unwrap()
            .execute_batch("PRAGMA user_version = 99;")
            .unwrap();
        let e = Store::open(&newer).unwrap_err();
        assert!(matches!(e, StoreError::Newer { found: 99, .. }), "{e}");
        assert!(e.to_string().contains("upgrade rtscope"));
    }

    #[test]
    fn default_path_rule() {
        let p = PathBuf::from;
        let sys = || (p("/var/lib/rtscope/rtscope.db"), false);
        let sys_there = || (p("/var/lib/rtscope/rtscope.db"), true);
        // XDG_DATA_HOME first (when absolute), for everyone.
        assert_eq!(
            choose_default(Some(p("/x")), Some(p("/root")), Some(sys_there())),
            Some(p("/x/rtscope/rtscope.db"))
        );
        // Root: the system store when it exists, or without a home.
        assert_eq!(
            choose_default(None, Some(p("/root")), Some(sys_there())),
            Some(p("/var/lib/rtscope/rtscope.db"))
        );
        assert_eq!(
            choose_default(Some(p("rel")), None, Some(sys())),
            Some(p("/var/lib/rtscope/rtscope.db"))
        );
        assert_eq!(
            choose_default(None, Some(p("/root")), Some(sys())),
            Some(p("/root/.local/share/rtscope/rtscope.db"))
        );
        // Others: their home, or nothing.
        assert_eq!(
            choose_default(None, Some(p("/home/a")), None),
            Some(p("/home/a/.local/share/rtscope/rtscope.db"))
        );
        assert_eq!(choose_default(None, None, None), None);
    }
}
