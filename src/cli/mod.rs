//! Command-line definitions (clap), one file per subcommand, and the
//! dispatch from a parsed command to the library. The library's core never
//! sees a flag: each subcommand turns its flags into typed options.

/// `println!` that ignores a closed standard output (`rtscope doctor |
/// head` must not panic).
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that ignores a closed standard output.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

/// clap value parser for a CPU list (`0-3,6`).
fn cpulist(s: &str) -> Result<crate::units::CpuList, String> {
    s.parse::<crate::units::CpuList>()
        .map_err(|e| e.to_string())
}

/// clap value parser for a size in bytes (`256M`, `4G`).
fn size_bytes(s: &str) -> Result<u64, String> {
    crate::units::parse_size_bytes(s).map_err(|e| e.to_string())
}

/// clap value parser for a duration with units (`10m`, `250us`).
fn duration(s: &str) -> Result<u64, String> {
    crate::units::parse_duration_ns(s).map_err(|e| e.to_string())
}

/// CPUs this process may use (its affinity, online ones).
fn allowed_cpus() -> anyhow::Result<Vec<usize>> {
    use anyhow::Context as _;
    crate::sysinfo::cpu::allowed_cpus().context("sched_getaffinity failed")
}

/// Print `v` as pretty JSON on standard output.
fn print_json(v: &impl serde::Serialize) -> anyhow::Result<()> {
    outln!("{}", serde_json::to_string_pretty(v)?);
    Ok(())
}

pub mod characterize;
pub mod compare;
pub mod completions;
pub mod doctor;
pub mod explain;
pub mod import;
pub mod load;
pub mod man;
pub mod measure;
pub mod metrics;
pub mod monitor;
pub mod plot;
pub mod push;
pub mod reboot;
pub mod remote;
pub mod report;
pub mod request;
pub mod runs;
pub mod schema;
pub mod serve;
pub mod study;
pub mod tail;
pub mod tune;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// An oscilloscope for real-time Linux: how late can a periodic real-time
/// thread wake up on this system?
#[derive(Parser, Debug)]
#[command(name = "rtscope", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Run store to use: an SQLite file, or a shared PostgreSQL database
    /// as postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME. Default:
    /// $XDG_DATA_HOME/rtscope/rtscope.db, else
    /// ~/.local/share/rtscope/rtscope.db (under sudo: root's home; root
    /// uses /var/lib/rtscope/rtscope.db when it exists or HOME is unset).
    #[arg(
        long = "db",
        value_name = "PATH|URL",
        env = "RTSCOPE_DB",
        hide_env_values = true,
        global = true,
        value_parser = store_location
    )]
    pub db: Option<PathBuf>,

    /// Run the command on a board, through the system's ssh: a name from
    /// `rtscope boards`, or ssh://[USER@]HOST[:PORT]. Works with measure,
    /// doctor, tune, explain, characterize, study and runs; measured runs
    /// are copied into the store here. See docs/remote.md.
    #[arg(long = "on", value_name = "BOARD", global = true)]
    pub on: Option<String>,

    /// With --on: the rtscope binary to run on the board (default: this
    /// one when it suits the board, else a build found under
    /// target/<triple>/release/).
    #[arg(long = "binary", value_name = "FILE", global = true)]
    pub binary: Option<PathBuf>,

    /// With --on: an ssh configuration file (ssh -F) instead of
    /// ~/.ssh/config.
    #[arg(
        long = "ssh-config",
        value_name = "FILE",
        env = "RTSCOPE_SSH_CONFIG",
        hide_env_values = true,
        global = true
    )]
    pub ssh_config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

/// Commands `--on` runs on a board; `--binary` and `--ssh-config` also
/// go with `attach` and `fetch`, which reach a board themselves.
const ON_COMMANDS: [&str; 7] = [
    "measure",
    "doctor",
    "tune",
    "explain",
    "characterize",
    "study",
    "runs",
];
const BOARD_COMMANDS: [&str; 2] = ["attach", "fetch"];

