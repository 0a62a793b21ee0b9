//! `rtscope study`: maps the subcommands (run a file, new, status,
//! resume, report, remove) to the library's `study` calls (a study file's
//! options are `measure::Settings`, read by the library); prints progress
//! and outcomes.

use super::Exit;
use crate::engine::{Control, Observer, RunView};
use crate::store::Store;
use crate::study::gate::{Check, Gate, GateError};
use crate::study::run::{self, Display, RunEnd, Summary};
use crate::study::spec;
use crate::study::state::{SlotState, Study};
use crate::study::{self as lib, StudyError, check, results};
use crate::sysinfo::kernel_match::Kernel;
use crate::text::num::counted;
use crate::ui::live::Signals;
use crate::units::{fmt_duration, us_cell};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Run a study: a matrix of measure configurations (kernels included),
/// each cell for a set time and number of repetitions, resumable after
/// a kill, a power cut or a reboot, compared in one report.
///
/// A study file (TOML) names the dimensions to cross in [matrix] (keys
/// are measure's long options: policy, timer, interval, priority,
/// threads, load, isolate, ...; each a list of values), the options all
/// cells share in [fixed], and at the top name, duration (per run),
/// repetitions, order (random, interleaved, sequential) and seed. A
/// kernel key (a list of preemption models or releases: rt, none,
/// "6.18*") makes the kernel a dimension: each kernel runs the cells
/// that need it, the others wait. `rtscope study new NAME` writes a
/// commented example.
///
/// The study lives in the run store: after Ctrl-C, kill -9, a power cut
/// or a reboot, `rtscope study resume` goes on from the first unfinished
/// run (a run cut short is redone; the report says which were).
///
/// A cmdline key (a list of kernel arguments: "", "isolcpus=1
/// nohz_full=1") crosses the matrix with boots; a cell is measured only
/// on a boot that matches its kernel and arguments (in effect). With
/// --reboot, rtscope boots each configuration in turn (kexec, a one-time
/// GRUB entry, or a hook), resumes from a systemd unit of its own after
/// each boot, and boots back where it started at the end; `study pause`
/// and `study stop` end its reboots.
///
/// Examples:
///   rtscope study new bench            # writes bench.toml
///   sudo rtscope study examples/seed-000-matrix.toml
///   sudo rtscope study resume seed-000
///   sudo rtscope study examples/seed-001-configurations.toml --reboot
///   rtscope study status
///   rtscope study report seed-000 -o seed-000.html --fail-if 'policy=fifo:max>200us'
///
/// Exit status: 0 done (or stopped by a signal: resume continues), 1 a
/// --fail-if gate failed, 2 a bad study file, bad options or a system
/// error.
#[derive(Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[command(verbatim_doc_comment, args_conflicts_with_subcommands = true)]
pub struct StudyArgs {
    #[command(subcommand)]
    pub command: Option<StudyCommand>,

    /// The study file to run (or to continue, if a study of that name
    /// and the same text is in the store).
    #[arg(value_name = "FILE.toml")]
    pub file: Option<PathBuf>,

    #[command(flatten)]
    pub run: RunFlags,

    /// Check the file and print the runs in order, with the measure
    /// command each one is; run nothing.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

/// Flags of the commands that run a study.
#[derive(Args, Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunFlags {
    /// No progress bar; one line per run on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Exit 1 when a cell is worse than a limit, once the runs are done:
    /// [KEY=VALUE,...:]METRIC>LIMIT, e.g. 'policy=fifo:max>200us',
    /// 'p99.99>50us'. Metrics: p99, p99.99, max, avg (bare number: us),
    /// missed (a count). Repeatable.
    #[arg(long = "fail-if", value_name = "GATE", value_parser = gate)]
    pub fail_if: Vec<Gate>,

    #[command(flatten)]
    pub metrics: super::metrics::MetricsArgs,

    /// The options of the study's reboots (--reboot and its company).
    #[command(flatten)]
    pub boots: super::reboot::RebootArgs,
}

fn gate(s: &str) -> Result<Gate, GateError> {
    Gate::parse(s)
}

