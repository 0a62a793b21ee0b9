//! Monitor windows in the store (`rtscope monitor`): which runs belong to
//! which monitor (and the run before each), every finished window of
//! every thread, and retention (old histograms cleared, older rows
//! deleted). Written for both backends (see `db.rs`).

use super::db::{DbError, Row};
use super::{Result, Store};
use crate::args;

/// One finished window of one thread of a monitor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowRow {
    pub monitor: String,
    pub host: String,
    pub run_uuid: String,
    pub thread: u32,
    pub cpu: Option<u32>,
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// Histogram samples (corrected missed periods included).
    pub samples: u64,
    pub wakeups: u64,
    pub missed: u64,
    pub min_ns: Option<u64>,
    pub avg_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// The window's histogram blob and its precision; `None` once
    /// retention cleared it (or when read as a summary).
    pub histogram: Option<(u32, Vec<u8>)>,
}

/// A monitor of the store on one host, as its windows say (and
/// `rtscope serve`'s `/api/monitors` gives it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MonitorRow {
    pub monitor: String,
    pub host: String,
    /// Windows kept (one a thread and window).
    pub windows: u64,
    pub first_start_unix_ns: u64,
    pub last_end_unix_ns: u64,
    /// The largest latency of any window kept.
    pub largest_ns: Option<u64>,
}

/// What retention did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Histograms deleted (theirs or their window's retention over).
    pub histograms_cleared: u64,
    pub windows_deleted: u64,
}

