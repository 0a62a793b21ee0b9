//! CPU topology: simultaneous multithreading (SMT, hyper-threads), the
//! sibling threads that share each CPU's core, and where each CPU sits
//! (core, package, NUMA node) as sysfs tells it.

use super::SysRoot;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Smt {
    /// `/sys/devices/system/cpu/smt/control`: on, off, forceoff,
    /// notsupported, notimplemented.
    pub control: Option<String>,
    pub active: Option<bool>,
    /// Largest number of hardware threads per core seen among online CPUs.
    pub threads_per_core: u32,
}

/// Where one CPU sits, each part `None` where sysfs does not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// `topology/core_id`: the core within its package.
    pub core_id: Option<usize>,
    /// `topology/physical_package_id`: the socket.
    pub package_id: Option<usize>,
    /// The NUMA node: the `cpuN/nodeM` link, else the node whose
    /// `cpulist` holds the CPU.
    pub numa_node: Option<usize>,
    /// Hardware threads of the CPU's core, itself included, as sysfs
    /// lists them (`thread_siblings_list`, else `core_cpus_list`).
    pub siblings: Option<Vec<usize>>,
}

fn topology_file(cpu: usize, name: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/topology/{name}")
}

/// CPUs sharing `cpu`'s core, itself included, where sysfs lists them.
pub fn listed_siblings(root: &SysRoot, cpu: usize) -> Option<Vec<usize>> {
    root.read_cpus(&topology_file(cpu, "thread_siblings_list"))
        .or_else(|| root.read_cpus(&topology_file(cpu, "core_cpus_list")))
        .filter(|s| !s.is_empty())
}

/// CPUs sharing `cpu`'s core, itself included (`cpu` alone where sysfs
/// does not say).
pub fn siblings(root: &SysRoot, cpu: usize) -> Vec<usize> {
    listed_siblings(root, cpu).unwrap_or_else(|| vec![cpu])
}

/// A sysfs id: a small non-negative number (`-1`, as some platforms
/// write for "unknown", is none).
fn id(root: &SysRoot, abs: &str) -> Option<usize> {
    root.read_i64(abs).and_then(|v| usize::try_from(v).ok())
}

/// The NUMA node of `cpu`: the `nodeM` link in the CPU's directory, else
/// the node whose `cpulist` holds it; `None` on a kernel without NUMA.
pub fn numa_node(root: &SysRoot, cpu: usize) -> Option<usize> {
    let node_of = |name: &str| name.strip_prefix("node")?.parse::<usize>().ok();
    root.list(&format!("/sys/devices/system/cpu/cpu{cpu}"))
        .iter()
        .find_map(|n| node_of(n))
        .or_else(|| {
            root.list("/sys/devices/system/node")
                .iter()
                .filter_map(|n| node_of(n))
                .find(|node| {
                    root.read_cpus(&format!("/sys/devices/system/node/node{node}/cpulist"))
                        .is_some_and(|cpus| cpus.contains(&cpu))
                })
        })
}

/// Where `cpu` sits.
pub fn place(root: &SysRoot, cpu: usize) -> Place {
    Place {
        core_id: id(root, &topology_file(cpu, "core_id")),
        package_id: id(root, &topology_file(cpu, "physical_package_id")),
        numa_node: numa_node(root, cpu),
        siblings: listed_siblings(root, cpu),
    }
}

/// SMT state; `threads_per_core` is the largest number of [`siblings`]
/// among online CPUs.
pub fn smt(root: &SysRoot, threads_per_core: u32) -> Smt {
    Smt {
        control: root.read("/sys/devices/system/cpu/smt/control"),
        active: root
            .read("/sys/devices/system/cpu/smt/active")
            .map(|v| v == "1"),
        threads_per_core,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn place_reads_core_package_node_and_siblings() {
        let t = FakeTree::new(&[
            ("/sys/devices/system/cpu/cpu5/topology/core_id", "2\n"),
            (
                "/sys/devices/system/cpu/cpu5/topology/physical_package_id",
                "1\n",
            ),
            (
                "/sys/devices/system/cpu/cpu5/topology/thread_siblings_list",
                "5,69\n",
            ),
            ("/sys/devices/system/node/node0/cpulist", "0-3,64-67\n"),
            ("/sys/devices/system/node/node1/cpulist", "4-7,68-71\n"),
            // A CPU whose link names its node; a platform's -1.
            ("/sys/devices/system/cpu/cpu9/node3", ""),
            (
                "/sys/devices/system/cpu/cpu9/topology/physical_package_id",
                "-1\n",
            ),
        ]);
        let r = t.root();
        assert_eq!(
            place(&r, 5),
            Place {
                core_id: Some(2),
                package_id: Some(1),
                numa_node: Some(1),
                siblings: Some(vec![5, 69]),
            }
        );
        let nine = place(&r, 9);
        assert_eq!((nine.numa_node, nine.package_id), (Some(3), None));
        assert_eq!(place(&r, 6).numa_node, Some(1));
        assert_eq!(place(&r, 80).numa_node, None, "in no node's list");
        assert_eq!(place(&r, 80).siblings, None);
        assert_eq!(siblings(&r, 80), vec![80], "alone where sysfs is silent");
    }
}
