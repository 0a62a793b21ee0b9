//! The local spool: an SQLite run store beside the default one
//! (`spool.db` next to `rtscope.db`) that keeps the checkpoints of a run
//! whose PostgreSQL store cannot be reached, so that nothing measured is
//! lost. A run is spooled under its own uuid; `rtscope push` (or the
//! run's own next checkpoint, once the server is back) sends it on.

use super::{Result, Store, StoreError};
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

/// Open (create) the spool.
pub fn open() -> Result<Store> {
    let p = path();
    Store::open(&p).map_err(|e| match e {
        e @ StoreError::Full { .. } => e,
        other => StoreError::Invalid(format!("the local spool {}: {other}", p.display())),
    })
}
