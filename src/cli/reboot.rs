//! `rtscope study ... --reboot`, `study pause`, `study stop`: the
//! command side of studies that reboot (the library's
//! `study::reboot`): start or continue a round, check the boot the
//! machine came up in, and after the runs this boot owes, take the next
//! boot (or the boot back, or end the round). Prints what it does.

use super::Exit;
use crate::store::Store;
use crate::store::boots::RoundState;
use crate::store::studies::StudyRow;
use crate::study::reboot::{self, Plan, kernels, method, method::Method, unit};
use crate::study::spec::RebootSpec;
use crate::study::state::Study;
use crate::sysinfo::SysRoot;
use crate::sysinfo::kernel_match::Kernel;
use anyhow::{Context, Result, bail};
use std::io::IsTerminal;
use std::path::Path;

/// The options of a study's reboots, flattened into `study`'s and
/// `study resume`'s own.
#[derive(clap::Args, Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RebootArgs {
    /// Reboot into each boot configuration the study names (kernel,
    /// cmdline) when this boot owes no more runs: a systemd unit resumes
    /// the study after each boot, and the machine boots back into this
    /// boot at the end. Asks first, unless the study file says reboot =
    /// true or --yes is given. See docs/study.md.
    #[arg(long = "reboot")]
    pub reboot: bool,
    /// With --reboot: do not ask.
    #[arg(long = "yes", requires = "reboot")]
    pub yes: bool,
    /// With --reboot: kexec, grub or hook (default: the study file's
    /// boot-method, else kexec when it works here, else grub).
    #[arg(long = "boot-method", value_name = "METHOD", requires = "reboot", value_parser = ["kexec", "grub", "hook"])]
    pub boot_method: Option<String>,
    /// With --reboot: the program that arranges a one-time boot (method
    /// hook): called as PROGRAM boot|home|cancel with RTSCOPE_BOOT_KERNEL,
    /// RTSCOPE_BOOT_INITRD, RTSCOPE_BOOT_CMDLINE in its environment.
    #[arg(long = "boot-hook", value_name = "PROGRAM", requires = "reboot")]
    pub boot_hook: Option<String>,
    /// With --reboot: at most this many reboots into configurations
    /// (default: the file's max-reboots, else twice the boot
    /// configurations and 2).
    #[arg(long = "max-reboots", value_name = "N", requires = "reboot", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_reboots: Option<u32>,
    /// Resume a round of reboots from its unit (after a boot).
    #[arg(long = "continue-boots", hide = true, conflicts_with = "reboot")]
    pub continue_boots: bool,
}

/// Where the unit, `/boot` and GRUB's files are.
const ROOT: &str = "/";

fn root() -> &'static Path {
    Path::new(ROOT)
}

fn say(m: &str) {
    eprintln!("rtscope: {m}");
}

fn boot_id() -> String {
    crate::sysinfo::kernel::boot_id(&SysRoot::host()).unwrap_or_default()
}

/// Whether to go on measuring after [`before`].
pub enum Go {
    Measure,
    Quit(Exit),
}

/// Before the runs of a rebooting study: take (or start) its round and
/// look at the boot the machine came up in.
pub fn before(store: &Store, db: Option<&Path>, row: &StudyRow, flags: &RebootArgs) -> Result<Go> {
    let kernel = Kernel::running();
    let study = Study::of_row(store, row.clone(), &kernel)?;
    let name = &row.name;
    match reboot::round_of(&study)? {
        Some((r, _)) if r.state == RoundState::Active => {}
        Some((r, _)) if r.state == RoundState::Paused && !flags.continue_boots => {
            store.set_round_state(row.id, r.round, RoundState::Active, Some("resumed"))?;
            say(&format!(
                "study '{name}': its reboots go on (round {})",
                r.round
            ));
        }
        Some((r, _)) if r.state == RoundState::Paused => {
            say(&format!(
                "study '{name}' is paused: no run and no reboot until `rtscope study resume {name} --reboot`"
            ));
            return Ok(Go::Quit(Exit::Ok));
        }
        r if flags.continue_boots => {
            let state = r.map(|(r, _)| r.state.name()).unwrap_or("never started");
            unit::remove(root(), name)?;
            say(&format!(
                "study '{name}' has no round of reboots going on ({state}): its unit is removed"
            ));
            return Ok(Go::Quit(Exit::Ok));
        }
        _ => start_round(store, db, &study, &kernel, flags)?,
    }
    let study = Study::of_row(store, row.clone(), &kernel)?;
    if let Some(m) = reboot::arrive(store, &study, &kernel, &boot_id())? {
        say(&format!("study '{name}': {m}"));
    }
    Ok(Go::Measure)
}

