//! A measurement on a board: sent as [`Settings`] (a TOML file in a run
//! folder on the board, never a command line rebuilt by hand), or a
//! study or a characterization sent as a request (`request.json`, written
//! by the command layer: `rtscope __request` runs it there), started
//! detached from the SSH session (`systemd-run` where systemd runs, else
//! `setsid`), so a dropped link never stops it; followed from here (its
//! output shown as it comes, the link re-made when it returns); stopped
//! on Ctrl-C; copied into the local store as it goes and at its end.
//!
//! The run folder `DIR/runs/JOB/` on the board holds `settings.toml` (or
//! `request.json`), `job.toml` (this machine's output paths, for `attach`), `out` and `err`
//! (the run's output), `pid`, `uuid` (the run's, once it is known) and
//! `exit` (its exit status, once it has ended). It is removed once the
//! run is whole in the local store; the run stays in the board's store.

use super::ssh::quote;
use super::{Remote, RemoteError, sync};
use crate::measure::Settings;
use crate::store::push::Pushed;
use crate::store::{RunState, Store};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the run's output is asked for.
const POLL: Duration = Duration::from_millis(1000);
/// How often its last checkpoint is copied here while it runs.
const COPY_EVERY: Duration = Duration::from_secs(30);
/// How often a lost link is tried again.
const RETRY: Duration = Duration::from_secs(3);

/// What this machine wants of a run besides the store: its files.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LocalOutputs {
    /// `--json`: where the record goes here.
    pub json: Option<PathBuf>,
    /// `--histfile`: where cyclictest's histogram goes here.
    pub histfile: Option<PathBuf>,
}

/// How the run is shown and served.
#[derive(Clone, Debug, Default)]
pub struct Show {
    /// `-q`: only the summary.
    pub quiet: bool,
    /// The board serves `--metrics` on this address.
    pub metrics: Option<String>,
    /// `--metrics-auth`'s file (copied to the board).
    pub metrics_auth: Option<PathBuf>,
    /// `--metrics-linger`, in ns.
    pub metrics_linger_ns: u64,
}

/// A run folder on the board.
pub struct Job<'a> {
    remote: &'a Remote,
    pub id: String,
    pub dir: String,
    /// Bytes of `out` and `err` already shown.
    shown: (u64, u64),
    uuid: Option<String>,
    outputs: LocalOutputs,
}

/// The signals of a followed run: the first Ctrl-C (or SIGTERM) stops
/// the run on the board (it writes its results there), the next one stops
/// waiting for it; SIGHUP (the terminal went away) leaves it running.
pub struct Signals {
    stop: Arc<AtomicBool>,
    hangup: Arc<AtomicBool>,
    /// SIGUSR1: passed on (the board's rtscope prints where it stands).
    summary: Arc<AtomicBool>,
}

impl Signals {
    pub fn install() -> Result<Signals, RemoteError> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
        let stop = Arc::new(AtomicBool::new(false));
        let hangup = Arc::new(AtomicBool::new(false));
        let summary = Arc::new(AtomicBool::new(false));
        let err =
            |e: std::io::Error| RemoteError::Local(format!("installing signal handlers: {e}"));
        for s in [SIGINT, SIGTERM] {
            signal_hook::flag::register(s, stop.clone()).map_err(err)?;
        }
        signal_hook::flag::register(SIGHUP, hangup.clone()).map_err(err)?;
        signal_hook::flag::register(SIGUSR1, summary.clone()).map_err(err)?;
        Ok(Signals {
            stop,
            hangup,
            summary,
        })
    }
}

