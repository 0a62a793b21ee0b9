//! Command-line definitions (clap), one file per subcommand, and the
//! dispatch from a parsed command to the library. The library's core never
//! sees a flag: each subcommand turns its flags into typed options.

pub mod import;
pub mod measure;
pub mod runs;
pub mod schema;

use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// An oscilloscope for real-time Linux: how late can a periodic real-time
/// thread wake up on this system?
#[derive(Parser, Debug)]
#[command(name = "rtscope", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Run store (SQLite file) to use. Default:
    /// $XDG_DATA_HOME/rtscope/rtscope.db, else
    /// ~/.local/share/rtscope/rtscope.db (under sudo: root's home).
    #[arg(long = "db", value_name = "PATH", env = "RTSCOPE_DB", global = true)]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure wake-up latency of periodic real-time threads
    /// (cyclictest's flags work).
    Measure(measure::MeasureArgs),
    /// Print the JSON Schema of the run record (--json files).
    Schema(schema::SchemaArgs),
    // No doc comment: the one of the Args struct (short line, then the
    // long help) is used.
    Runs(runs::RunsArgs),
    Import(import::ImportArgs),
}

/// How a successful command ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exit status 0.
    Ok,
    /// Exit status 1: a latency limit was exceeded.
    LimitExceeded,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Ok => 0,
            Exit::LimitExceeded => 1,
        }
    }
}

/// Run a parsed command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    crate::store::choose(cli.db.clone());
    match cli.command {
        Command::Measure(args) => measure::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Runs(args) => runs::run(&args),
        Command::Import(args) => import::run(&args),
    }
}
