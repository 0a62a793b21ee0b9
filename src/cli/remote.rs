//! Remote runs on the command line: the global `--on BOARD` (with
//! `--binary` and `--ssh-config`), `rtscope boards`, `attach` and `fetch`,
//! and the hidden commands a board's rtscope answers (`__board-info`,
//! `__measure-settings`, `__export`; `__request` is in `request`). Maps
//! flags to `crate::remote`; a forwarded command is edited as typed values
//! of its request (never as words) for the board.

use super::measure::MeasureArgs;
use super::request::{self, Forwarded, Request};
use super::study::StudyCommand;
use super::{Cli, Command, Exit};
use crate::remote::{self, Board, BoardsFile, Options, Remote, job};
use crate::store::Store;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

/// Boards that `--on NAME` reaches: add, list, remove.
///
/// A board is an `ssh://[USER@]HOST[:PORT]` URL under a short name; HOST
/// may be an alias of your ~/.ssh/config. The names are kept in
/// $RTSCOPE_BOARDS, else $XDG_CONFIG_HOME/rtscope/boards.toml, else
/// ~/.config/rtscope/boards.toml. See docs/remote.md.
#[derive(Args, Debug, Clone)]
pub struct BoardsArgs {
    #[command(subcommand)]
    pub command: Option<BoardsCommand>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum BoardsCommand {
    /// Name a board: `rtscope boards add pi4 ssh://root@pi4.lab`.
    Add {
        #[arg(value_name = "NAME")]
        name: String,
        #[arg(value_name = "URL")]
        url: String,
    },
    /// List the boards (the default).
    List,
    /// Forget a board (nothing on the board is touched).
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// Show again the runs started on a board from here, then copy them.
///
/// For runs left running when the link was lost or Ctrl-C was pressed
/// twice: follows each unfinished run on the board to its end, then
/// copies it into the local store (and its --json/--histfile files where
/// they were asked for). Ctrl-C stops the run, as for `measure --on`.
///
/// Exit status: the worst of the runs' (0, 1 a latency limit exceeded),
/// 2 when the board cannot be reached.
#[derive(Args, Debug, Clone)]
pub struct AttachArgs {
    /// A board name (`rtscope boards`) or ssh://[USER@]HOST[:PORT].
    #[arg(value_name = "BOARD")]
    pub board: String,
}

/// Copy what a board holds into the local store.
///
/// Every run of the board's store that the local store does not hold
/// whole (runs finished while the link was down, runs cut short) is
/// copied, keyed by uuid: fetching twice copies nothing the second time.
/// Runs started from here that have ended get their local files written
/// and their folders on the board cleared. Runs still measuring are
/// copied up to their last checkpoint.
///
/// Exit status: 0, 2 when the board cannot be reached or the local store
/// cannot be written.
#[derive(Args, Debug, Clone)]
pub struct FetchArgs {
    /// A board name (`rtscope boards`) or ssh://[USER@]HOST[:PORT].
    #[arg(value_name = "BOARD")]
    pub board: String,
}

/// Internal: where this rtscope keeps its store (asked by a workstation).
#[derive(Args, Debug, Clone)]
pub struct BoardInfoArgs {}

/// Internal: measure the settings of a TOML file (a remote run).
#[derive(Args, Debug, Clone)]
pub struct MeasureSettingsArgs {
    #[arg(value_name = "SETTINGS.toml")]
    pub settings: PathBuf,
    /// Write the run's uuid here once it is known.
    #[arg(long = "uuid-file", value_name = "FILE")]
    pub uuid_file: Option<PathBuf>,
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    #[arg(long = "live", conflicts_with = "quiet")]
    pub live: bool,
    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,
}

/// Internal: the runs of this store, for a workstation to copy.
#[derive(Args, Debug, Clone)]
pub struct ExportArgs {
    /// One line per run (those of the UUIDs given, else all): uuid,
    /// state, samples, kind, start.
    #[arg(long = "list")]
    pub list: bool,
    #[arg(value_name = "UUID")]
    pub uuids: Vec<String>,
}

/// The commands `--on` runs on a board.
const REMOTE_COMMANDS: &str = "measure, doctor, tune, explain, characterize, study and runs";

pub fn boards(args: &BoardsArgs) -> Result<Exit> {
    let mut file = BoardsFile::load_default()?;
    match args.command.clone().unwrap_or(BoardsCommand::List) {
        BoardsCommand::Add { name, url } => {
            file.add(&name, &url)?;
            file.save()?;
            outln!("board {name}: {}", file.boards[&name]);
        }
        BoardsCommand::List => {
            if file.boards.is_empty() {
                eprintln!(
                    "rtscope: no boards in {}: `rtscope boards add NAME ssh://[USER@]HOST[:PORT]`",
                    file.path.display()
                );
            }
            for (name, url) in &file.boards {
                outln!("{name}\t{url}");
            }
        }
        BoardsCommand::Remove { name } => {
            if !file.remove(&name) {
                bail!("no board named '{name}' in {}", file.path.display());
            }
            file.save()?;
            outln!("board {name} removed");
        }
    }
    Ok(Exit::Ok)
}

fn options(cli: &Cli) -> Options {
    Options {
        ssh_config: cli.ssh_config.clone(),
        binary: cli.binary.clone(),
    }
}

fn connect(cli: &Cli, board: &str) -> Result<Remote> {
    let board = Board::resolve(board)?;
    eprintln!(
        "rtscope: reaching board {} ({})",
        board.name,
        board.target.url()
    );
    Ok(Remote::connect(board, &options(cli))?)
}

/// The local store runs from a board are copied into.
fn local_store(db: Option<&Path>) -> Result<Store> {
    Ok(Store::open(&crate::store::locate(db)?)?)
}

pub fn attach(cli: &Cli, args: &AttachArgs) -> Result<Exit> {
    let mut local = Some(local_store(cli.db.as_deref())?);
    let remote = connect(cli, &args.board)?;
    exit_of(job::attach(&remote, &mut local)?)
}

pub fn fetch(cli: &Cli, args: &FetchArgs) -> Result<Exit> {
    let mut store = Some(local_store(cli.db.as_deref())?);
    let remote = connect(cli, &args.board)?;
    let finished = job::finish_ended(&remote, &mut store)?;
    let local = store.as_mut().context("the local store")?;
    let runs = remote::sync::list(&remote, &[])?;
    let done = remote::sync::copy(&remote, local, &runs)?;
    let mut copied = 0;
    for (run, pushed) in &done {
        use crate::store::push::Pushed;
        let line = match pushed {
            Pushed::Copied { id } => {
                copied += 1;
                format!("copied as run {id}")
            }
            Pushed::Completed { id } => {
                copied += 1;
                format!("completed run {id}")
            }
            Pushed::AlreadyThere { id } => format!("already here as run {id}"),
            Pushed::Running => "still running".into(),
        };
        outln!(
            "{} ({}): {line}",
            &run.uuid[..run.uuid.len().min(8)],
            run.state.name()
        );
    }
    eprintln!(
        "rtscope: board {}: {} runs, {copied} copied into {}{}",
        remote.board.name,
        done.len(),
        local.path().display(),
        if finished > 0 {
            format!(", {finished} ended runs started from here finished")
        } else {
            String::new()
        }
    );
    Ok(Exit::Ok)
}

/// `rtscope --on BOARD COMMAND ...`.
pub fn on(cli: &Cli, board: &str) -> Result<Exit> {
    if let Command::Measure(args) = &cli.command {
        return measure_on(cli, board, args);
    }
    match Forwarded::of(&cli.command) {
        Some(command) => forward(cli, board, command),
        None => bail!(
            "--on works with {REMOTE_COMMANDS}; run other commands here, on the runs `rtscope fetch` copied"
        ),
    }
}

fn measure_on(cli: &Cli, board: &str, args: &MeasureArgs) -> Result<Exit> {
    let settings = args.settings(None)?;
    // What the board would refuse is refused here, before connecting.
    settings.request()?;
    let mut local = if settings.no_save {
        None
    } else {
        Some(local_store(cli.db.as_deref())?)
    };
    let show = job::Show {
        quiet: args.quiet,
        metrics: args.metrics.metrics.map(|a| a.to_string()),
        metrics_auth: args.metrics.metrics_auth.clone(),
        metrics_linger_ns: args.metrics.linger_ns,
    };
    let remote = connect(cli, board)?;
    exit_of(job::measure(&remote, settings, &show, &mut local)?)
}

/// Run the command on the board, sent as a typed [`Request`] (global
/// options are no part of it): one that measures (characterize, a study)
/// detached from the link as `measure` is, then its runs copied here; the
/// others in the foreground.
fn forward(cli: &Cli, board: &str, mut command: Forwarded) -> Result<Exit> {
    let measures = matches!(command, Forwarded::Characterize(ref a) if !a.list)
        || super::study_goes_on(&cli.command);
    let mut local = if measures {
        Some(local_store(cli.db.as_deref())?)
    } else {
        None
    };
    let rebooting = rebooting_study(&command)?;
    if let Some((_, ask)) = &rebooting
        && !ask.is_empty()
    {
        confirm_here(ask, board)?;
        confirmed(&mut command);
    }
    let json = json_wanted(&command);
    let remote = connect(cli, board)?;
    reads_requests(&remote)?;
    if let Some((file, there)) = for_board(&mut command, &remote.board.name, &remote.dir) {
        copy_study_file(&remote, &file, &there)?;
    }
    if let Some(here) = study_report_file(&command) {
        return report_here(&remote, command, &here);
    }
    let name = command.name();
    if let Some((study, _)) = rebooting {
        let request = request_text(command)?;
        return exit_of(job::rebooting_study(&remote, &request, &study, &mut local)?);
    }
    let code = if measures {
        let wants_json = json.is_some();
        let request = |dir: &str| {
            if wants_json {
                json_there(&mut command, format!("{dir}/{}", job::RECORD_JSON).into());
            }
            request_text(command).map_err(|e| remote::RemoteError::Local(format!("{e:#}")))
        };
        job::detached(&remote, name, request, json, &mut local)?
    } else {
        remote.foreground_request(name, request_text(command)?.as_bytes())?
    };
    exit_of(code)
}

/// The request of `command`, as the board reads it.
fn request_text(command: Forwarded) -> Result<String> {
    Request::new(command)
        .to_json()
        .context("writing the request for the board")
}

/// Refuse a board whose rtscope cannot read this rtscope's requests (an
/// older one, or another build: `--binary`, or one found under
/// `target/`), before anything runs there.
fn reads_requests(remote: &Remote) -> Result<()> {
    if remote.request == Some(request::VERSION) {
        return Ok(());
    }
    let reads = match remote.request {
        None => "reads no requests (it is older than them: it runs measure only)".to_string(),
        Some(v) => format!("reads requests of version {v}"),
    };
    bail!(
        "the rtscope on board {} ({}, version {}) {reads}; this rtscope {} sends commands other than measure as requests of version {}: give --binary FILE a build of this version for the board",
        remote.board.name,
        remote.bin,
        remote.version,
        env!("CARGO_PKG_VERSION"),
        request::VERSION
    )
}

/// A study started or resumed with `--reboot`: its name, and the
/// question to ask here before the board may reboot (empty: the file
/// says `reboot = true`, or `--yes` was given).
fn rebooting_study(command: &Forwarded) -> Result<Option<(String, String)>> {
    let Forwarded::Study(a) = command else {
        return Ok(None);
    };
    let (flags, name, allowed) = match &a.command {
        None if a.run.boots.reboot && !a.dry_run => {
            let Some(file) = &a.file else { return Ok(None) };
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the study file {}", file.display()))?;
            let spec = crate::study::spec::parse(&text, &file.display().to_string())?;
            (&a.run, spec.name, spec.reboot.allowed)
        }
        Some(StudyCommand::Resume { name, run }) if run.boots.reboot => {
            let Some(name) = name else {
                bail!("name the study: --on BOARD study resume NAME --reboot");
            };
            (run, name.clone(), false)
        }
        _ => return Ok(None),
    };
    let ask = if allowed || flags.boots.yes {
        String::new()
    } else {
        format!(
            "study '{name}' may reboot the board up to its reboot limit, and comes back to the boot it started from at the end"
        )
    };
    Ok(Some((name, ask)))
}

/// The reboots were confirmed here: the board is told `--yes`.
fn confirmed(command: &mut Forwarded) {
    if let Forwarded::Study(a) = command {
        match &mut a.command {
            None => a.run.boots.yes = true,
            Some(StudyCommand::Resume { run, .. }) => run.boots.yes = true,
            Some(_) => {}
        }
    }
}

/// Ask here (the board has no terminal to ask on) before a study reboots
/// it; with no terminal here, refuse.
fn confirm_here(question: &str, board: &str) -> Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        bail!("{question}: write reboot = true in the study file, or give --yes");
    }
    eprint!("rtscope: board {board}: {question}. Type yes to go on: ");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed: nothing was started on board {board}");
    }
    Ok(())
}

