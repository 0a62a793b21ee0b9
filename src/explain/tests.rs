//! Tests of the analysis on recorded text: a real ftrace `trace` file of
//! cyclictest blocked by a SCHED_FIFO hog (recorded on the development
//! VM) and the same events in `trace-cmd report`'s layout, plus small
//! synthetic timelines for the cases a recording cannot stage at will.

use super::*;
use std::path::Path;

const TRACE: &str = include_str!("../../tests/fixtures/explain/cyclictest-hog.trace");
const REPORT: &str = include_str!("../../tests/fixtures/explain/cyclictest-hog.report.txt");

fn explain_text(text: &str) -> Result<Vec<Explanation>, TraceFileError> {
    let p = Path::new("fixture");
    file::explain_trace(&TraceText::parse(text, p)?, p)
}

fn assert_hog(x: &Explanation) {
    assert_eq!(x.spike.tid, 11982);
    assert_eq!(x.spike.cpu, 1);
    assert_eq!(x.spike.latency_ns, 37_344_000);
    assert_eq!(x.spike.deadline_ns, 545_488_103_306, "from hrtimer_start");
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    assert_eq!(x.thread_comm.as_deref(), Some("cyclictest"));
    let top = &x.parts[0];
    assert!(
        matches!(&top.culprit, Culprit::Thread { comm, pid: 11979, priority: Priority::Realtime { rt_priority: 95 }, .. } if comm == "perl"),
        "{top:#?}"
    );
    assert!(top.share_pct >= 90.0, "{top:#?}");
    assert!(
        x.cause
            .starts_with("blocked by perl:11979 (RT 95) for 37.2 ms, 99.5 %"),
        "{}",
        x.cause
    );
    // The timer fired on time (the hog ran with interrupts on), and the
    // timer interrupts that came meanwhile are named.
    assert!(x.timer_fired_ns.unwrap() - x.spike.deadline_ns < 10_000);
    assert!(x.parts.iter().any(|p| matches!(&p.culprit, Culprit::Vector { name, vector: Some(236) } if name == "local_timer")));
    let shares: f64 = x.parts.iter().map(|p| p.share_pct).sum::<f64>() + x.unexplained_pct;
    assert!((shares - 100.0).abs() < 1.0, "{shares}");
    let text = text::render(x);
    assert!(
        text.contains("cause: blocked by perl:11979 (RT 95)"),
        "{text}"
    );
    assert!(!text.contains("PARTIAL"));
}

#[test]
fn a_real_ftrace_trace_names_the_hog() {
    let xs = explain_text(TRACE).unwrap();
    assert_eq!(xs.len(), 1);
    assert_hog(&xs[0]);
}

#[test]
fn trace_cmd_report_text_gives_the_same_explanation() {
    let a = explain_text(TRACE).unwrap();
    let b = explain_text(REPORT).unwrap();
    assert_hog(&b[0]);
    assert_eq!(a[0].parts, b[0].parts);
    assert_eq!(a[0].cause, b[0].cause);
}

#[test]
fn lost_events_make_it_partial() {
    let mut lines: Vec<&str> = TRACE.lines().collect();
    let at = lines.iter().position(|l| l.contains("545.50")).unwrap();
    lines.insert(at, "CPU:1 [LOST 42 EVENTS]");
    let xs = explain_text(&lines.join("\n")).unwrap();
    assert_eq!(xs[0].completeness, Completeness::Partial);
    assert!(
        xs[0].partial_reasons[0].contains("lost 42 events"),
        "{:?}",
        xs[0].partial_reasons
    );
    assert!(xs[0].cause.ends_with("(partial: the trace misses events)"));
    assert!(text::render(&xs[0]).contains("PARTIAL"));
    // A loss before the interval does not matter.
    let mut lines: Vec<&str> = TRACE.lines().collect();
    lines.insert(14, "CPU:1 [LOST 42 EVENTS]");
    assert_eq!(
        explain_text(&lines.join("\n")).unwrap()[0].completeness,
        Completeness::Complete
    );
}