/// Measure `settings` on the board; the run's exit status (0, 1 when a
/// limit was exceeded, 2 on an error there).
pub fn measure(
    remote: &Remote,
    mut settings: Settings,
    show: &Show,
    local: &mut Option<Store>,
) -> Result<i32, RemoteError> {
    let outputs = LocalOutputs {
        json: settings.json.take(),
        histfile: settings.histfile.take(),
    };
    let mut job = Job::new(remote, outputs)?;
    job.prepare_settings(&mut settings, show)?;
    let mut words = vec![
        "__measure-settings".to_string(),
        "settings.toml".into(),
        "--uuid-file".into(),
        "uuid".into(),
        if show.quiet { "-q" } else { "--live" }.into(),
    ];
    if let Some(m) = &show.metrics {
        words.extend(["--metrics".into(), m.clone()]);
        if show.metrics_auth.is_some() {
            words.extend(["--metrics-auth".into(), "metrics-auth".into()]);
        }
        words.extend([
            "--metrics-linger".into(),
            format!("{}ns", show.metrics_linger_ns),
        ]);
    }
    job.start(&words)?;
    job.follow(local, &Signals::install()?)
}

/// Run a request on the board detached (a study, a characterization),
/// followed as a measurement is; once it has ended, every run of the
/// board's store not whole here is copied. `name`: the command's;
/// `request` gives the request's text for the run folder it is given;
/// `json`: a `--json` file wanted here, which the request writes there as
/// [`RECORD_JSON`] in the folder.
pub fn detached(
    remote: &Remote,
    name: &str,
    request: impl FnOnce(&str) -> Result<String, RemoteError>,
    json: Option<PathBuf>,
    local: &mut Option<Store>,
) -> Result<i32, RemoteError> {
    let outputs = LocalOutputs {
        json,
        histfile: None,
    };
    let mut job = Job::new(remote, outputs)?;
    job.make_folder()?;
    job.write_job_file()?;
    job.start_request(name, &request(&job.dir)?)?;
    job.follow(local, &Signals::install()?)
}

/// The record a run folder's command writes for a `--json` wanted here.
pub const RECORD_JSON: &str = "record.json";

/// The request file of a run folder.
const REQUEST: &str = "request.json";

