//! `explain --trace FILE`: read a whole trace file (`trace-cmd report`
//! text or an ftrace `trace` file), find the spikes cyclictest marked in
//! it (`-b N --tracemark` writes `hit latency threshold (LAT > N)`
//! through trace_marker, from the thread that hit it, once it runs) and
//! explain each one. Reads the file; changes nothing.

use super::analyze::analyze;
use super::event::{Event, EventKind, Loss, Window};
use super::model::{Explanation, Spike};
use super::parse::{Line, parse_line};
use std::path::{Path, PathBuf};

/// The marker cyclictest writes when a thread crosses `-b`.
pub const CYCLICTEST_MARK: &str = "hit latency threshold (";

#[derive(Debug, thiserror::Error)]
pub enum TraceFileError {
    #[error(transparent)]
    Read(#[from] crate::input::InputError),
    #[error(
        "{path}:{line}: not a kernel trace ({reason}): give the text of `trace-cmd report` or of tracefs' `trace` file"
    )]
    NotATrace {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "{path} holds no latency spike marked by cyclictest (`hit latency threshold`): record with `cyclictest -b USEC --tracemark` while tracing"
    )]
    NoSpike { path: PathBuf },
    #[error(
        "{path} is a trace-cmd .dat file and trace-cmd is not installed: install trace-cmd (Debian: apt install trace-cmd), or pass the text of `trace-cmd report {path}`"
    )]
    NoTraceCmd { path: PathBuf },
    #[error("`trace-cmd report {path}` failed: {reason}")]
    TraceCmd { path: PathBuf, reason: String },
    #[error("{path}:{line}: cannot read cyclictest's latency in `{text}`")]
    BadMark {
        path: PathBuf,
        line: usize,
        text: String,
    },
}

/// Whether `bytes` start as trace-cmd's `.dat` files do (`\x17\x08D`
/// then `tracing`).
pub fn is_trace_cmd_dat(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x17\x08Dtracing")
}