#[test]
fn files_that_are_not_traces_are_refused_with_their_line() {
    let p = Path::new("notes.txt");
    match TraceText::parse("hello\nworld\n", p) {
        Err(TraceFileError::NotATrace { line: 1, .. }) => {}
        other => panic!("{other:?}"),
    }
    let e = TraceText::parse("{\"schema\": \"rtscope.run\"}\n", p).unwrap_err();
    assert!(
        e.to_string().starts_with("notes.txt:1: not a kernel trace"),
        "{e}"
    );
    assert!(TraceText::parse("", p).is_err());
    let no_mark: String = TRACE
        .lines()
        .filter(|l| !l.contains("tracing_mark_write"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(matches!(
        explain_text(&no_mark),
        Err(TraceFileError::NoSpike { .. })
    ));
    let bad_mark = TRACE.replace("(37344 > 5000)", "(lots > 5000)");
    assert!(matches!(
        explain_text(&bad_mark),
        Err(TraceFileError::BadMark { .. })
    ));
}

/// A synthetic timeline on CPU 2, times in µs from 1 s.
fn synthetic(lines: &[&str]) -> Window {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    TraceText::parse(&text, Path::new("x")).unwrap().window(2)
}

fn spike(deadline_us: u64, wake_us: u64) -> Spike {
    Spike {
        thread: 0,
        cpu: 2,
        tid: 500,
        deadline_ns: 1_000_000_000 + deadline_us * 1000,
        wake_ns: 1_000_000_000 + wake_us * 1000,
        latency_ns: (wake_us - deadline_us) * 1000,
        cycle: Some(7),
    }
}

#[test]
fn a_late_timer_is_reported_as_interrupts_off_or_hypervisor() {
    let w = synthetic(&[
        "app-77 [002] 1.000050: sched_switch: prev_comm=x prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=app next_pid=77 next_prio=120",
        "app-77 [002] 1.000900: local_timer_entry: vector=236",
        "app-77 [002] 1.000901: hrtimer_expire_entry: hrtimer=1 function=hrtimer_wakeup now=1000900500",
        "app-77 [002] 1.000902: sched_waking: comm=rt pid=500 prio=9 target_cpu=002",
        "app-77 [002] 1.000903: hrtimer_expire_exit: hrtimer=1",
        "app-77 [002] 1.000904: local_timer_exit: vector=236",
        "app-77 [002] 1.000905: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=500 next_prio=9",
    ]);
    let x = analyze(&w, &spike(100, 906));
    assert_eq!(x.completeness, Completeness::Complete);
    assert!(matches!(
        x.parts[0].culprit,
        Culprit::TimerDelay { idle: false }
    ));
    assert_eq!(x.parts[0].duration_ns, 800_000);
    assert!(
        x.cause
            .contains("interrupts were off or the hypervisor stalled"),
        "{}",
        x.cause
    );
    assert!(
        x.parts
            .iter()
            .any(|p| p.culprit == Culprit::Switch && p.duration_ns == 1_000)
    );
    assert_eq!(x.timer_fired_ns, Some(1_000_900_500));
    assert_eq!(x.spike.cycle, Some(7));
}

#[test]
fn irq_and_softirq_time_is_named_and_nested() {
    let w = synthetic(&[
        "<idle>-0 [002] 1.000000: sched_switch: prev_comm=rt prev_pid=500 prev_prio=9 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
        "<idle>-0 [002] 1.000100: local_timer_entry: vector=236",
        "<idle>-0 [002] 1.000100: hrtimer_expire_entry: hrtimer=1 function=hrtimer_wakeup now=1000100000",
        "<idle>-0 [002] 1.000101: sched_waking: comm=rt pid=500 prio=9 target_cpu=002",
        "<idle>-0 [002] 1.000102: local_timer_exit: vector=236",
        "<idle>-0 [002] 1.000102: irq_handler_entry: irq=24 name=eth0",
        "<idle>-0 [002] 1.000302: irq_handler_exit: irq=24 ret=handled",
        "<idle>-0 [002] 1.000302: softirq_entry: vec=3 [action=NET_RX]",
        "<idle>-0 [002] 1.000400: irq_handler_entry: irq=24 name=eth0",
        "<idle>-0 [002] 1.000500: irq_handler_exit: irq=24 ret=handled",
        "<idle>-0 [002] 1.000900: softirq_exit: vec=3 [action=NET_RX]",
        "<idle>-0 [002] 1.000910: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=500 next_prio=9",
    ]);
    let x = analyze(&w, &spike(100, 910));
    let get = |k: &str| {
        x.parts
            .iter()
            .find(|p| p.label.contains(k))
            .unwrap_or_else(|| panic!("{k} in {:#?}", x.parts))
    };
    assert_eq!(get("NET_RX").duration_ns, 498_000);
    assert_eq!(get("IRQ 24 eth0").duration_ns, 300_000);
    assert_eq!(get("IRQ 24 eth0").occurrences, 2);
    assert!(
        x.cause.starts_with("held up by softirq NET_RX (vec 3)"),
        "{}",
        x.cause
    );
    assert!(x.parts.iter().any(|p| p.culprit == Culprit::Idle));
}

/// The development VM's kernel does not trace the switch out of idle:
/// a thread woken on an idle CPU shows its wake-up and the interrupt's
/// exit, then nothing until it sleeps again.
#[test]
fn an_untraced_switch_from_idle_is_inferred_not_called_missing() {
    let from_idle = [
        "<idle>-0 [002] 1.000000: sched_switch: prev_comm=rt prev_pid=500 prev_prio=4 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
        "<idle>-0 [002] 1.000150: local_timer_entry: vector=236",
        "<idle>-0 [002] 1.000151: hrtimer_expire_entry: hrtimer=1 function=hrtimer_wakeup now=1000150000",
        "<idle>-0 [002] 1.000152: sched_waking: comm=rt pid=500 prio=4 target_cpu=002",
        "<idle>-0 [002] 1.000153: hrtimer_expire_exit: hrtimer=1",
        "<idle>-0 [002] 1.000154: local_timer_exit: vector=236",
        "rt-500 [002] 1.000170: sched_switch: prev_comm=rt prev_pid=500 prev_prio=4 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
    ];
    let x = analyze(&synthetic(&from_idle), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("did not trace the switch from idle"))
    );
    assert!(matches!(
        x.parts[0].culprit,
        Culprit::TimerDelay { idle: true }
    ));
    assert_eq!(x.parts[0].duration_ns, 50_000);
    let switch = x
        .parts
        .iter()
        .find(|p| p.culprit == Culprit::Switch)
        .unwrap();
    assert_eq!(
        switch.duration_ns, 6_000,
        "from local_timer_exit to the clock read"
    );
    assert_eq!(x.unexplained_ns, 0);
    assert_eq!(x.switched_in_ns, None, "no switch time is made up");

    // Another task's event after the wake-up: something ran that the
    // trace does not show switching in, so the story is not whole.
    let mut other = from_idle.to_vec();
    other.insert(
        6,
        "kw-33 [002] 1.000156: workqueue_execute_start: work struct 1: function vmstat_update",
    );
    let x = analyze(&synthetic(&other), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Partial);
    assert!(x.partial_reasons[0].contains("switch to thread 500 is not in the trace"));

    // Woken while another task ran: its switch to the thread is needed.
    let mut busy = vec![
        "app-77 [002] 1.000000: sched_switch: prev_comm=rt prev_pid=500 prev_prio=4 prev_state=S ==> next_comm=app next_pid=77 next_prio=120".to_string(),
    ];
    busy.extend(
        from_idle[1..6]
            .iter()
            .map(|l| l.replace("<idle>-0", "app-77")),
    );
    let busy: Vec<&str> = busy.iter().map(|s| s.as_str()).collect();
    let x = analyze(&synthetic(&busy), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Partial);
    assert!(x.partial_reasons[0].contains("switch to thread 500 is not in the trace"));
}

/// A synthetic timeline, read as the lean set records it (the thread's
/// own wake-ups and switches to idle filtered out).
fn filtered(lines: &[&str]) -> Window {
    Window {
        own_events_filtered: true,
        ..synthetic(lines)
    }
}

/// The lean set leaves wake-ups and the thread's switches to idle out of
/// the trace: their absence is by design, not a loss.
#[test]
fn the_threads_filtered_events_are_known_missing_not_lost() {
    // From idle: the CPU leaves only interrupts taken while idle.
    let from_idle = [
        "app-77 [002] 0.999000: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=rt next_pid=500 next_prio=4",
        "<idle>-0 [002] 1.000120: softirq_entry: vec=1 [action=TIMER]",
        "<idle>-0 [002] 1.000130: softirq_exit: vec=1 [action=TIMER]",
    ];
    let x = analyze(&filtered(&from_idle), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("leaves wake-ups and thread 500's switches to idle")),
        "{:?}",
        x.notes
    );
    assert!(matches!(
        x.parts[0].culprit,
        Culprit::TimerDelay { idle: true }
    ));
    assert_eq!(x.parts[0].duration_ns, 50_000);
    assert!(
        x.parts
            .iter()
            .any(|p| p.label.contains("TIMER") && p.duration_ns == 10_000)
    );
    assert!(x.parts.iter().all(|p| p.culprit != Culprit::Switch));
    assert_eq!(x.unexplained_ns, 0);
    assert_eq!(x.timer_fired_ns, None, "no expiry time is made up");
    // Unfiltered, the same events lack the wake-up.
    let x = analyze(&synthetic(&from_idle), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Partial);

    // Another task left an event but no switch to the thread: not whole.
    let mut other = from_idle.to_vec();
    other.push(
        "kw-33 [002] 1.000140: workqueue_execute_start: work struct 1: function vmstat_update",
    );
    let x = analyze(&filtered(&other), &spike(100, 160));
    assert_eq!(x.completeness, Completeness::Partial);
    assert!(x.partial_reasons[0].contains("switch to thread 500 is not in the trace"));
}

