//! From a request (`--load SPEC` or `--load-file FILE`, `--load-cpus`,
//! `--load-dir`) to a checked [`LoadPlan`]: the profile resolved, every
//! part's command line built, its schedule drawn from the seed, the tools
//! it needs found. Everything that can be refused is refused here, before
//! anything starts (exit 2 with a one-line reason).
//!
//! Pure apart from looking up programs in PATH and reading the profile
//! file and a random seed.

use super::part::{BuildCtx, Tool};
use super::profile::{Profile, ProfileError, ProfilePart, split_spec};
use super::schedule::{self, PartSchedule};
use crate::units::{fmt_duration, format_cpu_list};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Where scratch directories go by default: a disk, not a tmpfs, so that
/// the `io` load reaches a block device.
pub const DEFAULT_SCRATCH_BASE: &str = "/var/tmp";

#[derive(Debug, Error)]
pub enum LoadError {
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("load '{spec}': {message}")]
    Options { spec: String, message: String },
    #[error(
        "{program} is not installed (the load part '{part}' needs it): install the Debian package {package} (sudo apt-get install {package}, or make deps)"
    )]
    MissingTool {
        program: &'static str,
        package: &'static str,
        part: String,
    },
    #[error("--load-cpus {cpus}: {message}")]
    Cpus { cpus: String, message: String },
    #[error("--load-dir {dir}: {message}")]
    Dir { dir: String, message: String },
    #[error("give a load profile (rtscope load --list) or --load-file FILE, not both")]
    Ambiguous,
    #[error("--load-cpus and --load-dir need --load PROFILE or --load-file FILE")]
    NoProfile,
    #[error(
        "the load part '{part}' runs SCHED_FIFO threads: it needs root or CAP_SYS_NICE (run with sudo)"
    )]
    Privilege { part: String },
}

/// What the user asked for.
#[derive(Clone, Debug, Default)]
pub struct LoadRequest {
    /// `NAME[:item]...` of a built-in profile.
    pub spec: Option<String>,
    /// A TOML profile (items may follow the path after a ':').
    pub file: Option<PathBuf>,
    pub cpus: Option<Vec<usize>>,
    /// Base directory of the scratch directory.
    pub dir: Option<PathBuf>,
}

impl LoadRequest {
    pub fn is_empty(&self) -> bool {
        self.spec.is_none() && self.file.is_none()
    }

    /// The checked plan for rtscope process `owner_pid` (see [`prepare`]),
    /// refused when a real-time part cannot get SCHED_FIFO; `None`
    /// without a load.
    pub fn plan(
        &self,
        allowed_cpus: &[usize],
        owner_pid: i32,
    ) -> Result<Option<LoadPlan>, LoadError> {
        if self.is_empty() {
            if self.cpus.is_some() || self.dir.is_some() {
                return Err(LoadError::NoProfile);
            }
            return Ok(None);
        }
        let plan = prepare(self, allowed_cpus, owner_pid)?;
        plan.check_privileges()?;
        Ok(Some(plan))
    }
}

/// One part, ready to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PartPlan {
    pub name: String,
    /// The registered load it is (`cpu`, `hackbench`...).
    pub load: String,
    pub argv: Vec<String>,
    pub realtime: bool,
    pub schedule: PartSchedule,
}

/// A load, ready to run: what the supervisor is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadPlan {
    pub profile: String,
    pub seed: u64,
    pub cpus: Vec<usize>,
    pub scratch_dir: PathBuf,
    /// `rtscope-load-<pid>` of the rtscope process the load belongs to
    /// (names its cgroups and scratch directory).
    pub cgroup_name: String,
    /// Nice value of SCHED_OTHER parts: 0, or 19 when the measurement
    /// itself is not real-time (so the load stays below it).
    #[serde(default)]
    pub nice: i32,
    pub parts: Vec<PartPlan>,
}