/// The text `trace-cmd report FILE` prints.
fn trace_cmd_report(path: &Path) -> Result<String, TraceFileError> {
    let out = std::process::Command::new("trace-cmd")
        .arg("report")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TraceFileError::NoTraceCmd { path: path.into() });
        }
        Err(e) => {
            return Err(TraceFileError::TraceCmd {
                path: path.into(),
                reason: e.to_string(),
            });
        }
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(TraceFileError::TraceCmd {
            path: path.into(),
            reason: format!("{} ({})", err.trim(), out.status),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The events of a trace file, in time order.
#[derive(Clone, Debug, Default)]
pub struct TraceText {
    pub events: Vec<Event>,
    pub losses: Vec<Loss>,
    /// Line number (1-based) of each event, for messages.
    pub lines: Vec<usize>,
    /// Lines that are not trace text (tolerated when few).
    pub unreadable_lines: usize,
}

impl TraceText {
    /// Parse trace text; `path` is for messages.
    pub fn parse(text: &str, path: &Path) -> Result<TraceText, TraceFileError> {
        let mut t = TraceText::default();
        let mut first_bad: Option<(usize, String)> = None;
        let mut last_ts: Vec<u64> = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            match parse_line(raw) {
                Ok(Line::Event(e)) => {
                    if last_ts.len() <= e.cpu.min(4096) {
                        last_ts.resize(e.cpu.min(4096) + 1, 0);
                    }
                    if let Some(slot) = last_ts.get_mut(e.cpu) {
                        *slot = e.ts_ns;
                    }
                    for l in t.losses.iter_mut() {
                        if l.cpu == e.cpu && l.before_ns == u64::MAX {
                            l.before_ns = e.ts_ns;
                        }
                    }
                    t.events.push(e);
                    t.lines.push(n + 1);
                }
                Ok(Line::Lost { cpu, count }) => t.losses.push(Loss {
                    cpu,
                    after_ns: last_ts.get(cpu).copied().unwrap_or(0),
                    before_ns: u64::MAX,
                    count,
                }),
                Ok(Line::Ignored) => {}
                Err(e) => {
                    t.unreadable_lines += 1;
                    if first_bad.is_none() {
                        first_bad = Some((n + 1, e.reason.to_string()));
                    }
                }
            }
        }
        // A trace has far more event lines than anything else.
        if t.events.is_empty() || t.unreadable_lines > t.events.len() {
            let (line, reason) = first_bad.unwrap_or((1, "no event line in the file".to_string()));
            return Err(TraceFileError::NotATrace {
                path: path.into(),
                line,
                reason,
            });
        }
        // Text of several CPUs is merged by time already; keep it stable.
        let mut order: Vec<usize> = (0..t.events.len()).collect();
        order.sort_by_key(|&i| t.events[i].ts_ns);
        if order.windows(2).any(|w| w[0] > w[1]) {
            t.events = order.iter().map(|&i| t.events[i].clone()).collect();
            t.lines = order.iter().map(|&i| t.lines[i]).collect();
        }
        Ok(t)
    }

    /// Read the trace at `path`, refused unread above `max_bytes`; a
    /// trace-cmd `.dat` file is read through `trace-cmd report`.
    pub fn load(path: &Path, max_bytes: u64) -> Result<TraceText, TraceFileError> {
        let bytes = crate::input::read_limited(path, max_bytes, "a trace")?;
        if is_trace_cmd_dat(&bytes) {
            return TraceText::parse(&trace_cmd_report(path)?, path);
        }
        TraceText::parse(&String::from_utf8_lossy(&bytes), path)
    }

    /// The events of one CPU, as the analysis reads them.
    pub fn window(&self, cpu: usize) -> Window {
        let events: Vec<Event> = self
            .events
            .iter()
            .filter(|e| e.cpu == cpu)
            .cloned()
            .collect();
        Window {
            cpu,
            complete_from_ns: events.first().map(|e| e.ts_ns),
            events,
            losses: self
                .losses
                .iter()
                .filter(|l| l.cpu == cpu)
                .copied()
                .collect(),
            own_events_filtered: false,
        }
    }

    /// The spikes cyclictest marked, with a note each on how their
    /// deadline was found.
    pub fn cyclictest_spikes(
        &self,
        path: &Path,
    ) -> Result<Vec<(Spike, Vec<String>)>, TraceFileError> {
        let mut out = Vec::new();
        for (idx, e) in self.events.iter().enumerate() {
            let EventKind::Marker { text } = &e.kind else {
                continue;
            };
            let Some(at) = text.find(CYCLICTEST_MARK) else {
                continue;
            };
            let bad = || TraceFileError::BadMark {
                path: path.into(),
                line: self.lines[idx],
                text: text.clone(),
            };
            let rest = &text[at + CYCLICTEST_MARK.len()..];
            let value: u64 = rest
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(bad)?;
            out.push(self.spike_at(idx, value));
        }
        if out.is_empty() {
            return Err(TraceFileError::NoSpike { path: path.into() });
        }
        Ok(out)
    }

    /// The spike behind the marker at `idx`: the thread that wrote it,
    /// when it read the clock (`clock_read`), and its deadline (the
    /// `expires` of its last timer when the trace has `hrtimer_start`,
    /// else the clock read less the latency).
    fn spike_at(&self, idx: usize, value: u64) -> (Spike, Vec<String>) {
        let mark = &self.events[idx];
        let (tid, cpu) = (mark.pid, mark.cpu);
        let before = &self.events[..idx];
        let (read_ns, read_note) = clock_read(before, mark);
        let mut notes: Vec<String> = Vec::new();
        let expires = before.iter().rev().find_map(|e| match &e.kind {
            EventKind::HrtimerStart {
                function,
                expires_ns: Some(x),
                ..
            } if e.pid == tid && function == "hrtimer_wakeup" && *x <= read_ns => Some(*x),
            _ => None,
        });
        // cyclictest prints microseconds, or nanoseconds under -N: the
        // timer's expiry tells which when the trace has it.
        let (latency_ns, deadline_ns) = match expires {
            Some(x) => {
                let as_us = value.saturating_mul(1000);
                let gap = read_ns - x;
                let latency_ns = if gap.abs_diff(as_us) <= gap.abs_diff(value) {
                    as_us
                } else {
                    notes.push("cyclictest's latency read as nanoseconds (-N)".into());
                    value
                };
                notes.push("deadline: the expiry of the thread's timer (hrtimer_start)".into());
                (latency_ns, x)
            }
            None => {
                let latency_ns = value.saturating_mul(1000);
                notes.push(read_note);
                notes.push(
                    "deadline: the thread's clock read less cyclictest's latency (read as microseconds, cyclictest's default)"
                        .into(),
                );
                (latency_ns, read_ns.saturating_sub(latency_ns))
            }
        };
        (
            Spike {
                thread: 0,
                cpu,
                tid,
                deadline_ns,
                wake_ns: deadline_ns + latency_ns,
                latency_ns,
                cycle: None,
            },
            notes,
        )
    }
}

/// When the thread that wrote `mark` read the clock: cyclictest writes
/// its marker right after reading it, so at the marker, or, when the
/// thread was switched out between its switch-in and the marker, at
/// that switch-out (the clock read came before it). The time from its
/// switch-in to then is the kernel's way back to user space (a slow
/// switch shows there), never the task that ran before. `before`: the
/// trace's events before the marker. Returns the time and a note.
fn clock_read(before: &[Event], mark: &Event) -> (u64, String) {
    let (tid, cpu) = (mark.pid, mark.cpu);
    let on_cpu = |e: &&Event| e.cpu == cpu;
    let switch_in = before.iter().rposition(|e| {
        on_cpu(&e) && matches!(e.kind, EventKind::SchedSwitch { next_pid, .. } if next_pid == tid)
    });
    let out = switch_in.and_then(|i| {
        before[i + 1..]
            .iter()
            .filter(on_cpu)
            .find(|e| matches!(e.kind, EventKind::SchedSwitch { prev_pid, .. } if prev_pid == tid))
    });
    match out {
        Some(o) => (
            o.ts_ns,
            format!(
                "the thread was switched out before its marker: its clock read is taken at that switch ({} before the marker)",
                super::analyze::fmt_ns(mark.ts_ns - o.ts_ns)
            ),
        ),
        None => (
            mark.ts_ns,
            "the thread's clock read is taken at its marker (cyclictest writes it right after reading the clock)".into(),
        ),
    }
}

/// Explain every spike cyclictest marked in the trace file at `path`.
/// A file above `max_bytes` is refused unread.
pub fn explain_trace_file(path: &Path, max_bytes: u64) -> Result<Vec<Explanation>, TraceFileError> {
    let trace = TraceText::load(path, max_bytes)?;
    explain_trace(&trace, path)
}

/// As [`explain_trace_file`], for a trace already read.
pub fn explain_trace(trace: &TraceText, path: &Path) -> Result<Vec<Explanation>, TraceFileError> {
    let spikes = trace.cyclictest_spikes(path)?;
    Ok(spikes
        .into_iter()
        .map(|(spike, notes)| {
            let mut x = analyze(&trace.window(spike.cpu), &spike);
            x.notes.extend(notes);
            if trace.unreadable_lines > 0 {
                x.notes.push(format!(
                    "{} lines of the file were not trace text and were skipped",
                    trace.unreadable_lines
                ));
            }
            x
        })
        .collect())
}

#[cfg(test)]
mod dat_tests {
    #[test]
    fn trace_cmd_dat_files_are_told_by_their_magic() {
        assert!(super::is_trace_cmd_dat(b"\x17\x08Dtracing6\0\0"));
        assert!(!super::is_trace_cmd_dat(b"cpus=2\n"));
        assert!(!super::is_trace_cmd_dat(b"\x17\x08D"));
    }
}