/// With the lean set, a task that ran instead of the thread is named,
/// with what its priority says about why.
#[test]
fn a_filtered_thread_blocked_by_another_task() {
    // Another task ran: its switch to the thread is traced, and the time
    // until then is that task's.
    let busy = [
        "app-77 [002] 0.999900: sched_switch: prev_comm=rt prev_pid=500 prev_prio=4 prev_state=S ==> next_comm=app next_pid=77 next_prio=120",
        "app-77 [002] 1.000900: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=500 next_prio=4",
    ];
    let x = analyze(&filtered(&busy), &spike(100, 905));
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    assert!(
        matches!(
            &x.parts[0].culprit,
            Culprit::Thread {
                pid: 77,
                outranked: true,
                ..
            }
        ),
        "{:#?}",
        x.parts
    );
    assert_eq!(x.parts[0].duration_ns, 800_000);
    // A nice-0 task before an RT thread: the timer was late, or the task
    // held the CPU in the kernel; the cause says it cannot tell.
    assert!(
        x.cause
            .starts_with("app:77 (nice 0) ran instead, at a lower priority")
            && x.cause.contains("cannot tell which"),
        "{}",
        x.cause
    );
    // A task of higher priority simply ran first.
    let above: Vec<String> = busy
        .iter()
        .map(|l| {
            l.replace("prev_prio=120", "prev_prio=2")
                .replace("next_prio=120", "next_prio=2")
        })
        .collect();
    let above: Vec<&str> = above.iter().map(|s| s.as_str()).collect();
    let x = analyze(&filtered(&above), &spike(100, 905));
    assert!(
        x.cause.starts_with("blocked by app:77 (RT 97)"),
        "{}",
        x.cause
    );
}

