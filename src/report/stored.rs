//! What a report of stored runs reads from the store beside the runs'
//! records: the long-term view of every run made by `rtscope monitor`
//! (the windows of every host of that monitor). Shared by `rtscope
//! report` and `rtscope serve`, so both show the same page. Only reads.

use super::NamedRun;
use super::plot::Figure;
use crate::store::Store;

/// For each run of `runs` made by `rtscope monitor`, `(its index, the
/// monitor's long-term figure, its caption)`. Runs from files, or windows
/// that cannot be read, simply have none.
pub fn monitor_views(store: &Store, runs: &[NamedRun]) -> Vec<(usize, Figure, String)> {
    let mut out = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        let Ok(Some((monitor, _, _))) = store.monitor_of_run(&r.record.run_uuid) else {
            continue;
        };
        let Ok(rows) = store.monitor_windows(&monitor, None, false) else {
            continue;
        };
        let title = format!("monitor {monitor}: largest latency per window");
        if let Some(f) = super::monitor::long_term(&rows, &title) {
            out.push((i, f, super::monitor::CAPTION.to_string()));
        }
    }
    out
}