/// Where `study report` writes here (its -o, else NAME.html as there).
fn study_report_file(command: &Forwarded) -> Option<PathBuf> {
    let Forwarded::Study(a) = command else {
        return None;
    };
    match &a.command {
        Some(StudyCommand::Report { name, output, .. }) => Some(
            output
                .clone()
                .unwrap_or_else(|| format!("{}.html", name.as_deref().unwrap_or("study")).into()),
        ),
        _ => None,
    }
}

/// `study report`'s page written to `there` (on the board).
fn report_to(command: &mut Forwarded, there: PathBuf) {
    if let Forwarded::Study(a) = command
        && let Some(StudyCommand::Report { output, .. }) = &mut a.command
    {
        *output = Some(there);
    }
}

/// `study report` on the board, its page written there in rtscope's
/// directory, then copied to `here` and removed there.
fn report_here(remote: &Remote, mut command: Forwarded, here: &Path) -> Result<Exit> {
    crate::output::check_writable(here, "report file")?;
    let there = format!(
        "{}/reports/{}.html",
        remote.dir,
        &crate::record::new_run_uuid()[..12]
    );
    remote.mkdir(&format!("{}/reports", remote.dir))?;
    report_to(&mut command, there.clone().into());
    let name = command.name();
    let code = remote.foreground_request(name, request_text(command)?.as_bytes())?;
    let page = remote.get(&there)?;
    let _ = remote.link.run(
        &format!("rm -f {}", remote::ssh::quote(&there)),
        b"",
        std::time::Duration::from_secs(30),
    );
    if let Some(page) = page {
        crate::output::write_atomic(here, &page)?;
        eprintln!("rtscope: the report is here: {}", here.display());
    }
    exit_of(code)
}

