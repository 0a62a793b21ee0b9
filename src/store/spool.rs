//! The local spool: an SQLite run store beside the default one
//! (`spool.db` next to `rtscope.db`) that keeps the checkpoints of a run
//! whose PostgreSQL store cannot be reached, so that nothing measured is
//! lost. A run is spooled under its own uuid; `rtscope push` (or the
//! run's own next checkpoint, once the server is back) sends it on.

use super::{Result, Store};
use std::path::PathBuf;

/// File name of the spool inside the default store's directory.
pub const FILE_NAME: &str = "spool.db";

/// Where the spool is: beside the default store, else in the temporary
/// directory (no XDG_DATA_HOME nor HOME).
pub fn path() -> PathBuf {
    match super::default_path().and_then(|p| p.parent().map(|d| d.join(FILE_NAME))) {
        Some(p) => p,
        None => std::env::temp_dir().join("rtscope").join(FILE_NAME),
    }
}

/// Open (create) the spool; its errors are [`Store::open`]'s, which name
/// the spool's file.
pub fn open() -> Result<Store> {
    Store::open(&path())
}
