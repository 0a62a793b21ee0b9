//! Remote runs (`rtscope --on BOARD ...`) through the real OpenSSH client
//! against a real sshd on loopback ([`Sshd`]): this machine, as root with
//! its own XDG directories, is the board. Facts only: what arrives in the
//! local store, what stays on the board, exit codes and messages; never a
//! latency.

use crate::sshd::Sshd;
use crate::util::*;
use rtscope::store::{RunRow, RunState, Store};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A workstation (its own store and boards file) and a board `b`.
struct Bench {
    sshd: Sshd,
    dir: TempDir,
}

impl Bench {
    fn new(name: &str) -> Option<Bench> {
        if !require_root() {
            return None;
        }
        let sshd = Sshd::start(name)?;
        let b = Bench {
            sshd,
            dir: TempDir::new(&format!("remote-{name}")),
        };
        let url = format!("ssh://board:{}", b.sshd.port());
        let o = b.run(&["boards", "add", "b", &url]);
        assert_code(&o, 0);
        Some(b)
    }

    fn db(&self) -> PathBuf {
        self.dir.join("local.db")
    }

    /// `rtscope --db LOCAL --ssh-config CONFIG ARGS` on the workstation.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = rtscope(self.dir.path());
        c.env("RTSCOPE_BOARDS", self.dir.join("boards.toml"))
            .arg("--db")
            .arg(self.db())
            .arg("--ssh-config")
            .arg(self.sshd.config())
            .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        wait_output(
            self.cmd(args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
            Duration::from_secs(180),
        )
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// rtscope's directory on the board.
    fn board_cache(&self) -> PathBuf {
        self.sshd.board_dir().join("cache").join("rtscope")
    }

    /// The board's own store.
    fn board_db(&self) -> PathBuf {
        self.sshd
            .board_dir()
            .join("data")
            .join("rtscope")
            .join("rtscope.db")
    }

    /// Wait until a run measures on the board (its folder has its uuid).
    fn wait_started(&self) {
        wait_until(
            "a run to start on the board",
            Duration::from_secs(120),
            || self.run_folders().iter().any(|f| f.join("uuid").exists()),
        );
    }

    /// Run folders left on the board.
    fn run_folders(&self) -> Vec<PathBuf> {
        list(&self.board_cache().join("runs"))
    }

    /// The runs of the local store.
    fn local_runs(&self) -> Vec<RunRow> {
        runs_of(&self.db())
    }
}

/// The runs of a store, oldest first.
fn runs_of(db: &Path) -> Vec<RunRow> {
    match Store::open_existing(db).unwrap() {
        Some(s) => s.list().unwrap(),
        None => Vec::new(),
    }
}

fn list(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_run_on_a_board_arrives_here_whole_under_the_boards_name() {
    let Some(b) = Bench::new("whole") else {
        return;
    };
    let _g = shared_system();
    let json = b.dir.join("here.json");
    let o = b.run(&[
        "--on",
        "b",
        "measure",
        "-D",
        "2s",
        "-t",
        "1",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("copied here as run 1"), "{err}");
    // The board's summary came back.
    assert!(stdout(&o).contains("verdict:"), "{}", stdout(&o));
    // The record here: the board's name as host, the settings' command.
    let rec = read_json(&json);
    assert_eq!(rec["fingerprint"]["hostname"], "b");
    assert_eq!(rec["source"]["command_line"][0], "rtscope");
    assert_eq!(rec["source"]["command_line"][1], "measure");
    let runs = b.local_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].state, RunState::Complete);
    assert_eq!(runs[0].uuid, rec["run_uuid"].as_str().unwrap());
    assert_eq!(runs[0].host, "b");
    let o = b.run(&["runs", "--host", "b"]);
    assert!(stdout(&o).lines().count() == 2, "{}", stdout(&o));
    // The same run, whole, in the board's store.
    let theirs = runs_of(&b.board_db());
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0].samples, runs[0].samples);
    assert!(runs[0].samples > 0);
    // On the board: one binary, no run folder.
    assert!(b.run_folders().is_empty(), "{:?}", b.run_folders());
    let bins = list(&b.board_cache().join("bin"));
    assert_eq!(bins.len(), 1, "{bins:?}");
    // A second run reuses the binary; fetch copies nothing twice.
    let o = b.run(&["--on", "b", "measure", "-D", "1s", "-t", "1", "-q"]);
    assert_code(&o, 0);
    assert_eq!(list(&b.board_cache().join("bin")), bins);
    for _ in 0..2 {
        let o = b.run(&["fetch", "b"]);
        assert_code(&o, 0);
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert!(out.lines().all(|l| l.contains("already here")), "{out}");
    }
    assert_eq!(b.local_runs().len(), 2);
}

