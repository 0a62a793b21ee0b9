//! Transparent huge pages off: no khugepaged scans and no compaction
//! stalls in page faults.

use super::file;
use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError};
use crate::sysinfo::memory::{THP_ENABLED, selected};

pub static SETTING: Setting = Setting {
    name: "thp",
    about: "transparent huge pages 'never': no compaction stalls or khugepaged work",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

fn norm(s: &str) -> String {
    selected(s)
}

fn plan(env: &Env, _req: &Request) -> Result<Vec<Planned>, SettingError> {
    let Some(v) = file::read(env, THP_ENABLED, norm) else {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "no transparent huge pages in this kernel",
        )]);
    };
    let p = Planned::new(SETTING.name, THP_ENABLED, &v, "never");
    Ok(vec![if v == "never" {
        p.skipped("already never")
    } else {
        p
    }])
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    file::set(env, &c.key, &c.target, norm).map(|_| None)
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    file::restore(env, &c.key, &c.original, norm)
}

fn current(env: &Env, c: &Change) -> Option<String> {
    file::read(env, &c.key, norm)
}
