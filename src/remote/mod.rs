//! Remote runs: rtscope on a workstation driving rtscope on a board
//! through the system's OpenSSH client (`--on BOARD`).
//!
//! - [`board`]: what a board is (an `ssh://` URL, or a name of the boards
//!   file).
//! - [`ssh`]: the link, one multiplexed OpenSSH connection per command.
//! - [`deploy`]: which binary the board runs, copied there by hash.
//! - [`Remote`] (here): a board reached, checked and given its binary.
//! - [`job`]: a measurement started on the board detached from the link,
//!   followed, stopped, and copied back.
//! - [`sync`]: runs copied from the board's store into the local one, by
//!   uuid, as `push` copies them.
//!
//! What is measured is measured on the board, by the board's rtscope,
//! with the board's store; the workstation only starts, shows and copies.
//! Nothing here changes the workstation's system.

pub mod board;
pub mod deploy;
pub mod job;
pub mod ssh;
pub mod sync;

pub use board::{Board, BoardsFile, Target};
use ssh::{Link, Ran, quote};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a remote command could not be done (each is exit 2). Four kinds a
/// caller tells apart (a follow retries on [`RemoteError::Link`] only);
/// each message is worded where it is made (what failed, on which board,
/// what to do).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// Bad input given here: a board URL or name, the boards file, a
    /// `--binary` that is not one for the board, a local file to send or
    /// write that cannot be.
    #[error("{0}")]
    Usage(String),
    /// The board was not reached, or the link broke (ssh's exit 255, or
    /// no answer); what ran there goes on.
    #[error("{0}")]
    Link(String),
    /// The board answered, but refused or failed (its rtscope's or
    /// shell's own error, a record it sent that cannot be read).
    #[error("{0}")]
    Board(String),
    /// Something on this machine failed: running ssh, a directory, a
    /// signal handler, a file written here.
    #[error("{0}")]
    Local(String),
    /// The local run store, into which the board's runs are copied.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl RemoteError {
    /// The link to `board` failed: what ssh said, and how to check it.
    pub fn link(board: &str, ran: &Ran) -> RemoteError {
        RemoteError::Link(format!(
            "cannot reach board {board} through ssh ({}): check that `ssh` reaches it without a password prompt (keys, agent, ~/.ssh/config; rtscope runs ssh with BatchMode=yes)",
            ran.last_error()
        ))
    }
}

/// How to reach boards: the global flags.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `--ssh-config FILE`: `ssh -F FILE`.
    pub ssh_config: Option<PathBuf>,
    /// `--binary FILE`: the rtscope to run on the board.
    pub binary: Option<PathBuf>,
}

/// A board reached and ready: its binary installed, its facts known.
pub struct Remote {
    pub board: Board,
    pub link: Link,
    /// rtscope's directory on the board (binaries, run folders).
    pub dir: String,
    /// The rtscope binary on the board.
    pub bin: String,
    /// The board's run store (its rtscope's default).
    pub store: String,
    /// The version of the rtscope there (`rtscope --version`).
    pub version: String,
    /// The version of the requests it reads (`None`: an rtscope older
    /// than requests, which runs `measure` only).
    pub request: Option<u32>,
    /// `systemd-run` can start detached units there.
    pub systemd: bool,
}

/// What the first command on a board learns.
#[derive(Debug, Default, PartialEq)]
struct Probe {
    machine: String,
    dir: String,
    systemd: bool,
    setsid: bool,
    /// The board's own rtscope on its PATH (a package installed there),
    /// and the first line of its `--version`.
    installed: Option<(String, String)>,
}

impl Probe {
    const SCRIPT: &'static str = r#"c=${XDG_CACHE_HOME:-}; if [ -z "$c" ]; then if [ -n "${HOME:-}" ]; then c=$HOME/.cache; else c=/var/cache; fi; fi
d=${RTSCOPE_BOARD_DIR:-$c/rtscope}
echo "machine=$(uname -m)"; echo "dir=$d"
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then echo systemd=1; fi
if command -v setsid >/dev/null 2>&1; then echo setsid=1; fi
if i=$(command -v rtscope 2>/dev/null) && [ -x "$i" ]; then echo "installed=$i"; echo "installed_version=$("$i" --version 2>/dev/null | head -n 1)"; fi"#;

    fn parse(text: &str) -> Probe {
        let mut p = Probe::default();
        let (mut path, mut version) = (None, None);
        for line in text.lines() {
            match line.split_once('=') {
                Some(("installed", v)) if !v.trim().is_empty() => path = Some(v.trim().to_string()),
                Some(("installed_version", v)) => version = Some(v.trim().to_string()),
                Some(("machine", v)) => p.machine = v.trim().to_string(),
                Some(("dir", v)) => p.dir = v.trim().to_string(),
                Some(("systemd", "1")) => p.systemd = true,
                Some(("setsid", "1")) => p.setsid = true,
                _ => {}
            }
        }
        p.installed = path.map(|p| (p, version.unwrap_or_default()));
        p
    }
}