#[derive(Subcommand, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub enum StudyCommand {
    /// Write a commented example study file NAME.toml to start from.
    New {
        /// The study's name (letters, digits, - _ . +).
        #[arg(value_name = "NAME")]
        name: String,
        /// Write here instead of NAME.toml; - for standard output.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Where a study stands: every run done, to do, or waiting for a
    /// kernel, and the runs cut short.
    Status {
        /// The study (default: the newest one).
        #[arg(value_name = "NAME")]
        name: Option<String>,
        /// Print it as JSON.
        #[arg(long = "json")]
        json: bool,
    },
    /// Go on with a study from its first unfinished run (the study's
    /// text is in the store: the file is not needed).
    Resume {
        /// The study (default: the newest one).
        #[arg(value_name = "NAME")]
        name: Option<String>,
        #[command(flatten)]
        run: RunFlags,
    },
    /// Write the study's one-page HTML comparison.
    Report {
        /// The study (default: the newest one).
        #[arg(value_name = "NAME")]
        name: Option<String>,
        /// The HTML file to write (default: NAME.html).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// As for running a study: exit 1 when a cell is worse than a
        /// limit.
        #[arg(long = "fail-if", value_name = "GATE", value_parser = gate)]
        fail_if: Vec<Gate>,
        /// Judge every cell against this deadline instead of the one its
        /// runs recorded (bare number: us; 250us, 2ms); the stored runs
        /// are left as they are. A study file sets it for its runs with
        /// the key deadline (in [fixed] or [matrix]).
        #[arg(long = "deadline", value_name = "DUR", value_parser = crate::measure::settings::parse::deadline)]
        deadline: Option<u64>,
    },
    /// Stop rebooting for a while: no boot is taken (a pending one is
    /// cancelled) until `study resume NAME --reboot`; the resume unit
    /// stays.
    Pause {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// End a study's reboots: cancel a pending boot, stop its runner
    /// (its current run is redone on resume), remove its unit.
    Stop {
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// Forget a study (its runs stay in the store).
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

// ------------------------------------------------------------ the display

/// Progress of a whole study: one bar for all the runs this kernel owes
/// (a terminal), or one line per run (quiet or not a terminal).
struct Progress {
    bar: Option<ProgressBar>,
    signals: Signals,
    /// Time of the runs before this one, as the bar counts it (ms).
    base_ms: u64,
    current: String,
    /// The --metrics endpoint, up for the whole study.
    metrics: Option<crate::metrics::MetricsServer>,
}

impl Progress {
    fn new(quiet: bool, signals: Signals) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let b = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr_with_hz(4));
            b.set_style(
                ProgressStyle::with_template(
                    "{elapsed_precise} [{wide_bar}] {percent:>3}%  ETA {eta}  {msg}",
                )
                .expect("static template")
                .progress_chars("=> "),
            );
            b
        });
        Progress {
            bar,
            signals,
            base_ms: 0,
            current: String::new(),
            metrics: None,
        }
    }

    fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }
}

impl Observer for Progress {
    fn warning(&mut self, message: &str) {
        self.say(&format!("rtscope: {} warning: {message}", self.current));
    }

    fn tick(&mut self, view: &RunView) -> Control {
        if self.signals.stop.load(Ordering::SeqCst) {
            return Control::Stop;
        }
        if let Some(b) = &self.bar {
            b.set_position(self.base_ms + view.elapsed_ns() / 1_000_000);
        }
        Control::Continue
    }
}

impl Display for Progress {
    fn starting(
        &mut self,
        slot: &crate::store::studies::SlotRow,
        n: usize,
        of: usize,
        eta_ns: u64,
    ) {
        self.current = format!("[{n}/{of}]");
        let what = format!("{} #{}", slot.label, slot.repetition);
        match &self.bar {
            Some(b) => {
                let pos = b.position();
                self.base_ms = pos;
                b.set_length(pos + eta_ns / 1_000_000);
                b.set_message(format!("{n}/{of} {what}"));
            }
            None => eprintln!(
                "rtscope: study run {n}/{of}: {what} (about {} left for this kernel's runs)",
                fmt_duration(eta_ns)
            ),
        }
    }

    fn observer(&mut self) -> &mut dyn Observer {
        self
    }

