//! A study's numbers: for every cell, its finished runs read from the
//! store and merged (all repetitions, all threads) into one histogram,
//! with the spread between repetitions, so that a reader sees whether a
//! difference between cells is larger than the noise. Reads the store;
//! the arithmetic is pure.

use super::StudyError;
use super::matrix::Cell;
use super::state::{SlotState, SlotStatus, Study};
use crate::histogram::{Histogram, HistogramError};
use crate::record::RunRecord;
use crate::store::Store;

/// The merged numbers of one cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Merged {
    pub samples: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<f64>,
    pub p99_ns: Option<u64>,
    pub p9999_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub missed_periods: u64,
}

/// One cell, its runs and what they add up to.
#[derive(Clone, Debug)]
pub struct CellResult {
    pub cell: Cell,
    /// Finished runs: `(repetition, run id, record)`, by repetition.
    pub runs: Vec<(u32, i64, RunRecord)>,
    /// Repetitions the study asks for.
    pub planned: usize,
    /// Tries cut short and redone (or still to redo).
    pub interrupted: usize,
    /// Repetitions waiting for another kernel (the kernel it needs).
    pub waiting: Option<String>,
    /// The last failure of a repetition not yet done, if any.
    pub failure: Option<String>,
    pub merged: Merged,
    /// All runs' samples together.
    pub histogram: Option<Histogram>,
}

impl CellResult {
    /// `(lowest, highest)` of one number across the repetitions.
    pub fn spread(&self, f: impl Fn(&RunRecord) -> Option<u64>) -> Option<(u64, u64)> {
        let v: Vec<u64> = self.runs.iter().filter_map(|(_, _, r)| f(r)).collect();
        Some((*v.iter().min()?, *v.iter().max()?))
    }

    /// The metric a gate or a column names.
    pub fn metric(&self, m: Metric) -> Option<f64> {
        let s = &self.merged;
        let ns = |v: Option<u64>| v.map(|x| x as f64);
        match m {
            Metric::Max => ns(s.max_ns),
            Metric::P99 => ns(s.p99_ns),
            Metric::P9999 => ns(s.p9999_ns),
            Metric::Avg => s.avg_ns,
            Metric::Missed => (s.samples > 0).then_some(s.missed_periods as f64),
        }
    }

    /// The finished run with the highest maximum (the cell's worst case).
    pub fn worst(&self) -> Option<&RunRecord> {
        self.runs
            .iter()
            .map(|(_, _, r)| r)
            .max_by_key(|r| r.overall.max_ns.unwrap_or(0))
    }
}

/// The numbers a study compares cells on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    P99,
    P9999,
    Max,
    Avg,
    Missed,
}