/// The `--json FILE` a command wants here (characterize's): the board
/// writes it in the run folder, and it is copied to FILE here.
fn json_wanted(command: &Forwarded) -> Option<PathBuf> {
    match command {
        Forwarded::Characterize(a) => a.json.clone(),
        _ => None,
    }
}

/// The command's `--json` written to `there` (on the board).
fn json_there(command: &mut Forwarded, there: PathBuf) {
    if let Forwarded::Characterize(a) = command
        && a.json.is_some()
    {
        a.json = Some(there);
    }
}

/// The command as board `board` (rtscope's directory there: `dir`) runs
/// it: a characterization recorded under the board's name, as a
/// measurement is, with the command line typed here; a study file pointed
/// at its copy there, `studies/FILE`. Gives the study file to copy and
/// where.
fn for_board(command: &mut Forwarded, board: &str, dir: &str) -> Option<(PathBuf, String)> {
    match command {
        Forwarded::Characterize(a) if !a.list => {
            a.host.get_or_insert_with(|| board.to_string());
            a.command_line = crate::redact::own_command_line();
            None
        }
        Forwarded::Study(a) if a.command.is_none() => {
            let file = a.file.as_mut()?;
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "study.toml".into());
            let there = format!("{dir}/studies/{name}");
            let here = std::mem::replace(file, there.clone().into());
            Some((here, there))
        }
        _ => None,
    }
}

