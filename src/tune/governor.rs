//! The `performance` cpufreq governor on the isolated CPUs: the clock does
//! not ramp up after each wake-up. CPUs that share a frequency policy
//! change together.

use super::file;
use super::{Env, Planned, Request, Setting, SettingError};
use crate::sysinfo::cpufreq;

pub static SETTING: Setting = Setting {
    name: "governor",
    about: "cpufreq governor 'performance' on the isolated CPUs",
    opt_in: None,
    plan,
    apply: file::apply_plain,
    restore: file::restore_plain,
    current: file::current_plain,
};

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let mut out = Vec::new();
    for &cpu in &req.isolated {
        let path = cpufreq::path(cpu, "scaling_governor");
        let Some(f) = cpufreq::cpufreq(&env.root, cpu) else {
            out.push(Planned::nothing(
                SETTING.name,
                format!("CPU {cpu} has no cpufreq driver (frequency not under Linux's control)"),
            ));
            continue;
        };
        let Some(gov) = f.governor else { continue };
        let p = Planned::new(SETTING.name, &path, &gov, "performance");
        out.push(if gov == "performance" {
            p.skipped("already performance")
        } else if !f.available_governors.is_empty()
            && !f.available_governors.iter().any(|g| g == "performance")
        {
            p.skipped(format!(
                "no performance governor on CPU {cpu} (available: {})",
                f.available_governors.join(" ")
            ))
        } else {
            p
        });
    }
    Ok(out)
}
