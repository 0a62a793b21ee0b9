//! The load's cgroups: `rtscope-load-<pid>` at the root of the cpuset
//! hierarchy (the load CPUs) and of the cpu hierarchy (the whole load
//! weighs as one task against everything else that is not real-time,
//! rtscope's own control thread included). Created empty, removed at the
//! end once empty; left-overs of a crashed rtscope are swept at the next
//! start.
//!
//! The cpuset hierarchy is the one `tune` uses: v1 where it is mounted,
//! else cgroup v2 when its root gives the cpuset controller to its
//! children (rtscope never enables it there for a load: that would be a
//! system change without a journal). The cpu hierarchy is v1 only: in v2
//! one cgroup carries every controller, and the real-time parts must stay
//! out of the cpu controller (below).
//!
//! Owns only directories named `rtscope-load-<pid>`: never touches other
//! cgroups (`rtscope tune` keeps its `rtscope-*` cpusets). Real-time parts
//! stay out of the cpu cgroup: with RT group scheduling a new cpu cgroup
//! has no real-time budget and SCHED_FIFO would be refused there.

use crate::sys::process;
use crate::sysinfo::SysRoot;
use crate::sysinfo::cgroup::{self, CpusetVersion};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Prefix of every load cgroup and scratch directory.
pub const PREFIX: &str = "rtscope-load-";

/// Where the load's cgroups for `controller` (`cpuset`, `cpu`) live: the
/// v1 hierarchy holding it, or for cpuset without one, the v2 hierarchy
/// that offers it.
pub fn mount_of(controller: &str) -> Option<PathBuf> {
    let host = SysRoot::host();
    match controller {
        "cpuset" => cgroup::cpuset_fs(&host).map(|fs| fs.mount),
        _ => cgroup::v1_mount(&host, controller),
    }
    .map(PathBuf::from)
}

/// The hierarchies a load has a cgroup in, in the order they are made.
pub const CONTROLLERS: [&str; 2] = ["cpuset", "cpu"];

/// Where a load cgroup is: its hierarchy and its directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupDir {
    pub controller: &'static str,
    pub path: PathBuf,
}

impl CgroupDir {
    /// The directories a load's cgroups named `name` have (or would have)
    /// in the hierarchies mounted now.
    pub fn all_named(name: &str) -> Vec<CgroupDir> {
        CONTROLLERS
            .iter()
            .filter_map(|&controller| {
                mount_of(controller).map(|m| CgroupDir {
                    controller,
                    path: m.join(name),
                })
            })
            .collect()
    }

    /// Processes in the cgroup now.
    pub fn members(&self) -> Vec<i32> {
        members(&self.path)
    }

    /// Remove the (empty) cgroup, waiting up to `patience` for exiting
    /// members to leave.
    pub fn remove(&self, patience: Duration) -> io::Result<()> {
        remove(&self.path, patience)
    }
}

/// One load cgroup, with its `cgroup.procs` open for children to join.
#[derive(Debug)]
pub struct LoadCgroup {
    pub dir: CgroupDir,
    pub procs: File,
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(text.as_bytes())
}

impl LoadCgroup {
    /// Create `<cpuset mount>/<name>` limited to `cpus` (v1, or v2 where
    /// its root gives cpuset to its children).
    pub fn cpuset(name: &str, cpus: &str) -> io::Result<LoadCgroup> {
        let host = SysRoot::host();
        let fs = cgroup::cpuset_fs(&host).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no cpuset controller: neither a cgroup-v1 cpuset hierarchy nor cgroup v2 offers it",
            )
        })?;
        let v2 = fs.version == CpusetVersion::V2;
        if v2 && !cgroup::v2_children_have_cpuset(&host, &fs) {
            return Err(io::Error::other(format!(
                "cgroup v2 does not give the cpuset controller to the cgroups below its root; enable it with `echo +cpuset > {}`",
                fs.file("", "cgroup.subtree_control")
            )));
        }
        let mount = PathBuf::from(&fs.mount);
        let path = mount.join(name);
        fs::create_dir(&path)?;
        let made = (|| {
            // A new v1 cpuset has no memory node; in v2 an empty
            // cpuset.mems means the parent's.
            if !v2 {
                let mems = fs::read_to_string(mount.join("cpuset.mems"))?;
                write(&path.join("cpuset.mems"), mems.trim())?;
            }
            write(&path.join("cpuset.cpus"), cpus).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "writing cpuset.cpus = {cpus}: {e} (a CPU outside the root cpuset, or held exclusively by another cpuset such as one of rtscope tune's)"
                    ),
                )
            })?;
            OpenOptions::new()
                .write(true)
                .open(path.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Ok(LoadCgroup {
                dir: CgroupDir {
                    controller: "cpuset",
                    path,
                },
                procs,
            }),
            Err(e) => {
                let _ = fs::remove_dir(&path);
                Err(e)
            }
        }
    }

    /// Create `<cpu mount>/<name>`.
    pub fn cpu(name: &str) -> io::Result<LoadCgroup> {
        let mount = mount_of("cpu").ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no cgroup-v1 cpu hierarchy is mounted",
            )
        })?;
        let path = mount.join(name);
        fs::create_dir(&path)?;
        match OpenOptions::new()
            .write(true)
            .open(path.join("cgroup.procs"))
        {
            Ok(procs) => Ok(LoadCgroup {
                dir: CgroupDir {
                    controller: "cpu",
                    path,
                },
                procs,
            }),
            Err(e) => {
                let _ = fs::remove_dir(&path);
                Err(e)
            }
        }
    }
}

