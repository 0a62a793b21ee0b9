//! The unbound workqueue CPU mask: kernel work items not bound to a CPU
//! run on housekeeping CPUs only (`/sys/devices/virtual/workqueue/cpumask`).

use super::file;
use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError, refuse};
use crate::units::{format_cpu_mask, parse_cpu_mask};

pub const CPUMASK: &str = "/sys/devices/virtual/workqueue/cpumask";

pub static SETTING: Setting = Setting {
    name: "workqueue",
    about: "unbound workqueues run on the housekeeping CPUs only",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let Some(raw) = env.read(CPUMASK) else {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "no workqueue cpumask in this kernel",
        )]);
    };
    let cpus = parse_cpu_mask(&raw).map_err(|e| refuse!("{CPUMASK}: {e}"))?;
    let target = req.off_isolated(&cpus);
    let p = Planned::new(SETTING.name, CPUMASK, raw.trim(), &format_cpu_mask(&target));
    Ok(vec![if target == cpus {
        p.skipped("already off the isolated CPUs")
    } else {
        p
    }])
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    file::set(env, &c.key, &c.target, file::mask_norm).map(|_| None)
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    file::restore(env, &c.key, &c.original, file::mask_norm)
}

fn current(env: &Env, c: &Change) -> Option<String> {
    env.read(&c.key)
}
