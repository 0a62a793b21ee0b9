//! Boards: where a remote command goes. A board is an `ssh://` URL
//! (`ssh://[USER@]HOST[:PORT]`, HOST may be an alias of the user's
//! `~/.ssh/config`) or a name kept in a small TOML file (`rtscope boards
//! add NAME URL`): `$RTSCOPE_BOARDS`, else
//! `$XDG_CONFIG_HOME/rtscope/boards.toml`, else
//! `~/.config/rtscope/boards.toml`.
//!
//! The file is the user's: written atomically through [`crate::output`]
//! (a symbolic link is followed, never replaced); a file rtscope cannot
//! read is refused, never overwritten.

use super::RemoteError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How to reach a board with `ssh`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl Target {
    /// `[USER@]HOST`, as `ssh` takes it.
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// The URL that names it.
    pub fn url(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let user = self
            .user
            .as_ref()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("ssh://{user}{host}{port}")
    }

    /// Read `ssh://[USER@]HOST[:PORT]` (an IPv6 host in brackets).
    pub fn parse(url: &str) -> Result<Target, RemoteError> {
        let bad = |why: &str| {
            RemoteError::Usage(format!(
                "'{url}' is no board URL ({why}): write ssh://[USER@]HOST[:PORT], or a board name (rtscope boards list)"
            ))
        };
        let rest = url
            .strip_prefix("ssh://")
            .ok_or_else(|| bad("it must start with ssh://"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('?') {
            return Err(bad("a path or query means nothing here"));
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) if valid_word(u) => (Some(u.to_string()), h),
            Some(_) => return Err(bad("the user name is not a plain word")),
            None => (None, rest),
        };
        let (host, port) =
            split_port(hostport).ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        // A host that starts with '-' would read as an ssh option.
        let first_ok = host.starts_with(|c: char| c.is_ascii_alphanumeric()) || host.contains(':');
        if !first_ok
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_:".contains(c))
        {
            return Err(bad("the host is empty or not a host name"));
        }
        Ok(Target { user, host, port })
    }
}

/// HOST and PORT of `host[:port]` or `[v6]:port`; `None` for a bad port.
fn split_port(s: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = if let Some(r) = s.strip_prefix('[') {
        let (h, after) = r.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p > 0)?),
        None => None,
    };
    Some((host.to_string(), port))
}

fn valid_word(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// A board: the name its runs are recorded under, and how to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    pub name: String,
    pub target: Target,
}

impl Board {
    /// `--on WHAT`: a URL (named by its host), or a board of the file.
    pub fn resolve(what: &str) -> Result<Board, RemoteError> {
        if what.starts_with("ssh://") {
            let target = Target::parse(what)?;
            return Ok(Board {
                name: target.host.clone(),
                target,
            });
        }
        let file = BoardsFile::load_default()?;
        match file.boards.get(what) {
            Some(url) => Ok(Board {
                name: what.to_string(),
                target: Target::parse(url)?,
            }),
            None => Err(RemoteError::Usage(format!(
                "no board named '{what}' in {}: add it with `rtscope boards add {what} ssh://[USER@]HOST[:PORT]`, or give its ssh:// URL",
                file.path.display()
            ))),
        }
    }
}

/// The boards file.
#[derive(Debug)]
pub struct BoardsFile {
    pub path: PathBuf,
    /// Name → URL.
    pub boards: BTreeMap<String, String>,
}

#[derive(serde::Deserialize, serde::Serialize, Default)]
#[serde(deny_unknown_fields)]
struct FileForm {
    #[serde(default)]
    boards: BTreeMap<String, Entry>,
}

#[derive(serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    url: String,
}