#[test]
fn a_cut_link_or_a_killed_workstation_loses_nothing() {
    let Some(b) = Bench::new("cut") else {
        return;
    };
    let _g = shared_system();
    // The link cut twice while the run measures: the run goes on there,
    // rtscope here reconnects and brings it whole.
    let child = b.spawn(&["--on", "b", "measure", "-D", "6s", "-t", "1", "-q"]);
    // Cut once the run measures there (before, the start itself would be
    // cut, and that is refused with exit 2, as it should be).
    b.wait_started();
    b.sshd.kill_sessions();
    std::thread::sleep(Duration::from_secs(2));
    b.sshd.kill_sessions();
    let o = wait_output(child, Duration::from_secs(120));
    assert_code(&o, 0);
    let runs = b.local_runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0].state, RunState::Complete);
    let theirs = runs_of(&b.board_db());
    assert_eq!(theirs[0].samples, runs[0].samples);

    // rtscope here killed in the middle: the run ends on the board, its
    // folder waits there, and fetch brings it once.
    let json = b.dir.join("late.json");
    let mut child = b.spawn(&[
        "--on",
        "b",
        "measure",
        "-D",
        "4s",
        "-t",
        "1",
        "-q",
        "--checkpoint",
        "1",
        "--json",
        json.to_str().unwrap(),
    ]);
    b.wait_started();
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap();
    let _ = child.wait();
    wait_until(
        "the run to end on the board",
        Duration::from_secs(60),
        || b.run_folders().iter().any(|f| f.join("exit").exists()),
    );
    let o = b.run(&["fetch", "b"]);
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("copied here as run 2"),
        "{}",
        stderr(&o)
    );
    let o = b.run(&["fetch", "b"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.lines().count() == 2 && out.lines().all(|l| l.contains("already here")),
        "{out}"
    );
    // Every run once, whole; the --json asked for is here; the folder
    // is gone.
    let runs = b.local_runs();
    let theirs = runs_of(&b.board_db());
    assert_eq!(runs.len(), 2, "{runs:?}");
    for r in &theirs {
        let here: Vec<_> = runs.iter().filter(|l| l.uuid == r.uuid).collect();
        assert_eq!(here.len(), 1, "{r:?}");
        assert_eq!(here[0].samples, r.samples);
        assert_eq!(here[0].state, RunState::Complete);
    }
    assert_eq!(
        read_json(&json)["run_uuid"].as_str(),
        Some(runs[1].uuid.as_str())
    );
    assert!(b.run_folders().is_empty(), "{:?}", b.run_folders());
}

#[test]
fn ctrl_c_stops_the_run_on_the_board_and_keeps_what_it_measured() {
    let Some(b) = Bench::new("stop") else {
        return;
    };
    let _g = shared_system();
    let child = b.spawn(&["--on", "b", "measure", "-D", "120s", "-t", "1", "-q"]);
    // Once the run measures on the board, Ctrl-C.
    b.wait_started();
    std::thread::sleep(Duration::from_secs(1));
    // SAFETY: kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = wait_output(child, Duration::from_secs(60));
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("stopping the run on board b"),
        "{}",
        stderr(&o)
    );
    let runs = b.local_runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].state, RunState::Complete);
    let d = runs[0].duration_ns;
    assert!(d < 100_000_000_000, "the run was not stopped: {d} ns");
    assert!(b.run_folders().is_empty());
}

