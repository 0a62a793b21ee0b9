//! The link to a board: the system's OpenSSH client, one multiplexed
//! connection per rtscope command (a control master in a private
//! directory, closed when the [`Link`] is dropped). The user's
//! `~/.ssh/config`, keys, agent, jump hosts and known_hosts work as they
//! do for `ssh`; rtscope adds only what a program that must never hang
//! needs: no prompt (`BatchMode`), a connect timeout, and keep-alives so
//! a dead link is noticed within seconds.
//!
//! Never implements SSH itself, never reads keys, never edits the
//! user's files. Each `ssh` runs in its own process group, so a Ctrl-C
//! meant for rtscope does not cut a command half-way.

use super::RemoteError;
use super::board::Target;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds `ssh` waits for the board to answer a connection.
const CONNECT_TIMEOUT_S: u32 = 10;
/// Keep-alives: a link silent for 3 × 5 s is taken as cut.
const ALIVE_INTERVAL_S: u32 = 5;
const ALIVE_COUNT: u32 = 3;

/// One command's connection to a board.
pub struct Link {
    target: Target,
    /// `ssh -F FILE` (`--ssh-config`), else the user's own.
    config: Option<PathBuf>,
    /// The private directory of the control socket.
    dir: tempdir::Dir,
}

/// What a command run on the board gave.
#[derive(Debug)]
pub struct Ran {
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Ran {
    /// `ssh` itself failed (255): the board was not reached, or the link
    /// was cut.
    pub fn link_failed(&self) -> bool {
        self.status == Some(255) || self.status.is_none()
    }

    pub fn ok(&self) -> bool {
        self.status == Some(0)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The last line ssh or the board wrote on standard error.
    pub fn last_error(&self) -> String {
        self.stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with("no answer within"))
            .map(str::to_string)
            .unwrap_or_else(|| match self.status {
                None => "no answer in time".to_string(),
                Some(c) => format!("ssh ended with status {c} and no message"),
            })
    }
}

impl Link {
    /// A link to `target` (no connection is made yet: the first command
    /// opens the shared one).
    pub fn new(target: Target, config: Option<&Path>) -> Result<Link, RemoteError> {
        Ok(Link {
            target,
            config: config.map(Path::to_path_buf),
            dir: tempdir::Dir::new().map_err(|e| {
                RemoteError::Local(format!(
                    "cannot make a private directory for the ssh connection: {e}"
                ))
            })?,
        })
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// `ssh` with rtscope's options and the board, before the remote
    /// command.
    fn ssh(&self, own_group: bool) -> Command {
        let mut c = Command::new("ssh");
        if own_group {
            c.process_group(0);
        }
        if let Some(f) = &self.config {
            c.arg("-F").arg(f);
        }
        let socket = self.dir.path().join("master");
        c.args(["-o", "BatchMode=yes"])
            .arg("-o")
            .arg(format!("ConnectTimeout={CONNECT_TIMEOUT_S}"))
            .arg("-o")
            .arg(format!("ServerAliveInterval={ALIVE_INTERVAL_S}"))
            .arg("-o")
            .arg(format!("ServerAliveCountMax={ALIVE_COUNT}"))
            .args(["-o", "ControlMaster=auto", "-o", "ControlPersist=60"])
            .arg("-o")
            .arg(format!("ControlPath={}", socket.display()));
        if let Some(p) = self.target.port {
            c.arg("-p").arg(p.to_string());
        }
        c.arg(self.target.destination());
        c
    }

    /// Run `script` with the board's `sh`, feeding it `input`; bounded by
    /// `limit` (the child is killed after it).
    pub fn run(&self, script: &str, input: &[u8], limit: Duration) -> Result<Ran, RemoteError> {
        let mut cmd = self.ssh(true);
        cmd.arg("--").arg(script);
        run_bounded(cmd, input, limit)
    }

    /// Run `script` on the board in the foreground, standard input, output
    /// and error passed through (a terminal is asked for when ours is
    /// one). Returns the remote exit status (255: ssh failed).
    pub fn foreground(&self, script: &str, tty: bool) -> Result<i32, RemoteError> {
        // In our own process group, which holds the terminal: with `-t`
        // a Ctrl-C reaches the board through its pseudo-terminal.
        let mut cmd = self.ssh(false);
        if tty {
            cmd.arg("-t");
        }
        cmd.arg("--").arg(script);
        let status = cmd
            .status()
            .map_err(|e| RemoteError::Local(format!("cannot run ssh: {e}")))?;
        Ok(status.code().unwrap_or(255))
    }

    /// Close the shared connection (what a dropped [`Link`] does).
    pub fn close(&self) {
        let mut c = self.ssh(true);
        c.args(["-O", "exit"]);
        let _ = run_bounded(c, b"", Duration::from_secs(5));
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if self.dir.path().join("master").exists() {
            self.close();
        }
    }
}

/// Run `cmd` with `input` on its standard input, collecting its output,
/// killing it after `limit`.
fn run_bounded(mut cmd: Command, input: &[u8], limit: Duration) -> Result<Ran, RemoteError> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => RemoteError::Local(
            "the OpenSSH client (ssh) is not installed here: apt-get install openssh-client".into(),
        ),
        _ => RemoteError::Local(format!("cannot run ssh: {e}")),
    })?;
    let feeder = child.stdin.take().map(|mut w| {
        let data = input.to_vec();
        std::thread::spawn(move || {
            let _ = w.write_all(&data);
        })
    });
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let status = wait_bounded(&mut child, limit);
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    match status {
        Some(code) => Ok(Ran {
            status: code,
            stdout,
            stderr,
        }),
        None => Ok(Ran {
            status: None,
            stdout,
            stderr: format!("{stderr}\nno answer within {} s", limit.as_secs()),
        }),
    }
}