fn members(path: &Path) -> Vec<i32> {
    fs::read_to_string(path.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// Remove the (empty) cgroup directory `path`, retrying every 20 ms for up
/// to `patience` while exiting members leave; a missing one is removed.
fn remove(path: &Path, patience: Duration) -> io::Result<()> {
    let start = Instant::now();
    loop {
        match fs::remove_dir(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if start.elapsed() >= patience => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Whether process `pid` (the owner of a load) still exists. Any live
/// process counts, whatever its name: a reused pid only delays the sweep,
/// it never removes a live load.
pub fn owner_alive(pid: i32) -> bool {
    pid > 0 && Path::new(&format!("/proc/{pid}")).exists()
}

/// The owner pid in a name `rtscope-load-<pid>`.
pub fn owner_of(name: &str) -> Option<i32> {
    name.strip_prefix(PREFIX)?.parse().ok()
}

/// The directories `rtscope-load-<pid>` in `dir` whose rtscope is gone:
/// (name, path).
fn stale_in(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let owner = owner_of(&name)?;
            (!owner_alive(owner) && e.path().is_dir()).then(|| (name, e.path()))
        })
        .collect()
}

/// Remove load cgroups and scratch directories whose rtscope is gone
/// (left by a crash): their processes are killed (they belong to the
/// cgroup), then the directories removed. Returns what was done, for
/// warnings.
pub fn sweep_stale(scratch_base: &Path) -> Vec<String> {
    let mut done = Vec::new();
    for controller in CONTROLLERS {
        let Some(mount) = mount_of(controller) else {
            continue;
        };
        for (name, path) in stale_in(&mount) {
            let pids = members(&path);
            for &pid in &pids {
                let _ = process::kill(pid, process::SIGKILL);
            }
            match remove(&path, Duration::from_secs(2)) {
                Ok(()) => done.push(format!(
                    "removed the {controller} cgroup {name} left by an rtscope that ended without cleaning up{}",
                    if pids.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} process(es) in it were killed)", pids.len())
                    }
                )),
                Err(err) => done.push(format!(
                    "could not remove the stale {controller} cgroup {} ({err}): remove it by hand once empty",
                    path.display()
                )),
            }
        }
    }
    for (_, path) in stale_in(scratch_base) {
        match fs::remove_dir_all(&path) {
            Ok(()) => done.push(format!(
                "removed the scratch directory {} left by an rtscope that ended without cleaning up",
                path.display()
            )),
            Err(err) => done.push(format!(
                "could not remove the stale scratch directory {} ({err})",
                path.display()
            )),
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_owner() {
        assert_eq!(owner_of("rtscope-load-123"), Some(123));
        assert_eq!(owner_of("rtscope-rt"), None);
        assert_eq!(owner_of("rtscope-load-x"), None);
        assert!(!owner_alive(999_999_999));
    }

    #[test]
    fn stale_scratch_directories_are_swept_and_live_ones_kept() {
        let base = std::env::temp_dir().join(format!("rtscope-sweep-test-{}", process::getpid()));
        fs::create_dir_all(&base).unwrap();
        // No process has this pid: the directory is stale.
        let stale = base.join("rtscope-load-999999999");
        fs::create_dir_all(stale.join("sub")).unwrap();
        fs::write(stale.join("sub/f"), b"x").unwrap();
        let other = base.join("unrelated");
        fs::create_dir_all(&other).unwrap();
        let done = sweep_stale(&base);
        assert!(!stale.exists());
        assert!(other.exists());
        assert!(
            done.iter().any(|d| d.contains("rtscope-load-999999999")),
            "{done:?}"
        );
        fs::remove_dir_all(&base).unwrap();
    }
}