    fn ended(&mut self, slot: &crate::store::studies::SlotRow, end: &RunEnd) {
        let what = format!("{} #{}", slot.label, slot.repetition);
        let line = match end {
            RunEnd::Done {
                run_id,
                max_ns,
                p99_ns,
            } => format!(
                "rtscope: {} {what}: done, p99 {} µs, max {} µs{}",
                self.current,
                us_cell(*p99_ns),
                us_cell(*max_ns),
                run_id.map(|i| format!(" (run {i})")).unwrap_or_default()
            ),
            RunEnd::Interrupted => format!(
                "rtscope: {} {what}: stopped before its end (kept as interrupted; resume redoes it)",
                self.current
            ),
            RunEnd::Failed(why) => format!("rtscope: {} {what}: failed: {why}", self.current),
        };
        self.say(&line);
    }

    fn note(&mut self, message: &str) {
        self.say(&format!("rtscope: {message}"));
    }

    fn metrics(&self) -> Option<crate::metrics::Feed> {
        self.metrics.as_ref().map(|m| m.feed())
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

// ------------------------------------------------------------ the commands

/// Run `rtscope study`; `db` is the store chosen with `--db`, if any.
pub fn run(args: &StudyArgs, db: Option<&Path>) -> Result<Exit> {
    match &args.command {
        Some(StudyCommand::New { name, output }) => new(name, output.as_deref()),
        Some(StudyCommand::Status { name, json }) => status(db, name.as_deref(), *json),
        Some(StudyCommand::Resume { name, run }) => resume(db, name.as_deref(), run),
        Some(StudyCommand::Report {
            name,
            output,
            fail_if,
            deadline,
        }) => report(db, name.as_deref(), output.as_deref(), fail_if, *deadline),
        Some(StudyCommand::Remove { name }) => remove(db, name),
        Some(StudyCommand::Pause { name }) => super::reboot::pause_or_stop(db, name, false),
        Some(StudyCommand::Stop { name }) => super::reboot::pause_or_stop(db, name, true),
        None => match &args.file {
            Some(file) => start(db, file, &args.run, args.dry_run),
            None => bail!(
                "name a study file (rtscope study FILE.toml), or a subcommand: new, status, resume, report, remove (see rtscope study --help)"
            ),
        },
    }
}

/// Read and check a study file.
fn read_spec(file: &Path) -> Result<(spec::Spec, String)> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the study file {}", file.display()))?;
    let shown = file.display().to_string();
    let spec = spec::parse(&text, &shown)?;
    check::check(&spec, &shown)?;
    Ok((spec, text))
}

/// The store `--db` names, else the default one.
fn open_store(db: Option<&Path>) -> Result<Store> {
    Ok(Store::open(&crate::store::locate(db)?)?)
}

fn start(db: Option<&Path>, file: &Path, flags: &RunFlags, dry_run: bool) -> Result<Exit> {
    let (spec, text) = read_spec(file)?;
    if dry_run {
        dry(&spec, flags.boots.reboot)?;
        if flags.boots.reboot {
            super::reboot::dry(&spec, &flags.boots)?;
        }
        return Ok(Exit::Ok);
    }
    let kernel = Kernel::running();
    let mut store = open_store(db)?;
    let path = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let row = run::create_or_find(
        &mut store,
        &spec,
        &text,
        Some(&path.display().to_string()),
        &kernel,
    )?;
    measure_study(store, db, row, flags)
}

fn resume(db: Option<&Path>, name: Option<&str>, flags: &RunFlags) -> Result<Exit> {
    let kernel = Kernel::running();
    let store = open_store(db)?;
    let study = match Study::load(&store, name, &kernel) {
        // The unit of a study removed since: nothing to resume.
        Err(StudyError::NoStudy { name, .. }) if flags.boots.continue_boots => {
            super::reboot::forget(&name)?;
            return Ok(Exit::Ok);
        }
        r => r?,
    };
    let shown = format!("study '{}' (stored)", study.row.name);
    check::check(&study.spec, &shown)?;
    let rebooting = flags.boots.reboot || flags.boots.continue_boots;
    if study.to_do() == 0 && study.waiting() == 0 && !rebooting {
        eprintln!(
            "rtscope: study '{}' is complete ({} runs): `rtscope study report {}` writes its report",
            study.row.name,
            study.done(),
            study.row.name
        );
        return gates(&store, &study, &flags.fail_if);
    }
    let row = study.row.clone();
    measure_study(store, db, row, flags)
}

/// Measure what the running kernel owes of a stored study.
fn measure_study(
    mut store: Store,
    db: Option<&Path>,
    row: crate::store::studies::StudyRow,
    flags: &RunFlags,
) -> Result<Exit> {
    // As for measure: timer signals are for the measuring threads, and a
    // signal asks to stop.
    let _ = crate::sys::signal::timer_signals().block();
    let signals = Signals::install().context("installing signal handlers")?;
    let name = row.name.clone();
    let rebooting = flags.boots.reboot || flags.boots.continue_boots;
    if rebooting
        && let super::reboot::Go::Quit(exit) =
            super::reboot::before(&store, db, &row, &flags.boots)?
    {
        return Ok(exit);
    }
    let id_row = row.clone();
    let summary = {
        let mut progress = Progress::new(flags.quiet, signals.clone());
        progress.metrics = flags.metrics.start()?;
        run::run(&mut store, db, row, &mut progress, &signals.stop)?
    };
    if rebooting
        && !summary.stopped
        && let Some(exit) = super::reboot::after(&store, &id_row)?
    {
        return Ok(exit);
    }
    let kernel = Kernel::running();
    let study = Study::load(&store, Some(&name), &kernel)?;
    print_end(&study, &summary);
    if summary.stopped {
        return Ok(Exit::Ok);
    }
    let exit = gates(&store, &study, &flags.fail_if)?;
    if !summary.failed.is_empty() {
        bail!(
            "{} of this study's runs failed (the first: {}: {}); fix the cause, then `rtscope study resume {name}` runs them again",
            summary.failed.len(),
            summary.failed[0].0,
            summary.failed[0].1
        );
    }
    Ok(exit)
}

fn print_end(study: &Study, summary: &Summary) {
    let name = &study.row.name;
    let mut line = format!(
        "rtscope: study '{name}': {} of {} runs done",
        study.done(),
        study.slots.len()
    );
    if let Some(o) = summary.overhead_ns {
        line.push_str(&format!(
            " ({} finished now, {} of set-up per run)",
            summary.finished,
            fmt_duration(o)
        ));
    }
    eprintln!("{line}");
    if summary.stopped {
        eprintln!(
            "rtscope: stopped by a signal: `rtscope study resume {name}` goes on from the first unfinished run"
        );
    }
    for (k, n, why) in study.waiting_boots() {
        eprintln!(
            "rtscope: {n} runs wait for {k} ({why}): boot it, then `rtscope study resume {name}` (or let `rtscope study resume {name} --reboot` do it)"
        );
    }
    for s in &study.slots {
        if let SlotState::CannotBoot { boot, why } = &s.state {
            eprintln!(
                "rtscope: {} #{}: not measured: {boot} could not be booted: {why}",
                s.slot.label, s.slot.repetition
            );
        }
    }
    if study.to_do() == 0 && study.waiting() == 0 {
        eprintln!("rtscope: complete: `rtscope study report {name}` writes the comparison");
    }
}

/// Apply `--fail-if` gates to a study's results.
fn gates(store: &Store, study: &Study, gates: &[Gate]) -> Result<Exit> {
    if gates.is_empty() {
        return Ok(Exit::Ok);
    }
    let cells = results::collect(store, study)?;
    let mut failed: Vec<Check> = Vec::new();
    for g in gates {
        let checks = g.apply(&cells)?;
        failed.extend(checks.into_iter().filter(|c| c.failed));
    }
    for c in &failed {
        let value = if c.gate.contains("missed") {
            format!("{}", c.value)
        } else {
            format!("{} µs", us_cell(Some(c.value as u64)))
        };
        eprintln!(
            "rtscope: --fail-if '{}' failed for cell {}: {value}",
            c.gate, c.cell
        );
    }
    Ok(if failed.is_empty() {
        Exit::Ok
    } else {
        Exit::GateFailed
    })
}

/// `study FILE --dry-run`: every run in the order it would run, as a
/// measure command. With `by_boot` (--reboot) the runs are grouped by the
/// boot they run in, as the round takes them: this boot's first, then
/// each configuration in the order the schedule first needs it.
fn dry(spec: &spec::Spec, by_boot: bool) -> Result<Exit> {
    let cells = crate::study::matrix::cells(spec);
    let seed = spec.seed.unwrap_or(0);
    let slots = crate::study::matrix::schedule(cells.len(), spec.repetitions, spec.order, seed);
    let boots = crate::study::boots::Boots::of(spec, &cells);
    outln!(
        "study '{}': {} × {} = {} of {} ({} in all), order {}{}",
        spec.name,
        counted(cells.len() as u64, "cell", "cells"),
        counted(spec.repetitions as u64, "repetition", "repetitions"),
        counted(slots.len() as u64, "run", "runs"),
        fmt_duration(spec.duration_ns),
        fmt_duration(spec.duration_ns.saturating_mul(slots.len() as u64)),
        spec.order.name(),
        if spec.seed.is_none() && spec.order == spec::Order::Random {
            " (the seed is drawn when the study starts: the order below is seed 0's)"
        } else {
            ""
        }
    );
    // The groups of runs, each with its heading (none without --reboot).
    let groups: Vec<(Option<String>, Vec<&crate::study::matrix::Slot>)> = if by_boot && boots.any()
    {
        boots
            .by_boot(&slots, &Kernel::running())
            .into_iter()
            .map(|(config, of)| {
                let heading = match config {
                    None => "on this boot:".to_string(),
                    Some(c) => format!("after a boot into {c}:"),
                };
                (Some(heading), of)
            })
            .collect()
    } else {
        vec![(None, slots.iter().collect())]
    };
    let mut n = 0;
    for (heading, group) in groups {
        if let Some(h) = heading {
            outln!("{h}");
        }
        for s in group {
            n += 1;
            let cell = &cells[s.cell];
            let r = check::cell_request(spec, cell, cell.label(), &[], None)?;
            let kernel = if boots.any() {
                format!(" [{}]", boots.label(&boots.needs[s.cell]))
            } else {
                String::new()
            };
            outln!(
                "{n:>4}  {} #{}{kernel}: {}",
                cell.label(),
                s.repetition,
                r.command_line.join(" ")
            );
        }
    }
    Ok(Exit::Ok)
}

fn status(db: Option<&Path>, name: Option<&str>, json: bool) -> Result<Exit> {
    let kernel = Kernel::running();
    let Some(store) = Store::open_existing(&crate::store::locate(db)?)? else {
        bail!(
            "no study yet: the run store does not exist (start one with `rtscope study FILE.toml`)"
        );
    };
    let study = Study::load(&store, name, &kernel)?;
    let others: Vec<String> = store
        .studies()?
        .into_iter()
        .map(|s| s.name)
        .filter(|n| *n != study.row.name)
        .collect();
    if json {
        super::print_json(&crate::study::status::json(&store, &study, &kernel)?)?;
        return Ok(Exit::Ok);
    }
    for line in crate::study::status::lines(&store, &study, &kernel)? {
        outln!("{line}");
    }
    if !others.is_empty() {
        outln!("other studies in the store: {}", others.join(", "));
    }
    Ok(Exit::Ok)
}

fn report(
    db: Option<&Path>,
    name: Option<&str>,
    output: Option<&Path>,
    fail_if: &[Gate],
    deadline_ns: Option<u64>,
) -> Result<Exit> {
    let kernel = Kernel::running();
    let Some(store) = Store::open_existing(&crate::store::locate(db)?)? else {
        bail!(
            "no study yet: the run store does not exist (start one with `rtscope study FILE.toml`)"
        );
    };
    let study = Study::load(&store, name, &kernel)?;
    let mut cells = results::collect(&store, &study)?;
    if let Some(d) = deadline_ns {
        let runs = cells.iter_mut().flat_map(|c| c.runs.iter_mut());
        runs.for_each(|(_, _, r)| r.limits.deadline_ns = Some(d));
    }
    let html = lib::report::render(&study, &cells)?;
    let out = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("{}.html", study.row.name)));
    crate::output::write_atomic(&out, html.as_bytes())
        .with_context(|| format!("cannot write the report {}", out.display()))?;
    eprintln!(
        "rtscope: wrote {} (study '{}': {} of {} runs done)",
        out.display(),
        study.row.name,
        study.done(),
        study.slots.len()
    );
    gates(&store, &study, fail_if)
}