fn reader(src: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut s) = src {
            let _ = s.read_to_end(&mut buf);
        }
        buf
    })
}

/// The child's exit code (`Some(None)`: killed by a signal), or `None`
/// when it ran past `limit` and was killed.
fn wait_bounded(child: &mut Child, limit: Duration) -> Option<Option<i32>> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s.code()),
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Quote `s` for the board's POSIX shell.
pub fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

mod tempdir {
    //! A private directory removed on drop (the control socket's: ssh
    //! refuses a socket path others can write).
    use std::os::unix::fs::DirBuilderExt;
    use std::path::{Path, PathBuf};

    pub struct Dir(PathBuf);

    /// The prefix of every such directory (then the PID of its rtscope).
    const PREFIX: &str = "rtscope-ssh.";

    impl Dir {
        pub fn new() -> std::io::Result<Dir> {
            let base = std::env::temp_dir();
            remove_stale(&base);
            for n in 0..100u32 {
                let p = base.join(format!(
                    "{PREFIX}{}.{}",
                    std::process::id(),
                    &crate::record::new_run_uuid()[..8 + (n as usize % 8)]
                ));
                match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                    Ok(()) => return Ok(Dir(p)),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(std::io::Error::other("no free name"))
        }

        pub fn path(&self) -> &Path {
            &self.0
        }
    }

    /// Remove the directories of rtscopes that were killed (their PID is
    /// gone): ours by name, and empty but for a dead socket.
    fn remove_stale(base: &Path) {
        let Ok(entries) = std::fs::read_dir(base) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .strip_prefix(PREFIX)
                .and_then(|r| r.split('.').next())
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            let mine = e.metadata().is_ok_and(|m| {
                use std::os::unix::fs::MetadataExt;
                m.is_dir() && m.uid() == crate::sys::sched::euid()
            });
            if mine && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_plain_words_and_wraps_the_rest() {
        assert_eq!(quote("/a/b-c_1.toml"), "/a/b-c_1.toml");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
