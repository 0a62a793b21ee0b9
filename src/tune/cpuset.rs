//! The isolation cpusets. cgroup v1: `rtscope-rt` holds the isolated CPUs,
//! `rtscope-system` the housekeeping CPUs (the `tasks` setting then moves
//! every movable task into it). cgroup v2 (used where v1 has no cpuset
//! hierarchy): `rtscope-rt` becomes an isolated partition, which takes
//! its CPUs away from every other cgroup at once (and stops load
//! balancing on them), after enabling the cpuset controller for the
//! root's children if needed. The kernel refuses such a partition while
//! another cgroup asks for any of its CPUs (`cpuset.cpus`), so that is
//! refused at plan time, naming the cgroup.
//!
//! Restoring moves whatever tasks are left in a cpuset to the root, then
//! removes it. Cgroups of others (e.g. loads' `rtscope-load-*`) are never
//! touched.

use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError, refuse};
use crate::sysinfo::cgroup::{CpusetFs, CpusetVersion, lists_cpuset, top_cpusets};
use crate::units::{format_cpu_list, parse_cpu_list};
use std::io;
use std::time::Duration;

pub const RT_NAME: &str = "rtscope-rt";
pub const SYSTEM_NAME: &str = "rtscope-system";

pub static SETTING: Setting = Setting {
    name: "cpuset",
    about: "cpusets rtscope-rt (isolated CPUs) and rtscope-system (housekeeping CPUs); a v2 isolated partition where v1 is absent",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

pub fn no_cpuset_message() -> String {
    "no cpuset controller is mounted: mount the v1 hierarchy (mount -t cgroup -o cpuset cpuset /sys/fs/cgroup/cpuset) or enable cpuset in cgroup v2".into()
}

pub(super) fn fs_of(env: &Env) -> Result<&CpusetFs, SettingError> {
    env.cpuset
        .as_ref()
        .ok_or_else(|| SettingError::Refused(no_cpuset_message()))
}

fn version_name(fs: &CpusetFs) -> &'static str {
    match fs.version {
        CpusetVersion::V1 => "v1",
        CpusetVersion::V2 => "v2",
    }
}

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let fs = fs_of(env)?;
    for name in [RT_NAME, SYSTEM_NAME] {
        if env.root.path(&fs.dir(name)).exists() {
            return Err(refuse!(
                "cpuset {} already exists: another rtscope tuning is in force; revert it with `rtscope tune --revert`",
                fs.dir(name)
            ));
        }
    }
    let iso = format_cpu_list(&req.isolated);
    let hk = format_cpu_list(&req.housekeeping);
    match fs.version {
        CpusetVersion::V1 => {
            let mems = env
                .read(&fs.file("", "cpuset.mems"))
                .unwrap_or_else(|| "0".into());
            let set = |name: &str, cpus: &str| {
                Planned::new(
                    SETTING.name,
                    &fs.dir(name),
                    "absent",
                    &format!("cpus={cpus}"),
                )
                .required()
                .with_extra(serde_json::json!({"version": "v1", "cpus": cpus, "mems": mems}))
            };
            Ok(vec![set(SYSTEM_NAME, &hk), set(RT_NAME, &iso)])
        }
        CpusetVersion::V2 => {
            refuse_siblings_asking_for(env, fs, &req.isolated)?;
            let mut out = Vec::new();
            let subtree = fs.file("", "cgroup.subtree_control");
            let current = env.read(&subtree).unwrap_or_default();
            if !lists_cpuset(&current) {
                out.push(
                    Planned::new(SETTING.name, &subtree, &current, "+cpuset")
                        .required()
                        .with_extra(serde_json::json!({"version": "v2"})),
                );
            }
            out.push(
                Planned::new(
                    SETTING.name,
                    &fs.dir(RT_NAME),
                    "absent",
                    &format!("cpus={iso} partition=isolated"),
                )
                .required()
                .with_extra(serde_json::json!({"version": "v2", "cpus": iso})),
            );
            Ok(out)
        }
    }
}

