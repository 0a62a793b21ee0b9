//! `rtscope load`: run a load by itself (until Ctrl-C or -D), list the
//! profiles and parts, print a profile's TOML; and the two hidden
//! subcommands the load runs as (`__load-supervisor`, `__rt-interference`).
//! The `--load*` flags of `measure` and `monitor` are
//! [`crate::measure::settings::LoadSettings`].

use super::Exit;
use super::{cpulist, duration};
use crate::load::part::{Kind, parse_time_with_unit};
use crate::load::profile::{self, Profile};
use crate::load::rt_interference::{self, Interference};
use crate::load::{self, LoadRequest, LoadSession, Verbosity};
use crate::ui::say_line;
use crate::units::{CpuList, fmt_duration};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::path::PathBuf;

/// Generate a load without measuring, until Ctrl-C or -D
///
/// Profiles combine parts (cpu, memory, io, fs, net, sched, irq,
/// hackbench, rt-interference...; --list shows them with their options).
/// By default each part runs in bursts of 15-25 s, each with its own
/// period (27-33 s, drawn from a seed that is printed and recorded), as
/// the seeds' dohell runs did; add :steady to keep every part on.
///
/// Every part runs in process groups of its own, in the cgroups
/// rtscope-load-PID, SCHED_OTHER (rt-interference alone is real-time, on
/// purpose), and everything is ended and removed at the end, on Ctrl-C,
/// on SIGTERM, and when rtscope is killed.
///
/// Examples:
///   sudo rtscope load hell -D 1h
///   sudo rtscope load hell:steady --cpus 0
///   sudo rtscope load rt-interference:prio=60,70,80:busy=17ms
///   rtscope load --print hell > my.toml; sudo rtscope load --file my.toml
///
/// Exit status: 0 done, 2 bad options or a system error.
#[derive(Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct LoadCmdArgs {
    /// Profile and settings: NAME[:KEY=VALUE]... (e.g. hell, cpu:workers=1,
    /// hell:period=10s:active=3s-6s:seed=42, rt-interference:prio=60,70,80).
    #[arg(value_name = "PROFILE")]
    pub profile: Option<String>,

    /// Read the profile from this TOML file instead.
    #[arg(long = "file", value_name = "FILE", conflicts_with = "profile")]
    pub file: Option<PathBuf>,

    /// Run for this long (bare number: seconds; 10m, 1h). Default: until
    /// Ctrl-C.
    #[arg(short = 'D', long = "duration", value_name = "DUR", value_parser = duration)]
    pub duration_ns: Option<u64>,

    /// Run the load on these CPUs only. Default: every CPU this process
    /// may use.
    #[arg(long = "cpus", value_name = "CPULIST", value_parser = cpulist)]
    pub cpus: Option<CpuList>,

    /// Directory for scratch files (a subdirectory rtscope-load-PID is
    /// made and removed). Default: /var/tmp.
    #[arg(long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Write what ran (profile, seed, commands, phases, what was achieved)
    /// as JSON here; - for standard output.
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// List the profiles and the parts with their options, then exit.
    #[arg(long = "list", conflicts_with_all = ["profile", "file", "print"])]
    pub list: bool,

    /// Print the TOML of a built-in profile (a start for --file), then
    /// exit.
    #[arg(long = "print", value_name = "PROFILE")]
    pub print: Option<String>,

    /// Do not print parts going on and off.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
}