/// The method the file (`r`) or the flags ask for, or the first available.
fn choose_method(r: &RebootSpec, flags: &RebootArgs) -> Result<Method> {
    let hook = flags.boot_hook.clone().or_else(|| r.hook.clone());
    let wanted = flags
        .boot_method
        .clone()
        .or_else(|| r.method.clone())
        .or_else(|| hook.as_ref().map(|_| "hook".to_string()));
    match wanted.as_deref() {
        Some("kexec") => kexec().map_err(anyhow::Error::msg),
        Some("grub") => grub().map_err(anyhow::Error::msg),
        Some("hook") => {
            let Some(h) = hook else {
                bail!("boot method hook needs --boot-hook PROGRAM (or boot-hook in the study file)");
            };
            if !crate::load::plan::is_executable(Path::new(&h)) {
                bail!("the boot hook {h} is not an executable file");
            }
            Ok(Method::Hook { program: h })
        }
        Some(other) => bail!("unknown boot method '{other}': use kexec, grub or hook"),
        None => kexec().or_else(|k| {
            grub().map_err(|g| {
                anyhow::anyhow!(
                    "no way to arrange a one-time boot here: kexec: {k}; grub: {g}; or give a hook (--boot-hook PROGRAM, see docs/study.md)"
                )
            })
        }),
    }
}

fn kexec() -> Result<Method, String> {
    if crate::load::plan::find_program("kexec").is_none() {
        return Err("kexec is not installed (Debian: apt-get install kexec-tools)".into());
    }
    if SysRoot::host()
        .read("/proc/sys/kernel/kexec_load_disabled")
        .is_some_and(|v| v.trim() == "1")
    {
        return Err("this kernel refuses kexec (/proc/sys/kernel/kexec_load_disabled is 1)".into());
    }
    Ok(Method::Kexec)
}

fn grub() -> Result<Method, String> {
    if crate::load::plan::find_program("grub-reboot").is_none()
        || !Path::new("/boot/grub/grub.cfg").exists()
    {
        return Err(
            "this machine does not boot with GRUB (no grub-reboot or /boot/grub/grub.cfg)".into(),
        );
    }
    let custom = Path::new(method::GRUB_CUSTOM);
    if custom.symlink_metadata().is_ok() && !method::is_ours(custom) {
        return Err(format!(
            "{} is the machine's own: rtscope leaves it as it is",
            custom.display()
        ));
    }
    let out = std::process::Command::new("grub-probe")
        .args(["--target=fs_uuid", "/boot"])
        .output()
        .map_err(|e| format!("cannot run grub-probe: {e}"))?;
    let uuid = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || uuid.is_empty() {
        return Err("grub-probe cannot tell the file system of /boot".into());
    }
    use std::os::unix::fs::MetadataExt;
    let own_partition = match (std::fs::metadata("/boot"), std::fs::metadata("/")) {
        (Ok(b), Ok(r)) => b.dev() != r.dev(),
        _ => false,
    };
    Ok(Method::Grub {
        fs_uuid: uuid,
        prefix: if own_partition {
            String::new()
        } else {
            "/boot".into()
        },
    })
}

/// Ask before the first reboot, unless the file or `--yes` says so.
fn confirm(study: &Study, flags: &RebootArgs, max: u32, method: &Method) -> Result<()> {
    if study.spec.reboot.allowed || flags.yes {
        return Ok(());
    }
    let name = &study.row.name;
    if !std::io::stdin().is_terminal() {
        bail!(
            "study '{name}' would reboot this machine (up to {max} times, by {}): write reboot = true in its file, or give --yes",
            method.name()
        );
    }
    eprint!(
        "rtscope: study '{name}' will reboot this machine up to {max} times (by {}) and come back to this boot at the end. Type yes to go on: ",
        method.name()
    );
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    if answer.trim() != "yes" {
        bail!("not confirmed: nothing was changed");
    }
    Ok(())
}