/// The command line as users see it. `--on`, `--binary` and
/// `--ssh-config` are global (they may come before the command name), but
/// each is shown only in the help of the commands that take it: the others
/// refuse it, and a help that lists an option the command refuses misleads.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let cmd = Cli::command();
    // A subcommand that has an argument of a global's id keeps its own
    // (clap propagates a global only where none is): a hidden copy, global
    // too, so that its own subcommands get it hidden as well. Values still
    // reach `Cli` by id.
    let hidden: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| a.clone().hide(true))
        .collect();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names.into_iter().fold(cmd, |cmd, name| {
        let ids: &[&str] = if ON_COMMANDS.contains(&name.as_str()) {
            &[]
        } else if BOARD_COMMANDS.contains(&name.as_str()) {
            &["on"]
        } else {
            &["on", "binary", "ssh_config"]
        };
        let copies: Vec<clap::Arg> = hidden
            .iter()
            .filter(|a| ids.contains(&a.get_id().as_str()))
            .cloned()
            .collect();
        cmd.mut_subcommand(name, |s| s.args(copies))
    })
}

/// Parse the process's arguments with [`command`].
pub fn parse() -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let mut matches = command().try_get_matches()?;
    Cli::from_arg_matches_mut(&mut matches)
}

/// A store location (`--db`, `RTSCOPE_DB`, `push --to`): a file or a
/// `postgresql://` URL; other URLs are refused (exit 2).
pub use crate::measure::settings::parse::store as store_location;

// Parsed once per process: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    // The about and long help come from MeasureArgs' doc comment.
    Measure(measure::MeasureArgs),
    // The help comes from `MonitorArgs`.
    Monitor(monitor::MonitorArgs),
    // The help of `load` comes from `LoadCmdArgs`.
    Load(load::LoadCmdArgs),
    /// Print the JSON Schema of the run record (--json files).
    Schema(schema::SchemaArgs),
    // Doctor and Tune take their help (short and long) from their Args.
    Doctor(doctor::DoctorArgs),
    Tune(tune::TuneArgs),
    /// Write the man pages into a directory.
    #[command(hide = true)]
    Man(man::ManArgs),
    // report, plot, compare: their help (short and long) comes from the
    // doc comment of their Args struct.
    Report(report::ReportArgs),
    Plot(plot::PlotArgs),
    Compare(compare::CompareArgs),
    // The help comes from `TailArgs`.
    Tail(tail::TailArgs),
    // No doc comment: the one of the Args struct (short line, then the
    // long help) is used.
    Runs(runs::RunsArgs),
    Import(import::ImportArgs),
    // The help comes from `PushArgs`.
    Push(push::PushArgs),
    // The help comes from `ServeArgs`.
    Serve(serve::ServeArgs),
    // The help of `explain` comes from `ExplainArgs`.
    Explain(explain::ExplainArgs),
    // The help comes from `StudyArgs`.
    Study(study::StudyArgs),
    // The help comes from `CompletionsArgs`.
    Completions(completions::CompletionsArgs),
    // The help comes from `CharacterizeArgs`.
    Characterize(characterize::CharacterizeArgs),
    // The help of boards, attach and fetch comes from their Args.
    Boards(remote::BoardsArgs),
    Attach(remote::AttachArgs),
    Fetch(remote::FetchArgs),
    /// Internal: where this rtscope keeps its store (for a workstation).
    #[command(name = "__board-info", hide = true)]
    BoardInfo(remote::BoardInfoArgs),
    /// Internal: measure the settings of a file (a remote run).
    #[command(name = "__measure-settings", hide = true)]
    MeasureSettings(remote::MeasureSettingsArgs),
    /// Internal: run the command of a request file (sent by `--on`).
    #[command(name = "__request", hide = true)]
    Request(request::RequestArgs),
    /// Internal: runs of this store, for a workstation to copy.
    #[command(name = "__export", hide = true)]
    Export(remote::ExportArgs),
    /// Internal: the load supervisor, started by rtscope itself.
    #[command(name = "__load-supervisor", hide = true)]
    LoadSupervisor(load::SupervisorArgs),
    /// Internal: the rt-interference threads, started by the load.
    #[command(name = "__rt-interference", hide = true)]
    RtInterference(load::InterferenceArgs),
}

