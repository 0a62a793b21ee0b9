//! Characterizations in the store (`rtscope characterize`): each is a
//! row of `runs` (source_kind 'characterization': same ids and uuids as
//! runs, listed by `runs`, removed by `runs rm`), its head in
//! `characterizations` and its table rows in `characterization_rows`.
//! Saved as it goes: begun before the first benchmark (state running,
//! with this process as owner), rewritten after each one, ended complete
//! or interrupted. All SQL of characterizations lives here, written for
//! both backends (see `db.rs`).

use super::runs::RunState;
use super::{Result, Store, StoreError, now_unix_ns};
use crate::args;
use crate::characterization::{BenchResult, Characterization};
use crate::sysinfo::owner::Owner;

/// The `runs.source_kind` of a characterization.
pub const SOURCE_KIND: &str = "characterization";
/// What `runs.record_json` holds for a characterization (its record is
/// in the tables of this file).
/// What the `runs` row of a characterization holds in place of a run
/// record: its kind, and the host (which `runs --host` reads there).
fn record_stub(c: &Characterization) -> String {
    serde_json::json!({
        "kind": "characterization",
        "fingerprint": { "hostname": c.fingerprint.hostname },
    })
    .to_string()
}

/// The head: everything of a characterization but its rows.
fn head_json(c: &Characterization) -> Result<String> {
    let mut head = c.clone();
    head.results.clear();
    serde_json::to_string(&head).map_err(|e| StoreError::Encode {
        what: "the characterization".into(),
        detail: e.to_string(),
    })
}

fn cpus_text(c: &Characterization) -> String {
    crate::units::format_cpu_list(&c.cpus)
}

