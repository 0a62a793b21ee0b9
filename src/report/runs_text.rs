//! The text of `rtscope runs`: the list table and one run's details.
//! Pure: rows and records in, text out. Text from a file or a board
//! (labels, hosts, kernels, tags, the fingerprint) goes through
//! `text::for_terminal`: no control character reaches the terminal.

use super::{known, summary};
use crate::kinds::SourceKind;
use crate::record::{Quantity, RunRecord, Stated, Unknowable};
use crate::store::{Origin, RunRow, RunState};
use crate::text::rank::Rows;
use crate::text::{for_terminal, for_terminal_lines, num};
use crate::units::{AT_LEAST, fmt_duration, fmt_unix_utc, shorten, us1};

/// What the origin column says: where the run came from
/// ([`Origin::name`]: `measured`, `imported`, `characterization`), or
/// its source kind as stored when this rtscope does not know it. Its
/// state column is [`RunState::name`]: an imported run is `complete`.
pub fn origin_word(r: &RunRow) -> &str {
    Origin::of(&r.source_kind).map_or(r.source_kind.as_str(), |o| o.name())
}

/// What a run's figures are, in the list's `measures` column: short, and
/// never the same words for two quantities.
pub fn quantity_word(q: Quantity) -> &'static str {
    match q {
        Quantity::WakeupLatency => "wake-up latency",
        Quantity::BusyLoopGap => "busy-loop gap (oslat)",
        Quantity::OsNoise => "OS noise (osnoise)",
    }
}

/// The list table (pure, for tests): each stored row with the quantity
/// its figures measure (`None`: not a latency run, a characterization). The `measures` column says it, so oslat's gaps
/// or osnoise's noise never read as wake-up latencies beside them; a
/// figure that is not a wake-up latency is marked `*`, and a note under
/// the table says what it is not. A `host` column is shown when the runs
/// come from more than one host (a shared store). Unknown reads unknown.
pub fn render_list(rows: &[(RunRow, Option<Quantity>)]) -> String {
    let many_hosts = rows.iter().any(|(r, _)| r.host != rows[0].0.host);
    let mut header = vec![
        "id",
        "state",
        "origin",
        "start (UTC)",
        "label",
        "kernel",
        "preemption",
        "duration",
        "threads",
        "measures",
        "p99.99 (us)",
        "max (us)",
    ];
    let mut numeric = vec![
        true, false, false, false, false, false, false, true, true, false, true, true,
    ];
    if many_hosts {
        header.insert(4, "host");
        numeric.insert(4, false);
    }
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    table.extend(rows.iter().map(|(r, q)| list_row(r, *q, many_hosts)));
    // Every cell from a file or a board was made safe above; this is the
    // last guard.
    let mut out = for_terminal_lines(&aligned(&table, &numeric)).into_owned();
    if rows.iter().any(|(_, q)| is_other(*q)) {
        out.push_str(
            "* not a wake-up latency (see measures): not comparable with wake-up latencies, \
             and given no wake-up deadline or class\n",
        );
    }
    out
}

/// `s` (text from a file or a board, made safe for a terminal), or
/// `unknown` when it is empty.
fn or_unknown(s: &str) -> String {
    if s.is_empty() {
        "unknown".to_string()
    } else {
        for_terminal(s).into_owned()
    }
}

/// Whether a run's figures are latencies of another quantity than a
/// wake-up latency.
fn is_other(q: Option<Quantity>) -> bool {
    q.is_some_and(|q| q != Quantity::WakeupLatency)
}

/// A figure of the list in µs (`runs` and `serve`'s list), `unknown` when
/// the run has none, `≥` before it when it is only a lower bound (a
/// quantile among an import's overflows), `*` after it when it is not a
/// wake-up latency (`-`: not a latency run).
pub fn figure_cell(v: Option<Stated<u64>>, q: Option<Quantity>) -> String {
    let Some(v) = v else {
        return if q.is_none() { "-" } else { "unknown" }.into();
    };
    let bound = if v.is_bound() { AT_LEAST } else { "" };
    match q {
        None => "-".into(),
        q if is_other(q) => format!("{bound}{}*", us1(v.value())),
        _ => format!("{bound}{}", us1(v.value())),
    }
}