/// How a successful command ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit status 0.
    Ok,
    /// Exit status 1: a latency limit was exceeded.
    LimitExceeded,
    /// Exit status 1: a gate failed (`compare --fail-if-worse`,
    /// `doctor --strict`).
    GateFailed,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::LimitExceeded | Exit::GateFailed => 1,
        }
    }
}

/// Commands that measure on CPUs (and check the CPUs they may use).
fn measures(command: &Command) -> bool {
    match command {
        Command::Measure(_)
        | Command::Monitor(_)
        | Command::Characterize(_)
        | Command::MeasureSettings(_) => true,
        Command::Study(a) => study_goes_on(command) || (a.command.is_none() && a.file.is_some()),
        _ => false,
    }
}

/// A command line as clap parses it (words split at spaces, `rtscope`
/// put in front), for the tests of the commands that take a parsed one.
#[cfg(test)]
pub(crate) fn parse_line(line: &str) -> Cli {
    use clap::FromArgMatches;
    let words = line.split_whitespace().map(str::to_string);
    let mut m = command()
        .try_get_matches_from(std::iter::once("rtscope".to_string()).chain(words))
        .unwrap();
    Cli::from_arg_matches_mut(&mut m).unwrap()
}

#[cfg(test)]
mod board_option_tests {
    use super::*;

    fn help(path: &[&str]) -> String {
        let mut cmd = command();
        // The help of a subcommand shows the globals once propagated.
        cmd.build();
        let mut sub = &mut cmd;
        for name in path {
            sub = sub.find_subcommand_mut(name).unwrap();
        }
        sub.render_long_help().to_string()
    }

    #[test]
    fn board_options_show_only_in_the_help_of_commands_that_take_them() {
        for path in [
            &["serve"][..],
            &["import"],
            &["tail"],
            &["compare"],
            &["report"],
        ] {
            let h = help(path);
            for opt in ["--on <", "--binary <", "--ssh-config <"] {
                assert!(!h.contains(opt), "{path:?} lists {opt}:\n{h}");
            }
        }
        for path in [
            &["measure"][..],
            &["doctor"],
            &["runs"],
            &["runs", "list"],
            &["study"],
        ] {
            let h = help(path);
            for opt in ["--on <BOARD>", "--binary <FILE>", "--ssh-config <FILE>"] {
                assert!(h.contains(opt), "{path:?} does not list {opt}");
            }
        }
        let attach = help(&["attach"]);
        assert!(!attach.contains("--on <"));
        assert!(attach.contains("--binary <FILE>") && attach.contains("--ssh-config <FILE>"));
        // The variable's name, never a value or a dangling '='.
        assert!(help(&["measure"]).contains("[env: RTSCOPE_SSH_CONFIG]"));
    }

    #[test]
    fn hidden_board_options_still_parse_and_before_the_command_too() {
        assert_eq!(parse_line("--on pi measure").on.as_deref(), Some("pi"));
        assert_eq!(parse_line("measure --on pi").on.as_deref(), Some("pi"));
        // Parsed, then refused with a message by `run`.
        assert_eq!(parse_line("serve --on pi").on.as_deref(), Some("pi"));
        assert!(parse_line("import --binary x f").binary.is_some());
        let nested = parse_line("runs list --on pi");
        assert_eq!(nested.on.as_deref(), Some("pi"));
        let nested = parse_line("runs show 1 --on pi --ssh-config c");
        assert_eq!(nested.on.as_deref(), Some("pi"));
        assert!(nested.ssh_config.is_some());
    }
}