impl<'a> Job<'a> {
    /// A new run folder's name (nothing is made yet); the local files
    /// asked for are checked first.
    fn new(remote: &'a Remote, outputs: LocalOutputs) -> Result<Job<'a>, RemoteError> {
        for (p, what) in [(&outputs.json, "--json"), (&outputs.histfile, "--histfile")] {
            if let Some(p) = p {
                crate::output::check_writable(p, what)
                    .map_err(|e| RemoteError::Usage(format!("{e:#}")))?;
            }
        }
        let id = format!(
            "{}-{}",
            crate::sys::clock::unix_now_ns() / 1_000_000_000,
            &crate::record::new_run_uuid()[..8]
        );
        Ok(Job {
            remote,
            dir: folder(remote, &id),
            id,
            shown: (0, 0),
            uuid: None,
            outputs,
        })
    }

    /// A run folder already on the board (`attach`, `fetch`): the files
    /// wanted here, and its run's uuid once it is known, read back.
    fn reopen(remote: &'a Remote, id: String) -> Result<Job<'a>, RemoteError> {
        let dir = folder(remote, &id);
        let outputs = remote
            .get_text(&format!("{dir}/job.toml"))?
            .and_then(|t| toml::from_str(&t).ok())
            .unwrap_or_default();
        let uuid = remote.get_text(&format!("{dir}/uuid"))?;
        Ok(Job {
            remote,
            id,
            dir,
            shown: (0, 0),
            uuid,
            outputs,
        })
    }

    fn make_folder(&self) -> Result<(), RemoteError> {
        self.remote.mkdir(&self.dir)
    }

    /// `job.toml`: this machine's output paths, for `attach` and `fetch`.
    fn write_job_file(&self) -> Result<(), RemoteError> {
        let job = toml::to_string(&self.outputs).unwrap_or_default();
        self.remote
            .put(&format!("{}/job.toml", self.dir), job.as_bytes())
    }

    /// The run folder's files: the settings (paths pointed into the
    /// folder), a load file and a metrics password copied there.
    fn prepare_settings(
        &mut self,
        settings: &mut Settings,
        show: &Show,
    ) -> Result<(), RemoteError> {
        let r = self.remote;
        self.make_folder()?;
        if self.outputs.json.is_some() {
            settings.json = Some(format!("{}/{RECORD_JSON}", self.dir).into());
        }
        if self.outputs.histfile.is_some() {
            settings.histfile = Some(format!("{}/hist.txt", self.dir).into());
        }
        if let Some(f) = settings.load.load_file.take() {
            let to = format!("{}/load.toml", self.dir);
            r.put(&to, &super::read_local(&f)?)?;
            settings.load.load_file = Some(to.into());
        }
        if let Some(f) = &show.metrics_auth {
            r.put(
                &format!("{}/metrics-auth", self.dir),
                &super::read_local(f)?,
            )?;
        }
        // The store is the board's (the global --db of its command).
        settings.db = None;
        settings.host.get_or_insert_with(|| r.board.name.clone());
        let text = toml::to_string(&settings.to_table()).unwrap_or_default();
        r.put(&format!("{}/settings.toml", self.dir), text.as_bytes())?;
        self.write_job_file()
    }

    /// Write `request` (of command `name`) into the folder and start
    /// `rtscope __request NAME` of it there, detached from this SSH
    /// session.
    fn start_request(&self, name: &str, request: &str) -> Result<(), RemoteError> {
        self.remote
            .put(&format!("{}/{REQUEST}", self.dir), request.as_bytes())?;
        self.start(&[
            "__request".to_string(),
            name.to_string(),
            REQUEST.to_string(),
        ])
    }

    /// Start `rtscope WORDS` in the folder, detached from this SSH
    /// session.
    fn start(&self, words: &[String]) -> Result<(), RemoteError> {
        let r = self.remote;
        let words: Vec<String> = words.iter().map(|w| quote(w)).collect();
        // The rtscope's PID is kept for Ctrl-C; its status once it ends.
        let inner = format!(
            "{} {} </dev/null >out 2>err & echo $! >pid; wait $!; echo $? >exit.part; mv exit.part exit",
            r.rtscope(),
            words.join(" ")
        );
        let d = quote(&self.dir);
        // The board's clock at the start: what a study or a
        // characterization made is told from older runs by it.
        let script = if r.systemd {
            format!(
                "cd {d} && date +%s >started && systemd-run --quiet --collect --unit=rtscope-{id} --working-directory={d} /bin/sh -c {q}",
                id = self.id,
                q = quote(&inner)
            )
        } else {
            format!(
                "cd {d} && date +%s >started && setsid -f /bin/sh -c {q} </dev/null >/dev/null 2>&1",
                q = quote(&inner)
            )
        };
        r.exec(&script, b"", Duration::from_secs(60), "start the run")
            .map(drop)
    }

    /// When the run started, by the board's clock (in ns, a second
    /// early): what it made is told from older runs by it.
    fn started_ns(&self) -> Result<Option<u64>, RemoteError> {
        Ok(self
            .remote
            .get_text(&format!("{}/started", self.dir))?
            .and_then(|t| t.parse::<u64>().ok())
            .map(|s| s.saturating_sub(1) * 1_000_000_000))
    }

    /// Show the run until it ends (or is left running), copy it, and
    /// give its exit status.
    fn follow(&mut self, local: &mut Option<Store>, signals: &Signals) -> Result<i32, RemoteError> {
        let name = self.remote.board.name.clone();
        let mut last_copy = Instant::now();
        let mut lost_since: Option<Instant> = None;
        let mut stopping = false;
        // Looks that found the process gone and no exit status (its
        // shell writes the status an instant after it ends).
        let mut dead = 0;
        loop {
            if signals.hangup.load(Ordering::SeqCst) {
                return Err(self.left_running("the terminal went away"));
            }
            if signals.stop.swap(false, Ordering::SeqCst) {
                if stopping {
                    return Err(self.left_running("a second Ctrl-C"));
                }
                stopping = true;
                eprintln!(
                    "rtscope: stopping the run on board {name}: it writes its results there, then they are copied here (Ctrl-C again: stop waiting)"
                );
                self.signal("INT");
            }
            if signals.summary.swap(false, Ordering::SeqCst) {
                self.signal("USR1");
            }
            match self.poll() {
                Ok(state) => {
                    if lost_since.take().is_some() {
                        eprintln!("rtscope: the link to board {name} is back");
                    }
                    if let Some(code) = state.exit {
                        return self.finish(local, code);
                    }
                    dead = if !state.alive && state.pid_known {
                        dead + 1
                    } else {
                        0
                    };
                    if dead >= 3 {
                        eprintln!(
                            "rtscope: the run on board {name} ended without an exit status (killed, or the board restarted): what it measured up to its last checkpoint is copied"
                        );
                        self.mark_ended();
                        return self.finish(local, 2);
                    }
                    if last_copy.elapsed() >= COPY_EVERY {
                        self.copy(local);
                        last_copy = Instant::now();
                    }
                    std::thread::sleep(POLL);
                }
                Err(RemoteError::Link(why)) => {
                    if lost_since.is_none() {
                        eprintln!(
                            "rtscope: lost the link to board {name} ({why}); the run goes on there. Trying again every {} s (Ctrl-C: leave it, then `rtscope attach {name}` or `rtscope fetch {name}`)",
                            RETRY.as_secs()
                        );
                        lost_since = Some(Instant::now());
                    }
                    if stopping {
                        return Err(self.left_running("Ctrl-C while the link was lost"));
                    }
                    self.remote.link.close();
                    std::thread::sleep(RETRY);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The error that says the run was left on the board.
    fn left_running(&self, why: &str) -> RemoteError {
        let name = &self.remote.board.name;
        RemoteError::Link(format!(
            "{why}: the run goes on on board {name}; `rtscope attach {name}` shows it again, `rtscope fetch {name}` copies it when it has ended"
        ))
    }

    /// Give a run that died without a status the status 2, so that
    /// `attach` and `fetch` take it as ended (best effort).
    fn mark_ended(&self) {
        let d = quote(&self.dir);
        let _ = self.remote.link.run(
            &format!("cd {d} && [ ! -f exit ] && echo 2 >exit"),
            b"",
            Duration::from_secs(20),
        );
    }

    /// Send `SIG` to the run's rtscope (best effort).
    fn signal(&self, sig: &str) {
        let d = quote(&self.dir);
        let _ = self.remote.link.run(
            &format!("cd {d} && [ -f pid ] && kill -{sig} \"$(cat pid)\""),
            b"",
            Duration::from_secs(20),
        );
    }

    /// Show what the run wrote since the last look; its state.
    fn poll(&mut self) -> Result<Polled, RemoteError> {
        let (oo, eo) = self.shown;
        let script = format!(
            r#"cd {d} 2>/dev/null || exit 3
x=$(cat exit 2>/dev/null || echo -); u=$(cat uuid 2>/dev/null || echo -)
a=-; if [ -f pid ]; then if kill -0 "$(cat pid)" 2>/dev/null; then a=1; else a=0; fi; fi
o=$(( $(wc -c <out 2>/dev/null || echo 0) + 0 )); e=$(( $(wc -c <err 2>/dev/null || echo 0) + 0 ))
[ "$o" -ge {oo} ] || o={oo}; [ "$e" -ge {eo} ] || e={eo}
echo "$x $u $a $o $e"
tail -c +$(({oo} + 1)) out 2>/dev/null | head -c $((o - {oo}))
tail -c +$(({eo} + 1)) err 2>/dev/null | head -c $((e - {eo}))"#,
            d = quote(&self.dir)
        );
        let ran = self
            .remote
            .link
            .run(&script, b"", Duration::from_secs(60))?;
        if ran.link_failed() {
            return Err(RemoteError::Link(ran.last_error()));
        }
        if ran.status == Some(3) {
            return Err(RemoteError::Board(format!(
                "the run folder {} is gone from board {}",
                self.dir, self.remote.board.name
            )));
        }
        let polled = Polled::parse(&ran.stdout).ok_or_else(|| {
            RemoteError::Board(format!(
                "board {} answered the follow-up unreadably: {}",
                self.remote.board.name,
                ran.last_error()
            ))
        })?;
        let rest = &ran.stdout[polled.head_len..];
        let out_n = (polled.out - oo) as usize;
        let err_n = (polled.err - eo) as usize;
        let (out, rest) = rest.split_at(out_n.min(rest.len()));
        let errb = &rest[..err_n.min(rest.len())];
        // The live lines (standard error) before the summary (standard
        // output): in one look, both may have come.
        let _ = std::io::stderr().write_all(errb);
        let _ = std::io::stdout().write_all(out);
        let _ = std::io::stdout().flush();
        self.shown = (oo + out.len() as u64, eo + errb.len() as u64);
        if polled.uuid.is_some() {
            self.uuid = polled.uuid.clone();
        }
        Ok(polled)
    }

    /// Copy the run's last state into the local store (best effort while
    /// it runs: the board keeps it anyway).
    fn copy(&self, local: &mut Option<Store>) -> Option<Pushed> {
        let (Some(store), Some(uuid)) = (local.as_mut(), self.uuid.as_deref()) else {
            return None;
        };
        match sync::copy_one(self.remote, store, uuid) {
            Ok(Some((_, p))) => Some(p),
            Ok(None) => None,
            Err(e) => {
                eprintln!(
                    "rtscope: warning: copying the run's checkpoint here failed: {e} (it is kept on the board)"
                );
                None
            }
        }
    }

    /// The run has ended with `code`: copy it whole, write the local
    /// files, and clear its folder on the board once nothing is lost.
    fn finish(&mut self, local: &mut Option<Store>, code: i32) -> Result<i32, RemoteError> {
        let name = self.remote.board.name.clone();
        let mut safe = true;
        if let (Some(store), None) = (local.as_mut(), &self.uuid) {
            let since = self.started_ns()?;
            safe = copy_all(self.remote, store, since)?;
        }
        if let (Some(store), Some(uuid)) = (local.as_mut(), self.uuid.clone())
            && let Some((listed, pushed)) = sync::copy_one(self.remote, store, &uuid)?
        {
            safe = listed.state != RunState::Running;
            match pushed {
                Pushed::Copied { id } | Pushed::AlreadyThere { id } | Pushed::Completed { id } => {
                    eprintln!(
                        "rtscope: copied here as run {id} in {} (measured on board {name}, {} there; `rtscope runs show {id}`)",
                        store.path().display(),
                        listed.state.name()
                    )
                }
                Pushed::Running => {}
            }
        }
        safe &= self.write_outputs()?;
        if safe {
            let _ = self.remote.link.run(
                &format!("rm -rf {}", quote(&self.dir)),
                b"",
                Duration::from_secs(30),
            );
        }
        Ok(code)
    }

    /// Copy `record.json` and `hist.txt` to where this machine wants
    /// them; false when one asked for is missing on the board.
    fn write_outputs(&self) -> Result<bool, RemoteError> {
        let mut all = true;
        for (want, file) in [
            (&self.outputs.json, RECORD_JSON),
            (&self.outputs.histfile, "hist.txt"),
        ] {
            let Some(to) = want else { continue };
            match self.remote.get(&format!("{}/{file}", self.dir))? {
                Some(bytes) => crate::output::write_atomic(to, &bytes)
                    .map_err(|e| RemoteError::Local(format!("{e:#}")))?,
                None => all = false,
            }
        }
        Ok(all)
    }
}

/// Copy every run of the board not whole here that started at `since`
/// or later (board clock): what a study or a characterization made;
/// false when one still runs there.
fn copy_all(remote: &Remote, local: &mut Store, since: Option<u64>) -> Result<bool, RemoteError> {
    let runs: Vec<sync::Listed> = sync::list(remote, &[])?
        .into_iter()
        .filter(|r| since.is_none_or(|t| r.started_at_unix_ns >= t))
        .collect();
    let mut ended = true;
    for (run, pushed) in sync::copy(remote, local, &runs)? {
        match pushed {
            Pushed::Copied { id } | Pushed::Completed { id } => eprintln!(
                "rtscope: copied here as run {id} in {} (measured on board {}, {} there)",
                local.path().display(),
                remote.board.name,
                run.state.name()
            ),
            Pushed::Running => ended = false,
            Pushed::AlreadyThere { .. } => {}
        }
    }
    Ok(ended)
}

/// Follow the unfinished runs this workstation started on the board
/// (`rtscope attach`), then copy them: the worst exit status.
pub fn attach(remote: &Remote, local: &mut Option<Store>) -> Result<i32, RemoteError> {
    let jobs = jobs(remote)?;
    if jobs.is_empty() {
        eprintln!(
            "rtscope: board {} holds no run started from a workstation (finished ones are in its store: `rtscope fetch {}`)",
            remote.board.name, remote.board.name
        );
        return Ok(0);
    }
    let signals = Signals::install()?;
    let mut worst = 0;
    for id in jobs {
        eprintln!(
            "rtscope: following run folder {id} on board {}",
            remote.board.name
        );
        let mut job = Job::reopen(remote, id)?;
        match job.follow(local, &signals) {
            Ok(code) => worst = worst.max(code),
            // The link: nothing more can be followed now.
            Err(e @ RemoteError::Link(_)) => return Err(e),
            Err(e) => {
                eprintln!("rtscope: {e}");
                worst = 2;
            }
        }
    }
    Ok(worst)
}

/// Finish the runs of the board that have ended (their local files
/// written, their folders cleared); those still running are left.
pub fn finish_ended(remote: &Remote, local: &mut Option<Store>) -> Result<usize, RemoteError> {
    let mut n = 0;
    for id in jobs(remote)? {
        let Some(exit) = remote.get_text(&format!("{}/exit", folder(remote, &id)))? else {
            continue;
        };
        let code = exit.parse().unwrap_or(2);
        Job::reopen(remote, id)?.finish(local, code)?;
        n += 1;
    }
    Ok(n)
}

/// Run folder `id` on the board.
fn folder(remote: &Remote, id: &str) -> String {
    format!("{}/runs/{id}", remote.dir)
}

/// The run folders on the board, oldest first.
fn jobs(remote: &Remote) -> Result<Vec<String>, RemoteError> {
    let ran = remote.exec(
        &format!(
            "cd {} 2>/dev/null && for d in */; do [ -f \"$d/job.toml\" ] && echo \"${{d%/}}\"; done; true",
            quote(&format!("{}/runs", remote.dir))
        ),
        b"",
        Duration::from_secs(30),
        "list the run folders",
    )?;
    let mut v: Vec<String> = ran.stdout_text().lines().map(str::to_string).collect();
    v.sort();
    Ok(v)
}

/// One look at a run folder.
#[derive(Debug, PartialEq)]
struct Polled {
    exit: Option<i32>,
    uuid: Option<String>,
    /// Whether its process still runs (`pid_known`: a PID was written).
    alive: bool,
    pid_known: bool,
    out: u64,
    err: u64,
    /// Bytes of the first line, newline included.
    head_len: usize,
}

impl Polled {
    fn parse(bytes: &[u8]) -> Option<Polled> {
        let nl = bytes.iter().position(|b| *b == b'\n')?;
        let head = std::str::from_utf8(&bytes[..nl]).ok()?;
        let w: Vec<&str> = head.split_whitespace().collect();
        let [x, u, a, o, e] = w.as_slice() else {
            return None;
        };
        Some(Polled {
            exit: x.parse().ok(),
            uuid: (*u != "-").then(|| u.to_string()),
            alive: *a == "1",
            pid_known: *a != "-",
            out: o.parse().ok()?,
            err: e.parse().ok()?,
            head_len: nl + 1,
        })
    }
}

/// How long a board that reboots may stay silent before the workstation
/// stops waiting for it.
const BOOT_WAIT: Duration = Duration::from_secs(20 * 60);

/// What a look at a rebooting study found.
struct StudyLook {
    /// The first runner's exit status, once it has one.
    exit: Option<i32>,
    /// `study status NAME --json`, once the study is stored there.
    status: Option<serde_json::Value>,
}

/// `study FILE --reboot` (or `study resume NAME --reboot`) on a board,
/// its `request`: the first runner started detached as any study; then the study
/// followed, not the runner, since the board reboots and a unit there
/// resumes it after each boot: its boots shown as they are asked and
/// taken, the link lost while the board reboots waited for (up to 20
/// minutes a boot), its runs copied here every 30 s and at the end. Ends
/// when the study's round of reboots has ended (done, stopped, paused).
pub fn rebooting_study(
    remote: &Remote,
    request: &str,
    name: &str,
    local: &mut Option<Store>,
) -> Result<i32, RemoteError> {
    let mut job = Job::new(remote, LocalOutputs::default())?;
    job.make_folder()?;
    job.write_job_file()?;
    job.start_request("study", request)?;
    let since = job.started_ns()?;
    let signals = Signals::install()?;
    let board = remote.board.name.clone();
    let left = || {
        RemoteError::Link(format!(
            "left: study '{name}' goes on on board {board} (it reboots and resumes by itself); `rtscope --on {board} study status {name}` shows it, `rtscope fetch {board}` copies its runs"
        ))
    };
    let mut seen = Seen {
        shown: Vec::new(),
        last_copy: Instant::now(),
        since,
    };
    let mut lost_since: Option<Instant> = None;
    let mut runner = true;
    loop {
        if signals.stop.load(Ordering::SeqCst) || signals.hangup.load(Ordering::SeqCst) {
            return Err(left());
        }
        match look(&mut job, name, &mut runner) {
            Ok(l) => {
                if lost_since.take().is_some() {
                    eprintln!("rtscope: board {board} answers again");
                }
                if let Some(code) = seen.take(remote, name, &l, runner, local)? {
                    return Ok(code);
                }
                std::thread::sleep(Duration::from_secs(5));
            }
            Err(RemoteError::Link(why)) => silent(remote, name, &why, &mut lost_since)?,
            Err(e) => return Err(e),
        }
    }
}

/// What the workstation has shown and copied of a rebooting study.
struct Seen {
    /// `INDEX:STATE` of every boot shown.
    shown: Vec<String>,
    last_copy: Instant,
    /// Runs started after this (board clock, ns) are the study's.
    since: Option<u64>,
}

impl Seen {
    /// Show and copy what a look found; `Some(status)` when the command
    /// ends: the first runner refused, or the round of reboots ended.
    fn take(
        &mut self,
        remote: &Remote,
        name: &str,
        l: &StudyLook,
        runner: bool,
        local: &mut Option<Store>,
    ) -> Result<Option<i32>, RemoteError> {
        let board = &remote.board.name;
        let round = l.status.as_ref().map(|s| &s["reboots"]);
        let state = round.and_then(|r| r["state"].as_str()).unwrap_or("");
        if let Some(code) = l.exit
            && code != 0
            && state.is_empty()
        {
            // Refused before any reboot: its message is above.
            return Ok(Some(code));
        }
        if let Some(r) = round {
            show_boots(board, r, &mut self.shown);
        }
        if let Some(store) = local.as_mut()
            && self.last_copy.elapsed() >= COPY_EVERY
        {
            let _ = copy_all(remote, store, self.since);
            self.last_copy = Instant::now();
        }
        let live = l
            .status
            .as_ref()
            .is_some_and(|s| !s["running_pid"].is_null());
        if !matches!(state, "done" | "stopped" | "paused") || live || runner {
            return Ok(None);
        }
        if let Some(store) = local.as_mut() {
            copy_all(remote, store, self.since)?;
        }
        let s = l.status.as_ref().expect("a round has a status");
        eprintln!(
            "rtscope: board {board}: study '{name}': {} of {} runs done; its reboots are {state}{}",
            s["done"],
            s["runs"],
            round
                .and_then(|r| r["detail"].as_str())
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
        Ok(Some(if state == "stopped" { 2 } else { 0 }))
    }
}

/// The board does not answer (it reboots, presumably): say so once, wait
/// a little, give up after [`BOOT_WAIT`] of silence.
fn silent(
    remote: &Remote,
    name: &str,
    why: &str,
    lost_since: &mut Option<Instant>,
) -> Result<(), RemoteError> {
    let board = &remote.board.name;
    let since_lost = *lost_since.get_or_insert_with(|| {
        eprintln!(
            "rtscope: board {board} does not answer ({why}): rebooting, presumably; waiting up to {} minutes (Ctrl-C: leave the study going on there)",
            BOOT_WAIT.as_secs() / 60
        );
        Instant::now()
    });
    if since_lost.elapsed() > BOOT_WAIT {
        return Err(RemoteError::Link(format!(
            "board {board} did not answer for {} minutes: if it came back, `rtscope --on {board} study status {name}` says where study '{name}' stands",
            BOOT_WAIT.as_secs() / 60
        )));
    }
    remote.link.close();
    std::thread::sleep(RETRY);
    Ok(())
}

/// The first runner's output and status (while it lives), then the
/// study's status.
fn look(job: &mut Job, name: &str, runner: &mut bool) -> Result<StudyLook, RemoteError> {
    let mut exit = None;
    if *runner {
        let p = job.poll()?;
        exit = p.exit;
        if p.exit.is_some() || (!p.alive && p.pid_known) {
            *runner = false;
        }
    }
    let r = job.remote;
    let script = format!("{} study status {} --json", r.rtscope(), quote(name));
    let ran = r.link.run(&script, b"", Duration::from_secs(60))?;
    if ran.link_failed() {
        return Err(RemoteError::Link(ran.last_error()));
    }
    let status = ran
        .ok()
        .then(|| serde_json::from_slice(&ran.stdout).ok())
        .flatten();
    Ok(StudyLook { exit, status })
}

/// Print each boot of the round once per state it reaches.
fn show_boots(board: &str, round: &serde_json::Value, shown: &mut Vec<String>) {
    let Some(boots) = round["boots"].as_array() else {
        return;
    };
    for (i, b) in boots.iter().enumerate() {
        let state = b["state"].as_str().unwrap_or("");
        let key = format!("{i}:{state}");
        if shown.contains(&key) {
            continue;
        }
        shown.push(key);
        let what = match state {
            "asked" => "rebooting into",
            "arrived" => "booted into",
            "missed" => "did not come up as asked:",
            "failed" => "cannot boot",
            _ => "did not reboot into",
        };
        eprintln!(
            "rtscope: board {board}: {what} {}{}",
            b["config"].as_str().unwrap_or("?"),
            b["detail"]
                .as_str()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_is_read_from_its_first_line() {
        let p = Polled::parse(b"- ab12 1 10 3\nhello\n").unwrap();
        assert_eq!(
            p,
            Polled {
                exit: None,
                uuid: Some("ab12".into()),
                alive: true,
                pid_known: true,
                out: 10,
                err: 3,
                head_len: 14
            }
        );
        let p = Polled::parse(b"1 - - 0 0\n").unwrap();
        assert_eq!((p.exit, p.uuid, p.pid_known), (Some(1), None, false));
        assert!(Polled::parse(b"garbage\n").is_none());
    }
}
