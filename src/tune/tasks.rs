//! Moving tasks off the isolated CPUs (cgroup v1): every task of the root
//! cpuset, user processes and unbound kernel threads alike, goes to
//! `rtscope-system` (the housekeeping CPUs). Per-CPU kernel threads cannot
//! move (the kernel binds them) and are counted. Tasks in other cpusets
//! (a load's `rtscope-load-*`, containers) are left alone and named.
//!
//! Each task's CPU affinity is journaled (with its start time), and the
//! revert moves every task back to the root and re-applies any affinity
//! the move lost (kernels before 6.2 forget a task's own affinity when
//! its cpuset changes).

use super::cpuset::{RT_NAME, SYSTEM_NAME};
use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError, refuse};
use crate::sys::errno::{EINVAL, ESRCH};
use crate::sysinfo::cgroup::{CpusetVersion, top_cpusets};
use crate::sysinfo::process;
use crate::units::{format_cpu_list, parse_cpu_list};

pub static SETTING: Setting = Setting {
    name: "tasks",
    about: "every movable task and unbound kernel thread moved to the housekeeping CPUs (cgroup v1)",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let Some(fs) = env.cpuset.as_ref() else {
        return Ok(vec![]);
    };
    if fs.version == CpusetVersion::V2 {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "cgroup v2: the isolated partition keeps every other cgroup's tasks off its CPUs",
        )]);
    }
    let mut out = Vec::new();
    let root_tasks = fs.file("", "tasks");
    let mut tasks = Vec::new();
    let mut pinned = 0;
    for tid in env
        .read(&root_tasks)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|t| t.parse::<u32>().ok())
    {
        let Some(t) = process::task(&env.root, tid) else {
            continue;
        };
        if t.is_pinned_by_kernel() {
            pinned += 1;
            continue;
        }
        let cpus = process::cpus_allowed(&env.root, tid)
            .map(|c| format_cpu_list(&c))
            .unwrap_or_default();
        tasks.push(serde_json::json!([t.tid, t.start_ticks, cpus]));
    }
    let n = tasks.len();
    out.push(
        Planned::new(
            SETTING.name,
            &root_tasks,
            "root cpuset",
            &format!("{SYSTEM_NAME} ({n} tasks)"),
        )
        .required()
        .with_extra(serde_json::json!({
            "tasks": tasks,
            "to": fs.file(SYSTEM_NAME, "tasks"),
        })),
    );
    if pinned > 0 {
        out.push(Planned::nothing(
            SETTING.name,
            format!("{pinned} per-CPU kernel threads stay on their CPU (bound by the kernel)"),
        ));
    }
    for set in top_cpusets(&env.root, fs) {
        if super::is_isolation_cpuset(&set.name) {
            continue;
        }
        let cpus = set
            .effective_cpus
            .clone()
            .or(set.cpus.clone())
            .unwrap_or_default();
        if cpus.iter().any(|c| req.isolated.contains(c)) {
            let whose = if set.name.starts_with(crate::load::cgroup::PREFIX) {
                " (a load's cpuset, left alone)"
            } else {
                ""
            };
            out.push(Planned::nothing(
                SETTING.name,
                format!(
                    "cpuset {} (CPUs {}){whose} keeps its tasks: they may still run on the isolated CPUs",
                    set.name,
                    format_cpu_list(&cpus)
                ),
            ));
        }
    }
    Ok(out)
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    let to = c
        .extra
        .get("to")
        .and_then(|v| v.as_str())
        .ok_or(SettingError::MissingField("target"))?;
    let mut moved = 0usize;
    let mut stay = std::collections::BTreeSet::new();
    let mut other_errors = Vec::new();
    // Tasks forked while moving land in the root: go again until a pass
    // finds nothing new.
    for _pass in 0..5 {
        let mut this_pass = 0;
        for tid in env.read(&c.key).unwrap_or_default().split_whitespace() {
            if stay.contains(tid) {
                continue;
            }
            match env.write(to, tid).map_err(|e| e.errno()) {
                Ok(()) => this_pass += 1,
                Err(Some(ESRCH)) => {}
                Err(Some(EINVAL)) => {
                    stay.insert(tid.to_string());
                }
                Err(e) => {
                    stay.insert(tid.to_string());
                    other_errors.push(format!(
                        "task {tid}: {}",
                        e.map(|n| std::io::Error::from_raw_os_error(n).to_string())
                            .unwrap_or_else(|| "error".into())
                    ));
                }
            }
        }
        moved += this_pass;
        if this_pass == 0 || !env.root.is_host() {
            break;
        }
    }
    if moved == 0 && !other_errors.is_empty() {
        return Err(refuse!(
            "no task could be moved to {to}: {}",
            other_errors[0]
        ));
    }
    let mut note = format!("{moved} tasks moved to the housekeeping CPUs");
    if !stay.is_empty() {
        note.push_str(&format!(
            "; {} kernel threads stay (the kernel refuses to move them)",
            stay.len()
        ));
    }
    if !other_errors.is_empty() {
        note.push_str(&format!("; refused: {}", other_errors.join(", ")));
    }
    Ok(Some(note))
}