/// What the unit runs: this binary, the store by its full path, resume.
fn unit_command(db: Option<&Path>, name: &str) -> Result<Vec<String>> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("cannot tell where this rtscope binary is")?;
    for volatile in ["/tmp/", "/run/", "/dev/shm/", "/proc/"] {
        if exe.starts_with(volatile) {
            bail!(
                "this rtscope is {}, which a reboot may clear: copy it to a lasting place (e.g. /usr/local/bin) and start the study from there",
                exe.display()
            );
        }
    }
    let store = crate::store::locate(db)?;
    let store = if crate::store::is_url(&store) {
        store
    } else {
        std::path::absolute(&store).unwrap_or(store)
    };
    Ok(vec![
        exe.display().to_string(),
        "--db".into(),
        store.display().to_string(),
        "study".into(),
        "resume".into(),
        name.into(),
        "--continue-boots".into(),
        "-q".into(),
    ])
}

fn start_round(
    store: &Store,
    db: Option<&Path>,
    study: &Study,
    kernel: &Kernel,
    flags: &RebootArgs,
) -> Result<()> {
    let name = &study.row.name;
    if !study.boots.any() {
        bail!(
            "study '{name}' names no boot (kernel or cmdline): --reboot has nothing to boot into"
        );
    }
    if crate::sys::sched::euid() != 0 {
        bail!("--reboot needs root: it installs a systemd unit and reboots the machine");
    }
    if !Path::new("/run/systemd/system").exists() {
        bail!("--reboot needs systemd: a unit of rtscope's resumes the study after each boot");
    }
    let method = choose_method(&study.spec.reboot, flags)?;
    let configs = study.boots.distinct(0..study.cells.len()).len() as u32;
    let max = flags
        .max_reboots
        .or(study.spec.reboot.max)
        .unwrap_or(2 * configs + 2);
    confirm(study, flags, max, &method)?;
    let installed = kernels::installed(&SysRoot::host());
    let plan = Plan {
        home: reboot::home_target(kernel, &installed),
        method,
        max_reboots: max,
        command: unit_command(db, name)?,
    };
    let path = unit::install(root(), name, &plan.command)?;
    let round = store.start_round(study.row.id, &plan.to_text())?;
    say(&format!(
        "study '{name}': round {round} of reboots by {} (at most {max}); {} resumes it after each boot; this boot ({}) is the one it comes back to",
        plan.method.name(),
        path.display(),
        kernel.describe()
    ));
    Ok(())
}

/// After the runs of this boot: the library's round takes its next step
/// ([`reboot::after_runs`]), saying what it does. `Some(exit)`: the
/// command ends here (a reboot was taken).
pub fn after(store: &Store, row: &StudyRow) -> Result<Option<Exit>> {
    let kernel = Kernel::running();
    let installed = kernels::installed(&SysRoot::host());
    let here = reboot::Here {
        kernel: &kernel,
        installed: &installed,
        boot_id: &boot_id(),
        root: root(),
    };
    Ok(
        match reboot::after_runs(store, row, &here, &mut |m| say(&m))? {
            reboot::After::Rebooting => Some(Exit::Ok),
            reboot::After::Stay => None,
        },
    )
}

/// `study pause NAME` and `study stop NAME`.
pub fn pause_or_stop(db: Option<&Path>, name: &str, stop: bool) -> Result<Exit> {
    let store = Store::open(&crate::store::locate(db)?)?;
    let kernel = Kernel::running();
    let study = Study::load(&store, Some(name), &kernel)?;
    let Some(round) = &study.round else {
        bail!(
            "study '{name}' has never rebooted (no round of --reboot): nothing to {}",
            if stop { "stop" } else { "pause" }
        );
    };
    let (state, detail) = if stop {
        (RoundState::Stopped, "stopped by `rtscope study stop`")
    } else {
        (RoundState::Paused, "paused by `rtscope study pause`")
    };
    if matches!(round.state, RoundState::Done | RoundState::Stopped) {
        unit::remove(root(), name)?;
        say(&format!(
            "study '{name}': its reboots are already {}",
            round.state.name()
        ));
        return Ok(Exit::Ok);
    }
    reboot::end_round(&store, &study, state, detail, root())?;
    if let Some(o) = &study.row.running
        && o.liveness() == crate::sysinfo::owner::Liveness::Alive
    {
        let _ = crate::sys::process::kill(o.pid as i32, crate::sys::process::SIGINT);
        say(&format!(
            "study '{name}': its runner (pid {}) is asked to stop; its current run is redone on resume",
            o.pid
        ));
    }
    say(&format!(
        "study '{name}': {detail}; no boot is pending{}; `rtscope study resume {name} --reboot` goes on",
        if stop { " and its unit is removed" } else { "" }
    ));
    Ok(Exit::Ok)
}