/// cgroup v2: the kernel makes a partition invalid when a sibling cgroup
/// asks for any of its CPUs in `cpuset.cpus` ("Cpu list in cpuset.cpus
/// not exclusive"), and rtscope never changes others' cgroups: refuse
/// before anything is touched, naming the cgroup and what to do.
fn refuse_siblings_asking_for(
    env: &Env,
    fs: &CpusetFs,
    isolated: &[usize],
) -> Result<(), SettingError> {
    for set in top_cpusets(&env.root, fs) {
        if super::is_isolation_cpuset(&set.name) {
            continue;
        }
        let asked = set.cpus.unwrap_or_default();
        let clash: Vec<usize> = asked
            .iter()
            .copied()
            .filter(|c| isolated.contains(c))
            .collect();
        if clash.is_empty() {
            continue;
        }
        let advice = match crate::load::cgroup::owner_of(&set.name) {
            Some(pid) => format!(
                "it is the cgroup of a load of rtscope pid {pid}: stop that load, or start it once the CPUs are isolated (it then runs on the housekeeping CPUs)"
            ),
            None => "narrow its cpuset.cpus, or isolate other CPUs".into(),
        };
        return Err(refuse!(
            "cgroup {} asks for CPU {} (cpuset.cpus {}), and a cgroup-v2 isolated partition needs CPUs that no other cgroup asks for: {advice}",
            fs.dir(&set.name),
            format_cpu_list(&clash),
            format_cpu_list(&asked)
        ));
    }
    Ok(())
}

fn extra_str<'a>(c: &'a Change, key: &str) -> &'a str {
    c.extra.get(key).and_then(|v| v.as_str()).unwrap_or("")
}

/// mkdir a cgroup. In a fake tree (tests) the control files a real
/// cgroup directory would have are created too.
fn make_cgroup(env: &Env, dir: &str, files: &[&str]) -> Result<(), SettingError> {
    let path = env.root.path(dir);
    std::fs::create_dir(&path).map_err(|e| refuse!("creating cpuset {dir} failed: {e}"))?;
    if !env.root.is_host() {
        for f in files {
            let _ = std::fs::write(path.join(f), "");
        }
    }
    Ok(())
}

fn same_cpus(a: &str, b: &str) -> bool {
    parse_cpu_list(a).ok() == parse_cpu_list(b).ok()
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    let fs = fs_of(env)?;
    if c.key.ends_with("cgroup.subtree_control") {
        env.write(&c.key, "+cpuset")?;
        let now = env.read(&c.key).unwrap_or_default();
        return if lists_cpuset(&now) {
            Ok(None)
        } else {
            Err(refuse!("{} reads '{now}' after enabling cpuset", c.key))
        };
    }
    let cpus = extra_str(c, "cpus");
    match extra_str(c, "version") {
        "v1" => {
            make_cgroup(env, &c.key, &["cpuset.cpus", "cpuset.mems", "tasks"])?;
            env.write(&format!("{}/cpuset.mems", c.key), extra_str(c, "mems"))?;
            env.write(&format!("{}/cpuset.cpus", c.key), cpus)?;
            let got = env
                .read(&format!("{}/cpuset.cpus", c.key))
                .unwrap_or_default();
            if !same_cpus(&got, cpus) {
                return Err(refuse!("{} has CPUs '{got}' after writing '{cpus}'", c.key));
            }
            Ok(None)
        }
        "v2" => {
            make_cgroup(
                env,
                &c.key,
                &["cpuset.cpus", "cpuset.cpus.partition", "cgroup.procs"],
            )?;
            env.write(&format!("{}/cpuset.cpus", c.key), cpus)?;
            let part = format!("{}/cpuset.cpus.partition", c.key);
            // "isolated" (kernel 5.19+) also stops load balancing; older
            // kernels know only "root".
            let kind = if env.write(&part, "isolated").is_ok() {
                "isolated"
            } else {
                env.write(&part, "root")?;
                "root"
            };
            let got = env.read(&part).unwrap_or_default();
            if !got.starts_with(kind) || got.contains("invalid") {
                return Err(refuse!(
                    "{part} reads '{got}': the partition is not valid (are CPUs {cpus} used by another partition, or exclusive elsewhere?)"
                ));
            }
            let parent_eff = env
                .read(&fs.file("", "cpuset.cpus.effective"))
                .and_then(|s| parse_cpu_list(&s).ok());
            if let (Some(eff), Ok(iso)) = (parent_eff, parse_cpu_list(cpus))
                && env.root.is_host()
                && eff.iter().any(|c| iso.contains(c))
            {
                return Err(refuse!(
                    "the root cgroup still has CPUs {cpus} after creating the partition"
                ));
            }
            Ok(Some(format!("partition type {kind}")))
        }
        other => Err(refuse!("unknown cpuset version '{other}' in the journal")),
    }
}