impl BoardsFile {
    /// Where the boards are kept.
    pub fn default_path() -> Result<PathBuf, RemoteError> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(p) = env("RTSCOPE_BOARDS") {
            return Ok(p);
        }
        let config = env("XDG_CONFIG_HOME")
            .or_else(|| env("HOME").map(|h| h.join(".config")))
            .ok_or_else(|| {
                RemoteError::Usage(
                    "no HOME nor XDG_CONFIG_HOME: set RTSCOPE_BOARDS to the boards file".into(),
                )
            })?;
        Ok(config.join("rtscope").join("boards.toml"))
    }

    pub fn load_default() -> Result<BoardsFile, RemoteError> {
        BoardsFile::load(&BoardsFile::default_path()?)
    }

    /// Read `path` (missing: no boards).
    pub fn load(path: &Path) -> Result<BoardsFile, RemoteError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => {
                return Err(RemoteError::Usage(format!(
                    "cannot read the boards file {}: {e}",
                    path.display()
                )));
            }
        };
        let form: FileForm = toml::from_str(&text).map_err(|e| {
            RemoteError::Usage(format!(
                "the boards file {} is not what rtscope writes ({}): mend or remove it",
                path.display(),
                e.message().trim()
            ))
        })?;
        let mut boards = BTreeMap::new();
        for (name, e) in form.boards {
            Target::parse(&e.url)?;
            boards.insert(name, e.url);
        }
        Ok(BoardsFile {
            path: path.to_path_buf(),
            boards,
        })
    }

    /// Add (or change) board `name`.
    pub fn add(&mut self, name: &str, url: &str) -> Result<(), RemoteError> {
        if !valid_word(name) || name.starts_with("ssh:") {
            return Err(RemoteError::Usage(format!(
                "'{name}' is no board name: use letters, digits, '.', '_' and '-'"
            )));
        }
        let target = Target::parse(url)?;
        self.boards.insert(name.to_string(), target.url());
        Ok(())
    }

    /// Remove board `name`; false when there was none.
    pub fn remove(&mut self, name: &str) -> bool {
        self.boards.remove(name).is_some()
    }

    /// Write the file (its directory is made when missing: it is
    /// rtscope's own configuration directory).
    pub fn save(&self) -> Result<(), RemoteError> {
        let form = FileForm {
            boards: self
                .boards
                .iter()
                .map(|(n, u)| (n.clone(), Entry { url: u.clone() }))
                .collect(),
        };
        let text = format!(
            "# Boards of rtscope (`rtscope boards add NAME URL`; `--on NAME`).\n{}",
            toml::to_string(&form).unwrap_or_default()
        );
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| RemoteError::Local(format!("cannot make {}: {e}", dir.display())))?;
        }
        crate::output::write_atomic(&self.path, text.as_bytes())
            .map_err(|e| RemoteError::Local(format!("{e:#}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_and_written_back() {
        let t = Target::parse("ssh://root@pi4:2222").unwrap();
        assert_eq!(
            (t.user.as_deref(), t.host.as_str(), t.port),
            (Some("root"), "pi4", Some(2222))
        );
        assert_eq!(t.destination(), "root@pi4");
        assert_eq!(t.url(), "ssh://root@pi4:2222");
        let t = Target::parse("ssh://lab-rt/").unwrap();
        assert_eq!(
            (t.user.clone(), t.port, t.url()),
            (None, None, "ssh://lab-rt".to_string())
        );
        let t = Target::parse("ssh://[::1]:22").unwrap();
        assert_eq!(
            (t.host.as_str(), t.url()),
            ("::1", "ssh://[::1]:22".to_string())
        );
        for bad in [
            "pi4",
            "http://pi4",
            "ssh://",
            "ssh://pi4:0",
            "ssh://pi4:x",
            "ssh://a b",
            "ssh://pi4/path",
            "ssh://us er@pi4",
            "ssh://-oProxyCommand=x",
        ] {
            let t = Target::parse(bad);
            assert!(
                t.is_err()
                    || t.as_ref()
                        .unwrap()
                        .host
                        .starts_with(|c: char| c.is_ascii_alphanumeric()),
                "{bad}: {t:?}"
            );
        }
    }

    #[test]
    fn a_host_never_reads_as_an_ssh_option() {
        // `ssh -oProxyCommand=...` would run a command: a host must start
        // with a letter or digit (or be an IPv6 address in brackets).
        assert!(Target::parse("ssh://-oProxyCommand=x").is_err());
        assert!(Target::parse("ssh://-p@pi").is_err());
    }

    #[test]
    fn the_file_keeps_names_and_refuses_what_it_cannot_read() {
        let dir = std::env::temp_dir().join(format!("rtscope-boards-{}", std::process::id()));
        let path = dir.join("sub").join("boards.toml");
        let mut f = BoardsFile::load(&path).unwrap();
        assert!(f.boards.is_empty());
        f.add("pi4", "ssh://root@pi4").unwrap();
        f.add("rt", "ssh://root@127.0.0.1:2222").unwrap();
        assert!(f.add("ssh://x", "ssh://x").is_err());
        assert!(f.add("pi", "pi").is_err());
        f.save().unwrap();
        let mut g = BoardsFile::load(&path).unwrap();
        assert_eq!(g.boards.len(), 2);
        assert_eq!(g.boards["rt"], "ssh://root@127.0.0.1:2222");
        assert!(g.remove("pi4") && !g.remove("pi4"));
        std::fs::write(&path, "[boards.x]\nurl = 3\n").unwrap();
        assert!(BoardsFile::load(&path).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