pub fn run(args: &LoadCmdArgs) -> Result<Exit> {
    if args.list {
        out!("{}", list());
        return Ok(Exit::Ok);
    }
    if let Some(name) = &args.print {
        let text = profile::builtin_text(name).ok_or_else(|| {
            anyhow::anyhow!(
                "unknown built-in profile '{name}': use one of {}",
                profile::BUILTIN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
        out!("{text}");
        return Ok(Exit::Ok);
    }
    if args.profile.is_none() && args.file.is_none() {
        bail!("give a load profile (rtscope load --list) or --file FILE.toml");
    }
    if args.duration_ns == Some(0) {
        bail!("--duration must be longer than 0");
    }
    if let Some(p) = &args.json {
        crate::output::check_writable(p, "--json")?;
    }
    let req = LoadRequest {
        spec: args.profile.clone(),
        file: args.file.clone(),
        cpus: args.cpus.clone().map(|c| c.0),
        dir: args.dir.clone(),
    };
    let plan = load::prepare(&req, &super::allowed_cpus()?, crate::sys::process::getpid())?;
    plan.check_privileges()?;
    let signals = crate::ui::live::Signals::install().context("installing signal handlers")?;
    say_line(&format!(
        "rtscope: load: {}; {}",
        plan.describe(),
        match args.duration_ns {
            Some(d) => format!("for {}", fmt_duration(d)),
            None => "until Ctrl-C".into(),
        }
    ));
    let verbosity = if args.quiet {
        Verbosity::Problems
    } else {
        Verbosity::Phases
    };
    let mut session = LoadSession::start(plan, verbosity)?;
    session.run_until(&signals.stop, args.duration_ns);
    session.stop();
    let rec = session.record(None);
    say_line(&format!("rtscope: {}", session.describe()));
    if let Some(p) = &args.json {
        let mut text = serde_json::to_string_pretty(&rec).context("serializing the load record")?;
        text.push('\n');
        crate::output::write_atomic(p, text.as_bytes())?;
    }
    Ok(Exit::Ok)
}

/// `--list`: profiles, then parts and their options.
pub fn list() -> String {
    let mut s = String::from("Profiles (rtscope load NAME, measure --load NAME[:K=V]...):\n");
    for (name, _) in profile::BUILTIN {
        match Profile::builtin(name) {
            Ok(p) => {
                let parts: Vec<&str> = p.parts.iter().map(|q| q.name.as_str()).collect();
                let steady: Vec<&str> = p
                    .parts
                    .iter()
                    .filter(|q| q.rhythm.apply(p.rhythm).steady)
                    .map(|q| q.name.as_str())
                    .collect();
                let rhythm = if steady.len() == p.parts.len() {
                    "steady".to_string()
                } else {
                    let bursts = format!(
                        "bursts {}-{} every ~{}",
                        fmt_duration(p.rhythm.active_min_ns),
                        fmt_duration(p.rhythm.active_max_ns),
                        fmt_duration(p.rhythm.period_ns)
                    );
                    if steady.is_empty() {
                        bursts
                    } else {
                        format!("{} steady, the rest in {bursts}", steady.join(", "))
                    }
                };
                s.push_str(&format!(
                    "  {name:<16} {} [{}; {rhythm}]\n",
                    p.about,
                    parts.join(", ")
                ));
            }
            Err(e) => s.push_str(&format!("  {name:<16} (broken: {e})\n")),
        }
    }
    s.push_str(
        "\nProfile settings (NAME:KEY=VALUE:...):\n  \
         steady | bursts      keep every part on | in bursts\n  \
         period=DUR           mean burst period (each part's own: period x (1 +- spread))\n  \
         spread=F             0-0.5, default 0.1\n  \
         active=DUR[-DUR]     burst length (drawn for every burst)\n  \
         seed=N               seed of the schedule (default: random, printed and recorded)\n  \
         KEY=VALUE            an option of every part that has it\n  \
         PART.KEY=VALUE       an option (or period, active...) of one part\n",
    );
    s.push_str("\nParts (load = \"NAME\" in a profile file):\n");
    for p in load::PARTS {
        let tool = match p.tool {
            Some(t) => format!("{} from Debian package {}", t.program, t.package),
            None if p.name == "command" => "any program".into(),
            None => "built into rtscope".into(),
        };
        s.push_str(&format!("  {:<16} {} ({tool})\n", p.name, p.help));
        for o in p.options {
            let default = match o.default {
                Some(d) => format!("default {d}"),
                None => "required".into(),
            };
            let kind = match o.kind {
                Kind::Flag => "true/false".to_string(),
                k => k.describe(),
            };
            s.push_str(&format!(
                "      {:<12} {} ({kind}; {default})\n",
                o.name, o.help
            ));
        }
    }
    s
}

/// Internal: the load supervisor (started by rtscope itself).
#[derive(Args, Debug, Clone)]
pub struct SupervisorArgs {}

pub fn run_supervisor(_: &SupervisorArgs) -> Result<Exit> {
    match load::supervisor::main() {
        0 => Ok(Exit::Ok),
        code => bail!("load supervisor ended with status {code}"),
    }
}

/// Internal: the rt-interference threads (started by the load
/// supervisor).
#[derive(Args, Debug, Clone)]
pub struct InterferenceArgs {
    #[arg(long = "prio", value_delimiter = ',', required = true)]
    pub prio: Vec<i32>,
    #[arg(long = "busy")]
    pub busy: String,
    #[arg(long = "sleep")]
    pub sleep: String,
    #[arg(long = "cpus", value_parser = cpulist)]
    pub cpus: CpuList,
}

pub fn run_interference(a: &InterferenceArgs) -> Result<Exit> {
    let cfg = Interference {
        prios: a.prio.clone(),
        busy_ns: parse_time_with_unit(&a.busy).map_err(anyhow::Error::msg)?,
        sleep_ns: parse_time_with_unit(&a.sleep).map_err(anyhow::Error::msg)?,
        cpus: a.cpus.0.clone(),
    };
    if cfg.prios.iter().any(|p| !(1..=99).contains(p)) {
        bail!("rt-interference: priorities must be 1-99");
    }
    rt_interference::run(&cfg)?;
    Ok(Exit::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_profile_and_part() {
        let l = list();
        for (name, _) in profile::BUILTIN {
            assert!(l.contains(name), "{name}");
        }
        for p in load::PARTS {
            assert!(l.contains(p.name), "{}", p.name);
        }
        assert!(!l.contains("broken"));
        assert!(l.contains("stress-ng from Debian package stress-ng"));
        assert!(l.contains("hackbench from Debian package rt-tests"));
    }
}
