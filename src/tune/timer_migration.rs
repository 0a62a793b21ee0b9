//! `kernel.timer_migration` off: timers armed on an idle CPU stay there
//! instead of being moved to a busy one (such as a real-time CPU).

use super::file::{self, plain};
use super::{Env, Planned, Request, Setting, SettingError};
use crate::sysinfo::timers::TIMER_MIGRATION;

pub static SETTING: Setting = Setting {
    name: "timer-migration",
    about: "kernel.timer_migration = 0: timers are not moved onto busy CPUs",
    opt_in: None,
    plan,
    apply: file::apply_plain,
    restore: file::restore_plain,
    current: file::current_plain,
};

fn plan(env: &Env, _req: &Request) -> Result<Vec<Planned>, SettingError> {
    let Some(v) = file::read(env, TIMER_MIGRATION, plain) else {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "no kernel.timer_migration (kernel without NO_HZ_COMMON)",
        )]);
    };
    let p = Planned::new(SETTING.name, TIMER_MIGRATION, &v, "0");
    Ok(vec![if v == "0" { p.skipped("already 0") } else { p }])
}
