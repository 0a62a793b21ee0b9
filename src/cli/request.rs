//! The typed request `--on BOARD` sends a board for every command but
//! `measure` (whose request is its `Settings`): the command as clap parsed
//! it here (its Args structs, serialized as JSON), never a command line
//! edited as text; and the hidden `__request COMMAND FILE`, with which
//! the board's rtscope reads one and runs it through the same dispatch as
//! a typed command line. Global options (`--db`, `--on`, `--binary`,
//! `--ssh-config`) are no part of a request: the board uses its own store.
//! A request of another version, or one that does not read as a command
//! of this build, is refused (exit 2), saying which rtscope wrote it.

use super::{Cli, Command, Exit, characterize, doctor, explain, runs, study, tune};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The version of the request format. Raise it whenever a request could
/// mean something else to another build (a command or a field added,
/// removed or changed in the Args of [`Forwarded`]): a board refuses a
/// request of another version, and the workstation does not send one to
/// a board whose rtscope reads another (`__board-info` says which).
pub const VERSION: u32 = 1;

/// A command for a board's rtscope.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// [`VERSION`] of the rtscope that wrote it.
    pub version: u32,
    /// The version of the rtscope that wrote it (`rtscope --version`),
    /// for the messages of a board that cannot read it.
    pub rtscope: String,
    pub command: Forwarded,
}

/// The commands `--on` sends as a request, as clap parsed them.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Forwarded {
    Doctor(doctor::DoctorArgs),
    Tune(tune::TuneArgs),
    Explain(explain::ExplainArgs),
    Characterize(characterize::CharacterizeArgs),
    Study(study::StudyArgs),
    Runs(runs::RunsArgs),
}

impl Forwarded {
    /// The request of a parsed command (`None`: `--on` does not send it
    /// this way).
    pub fn of(command: &Command) -> Option<Forwarded> {
        Some(match command {
            Command::Doctor(a) => Forwarded::Doctor(a.clone()),
            Command::Tune(a) => Forwarded::Tune(a.clone()),
            Command::Explain(a) => Forwarded::Explain(a.clone()),
            Command::Characterize(a) => Forwarded::Characterize(a.clone()),
            Command::Study(a) => Forwarded::Study(a.clone()),
            Command::Runs(a) => Forwarded::Runs(a.clone()),
            _ => return None,
        })
    }

    /// The command's name (`study`): the board's rtscope is started as
    /// `rtscope __request NAME FILE`, so that what shows its command line
    /// (`ps`, the tuning journal, which tells a study runner's isolation
    /// by the word `study`) names the command.
    pub fn name(&self) -> &'static str {
        match self {
            Forwarded::Doctor(_) => "doctor",
            Forwarded::Tune(_) => "tune",
            Forwarded::Explain(_) => "explain",
            Forwarded::Characterize(_) => "characterize",
            Forwarded::Study(_) => "study",
            Forwarded::Runs(_) => "runs",
        }
    }

    /// The command a typed command line would have given.
    pub fn into_command(self) -> Command {
        match self {
            Forwarded::Doctor(a) => Command::Doctor(a),
            Forwarded::Tune(a) => Command::Tune(a),
            Forwarded::Explain(a) => Command::Explain(a),
            Forwarded::Characterize(a) => Command::Characterize(a),
            Forwarded::Study(a) => Command::Study(a),
            Forwarded::Runs(a) => Command::Runs(a),
        }
    }
}

/// Why a board's rtscope refuses a request.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// Not JSON, or without a version.
    #[error("not a request of rtscope ({0})")]
    Unreadable(String),
    /// Written for another version of the format.
    #[error(
        "the request was written by rtscope {rtscope} (request version {version}); this rtscope {ours} reads request version {VERSION}: the workstation and the board run different versions of rtscope (give --binary FILE a build of the workstation's version for the board)",
        ours = env!("CARGO_PKG_VERSION")
    )]
    Version { version: u64, rtscope: String },
    /// Of this version, but not a command of this build.
    #[error(
        "the request of rtscope {rtscope} does not read as a command of this rtscope {ours} ({why}): the workstation and the board run different builds of rtscope (give --binary FILE a build of the workstation's source for the board)",
        ours = env!("CARGO_PKG_VERSION")
    )]
    Command { rtscope: String, why: String },
}

impl Request {
    /// A request of this rtscope.
    pub fn new(command: Forwarded) -> Request {
        Request {
            version: VERSION,
            rtscope: env!("CARGO_PKG_VERSION").to_string(),
            command,
        }
    }

    /// The request as JSON.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string_pretty(self)
    }

    /// Read a request: its version first, then its command.
    pub fn parse(text: &str) -> Result<Request, RequestError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| RequestError::Unreadable(e.to_string()))?;
        let version = value["version"]
            .as_u64()
            .ok_or_else(|| RequestError::Unreadable("no version".into()))?;
        let rtscope = value["rtscope"].as_str().unwrap_or("?").to_string();
        if version != u64::from(VERSION) {
            return Err(RequestError::Version { version, rtscope });
        }
        serde_json::from_value(value).map_err(|e| RequestError::Command {
            rtscope,
            why: e.to_string(),
        })
    }
}

/// Internal: run the request of a file (a command sent by `--on`).
#[derive(Args, Debug, Clone)]
pub struct RequestArgs {
    /// The command it holds ([`Forwarded::name`]).
    #[arg(value_name = "COMMAND")]
    pub command: String,
    #[arg(value_name = "REQUEST.json")]
    pub file: PathBuf,
}