/// Move every task of cgroup `dir` to the root cgroup; returns how many.
pub fn empty_cgroup(env: &Env, fs: &CpusetFs, dir: &str) -> usize {
    let (list, target) = (
        format!("{dir}/{}", fs.procs_file()),
        fs.file("", fs.procs_file()),
    );
    let mut moved = 0;
    for tid in env.read(&list).unwrap_or_default().split_whitespace() {
        if env.write(&target, tid).is_ok() {
            moved += 1;
        }
    }
    moved
}

/// Remove a cgroup, emptying it first (tasks still exiting may keep it
/// busy for a moment: retried for up to a second).
pub fn remove_cgroup(env: &Env, fs: &CpusetFs, dir: &str) -> Result<usize, SettingError> {
    let path = env.root.path(dir);
    let mut moved = 0;
    for attempt in 0..100 {
        moved += empty_cgroup(env, fs, dir);
        let r = if env.root.is_host() {
            std::fs::remove_dir(&path)
        } else {
            std::fs::remove_dir_all(&path)
        };
        match r {
            Ok(()) => return Ok(moved),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(moved),
            Err(e) if attempt == 99 => {
                return Err(refuse!(
                    "removing cpuset {dir} failed: {e} (tasks left: {}); move them with `echo PID > {}` and rmdir it",
                    env.read(&format!("{dir}/{}", fs.procs_file()))
                        .unwrap_or_default()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    fs.file("", fs.procs_file())
                ));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    Ok(moved)
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    let fs = fs_of(env)?;
    if c.key.ends_with("cgroup.subtree_control") {
        let now = env.read(&c.key).unwrap_or_default();
        let had = lists_cpuset(&c.original);
        let has = lists_cpuset(&now);
        if had || !has {
            return Ok(Restored::AlreadyOriginal);
        }
        env.write(&c.key, "-cpuset")?;
        return Ok(Restored::Done(None));
    }
    if !env.root.path(&c.key).exists() {
        return Ok(Restored::Gone);
    }
    if fs.version == CpusetVersion::V2 {
        let _ = env.write(&format!("{}/cpuset.cpus.partition", c.key), "member");
    }
    let moved = remove_cgroup(env, fs, &c.key)?;
    Ok(Restored::Done((moved > 0).then(|| {
        format!("{moved} tasks moved back to the root cpuset")
    })))
}

fn current(env: &Env, c: &Change) -> Option<String> {
    if c.key.ends_with("cgroup.subtree_control") {
        return env.read(&c.key);
    }
    if !env.root.path(&c.key).exists() {
        return Some("absent".into());
    }
    let cpus = env
        .read(&format!("{}/cpuset.cpus", c.key))
        .unwrap_or_default();
    let fs = env.cpuset.as_ref()?;
    let tasks = env
        .read(&format!("{}/{}", c.key, fs.procs_file()))
        .map(|t| t.split_whitespace().count())
        .unwrap_or(0);
    Some(format!(
        "cpus={cpus} ({} cpuset, {tasks} tasks)",
        version_name(fs)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    fn req() -> Request {
        Request {
            isolated: vec![2, 3],
            housekeeping: vec![0, 1],
            ..Default::default()
        }
    }

    #[test]
    fn v2_partition_round_trip_on_a_fake_tree() {
        let t = FakeTree::new(&[
            ("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            ("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n"),
            ("/sys/fs/cgroup/cgroup.subtree_control", "cpu memory\n"),
            ("/sys/fs/cgroup/cgroup.procs", "1\n"),
        ]);
        let env = Env::new(t.root());
        let p = plan(&env, &req()).unwrap();
        assert_eq!(p.len(), 2);
        assert!(p.iter().all(|p| p.required));
        // The fake subtree_control file just keeps the last write.
        apply(&env, &p[0].change).unwrap_err();
        t.write(
            "/sys/fs/cgroup/cgroup.subtree_control",
            "cpuset cpu memory\n",
        );
        let note = apply(&env, &p[1].change).unwrap();
        assert_eq!(note.as_deref(), Some("partition type isolated"));
        assert_eq!(
            env.read("/sys/fs/cgroup/rtscope-rt/cpuset.cpus").as_deref(),
            Some("2-3")
        );
        assert!(plan(&env, &req()).is_err(), "a second tuning is refused");
        t.write("/sys/fs/cgroup/rtscope-rt/cgroup.procs", "4242\n");
        assert!(matches!(
            restore(&env, &p[1].change),
            Ok(Restored::Done(Some(_)))
        ));
        assert!(!env.root.path("/sys/fs/cgroup/rtscope-rt").exists());
        assert_eq!(restore(&env, &p[1].change), Ok(Restored::Gone));
        assert_eq!(
            env.read("/sys/fs/cgroup/cgroup.procs").as_deref(),
            Some("4242")
        );
    }

    #[test]
    fn v2_refuses_cpus_a_sibling_cgroup_asks_for() {
        let t = FakeTree::new(&[
            ("/proc/mounts", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"),
            ("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu memory\n"),
            ("/sys/fs/cgroup/cgroup.subtree_control", "cpuset\n"),
            ("/sys/fs/cgroup/system.slice/cpuset.cpus", "\n"),
            ("/sys/fs/cgroup/rtscope-load-77/cpuset.cpus", "0-1\n"),
        ]);
        let env = Env::new(t.root());
        // CPUs 2-3: nobody else asks for them; an empty cpuset.cpus asks
        // for nothing.
        assert!(plan(&env, &req()).is_ok());
        t.write("/sys/fs/cgroup/rtscope-load-77/cpuset.cpus", "0-3\n");
        let err = plan(&env, &req()).unwrap_err().to_string();
        assert!(
            err.contains(
                "cgroup /sys/fs/cgroup/rtscope-load-77 asks for CPU 2-3 (cpuset.cpus 0-3)"
            ) && err.contains("a load of rtscope pid 77"),
            "{err}"
        );
        t.write("/sys/fs/cgroup/rtscope-load-77/cpuset.cpus", "0\n");
        t.write("/sys/fs/cgroup/docker/cpuset.cpus", "3\n");
        let err = plan(&env, &req()).unwrap_err().to_string();
        assert!(
            err.contains("/sys/fs/cgroup/docker asks for CPU 3")
                && err.contains("narrow its cpuset.cpus"),
            "{err}"
        );
    }

    #[test]
    fn v1_plans_two_cpusets_and_refuses_without_cpusets() {
        let t = FakeTree::new(&[
            (
                "/proc/mounts",
                "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n",
            ),
            ("/sys/fs/cgroup/cpuset/cpuset.mems", "0\n"),
        ]);
        let env = Env::new(t.root());
        let p = plan(&env, &req()).unwrap();
        let keys: Vec<_> = p
            .iter()
            .map(|p| (p.change.key.as_str(), p.change.target.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("/sys/fs/cgroup/cpuset/rtscope-system", "cpus=0-1"),
                ("/sys/fs/cgroup/cpuset/rtscope-rt", "cpus=2-3"),
            ]
        );
        let bare = FakeTree::new(&[("/proc/mounts", "proc /proc proc rw 0 0\n")]);
        let err = plan(&Env::new(bare.root()), &req())
            .unwrap_err()
            .to_string();
        assert!(err.contains("no cpuset controller"), "{err}");
    }
}