impl LoadPlan {
    /// One line for people: profile, seed, CPUs and each part's rhythm.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|p| {
                if p.schedule.steady {
                    format!("{} steady", p.name)
                } else {
                    format!(
                        "{} {}-{} every {}",
                        p.name,
                        fmt_duration(p.schedule.active_min_ns),
                        fmt_duration(p.schedule.active_max_ns),
                        fmt_duration(p.schedule.period_ns)
                    )
                }
            })
            .collect();
        format!(
            "{} (seed {}) on CPUs {}: {}",
            self.profile,
            self.seed,
            format_cpu_list(&self.cpus),
            parts.join(", ")
        )
    }

    /// Refuse a plan whose real-time parts cannot get SCHED_FIFO.
    pub fn check_privileges(&self) -> Result<(), LoadError> {
        match self.parts.iter().find(|p| p.realtime) {
            Some(p) if !crate::engine::preflight::privileged() => Err(LoadError::Privilege {
                part: p.name.clone(),
            }),
            _ => Ok(()),
        }
    }
}

/// The profile a request names, adjusted by its items.
pub fn profile_of(req: &LoadRequest) -> Result<Profile, LoadError> {
    let (mut profile, items, spec) = match (&req.spec, &req.file) {
        (Some(_), Some(_)) => return Err(LoadError::Ambiguous),
        (Some(spec), None) => {
            let (name, items) = split_spec(spec);
            (Profile::builtin(name)?, items, spec.clone())
        }
        (None, Some(file)) => (
            Profile::from_file(file)?,
            Vec::new(),
            file.display().to_string(),
        ),
        (None, None) => return Err(LoadError::Ambiguous),
    };
    profile.adjust(&items).map_err(|e| LoadError::Options {
        spec,
        message: e.to_string(),
    })?;
    Ok(profile)
}

/// Look `program` up in PATH.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

/// Whether `p` is a file someone may execute.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn random_seed() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_ok()
    {
        u64::from_le_bytes(b) >> 1 // fits a JSON/TOML integer everywhere
    } else {
        crate::sys::clock::unix_now_ns()
    }
}

/// Resolve `req` into a plan for rtscope process `owner_pid`, with the
/// load confined to `allowed_cpus` unless `--load-cpus` says otherwise.
pub fn prepare(
    req: &LoadRequest,
    allowed_cpus: &[usize],
    owner_pid: i32,
) -> Result<LoadPlan, LoadError> {
    let profile = profile_of(req)?;
    let cpus = load_cpus(req, allowed_cpus)?;
    let base = scratch_base(req)?;
    let name = format!("{}{owner_pid}", super::cgroup::PREFIX);
    let ctx = BuildCtx {
        cpus: cpus.clone(),
        scratch: base.join(&name),
        port_base: 20_000 + (owner_pid.unsigned_abs() % 1000) as u16 * 12,
        // Exec'd by the supervisor, itself this binary: /proc/self/exe
        // works even if the file was replaced since.
        self_exe: PathBuf::from(crate::sys::process::SELF_EXE),
    };
    let seed = profile.seed.unwrap_or_else(random_seed);
    let rhythms: Vec<(&str, schedule::Rhythm)> = profile
        .parts
        .iter()
        .map(|p| (p.name.as_str(), p.rhythm.apply(profile.rhythm)))
        .collect();
    let schedules = schedule::resolve(seed, &rhythms);
    let spec = req
        .spec
        .clone()
        .or_else(|| req.file.as_ref().map(|f| f.display().to_string()))
        .unwrap_or_default();
    let parts = profile
        .parts
        .iter()
        .zip(schedules)
        .map(|(p, sched)| plan_part(p, sched, &ctx, &spec))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(LoadPlan {
        profile: profile.name.clone(),
        seed,
        cpus,
        scratch_dir: ctx.scratch,
        cgroup_name: name,
        nice: 0,
        parts,
    })
}

/// The CPUs the load runs on: `--load-cpus`, each of them allowed, or
/// every allowed CPU.
fn load_cpus(req: &LoadRequest, allowed_cpus: &[usize]) -> Result<Vec<usize>, LoadError> {
    let Some(c) = &req.cpus else {
        return Ok(allowed_cpus.to_vec());
    };
    if let Some(bad) = c.iter().find(|c| !allowed_cpus.contains(c)) {
        return Err(LoadError::Cpus {
            cpus: format_cpu_list(c),
            message: format!(
                "CPU {bad} is not online or not allowed for this process (allowed: {})",
                format_cpu_list(allowed_cpus)
            ),
        });
    }
    if c.is_empty() {
        return Err(LoadError::Cpus {
            cpus: String::new(),
            message: "no CPU given".into(),
        });
    }
    Ok(c.clone())
}