/// `study FILE` or `study resume`: a study measures (not a dry run).
pub(crate) fn study_goes_on(command: &Command) -> bool {
    match command {
        Command::Study(a) => match &a.command {
            Some(study::StudyCommand::Resume { .. }) => true,
            None => a.file.is_some() && !a.dry_run,
            Some(_) => false,
        },
        _ => false,
    }
}

/// Run a parsed command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    // A tuning left behind by an rtscope that died is announced by every
    // command (`tune` reports it itself).
    if let Some(board) = cli.on.clone() {
        return remote::on(&cli, &board);
    }
    if cli.binary.is_some() && !matches!(cli.command, Command::Attach(_) | Command::Fetch(_)) {
        anyhow::bail!("--binary goes with --on BOARD (the rtscope to run on the board)");
    }
    let internal = matches!(
        cli.command,
        Command::LoadSupervisor(_)
            | Command::RtInterference(_)
            | Command::BoardInfo(_)
            | Command::Export(_)
            // The command it holds does these checks.
            | Command::Request(_)
    );
    // A command that measures refuses to start under an isolation a dead
    // rtscope left (it confines this process too), except a study that
    // goes on, which puts back what its killed runner left.
    if measures(&cli.command) {
        if let Some(left) = crate::tune::session::left_isolation() {
            if !(study_goes_on(&cli.command) && left.by_study) {
                return Err(left.into());
            }
            match crate::tune::session::revert_left(&left) {
                Ok(done) => eprintln!("rtscope: {done}"),
                Err(why) => anyhow::bail!("{why}"),
            }
        }
    } else if !internal
        && !matches!(cli.command, Command::Tune(_))
        && let Some(w) = crate::tune::session::pending_warning()
    {
        eprintln!("rtscope: {w}");
    }
    // Trace instances and mounts left by an rtscope that was killed are
    // removed by the next command.
    if !internal && crate::sys::sched::euid() == 0 {
        for m in crate::trace::cleanup_stale() {
            eprintln!("rtscope: {m}");
        }
    }
    match cli.command {
        Command::Measure(args) => measure::run(&args, cli.db.as_deref()),
        Command::Monitor(args) => monitor::run(&args, cli.db.as_deref()),
        Command::Schema(args) => schema::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Tune(args) => tune::run(&args),
        Command::Man(args) => man::run(&args),
        Command::Report(args) => report::run(&args, cli.db.as_deref()),
        Command::Plot(args) => plot::run(&args, cli.db.as_deref()),
        Command::Compare(args) => compare::run(&args, cli.db.as_deref()),
        Command::Tail(args) => tail::run(&args, cli.db.as_deref()),
        Command::Runs(args) => runs::run(&args, cli.db.as_deref()),
        Command::Import(args) => import::run(&args, cli.db.as_deref()),
        Command::Push(args) => push::run(&args, cli.db.as_deref()),
        Command::Serve(args) => serve::run(&args, cli.db.as_deref()),
        Command::Explain(args) => explain::run(&args, cli.db.as_deref()),
        Command::Study(args) => study::run(&args, cli.db.as_deref()),
        Command::Completions(args) => completions::run(&args),
        Command::Characterize(args) => characterize::run(&args, cli.db.as_deref()),
        Command::Load(args) => load::run(&args),
        Command::LoadSupervisor(args) => load::run_supervisor(&args),
        Command::RtInterference(args) => load::run_interference(&args),
        Command::Boards(args) => remote::boards(&args),
        Command::Attach(ref args) => remote::attach(&cli, args),
        Command::Fetch(ref args) => remote::fetch(&cli, args),
        Command::BoardInfo(args) => remote::board_info(&args, cli.db.as_deref()),
        Command::MeasureSettings(args) => remote::measure_settings(&args, cli.db.as_deref()),
        Command::Export(args) => remote::export(&args, cli.db.as_deref()),
        Command::Request(args) => request::run(&args, cli.db.as_deref()),
    }
}