/// The board's own rtscope, used when this workstation has no build for
/// the board (a user who installed the amd64 package here and the arm64
/// one on the board): only of this very version, since the two speak a
/// request and record format of their version. `none` is why no build
/// was at hand here.
fn installed_one(probe: &Probe, board: &str, none: &str) -> Result<String, RemoteError> {
    let ours = format!("rtscope {}", env!("CARGO_PKG_VERSION"));
    match &probe.installed {
        Some((path, version)) if *version == ours => {
            eprintln!("rtscope: using the rtscope installed on board {board} ({path}, {version})");
            Ok(path.clone())
        }
        Some((path, version)) => Err(RemoteError::Usage(format!(
            "{none}. Board {board} has its own rtscope at {path}, but it is {} where this is {ours}: install the package of this version there, or name a build with --binary FILE",
            if version.is_empty() {
                "of an unknown version"
            } else {
                version
            }
        ))),
        None => Err(RemoteError::Usage(format!(
            "{none}; or install rtscope's package of this version on board {board} (the .deb for its architecture, docs/arm.md): `--on` then uses it"
        ))),
    }
}

impl Remote {
    /// Reach `board`, learn its machine, put rtscope there. Every
    /// failure says what failed and how to fix it (exit 2), before
    /// anything runs on the board.
    pub fn connect(board: Board, opts: &Options) -> Result<Remote, RemoteError> {
        let link = Link::new(board.target.clone(), opts.ssh_config.as_deref())?;
        let ran = link.run(Probe::SCRIPT, b"", Duration::from_secs(40))?;
        if ran.link_failed() {
            return Err(RemoteError::link(&board.name, &ran));
        }
        let probe = Probe::parse(&ran.stdout_text());
        if !ran.ok() || probe.machine.is_empty() || probe.dir.is_empty() {
            return Err(RemoteError::Board(format!(
                "board {} did not run rtscope's first check ({}): the login shell there must be a POSIX shell, with uname",
                board.name,
                ran.last_error()
            )));
        }
        if !probe.systemd && !probe.setsid {
            return Err(RemoteError::Board(format!(
                "board {} has neither systemd-run nor setsid: rtscope cannot start a run there that outlives the link (install util-linux)",
                board.name
            )));
        }
        let arch = deploy::Arch::of_uname(&probe.machine).ok_or_else(|| {
            RemoteError::Board(format!(
                "board {} is a {} machine, which rtscope does not know how to build for",
                board.name, probe.machine
            ))
        })?;
        let bin = match deploy::choose(arch, &probe.machine, opts.binary.as_deref()) {
            Ok(choices) => deploy::install(&link, &probe.dir, &choices, &board.name)?,
            Err(RemoteError::Usage(none)) if opts.binary.is_none() => {
                installed_one(&probe, &board.name, &none)?
            }
            Err(e) => return Err(e),
        };
        let info = link.run(
            &format!("{} __board-info", quote(&bin)),
            b"",
            Duration::from_secs(30),
        )?;
        let said = |key: &str| {
            info.stdout_text()
                .lines()
                .find_map(|l| l.strip_prefix(key).map(str::to_string))
        };
        let store = said("store=").ok_or_else(|| {
            RemoteError::Board(format!(
                "rtscope on board {} did not say where its store is ({})",
                board.name,
                info.last_error()
            ))
        })?;
        Ok(Remote {
            board,
            link,
            dir: probe.dir,
            bin,
            store,
            version: said("version=").unwrap_or_else(|| "?".into()),
            request: said("request=").and_then(|v| v.parse().ok()),
            systemd: probe.systemd,
        })
    }

    /// `BIN --db STORE` on the board, quoted for its shell.
    pub fn rtscope(&self) -> String {
        format!("{} --db {}", quote(&self.bin), quote(&self.store))
    }

    /// Run `rtscope ARGS` on the board in the foreground, its output
    /// shown here; its exit status.
    fn foreground(&self, args: &[String]) -> Result<i32, RemoteError> {
        let words: Vec<String> = args.iter().map(|a| quote(a)).collect();
        let script = format!("{} {}", self.rtscope(), words.join(" "));
        let tty = std::io::IsTerminal::is_terminal(&std::io::stdin())
            && std::io::IsTerminal::is_terminal(&std::io::stdout());
        let code = self.link.foreground(&script, tty)?;
        if code == 255 {
            return Err(RemoteError::Link(format!(
                "the link to board {} failed during the command (ssh exit 255); what ran there is in its store: `rtscope fetch {}`",
                self.board.name, self.board.name
            )));
        }
        Ok(code)
    }