#[test]
fn one_study_on_two_boards_gives_one_report_and_characterize_comes_back() {
    let Some(b) = Bench::new("study") else {
        return;
    };
    let _g = shared_system();
    // A second board: another sshd, with its own board directory, that
    // knows the workstation's key.
    let Some(other) = Sshd::start("study-c") else {
        return;
    };
    let ours = std::fs::read_to_string(b.sshd.key().with_extension("pub")).unwrap();
    let keys = other.key().with_file_name("authorized_keys");
    let mut all = std::fs::read_to_string(&keys).unwrap();
    all.push_str(&ours);
    std::fs::write(&keys, all).unwrap();
    let url = format!("ssh://127.0.0.1:{}", other.port());
    assert_code(&b.run(&["boards", "add", "c", &url]), 0);
    let study = b.dir.join("mini.toml");
    std::fs::write(
        &study,
        "name = \"remote-mini\"\nduration = \"1s\"\nrepetitions = 1\n[fixed]\nthreads = 1\n[matrix]\ninterval = [1000, 500]\n",
    )
    .unwrap();
    for board in ["b", "c"] {
        let o = b.run(&["--on", board, "study", study.to_str().unwrap(), "-q"]);
        assert_code(&o, 0);
        let err = stderr(&o);
        // Only the runs this study made come back, not the other board's.
        assert_eq!(err.matches("copied here as run").count(), 2, "{err}");
    }
    let runs = b.local_runs();
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert!(
        runs.iter().all(|r| r.state == RunState::Complete),
        "{runs:?}"
    );
    let hosts: Vec<&str> = runs.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(hosts, ["b", "b", "c", "c"]);
    // One report of the study on both boards, side by side, naming them.
    let html = b.dir.join("both.html");
    let o = b.run(&[
        "report",
        "--tag",
        "study=remote-mini",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    for board in ["b", "c"] {
        assert!(
            page.contains(&format!("<dt>host</dt><dd>{board}</dd>")),
            "no host {board}"
        );
    }
    let o = b.run(&[
        "report",
        "--tag",
        "study=remote-mini",
        "--host",
        "c",
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<dt>host</dt><dd>b</dd>"));
    // The study's own report is made there, from its state there, and
    // written here.
    let page = b.dir.join("study-b.html");
    let o = b.run(&[
        "--on",
        "b",
        "study",
        "report",
        "remote-mini",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .contains("remote-mini")
    );
    assert!(list(&b.board_cache().join("reports")).is_empty());
    // A characterization: run there, its --json written here, copied.
    let json = b.dir.join("c.json");
    let o = b.run(&[
        "--on",
        "b",
        "characterize",
        "--only",
        "clock-gettime",
        "-D",
        "200ms",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_code(&o, 0);
    assert!(read_json(&json)["uuid"].is_string());
    let o = b.run(&["runs", "--host", "b"]);
    assert!(stdout(&o).contains(" characterization "), "{}", stdout(&o));
    assert_eq!(b.local_runs().len(), 5);
    // doctor runs there, in the foreground.
    let o = b.run(&["--on", "b", "doctor"]);
    assert_code(&o, 0);
    assert!(stdout(&o).contains(" ok "), "{}", stdout(&o));
    assert!(b.run_folders().is_empty(), "{:?}", b.run_folders());
}

#[test]
fn bad_boards_and_binaries_are_refused_with_exit_2_before_anything_runs() {
    let Some(b) = Bench::new("bad") else {
        return;
    };
    let refused = |args: &[&str], says: &str| {
        let start = Instant::now();
        let o = b.run(args);
        assert_code(&o, 2);
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{args:?} took {:?}",
            start.elapsed()
        );
    };
    refused(&["--on", "nosuch", "measure"], "no board named 'nosuch'");
    refused(&["--on", "ssh://", "measure"], "no board URL");
    refused(
        &["--on", "ssh://-oProxyCommand=x", "measure"],
        "no board URL",
    );
    refused(
        &["--on", "b", "report", "1", "-o", "x.html"],
        "--on works with",
    );
    refused(&["--binary", "/bin/sh", "runs"], "--binary goes with --on");
    // Nothing listens there.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    refused(
        &[
            "--on",
            &format!("ssh://root@127.0.0.1:{port}"),
            "measure",
            "-D",
            "1s",
        ],
        "cannot reach board",
    );
    // A key the board does not know.
    let other = b.dir.join("other_key");
    let k = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other)
        .status()
        .unwrap();
    assert!(k.success());
    let cfg = std::fs::read_to_string(b.sshd.config()).unwrap();
    let bad_cfg = b.dir.join("bad_ssh_config");
    std::fs::write(
        &bad_cfg,
        cfg.replace(b.sshd.key().to_str().unwrap(), other.to_str().unwrap()),
    )
    .unwrap();
    let o = wait_output(
        rtscope(b.dir.path())
            .env("RTSCOPE_BOARDS", b.dir.join("boards.toml"))
            .args([
                "--ssh-config",
                bad_cfg.to_str().unwrap(),
                "--on",
                "b",
                "doctor",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        Duration::from_secs(60),
    );
    assert_code(&o, 2);
    assert!(stderr(&o).contains("BatchMode"), "{}", stderr(&o));
    // Binaries: not rtscope, another machine's.
    refused(
        &["--on", "b", "--binary", "/bin/sh", "doctor"],
        "not an rtscope binary",
    );
    let arm = b.dir.join("arm-rtscope");
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[18] = 183; // EM_AARCH64
    std::fs::write(&arm, &elf).unwrap();
    refused(
        &["--on", "b", "--binary", arm.to_str().unwrap(), "doctor"],
        "not built for the board's x86_64",
    );
    // Nothing was measured, nothing left on the board but what a check
    // needs: no run folder, no run.
    assert!(b.run_folders().is_empty());
    assert!(runs_of(&b.board_db()).is_empty());
    assert!(!b.db().exists() || b.local_runs().is_empty());
}

#[test]
fn a_board_without_a_build_here_uses_its_own_rtscope_of_this_version_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(b) = Bench::new("installed") else {
        return;
    };
    let dir = b.sshd.board_dir().join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = |name: &str, text: &str| {
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // The board says it is an i686 machine: no build for it is here.
    script(
        "uname",
        "#!/bin/sh\nif [ \"$1\" = -m ]; then echo i686; else exec /bin/uname \"$@\"; fi\n",
    );
    let o = b.run(&["--on", "b", "doctor"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("install rtscope's package of this version on board b"),
        "{}",
        stderr(&o)
    );
    // Its own rtscope, of another version: refused, both named.
    script("rtscope", "#!/bin/sh\necho rtscope 0.0.1\n");
    let o = b.run(&["--on", "b", "doctor"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("it is rtscope 0.0.1 where this is rtscope "),
        "{}",
        stderr(&o)
    );
    // This very version (the package installed there): used, nothing sent.
    std::fs::remove_file(dir.join("rtscope")).unwrap();
    std::os::unix::fs::symlink(bin(), dir.join("rtscope")).unwrap();
    let o = b.run(&["--on", "b", "runs"]);
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("using the rtscope installed on board b"),
        "{}",
        stderr(&o)
    );
    assert!(list(&b.board_cache().join("bin")).is_empty());
}

#[test]
fn boards_are_added_listed_and_removed() {
    let dir = TempDir::new("boards");
    let file = dir.join("cfg").join("boards.toml");
    let run = |args: &[&str]| {
        rtscope(dir.path())
            .env("RTSCOPE_BOARDS", &file)
            .args(args)
            .output()
            .unwrap()
    };
    assert_code(
        &run(&["boards", "add", "pi4", "ssh://root@pi4.lab:2222"]),
        0,
    );
    assert_code(&run(&["boards", "add", "rt", "ssh://lab-rt"]), 0);
    let o = run(&["boards"]);
    assert_code(&o, 0);
    assert_eq!(
        stdout(&o),
        "pi4\tssh://root@pi4.lab:2222\nrt\tssh://lab-rt\n"
    );
    assert_code(&run(&["boards", "add", "x", "pi4"]), 2);
    assert_code(&run(&["boards", "remove", "pi4"]), 0);
    let o = run(&["boards", "remove", "pi4"]);
    assert_code(&o, 2);
    assert!(stderr(&o).contains("no board named 'pi4'"));
    assert_eq!(stdout(&run(&["boards", "list"])), "rt\tssh://lab-rt\n");
}
