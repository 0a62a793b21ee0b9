//! Command-line definitions (clap), one file per subcommand, and the
//! dispatch from a parsed command to the library. The library's core never
//! sees a flag: each subcommand turns its flags into typed options.

pub mod load;
pub mod measure;
pub mod schema;

use clap::{Parser, Subcommand};

/// An oscilloscope for real-time Linux: how late can a periodic real-time
/// thread wake up on this system?
#[derive(Parser, Debug)]
#[command(name = "rtscope", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Measure wake-up latency of periodic real-time threads
    /// (cyclictest's flags work).
    Measure(measure::MeasureArgs),
    // The help of `load` comes from `LoadCmdArgs`.
    Load(load::LoadCmdArgs),
    /// Print the JSON Schema of the run record (--json files).
    Schema(schema::SchemaArgs),
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
    match cli.command {
        Command::Measure(args) => measure::run(&args),
        Command::Schema(args) => schema::run(&args),
        Command::Load(args) => load::run(&args),
        Command::LoadSupervisor(args) => load::run_supervisor(&args),
        Command::RtInterference(args) => load::run_interference(&args),
    }
}