    /// Run a request of command `name` (`rtscope __request NAME FILE`: a
    /// command sent as data) on the board in the foreground, its output
    /// shown here; its exit status. Its file, in `requests/` there, is
    /// removed after.
    pub fn foreground_request(&self, name: &str, request: &[u8]) -> Result<i32, RemoteError> {
        let dir = format!("{}/requests", self.dir);
        let file = format!("{dir}/{}.json", &crate::record::new_run_uuid()[..12]);
        self.mkdir(&dir)?;
        self.put(&file, request)?;
        let code = self.foreground(&["__request".to_string(), name.to_string(), file.clone()]);
        let _ = self.link.run(
            &format!("rm -f {}", quote(&file)),
            b"",
            Duration::from_secs(30),
        );
        code
    }

    /// Run `script` on the board, which must succeed: a failed link is
    /// [`RemoteError::Link`], a failed script "cannot WHAT on board B".
    pub fn exec(
        &self,
        script: &str,
        input: &[u8],
        limit: Duration,
        what: &str,
    ) -> Result<Ran, RemoteError> {
        let ran = self.link.run(script, input, limit)?;
        if ran.link_failed() {
            return Err(RemoteError::link(&self.board.name, &ran));
        }
        if !ran.ok() {
            return Err(RemoteError::Board(format!(
                "cannot {what} on board {}: {}",
                self.board.name,
                ran.last_error()
            )));
        }
        Ok(ran)
    }

    /// Make directory `path` on the board (and its parents).
    pub fn mkdir(&self, path: &str) -> Result<(), RemoteError> {
        self.exec(
            &format!("mkdir -p {}", quote(path)),
            b"",
            Duration::from_secs(30),
            &format!("make {path}"),
        )
        .map(drop)
    }

    /// Write `bytes` to `path` on the board (made private: it may be a
    /// password file).
    pub fn put(&self, path: &str, bytes: &[u8]) -> Result<(), RemoteError> {
        let q = quote(path);
        self.exec(
            &format!("umask 077; cat > {q}.part && mv -f {q}.part {q}"),
            bytes,
            Duration::from_secs(120),
            &format!("write {path}"),
        )
        .map(drop)
    }

    /// The text of a small file on the board, trimmed (`None`: it is
    /// not there).
    pub fn get_text(&self, path: &str) -> Result<Option<String>, RemoteError> {
        Ok(self
            .get(path)?
            .map(|b| String::from_utf8_lossy(&b).trim().to_string()))
    }

    /// Read `path` on the board (`None`: it is not there).
    pub fn get(&self, path: &str) -> Result<Option<Vec<u8>>, RemoteError> {
        let q = quote(path);
        let ran = self.link.run(
            &format!("if [ -f {q} ]; then cat {q}; else exit 3; fi"),
            b"",
            Duration::from_secs(300),
        )?;
        match ran.status {
            Some(0) => Ok(Some(ran.stdout)),
            Some(3) => Ok(None),
            _ if ran.link_failed() => Err(RemoteError::link(&self.board.name, &ran)),
            _ => Err(RemoteError::Board(format!(
                "cannot read {path} on board {}: {}",
                self.board.name,
                ran.last_error()
            ))),
        }
    }
}

/// A local file's bytes, for copying to a board.
pub fn read_local(path: &Path) -> Result<Vec<u8>, RemoteError> {
    std::fs::read(path)
        .map_err(|e| RemoteError::Usage(format!("cannot read {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_read_line_by_line() {
        let p = Probe::parse("machine=aarch64\ndir=/root/.cache/rtscope\nsetsid=1\n");
        assert_eq!(
            p,
            Probe {
                machine: "aarch64".into(),
                dir: "/root/.cache/rtscope".into(),
                systemd: false,
                setsid: true,
                installed: None,
            }
        );
        let p = Probe::parse(
            "machine=aarch64\ndir=/d\nsetsid=1\ninstalled=/usr/bin/rtscope\ninstalled_version=rtscope 9.9.9\n",
        );
        assert_eq!(
            p.installed,
            Some(("/usr/bin/rtscope".into(), "rtscope 9.9.9".into()))
        );
    }

    #[test]
    fn a_boards_own_rtscope_serves_only_of_this_version() {
        let ours = format!("rtscope {}", env!("CARGO_PKG_VERSION"));
        let probe = |v: &str| Probe {
            installed: Some(("/usr/bin/rtscope".into(), v.into())),
            ..Probe::default()
        };
        assert_eq!(
            installed_one(&probe(&ours), "pi", "none here").unwrap(),
            "/usr/bin/rtscope"
        );
        let other = installed_one(&probe("rtscope 0.0.1"), "pi", "none here")
            .unwrap_err()
            .to_string();
        assert!(
            other.contains("rtscope 0.0.1 where this is") && other.contains("--binary"),
            "{other}"
        );
        let absent = installed_one(&Probe::default(), "pi", "none here")
            .unwrap_err()
            .to_string();
        assert!(absent.contains("install rtscope's package"), "{absent}");
    }
}
