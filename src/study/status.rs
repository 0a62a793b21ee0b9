//! `study status`: what a study has done and owes, as text and JSON.
//! Its runs are listed in the order they are taken (`#`), each with its
//! cell numbered as the report numbers it ("2. policy=other"), so that a
//! line of the status and a heading of the report name the same cell.

use super::reboot;
use super::state::{SlotState, SlotStatus, Study};
use crate::store::{Store, StoreError};
use crate::sysinfo::kernel_match::Kernel;
use crate::text::num::counted;
use crate::units::{fmt_duration, fmt_unix_utc, us_cell};

/// What `study status` prints of `study` on `kernel`, line by line.
pub fn lines(store: &Store, study: &Study, kernel: &Kernel) -> Result<Vec<String>, StoreError> {
    let mut out = Vec::new();
    let spec = &study.spec;
    out.push(format!(
        "study {} · {} × {}, {} per run · order {} (seed {}) · stored {}",
        study.row.name,
        counted(study.cells.len() as u64, "cell", "cells"),
        counted(spec.repetitions as u64, "repetition", "repetitions"),
        fmt_duration(spec.duration_ns),
        spec.order.name(),
        study.row.seed,
        fmt_unix_utc(study.row.created_at_unix_ns)
    ));
    if let Some(p) = &study.row.file_path {
        out.push(format!("file: {p}"));
    }
    out.push(format!(
        "runs: {} done, {} to do on this kernel ({}), {} waiting for another kernel{}",
        study.done(),
        study.to_do(),
        kernel.describe(),
        study.waiting(),
        match &study.row.running {
            Some(o) => format!(" · being run by pid {} on {}", o.pid, o.host),
            None => String::new(),
        }
    ));
    out.push(format!(
        "{:>4}  {:<40} {:>3}  {:<24} {:>5}  {:>9}  {:>9}",
        "#", "cell", "rep", "state", "run", "p99 µs", "max µs"
    ));
    for s in &study.slots {
        let (state, run) = slot_text(store, s)?;
        let (p99, max) = match &run {
            Some(r) => (us_cell(r.p99_ns), us_cell(r.max_ns)),
            None => (String::new(), String::new()),
        };
        out.push(format!(
            "{:>4}  {:<40} {:>3}  {:<24} {:>5}  {:>9}  {:>9}",
            s.slot.position + 1,
            format!("{}. {}", s.slot.cell + 1, s.slot.label),
            s.slot.repetition,
            state,
            run.as_ref().map(|r| r.id.to_string()).unwrap_or_default(),
            p99,
            max
        ));
    }
    out.extend(reboot_lines(study));
    Ok(out)
}

/// The facts `status` shows of a finished run.
struct RunFacts {
    id: i64,
    p99_ns: Option<u64>,
    max_ns: Option<u64>,
}

/// A slot's state for people, and its run if done.
fn slot_text(store: &Store, s: &SlotStatus) -> Result<(String, Option<RunFacts>), StoreError> {
    let cut = match s.interrupted() {
        0 => String::new(),
        n => format!(" ({n} cut short)"),
    };
    Ok(match &s.state {
        SlotState::Done { run_uuid } => {
            let run = match store.find_uuid(run_uuid)? {
                Some(id) => {
                    let r = store.load(id)?;
                    Some(RunFacts {
                        id,
                        p99_ns: r.overall.p99_ns,
                        max_ns: r.overall.max_ns,
                    })
                }
                None => None,
            };
            (format!("done{cut}"), run)
        }
        SlotState::Running => ("running".into(), None),
        SlotState::Waiting { boot, .. } => (format!("waits for {boot}"), None),
        SlotState::CannotBoot { .. } => ("boot failed".into(), None),
        SlotState::ToDo => match s.failure() {
            Some(_) => (format!("failed{cut}"), None),
            None if s.interrupted() > 0 => ("cut short, to redo".into(), None),
            None => ("to do".into(), None),
        },
    })
}

