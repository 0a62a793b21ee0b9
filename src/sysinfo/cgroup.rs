//! Cpusets: where the cpuset controller is mounted (cgroup v1, or v2 with
//! `cpuset` among the root's controllers), and the top-level cpusets with
//! their CPUs. Read-only; `tune` creates and removes cpusets.

use super::SysRoot;

/// Which cgroup version carries the cpuset controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpusetVersion {
    V1,
    V2,
}

/// The mounted cpuset hierarchy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpusetFs {
    pub version: CpusetVersion,
    /// Mount point, an absolute system path (e.g. `/sys/fs/cgroup/cpuset`).
    pub mount: String,
}

impl CpusetFs {
    /// The system path of a file of the root cpuset or of a child.
    pub fn file(&self, cpuset: &str, name: &str) -> String {
        if cpuset.is_empty() {
            format!("{}/{name}", self.mount)
        } else {
            format!("{}/{cpuset}/{name}", self.mount)
        }
    }

    pub fn dir(&self, cpuset: &str) -> String {
        format!("{}/{cpuset}", self.mount)
    }

    /// The file listing a cgroup's members, and taking new ones: `tasks`
    /// (threads) on v1, `cgroup.procs` (processes) on v2.
    pub fn procs_file(&self) -> &'static str {
        match self.version {
            CpusetVersion::V1 => "tasks",
            CpusetVersion::V2 => "cgroup.procs",
        }
    }
}

/// Whether a controller list (`cgroup.controllers`,
/// `cgroup.subtree_control`) names `cpuset`.
pub fn lists_cpuset(controllers: &str) -> bool {
    controllers.split_whitespace().any(|c| c == "cpuset")
}

/// One cgroup mount of `/proc/mounts`.
struct CgroupMount {
    mount: String,
    /// `cgroup` (v1) or `cgroup2`.
    fstype: String,
    options: String,
}

fn cgroup_mounts(root: &SysRoot) -> Vec<CgroupMount> {
    let Some(mounts) = root.read("/proc/mounts") else {
        return Vec::new();
    };
    mounts
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            (f.len() >= 4 && (f[2] == "cgroup" || f[2] == "cgroup2")).then(|| CgroupMount {
                mount: f[1].to_string(),
                fstype: f[2].to_string(),
                options: f[3].to_string(),
            })
        })
        .collect()
}

fn v1_of(mounts: &[CgroupMount], controller: &str) -> Option<String> {
    mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller))
        .map(|m| m.mount.clone())
}

/// Where the cgroup-v1 hierarchy holding `controller` (`cpuset`, `cpu`)
/// is mounted.
pub fn v1_mount(root: &SysRoot, controller: &str) -> Option<String> {
    v1_of(&cgroup_mounts(root), controller)
}

/// Find the cpuset hierarchy from `/proc/mounts`: a v1 `cgroup` mount with
/// the `cpuset` option is preferred; else a `cgroup2` mount whose root
/// lists `cpuset` in `cgroup.controllers`.
pub fn cpuset_fs(root: &SysRoot) -> Option<CpusetFs> {
    let mounts = cgroup_mounts(root);
    if let Some(mount) = v1_of(&mounts, "cpuset") {
        return Some(CpusetFs {
            version: CpusetVersion::V1,
            mount,
        });
    }
    mounts
        .iter()
        .find(|m| {
            m.fstype == "cgroup2"
                && lists_cpuset(
                    &root
                        .read(&format!("{}/cgroup.controllers", m.mount))
                        .unwrap_or_default(),
                )
        })
        .map(|m| CpusetFs {
            version: CpusetVersion::V2,
            mount: m.mount.clone(),
        })
}

/// Whether the root of a v2 hierarchy gives the cpuset controller to its
/// children (`cpuset` in its `cgroup.subtree_control`): only then does a
/// cgroup made below it have `cpuset.cpus`.
pub fn v2_children_have_cpuset(root: &SysRoot, fs: &CpusetFs) -> bool {
    fs.version == CpusetVersion::V2
        && lists_cpuset(
            &root
                .read(&fs.file("", "cgroup.subtree_control"))
                .unwrap_or_default(),
        )
}

/// A top-level cpuset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cpuset {
    pub name: String,
    pub cpus: Option<Vec<usize>>,
    pub effective_cpus: Option<Vec<usize>>,
}

/// The cpusets directly below the root of the hierarchy.
pub fn top_cpusets(root: &SysRoot, fs: &CpusetFs) -> Vec<Cpuset> {
    root.list(&fs.mount)
        .into_iter()
        .filter(|n| root.path(&fs.dir(n)).is_dir())
        .map(|name| Cpuset {
            cpus: root.read_cpus(&fs.file(&name, "cpuset.cpus")),
            effective_cpus: root
                .read_cpus(&fs.file(&name, "cpuset.effective_cpus"))
                .or_else(|| root.read_cpus(&fs.file(&name, "cpuset.cpus.effective"))),
            name,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn finds_v1_before_v2() {
        let t = FakeTree::new(&[
            (
                "/proc/mounts",
                "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
                 cgroup /sys/fs/cgroup/cpuset cgroup rw,relatime,cpuset 0 0\n",
            ),
            ("/sys/fs/cgroup/unified/cgroup.controllers", ""),
            ("/sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n"),
            ("/sys/fs/cgroup/cpuset/rtscope-rt/cpuset.cpus", "3\n"),
            (
                "/sys/fs/cgroup/cpuset/rtscope-rt/cpuset.effective_cpus",
                "3\n",
            ),
        ]);
        let fs = cpuset_fs(&t.root()).unwrap();
        assert_eq!(fs.version, CpusetVersion::V1);
        assert_eq!(fs.mount, "/sys/fs/cgroup/cpuset");
        let sets = top_cpusets(&t.root(), &fs);
        assert_eq!(sets.len(), 1);
        assert_eq!(sets[0].name, "rtscope-rt");
        assert_eq!(sets[0].effective_cpus, Some(vec![3]));
    }

    #[test]
    fn v2_only_with_the_cpuset_controller() {
        let t = FakeTree::new(&[
            ("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            ("/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n"),
        ]);
        assert_eq!(cpuset_fs(&t.root()), None);
        t.write(
            "/sys/fs/cgroup/cgroup.controllers",
            "cpuset cpu io memory pids\n",
        );
        let fs = cpuset_fs(&t.root()).unwrap();
        assert_eq!(fs.version, CpusetVersion::V2);
        assert_eq!(fs.file("", "cgroup.procs"), "/sys/fs/cgroup/cgroup.procs");
        assert!(!v2_children_have_cpuset(&t.root(), &fs));
        t.write("/sys/fs/cgroup/cgroup.subtree_control", "cpu cpuset\n");
        assert!(v2_children_have_cpuset(&t.root(), &fs));
    }
}
