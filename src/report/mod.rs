//! Everything that turns run records into something to read: the
//! terminal summary, cyclictest's histogram file, figures (SVG, PNG), the
//! HTML report with its verdict, and the comparison of two runs. Reads
//! records only; never measures, never touches the system.

pub mod compare;
pub mod csv;
pub mod exceedances;
pub mod fairness;
pub mod heat_svg;
pub mod histfile;
pub mod html;
pub mod monitor;
pub mod noise;
pub mod page;
pub mod plot;
pub mod runs_text;
pub mod split;
pub mod stored;
pub mod summary;
pub mod tail;
pub mod verdict;
pub mod why;
pub mod why_svg;

use crate::record::{RunRecord, Unknowable};

/// `shown()` when `run`'s source recorded `what`, else "unknown" (an
/// import's placeholder 0 or false is never shown as a value).
pub fn known(run: &RunRecord, what: Unknowable, shown: impl FnOnce() -> String) -> String {
    if run.knows(what) {
        shown()
    } else {
        "unknown".into()
    }
}

/// A run as a report shows it: the record, the reference it was loaded
/// from, and a short name for legends and headings.
#[derive(Clone, Debug)]
pub struct NamedRun {
    pub name: String,
    pub reference: String,
    pub record: RunRecord,
}

/// Name runs for people: the label, else the file's stem (or the id),
/// made unique with `#2`, `#3`.
pub fn name_runs(loaded: Vec<(String, RunRecord)>) -> Vec<NamedRun> {
    let mut out: Vec<NamedRun> = Vec::new();
    for (reference, record) in loaded {
        let base = record
            .label
            .clone()
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| {
                let p = std::path::Path::new(&reference);
                match (p.extension(), p.file_stem()) {
                    (Some(_), Some(stem)) => stem.to_string_lossy().into_owned(),
                    _ => reference.clone(),
                }
            });
        let mut name = base.clone();
        let mut k = 2;
        while out.iter().any(|r| r.name == name) {
            name = format!("{base} #{k}");
            k += 1;
        }
        out.push(NamedRun {
            name,
            reference,
            record,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    #[test]
    fn runs_are_named_by_label_then_file_and_made_unique() {
        let mut labelled = synthetic(&[vec![1]]);
        labelled.label = Some("PREEMPT_RT".into());
        let runs = name_runs(vec![
            ("results/a.json".into(), synthetic(&[vec![1]])),
            ("b.json".into(), labelled.clone()),
            ("c.json".into(), labelled),
            ("42".into(), synthetic(&[vec![1]])),
        ]);
        let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "PREEMPT_RT", "PREEMPT_RT #2", "42"]);
    }
}
