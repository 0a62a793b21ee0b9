//! Is a comparison of two runs fair? Two runs compare fairly only where
//! their systems and set-ups agree, except for what the user chose to
//! vary and said so in a label or a tag. This module lists every
//! difference (fingerprint, measuring options, load, source) and decides
//! which ones are named; the others become warnings.
//!
//! A difference is named when a label, tag key or tag value of either run
//! mentions the field (its name or a usual word for it: `preemption`,
//! `governor`, `isolcpus`…) or one of the two values (`rt`, `6.1.0-rt`).
//! For the kernel command line, each differing word is checked on its
//! own, so `--tag isolcpus=1` names `isolcpus=1` but not `nohz_full=1`.

use crate::record::{RunRecord, Unknowable};
use crate::text::num;
use std::collections::BTreeSet;

/// One way in which two runs differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// Dotted field name (`preemption_model`, `extra.governor`,
    /// `options.interval`, `load.profile`).
    pub field: String,
    pub a: String,
    pub b: String,
    /// The parts that differ, for list-like fields (command line words).
    pub detail: Vec<String>,
    /// True when a label or tag names this difference.
    pub named: bool,
}

impl Difference {
    /// One line for a person: `preemption_model: none vs rt`.
    pub fn describe(&self) -> String {
        let show = |v: &str| {
            if v.is_empty() {
                "(absent)".to_string()
            } else {
                crate::units::shorten(v, 60)
            }
        };
        const MAX_WORDS: usize = 8;
        if self.detail.is_empty() {
            format!("{}: {} vs {}", self.field, show(&self.a), show(&self.b))
        } else if self.detail.len() > MAX_WORDS {
            format!(
                "{}: differs in {} and {} more",
                self.field,
                self.detail[..MAX_WORDS].join(", "),
                self.detail.len() - MAX_WORDS
            )
        } else {
            format!("{}: differs in {}", self.field, self.detail.join(", "))
        }
    }
}

/// Words that name the kernel's preemption, in labels and tags.
const PREEMPTION_WORDS: &[&str] = &[
    "preempt",
    "preemption",
    "rt",
    "preempt_rt",
    "vanilla",
    "kernel",
];

/// Usual words for fields, beyond their own name.
const ALIASES: &[(&str, &[&str])] = &[
    ("preemption_model", PREEMPTION_WORDS),
    ("preempt_dynamic_mode", PREEMPTION_WORDS),
    (
        "kernel_release",
        &["kernel", "release", "rt", "preempt_rt", "vanilla"],
    ),
    (
        "kernel_version",
        &["kernel", "rt", "preempt_rt", "vanilla", "preempt"],
    ),
    (
        "cpu_model",
        &["cpu", "hardware", "board", "machine", "host"],
    ),
    (
        "cpus_online",
        &["cpus", "smt", "hotplug", "hardware", "board"],
    ),
    ("machine", &["arch", "hardware", "board"]),
    ("cmdline", &["cmdline", "boot", "bootargs"]),
    ("options.interval", &["interval", "period"]),
    ("options.distance", &["distance"]),
    ("options.policy", &["policy", "sched", "scheduler"]),
    ("options.priority", &["priority", "prio"]),
    ("options.timer", &["timer", "sleep"]),
    ("options.clock", &["clock"]),
    (
        "options.cpus",
        &["cpus", "affinity", "isolation", "isolated"],
    ),
    ("options.threads", &["threads", "isolation", "isolated"]),
    (
        "tuning",
        &[
            "tuning",
            "tune",
            "tuned",
            "isolation",
            "isolated",
            "isolate",
            "isolcpus",
        ],
    ),
    ("options.omission_correction", &["omission"]),
    ("options.mlockall", &["mlock", "mlockall"]),
    (
        "options.cpu_dma_latency",
        &["dma", "cstate", "cstates", "idle"],
    ),
    ("load.profile", &["load", "stress"]),
    ("source.format", &["source", "import", "imported", "tool"]),
    ("fingerprint", &["fingerprint", "import", "imported"]),
];