/// The unit of a study that is no longer in the store: removed.
pub fn forget(name: &str) -> Result<()> {
    if unit::remove(root(), name)? {
        say(&format!(
            "study '{name}' is not in the store any more: its resume unit is removed"
        ));
    }
    Ok(())
}

/// Before a study is removed: end a round still going (cancel a pending
/// boot, remove the unit).
pub fn end_for_removal(store: &Store, row: &StudyRow) -> Result<()> {
    let kernel = Kernel::running();
    let study = Study::of_row(store, row.clone(), &kernel)?;
    if let Some(round) = &study.round
        && matches!(round.state, RoundState::Active | RoundState::Paused)
    {
        let detail = "the study was removed";
        reboot::end_round(store, &study, RoundState::Stopped, detail, root())?;
        say(&format!(
            "study '{}': its reboots are stopped and its unit removed",
            row.name
        ));
    }
    Ok(())
}

/// `study FILE --reboot --dry-run`: every boot configuration, the kernel
/// and command line it would get, and the steps that would take it.
pub fn dry(spec: &crate::study::spec::Spec, flags: &RebootArgs) -> Result<()> {
    let cells = crate::study::matrix::cells(spec);
    let boots = crate::study::boots::Boots::of(spec, &cells);
    let kernel = Kernel::running();
    let installed = kernels::installed(&SysRoot::host());
    let home = reboot::home_target(&kernel, &installed);
    let (method, usable) = match choose_method(&spec.reboot, flags) {
        Ok(m) => {
            outln!(
                "boots by {}; the study comes back to this boot: {} \"{}\"",
                m.name(),
                kernel.describe(),
                home.cmdline
            );
            (m, true)
        }
        Err(e) => {
            outln!(
                "boot method: none available here ({e:#}): the study cannot reboot on this machine; the steps below are what kexec would do once it can"
            );
            outln!(
                "the study would come back to this boot: {} \"{}\"",
                kernel.describe(),
                home.cmdline
            );
            (Method::Kexec, false)
        }
    };
    let configs = boots.distinct(0..cells.len());
    let (mut unbootable, mut to_boot) = (0, 0);
    for (need, config) in &configs {
        match boots.check(need, &kernel) {
            Ok(()) => outln!("- {config}: this boot"),
            Err(why) => {
                to_boot += 1;
                match reboot::target_for(need, config, &home, &boots.managed, &installed) {
                    Ok(t) => {
                        outln!(
                            "- {config}: {why}; boots {} with \"{}\"",
                            t.release,
                            t.cmdline
                        );
                        for s in method.arrange(&t, &spec.name) {
                            outln!("    {s}");
                        }
                    }
                    Err(e) => {
                        unbootable += 1;
                        outln!("- {config}: cannot be booted here: {e}");
                    }
                }
            }
        }
    }
    let r: Vec<String> = method.reboot().iter().map(|s| s.to_string()).collect();
    outln!("reboot: {} (the first that works)", r.join(", or "));
    outln!(
        "resume unit: /etc/systemd/system/{} (removed at the end)",
        unit::name(&spec.name)
    );
    // A plan that cannot be carried out is not a success.
    if !usable && to_boot > 0 {
        bail!(
            "the study cannot reboot here: no boot method is available (above) for the {to_boot} configurations this boot is not"
        );
    }
    if unbootable > 0 {
        bail!(
            "{unbootable} of {} boot configurations cannot be booted here (above): their runs would fail",
            configs.len()
        );
    }
    Ok(())
}