/// What `study status --json` says: the study, its runs in the order they
/// are taken (`position`), each with its cell as the report numbers it
/// (`cell`), and its reboots.
pub fn json(
    store: &Store,
    study: &Study,
    kernel: &Kernel,
) -> Result<serde_json::Value, StoreError> {
    let mut slots = Vec::new();
    for s in &study.slots {
        let (state, run) = slot_text(store, s)?;
        let kind = match &s.state {
            SlotState::Done { .. } => "done",
            SlotState::Running => "running",
            SlotState::Waiting { .. } => "waiting",
            SlotState::CannotBoot { .. } => "cannot_boot",
            SlotState::ToDo => "to_do",
        };
        slots.push(serde_json::json!({
            "position": s.slot.position + 1,
            "cell": s.slot.cell + 1,
            "label": s.slot.label,
            "repetition": s.slot.repetition,
            "kernel": s.slot.kernel,
            "state": kind,
            "state_text": state,
            "attempts": s.attempts.iter().map(|a| serde_json::json!({
                "state": a.state.name(),
                "run_uuid": a.run_uuid,
                "detail": a.detail,
                "kernel_release": a.kernel_release,
                "preemption_model": a.preemption_model,
            })).collect::<Vec<_>>(),
            "run_id": run.as_ref().map(|r| r.id),
            "p99_ns": run.as_ref().and_then(|r| r.p99_ns),
            "max_ns": run.as_ref().and_then(|r| r.max_ns),
        }));
    }
    Ok(serde_json::json!({
        "name": study.row.name,
        "uuid": study.row.uuid,
        "seed": study.row.seed,
        "order": study.spec.order.name(),
        "duration_ns": study.spec.duration_ns,
        "repetitions": study.spec.repetitions,
        "cells": study.cells.len(),
        "runs": study.slots.len(),
        "done": study.done(),
        "to_do": study.to_do(),
        "waiting": study.waiting(),
        "kernel": { "release": kernel.release, "preemption_model": kernel.preemption_model },
        "running_pid": study.row.running.as_ref().map(|o| o.pid),
        "reboots": reboot_json(study),
        "slots": slots,
    }))
}

/// What `study status` says of a study's reboots.
fn reboot_lines(study: &Study) -> Vec<String> {
    let Some(r) = &study.round else {
        return Vec::new();
    };
    let plan = reboot::Plan::parse(&r.plan).ok();
    let mut out = vec![format!(
        "reboots: round {} {}{} · {} of at most {} taken{}",
        r.round,
        r.state.name(),
        r.detail
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default(),
        reboot::reboots_taken(study),
        plan.as_ref().map(|p| p.max_reboots).unwrap_or(0),
        plan.as_ref()
            .map(|p| format!(
                " by {}; home: {} \"{}\"",
                p.method.name(),
                p.home.release,
                p.home.cmdline
            ))
            .unwrap_or_default(),
    )];
    for b in &study.boot_rows {
        out.push(format!(
            "  {}  {:<9} {}{}",
            crate::units::fmt_unix_utc(b.asked_at_unix_ns),
            b.state.name(),
            b.config,
            b.detail
                .as_deref()
                .map(|d| format!(": {d}"))
                .unwrap_or_default()
        ));
    }
    out
}

/// The same, as JSON.
fn reboot_json(study: &Study) -> serde_json::Value {
    let Some(r) = &study.round else {
        return serde_json::Value::Null;
    };
    serde_json::json!({
        "round": r.round,
        "state": r.state.name(),
        "detail": r.detail,
        "taken": reboot::reboots_taken(study),
        "plan": reboot::Plan::parse(&r.plan).ok(),
        "boots": study.boot_rows.iter().map(|b| serde_json::json!({
            "config": b.config,
            "state": b.state.name(),
            "detail": b.detail,
            "asked_at_unix_ns": b.asked_at_unix_ns,
            "ended_at_unix_ns": b.ended_at_unix_ns,
        })).collect::<Vec<_>>(),
    })
}
