//! A real OpenSSH server on loopback for the remote-run tests (`rtscope
//! --on ssh://…`): this machine, as root, plays the board. Each [`Sshd`]
//! has its own temporary directory (host key, client key pair, server and
//! client configs, log), a free port on 127.0.0.1, and a session
//! environment (`SetEnv XDG_*`) that keeps the board's files in that
//! directory, never in root's home, and its CPU locks too
//! (`RTSCOPE_RUN_DIR`: boards measure side by side, as the other tests
//! do); the board's `bin/` comes first on its PATH (programs a test puts
//! there: a board's own rtscope, a `uname` of another machine). The system's sshd is never started or used. [`Sshd::kill_sessions`] cuts every connection while the server
//! keeps listening: the link lost in the middle of a run.

#![allow(dead_code)]

use crate::metrics::free_port;
use crate::util::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, TcpStream};
use std::os::unix::fs::DirBuilderExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// sshd's privilege-separation directory (Debian's build): the
/// unauthenticated child of every connection chroots there.
const PRIVSEP_DIR: &str = "/run/sshd";

/// How long the server may take to listen, and processes to end.
const PATIENCE: Duration = Duration::from_secs(10);

/// An sshd of our own on 127.0.0.1, stopped when dropped.
pub struct Sshd {
    listener: Option<Child>,
    port: u16,
    dir: TempDir,
    _privsep: PrivsepDir,
}