/// Copy the study file `here` to `there` on the board, its runs recorded
/// under the board's name.
fn copy_study_file(remote: &Remote, here: &Path, there: &str) -> Result<()> {
    let text = std::fs::read_to_string(here)
        .with_context(|| format!("cannot read the study file {}", here.display()))?;
    let text = with_board_host(&text, &remote.board.name);
    remote.mkdir(&format!("{}/studies", remote.dir))?;
    remote.put(there, text.as_bytes())?;
    Ok(())
}

/// A study file whose runs are recorded under the board's name (`host`
/// in `[fixed]`), unless it names a host itself.
fn with_board_host(text: &str, board: &str) -> String {
    let Ok(mut table) = text.parse::<toml::Table>() else {
        // Unreadable: the board's rtscope says why, with the line.
        return text.to_string();
    };
    let in_matrix = table
        .get("matrix")
        .and_then(toml::Value::as_table)
        .is_some_and(|m| m.contains_key("host"));
    if in_matrix {
        return text.to_string();
    }
    let fixed = table
        .entry("fixed")
        .or_insert_with(|| toml::Value::Table(Default::default()));
    if let toml::Value::Table(f) = fixed
        && !f.contains_key("host")
    {
        f.insert("host".into(), toml::Value::String(board.to_string()));
    }
    toml::to_string(&table).unwrap_or_else(|_| text.to_string())
}

