//! The systemd unit that resumes a rebooting study after each boot:
//! `/etc/systemd/system/rtscope-study-NAME.service`, enabled by a link in
//! `multi-user.target.wants`, both written only where nothing else is
//! and removed when the study's round ends (`study stop` removes them
//! too). Its `ExecStart` is `rtscope --db STORE study resume NAME
//! --continue-boots -q`, the binary and the store named by their full
//! paths (a unit has no HOME).

use super::method::MARK;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why the unit could not be installed or removed.
#[derive(Debug, Error)]
pub enum UnitError {
    /// A file or link of the unit's name that rtscope did not write.
    #[error(
        "{} exists and is not rtscope's: it is left as it is; remove it or rename the study",
        path.display()
    )]
    NotOurs { path: PathBuf },
    #[error("cannot create {}", dir.display())]
    CreateDir {
        dir: PathBuf,
        #[source]
        io: std::io::Error,
    },
    /// The unit file could not be written (the message names it).
    #[error(transparent)]
    Write(#[from] crate::output::OutputError),
    #[error("cannot enable the unit ({})", link.display())]
    Enable {
        link: PathBuf,
        #[source]
        io: std::io::Error,
    },
    #[error("cannot remove {}", path.display())]
    Remove {
        path: PathBuf,
        #[source]
        io: std::io::Error,
    },
}

/// The unit's name for study `name` (systemd's escaping for what a unit
/// name cannot hold).
pub fn name(study: &str) -> String {
    let mut out = String::from("rtscope-study-");
    for b in study.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out + ".service"
}

/// One word of an `ExecStart=` line, quoted as systemd reads it.
fn word(s: &str) -> String {
    let s = s.replace('%', "%%");
    if !s.is_empty() && !s.contains([' ', '\t', '"', '\'', '\\', ';', '$']) {
        return s;
    }
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('$', "$$")
    )
}

/// The unit's text.
pub fn text(study: &str, command: &[String]) -> String {
    let exec: Vec<String> = command.iter().map(|w| word(w)).collect();
    format!(
        "{MARK} ({study}): resumes it after each boot; removed when the study ends\n\
         [Unit]\n\
         Description=rtscope study {study}: resume after a reboot\n\
         Wants=network-online.target\n\
         After=network-online.target time-sync.target\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={}\n\
         \n\
         [Install]\n\
         WantedBy=multi-user.target\n",
        exec.join(" ")
    )
}

fn paths(root: &Path, study: &str) -> (PathBuf, PathBuf) {
    let n = name(study);
    let dir = root.join("etc/systemd/system");
    (dir.join(&n), dir.join("multi-user.target.wants").join(n))
}

/// Install and enable the unit under `root` (`/` but in tests).
pub fn install(root: &Path, study: &str, command: &[String]) -> Result<PathBuf, UnitError> {
    let (file, link) = paths(root, study);
    for p in [&file, &link] {
        if let Ok(m) = p.symlink_metadata() {
            let ours = if m.file_type().is_symlink() {
                std::fs::read_link(p)
                    .is_ok_and(|t| t == file || t == Path::new("..").join(name(study)))
            } else {
                super::method::is_ours(p)
            };
            if !ours {
                return Err(UnitError::NotOurs {
                    path: p.to_path_buf(),
                });
            }
        }
    }
    let dir = file.parent().expect("a unit has a folder");
    std::fs::create_dir_all(dir.join("multi-user.target.wants")).map_err(|io| {
        UnitError::CreateDir {
            dir: dir.to_path_buf(),
            io,
        }
    })?;
    // Written whole and synced: a power cut right after must find it.
    crate::output::write_atomic(&file, text(study, command).as_bytes())?;
    if link.symlink_metadata().is_err() {
        std::os::unix::fs::symlink(Path::new("..").join(name(study)), &link).map_err(|io| {
            UnitError::Enable {
                link: link.clone(),
                io,
            }
        })?;
    }
    for d in [dir.to_path_buf(), dir.join("multi-user.target.wants")] {
        let _ = std::fs::File::open(&d).and_then(|f| f.sync_all());
    }
    reload(root);
    Ok(file)
}

/// Remove the unit and its link, if they are rtscope's.
pub fn remove(root: &Path, study: &str) -> Result<bool, UnitError> {
    let (file, link) = paths(root, study);
    let mut removed = false;
    if link
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        std::fs::remove_file(&link).map_err(|io| UnitError::Remove {
            path: link.clone(),
            io,
        })?;
        removed = true;
    }
    if super::method::is_ours(&file)
        && !file
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        std::fs::remove_file(&file).map_err(|io| UnitError::Remove {
            path: file.clone(),
            io,
        })?;
        removed = true;
    }
    if removed {
        reload(root);
    }
    Ok(removed)
}

/// Whether the unit is installed.
pub fn installed(root: &Path, study: &str) -> bool {
    super::method::is_ours(&paths(root, study).0)
}

/// Tell systemd the units changed (on the real root, where it runs).
fn reload(root: &Path) {
    if root == Path::new("/") && Path::new("/run/systemd/system").exists() {
        let _ = std::process::Command::new("systemctl")
            .arg("daemon-reload")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_text() {
        assert_eq!(name("seed-001"), "rtscope-study-seed-001.service");
        assert_eq!(name("a+b"), "rtscope-study-a\\x2bb.service");
        let cmd: Vec<String> = [
            "/usr/local/bin/rtscope",
            "--db",
            "/var/lib/my store/r.db",
            "study",
            "resume",
            "s",
            "--continue-boots",
        ]
        .map(String::from)
        .to_vec();
        let t = text("s", &cmd);
        assert!(t.starts_with(MARK));
        assert!(
            t.contains("\nExecStart=/usr/local/bin/rtscope --db \"/var/lib/my store/r.db\" study resume s --continue-boots\n"),
            "{t}"
        );
        assert!(t.contains("\nWantedBy=multi-user.target\n"));
        assert_eq!(word("50%"), "50%%");
    }

    #[test]
    fn installed_and_removed_only_where_nothing_else_is() {
        let d =
            std::env::temp_dir().join(format!("rtscope-unit-{}", crate::record::new_run_uuid()));
        let cmd = vec!["/bin/rtscope".to_string()];
        let f = install(&d, "s", &cmd).unwrap();
        assert!(installed(&d, "s"));
        let link = d
            .join("etc/systemd/system/multi-user.target.wants")
            .join(name("s"));
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            Path::new("..").join(name("s"))
        );
        // Installed again (a new round): the same files.
        install(&d, "s", &cmd).unwrap();
        assert!(remove(&d, "s").unwrap());
        assert!(!f.exists() && link.symlink_metadata().is_err());
        assert!(!remove(&d, "s").unwrap());
        // Somebody's own unit of that name stays.
        std::fs::write(&f, "[Unit]\n").unwrap();
        let e = install(&d, "s", &cmd).unwrap_err();
        assert!(e.to_string().contains("is not rtscope's"), "{e}");
        assert!(!remove(&d, "s").unwrap());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "[Unit]\n");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
