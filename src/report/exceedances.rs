//! The record's exceedance times (every wake-up above a threshold, with
//! its cycle: `ThreadRecord::exceedances`) as the tail analysis reads
//! them: one ascending series of wake-up numbers above one threshold.
//! Reads the record only; never estimates anything itself.

use crate::record::ThreadRecord;
use crate::tail::ExceedanceTimes;
use crate::text::num;

/// The exceedance times of `threads` (their histograms merged, as the
/// tail merges them), or `None` with a note saying why.
///
/// Each thread kept every wake-up above its own threshold; above the
/// largest of those thresholds every thread's table is complete, so that
/// is the common one. Threads of one run share their periods' clock (one
/// start, one interval): cycle `c` of thread `i` of `n` becomes wake-up
/// number `c·n + i`, the threads' wake-ups interleaved in time. A stall
/// that makes several threads late in the same period thus counts as one
/// cluster, as it is one cause.
pub fn exceedance_times(
    threads: &[&ThreadRecord],
    notes: &mut Vec<String>,
) -> Option<ExceedanceTimes> {
    let n = threads.len() as u64;
    let mut tables = Vec::with_capacity(threads.len());
    for t in threads {
        match &t.exceedances {
            Some(e) if e.cycles.len() == e.latencies_ns.len() => tables.push(e),
            Some(_) => {
                notes.push(format!(
                    "thread {}'s exceedance table is damaged (cycles and latencies differ in \
                     number): no exceedance times",
                    t.index
                ));
                return None;
            }
            None => {
                notes.push(
                    "no exceedance times: the source keeps no order of its samples (only \
                     rtscope's own runs record every wake-up above a threshold)"
                        .into(),
                );
                return None;
            }
        }
    }
    if n == 0
        || threads
            .iter()
            .any(|t| t.interval_ns != threads[0].interval_ns)
    {
        return None;
    }
    let threshold_ns = tables.iter().map(|e| e.threshold_ns).max()?;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for (i, e) in tables.iter().enumerate() {
        for (&c, &l) in e.cycles.iter().zip(&e.latencies_ns) {
            if l > threshold_ns {
                pairs.push((c.saturating_mul(n).saturating_add(i as u64), l));
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup_by_key(|p| p.0);
    let (wakeups, latencies_ns): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
    notes.push(format!(
        "{} exceedance times above {} (every wake-up above it, with its cycle)",
        wakeups.len(),
        num::latency(threshold_ns)
    ));
    Some(ExceedanceTimes {
        threshold_ns,
        wakeups,
        latencies_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{ExceedanceRecord, synthetic};

    fn thread(i: u32, threshold_ns: u64, items: &[(u64, u64)]) -> ThreadRecord {
        let mut t = synthetic(&[vec![5_000], vec![5_000]])
            .threads
            .remove(i as usize);
        t.exceedances = Some(ExceedanceRecord {
            threshold_ns,
            cycles: items.iter().map(|&(c, _)| c).collect(),
            latencies_ns: items.iter().map(|&(_, l)| l).collect(),
        });
        t
    }

    #[test]
    fn threads_are_interleaved_above_the_highest_threshold() {
        let a = thread(0, 100, &[(3, 150), (7, 400), (9, 120)]);
        let b = thread(1, 200, &[(3, 300), (8, 250)]);
        let mut notes = Vec::new();
        let e = exceedance_times(&[&a, &b], &mut notes).unwrap();
        assert_eq!(e.threshold_ns, 200);
        // a: cycle 7 (400) -> 14; b: cycle 3 -> 7, cycle 8 -> 17.
        assert_eq!(e.wakeups, vec![7, 14, 17]);
        assert_eq!(e.latencies_ns, vec![300, 400, 250]);
        assert!(
            notes[0].starts_with("3 exceedance times above"),
            "{notes:?}"
        );
        // One thread alone: its cycles.
        let e = exceedance_times(&[&a], &mut notes).unwrap();
        assert_eq!((e.threshold_ns, e.wakeups), (100, vec![3, 7, 9]));
    }

    #[test]
    fn a_thread_without_a_table_gives_none_and_says_why() {
        let a = thread(0, 100, &[(3, 150)]);
        let b = synthetic(&[vec![5_000], vec![5_000]]).threads.remove(1);
        let mut notes = Vec::new();
        assert!(exceedance_times(&[&a, &b], &mut notes).is_none());
        assert!(notes[0].contains("no exceedance times"), "{notes:?}");
    }
}
