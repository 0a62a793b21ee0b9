//! Remote runs on the command line: the global `--on BOARD` (with
//! `--binary` and `--ssh-config`), `rtscope boards`, `attach` and `fetch`,
//! and the hidden commands a board's rtscope answers (`__board-info`,
//! `__measure-settings`, `__export`). Maps flags to `crate::remote`.

use super::measure::MeasureArgs;
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

/// Global options that name a value (left out of what a board is sent).
const GLOBAL_VALUED: &[&str] = &["--db", "--on", "--binary", "--ssh-config"];

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
    match &cli.command {
        Command::Measure(args) => measure_on(cli, board, args),
        Command::Doctor(_)
        | Command::Tune(_)
        | Command::Explain(_)
        | Command::Characterize(_)
        | Command::Study(_)
        | Command::Runs(_) => forward(cli, board),
        _ => bail!(
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

/// Run the command on the board as it was typed (global options left
/// out): one that measures (characterize, a study) detached from the
/// link as `measure` is, then its runs copied here; the others in the
/// foreground.
fn forward(cli: &Cli, board: &str) -> Result<Exit> {
    let words = command_words(&std::env::args().collect::<Vec<_>>());
    let (words, json) = match &cli.command {
        Command::Characterize(a) => point_json(words, a.json.as_deref()),
        _ => (words, None),
    };
    let measures = matches!(cli.command, Command::Characterize(ref a) if !a.list)
        || super::study_goes_on(&cli.command);
    let mut local = if measures {
        Some(local_store(cli.db.as_deref())?)
    } else {
        None
    };
    let rebooting = rebooting_study(&cli.command)?;
    let words = match &rebooting {
        Some((_, ask)) if !ask.is_empty() => {
            confirm_here(ask, board)?;
            let mut w = words;
            w.push("--yes".into());
            w
        }
        _ => words,
    };
    let remote = connect(cli, board)?;
    let words = for_board(&remote, &cli.command, words)?;
    if let Some(here) = study_report_file(&cli.command) {
        return report_here(&remote, words, &here);
    }
    if let Some((name, _)) = rebooting {
        return exit_of(job::rebooting_study(&remote, &words, &name, &mut local)?);
    }
    let code = if measures {
        job::detached(&remote, &words, json, &mut local)?
    } else {
        remote.foreground(&words)?
    };
    exit_of(code)
}

/// A study started or resumed with `--reboot`: its name, and the
/// question to ask here before the board may reboot (empty: the file
/// says `reboot = true`, or `--yes` was given).
fn rebooting_study(command: &Command) -> Result<Option<(String, String)>> {
    let Command::Study(a) = command else {
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
        Some(super::study::StudyCommand::Resume { name, run }) if run.boots.reboot => {
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
fn study_report_file(command: &Command) -> Option<PathBuf> {
    let Command::Study(a) = command else {
        return None;
    };
    match &a.command {
        Some(super::study::StudyCommand::Report { name, output, .. }) => Some(
            output
                .clone()
                .unwrap_or_else(|| format!("{}.html", name.as_deref().unwrap_or("study")).into()),
        ),
        _ => None,
    }
}

/// `study report` on the board, its page written there in rtscope's
/// directory, then copied to `here` and removed there.
fn report_here(remote: &Remote, words: Vec<String>, here: &Path) -> Result<Exit> {
    crate::output::check_writable(here, "report file")?;
    let there = format!(
        "{}/reports/{}.html",
        remote.dir,
        &crate::record::new_run_uuid()[..12]
    );
    remote.mkdir(&format!("{}/reports", remote.dir))?;
    let mut words = without_option(words, &["-o", "--output"]);
    words.extend(["-o".to_string(), there.clone()]);
    let code = remote.foreground(&words)?;
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

/// Whether `word` is option `name` with its value glued on
/// (`--output=X`, `-oX`).
fn glued(name: &str, word: &str) -> bool {
    if name.starts_with("--") {
        word.starts_with(&format!("{name}="))
    } else {
        word.len() > name.len() && word.starts_with(name) && !word.starts_with("--")
    }
}

/// `words` without option `names` and its value (`-o X`, `--output X`,
/// `--output=X`, `-oX`).
fn without_option(words: Vec<String>, names: &[&str]) -> Vec<String> {
    let mut out = Vec::with_capacity(words.len());
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if names.contains(&w.as_str()) {
            it.next();
        } else if !names.iter().any(|n| glued(n, &w)) {
            out.push(w);
        }
    }
    out
}

/// `--json FILE` of a forwarded command: the board writes it in the run
/// folder, and it is copied to FILE here.
fn point_json(words: Vec<String>, json: Option<&Path>) -> (Vec<String>, Option<PathBuf>) {
    let Some(file) = json else {
        return (words, None);
    };
    let mut out = Vec::with_capacity(words.len());
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if w == "--json" {
            it.next();
            out.extend(["--json".to_string(), job::JSON_HERE.to_string()]);
        } else if w.starts_with("--json=") {
            out.push(format!("--json={}", job::JSON_HERE));
        } else {
            out.push(w);
        }
    }
    (out, Some(file.to_path_buf()))
}

/// The words of the command after `rtscope`, global options removed.
fn command_words(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < argv.len() {
        let a = &argv[i];
        if GLOBAL_VALUED.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if GLOBAL_VALUED
            .iter()
            .any(|g| a.starts_with(&format!("{g}=")))
        {
            i += 1;
            continue;
        }
        if a == "--" {
            out.extend(argv[i..].iter().cloned());
            break;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// The words as the board needs them: files named on the command line
/// that live here copied there (a study file), their words pointed at the
/// copies; a characterization recorded under the board's name, as a
/// measurement is.
fn for_board(remote: &Remote, command: &Command, mut words: Vec<String>) -> Result<Vec<String>> {
    if let Command::Characterize(a) = command
        && a.host.is_none()
        && !a.list
    {
        words.extend(["--host".to_string(), remote.board.name.clone()]);
    }
    if let Command::Study(a) = command
        && a.command.is_none()
        && let Some(file) = &a.file
    {
        let dir = format!("{}/studies", remote.dir);
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "study.toml".into());
        let there = format!("{dir}/{name}");
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read the study file {}", file.display()))?;
        let text = with_board_host(&text, &remote.board.name);
        remote.mkdir(&dir)?;
        remote.put(&there, text.as_bytes())?;
        let given = file.to_string_lossy();
        for w in words.iter_mut().filter(|w| **w == given) {
            *w = there.clone();
        }
    }
    Ok(words)
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

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn global_options_are_left_out_of_what_a_board_is_sent() {
        let argv = words("rtscope --db x.db --on pi doctor --strict --ssh-config=c --binary b");
        assert_eq!(command_words(&argv), words("doctor --strict"));
        let argv = words("rtscope tune --on=pi --isolate 1 -- --db");
        assert_eq!(command_words(&argv), words("tune --isolate 1 -- --db"));
    }

    #[test]
    fn an_output_option_is_taken_out_in_every_spelling() {
        for w in [
            "study report s -o a.html --fail-if max>1ms",
            "study report s --output a.html --fail-if max>1ms",
            "study report s --output=a.html --fail-if max>1ms",
            "study report s -oa.html --fail-if max>1ms",
        ] {
            assert_eq!(
                without_option(words(w), &["-o", "--output"]),
                words("study report s --fail-if max>1ms"),
                "{w}"
            );
        }
    }

    #[test]
    fn a_json_file_is_written_here_not_there() {
        let (w, j) = point_json(
            words("characterize --json /tmp/c.json -D 1s"),
            Some(Path::new("/tmp/c.json")),
        );
        assert_eq!(
            w,
            words(&format!("characterize --json {} -D 1s", job::JSON_HERE))
        );
        assert_eq!(j.as_deref(), Some(Path::new("/tmp/c.json")));
        let (w, _) = point_json(
            words("characterize --json=/tmp/c.json"),
            Some(Path::new("/tmp/c.json")),
        );
        assert_eq!(w, words(&format!("characterize --json={}", job::JSON_HERE)));
    }

    #[test]
    fn a_rebooting_study_is_named_and_asked_for_here() {
        use clap::Parser;
        let dir =
            std::env::temp_dir().join(format!("rtscope-reb-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("s.toml");
        let cmd = |args: &str| {
            let mut v = vec!["rtscope".to_string()];
            v.extend(args.split_whitespace().map(str::to_string));
            crate::cli::Cli::try_parse_from(v).unwrap().command
        };
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