/// One run's line of the list.
fn list_row(r: &RunRow, q: Option<Quantity>, many_hosts: bool) -> Vec<String> {
    let start = if r.started_at_unix_ns > 0 {
        fmt_unix_utc(r.started_at_unix_ns)
            .trim_end_matches(" UTC")
            .to_string()
    } else {
        "unknown".into()
    };
    let mut line = vec![
        r.id.to_string(),
        r.state.name().to_string(),
        origin_word(r).to_string(),
        start,
        shorten(&for_terminal(r.label.as_deref().unwrap_or("-")), 28),
        shorten(&or_unknown(&r.kernel_release), 28),
        or_unknown(&r.preemption_model),
        r.duration()
            .map_or_else(|| "unknown".into(), crate::units::fmt_run_length),
        r.threads.to_string(),
        q.map_or("-", quantity_word).to_string(),
        figure_cell(r.p9999(), q),
        figure_cell(r.max_ns.map(Stated::Exact), q),
    ];
    if many_hosts {
        line.insert(4, shorten(&or_unknown(&r.host), 20));
    }
    line
}

/// `table` in columns two spaces apart, `numeric` ones right-aligned
/// (no rule under the header, unlike `text::table`).
fn aligned(table: &[Vec<String>], numeric: &[bool]) -> String {
    let widths: Vec<usize> = (0..numeric.len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in table {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let pad = widths[c] - v.chars().count();
                if numeric[c] {
                    format!("{}{v}", " ".repeat(pad))
                } else {
                    format!("{v}{}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The details of one run (pure, for tests): a `key: value` line per
/// fact, the fingerprint's other values, the warnings, then the summary
/// table.
pub fn render_show(id: i64, row: &RunRow, rec: &RunRecord, rows: Rows) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    // Each value is one line, whatever a file or a board put in it.
    for (k, v) in show_facts(id, row, rec) {
        let _ = writeln!(out, "{:<13}{}", format!("{k}:"), for_terminal(&v));
    }
    for (k, v) in other_fingerprint(&rec.fingerprint) {
        let _ = writeln!(out, "  {} = {}", for_terminal(&k), for_terminal(&v));
    }
    for l in super::split::lines(rec) {
        let _ = writeln!(out, "per CPU:     {}", for_terminal(&l));
    }
    for w in &rec.warnings {
        let _ = writeln!(out, "warning:     {}", for_terminal(w));
    }
    out.push('\n');
    out.push_str(&summary::render_rows(rec, rows));
    for_terminal_lines(&out).into_owned()
}

/// The `key: value` facts of `runs show`, in order.
fn show_facts(id: i64, row: &RunRow, rec: &RunRecord) -> Vec<(&'static str, String)> {
    let mut facts = vec![
        ("run", format!("{id} (uuid {})", rec.run_uuid)),
        ("state", state_text(row, rec)),
        ("source", source_text(rec)),
    ];
    if !rec.source.command_line.is_empty() {
        facts.push((
            "command",
            crate::redact::command_line(&rec.source.command_line).join(" "),
        ));
    }
    if let Some(l) = &rec.label {
        facts.push(("label", l.clone()));
    }
    if !rec.tags.is_empty() {
        let tags: Vec<String> = rec.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        facts.push(("tags", tags.join(", ")));
    }
    facts.push((
        "started",
        crate::units::fmt_start_utc(rec.started_at_unix_ns),
    ));
    let duration = if rec.duration_ns > 0 {
        crate::units::fmt_run_length(rec.duration_ns)
    } else {
        "unknown".into()
    };
    facts.push(("duration", duration));
    facts.push(("measured", measured_text(rec)));
    if let Some(q) = super::split::quantity_line(rec) {
        facts.push(("quantity", q));
    }
    facts.push((
        "load",
        match &rec.load {
            Some(load) => load.profile.clone(),
            None if rec.source.kind.is(SourceKind::Imported) => "unknown (not recorded)".into(),
            None => "none".into(),
        },
    ));
    facts.push(("system", system_text(&rec.fingerprint)));
    facts.push((
        "fingerprint",
        format!("{} (comparable part)", rec.fingerprint.comparable_hash()),
    ));
    facts
}

/// The run's state in words, with its last checkpoint or its end.
fn state_text(row: &RunRow, rec: &RunRecord) -> String {
    match row.state {
        RunState::Interrupted => format!(
            "interrupted: its process ended before finishing; it holds everything up to its last checkpoint ({})",
            fmt_unix_utc(row.saved_at_unix_ns)
        ),
        RunState::Running => format!(
            "running (last checkpoint {})",
            fmt_unix_utc(row.saved_at_unix_ns)
        ),
        RunState::Complete => format!(
            "complete (end: {})",
            num::serde_name(&rec.end_reason).replace('_', " ")
        ),
    }
}

/// Who measured the run, and from which file an import came.
fn source_text(rec: &RunRecord) -> String {
    match rec.source.kind.known() {
        Some(SourceKind::Imported) => format!(
            "imported from {} ({}), measured by {} {}",
            rec.source.file.as_deref().unwrap_or("?"),
            rec.source.format.as_deref().unwrap_or("?"),
            rec.tool.name,
            rec.tool.version
        ),
        _ => format!("measured by {} {}", rec.tool.name, rec.tool.version),
    }
}

/// Threads, policy, priority, interval, timer and clock.
fn measured_text(rec: &RunRecord) -> String {
    let o = &rec.options;
    format!(
        "{} thread(s), policy {} priority {}, interval {}, timer {}, clock {}",
        rec.threads.len(),
        o.policy,
        known(rec, Unknowable::Priority, || o.priority.to_string()),
        known(rec, Unknowable::Interval, || fmt_duration(o.interval_ns)),
        o.timer,
        o.clock
    )
}

/// The fingerprint's values `system_text` shows.
const SYSTEM_KEYS: [&str; 6] = [
    "kernel_release",
    "machine",
    "preemption_model",
    "preempt_dynamic_mode",
    "cpus_online",
    "cpu_model",
];

/// Kernel, machine, preemption model, CPUs.
fn system_text(f: &crate::record::Fingerprint) -> String {
    let or = |v: &str, none: &'static str| {
        if v.is_empty() {
            none.to_string()
        } else {
            v.to_string()
        }
    };
    format!(
        "kernel {} ({}), preemption {}{}, {}",
        or(&f.kernel_release, "unknown"),
        or(&f.machine, "?"),
        f.preemption_model,
        f.preempt_dynamic_mode
            .as_deref()
            .map(|m| format!(" (mode {m})"))
            .unwrap_or_default(),
        cpus_text(f),
    )
}

/// "4 x Cortex-A72"; CPUs a source did not record read unknown, not 0.
fn cpus_text(f: &crate::record::Fingerprint) -> String {
    match (f.cpus_online, f.cpu_model.is_empty()) {
        (0, true) => "CPUs unknown".into(),
        (0, false) => format!("unknown number x {}", f.cpu_model),
        (n, true) => format!("{n} x unknown CPU"),
        (n, false) => format!("{n} x {}", f.cpu_model),
    }
}

/// The fingerprint's other non-empty values, as `key = value`.
fn other_fingerprint(f: &crate::record::Fingerprint) -> Vec<(String, String)> {
    f.flatten()
        .into_iter()
        .filter(|(k, v)| !SYSTEM_KEYS.contains(&k.as_str()) && !v.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Named;

    fn row(id: i64) -> RunRow {
        RunRow {
            id,
            uuid: "0123456789abcdef0123456789abcdef".into(),
            state: RunState::Complete,
            source_kind: SourceKind::Measured.into(),
            source_format: None,
            label: Some("a label much longer than the column allows for it".into()),
            started_at_unix_ns: 1_700_000_000_000_000_000,
            duration_ns: 60_000_000_000,
            kernel_release: "6.1.0-rt".into(),
            preemption_model: "rt".into(),
            threads: 4,
            samples: 240_000,
            p9999_ns: Some(12_345),
            max_ns: Some(45_600),
            fingerprint_hash: "0".into(),
            saved_at_unix_ns: 0,
            host: "testhost".into(),
            head: Default::default(),
        }
    }

    #[test]
    fn list_has_the_columns_and_units() {
        let mut r2 = row(12);
        r2.state = RunState::Interrupted;
        r2.label = None;
        r2.max_ns = None;
        let wakeup = Some(Quantity::WakeupLatency);
        let text = render_list(&[(row(3), wakeup), (r2.clone(), wakeup)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            3,
            "no note when every run is a wake-up latency"
        );
        for col in [
            "id",
            "start (UTC)",
            "label",
            "kernel",
            "preemption",
            "duration",
            "threads",
            "measures",
            "p99.99 (us)",
            "max (us)",
        ] {
            assert!(lines[0].contains(col), "{col}");
        }
        assert!(lines[1].contains("wake-up latency"), "{text}");
        // A run without a maximum reads unknown, never 0 or a dash.
        assert!(lines[2].trim_end().ends_with("unknown"), "{text}");
        assert!(lines[1].contains("2023-11-14 22:13:20"));
        assert!(lines[1].contains("12.3") && lines[1].contains("45.6"));
        assert!(lines[1].contains("1m00s"));
        assert!(lines[1].contains('…'));
        assert!(lines[2].contains("interrupted"));
        assert!(lines[2].trim_start().starts_with("12"));
        assert!(!lines[0].contains("host"), "one host: no host column");
        r2.host = "board-b".into();
        let text = render_list(&[(row(3), wakeup), (r2, wakeup)]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("host"), "{text}");
        assert!(
            lines[1].contains("testhost") && lines[2].contains("board-b"),
            "{text}"
        );
    }

    /// Every word of the state and origin columns is one its filter
    /// (`--state`, `--origin`, `state=`, `origin=`) takes, and names the
    /// runs it was shown for: an imported run is complete, and imported.
    #[test]
    fn the_state_and_origin_words_shown_are_the_filters_words() {
        let kinds: [Named<SourceKind>; 3] = [
            SourceKind::Measured.into(),
            SourceKind::Imported.into(),
            crate::store::characterizations::SOURCE_KIND
                .to_string()
                .into(),
        ];
        let mut rows = Vec::new();
        for (i, state) in RunState::ALL.into_iter().enumerate() {
            for (j, kind) in kinds.iter().enumerate() {
                let mut r = row((i * 3 + j) as i64 + 1);
                r.state = state;
                r.source_kind = kind.clone();
                rows.push((r, Some(Quantity::WakeupLatency)));
            }
        }
        let text = render_list(&rows);
        let lines: Vec<&str> = text.lines().collect();
        let header: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(&header[..3], ["id", "state", "origin"], "{text}");
        for ((r, _), line) in rows.iter().zip(&lines[1..]) {
            let cells: Vec<&str> = line.split_whitespace().collect();
            let state = RunState::parse_named(cells[1]).unwrap();
            let origin = Origin::parse_named(cells[2]).unwrap();
            assert_eq!(state, r.state, "{line}");
            assert_eq!(Some(origin), Origin::of(&r.source_kind), "{line}");
            let f = crate::store::RunFilter {
                state: Some(state),
                origin: Some(origin),
                ..Default::default()
            };
            assert!(f.keeps(r), "{line}");
        }
        // The other filter's words are refused with the filter to use.
        let e = RunState::parse_named("imported").unwrap_err();
        assert!(e.contains("origin") && e.contains("imported"), "{e}");
        let e = Origin::parse_named("complete").unwrap_err();
        assert!(e.contains("state") && e.contains("complete"), "{e}");
        assert_eq!(
            RunState::parse_named("gone").unwrap_err(),
            "unknown state 'gone': use running, complete or interrupted"
        );
        assert_eq!(
            Origin::parse_named("gone").unwrap_err(),
            "unknown origin 'gone': use measured, imported or characterization"
        );
    }

    #[test]
    fn list_says_what_each_run_measures_and_marks_other_quantities() {
        let mut oslat = row(4);
        oslat.source_kind = SourceKind::Imported.into();
        oslat.kernel_release = String::new();
        oslat.duration_ns = 0;
        // What the store reads from the record's head: its source did not
        // record the duration.
        oslat.head.duration_known = false;
        let mut osnoise = row(5);
        osnoise.source_kind = SourceKind::Imported.into();
        let text = render_list(&[
            (row(3), Some(Quantity::WakeupLatency)),
            (oslat, Some(Quantity::BusyLoopGap)),
            (osnoise, Some(Quantity::OsNoise)),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        // The wake-up latency's figures are unmarked; the others' say
        // what they are and carry the mark the note explains.
        assert!(
            lines[1].contains("wake-up latency") && !lines[1].contains('*'),
            "{text}"
        );
        assert!(lines[2].contains("busy-loop gap (oslat)"), "{text}");
        assert!(lines[3].contains("OS noise (osnoise)"), "{text}");
        for l in &lines[2..4] {
            assert!(l.contains("12.3*") && l.contains("45.6*"), "{text}");
        }
        assert!(
            lines[4].starts_with("* not a wake-up latency")
                && lines[4].contains("no wake-up deadline or class"),
            "{text}"
        );
        // Unknown kernel and duration read unknown.
        assert!(
            lines[2].matches("unknown").count() >= 2,
            "kernel, preemption or duration: {text}"
        );
        // A characterization is no latency run: no quantity, no figure.
        let mut ch = row(6);
        ch.source_kind = crate::store::characterizations::SOURCE_KIND
            .to_string()
            .into();
        let text = render_list(&[(ch, None)]);
        assert!(!text.contains("wake-up latency"), "{text}");
    }

    #[test]
    fn show_names_state_source_and_system() {
        let rec = crate::record::synthetic(&[vec![1000, 2000]]);
        let mut r = row(3);
        r.state = RunState::Interrupted;
        let text = render_show(3, &r, &rec, Rows::Fit);
        assert!(text.contains("interrupted: its process ended"), "{text}");
        assert!(text.contains("kernel 6.1.0-test"));
        assert!(text.contains("p99.99"));
    }
}