fn i(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn oi(v: Option<u64>) -> Option<i64> {
    v.map(i)
}

impl Store {
    /// Record that run `run_uuid` belongs to `monitor` on `host`; returns
    /// the run of the same monitor before it (the one a restart follows).
    pub fn begin_monitor_run(
        &self,
        monitor: &str,
        host: &str,
        run_uuid: &str,
        started_at_unix_ns: u64,
    ) -> Result<Option<String>> {
        let what = "recording the monitor run";
        let mut tx = self.tx(what)?;
        let previous: Option<String> = tx
            .query_opt(
                "SELECT run_uuid FROM monitor_runs WHERE monitor = ?1 AND host = ?2 \
                 ORDER BY started_at_unix_ns DESC LIMIT 1",
                &args![monitor, host],
            )
            .and_then(|r| r.map(|r| r.get(0)).transpose())
            .map_err(|e| self.err(what, e))?;
        tx.execute(
            "INSERT INTO monitor_runs (run_uuid, monitor, host, previous_run_uuid, started_at_unix_ns) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            &args![run_uuid, monitor, host, previous, i(started_at_unix_ns)],
        )
        .map_err(|e| self.err(what, e))?;
        tx.commit().map_err(|e| self.err(what, e))?;
        Ok(previous)
    }

    /// The run before `run_uuid` in its monitor, and the monitor's name
    /// and host (`None`: not a monitor run).
    pub fn monitor_of_run(
        &self,
        run_uuid: &str,
    ) -> Result<Option<(String, String, Option<String>)>> {
        self.db()
            .query_opt(
                "SELECT monitor, host, previous_run_uuid FROM monitor_runs WHERE run_uuid = ?1",
                &args![run_uuid],
            )
            .and_then(|r| r.map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).transpose())
            .map_err(|e| self.err("reading the monitor of a run", e))
    }

    /// Store finished windows, in one transaction. A window already there
    /// (same monitor, host, thread and start) is left as it is: returns
    /// how many were new.
    pub fn insert_windows(&self, rows: &[WindowRow]) -> Result<usize> {
        let what = "saving monitor windows";
        let mut tx = self.tx(what)?;
        let mut new = 0;
        for w in rows {
            let added = tx
                .execute(
                    "INSERT INTO monitor_windows (monitor, host, run_uuid, thread, cpu, \
                     start_unix_ns, end_unix_ns, samples, wakeups, missed, min_ns, avg_ns, p99_ns, \
                     max_ns) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
                     ON CONFLICT (monitor, host, thread, start_unix_ns) DO NOTHING",
                    &args![
                        w.monitor,
                        w.host,
                        w.run_uuid,
                        w.thread,
                        w.cpu,
                        i(w.start_unix_ns),
                        i(w.end_unix_ns),
                        i(w.samples),
                        i(w.wakeups),
                        i(w.missed),
                        oi(w.min_ns),
                        oi(w.avg_ns),
                        oi(w.p99_ns),
                        oi(w.max_ns),
                    ],
                )
                .map_err(|e| self.err(what, e))? as usize;
            if added > 0
                && let Some((bits, blob)) = &w.histogram
            {
                tx.execute(
                    "INSERT INTO monitor_window_histograms (monitor, host, thread, \
                     start_unix_ns, end_unix_ns, sub_bucket_bits, histogram) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
                     ON CONFLICT (monitor, host, thread, start_unix_ns) DO NOTHING",
                    &args![
                        w.monitor,
                        w.host,
                        w.thread,
                        i(w.start_unix_ns),
                        i(w.end_unix_ns),
                        *bits,
                        blob.as_slice(),
                    ],
                )
                .map_err(|e| self.err(what, e))?;
            }
            new += added;
        }
        tx.commit().map_err(|e| self.err(what, e))?;
        Ok(new)
    }

    /// Retention for `monitor` on `host` at `now_unix_ns`: clear the
    /// histograms of windows that ended more than `keep_histograms_ns`
    /// ago, delete the windows that ended more than `keep_windows_ns` ago.
    pub fn prune_windows(
        &self,
        monitor: &str,
        host: &str,
        now_unix_ns: u64,
        keep_histograms_ns: u64,
        keep_windows_ns: u64,
    ) -> Result<Pruned> {
        let what = "applying the monitor's retention";
        let hist_before = i(now_unix_ns.saturating_sub(keep_histograms_ns));
        let rows_before = i(now_unix_ns.saturating_sub(keep_windows_ns));
        let mut db = self.db();
        // Histograms go by whole rows (their space is then reused), at
        // their own retention or their window's, whichever comes first.
        let cleared = db
            .execute(
                "DELETE FROM monitor_window_histograms \
                 WHERE monitor = ?1 AND host = ?2 AND end_unix_ns < ?3",
                &args![monitor, host, hist_before.max(rows_before)],
            )
            .map_err(|e| self.err(what, e))?;
        let deleted = db
            .execute(
                "DELETE FROM monitor_windows WHERE monitor = ?1 AND host = ?2 AND end_unix_ns < ?3",
                &args![monitor, host, rows_before],
            )
            .map_err(|e| self.err(what, e))?;
        Ok(Pruned {
            histograms_cleared: cleared,
            windows_deleted: deleted,
        })
    }

    /// Every monitor of the store, one row per monitor and host, in
    /// name order.
    pub fn monitors(&self) -> Result<Vec<MonitorRow>> {
        let read = |r: &Row| -> std::result::Result<MonitorRow, DbError> {
            let u = |k: usize| r.get::<i64>(k).map(|v| v.max(0) as u64);
            Ok(MonitorRow {
                monitor: r.get(0)?,
                host: r.get(1)?,
                windows: u(2)?,
                first_start_unix_ns: u(3)?,
                last_end_unix_ns: u(4)?,
                largest_ns: r.get::<Option<i64>>(5)?.map(|v| v.max(0) as u64),
            })
        };
        self.db()
            .query(
                "SELECT monitor, host, COUNT(*), MIN(start_unix_ns), MAX(end_unix_ns), MAX(max_ns) \
                 FROM monitor_windows GROUP BY monitor, host ORDER BY monitor, host",
                &args![],
            )
            .and_then(|rows| rows.iter().map(read).collect())
            .map_err(|e| self.err("listing the monitors", e))
    }

    /// The windows of `monitor` (every host when `host` is `None`), oldest
    /// first, with their histograms when `with_histograms`.
    pub fn monitor_windows(
        &self,
        monitor: &str,
        host: Option<&str>,
        with_histograms: bool,
    ) -> Result<Vec<WindowRow>> {
        self.monitor_windows_after(monitor, host, 0, with_histograms)
    }

    /// [`Store::monitor_windows`] that ended after `after_unix_ns` (what a
    /// live view has not shown yet).
    pub fn monitor_windows_after(
        &self,
        monitor: &str,
        host: Option<&str>,
        after_unix_ns: u64,
        with_histograms: bool,
    ) -> Result<Vec<WindowRow>> {
        let what = "reading monitor windows";
        let read = |r: &Row| -> std::result::Result<WindowRow, DbError> {
            let u = |k: usize| r.get::<i64>(k).map(|v| v.max(0) as u64);
            let ou = |k: usize| r.get::<Option<i64>>(k).map(|v| v.map(|v| v.max(0) as u64));
            let bits: Option<u32> = r.get(14)?;
            let blob: Option<Vec<u8>> = r.get(15)?;
            Ok(WindowRow {
                monitor: r.get(0)?,
                host: r.get(1)?,
                run_uuid: r.get(2)?,
                thread: r.get(3)?,
                cpu: r.get(4)?,
                start_unix_ns: u(5)?,
                end_unix_ns: u(6)?,
                samples: u(7)?,
                wakeups: u(8)?,
                missed: u(9)?,
                min_ns: ou(10)?,
                avg_ns: ou(11)?,
                p99_ns: ou(12)?,
                max_ns: ou(13)?,
                histogram: bits.zip(blob),
            })
        };
        // The host filter is a separate query text rather than `?2 IS
        // NULL OR host = ?2`, whose parameter PostgreSQL cannot type.
        let after = i(after_unix_ns);
        let (sql_host, params) = match host {
            Some(h) => (
                "AND w.host = ?4 ",
                args![monitor, with_histograms, after, h].to_vec(),
            ),
            None => ("", args![monitor, with_histograms, after].to_vec()),
        };
        self.db()
            .query(
                &format!(
                    "SELECT w.monitor, w.host, w.run_uuid, w.thread, w.cpu, w.start_unix_ns, \
                     w.end_unix_ns, w.samples, w.wakeups, w.missed, w.min_ns, w.avg_ns, w.p99_ns, \
                     w.max_ns, h.sub_bucket_bits, CASE WHEN ?2 THEN h.histogram ELSE NULL END \
                     FROM monitor_windows w LEFT JOIN monitor_window_histograms h \
                     ON h.monitor = w.monitor AND h.host = w.host AND h.thread = w.thread \
                     AND h.start_unix_ns = w.start_unix_ns \
                     WHERE w.monitor = ?1 AND w.end_unix_ns > ?3 {sql_host}\
                     ORDER BY w.start_unix_ns, w.host, w.thread"
                ),
                &params,
            )
            .and_then(|rows| rows.iter().map(read).collect())
            .map_err(|e| self.err(what, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;

    fn row(start: u64, thread: u32) -> WindowRow {
        WindowRow {
            monitor: "m".into(),
            host: "h".into(),
            run_uuid: "r1".into(),
            thread,
            cpu: Some(thread),
            start_unix_ns: start,
            end_unix_ns: start + 10,
            samples: 5,
            wakeups: 5,
            missed: 0,
            min_ns: Some(1),
            avg_ns: Some(2),
            p99_ns: Some(3),
            max_ns: Some(4),
            histogram: Some((5, vec![1, 5, 0])),
        }
    }

    #[test]
    fn monitors_are_listed_per_host_and_windows_read_after_a_time() {
        let t = TempStore::new("monitors");
        let s = Store::open(&t.db()).unwrap();
        assert!(s.monitors().unwrap().is_empty());
        let mut rows = vec![row(100, 0), row(110, 0), row(120, 1)];
        let mut other = row(200, 0);
        other.host = "g".into();
        other.max_ns = None;
        rows.push(other);
        rows[1].max_ns = Some(40);
        s.insert_windows(&rows).unwrap();
        let m = s.monitors().unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].host.as_str(), m[0].windows, m[0].largest_ns),
            ("g", 1, None)
        );
        assert_eq!(
            (m[1].host.as_str(), m[1].windows, m[1].first_start_unix_ns),
            ("h", 3, 100)
        );
        assert_eq!((m[1].last_end_unix_ns, m[1].largest_ns), (130, Some(40)));
        // After 115 ns: the windows that ended later (at 120 and 130).
        let after = s.monitor_windows_after("m", Some("h"), 115, false).unwrap();
        let ends: Vec<u64> = after.iter().map(|w| w.end_unix_ns).collect();
        assert_eq!(ends, [120, 130]);
        assert!(after.iter().all(|w| w.histogram.is_none()));
        assert_eq!(
            s.monitor_windows_after("m", None, 130, false)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(s.monitor_windows("m", None, true).unwrap().len(), 4);
    }

    #[test]
    fn runs_link_windows_are_unique_and_retention_prunes() {
        let t = TempStore::new("windows");
        let s = Store::open(&t.db()).unwrap();
        assert_eq!(s.begin_monitor_run("m", "h", "r1", 100).unwrap(), None);
        assert_eq!(
            s.begin_monitor_run("m", "h", "r2", 200).unwrap(),
            Some("r1".to_string())
        );
        assert_eq!(s.begin_monitor_run("other", "h", "r3", 300).unwrap(), None);
        assert_eq!(
            s.monitor_of_run("r2").unwrap(),
            Some(("m".into(), "h".into(), Some("r1".into())))
        );
        assert_eq!(
            s.insert_windows(&[row(0, 0), row(0, 1), row(10, 0)])
                .unwrap(),
            3
        );
        assert_eq!(s.insert_windows(&[row(10, 0), row(20, 0)]).unwrap(), 1);
        let all = s.monitor_windows("m", None, true).unwrap();
        assert_eq!(all.len(), 4);
        assert!(all.iter().all(|w| w.histogram.is_some()));
        // At 35: histograms of windows ended before 25 cleared (3 rows),
        // rows ended before 15 deleted (2 rows).
        let p = s.prune_windows("m", "h", 35, 10, 20).unwrap();
        assert_eq!(
            p,
            Pruned {
                histograms_cleared: 3,
                windows_deleted: 2
            }
        );
        let left = s.monitor_windows("m", Some("h"), true).unwrap();
        assert_eq!(
            left.iter().map(|w| w.start_unix_ns).collect::<Vec<_>>(),
            vec![10, 20]
        );
        assert_eq!(left[0].histogram, None);
        assert!(left[1].histogram.is_some());
    }

    /// Summaries outlive histograms: once a histogram is gone, its
    /// window's space in the file is reused, so a long monitor's store
    /// grows by a summary per window, not by a summary and a histogram.
    #[test]
    fn retention_gives_the_histograms_space_back() {
        let t = TempStore::new("windows-size");
        let s = Store::open(&t.db()).unwrap();
        let n = 600u64;
        for k in 0..n {
            let mut w = row(k * 10, 0);
            w.histogram = Some((5, (0..700u32).map(|b| (b * 7 + k as u32) as u8).collect()));
            s.insert_windows(&[w]).unwrap();
            // Histograms kept 50 ns (the last 6 windows), summaries for good.
            s.prune_windows("m", "h", k * 10 + 10, 50, u64::MAX / 2)
                .unwrap();
        }
        let windows = s.monitor_windows("m", None, true).unwrap();
        assert_eq!(windows.len() as u64, n);
        assert_eq!(windows.iter().filter(|w| w.histogram.is_some()).count(), 6);
        drop(s);
        let c = rusqlite::Connection::open(t.db()).unwrap();
        c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        let pragma = |p: &str| -> u64 {
            c.query_row(&format!("PRAGMA {p}"), [], |r| r.get::<_, i64>(0))
                .unwrap() as u64
        };
        let used = (pragma("page_count") - pragma("freelist_count")) * pragma("page_size");
        let empty = {
            let t2 = TempStore::new("windows-size-empty");
            drop(Store::open(&t2.db()).unwrap());
            let c2 = rusqlite::Connection::open(t2.db()).unwrap();
            c2.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
                .unwrap();
            let p: i64 = c2.query_row("PRAGMA page_count", [], |r| r.get(0)).unwrap();
            let z: i64 = c2.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
            (p * z) as u64
        };
        let per_window = (used - empty) / n;
        assert!(
            per_window < 300,
            "{per_window} bytes per window kept as a summary (a 700-byte histogram each while recent)"
        );
    }
}