fn exit_of(code: i32) -> Result<Exit> {
    match code {
        0 => Ok(Exit::Ok),
        1 => Ok(Exit::LimitExceeded),
        _ => bail!("the command on the board failed (exit {code}); its message is above"),
    }
}

// ------------------------------------------------- the board's side

pub fn board_info(_: &BoardInfoArgs, db: Option<&Path>) -> Result<Exit> {
    let store = crate::store::locate(db)?;
    outln!("store={}", store.display());
    outln!("version={}", env!("CARGO_PKG_VERSION"));
    outln!("request={}", request::VERSION);
    Ok(Exit::Ok)
}

pub fn measure_settings(args: &MeasureSettingsArgs, db: Option<&Path>) -> Result<Exit> {
    let text = std::fs::read_to_string(&args.settings)
        .with_context(|| format!("reading {}", args.settings.display()))?;
    let table: toml::Table = text
        .parse()
        .with_context(|| format!("reading {}", args.settings.display()))?;
    let mut settings = crate::measure::Settings::from_table(table)
        .with_context(|| format!("reading {}", args.settings.display()))?;
    if settings.db.is_none() {
        settings.db = db.map(Path::to_path_buf);
    }
    super::measure::run_settings(
        &settings,
        super::measure::Display {
            quiet: args.quiet,
            live: args.live,
            all: false,
        },
        &args.metrics,
        args.uuid_file.as_deref(),
    )
}

