//! Parser for ftrace text: the lines of `trace_pipe` and the `trace` file
//! (`comm-pid [cpu] flags ts: event: fields`) and of `trace-cmd report`
//! (the same without flags, or with them under `-l`, and trace-cmd's own
//! layouts of sched_switch and sched_wakeup). Text timestamps are
//! `seconds.fraction` (microseconds, or nanoseconds with some trace-cmd
//! options); every time is returned in nanoseconds. Pure: no I/O, and no
//! panic whatever the input.

use super::event::{Event, EventKind, KernelPrio};

/// What one line of trace text holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    Event(Event),
    /// `CPU:N [LOST M EVENTS]` (trace_pipe, trace) or trace-cmd's
    /// `CPU:N [M EVENTS DROPPED]`: events of `cpu` were lost here.
    Lost {
        cpu: usize,
        count: Option<u64>,
    },
    /// A comment, a header line of trace-cmd, a stack trace line, or a
    /// blank line.
    Ignored,
}

/// A line that is not trace text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a trace line: {reason}")]
pub struct LineError {
    pub reason: &'static str,
}

fn err(reason: &'static str) -> LineError {
    LineError { reason }
}

/// Parse one line of trace text.
pub fn parse_line(line: &str) -> Result<Line, LineError> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') || t.starts_with("=>") || is_header(t) {
        return Ok(Line::Ignored);
    }
    if let Some(rest) = t.strip_prefix("CPU:")
        && (t.contains("LOST") || t.contains("DROPPED"))
    {
        let cpu = leading_number(rest).ok_or(err("a lost-events line without a CPU"))? as usize;
        let count = rest
            .split_once('[')
            .and_then(|(_, r)| leading_number(r.trim_start_matches(|c: char| !c.is_ascii_digit())));
        return Ok(Line::Lost { cpu, count });
    }
    parse_event(line).map(Line::Event)
}

/// trace-cmd's header lines (`cpus=2`, `version = 7`, `CPU 3 is empty`).
fn is_header(t: &str) -> bool {
    (t.starts_with("cpus=") && t[5..].chars().all(|c| c.is_ascii_digit()))
        || t.starts_with("version =")
        || t.starts_with("version=")
        || (t.starts_with("CPU ") && t.ends_with(" is empty"))
}

fn leading_number(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s[..end].parse().ok()
}