fn remove(db: Option<&Path>, name: &str) -> Result<Exit> {
    let mut store = open_store(db)?;
    let Some(row) = store.study(name)? else {
        return Err(StudyError::NoStudy {
            name: name.to_string(),
            store: store.path().display().to_string(),
        }
        .into());
    };
    if let Some(o) = &row.running {
        return Err(StudyError::Busy {
            name: name.to_string(),
            pid: o.pid,
            host: o.host.clone(),
        }
        .into());
    }
    super::reboot::end_for_removal(&store, &row)?;
    store.remove_study(row.id)?;
    eprintln!("rtscope: removed study '{name}' (its runs stay: `rtscope runs`)");
    Ok(Exit::Ok)
}

// ------------------------------------------------------------ study new

/// The starter study `study new` writes: one question (idle against a
/// load), short, with the other questions and the seed articles' studies
/// (examples/) named in its comments. `NEW` stands for the study's name,
/// `NEW.toml` for its file.
const TEMPLATE: &str = include_str!("../../assets/studies/new.toml");

fn new(name: &str, output: Option<&Path>) -> Result<Exit> {
    spec::check_name(name)?;
    let out = output
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("{name}.toml")));
    // Written to standard output, the file is named by the user: its
    // comments name the default one.
    let shown = if out == Path::new("-") {
        PathBuf::from(format!("{name}.toml"))
    } else {
        out.clone()
    };
    let text = example_named(name, &shown.display().to_string());
    if out == Path::new("-") {
        out!("{text}");
        return Ok(Exit::Ok);
    }
    if out.exists() {
        bail!(
            "{} exists already: choose another file with -o, or remove it",
            out.display()
        );
    }
    std::fs::write(&out, &text).with_context(|| format!("cannot write {}", out.display()))?;
    eprintln!(
        "rtscope: wrote {}: edit it, check it with `rtscope study {} --dry-run`, run it with `sudo rtscope study {}`",
        out.display(),
        out.display(),
        out.display()
    );
    Ok(Exit::Ok)
}