pub fn export(args: &ExportArgs, db: Option<&Path>) -> Result<Exit> {
    let path = crate::store::locate(db)?;
    let Some(store) = Store::open_existing(&path)? else {
        if args.list {
            return Ok(Exit::Ok);
        }
        bail!("no run store at {} yet", path.display());
    };
    out!(
        "{}",
        remote::sync::export_here(&store, args.list, &args.uuids)?
    );
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::parse_line as parsed;

    fn forwarded(args: &str) -> Forwarded {
        Forwarded::of(&parsed(args).command).unwrap()
    }

    /// The request's JSON, read back as a command.
    fn round_trip(command: Forwarded) -> (String, Forwarded) {
        let text = request_text(command).unwrap();
        let back = Request::parse(&text).unwrap().command;
        (text, back)
    }

    #[test]
    fn global_options_are_no_part_of_what_a_board_is_sent() {
        let cli = parsed(
            "--db globaldb.db --on boardname doctor --strict --ssh-config=sshcfg --binary binfile",
        );
        assert_eq!(cli.on.as_deref(), Some("boardname"));
        let (text, back) = round_trip(Forwarded::of(&cli.command).unwrap());
        for global in [
            "globaldb",
            "boardname",
            "sshcfg",
            "binfile",
            "\"db\"",
            "\"on\"",
        ] {
            assert!(!text.contains(global), "{global} in {text}");
        }
        let Forwarded::Doctor(a) = back else {
            panic!("{back:?}")
        };
        assert!(a.strict && !a.json);
        // What follows `--` is the command's, never a global option.
        let (text, _) = round_trip(forwarded("--on=pi explain -- --db"));
        assert!(text.contains("\"run\": \"--db\""), "{text}");
    }

    #[test]
    fn a_study_sent_to_a_board_runs_its_copy_there() {
        let mut c = forwarded("--on pi study /home/me/s.toml -q --reboot --yes");
        let copy = for_board(&mut c, "pi", "/root/.cache/rtscope");
        assert_eq!(
            copy,
            Some((
                PathBuf::from("/home/me/s.toml"),
                "/root/.cache/rtscope/studies/s.toml".to_string()
            ))
        );
        let (_, back) = round_trip(c);
        let Forwarded::Study(a) = back else {
            panic!("{back:?}")
        };
        assert_eq!(
            a.file.as_deref(),
            Some(Path::new("/root/.cache/rtscope/studies/s.toml"))
        );
        // Only the study's file: a word equal to it elsewhere is left.
        assert!(a.run.quiet && a.run.boots.reboot && a.run.boots.yes);
        let mut c = forwarded("study s.toml --fail-if s.toml=x:max>1ms");
        for_board(&mut c, "pi", "/d");
        let Forwarded::Study(a) = c else { panic!() };
        assert_eq!(a.file.as_deref(), Some(Path::new("/d/studies/s.toml")));
        assert_eq!(a.run.fail_if[0].text, "s.toml=x:max>1ms");
        // Other study commands name no file to copy.
        for line in ["study status s", "study resume s", "study report s"] {
            assert_eq!(for_board(&mut forwarded(line), "pi", "/d"), None, "{line}");
        }
    }

    #[test]
    fn a_characterization_is_recorded_under_the_board_and_its_json_comes_here() {
        let mut c = forwarded("characterize --json /tmp/c.json -D 1s");
        assert_eq!(json_wanted(&c).as_deref(), Some(Path::new("/tmp/c.json")));
        assert_eq!(for_board(&mut c, "pi", "/d"), None);
        json_there(&mut c, "/d/runs/J/record.json".into());
        let (_, back) = round_trip(c);
        let Forwarded::Characterize(a) = back else {
            panic!("{back:?}")
        };
        assert_eq!(a.json.as_deref(), Some(Path::new("/d/runs/J/record.json")));
        assert_eq!(a.host.as_deref(), Some("pi"));
        assert_eq!(a.per_bench_ns, 1_000_000_000);
        assert_eq!(a.command_line, crate::redact::own_command_line());
        // A host given stays; a list records nothing; no --json, none.
        let mut c = forwarded("characterize --host mine");
        for_board(&mut c, "pi", "/d");
        json_there(&mut c, "/d/record.json".into());
        let Forwarded::Characterize(a) = c else {
            panic!()
        };
        assert_eq!((a.host.as_deref(), a.json), (Some("mine"), None));
        let mut c = forwarded("characterize --list");
        for_board(&mut c, "pi", "/d");
        let Forwarded::Characterize(a) = c else {
            panic!()
        };
        assert_eq!(a.host, None);
    }

    #[test]
    fn a_study_report_is_written_there_then_copied_here() {
        for line in [
            "study report s -o a.html --fail-if max>1ms",
            "study report s --output a.html --fail-if max>1ms",
            "study report s --output=a.html --fail-if max>1ms",
            "study report s -oa.html --fail-if max>1ms",
        ] {
            let mut c = forwarded(line);
            assert_eq!(
                study_report_file(&c),
                Some(PathBuf::from("a.html")),
                "{line}"
            );
            report_to(&mut c, "/d/reports/x.html".into());
            let (_, back) = round_trip(c);
            let Forwarded::Study(a) = back else {
                panic!("{back:?}")
            };
            let Some(StudyCommand::Report {
                name,
                output,
                fail_if,
                ..
            }) = a.command
            else {
                panic!("{line}")
            };
            assert_eq!(name.as_deref(), Some("s"));
            assert_eq!(output.as_deref(), Some(Path::new("/d/reports/x.html")));
            assert_eq!(fail_if[0].text, "max>1ms");
        }
        assert_eq!(
            study_report_file(&forwarded("study report s")),
            Some(PathBuf::from("s.html"))
        );
        assert_eq!(study_report_file(&forwarded("study status s")), None);
    }

    #[test]
    fn a_reboot_confirmed_here_is_a_yes_there() {
        for line in ["study s.toml --reboot", "study resume s --reboot"] {
            let mut c = forwarded(line);
            confirmed(&mut c);
            let (_, back) = round_trip(c);
            let Forwarded::Study(a) = back else { panic!() };
            let run = match a.command {
                None => a.run,
                Some(StudyCommand::Resume { run, .. }) => run,
                other => panic!("{other:?}"),
            };
            assert!(run.boots.reboot && run.boots.yes, "{line}");
        }
    }

    #[test]
    fn a_rebooting_study_is_named_and_asked_for_here() {
        let dir =
            std::env::temp_dir().join(format!("rtscope-reb-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.toml");
        let cmd = |args: &str| forwarded(args);
        std::fs::write(&f, "name = \"s\"\nduration = 1\nkernel = [\"rt\"]\n").unwrap();
        let file = f.display().to_string();
        let (name, ask) = rebooting_study(&cmd(&format!("study {file} --reboot")))
            .unwrap()
            .unwrap();
        assert_eq!(name, "s");
        assert!(ask.starts_with("study 's' may reboot the board"), "{ask}");
        let (_, ask) = rebooting_study(&cmd(&format!("study {file} --reboot --yes")))
            .unwrap()
            .unwrap();
        assert!(ask.is_empty());
        std::fs::write(
            &f,
            "name = \"s\"\nduration = 1\nreboot = true\nkernel = [\"rt\"]\n",
        )
        .unwrap();
        let (_, ask) = rebooting_study(&cmd(&format!("study {file} --reboot")))
            .unwrap()
            .unwrap();
        assert!(ask.is_empty(), "the file allows it");
        assert!(
            rebooting_study(&cmd(&format!("study {file}")))
                .unwrap()
                .is_none()
        );
        assert!(
            rebooting_study(&cmd(&format!("study {file} --reboot --dry-run")))
                .unwrap()
                .is_none()
        );
        let (name, _) = rebooting_study(&cmd("study resume s --reboot"))
            .unwrap()
            .unwrap();
        assert_eq!(name, "s");
        assert!(rebooting_study(&cmd("study resume --reboot")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_study_sent_to_a_board_records_the_board_as_host() {
        let t = with_board_host("name = \"s\"\n[matrix]\nload = [\"none\"]\n", "pi4");
        let v: toml::Table = t.parse().unwrap();
        assert_eq!(v["fixed"]["host"].as_str(), Some("pi4"));
        let t = with_board_host("[fixed]\nhost = \"mine\"\n", "pi4");
        let v: toml::Table = t.parse().unwrap();
        assert_eq!(v["fixed"]["host"].as_str(), Some("mine"));
    }
}