/// Words of a text: lower case, split on anything not a letter or digit.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// True when the word sequence `needle` occurs in `hay`.
fn contains_seq(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// What the user said varies between two runs, as word lists.
struct Mentions {
    /// Where a field may be named: both labels, and the keys of tags
    /// both runs carry with different values.
    fields: Vec<Vec<String>>,
    /// Where a value may be named: both labels, and the values (alone and
    /// as `key value`) of tags that differ between the runs.
    values: Vec<Vec<String>>,
}

/// A tag both runs carry with the same value varies nothing and names
/// nothing. A tag key names fields when both runs carry it, or when the
/// tag's value names one of the values that differ (`kernel=rt` on the
/// PREEMPT_RT run alone is evidently about the kernel); `kernel=none` on
/// one run alone names nothing.
fn mentions(a: &RunRecord, b: &RunRecord, differing: &[&str]) -> Mentions {
    let mut m = Mentions {
        fields: Vec::new(),
        values: Vec::new(),
    };
    for r in [a, b] {
        if let Some(l) = &r.label {
            m.fields.push(words(l));
            m.values.push(words(l));
        }
    }
    let keys: BTreeSet<&String> = a.tags.keys().chain(b.tags.keys()).collect();
    let mut one_sided = Vec::new();
    for k in keys {
        let (va, vb) = (a.tags.get(k), b.tags.get(k));
        if va == vb {
            continue;
        }
        if va.is_some() && vb.is_some() {
            m.fields.push(words(k));
        } else {
            one_sided.push((k, va.or(vb).expect("one side has it")));
        }
        for v in [va, vb].into_iter().flatten() {
            m.values.push(words(v));
            m.values.push(words(&format!("{k} {v}")));
        }
    }
    for (k, v) in one_sided {
        let alone = Mentions {
            fields: vec![],
            values: vec![words(v)],
        };
        if differing.iter().any(|d| value_mentioned(&alone, d)) {
            m.fields.push(words(k));
        }
    }
    m
}

fn mentioned(texts: &[Vec<String>], phrase: &str) -> bool {
    let needle = words(phrase);
    texts.iter().any(|t| contains_seq(t, &needle))
}

/// Words too common to name anything on their own.
const STOP: &[&str] = &["none", "true", "false", "unknown", "with", "without"];

/// A value is named when a label or tag holds it whole, or holds one of
/// its distinctive words (four letters or more: `cyclictest` names
/// `cyclictest-histfile`). Plain numbers such as `1` never name anything.
fn value_mentioned(m: &Mentions, value: &str) -> bool {
    let texts = &m.values;
    if !value.chars().any(|c| c.is_alphabetic()) || STOP.contains(&value.to_lowercase().as_str()) {
        return false;
    }
    if mentioned(texts, value) {
        return true;
    }
    words(value).iter().any(|w| {
        w.len() >= 4
            && w.chars().all(|c| c.is_alphabetic())
            && !STOP.contains(&w.as_str())
            && texts.iter().any(|t| t.contains(w))
    })
}

fn field_named(m: &Mentions, field: &str) -> bool {
    let texts = &m.fields;
    let last = field.rsplit('.').next().unwrap_or(field);
    let trimmed = last
        .trim_end_matches("_ns")
        .trim_end_matches("_us")
        .to_string();
    if mentioned(texts, last) || mentioned(texts, &trimmed) {
        return true;
    }
    ALIASES
        .iter()
        .filter(|(f, _)| *f == field || field.starts_with(&format!("{f}.")))
        .flat_map(|(_, words)| words.iter())
        .any(|w| mentioned(texts, w))
}

/// Words of a command line that are in one and not the other.
fn cmdline_delta(a: &str, b: &str) -> Vec<String> {
    let sa: BTreeSet<&str> = a.split_whitespace().collect();
    let sb: BTreeSet<&str> = b.split_whitespace().collect();
    sa.symmetric_difference(&sb)
        .map(|s| s.to_string())
        .collect()
}

fn word_named(m: &Mentions, word: &str) -> bool {
    let key = word.split('=').next().unwrap_or(word);
    mentioned(&m.fields, key) || value_mentioned(m, word)
}

/// The measuring set-up, load and source fields compared besides the
/// fingerprint, as people read them (times with their unit).
/// What the run's source did not record is empty (absent).
fn setup_fields(r: &RunRecord) -> Vec<(String, String)> {
    let o = &r.options;
    let opt = |v: Option<String>| v.unwrap_or_default();
    let known = |what: Unknowable, v: String| if r.knows(what) { v } else { String::new() };
    vec![
        (
            "options.interval".into(),
            known(Unknowable::Interval, num::period(o.interval_ns)),
        ),
        ("options.distance".into(), num::period(o.distance_ns)),
        (
            "options.policy".into(),
            known(Unknowable::Policy, o.policy.to_string()),
        ),
        (
            "options.priority".into(),
            known(Unknowable::Priority, o.priority.to_string()),
        ),
        ("options.timer".into(), o.timer.to_string()),
        ("options.clock".into(), o.clock.to_string()),
        ("options.threads".into(), r.threads.len().to_string()),
        (
            "options.cpus".into(),
            o.cpus
                .iter()
                .map(|c| c.map(|c| c.to_string()).unwrap_or_else(|| "-".into()))
                .collect::<Vec<_>>()
                .join(","),
        ),
        (
            "options.omission_correction".into(),
            o.omission_correction.to_string(),
        ),
        (
            "options.mlockall".into(),
            known(Unknowable::Mlockall, o.mlockall.to_string()),
        ),
        (
            "options.cpu_dma_latency".into(),
            opt(o.dma_latency_us.map(|v| format!("{v} µs"))),
        ),
        (
            "load.profile".into(),
            r.load
                .as_ref()
                .map(|l| l.profile.clone())
                .unwrap_or_else(|| "none".into()),
        ),
        (
            "source.format".into(),
            r.source
                .format
                .clone()
                .unwrap_or_else(|| r.source.kind.to_string()),
        ),
    ]
}

/// Every difference between `a` and `b` that bears on comparing them,
/// each marked named or not.
/// A run whose source recorded nothing of the system (imports, mostly).
fn no_fingerprint(r: &RunRecord) -> bool {
    let f = &r.fingerprint;
    f.kernel_release.is_empty() && f.kernel_version.is_empty() && f.cpu_model.is_empty()
}

pub fn differences(a: &RunRecord, b: &RunRecord) -> Vec<Difference> {
    // Against a run without a fingerprint, every field differs: say it
    // once.
    let fp = match (no_fingerprint(a), no_fingerprint(b)) {
        (false, false) => a.fingerprint.differences(&b.fingerprint),
        (true, true) => vec![],
        (na, _) => {
            let (x, y) = if na {
                ("absent", "recorded")
            } else {
                ("recorded", "absent")
            };
            vec![("fingerprint".to_string(), x.to_string(), y.to_string())]
        }
    };
    let (sa, sb) = (setup_fields(a), setup_fields(b));
    let setup: Vec<(String, String, String)> = sa
        .into_iter()
        .zip(sb)
        .filter(|((_, va), (_, vb))| va != vb)
        .map(|((f, va), (_, vb))| (f, va, vb))
        .collect();
    let differing: Vec<&str> = fp
        .iter()
        .chain(setup.iter())
        .flat_map(|(_, va, vb)| [va.as_str(), vb.as_str()])
        .collect();
    let m = mentions(a, b, &differing);
    let mut out = Vec::new();
    for (field, va, vb) in fp.iter().cloned() {
        let mut d = Difference {
            field: field.clone(),
            a: va.clone(),
            b: vb.clone(),
            detail: vec![],
            named: false,
        };
        if field == "cmdline" {
            let delta = cmdline_delta(&va, &vb);
            let unnamed: Vec<String> = delta
                .iter()
                .filter(|w| !word_named(&m, w))
                .cloned()
                .collect();
            d.named = field_named(&m, &field) || unnamed.is_empty();
            d.detail = if d.named { delta } else { unnamed };
        } else {
            d.named =
                field_named(&m, &field) || value_mentioned(&m, &va) || value_mentioned(&m, &vb);
        }
        out.push(d);
    }
    for (field, va, vb) in setup {
        let named = field_named(&m, &field) || value_mentioned(&m, &va) || value_mentioned(&m, &vb);
        out.push(Difference {
            field,
            a: va,
            b: vb,
            detail: vec![],
            named,
        });
    }
    out
}

/// The differences no label or tag names: what makes the comparison
/// unfair unless the user meant it.
pub fn unnamed(a: &RunRecord, b: &RunRecord) -> Vec<Difference> {
    differences(a, b).into_iter().filter(|d| !d.named).collect()
}

/// One warning line for a pair of runs, or `None` when they compare
/// fairly.
pub fn warning(name_a: &str, a: &RunRecord, name_b: &str, b: &RunRecord) -> Option<String> {
    let diffs = unnamed(a, b);
    if diffs.is_empty() {
        return None;
    }
    // A field one run did not record (an import's fingerprint, options
    // its source does not say) is one name in a list per run, not a line
    // of "(absent) vs X" each.
    let absent_in = |side: &dyn Fn(&Difference) -> &str| -> Vec<String> {
        diffs
            .iter()
            .filter(|d| d.detail.is_empty() && side(d).is_empty())
            .map(|d| d.field.clone())
            .collect()
    };
    let not_in_a = absent_in(&|d| &d.a);
    let not_in_b = absent_in(&|d| &d.b);
    let mut list: Vec<String> = diffs
        .iter()
        .filter(|d| !d.detail.is_empty() || (!d.a.is_empty() && !d.b.is_empty()))
        .map(Difference::describe)
        .collect();
    for (name, fields) in [(name_a, not_in_a), (name_b, not_in_b)] {
        if !fields.is_empty() {
            list.push(format!("not recorded by {name}: {}", fields.join(", ")));
        }
    }
    Some(format!(
        "{name_a} and {name_b} differ in what no label or tag names: {}. Their difference in latency may come from these too; if one was meant, name it (label or --tag KEY=VALUE).",
        list.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    fn pair() -> (RunRecord, RunRecord) {
        let a = synthetic(&[vec![1000]]);
        (a.clone(), a)
    }

    #[test]
    fn a_label_about_isolation_names_the_tuning_and_thread_count() {
        let (a, mut b) = pair();
        b.fingerprint.tuning = Some(crate::record::FingerprintTuning {
            mode: "run".into(),
            command: vec![],
            isolated_cpus: "1".into(),
            housekeeping_cpus: "0".into(),
            settings: vec!["cpuset".into()],
        });
        assert!(
            !unnamed(&a, &b).is_empty(),
            "an unnamed isolation is warned"
        );
        b.label = Some("CPU 1 isolated".into());
        assert_eq!(unnamed(&a, &b), vec![], "the label names it");
    }

    #[test]
    fn identical_runs_compare_fairly() {
        let (a, b) = pair();
        assert!(differences(&a, &b).is_empty());
        assert_eq!(warning("a", &a, "b", &b), None);
    }

    #[test]
    fn an_unnamed_kernel_change_is_warned_and_a_tag_names_it() {
        let (a, mut b) = pair();
        b.fingerprint.preemption_model = "rt".into();
        b.fingerprint.kernel_release = "6.1.0-rt5".into();
        let d = unnamed(&a, &b);
        assert_eq!(d.len(), 2, "{d:?}");
        let w = warning("a", &a, "b", &b).unwrap();
        assert!(w.contains("preemption_model: dynamic vs rt"), "{w}");
        // A tag value mentioning the new value names both fields.
        b.tags.insert("kernel".into(), "rt".into());
        assert!(unnamed(&a, &b).is_empty(), "{:?}", unnamed(&a, &b));
        // So does a label such as "PREEMPT_RT".
        b.tags.clear();
        b.label = Some("PREEMPT_RT kernel".into());
        assert!(unnamed(&a, &b).is_empty());
    }

    #[test]
    fn a_tag_on_one_run_names_values_not_fields() {
        let (mut a, mut b) = pair();
        b.fingerprint.preemption_model = "rt".into();
        // "kernel=none" on the baseline alone: the key is not a declared
        // variation, and "none" is too common a word to name a value.
        a.tags.insert("kernel".into(), "none".into());
        assert_eq!(unnamed(&a, &b).len(), 1);
        // With the key on both runs, the variation is declared.
        b.tags.insert("kernel".into(), "new".into());
        assert!(unnamed(&a, &b).is_empty());
    }

    #[test]
    fn a_tag_names_only_what_it_says() {
        let (mut a, mut b) = pair();
        a.fingerprint
            .extra
            .insert("governor".into(), "ondemand".into());
        b.fingerprint
            .extra
            .insert("governor".into(), "performance".into());
        b.options.interval_ns = 500_000;
        b.tags.insert("governor".into(), "performance".into());
        // The same tag on both runs varies nothing and names nothing.
        a.tags.insert("site".into(), "lab interval".into());
        b.tags.insert("site".into(), "lab interval".into());
        let d = unnamed(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].field, "options.interval");
        assert_eq!(d[0].describe(), "options.interval: 1 ms vs 500 µs");
        // Numbers alone never name anything: a tag "cpus=1" does not name
        // an interval of 1.
        a.tags.insert("interval".into(), "1ms".into());
        b.tags.insert("interval".into(), "500us".into());
        assert!(unnamed(&a, &b).is_empty());
    }

    #[test]
    fn command_line_words_are_named_one_by_one() {
        let (mut a, mut b) = pair();
        a.fingerprint.cmdline = "quiet ro".into();
        b.fingerprint.cmdline = "quiet ro isolcpus=1 nohz_full=1".into();
        b.tags.insert("isolcpus".into(), "1".into());
        let d = unnamed(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].detail, vec!["nohz_full=1".to_string()]);
        assert!(d[0].describe().contains("nohz_full=1"));
        assert!(!d[0].describe().contains("isolcpus"));
        b.tags.insert("nohz_full".into(), "1".into());
        assert!(unnamed(&a, &b).is_empty());
    }

    #[test]
    fn fields_one_run_did_not_record_are_listed_once_per_run() {
        // An import that knows the kernel and nothing else of the system
        // or of its options (a cyclictest JSON file without a cmdline).
        let (a, mut b) = pair();
        b.source.kind = "imported".into();
        b.source.format = Some("cyclictest-json".into());
        b.source.unknown = vec![Unknowable::Priority, Unknowable::Mlockall];
        b.fingerprint = crate::record::Fingerprint {
            kernel_release: "6.1.0-other".into(),
            preemption_model: a.fingerprint.preemption_model.clone(),
            ..Default::default()
        };
        let w = warning("A", &a, "B", &b).unwrap();
        assert!(!w.contains("(absent)"), "{w}");
        assert_eq!(w.matches("not recorded by B: ").count(), 1, "{w}");
        let listed = w.split("not recorded by B: ").nth(1).unwrap();
        assert!(
            listed.contains("options.priority")
                && listed.contains("options.mlockall")
                && listed.contains("cpu_model"),
            "{w}"
        );
        assert!(!w.contains("not recorded by A"), "{w}");
        // What both recorded and differs keeps its own "x vs y".
        assert!(w.contains("kernel_release: "), "{w}");
    }

    #[test]
    fn a_missing_fingerprint_is_one_difference() {
        let (a, mut b) = pair();
        b.fingerprint = Default::default();
        let d = unnamed(&a, &b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].describe(), "fingerprint: recorded vs absent");
        b.label = Some("imported from cyclictest".into());
        assert!(unnamed(&a, &b).is_empty());
        // Long command-line differences are cut.
        let (mut a, mut b) = pair();
        a.fingerprint.cmdline = "quiet".into();
        b.fingerprint.cmdline = (0..20).map(|i| format!("opt{i}=1 ")).collect();
        let text = unnamed(&a, &b)[0].describe();
        assert!(text.ends_with("and 13 more"), "{text}");
    }

    #[test]
    fn load_and_imports_count_as_differences() {
        let (a, mut b) = pair();
        b.load = Some(crate::record::LoadRecord {
            profile: "hell".into(),
            ..Default::default()
        });
        b.source.kind = crate::kinds::SourceKind::Imported.into();
        b.source.format = Some("cyclictest-histfile".into());
        let fields: Vec<String> = unnamed(&a, &b).into_iter().map(|d| d.field).collect();
        assert_eq!(fields, ["load.profile", "source.format"]);
        b.label = Some("cyclictest under load".into());
        assert!(unnamed(&a, &b).is_empty());
    }
}
