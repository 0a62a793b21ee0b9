//! Writing result files safely: checked before measuring (so a run is not
//! wasted on a path that cannot be written), then written atomically
//! (temporary file + rename) so a crash never leaves half a file.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Check that `path` can be written later, without truncating it now.
pub fn check_writable(path: &Path, what: &str) -> Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if path.is_dir() {
        bail!("{what} {} is a directory: give a file name", path.display());
    }
    if path.exists() {
        std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("{what} {} cannot be written", path.display()))?;
    }
    let dir = parent_dir(path);
    if !dir.is_dir() {
        bail!(
            "{what} {}: directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let probe = dir.join(format!(".rtscope-probe-{}", std::process::id()));
    std::fs::File::create(&probe).with_context(|| {
        format!(
            "{what} {}: directory {} is not writable",
            path.display(),
            dir.display()
        )
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Write `bytes` to `path` atomically; `-` is standard output.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(bytes)?;
        out.flush()?;
        return Ok(());
    }
    let dir = parent_dir(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("could not write {}", path.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_checks_and_atomic_write() {
        let d = std::env::temp_dir().join(format!("rtscope-out-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("a.json");
        check_writable(&f, "--json").unwrap();
        assert!(!f.exists(), "the check must not create the file");
        write_atomic(&f, b"{}").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"{}");
        assert!(check_writable(&d, "--json").is_err());
        assert!(check_writable(&d.join("no/such/dir.json"), "--json").is_err());
        let leftovers: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(d).ok();
    }
}