/// The existing directory the load's scratch directory goes under.
fn scratch_base(req: &LoadRequest) -> Result<PathBuf, LoadError> {
    let base = req
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_SCRATCH_BASE));
    if !base.is_dir() {
        return Err(LoadError::Dir {
            dir: base.display().to_string(),
            message: "is not a directory: give an existing directory on the disk to load".into(),
        });
    }
    Ok(std::fs::canonicalize(&base).unwrap_or(base))
}

/// One part's command line, checked, with its program found.
fn plan_part(
    p: &ProfilePart,
    schedule: PartSchedule,
    ctx: &BuildCtx,
    spec: &str,
) -> Result<PartPlan, LoadError> {
    let refused = |message: String| LoadError::Options {
        spec: spec.to_string(),
        message: format!("part '{}': {message}", p.name),
    };
    let values = p
        .load
        .check(&p.options)
        .map_err(|e| refused(e.to_string()))?;
    let argv = (p.load.build)(&values, ctx).map_err(|e| refused(e.to_string()))?;
    if let Some(Tool { program, package }) = p.load.tool
        && find_program(program).is_none()
    {
        return Err(LoadError::MissingTool {
            program,
            package,
            part: p.name.clone(),
        });
    }
    if p.load.tool.is_none() && p.load.name == "command" {
        let prog = &argv[0];
        let found = if prog.contains('/') {
            is_executable(Path::new(prog))
        } else {
            find_program(prog).is_some()
        };
        if !found {
            return Err(refused(format!("program '{prog}' not found in PATH")));
        }
    }
    Ok(PartPlan {
        name: p.name.clone(),
        load: p.load.name.to_string(),
        argv,
        realtime: p.load.realtime,
        schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(spec: &str) -> LoadRequest {
        LoadRequest {
            spec: Some(spec.into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_plan_names_its_scratch_and_cgroup_after_the_owner() {
        let p = prepare(&req("rt-interference:prio=55:seed=3"), &[0, 1], 4242).unwrap();
        assert_eq!(p.profile, "rt-interference");
        assert_eq!(p.seed, 3);
        assert_eq!(p.cgroup_name, "rtscope-load-4242");
        assert!(p.scratch_dir.ends_with("rtscope-load-4242"));
        assert_eq!(p.parts.len(), 1);
        assert!(p.parts[0].realtime);
        assert!(p.parts[0].schedule.steady);
        assert!(p.parts[0].argv.windows(2).any(|w| w == ["--prio", "55"]));
    }

    #[test]
    fn cpus_are_checked_against_the_allowed_ones() {
        let mut r = req("rt-interference");
        r.cpus = Some(vec![7]);
        let e = prepare(&r, &[0, 1], 1).unwrap_err().to_string();
        assert!(
            e.contains("--load-cpus 7") && e.contains("allowed: 0-1"),
            "{e}"
        );
        r.cpus = Some(vec![1]);
        let p = prepare(&r, &[0, 1], 1).unwrap();
        assert_eq!(p.cpus, vec![1]);
        assert!(p.parts[0].argv.windows(2).any(|w| w == ["--cpus", "1"]));
    }

    #[test]
    fn missing_tools_name_their_package() {
        // stress-ng and hackbench are looked up in PATH; a part that needs
        // a tool that is not there is refused with the package to install.
        let e = LoadError::MissingTool {
            program: "hackbench",
            package: "rt-tests",
            part: "hackbench".into(),
        }
        .to_string();
        assert!(e.contains("install the Debian package rt-tests"), "{e}");
        assert!(find_program("sh").is_some());
        assert!(find_program("surely-not-a-program-rtscope").is_none());
    }

    #[test]
    fn spec_and_file_together_are_refused() {
        let r = LoadRequest {
            spec: Some("cpu".into()),
            file: Some("/x.toml".into()),
            ..Default::default()
        };
        assert!(matches!(prepare(&r, &[0], 1), Err(LoadError::Ambiguous)));
    }
}
