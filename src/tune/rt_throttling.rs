//! Real-time throttling off (`--no-rt-throttling`):
//! `kernel.sched_rt_runtime_us = -1`, so real-time tasks are never
//! stopped for the rest of a period. Dangerous: a runaway real-time task
//! then owns its CPU for good. Opt-in only.

use super::file::{self, plain};
use super::{Env, Planned, Request, Setting, SettingError};
use crate::sysinfo::sched::RT_RUNTIME;

pub static SETTING: Setting = Setting {
    name: "rt-throttling",
    about: "kernel.sched_rt_runtime_us = -1: real-time tasks are never throttled (dangerous)",
    opt_in: Some("--no-rt-throttling"),
    plan,
    apply: file::apply_plain,
    restore: file::restore_plain,
    current: file::current_plain,
};

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    if !req.no_rt_throttling {
        return Ok(vec![]);
    }
    let Some(v) = file::read(env, RT_RUNTIME, plain) else {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "no kernel.sched_rt_runtime_us",
        )]);
    };
    let p = Planned::new(SETTING.name, RT_RUNTIME, &v, "-1");
    Ok(vec![if v == "-1" {
        p.skipped("already -1")
    } else {
        p
    }])
}
