//! irqbalance paused while CPUs are isolated: it rewrites IRQ affinities
//! every few seconds and would put IRQs back on the isolated CPUs. Paused
//! with SIGSTOP and resumed with SIGCONT (works with or without systemd;
//! the daemon keeps its state). Each daemon is named by pid and start
//! time, so a recycled pid is never signalled.

use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError, refuse};
use crate::sys::process::{SIGCONT, SIGSTOP, kill};
use crate::sysinfo::{irq, process};

pub static SETTING: Setting = Setting {
    name: "irqbalance",
    about: "irqbalance paused (SIGSTOP) so it does not move IRQs back; resumed on revert",
    opt_in: None,
    plan,
    apply,
    restore,
    current,
};

fn key_of(pid: u32, start: u64) -> String {
    format!("{pid}@{start}")
}

fn parse_key(key: &str) -> Option<(u32, u64)> {
    let (p, s) = key.split_once('@')?;
    Some((p.parse().ok()?, s.parse().ok()?))
}

/// The journal key `PID@START` as a [`SettingError`] when it is not one.
fn read_key(key: &str) -> Result<(u32, u64), SettingError> {
    parse_key(key).ok_or_else(|| SettingError::BadKey {
        key: key.to_string(),
        shape: "PID@START",
    })
}

fn plan(env: &Env, _req: &Request) -> Result<Vec<Planned>, SettingError> {
    let daemons = irq::irqbalance(&env.root);
    if daemons.is_empty() {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "irqbalance is not running",
        )]);
    }
    Ok(daemons
        .into_iter()
        .map(|t| {
            let p = Planned::new(
                SETTING.name,
                &key_of(t.tid, t.start_ticks),
                "running",
                "stopped",
            );
            if t.state == 'T' {
                p.skipped("already stopped")
            } else {
                p
            }
        })
        .collect())
}

fn signal(env: &Env, pid: u32, sig: i32) -> Result<(), SettingError> {
    if !env.root.is_host() {
        // Fake trees (tests): record the state the signal would give.
        let stat = env
            .read(&format!("/proc/{pid}/stat"))
            .ok_or_else(|| refuse!("process {pid} is gone"))?;
        let new_state = if sig == SIGSTOP { 'T' } else { 'S' };
        let close = stat
            .rfind(')')
            .ok_or_else(|| refuse!("/proc/{pid}/stat has no ')' after the command name"))?;
        let text = format!("{} {}{}", &stat[..=close], new_state, &stat[close + 3..]);
        return std::fs::write(env.root.path(&format!("/proc/{pid}/stat")), text)
            .map_err(|e| refuse!("{e}"));
    }
    kill(pid as i32, sig).map_err(|e| refuse!("signalling irqbalance (pid {pid}) failed: {e}"))
}

/// Wait until the task's state is (or is not) 'T'.
fn wait_state(env: &Env, pid: u32, stopped: bool) -> bool {
    for _ in 0..100 {
        match process::task(&env.root, pid) {
            Some(t) if (t.state == 'T') == stopped => return true,
            None => return false,
            _ => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    }
    false
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    let (pid, start) = read_key(&c.key)?;
    if !process::same_task(&env.root, pid, start) {
        return Err(refuse!("irqbalance (pid {pid}) exited"));
    }
    signal(env, pid, SIGSTOP)?;
    if wait_state(env, pid, true) {
        Ok(Some(format!("irqbalance (pid {pid}) paused")))
    } else {
        Err(refuse!("irqbalance (pid {pid}) did not stop"))
    }
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    let (pid, start) = read_key(&c.key)?;
    let Some(t) = process::live_task(&env.root, pid, start) else {
        return Ok(Restored::Gone);
    };
    if t.state != 'T' {
        return Ok(Restored::AlreadyOriginal);
    }
    signal(env, pid, SIGCONT)?;
    if wait_state(env, pid, false) {
        Ok(Restored::Done(None))
    } else {
        Err(refuse!(
            "irqbalance (pid {pid}) did not resume: kill -CONT {pid}"
        ))
    }
}

fn current(env: &Env, c: &Change) -> Option<String> {
    let (pid, start) = parse_key(&c.key)?;
    process::live_task(&env.root, pid, start)
        .map(|t| if t.state == 'T' { "stopped" } else { "running" }.into())
}