/// With the lean set, on a kernel that does not trace switches out of
/// idle, a task that outranks the thread is moved to the CPU's last
/// idle event.
#[test]
fn a_filtered_thread_outranked_by_an_unseen_task() {
    // A task that outranks the thread shows up on the idle CPU, its
    // switch from idle untraced: it is taken to have run from the CPU's
    // last idle event.
    let unseen = [
        "app-77 [002] 0.999000: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=rt next_pid=500 next_prio=4",
        "<idle>-0 [002] 1.000110: softirq_entry: vec=1 [action=TIMER]",
        "<idle>-0 [002] 1.000120: softirq_exit: vec=1 [action=TIMER]",
        "hog-9 [002] 1.002000: softirq_entry: vec=7 [action=SCHED]",
        "hog-9 [002] 1.002001: softirq_exit: vec=7 [action=SCHED]",
        "hog-9 [002] 1.010000: sched_switch: prev_comm=hog prev_pid=9 prev_prio=2 prev_state=S ==> next_comm=rt next_pid=500 next_prio=4",
    ];
    let x = analyze(&filtered(&unseen), &spike(100, 10_002));
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    let hog = x
        .parts
        .iter()
        .find(|p| matches!(p.culprit, Culprit::Thread { pid: 9, .. }))
        .unwrap();
    assert_eq!(hog.duration_ns, 9_880_000 - 1_000, "{:#?}", x.parts);
    assert!(
        x.notes
            .iter()
            .any(|n| n.contains("did not trace the switch from idle to hog:9"))
    );
    // Of lower priority than the thread, it is not moved earlier.
    let lower: Vec<String> = unseen
        .iter()
        .map(|l| l.replace("prev_prio=2 ", "prev_prio=120 "))
        .collect();
    let lower: Vec<&str> = lower.iter().map(|s| s.as_str()).collect();
    let x = analyze(&filtered(&lower), &spike(100, 10_002));
    let hog = x
        .parts
        .iter()
        .find(|p| matches!(p.culprit, Culprit::Thread { pid: 9, .. }))
        .unwrap();
    assert_eq!(hog.duration_ns, 8_000_000 - 1_000, "{:#?}", x.parts);
}