impl Metric {
    pub fn parse(s: &str) -> Option<Metric> {
        Some(match s {
            "p99" => Metric::P99,
            "p99.99" | "p9999" => Metric::P9999,
            "max" => Metric::Max,
            "avg" | "mean" => Metric::Avg,
            "missed" => Metric::Missed,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::P99 => "p99",
            Metric::P9999 => "p99.99",
            Metric::Max => "max",
            Metric::Avg => "avg",
            Metric::Missed => "missed",
        }
    }

    /// Whether values are times (ns) rather than counts.
    pub fn is_time(self) -> bool {
        !matches!(self, Metric::Missed)
    }
}

/// Merge finished runs into one cell's numbers.
pub fn merge(runs: &[&RunRecord]) -> Result<(Merged, Option<Histogram>), HistogramError> {
    let mut h: Option<Histogram> = None;
    let mut m = Merged::default();
    let mut weighted = 0.0;
    for r in runs {
        let rh = r.overall_histogram()?;
        match h.as_mut() {
            Some(acc) => acc.merge(&rh),
            None => h = Some(rh),
        }
        let s = &r.overall;
        m.samples += s.samples;
        m.missed_periods += s.missed_periods;
        m.min_ns = min_some(m.min_ns, s.min_ns);
        m.max_ns = m.max_ns.max(s.max_ns);
        if let Some(a) = s.avg_ns {
            weighted += a * s.samples as f64;
        }
    }
    if m.samples > 0 {
        m.avg_ns = Some(weighted / m.samples as f64);
    }
    if let Some(h) = &h {
        // A quantile from a bin may pass the exact extremes (p99.99
        // 540.2 beside max 540.0): clamped to them, as a run's are.
        let clamp = |v: Option<u64>| match (v, m.min_ns, m.max_ns) {
            (Some(v), Some(lo), Some(hi)) if lo <= hi => Some(v.clamp(lo, hi)),
            (v, _, _) => v,
        };
        m.p99_ns = clamp(h.quantile(0.99));
        m.p9999_ns = clamp(h.quantile(0.9999));
    }
    Ok((m, h))
}

fn min_some(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl CellResult {
    /// `cell`, its slots and its finished runs `(repetition, run id,
    /// record)`, merged.
    pub fn of(
        cell: &Cell,
        slots: &[&SlotStatus],
        mut runs: Vec<(u32, i64, RunRecord)>,
    ) -> Result<CellResult, HistogramError> {
        runs.sort_by_key(|r| r.0);
        let records: Vec<&RunRecord> = runs.iter().map(|r| &r.2).collect();
        let (merged, histogram) = merge(&records)?;
        Ok(CellResult {
            cell: cell.clone(),
            planned: slots.len(),
            interrupted: slots.iter().map(|s| s.interrupted()).sum(),
            waiting: slots.iter().find_map(|s| match &s.state {
                SlotState::Waiting { boot, .. } => Some(boot.clone()),
                _ => None,
            }),
            failure: slots
                .iter()
                .filter(|s| !matches!(s.state, SlotState::Done { .. }))
                .find_map(|s| match &s.state {
                    SlotState::CannotBoot { boot, why } => {
                        Some(format!("{boot} could not be booted: {why}"))
                    }
                    _ => s.failure().map(str::to_string),
                }),
            runs,
            merged,
            histogram,
        })
    }
}

/// Every cell of `study` with its finished runs, in matrix order.
pub fn collect(store: &Store, study: &Study) -> Result<Vec<CellResult>, StudyError> {
    let mut out = Vec::with_capacity(study.cells.len());
    for cell in &study.cells {
        let mine: Vec<&SlotStatus> = study
            .slots
            .iter()
            .filter(|s| s.slot.cell == cell.index)
            .collect();
        let mut runs = Vec::new();
        for s in &mine {
            if let SlotState::Done { run_uuid } = &s.state
                && let Some(id) = store.find_uuid(run_uuid)?
            {
                runs.push((s.slot.repetition, id, store.load(id)?));
            }
        }
        out.push(CellResult::of(cell, &mine, runs)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::synthetic;

    #[test]
    fn repetitions_merge_into_one_cell() {
        let a = synthetic(&[vec![10_000, 20_000, 30_000]]);
        let b = synthetic(&[vec![5_000, 90_000]]);
        let (m, h) = merge(&[&a, &b]).unwrap();
        assert_eq!(m.samples, a.overall.samples + b.overall.samples);
        assert_eq!(m.max_ns, Some(90_000.max(a.overall.max_ns.unwrap())));
        assert_eq!(m.min_ns, a.overall.min_ns.min(b.overall.min_ns));
        assert_eq!(h.unwrap().total(), m.samples);
        let (none, h) = merge(&[]).unwrap();
        assert_eq!((none, h.is_none()), (Merged::default(), true));
    }

    /// A bin's middle above the exact maximum is never a quantile.
    #[test]
    fn merged_quantiles_stay_within_the_exact_extremes() {
        // 539 700 ns lies low in its bin [539 648, 540 159].
        let a = synthetic(&[vec![539_700]]);
        let b = synthetic(&[vec![5_000]]);
        let (m, h) = merge(&[&a, &b]).unwrap();
        assert!(h.unwrap().quantile(0.9999).unwrap() > 539_700);
        assert_eq!(m.max_ns, Some(539_700));
        assert_eq!(m.p9999_ns, Some(539_700));
        assert_eq!(m.p99_ns, Some(539_700));
    }
}