impl Store {
    /// Start saving `c` (no rows yet): a running run owned by this
    /// process. Returns its id.
    pub fn begin_characterization(&mut self, c: &Characterization) -> Result<i64> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::from_db(&path, "saving a characterization", e);
        let owner = Owner::this_process();
        let head = head_json(c)?;
        let mut tx = self.tx("saving a characterization")?;
        let id: i64 = tx
            .query_one(
            "INSERT INTO runs (uuid, status, source_kind, label, started_at_unix_ns, duration_ns, \
             kernel_release, preemption_model, threads, samples, fingerprint_hash, record_json, \
             saved_at_unix_ns, owner_host, owner_boot_id, owner_pid, owner_start_ticks) \
             VALUES (?1, 'running', ?2, ?3, ?4, 0, ?5, ?6, ?7, 0, ?8, ?9, ?10, ?11, ?12, ?13, ?14) \
             RETURNING id",
            &args![
                c.uuid,
                SOURCE_KIND,
                c.label,
                c.started_at_unix_ns,
                c.fingerprint.kernel_release,
                c.fingerprint.preemption_model.as_str(),
                c.cpus.len() as u32,
                c.fingerprint.comparable_hash(),
                record_stub(c),
                now_unix_ns(),
                owner.host,
                owner.boot_id,
                owner.pid,
                owner.start_ticks,
            ],
        )
        .and_then(|r| r.get(0))
        .map_err(err)?;
        tx.execute(
            "INSERT INTO characterizations (run_id, schema_name, per_bench_ns, interval_ns, priority, \
             cpus, clock_read_ns, complete, head_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &args![
                id,
                c.schema,
                c.per_bench_ns,
                c.interval_ns,
                c.priority,
                cpus_text(c),
                c.clock_read_ns,
                c.complete as i64,
                head
            ],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Write `c` as it is now into characterization `id` (one
    /// transaction), with the run's state `state`.
    pub fn save_characterization(
        &mut self,
        id: i64,
        c: &Characterization,
        state: RunState,
    ) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::from_db(&path, "saving a characterization", e);
        let head = head_json(c)?;
        let rows = c
            .results
            .iter()
            .map(|r| serde_json::to_string(r).map(|j| (r, j)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Encode {
                what: "a result of the characterization".into(),
                detail: e.to_string(),
            })?;
        let mut tx = self.tx("saving a characterization")?;
        tx.execute(
            "UPDATE runs SET status = ?2, label = ?3, duration_ns = ?4, samples = ?5, \
             saved_at_unix_ns = ?6 WHERE id = ?1",
            &args![
                id,
                state.name(),
                c.label,
                c.duration_ns,
                c.results.len() as u64,
                now_unix_ns()
            ],
        )
        .map_err(err)?;
        tx.execute(
            "UPDATE characterizations SET complete = ?2, head_json = ?3 WHERE run_id = ?1",
            &args![id, c.complete as i64, head],
        )
        .map_err(err)?;
        tx.execute(
            "DELETE FROM characterization_rows WHERE run_id = ?1",
            &args![id],
        )
        .map_err(err)?;
        for (seq, (r, json)) in rows.iter().enumerate() {
            let s = &r.stats;
            tx.execute(
                "INSERT INTO characterization_rows (run_id, seq, bench, variant, cpu, count, \
                 min_ns, avg_ns, p50_ns, p99_ns, p9999_ns, max_ns, row_json) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                &args![
                    id,
                    seq as i64,
                    r.bench,
                    r.variant,
                    r.cpu as i64,
                    s.count,
                    s.min_ns,
                    s.avg_ns,
                    s.p50_ns,
                    s.p99_ns,
                    s.p9999_ns,
                    s.max_ns,
                    json
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Is run `id` a characterization?
    pub fn is_characterization(&self, id: i64) -> Result<bool> {
        let found = self
            .db()
            .query_opt(
                "SELECT run_id FROM characterizations WHERE run_id = ?1",
                &args![id],
            )
            .map_err(|e| self.err("reading a characterization", e))?;
        Ok(found.is_some())
    }

    /// Load characterization `id` back, equal to what was written.
    pub fn load_characterization(&self, id: i64) -> Result<Characterization> {
        let bad = |detail: String| StoreError::BadRun {
            id,
            path: self.path().to_path_buf(),
            detail,
        };
        let head: String = self
            .db()
            .query_opt(
                "SELECT head_json FROM characterizations WHERE run_id = ?1",
                &args![id],
            )
            .and_then(|r| r.map(|r| r.get(0)).transpose())
            .map_err(|e| self.err("reading a characterization", e))?
            .ok_or_else(|| StoreError::NoRun {
                reference: id.to_string(),
                path: self.path().to_path_buf(),
            })?;
        let mut c: Characterization =
            serde_json::from_str(&head).map_err(|e| bad(format!("its head: {e}")))?;
        let rows: Vec<String> = self
            .db()
            .query(
                "SELECT row_json FROM characterization_rows WHERE run_id = ?1 ORDER BY seq",
                &args![id],
            )
            .and_then(|rows| rows.iter().map(|r| r.get(0)).collect())
            .map_err(|e| self.err("reading a characterization", e))?;
        for (i, j) in rows.iter().enumerate() {
            let r: BenchResult =
                serde_json::from_str(j).map_err(|e| bad(format!("row {i}: {e}")))?;
            c.results.push(r);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::TempStore;
    use super::*;
    use crate::characterization::{SCHEMA, SparseHistogram, Stats};

    fn sample() -> Characterization {
        Characterization {
            schema: SCHEMA.into(),
            uuid: crate::record::new_run_uuid(),
            label: Some("vm".into()),
            command_line: vec!["rtscope".into(), "characterize".into()],
            started_at_unix_ns: 1_700_000_000_000_000_000,
            duration_ns: 0,
            per_bench_ns: 200_000_000,
            interval_ns: 1_000_000,
            priority: 99,
            cpus: vec![0, 1],
            isolated_cpus: None,
            clock_read_ns: 25,
            benches: vec!["mutex".into()],
            results: vec![],
            checks: vec![],
            pi_verdict: None,
            complete: false,
            fingerprint: Default::default(),
        }
    }

    #[test]
    fn a_characterization_is_listed_saved_as_it_goes_and_read_back_equal() {
        let t = TempStore::new("char");
        let mut s = Store::open(&t.db()).unwrap();
        let mut c = sample();
        let id = s.begin_characterization(&c).unwrap();
        assert!(s.is_characterization(id).unwrap());
        assert_eq!(s.list().unwrap()[0].source_kind.as_str(), SOURCE_KIND);
        c.results.push(BenchResult {
            bench: "mutex".into(),
            variant: "lock, plain".into(),
            cpu: 0,
            what: "x".into(),
            subtracted_ns: 25,
            stats: Stats {
                count: 3,
                min_ns: 10,
                avg_ns: 12,
                p50_ns: 12,
                p99_ns: 14,
                p9999_ns: 14,
                max_ns: 14,
            },
            histogram: SparseHistogram {
                sub_bucket_bits: 9,
                buckets: vec![[10, 1], [12, 1], [14, 1]],
            },
            noise: None,
            inversion: None,
        });
        s.save_characterization(id, &c, RunState::Running).unwrap();
        assert_eq!(s.load_characterization(id).unwrap(), c);
        c.complete = true;
        c.duration_ns = 5;
        s.save_characterization(id, &c, RunState::Complete).unwrap();
        assert_eq!(s.load_characterization(id).unwrap(), c);
        let row = s.row(id).unwrap().unwrap();
        assert_eq!(row.state, RunState::Complete);
        assert_eq!(row.samples, 1);
        s.remove(&[id]).unwrap();
        assert!(!s.is_characterization(id).unwrap());
        let n: i64 = s
            .db()
            .query_one("SELECT count(*) FROM characterization_rows", &[])
            .and_then(|r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
    }
}