#[test]
fn a_window_that_starts_after_the_deadline_is_partial() {
    let w = synthetic(&[
        "hog-9 [002] 1.000500: sched_waking: comm=rt pid=500 prio=9 target_cpu=002",
        "hog-9 [002] 1.000600: sched_switch: prev_comm=hog prev_pid=9 prev_prio=0 prev_state=R ==> next_comm=rt next_pid=500 next_prio=9",
    ]);
    let x = analyze(&w, &spike(100, 600));
    assert_eq!(x.completeness, Completeness::Partial);
    assert!(x.partial_reasons.iter().any(|r| r.contains("begins")));
    let w = Window::default();
    let x = analyze(&w, &spike(100, 600));
    assert_eq!(x.completeness, Completeness::Partial);
    assert_eq!(x.unexplained_ns, 500_000);
    assert!(x.cause.starts_with("unexplained"), "{}", x.cause);
}

#[test]
fn explanations_round_trip_through_json() {
    let x = explain_text(TRACE).unwrap().remove(0);
    let json = serde_json::to_string(&x).unwrap();
    assert!(json.contains("\"duration_ns\"") && json.contains("\"kind\":\"thread\""));
    let back: Explanation = serde_json::from_str(&json).unwrap();
    assert_eq!(back, x);
    let schema = serde_json::to_string(&schemars::schema_for!(Explanation)).unwrap();
    assert!(schema.contains("share_pct"));
}

#[test]
#[ignore = "prints the fixture's explanation for a look"]
fn show() {
    for x in explain_text(TRACE).unwrap() {
        print!("{}", text::render(&x));
    }
}

