//! IRQ affinities off the isolated CPUs: every IRQ whose
//! `smp_affinity_list` includes an isolated CPU is given the same list
//! without them (or the housekeeping CPUs), and so is
//! `/proc/irq/default_smp_affinity` for IRQs set up later. IRQs that
//! refuse (per-CPU or managed IRQs, or a platform that forbids it with
//! EPERM/EIO) are listed, not fatal.

use super::file;
use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError};
use crate::sysinfo::irq::{self, DEFAULT_AFFINITY};
use crate::units::{format_cpu_list, format_cpu_mask, parse_cpu_list, parse_cpu_mask};

pub static SETTING: Setting = Setting {
    name: "irq-affinity",
    about: "IRQ affinities (and the default for new IRQs) moved to the housekeeping CPUs",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

fn list_norm(s: &str) -> String {
    parse_cpu_list(s)
        .map(|c| format_cpu_list(&c))
        .unwrap_or_else(|_| s.trim().to_string())
}

fn norm_for(key: &str) -> file::Norm {
    if key == DEFAULT_AFFINITY {
        file::mask_norm
    } else {
        list_norm
    }
}

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let mut out = Vec::new();
    if let Some(original) = env.read(DEFAULT_AFFINITY)
        && let Ok(cpus) = parse_cpu_mask(&original)
    {
        let target = req.off_isolated(&cpus);
        let p = Planned::new(
            SETTING.name,
            DEFAULT_AFFINITY,
            &original,
            &format_cpu_mask(&target),
        );
        out.push(if target == cpus {
            p.skipped("already off the isolated CPUs")
        } else {
            p
        });
    }
    for i in irq::irqs(&env.root) {
        let Some(cpus) = i.affinity.clone() else {
            continue;
        };
        if !cpus.iter().any(|c| req.isolated.contains(c)) {
            continue;
        }
        let target = req.off_isolated(&cpus);
        let mut p = Planned::new(
            SETTING.name,
            &irq::affinity_path(i.irq),
            &format_cpu_list(&cpus),
            &format_cpu_list(&target),
        );
        if !i.desc.is_empty() {
            p.change.extra = serde_json::json!({ "irq": i.irq, "desc": i.desc });
        }
        out.push(p);
    }
    Ok(out)
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    file::set(env, &c.key, &c.target, norm_for(&c.key)).map(|_| None)
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    file::restore(env, &c.key, &c.original, norm_for(&c.key))
}

fn current(env: &Env, c: &Change) -> Option<String> {
    // In the file's own notation (a mask for the default, else a list).
    env.read(&c.key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn plans_only_irqs_on_isolated_cpus() {
        let t = FakeTree::new(&[
            ("/proc/irq/default_smp_affinity", "f\n"),
            ("/proc/irq/5/smp_affinity_list", "0-3\n"),
            ("/proc/irq/6/smp_affinity_list", "0\n"),
            ("/proc/irq/7/smp_affinity_list", "3\n"),
        ]);
        let env = Env::new(t.root());
        let req = Request {
            isolated: vec![2, 3],
            housekeeping: vec![0, 1],
            ..Default::default()
        };
        let p = plan(&env, &req).unwrap();
        let keys: Vec<(&str, &str)> = p
            .iter()
            .map(|p| (p.change.key.as_str(), p.change.target.as_str()))
            .collect();
        assert_eq!(
            keys,
            vec![
                (DEFAULT_AFFINITY, "3"),
                ("/proc/irq/5/smp_affinity_list", "0-1"),
                ("/proc/irq/7/smp_affinity_list", "0-1"),
            ]
        );
        for q in &p {
            apply(&env, &q.change).unwrap();
        }
        assert_eq!(env.read(DEFAULT_AFFINITY).as_deref(), Some("3"));
        for q in p.iter().rev() {
            assert_eq!(restore(&env, &q.change), Ok(Restored::Done(None)));
        }
        assert_eq!(
            env.read("/proc/irq/7/smp_affinity_list").as_deref(),
            Some("3")
        );
        assert_eq!(env.read(DEFAULT_AFFINITY).as_deref(), Some("f"));
    }
}