/// The template with `name` in place of `NEW`, and `file` in place of
/// `NEW.toml` in the commands its comments show.
fn example_named(name: &str, file: &str) -> String {
    TEMPLATE
        .lines()
        .map(|l| {
            if l.starts_with("name = ") {
                format!("name = \"{name}\"")
            } else if l.starts_with('#') {
                l.replace("NEW.toml", file).replace("NEW", name)
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_is_a_valid_study() {
        let text = example_named("mine", "studies/mine.toml");
        let spec = spec::parse(&text, "mine.toml").unwrap();
        assert_eq!(spec.name, "mine");
        // Its comments name the file written and the study's name.
        assert!(!text.contains("NEW"), "{text}");
        assert!(text.contains("sudo rtscope study studies/mine.toml"));
        assert!(text.contains("rtscope study resume mine"));
        // A starter, not the seed article's 9-cell matrix: one question
        // of two cells, the seeds' studies named for what they are.
        let cells: usize = spec.matrix.iter().map(|d| d.values.len()).product();
        assert_eq!(cells, 2, "{text}");
        assert!(text.contains("seed-000-matrix.toml"), "{text}");
        for s in &spec.fixed {
            check::check_value(&s.key, &s.value).unwrap();
        }
        for d in &spec.matrix {
            for v in &d.values {
                check::check_value(&d.key, v).unwrap();
            }
        }
    }

    #[test]
    fn options_are_measure_s() {
        use crate::study::spec::Value;
        let check = check::check_value;
        assert!(check("policy", &Value::Text("fifo".into())).is_ok());
        assert!(
            check("load_cpus", &Value::Text("0".into())).is_err(),
            "keys arrive normalized"
        );
        assert!(check("load-cpus", &Value::Text("0".into())).is_ok());
        assert!(check("no-mlock", &Value::Bool(true)).is_ok());
        assert!(check("isolate", &Value::Bool(false)).is_ok());
        let e = check("policy", &Value::Text("fast".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown policy 'fast'"), "{e}");
        let e = check("speed", &Value::Int(3)).unwrap_err().to_string();
        assert!(e.contains("unknown option"), "{e}");
        let e = check("json", &Value::Text("-".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an option of a study"), "{e}");
    }
}
