//! Reading a file from elsewhere (an import, a trace) with a size limit:
//! a file above the limit is refused before it is read into memory, and
//! a file that grows while read (a pipe, a file still written) is cut at
//! the limit and refused. Reads only; never writes.

use crate::units::fmt_size;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Default limit of `rtscope import`: result files (histograms, JSON,
/// status lines) are kilobytes to a few megabytes.
pub const IMPORT_MAX_BYTES: u64 = 256 << 20;
/// Default limit of `explain --trace`: the text of a trace around a
/// spike is tens of megabytes; its events take about as much memory again.
pub const TRACE_MAX_BYTES: u64 = 1 << 30;

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is {size}, above the {limit} limit of {what}: refused unread; raise the limit with --max-size if it is meant to be read whole"
    )]
    TooLarge {
        path: PathBuf,
        /// `1.5 GiB`, or `larger than 256 MiB` when only that is known.
        size: String,
        limit: String,
        what: &'static str,
    },
}

/// The whole content of `path`, at most `max_bytes` of it; `what` names
/// the reader in the refusal ("an import", "a trace").
pub fn read_limited(
    path: &Path,
    max_bytes: u64,
    what: &'static str,
) -> Result<Vec<u8>, InputError> {
    let read_err = |source| InputError::Read {
        path: path.into(),
        source,
    };
    let too_large = |size: String| InputError::TooLarge {
        path: path.into(),
        size,
        limit: fmt_size(max_bytes),
        what,
    };
    let file = std::fs::File::open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    if meta.is_file() && meta.len() > max_bytes {
        return Err(too_large(fmt_size(meta.len())));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() {
        meta.len() as usize
    } else {
        0
    });
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(read_err)?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(format!("larger than {}", fmt_size(max_bytes))));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_above_the_limit_are_refused() {
        let d = std::env::temp_dir().join(format!("rtscope-input-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_limited(&f, 10, "a test").unwrap(), b"0123456789");
        let e = read_limited(&f, 9, "a test").unwrap_err();
        assert!(matches!(e, InputError::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("--max-size"), "{e}");
        assert!(matches!(
            read_limited(&d.join("none"), 9, "a test"),
            Err(InputError::Read { .. })
        ));
        std::fs::remove_dir_all(d).ok();
    }
}