/// `__request COMMAND FILE`: the command it holds, run as its command
/// line would be, with this rtscope's store (`--db`).
pub fn run(args: &RequestArgs, db: Option<&Path>) -> Result<Exit> {
    let file = args.file.display();
    let text =
        std::fs::read_to_string(&args.file).with_context(|| format!("reading request {file}"))?;
    let request = Request::parse(&text).with_context(|| format!("request {file}"))?;
    let name = request.command.name();
    if name != args.command {
        bail!(
            "request {file} holds the command {name}, not {}",
            args.command
        );
    }
    super::run(Cli {
        db: db.map(Path::to_path_buf),
        on: None,
        binary: None,
        ssh_config: None,
        command: request.command.into_command(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(args: &str) -> Command {
        super::super::parse_line(args).command
    }

    #[test]
    fn a_request_reads_back_as_the_same_command() {
        for line in [
            "doctor --cpus 1-3,6 --json --strict",
            "doctor",
            "tune isolate 1 --housekeeping 0 --hold-dma-latency --skip irq,governor --dry-run",
            "tune --revert --json",
            "tune settings",
            "explain last --json",
            "explain --trace t.txt --max-size 2M",
            "characterize --only mutex,clock-gettime -D 200ms --cpus 1 -i 500 -p 90 --isolate 1 --explain --json c.json --label x --host h --no-save --force",
            "characterize --list",
            "study s.toml -q --fail-if policy=fifo:max>200us --metrics 9100 --metrics-linger 2s --reboot --yes --boot-method grub --max-reboots 4",
            "study s.toml --dry-run",
            "study resume s --reboot",
            "study report s -o a.html --fail-if p99.99>50us --deadline 250us",
            "study status --json",
            "study new s -o -",
            "study stop s",
            "runs --host pi --label a* --tag k=v --state complete --since 2026-11-20 --until 2026-11-21",
            "runs export 3 --json --histfile h.txt --rows 10 --all-column --csv c.csv --table windows",
            "runs rm 1 2 last",
            "runs relabel 1 new",
        ] {
            let given = Forwarded::of(&command(line)).unwrap();
            let text = Request::new(given.clone()).to_json().unwrap();
            let back = Request::parse(&text).unwrap_or_else(|e| panic!("{line}: {e}\n{text}"));
            assert_eq!(back.version, VERSION);
            assert_eq!(back.command.name(), line.split(' ').next().unwrap());
            assert_eq!(
                format!("{:?}", back.command.into_command()),
                format!("{:?}", given.into_command()),
                "{line}"
            );
        }
    }

    #[test]
    fn only_the_commands_on_sends_this_way_are_requests() {
        assert!(Forwarded::of(&command("measure -D 1s")).is_none());
        assert!(Forwarded::of(&command("report 1 -o x.html")).is_none());
        assert!(Forwarded::of(&command("runs")).is_some());
    }

    #[test]
    fn another_version_or_build_is_refused_saying_so() {
        let text = Request::new(Forwarded::of(&command("doctor")).unwrap())
            .to_json()
            .unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["version"] = 999.into();
        v["rtscope"] = "9.9.9".into();
        let e = Request::parse(&v.to_string()).unwrap_err();
        assert!(matches!(e, RequestError::Version { version: 999, .. }));
        let m = e.to_string();
        assert!(m.contains("rtscope 9.9.9") && m.contains("--binary"), "{m}");
        // Same version, a field this build does not know.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["command"]["doctor"]["newer"] = true.into();
        let e = Request::parse(&v.to_string()).unwrap_err();
        assert!(matches!(e, RequestError::Command { .. }), "{e}");
        assert!(e.to_string().contains("newer"), "{e}");
        // A field missing.
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["command"]["doctor"]
            .as_object_mut()
            .unwrap()
            .remove("strict");
        let e = Request::parse(&v.to_string()).unwrap_err();
        assert!(matches!(e, RequestError::Command { .. }), "{e}");
        for bad in ["", "garbage", "{}", "{\"version\": \"1\"}"] {
            let e = Request::parse(bad).unwrap_err();
            assert!(matches!(e, RequestError::Unreadable(_)), "{bad}: {e}");
        }
    }

    #[test]
    fn a_request_runs_only_under_its_command_name_and_a_missing_one_says_so() {
        let dir =
            std::env::temp_dir().join(format!("rtscope-req-{}", crate::record::new_run_uuid()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("request.json");
        let text = Request::new(Forwarded::of(&command("doctor")).unwrap())
            .to_json()
            .unwrap();
        std::fs::write(&file, text).unwrap();
        let args = |command: &str, file: &Path| RequestArgs {
            command: command.into(),
            file: file.to_path_buf(),
        };
        let e = run(&args("study", &file), None).unwrap_err();
        assert!(
            format!("{e:#}").contains("holds the command doctor, not study"),
            "{e:#}"
        );
        let e = run(&args("doctor", &dir.join("nope.json")), None).unwrap_err();
        assert!(format!("{e:#}").contains("reading request"), "{e:#}");
        std::fs::write(&file, "{\"version\": 999, \"rtscope\": \"9.9.9\"}").unwrap();
        let e = run(&args("doctor", &file), None).unwrap_err();
        assert!(
            format!("{e:#}").contains("rtscope 9.9.9 (request version 999)"),
            "{e:#}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