/// `sec.frac` (any number of fraction digits up to 9) into nanoseconds.
pub fn parse_timestamp_ns(s: &str) -> Option<u64> {
    let (sec, frac) = s.split_once('.')?;
    if sec.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !sec.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let sec: u64 = sec.parse().ok()?;
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    sec.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Split the task column `comm-pid` (the comm may hold dashes and spaces;
/// a trailing `(tgid)` is dropped).
fn split_task(task: &str) -> Option<(&str, i32)> {
    let mut task = task.trim();
    if task.ends_with(')')
        && let Some(open) = task.rfind('(')
    {
        task = task[..open].trim_end();
    }
    let (comm, pid) = task.rsplit_once('-')?;
    Some((comm.trim(), pid.trim().parse().ok()?))
}

/// The CPU column: the first ` [digits]` after which the rest of the
/// line reads as an event.
fn parse_event(line: &str) -> Result<Event, LineError> {
    let mut search = 0;
    while let Some(off) = line[search..].find('[') {
        let open = search + off;
        search = open + 1;
        let Some(close_off) = line[open..].find(']') else {
            break;
        };
        let close = open + close_off;
        let inner = &line[open + 1..close];
        if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some((comm, pid)) = split_task(&line[..open]) else {
            continue;
        };
        let Ok(cpu) = inner.parse::<usize>() else {
            continue;
        };
        if let Some((ts_ns, name, fields)) = split_rest(&line[close + 1..]) {
            let kind = parse_kind(name, fields)?;
            return Ok(Event {
                ts_ns,
                cpu,
                pid,
                comm: comm.to_string(),
                kind,
            });
        }
    }
    Err(err("no `comm-pid [cpu] timestamp: event:` layout"))
}

/// After the CPU column: optional flags, `ts:`, `event:`, fields.
fn split_rest(rest: &str) -> Option<(u64, &str, &str)> {
    let mut s = rest.trim_start();
    // At most two tokens before the timestamp: latency flags (`d.h1.`)
    // and, in some trace-cmd layouts, a second flag column.
    for _ in 0..3 {
        let end = s.find(char::is_whitespace).unwrap_or(s.len());
        let token = &s[..end];
        let after = s[end..].trim_start();
        if let Some(ts) = token.strip_suffix(':').and_then(parse_timestamp_ns) {
            let (name, fields) = match after.split_once(':') {
                Some((n, f)) if !n.is_empty() && !n.contains(char::is_whitespace) => (n, f.trim()),
                _ => return None,
            };
            return Some((ts, name, fields));
        }
        if after.is_empty() {
            return None;
        }
        s = after;
    }
    None
}

/// `key=value` pairs: a key is `[A-Za-z0-9_]+` right after the start or a
/// space; its value runs to the next key (values may hold spaces, as
/// comms do).
pub fn fields(text: &str) -> Vec<(&str, &str)> {
    let bytes = text.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if i == 0 || bytes[i - 1] == b' ' {
            let mut j = i;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j > i && j < bytes.len() && bytes[j] == b'=' {
                starts.push((i, j));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &(ks, ke)) in starts.iter().enumerate() {
        let vend = starts.get(k + 1).map(|&(s, _)| s).unwrap_or(text.len());
        out.push((&text[ks..ke], text[ke + 1..vend].trim()));
    }
    out
}

fn get<'a>(kv: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    kv.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn num<T: std::str::FromStr>(kv: &[(&str, &str)], key: &str) -> Option<T> {
    get(kv, key).and_then(|v| v.parse().ok())
}

/// A kernel symbol without its offset (`hrtimer_wakeup/0x0`,
/// `foo+0x10/0x20` → `hrtimer_wakeup`, `foo`).
fn symbol(s: &str) -> String {
    let end = s.find(['+', '/']).unwrap_or(s.len());
    s[..end].trim().to_string()
}

fn parse_kind(name: &str, text: &str) -> Result<EventKind, LineError> {
    Ok(match name {
        "sched_switch" => parse_switch(text).ok_or(err("a sched_switch without its fields"))?,
        "sched_waking" | "sched_wakeup" => wakeup_kind(name, text)?,
        "hrtimer_start" | "hrtimer_expire_entry" | "hrtimer_expire_exit" => {
            hrtimer_kind(name, text)
        }
        "irq_handler_entry" | "irq_handler_exit" => irq_kind(name, text)?,
        "softirq_entry" | "softirq_exit" => softirq_kind(name, text)?,
        "ipi_entry" | "ipi_exit" => ipi_kind(name, text),
        _ => vector_kind(name, text).unwrap_or_else(|| other_kind(name, text)),
    })
}

/// `sched_waking` and `sched_wakeup`.
fn wakeup_kind(name: &str, text: &str) -> Result<EventKind, LineError> {
    let (comm, pid, prio, target_cpu) =
        parse_wakeup(text).ok_or(err("a wake-up without its fields"))?;
    Ok(if name == "sched_waking" {
        EventKind::SchedWaking {
            comm,
            pid,
            prio,
            target_cpu,
        }
    } else {
        EventKind::SchedWakeup {
            comm,
            pid,
            prio,
            target_cpu,
        }
    })
}

/// `hrtimer_start`, `hrtimer_expire_entry`, `hrtimer_expire_exit`.
fn hrtimer_kind(name: &str, text: &str) -> EventKind {
    let kv = fields(text);
    let hrtimer = get(&kv, "hrtimer").unwrap_or("").to_string();
    let function = || symbol(get(&kv, "function").unwrap_or(""));
    match name {
        "hrtimer_start" => EventKind::HrtimerStart {
            hrtimer,
            function: function(),
            expires_ns: num(&kv, "expires"),
        },
        "hrtimer_expire_entry" => EventKind::HrtimerExpireEntry {
            hrtimer,
            function: function(),
            now_ns: num(&kv, "now"),
        },
        _ => EventKind::HrtimerExpireExit { hrtimer },
    }
}

/// `irq_handler_entry` and `irq_handler_exit`.
fn irq_kind(name: &str, text: &str) -> Result<EventKind, LineError> {
    let kv = fields(text);
    Ok(if name == "irq_handler_entry" {
        EventKind::IrqEntry {
            irq: num(&kv, "irq").ok_or(err("an irq_handler_entry without irq="))?,
            name: get(&kv, "name").unwrap_or("").to_string(),
        }
    } else {
        EventKind::IrqExit {
            irq: num(&kv, "irq").ok_or(err("an irq_handler_exit without irq="))?,
        }
    })
}

/// `softirq_entry` and `softirq_exit`.
fn softirq_kind(name: &str, text: &str) -> Result<EventKind, LineError> {
    let vec = text
        .split_once("vec=")
        .and_then(|(_, v)| leading_number(v))
        .and_then(|v| u32::try_from(v).ok())
        .ok_or(err("a softirq event without vec="))?;
    Ok(if name == "softirq_entry" {
        let action = text
            .split_once("action=")
            .map(|(_, a)| a.trim_end_matches(']').trim().to_string())
            .unwrap_or_default();
        EventKind::SoftirqEntry { vec, action }
    } else {
        EventKind::SoftirqExit { vec }
    })
}

/// `ipi_entry` and `ipi_exit`: an interrupt named by its reason.
fn ipi_kind(name: &str, text: &str) -> EventKind {
    let reason = text.trim().trim_start_matches('(').trim_end_matches(')');
    let ipi = format!("ipi: {reason}");
    if name == "ipi_exit" {
        EventKind::VectorExit { name: ipi }
    } else {
        EventKind::VectorEntry {
            name: ipi,
            vector: None,
        }
    }
}

/// `irq_vectors:*_entry` and `*_exit` (they print `vector=N`).
fn vector_kind(name: &str, text: &str) -> Option<EventKind> {
    if !is_vector_event(text) {
        return None;
    }
    if let Some(v) = name.strip_suffix("_entry") {
        Some(EventKind::VectorEntry {
            name: v.to_string(),
            vector: num(&fields(text), "vector"),
        })
    } else {
        name.strip_suffix("_exit").map(|v| EventKind::VectorExit {
            name: v.to_string(),
        })
    }
}

/// Workqueue functions, markers, and every other event by name.
fn other_kind(name: &str, text: &str) -> EventKind {
    match name {
        "workqueue_execute_start" => EventKind::WorkStart {
            function: text
                .split_once("function ")
                .map(|(_, f)| symbol(f))
                .unwrap_or_default(),
        },
        "workqueue_execute_end" => EventKind::WorkEnd,
        "tracing_mark_write" => EventKind::Marker {
            text: text.to_string(),
        },
        "print" => EventKind::Marker {
            text: strip_print_ip(text).to_string(),
        },
        _ => EventKind::Other {
            name: name.to_string(),
        },
    }
}

/// `irq_vectors:*_entry` / `*_exit` print `vector=N`.
fn is_vector_event(text: &str) -> bool {
    text.trim_start().starts_with("vector=")
}

/// trace-cmd prints the `print` event as `IP: TEXT` (`tracing_mark_write:`
/// or an address); the text is what follows.
fn strip_print_ip(text: &str) -> &str {
    match text.split_once(": ") {
        Some((ip, rest)) if !ip.is_empty() && !ip.contains(char::is_whitespace) => rest,
        _ => text,
    }
}

/// Priority in brackets (`[19]`), as trace-cmd prints it.
fn bracket_prio(s: &str) -> Option<KernelPrio> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    inner.trim().parse().ok().map(KernelPrio)
}

/// trace-cmd's `comm:pid [prio]` (the comm may hold colons).
fn comm_pid_prio(s: &str) -> Option<(String, i32, Option<KernelPrio>)> {
    let s = s.trim();
    let (task, prio) = match s.rfind(" [") {
        Some(i) => (&s[..i], bracket_prio(&s[i + 1..])),
        None => (s, None),
    };
    let (comm, pid) = task.rsplit_once(':')?;
    Some((comm.to_string(), pid.trim().parse().ok()?, prio))
}

fn parse_switch(text: &str) -> Option<EventKind> {
    let (left, right) = text.split_once("==>")?;
    if left.contains("prev_pid=") {
        let l = fields(left);
        let r = fields(right);
        return Some(EventKind::SchedSwitch {
            prev_comm: get(&l, "prev_comm")?.to_string(),
            prev_pid: num(&l, "prev_pid")?,
            prev_prio: num(&l, "prev_prio").map(KernelPrio),
            prev_state: get(&l, "prev_state").unwrap_or("").to_string(),
            next_comm: get(&r, "next_comm")?.to_string(),
            next_pid: num(&r, "next_pid")?,
            next_prio: num(&r, "next_prio").map(KernelPrio),
        });
    }
    // trace-cmd: `prev:pid [prio] STATE ==> next:pid [prio]`.
    let left = left.trim();
    let (task, state) = match left.rsplit_once(' ') {
        Some((t, st)) if !st.ends_with(']') => (t, st),
        _ => (left, ""),
    };
    let (prev_comm, prev_pid, prev_prio) = comm_pid_prio(task)?;
    let (next_comm, next_pid, next_prio) = comm_pid_prio(right)?;
    Some(EventKind::SchedSwitch {
        prev_comm,
        prev_pid,
        prev_prio,
        prev_state: state.to_string(),
        next_comm,
        next_pid,
        next_prio,
    })
}

type Wakeup = (String, i32, Option<KernelPrio>, Option<usize>);

fn parse_wakeup(text: &str) -> Option<Wakeup> {
    if text.contains("pid=") {
        let kv = fields(text);
        return Some((
            get(&kv, "comm")?.to_string(),
            num(&kv, "pid")?,
            num(&kv, "prio").map(KernelPrio),
            num(&kv, "target_cpu").or_else(|| num(&kv, "cpu")),
        ));
    }
    // trace-cmd: `comm:pid [prio] [success=1] CPU:001`.
    let (head, cpu) = match text.rfind("CPU:") {
        Some(i) => (&text[..i], text[i + 4..].trim().parse().ok()),
        None => (text, None),
    };
    let head = head.trim();
    let head = match head.rsplit_once(' ') {
        Some((h, last)) if last.starts_with("success=") => h,
        _ => head,
    };
    let (comm, pid, prio) = comm_pid_prio(head)?;
    Some((comm, pid, prio, cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(line: &str) -> Event {
        match parse_line(line) {
            Ok(Line::Event(e)) => e,
            other => panic!("{line:?} gave {other:?}"),
        }
    }

    #[test]
    fn ftrace_lines_with_flags() {
        let e = ev(
            "      opt cgu.12-11872   [001] d..2.   545.484113: sched_switch: prev_comm=opt cgu.12 prev_pid=11872 prev_prio=120 prev_state=R ==> next_comm=cyclictest next_pid=11982 next_prio=19",
        );
        assert_eq!((e.cpu, e.pid, e.ts_ns), (1, 11872, 545_484_113_000));
        assert_eq!(e.comm, "opt cgu.12");
        assert_eq!(
            e.kind,
            EventKind::SchedSwitch {
                prev_comm: "opt cgu.12".into(),
                prev_pid: 11872,
                prev_prio: Some(KernelPrio(120)),
                prev_state: "R".into(),
                next_comm: "cyclictest".into(),
                next_pid: 11982,
                next_prio: Some(KernelPrio(19)),
            }
        );
        let e = ev(
            "            perl-11979   [001] d.h1.   545.487109: hrtimer_expire_entry: hrtimer=000000007513e80c function=hrtimer_wakeup now=545487108131",
        );
        assert_eq!(
            e.kind,
            EventKind::HrtimerExpireEntry {
                hrtimer: "000000007513e80c".into(),
                function: "hrtimer_wakeup".into(),
                now_ns: Some(545_487_108_131)
            }
        );
        let e = ev(
            "            perl-11979   [001] d.h3.   545.487109: sched_waking: comm=cyclictest pid=11982 prio=19 target_cpu=001",
        );
        assert_eq!(e.kind.woken_pid(), Some(11982));
        let e = ev("  perl-11979   [001] ..s..   545.512008: softirq_entry: vec=7 [action=SCHED]");
        assert_eq!(
            e.kind,
            EventKind::SoftirqEntry {
                vec: 7,
                action: "SCHED".into()
            }
        );
        let e = ev("  perl-11979   [001] d.h..   545.516001: local_timer_entry: vector=236");
        assert_eq!(
            e.kind,
            EventKind::VectorEntry {
                name: "local_timer".into(),
                vector: Some(236)
            }
        );
        let e = ev(
            "      cyclictest-11982   [001] ...1.   545.525462: tracing_mark_write: hit latency threshold (37344 > 5000)",
        );
        assert_eq!(
            e.kind,
            EventKind::Marker {
                text: "hit latency threshold (37344 > 5000)".into()
            }
        );
        let e = ev(
            "<idle>-0     [000] d.h2.  1024.000001: irq_handler_entry: irq=24 name=virtio0-input.0",
        );
        assert_eq!((e.pid, e.comm.as_str()), (0, "<idle>"));
        assert_eq!(
            e.kind,
            EventKind::IrqEntry {
                irq: 24,
                name: "virtio0-input.0".into()
            }
        );
        let e = ev(
            " kworker/1:1-87 (87) [001] ..... 10.000002: workqueue_execute_start: work struct 00000000d6a1b2c3: function vmstat_update",
        );
        assert_eq!(e.pid, 87);
        assert_eq!(
            e.kind,
            EventKind::WorkStart {
                function: "vmstat_update".into()
            }
        );
    }

    #[test]
    fn trace_cmd_report_layouts() {
        let e = ev(
            "            perl-11979 [001]   545.525425: sched_switch:         perl:11979 [4] Z ==> cyclictest:11982 [19]",
        );
        assert_eq!(
            e.kind,
            EventKind::SchedSwitch {
                prev_comm: "perl".into(),
                prev_pid: 11979,
                prev_prio: Some(KernelPrio(4)),
                prev_state: "Z".into(),
                next_comm: "cyclictest".into(),
                next_pid: 11982,
                next_prio: Some(KernelPrio(19)),
            }
        );
        let e = ev(
            "  perl-11979 [001]   545.487111: sched_wakeup:         cyclictest:11982 [19] CPU:001",
        );
        assert_eq!(
            e.kind,
            EventKind::SchedWakeup {
                comm: "cyclictest".into(),
                pid: 11982,
                prio: Some(KernelPrio(19)),
                target_cpu: Some(1)
            }
        );
        let e = ev(
            "  perl-11979 [001]   545.487109: sched_wakeup:         kworker/u4:2:77 [120] success=1 CPU:000",
        );
        assert_eq!(e.kind.woken_pid(), Some(77));
        let e = ev(
            "  cyclictest-11982 [001]   545.525462: print:                tracing_mark_write: hit latency threshold (37344 > 5000)",
        );
        assert_eq!(
            e.kind,
            EventKind::Marker {
                text: "hit latency threshold (37344 > 5000)".into()
            }
        );
        let e = ev(
            "  perl-11979 [001]   545.487109: hrtimer_expire_entry: hrtimer=0xffff9a40bfd1e8a8 now=545487108131 function=hrtimer_wakeup/0x0",
        );
        assert!(matches!(
            e.kind,
            EventKind::HrtimerExpireEntry { ref function, now_ns: Some(545_487_108_131), .. } if function == "hrtimer_wakeup"
        ));
        // Nanosecond timestamps (`trace-cmd report -t`).
        assert_eq!(ev("a-1 [000] 1.000000123: foo: bar").ts_ns, 1_000_000_123);
        assert_eq!(parse_line("cpus=2"), Ok(Line::Ignored));
        assert_eq!(parse_line("CPU 0 is empty"), Ok(Line::Ignored));
    }

    #[test]
    fn lost_events_and_garbage() {
        assert_eq!(
            parse_line("CPU:1 [LOST 123 EVENTS]"),
            Ok(Line::Lost {
                cpu: 1,
                count: Some(123)
            })
        );
        assert_eq!(
            parse_line("CPU:0 [4 EVENTS DROPPED]"),
            Ok(Line::Lost {
                cpu: 0,
                count: Some(4)
            })
        );
        assert_eq!(parse_line("# tracer: nop"), Ok(Line::Ignored));
        for bad in [
            "hello world",
            "[001] 1.0: x: y",
            "a-b [001] 1.0: x: y",
            "a-1 [1x] 1.0: x: y",
            "a-1 [001] notatime: x: y",
            "a-1 [001] 1.0 x y",
            "a-1 [001] 1.0: sched_switch: nonsense",
            "a-1 [001] 99999999999999999999.0: x: y",
            "\u{feff}{\"json\": true}",
            "a-1 [001] 1.0: irq_handler_entry: irq=x",
        ] {
            assert!(parse_line(bad).is_err(), "{bad:?} parsed");
        }
    }
}
