//! Holding `/dev/cpu_dma_latency` (`--hold-dma-latency [US]`): CPUs stay
//! out of idle states slower to leave than US. The kernel keeps such a
//! request only while the file is open, so a small detached rtscope
//! process (`rtscope tune hold-dma-latency`) holds it; revert ends that
//! process, and if it dies the request ends with it. The holder is found
//! again by a random token on its command line, never by name alone.
//! Opt-in: it costs power and heat on every CPU.

use super::journal::Change;
use super::{Env, Planned, Request, Restored, Setting, SettingError, refuse};
use crate::sys::process::{SIGTERM, kill};
use crate::sysinfo::{facts, process};
use std::io::BufRead;
use std::time::Duration;

pub const DEVICE: &str = "/dev/cpu_dma_latency";

pub static SETTING: Setting = Setting {
    name: "dma-latency",
    about: "hold /dev/cpu_dma_latency (default 0 µs) in a helper process: no deep idle states",
    opt_in: Some("--hold-dma-latency"),
    plan,
    apply,
    restore,
    current,
};

fn plan(env: &Env, req: &Request) -> Result<Vec<Planned>, SettingError> {
    let Some(us) = req.hold_dma_latency_us else {
        return Ok(vec![]);
    };
    if us < 0 {
        return Err(refuse!(
            "--hold-dma-latency {us}: give 0 or more microseconds"
        ));
    }
    if !env.root.exists(DEVICE) {
        return Ok(vec![Planned::nothing(
            SETTING.name,
            "no /dev/cpu_dma_latency (kernel without PM QoS)",
        )]);
    }
    let now = facts::cpu_dma_latency_us(&env.root)
        .map(|v| v.to_string())
        .unwrap_or_else(|| "unknown".into());
    let token = crate::record::new_run_uuid();
    Ok(vec![
        Planned::new(SETTING.name, DEVICE, &now, &us.to_string())
            .with_extra(serde_json::json!({ "token": token })),
    ])
}

fn token(c: &Change) -> Option<&str> {
    c.extra.get("token").and_then(|v| v.as_str())
}

/// Processes whose command line holds `token`.
fn holders(env: &Env, token: &str) -> Vec<(u32, u64)> {
    process::pids(&env.root)
        .into_iter()
        .filter(|p| {
            env.root
                .read_bytes(&format!("/proc/{p}/cmdline"))
                .is_some_and(|b| b.split(|c| *c == 0).any(|w| w == token.as_bytes()))
        })
        .filter_map(|p| process::task(&env.root, p).map(|t| (p, t.start_ticks)))
        .collect()
}

fn apply(env: &Env, c: &Change) -> Result<Option<String>, SettingError> {
    if !env.root.is_host() {
        return Err(SettingError::FakeTree("start a holder process"));
    }
    let token = token(c).ok_or(SettingError::MissingField("token"))?;
    let exe =
        std::env::current_exe().map_err(|e| refuse!("finding the rtscope binary failed: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .args(["tune", "hold-dma-latency", &c.target, "--token", token])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| refuse!("starting the cpu_dma_latency holder failed: {e}"))?;
    let mut line = String::new();
    if let Some(out) = child.stdout.take() {
        let _ = std::io::BufReader::new(out).read_line(&mut line);
    }
    if line.trim() != "ready" {
        let _ = child.kill();
        let _ = child.wait();
        return Err(refuse!(
            "the cpu_dma_latency holder did not start ({})",
            if line.is_empty() {
                "it exited"
            } else {
                line.trim()
            }
        ));
    }
    let pid = child.id();
    // The holder runs on its own (its own session); nobody waits for it.
    drop(child);
    let held = facts::cpu_dma_latency_us(&env.root);
    match (held, c.target.parse::<i64>()) {
        (Some(v), Ok(t)) if v <= t => Ok(Some(format!("held at {} µs by pid {pid}", c.target))),
        (v, _) => Err(refuse!(
            "/dev/cpu_dma_latency reads {v:?} µs with the holder (pid {pid}) running"
        )),
    }
}

fn restore(env: &Env, c: &Change) -> Result<Restored, SettingError> {
    let Some(token) = token(c) else {
        return Ok(Restored::Gone);
    };
    let found = holders(env, token);
    if found.is_empty() {
        return Ok(Restored::Gone);
    }
    for &(pid, _) in &found {
        let _ = kill(pid as i32, SIGTERM);
    }
    for _ in 0..200 {
        if found
            .iter()
            .all(|&(p, s)| !process::same_task(&env.root, p, s))
        {
            return Ok(Restored::Done(None));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Err(refuse!(
        "the cpu_dma_latency holder (pid {}) did not exit: kill it",
        found[0].0
    ))
}

fn current(env: &Env, c: &Change) -> Option<String> {
    let found = holders(env, token(c)?);
    Some(match found.first() {
        Some((pid, _)) => format!("held at {} µs by pid {pid}", c.target),
        None => "not held".into(),
    })
}

/// Why the holder process could not hold the device.
#[derive(Debug, thiserror::Error)]
pub enum HoldError {
    /// The device refused the request (no such device, no privilege).
    #[error("holding {DEVICE} at {value_us} µs failed")]
    Open {
        value_us: i32,
        #[source]
        io: std::io::Error,
    },
    /// The process that started the holder stopped listening.
    #[error("telling the starting rtscope that the holder is ready failed")]
    Ready(#[source] std::io::Error),
}

/// The holder process: detach, open the device, say "ready", and wait to
/// be ended (the request ends with the process). Returns only on an error.
pub fn hold(value_us: i32) -> Result<(), HoldError> {
    use std::io::Write;
    let _ = rustix::process::setsid();
    let _held = crate::sys::dma::CpuDmaLatency::hold(std::path::Path::new(DEVICE), value_us)
        .map_err(|io| HoldError::Open { value_us, io })?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "ready")
            .and_then(|()| out.flush())
            .map_err(HoldError::Ready)?;
    }
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}