/// Journaled tasks: (tid, start time, affinity before).
fn recorded(c: &Change) -> Vec<(u32, u64, Vec<usize>)> {
    c.extra
        .get("tasks")
        .and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|t| {
                    let t = t.as_array()?;
                    Some((
                        t.first()?.as_u64()? as u32,
                        t.get(1)?.as_u64()?,
                        parse_cpu_list(t.get(2)?.as_str()?).ok()?,
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    let Some(fs) = env.cpuset.as_ref() else {
        return Ok(Restored::Gone);
    };
    let mut moved = 0;
    for name in [RT_NAME, SYSTEM_NAME] {
        if env.root.path(&fs.dir(name)).exists() {
            moved += super::cpuset::empty_cgroup(env, fs, &fs.dir(name));
        }
    }
    let mut fixed = 0;
    let mut failed = Vec::new();
    for (tid, start, cpus) in recorded(c) {
        if cpus.is_empty() || !process::same_task(&env.root, tid, start) {
            continue;
        }
        let now = process::cpus_allowed(&env.root, tid);
        if now.as_ref() == Some(&cpus) || !env.root.is_host() {
            continue;
        }
        match crate::sys::sched::set_affinity(tid as i32, &cpus) {
            Ok(()) => fixed += 1,
            // Exited meanwhile, or became per-CPU: nothing to restore.
            Err(e) if e.raw_os_error() == Some(ESRCH) => {}
            Err(e) => failed.push(format!("task {tid} ({}): {e}", format_cpu_list(&cpus))),
        }
    }
    if !failed.is_empty() {
        return Err(refuse!(
            "could not restore the CPU affinity of {} tasks: {}",
            failed.len(),
            failed.join("; ")
        ));
    }
    if moved == 0 && fixed == 0 {
        return Ok(Restored::AlreadyOriginal);
    }
    Ok(Restored::Done(Some(format!(
        "{moved} tasks moved back to the root cpuset, {fixed} affinities re-applied"
    ))))
}

fn current(env: &Env, c: &Change) -> Option<String> {
    let fs = env.cpuset.as_ref()?;
    let count = |p: &str| {
        env.read(p)
            .map(|t| t.split_whitespace().count())
            .unwrap_or(0)
    };
    Some(format!(
        "{} tasks in {SYSTEM_NAME}, {} in {RT_NAME}, {} in the root cpuset",
        count(&fs.file(SYSTEM_NAME, "tasks")),
        count(&fs.file(RT_NAME, "tasks")),
        count(&c.key)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn plans_movable_tasks_and_names_foreign_cpusets() {
        let t = FakeTree::new(&[
            ("/proc/mounts", "cgroup /cg cgroup rw,cpuset 0 0\n"),
            ("/cg/tasks", "2\n10\n"),
            ("/cg/rtscope-load-77/cpuset.cpus", "0-3\n"),
            ("/cg/docker/cpuset.cpus", "0\n"),
            (
                "/proc/2/stat",
                "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0",
            ),
            ("/proc/2/status", "Cpus_allowed_list:\t0-3\n"),
            (
                "/proc/10/stat",
                "10 (ksoftirqd/1) S 2 0 0 0 -1 69238848 0 0 0 0 0 0 0 0 20 0 1 0 9 0 0",
            ),
        ]);
        let env = Env::new(t.root());
        let req = Request {
            isolated: vec![3],
            housekeeping: vec![0, 1, 2],
            ..Default::default()
        };
        let p = plan(&env, &req).unwrap();
        assert_eq!(
            p[0].change.extra["tasks"],
            serde_json::json!([[2, 2, "0-3"]])
        );
        assert!(
            p[1].skip
                .as_deref()
                .unwrap()
                .contains("1 per-CPU kernel threads stay")
        );
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(
            p[2].skip
                .as_deref()
                .unwrap()
                .contains("rtscope-load-77 (CPUs 0-3) (a load's cpuset, left alone)")
        );
        assert_eq!(recorded(&p[0].change), vec![(2, 2, vec![0, 1, 2, 3])]);
    }
}