/// cyclictest's thread on an arm64 board: stress-ng runs, the timer
/// fires, the thread is switched in and then spends 63 µs in the switch
/// (a TLB flush) before clock_nanosleep returns and it reads the clock;
/// its marker follows the clock read. `with_timer`: the trace holds the
/// timer interrupt and the wake-up (else only the switches, as in the
/// trace that was reported).
fn slow_switch_in(with_timer: bool) -> String {
    let mut lines = vec![
        "stress-ng-cpu-2200 [003] 100.000000: sched_switch: prev_comm=kworker/3:1 prev_pid=90 prev_prio=120 prev_state=I ==> next_comm=stress-ng-cpu next_pid=2200 next_prio=120",
    ];
    if with_timer {
        lines.extend([
            "stress-ng-cpu-2200 [003] 100.001002: irq_handler_entry: irq=11 name=arch_timer",
            "stress-ng-cpu-2200 [003] 100.001002: hrtimer_expire_entry: hrtimer=ffff0000c1a3be58 function=hrtimer_wakeup now=100001002500",
            "stress-ng-cpu-2200 [003] 100.001004: sched_waking: comm=cyclictest pid=3000 prio=19 target_cpu=003",
            "stress-ng-cpu-2200 [003] 100.001005: hrtimer_expire_exit: hrtimer=ffff0000c1a3be58",
            "stress-ng-cpu-2200 [003] 100.001006: irq_handler_exit: irq=11 ret=handled",
        ]);
    }
    lines.extend([
        "stress-ng-cpu-2200 [003] 100.001010: sched_switch: prev_comm=stress-ng-cpu prev_pid=2200 prev_prio=120 prev_state=R+ ==> next_comm=cyclictest next_pid=3000 next_prio=19",
        "cyclictest-3000 [003] 100.001075: tracing_mark_write: hit latency threshold (74 > 50)",
    ]);
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The time a thread spends after its switch-in, before it reads the
/// clock, is the switch's (the kernel's way back to user space), never
/// the task that ran before it.
#[test]
fn time_after_the_switch_in_belongs_to_the_switch_not_the_task_before() {
    for with_timer in [true, false] {
        let x = explain_text(&slow_switch_in(with_timer)).unwrap().remove(0);
        assert_eq!(x.spike.latency_ns, 74_000);
        let top = &x.parts[0];
        assert_eq!(top.culprit, Culprit::Switch, "{with_timer}: {x:#?}");
        assert_eq!(top.duration_ns, 65_000, "switch-in to the marker");
        assert!(
            x.cause
                .starts_with("switch-in and return to user space for 65.0 µs"),
            "{with_timer}: {}",
            x.cause
        );
        assert!(!x.cause.contains("stress-ng"), "{}", x.cause);
        let stress = x
            .parts
            .iter()
            .filter(|p| matches!(&p.culprit, Culprit::Thread { pid: 2200, .. }))
            .map(|p| p.duration_ns)
            .sum::<u64>();
        assert!(stress <= 9_000, "{with_timer}: {:#?}", x.parts);
        assert!(
            x.notes.iter().any(|n| n.contains("its marker")),
            "{:?}",
            x.notes
        );
        // With the timer's events the wake-up is whole; without them it
        // is partial, for the wake-up, not for the switch.
        assert_eq!(
            x.completeness == Completeness::Complete,
            with_timer,
            "{:?}",
            x.partial_reasons
        );
    }
}

/// rtla timerlat's split: the IRQ latency from the expiry of the
/// thread's own timer, the thread latency, and which dominated.
#[test]
fn the_hogs_spike_splits_into_irq_and_thread_latency() {
    let x = explain_text(TRACE).unwrap().remove(0);
    let Some(IrqThreadSplit::Known(k)) = &x.irq_thread else {
        panic!("{:?}", x.irq_thread)
    };
    // The handler that woke the thread: hrtimer 0000000093b632e3's expiry
    // (now=545488105...), not the tick's nor an earlier wake-up's.
    let expiry = x.timer_fired_ns.unwrap();
    assert_eq!(k.irq_latency_ns, expiry - x.spike.deadline_ns);
    assert!(k.irq_latency_ns < 10_000, "{k:?}");
    assert_eq!(k.thread_latency_ns, x.spike.latency_ns);
    assert!(k.irq_latency_ns <= k.thread_latency_ns);
    assert_eq!(k.dominant, SplitSide::Thread);
    let held = k.held_by.as_deref().unwrap();
    assert!(
        held.starts_with("blocked by perl:11979 (RT 95) for 37."),
        "{held}"
    );
    let to_switch = k.expiry_to_switch_ns.unwrap();
    assert!(k.expiry_to_waking_ns.unwrap() < to_switch);
    assert_eq!(
        k.irq_latency_ns + to_switch + k.switch_to_run_ns.unwrap(),
        x.spike.latency_ns,
        "the steps add up to the thread latency"
    );
    let text = text::render(&x);
    assert!(
        text.contains("IRQ and thread latency (as rtla timerlat splits them): IRQ latency "),
        "{text}"
    );
    assert!(
        text.contains("thread latency 37.3 ms: the thread latency dominated"),
        "{text}"
    );
    // trace-cmd's layout (`hrtimer=0x...` at the expiry) finds the same.
    let y = explain_text(REPORT).unwrap().remove(0);
    assert_eq!(y.irq_thread, x.irq_thread);
}

/// A late timer: the IRQ latency dominates.
#[test]
fn a_late_timer_splits_as_irq_latency() {
    let w = synthetic(&[
        "app-77 [002] 1.000050: sched_switch: prev_comm=x prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=app next_pid=77 next_prio=120",
        "app-77 [002] 1.000900: local_timer_entry: vector=236",
        // Another sleeper's timer, whose handler returned first.
        "app-77 [002] 1.000900: hrtimer_expire_entry: hrtimer=0x00000000000000aa function=hrtimer_wakeup now=1000900100",
        "app-77 [002] 1.000901: sched_waking: comm=other pid=600 prio=120 target_cpu=002",
        "app-77 [002] 1.000901: hrtimer_expire_exit: hrtimer=00000000000000aa",
        "app-77 [002] 1.000901: hrtimer_expire_entry: hrtimer=0x00000000000000bb function=hrtimer_wakeup now=1000901500",
        "app-77 [002] 1.000902: sched_waking: comm=rt pid=500 prio=9 target_cpu=002",
        // A later timer of someone else, already returned: not ours.
        "app-77 [002] 1.000902: hrtimer_expire_exit: hrtimer=00000000000000bb",
        "app-77 [002] 1.000904: local_timer_exit: vector=236",
        "app-77 [002] 1.000905: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=500 next_prio=9",
    ]);
    let x = analyze(&w, &spike(100, 906));
    let Some(IrqThreadSplit::Known(k)) = &x.irq_thread else {
        panic!("{:?}", x.irq_thread)
    };
    assert_eq!(k.irq_latency_ns, 801_500, "hrtimer bb's expiry, not aa's");
    assert_eq!(k.thread_latency_ns, 806_000);
    assert_eq!(k.dominant, SplitSide::Irq);
    assert!(
        k.held_by
            .as_deref()
            .unwrap()
            .starts_with("the timer fired late"),
        "{k:?}"
    );
    assert_eq!(k.expiry_to_waking_ns, Some(500));
    assert_eq!(k.switch_to_run_ns, Some(1_000));
}

/// Unknown is said, never 0: the lean set by design, a trace without the
/// timer's events for want of them.
#[test]
fn without_the_timers_expiry_the_split_is_unknown() {
    let busy = [
        "app-77 [002] 0.999900: sched_switch: prev_comm=rt prev_pid=500 prev_prio=4 prev_state=S ==> next_comm=app next_pid=77 next_prio=120",
        "app-77 [002] 1.000900: sched_switch: prev_comm=app prev_pid=77 prev_prio=120 prev_state=R ==> next_comm=rt next_pid=500 next_prio=4",
    ];
    let x = analyze(&filtered(&busy), &spike(100, 905));
    assert_eq!(
        x.irq_thread,
        Some(IrqThreadSplit::Unknown {
            why: SplitUnknown::LeanSet
        })
    );
    let text = text::render(&x);
    assert_eq!(
        text.matches("unknown in the lean event set").count(),
        1,
        "{text}"
    );
    assert!(!text.contains("IRQ latency 0"), "{text}");
    let mut woken = busy.to_vec();
    woken.insert(
        1,
        "app-77 [002] 1.000101: sched_waking: comm=rt pid=500 prio=4 target_cpu=002",
    );
    let x = analyze(&synthetic(&woken), &spike(100, 905));
    assert_eq!(
        x.irq_thread,
        Some(IrqThreadSplit::Unknown {
            why: SplitUnknown::NoExpiry
        })
    );
    // Explanations stored before the split load, without one.
    let mut json = serde_json::to_value(&x).unwrap();
    json.as_object_mut().unwrap().remove("irq_thread");
    let old: Explanation = serde_json::from_value(json).unwrap();
    assert_eq!(old.irq_thread, None);
    assert!(!text::render(&old).contains("IRQ and thread latency"));
}

/// PREEMPT_RT: interrupts are threads. One at FIFO 50 runs ahead of the
/// measured thread at FIFO 40: it is named as a threaded interrupt.
#[test]
fn a_threaded_interrupt_is_named_as_one() {
    let w = synthetic(&[
        "<idle>-0 [002] 1.000000: sched_switch: prev_comm=rt prev_pid=500 prev_prio=59 prev_state=S ==> next_comm=swapper/2 next_pid=0 next_prio=120",
        "<idle>-0 [002] 1.000095: irq_handler_entry: irq=24 name=virtio0",
        "<idle>-0 [002] 1.000096: sched_waking: comm=irq/24-virtio0 pid=321 prio=49 target_cpu=002",
        "<idle>-0 [002] 1.000097: irq_handler_exit: irq=24 ret=handled",
        "<idle>-0 [002] 1.000098: sched_switch: prev_comm=swapper/2 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=irq/24-virtio0 next_pid=321 next_prio=49",
        "irq/24-virtio0-321 [002] 1.000101: local_timer_entry: vector=236",
        "irq/24-virtio0-321 [002] 1.000101: hrtimer_expire_entry: hrtimer=0x00000000000000bb function=hrtimer_wakeup now=1000101200",
        "irq/24-virtio0-321 [002] 1.000102: sched_waking: comm=rt pid=500 prio=59 target_cpu=002",
        "irq/24-virtio0-321 [002] 1.000103: hrtimer_expire_exit: hrtimer=00000000000000bb",
        "irq/24-virtio0-321 [002] 1.000104: local_timer_exit: vector=236",
        "irq/24-virtio0-321 [002] 1.000400: sched_switch: prev_comm=irq/24-virtio0 prev_pid=321 prev_prio=49 prev_state=S ==> next_comm=rt next_pid=500 next_prio=59",
    ]);
    let x = analyze(&w, &spike(100, 405));
    assert_eq!(x.completeness, Completeness::Complete, "{x:#?}");
    assert!(
        x.cause
            .starts_with("blocked by threaded interrupt irq/24-virtio0:321 (RT 50) for 29"),
        "{}",
        x.cause
    );
    assert!(
        matches!(&x.parts[0].culprit, Culprit::Thread { pid: 321, .. }),
        "{:#?}",
        x.parts
    );
    let Some(IrqThreadSplit::Known(k)) = &x.irq_thread else {
        panic!("{:?}", x.irq_thread)
    };
    assert_eq!(k.dominant, SplitSide::Thread);
    assert!(
        k.held_by
            .as_deref()
            .unwrap()
            .starts_with("blocked by threaded interrupt irq/24-virtio0:321 (RT 50)"),
        "{k:?}"
    );
    assert!(text::render(&x).contains("threaded interrupt irq/24-virtio0:321 (RT 50)"));
    assert!(analyze::threaded_irq("irq/9-s-acpi"));
    assert!(!analyze::threaded_irq("irqbalance"));
    assert!(!analyze::threaded_irq("irq/x-"));
}