impl Sshd {
    /// A new server, listening; `None` (the test is skipped, with the
    /// reason) where OpenSSH or root is missing. The kernel stops the
    /// server if the thread that started it ends first: keep it within
    /// the test that made it.
    pub fn start(name: &str) -> Option<Sshd> {
        if !require_root() {
            return None;
        }
        if let Some(missing) = missing_prerequisite()
            && !require(
                Need::Tool,
                false,
                &format!("{missing}: scripts/install-deps.sh installs OpenSSH"),
            )
        {
            return None;
        }
        let dir = TempDir::new(&format!("sshd-{name}"));
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client_key"));
        copy(&dir.join("client_key.pub"), &dir.join("authorized_keys"));
        let mut sshd = Sshd {
            listener: None,
            port: free_port(),
            dir,
            _privsep: PrivsepDir::acquire(),
        };
        write(&sshd.dir.join("sshd_config"), &sshd.server_config());
        sshd.check_server_config();
        sshd.listener = Some(sshd.spawn_listener());
        sshd.wait_listening();
        write(&sshd.config(), &sshd.client_config());
        Some(sshd)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The client configuration: `ssh -F CONFIG board` reaches the server
    /// as root with our key (host `127.0.0.1` works too, with `-p PORT`).
    pub fn config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    pub fn url(&self) -> String {
        format!("ssh://root@127.0.0.1:{}", self.port)
    }

    /// Where the board keeps its files: sessions have `XDG_CACHE_HOME`,
    /// `XDG_DATA_HOME` and `XDG_CONFIG_HOME` under it (`HOME` is still
    /// root's).
    pub fn board_dir(&self) -> PathBuf {
        self.dir.join("board")
    }

    /// The client's private key.
    pub fn key(&self) -> PathBuf {
        self.dir.join("client_key")
    }

    /// `ssh -F CONFIG board`: add the remote command.
    pub fn ssh(&self) -> Command {
        let mut c = Command::new("ssh");
        c.arg("-F").arg(self.config()).arg("board");
        c
    }

    /// What the server logged so far (for assertion messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// Cut every open connection (a multiplexed master's too) and keep
    /// listening: every sshd process under the listener (a connection's
    /// process, and its privilege-separated child where there is one) is
    /// killed, and gone on return. The board's commands are left running
    /// with their pipes closed, as after a real link loss; they are no
    /// longer under the listener, so [`Sshd::stop`] does not reach them.
    pub fn kill_sessions(&self) {
        let Some(listener) = self.listener_pid() else {
            return;
        };
        let sessions: Vec<i32> = descendants(listener)
            .into_iter()
            .filter(|&p| comm(p).is_some_and(|c| c.starts_with("sshd")))
            .collect();
        signal(&sessions, libc::SIGKILL);
        wait_until("the killed sessions end", PATIENCE, || {
            sessions.iter().all(|&p| !alive(p))
        });
    }

    /// Stop the listener, its sessions and their commands (SIGTERM, then
    /// SIGKILL for what is left after a while), and wait for them.
    pub fn stop(&mut self) {
        let Some(mut listener) = self.listener.take() else {
            return;
        };
        let tree = descendants(listener.id() as i32);
        signal(&[listener.id() as i32], libc::SIGTERM);
        signal(&tree, libc::SIGTERM);
        if wait_timeout(&mut listener).is_none() {
            let _ = listener.kill();
            let _ = listener.wait();
        }
        let give_up = Instant::now() + PATIENCE;
        while tree.iter().any(|&p| alive(p)) && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(20));
        }
        let left: Vec<i32> = tree.into_iter().filter(|&p| alive(p)).collect();
        signal(&left, libc::SIGKILL);
    }

    fn listener_pid(&self) -> Option<i32> {
        self.listener.as_ref().map(|c| c.id() as i32)
    }

    fn server_config(&self) -> String {
        let d = self.dir.path().display();
        let board = self.board_dir();
        let board = board.display();
        format!(
            "ListenAddress 127.0.0.1\n\
             Port {port}\n\
             HostKey {d}/host_key\n\
             PidFile {d}/sshd.pid\n\
             AuthorizedKeysFile {d}/authorized_keys\n\
             PermitRootLogin prohibit-password\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             UsePAM no\n\
             StrictModes no\n\
             Subsystem sftp internal-sftp\n\
             SetEnv XDG_CACHE_HOME={board}/cache XDG_DATA_HOME={board}/data XDG_CONFIG_HOME={board}/config RTSCOPE_RUN_DIR={board}/run PATH={board}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
            port = self.port
        )
    }

    fn client_config(&self) -> String {
        format!(
            "Host board 127.0.0.1\n\
             \tHostName 127.0.0.1\n\
             \tPort {port}\n\
             \tUser root\n\
             \tIdentityFile {key}\n\
             \tIdentitiesOnly yes\n\
             \tStrictHostKeyChecking no\n\
             \tUserKnownHostsFile /dev/null\n\
             \tLogLevel ERROR\n\
             \tBatchMode yes\n",
            port = self.port,
            key = self.key().display()
        )
    }

    /// `sshd -t`: a bad configuration said plainly, before starting.
    fn check_server_config(&self) {
        run(
            Command::new(SSHD)
                .arg("-t")
                .arg("-f")
                .arg(self.dir.join("sshd_config")),
            "checking the sshd configuration",
        );
    }

    /// `sshd -D -e`, its log in the temporary directory; SIGTERM when the
    /// starting thread ends, and none of our descriptors (a measuring
    /// lock) inherited.
    fn spawn_listener(&self) -> Child {
        let log_path = self.dir.join("sshd.log");
        let log = std::fs::File::create(&log_path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", log_path.display()));
        let mut c = Command::new(SSHD);
        c.args(["-D", "-e", "-f"])
            .arg(self.dir.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // SAFETY: only async-signal-safe system calls between fork and exec.
        unsafe {
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                libc::close_range(3, libc::c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC as i32);
                Ok(())
            });
        }
        c.spawn().unwrap_or_else(|e| panic!("starting {SSHD}: {e}"))
    }

    /// Until the server has bound its port (it writes its pid file then)
    /// and accepts a connection; a server that exits is a failure, with
    /// its log.
    fn wait_listening(&mut self) {
        let pid_file = self.dir.join("sshd.pid");
        let pid = self
            .listener_pid()
            .expect("the listener was started")
            .to_string();
        let give_up = Instant::now() + PATIENCE;
        loop {
            if let Some(Ok(Some(status))) = self.listener.as_mut().map(Child::try_wait) {
                panic!("sshd exited ({status}) before listening:\n{}", self.log());
            }
            let bound = std::fs::read_to_string(&pid_file).is_ok_and(|s| s.trim() == pid);
            if bound && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            assert!(
                Instant::now() < give_up,
                "sshd did not listen on 127.0.0.1:{} within {PATIENCE:?}:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What `Sshd::start` needs and lacks, if anything.
fn missing_prerequisite() -> Option<&'static str> {
    if !Path::new(SSHD).is_file() {
        Some(SSHD)
    } else if !in_path("ssh-keygen") {
        Some("ssh-keygen")
    } else if !in_path("ssh") {
        Some("ssh (the client)")
    } else {
        None
    }
}

fn in_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A new ed25519 key pair without passphrase: `PATH` and `PATH.pub`.
fn keygen(path: &Path) {
    run(
        Command::new("ssh-keygen")
            .args(["-t", "ed25519", "-N", "", "-q", "-C", "rtscope-test", "-f"])
            .arg(path),
        &format!("making the key {}", path.display()),
    );
}

/// Run to the end; fail with `what`, the status and standard error.
fn run(c: &mut Command, what: &str) {
    let o = c
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{what}: {c:?}: {e}"));
    assert!(
        o.status.success(),
        "{what}: {c:?}: {}\n{}",
        o.status,
        stderr(&o)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

fn copy(from: &Path, to: &Path) {
    std::fs::copy(from, to)
        .unwrap_or_else(|e| panic!("copying {} to {}: {e}", from.display(), to.display()));
}

/// A use of /run/sshd: made (mode 755) by the first user if missing,
/// removed when the last user is gone, only if made here, still empty,
/// and no other sshd runs. Servers of parallel tests share it.
struct PrivsepDir;

/// (users now, whether we made the directory).
static PRIVSEP: Mutex<(usize, bool)> = Mutex::new((0, false));

impl PrivsepDir {
    fn acquire() -> PrivsepDir {
        let mut g = PRIVSEP.lock().unwrap_or_else(|e| e.into_inner());
        if g.0 == 0 && !Path::new(PRIVSEP_DIR).exists() {
            std::fs::DirBuilder::new()
                .mode(0o755)
                .create(PRIVSEP_DIR)
                .unwrap_or_else(|e| panic!("creating {PRIVSEP_DIR}: {e}"));
            g.1 = true;
        }
        g.0 += 1;
        PrivsepDir
    }
}

impl Drop for PrivsepDir {
    fn drop(&mut self) {
        let mut g = PRIVSEP.lock().unwrap_or_else(|e| e.into_inner());
        g.0 -= 1;
        // Left to any other sshd (someone's by hand) that came meanwhile;
        // remove_dir leaves it too if something was put in it.
        if g.0 == 0 && std::mem::take(&mut g.1) && !any_sshd_running() {
            let _ = std::fs::remove_dir(PRIVSEP_DIR);
        }
    }
}

/// Is any sshd process alive on this machine (ours are gone by now)?
fn any_sshd_running() -> bool {
    pids().any(|p| alive(p) && comm(p).is_some_and(|c| c.starts_with("sshd")))
}

/// Every process's id, from /proc.
fn pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
}

/// State and parent of a process, from /proc/PID/stat.
fn stat(pid: i32) -> Option<(char, i32)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold anything: skip past it.
    let mut fields = s.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?.chars().next()?;
    Some((state, fields.next()?.parse().ok()?))
}

fn comm(pid: i32) -> Option<String> {
    let c = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(c.trim_end().to_string())
}

/// Not gone, nor a zombie.
fn alive(pid: i32) -> bool {
    stat(pid).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X'))
}

/// Every process under `root` (not `root` itself), parents first.
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = pids().filter_map(|pid| Some((pid, stat(pid)?.1))).collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parents
                .iter()
                .filter(|&&(_, pp)| pp == parent)
                .map(|&(p, _)| p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

fn signal(pids: &[i32], sig: i32) {
    for &p in pids {
        // SAFETY: plain kill(2) of processes under our own server.
        unsafe { libc::kill(p, sig) };
    }
}

/// The child's status if it ends within [`PATIENCE`].
fn wait_timeout(child: &mut Child) -> Option<ExitStatus> {
    let give_up = Instant::now() + PATIENCE;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= give_up {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The local addresses listening on TCP `port` (IPv4 and IPv6), from
/// /proc/net/tcp{,6}.
fn listening_addresses(port: u16) -> Vec<IpAddr> {
    let port = format!("{port:04X}");
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|l| {
                    let mut f = l.split_whitespace();
                    let local = f.nth(1)?;
                    let state = f.nth(1)?;
                    let (addr, p) = local.split_once(':')?;
                    (state == "0A" && p == port).then(|| kernel_address(addr))?
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An address as /proc/net/tcp writes it: 32-bit words in hex, each in
/// the machine's byte order.
fn kernel_address(hex: &str) -> Option<IpAddr> {
    let words = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok())
        .collect::<Option<Vec<u32>>>()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    match bytes.len() {
        4 => Some(IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).ok()?))),
        16 => Some(IpAddr::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(bytes).ok()?,
        ))),
        _ => None,
    }
}

#[test]
fn a_test_sshd_runs_commands_on_loopback() {
    if !require_root() {
        return;
    }
    let Some(sshd) = Sshd::start("loopback") else {
        return;
    };
    let port = sshd.port();

    // A command runs as root, with the board's files in our directory.
    let o = sshd
        .ssh()
        .arg("echo $XDG_DATA_HOME; id -u")
        .output()
        .unwrap();
    assert_code(&o, 0);
    let data = sshd.board_dir().join("data");
    assert_eq!(
        stdout(&o),
        format!("{}\n0\n", data.display()),
        "{}",
        sshd.log()
    );

    // Bound on loopback only.
    assert_eq!(
        listening_addresses(port),
        vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
    );

    // Cut the link under a running command: the client ends with ssh's
    // own failure status, the server still listens, the board's command
    // is left running.
    let mut client = sshd
        .ssh()
        .arg("sleep 30")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let listener = sshd.listener_pid().unwrap();
    let mut command = None;
    wait_until("the remote sleep starts", PATIENCE, || {
        command = descendants(listener)
            .into_iter()
            .find(|&p| comm(p).as_deref() == Some("sleep"));
        command.is_some()
    });
    let command = command.unwrap();
    sshd.kill_sessions();
    let status = wait_timeout(&mut client);
    let _ = client.kill();
    assert_eq!(status.and_then(|s| s.code()), Some(255), "{}", sshd.log());
    assert!(alive(command), "the board's command died with the link");
    signal(&[command], libc::SIGKILL);
    assert_eq!(
        listening_addresses(port),
        vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]
    );
    let o = sshd.ssh().arg("true").output().unwrap();
    assert_code(&o, 0);

    // Gone with the value: nothing listens, no process is left.
    drop(sshd);
    let left = listening_addresses(port);
    assert!(left.is_empty(), "still listening on {port}: {left:?}");
    assert!(!alive(listener), "the listener outlived its Sshd");
}
