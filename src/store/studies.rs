//! Studies in the store: the study (its file's text, seed, and the
//! process running it), its slots (every run in order) and the attempts
//! at each slot. Every change is one short transaction, so a kill or a
//! power cut leaves the study as it was after the last finished step.
//! Knows nothing of matrices or options: the caller hands slots in.

use super::db::{DbError, Row};
use super::{Result, Store, StoreError, now_unix_ns};
use crate::args;
use crate::sysinfo::owner::{Liveness, Owner};

/// A stored study.
#[derive(Clone, Debug, PartialEq)]
pub struct StudyRow {
    pub id: i64,
    pub uuid: String,
    pub name: String,
    pub file_text: String,
    pub file_path: Option<String>,
    pub seed: u64,
    pub created_at_unix_ns: u64,
    /// The process running it now, if one does.
    pub running: Option<Owner>,
}

/// One run of a study at its place in the order.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotRow {
    pub position: usize,
    pub cell: usize,
    pub repetition: u32,
    pub label: String,
    pub kernel: Option<String>,
}

/// How an attempt at a slot ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptState {
    /// Its process is measuring it now.
    Running,
    Done,
    /// Its process died (kill, crash, power cut) or was stopped before the
    /// cell's end: the run holds what was measured.
    Interrupted,
    /// It could not run (the set-up failed); the detail says why.
    Failed,
}

impl AttemptState {
    pub fn name(self) -> &'static str {
        match self {
            AttemptState::Running => "running",
            AttemptState::Done => "done",
            AttemptState::Interrupted => "interrupted",
            AttemptState::Failed => "failed",
        }
    }

    fn parse(s: &str) -> AttemptState {
        match s {
            "running" => AttemptState::Running,
            "done" => AttemptState::Done,
            "failed" => AttemptState::Failed,
            _ => AttemptState::Interrupted,
        }
    }
}

/// One try at a slot.
#[derive(Clone, Debug, PartialEq)]
pub struct AttemptRow {
    pub id: i64,
    pub position: usize,
    pub run_uuid: Option<String>,
    pub state: AttemptState,
    pub detail: Option<String>,
    pub kernel_release: String,
    pub preemption_model: String,
    pub started_at_unix_ns: u64,
    pub ended_at_unix_ns: Option<u64>,
}

/// A study about to be stored.
pub struct NewStudy<'a> {
    pub uuid: &'a str,
    pub name: &'a str,
    pub file_text: &'a str,
    pub file_path: Option<&'a str>,
    pub seed: u64,
    pub slots: &'a [SlotRow],
}

const STUDY_COLUMNS: &str = "id, uuid, name, file_text, file_path, seed, created_at_unix_ns, \
     owner_host, owner_boot_id, owner_pid, owner_start_ticks";

fn read_study(r: &Row) -> Result<StudyRow, DbError> {
    let owner = super::runs::read_owner(r, 7)?;
    Ok(StudyRow {
        id: r.get(0)?,
        uuid: r.get(1)?,
        name: r.get(2)?,
        file_text: r.get(3)?,
        file_path: r.get(4)?,
        seed: r.get::<i64>(5)? as u64,
        created_at_unix_ns: r.get(6)?,
        running: owner.filter(|o| o.liveness() != Liveness::Gone),
    })
}

impl Store {
    /// Store a new study and its slots; fails if the name is taken.
    pub fn create_study(&mut self, s: &NewStudy) -> Result<i64> {
        let path = self.path().to_path_buf();
        let err = |what: &str, e| StoreError::from_db(&path, what, e);
        let mut tx = self.tx("starting to save the study")?;
        let id: i64 = tx
            .query_one(
                "INSERT INTO studies (uuid, name, file_text, file_path, seed, created_at_unix_ns)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
                &args![
                    s.uuid,
                    s.name,
                    s.file_text,
                    s.file_path,
                    s.seed as i64,
                    now_unix_ns()
                ],
            )
            .and_then(|r| r.get(0))
            .map_err(|e| err("saving the study", e))?;
        for sl in s.slots {
            tx.execute(
                "INSERT INTO study_slots (study_id, position, cell, repetition, label, kernel)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                &args![
                    id,
                    sl.position as i64,
                    sl.cell as i64,
                    sl.repetition,
                    sl.label,
                    sl.kernel
                ],
            )
            .map_err(|e| err("saving the study's runs", e))?;
        }
        tx.commit().map_err(|e| err("saving the study", e))?;
        Ok(id)
    }

    /// The study called `name`, if stored.
    pub fn study(&self, name: &str) -> Result<Option<StudyRow>> {
        self.db()
            .query_opt(
                &format!("SELECT {STUDY_COLUMNS} FROM studies WHERE name = ?1"),
                &args![name],
            )
            .and_then(|r| r.as_ref().map(read_study).transpose())
            .map_err(|e| self.err("reading the study", e))
    }

    /// Every stored study, oldest first.
    pub fn studies(&self) -> Result<Vec<StudyRow>> {
        self.db()
            .query(
                &format!("SELECT {STUDY_COLUMNS} FROM studies ORDER BY id"),
                &[],
            )
            .and_then(|rows| rows.iter().map(read_study).collect())
            .map_err(|e| self.err("listing the studies", e))
    }

    /// Make this process the study's runner, unless another live process
    /// is: then `Err(that process)`. Attempts left running by a runner that
    /// is gone are marked interrupted in the same transaction.
    pub fn claim_study(&mut self, id: i64) -> Result<std::result::Result<(), Owner>> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::from_db(&path, "taking the study", e);
        let mut tx = self.tx("taking the study")?;
        // FOR UPDATE on PostgreSQL: two hosts claiming at once take turns.
        let lock = if tx.is_postgres() { " FOR UPDATE" } else { "" };
        let row = tx
            .query_one(
                &format!("SELECT {STUDY_COLUMNS} FROM studies WHERE id = ?1{lock}"),
                &args![id],
            )
            .and_then(|r| read_study(&r))
            .map_err(err)?;
        let me = Owner::this_process();
        if let Some(o) = row.running
            && o != me
        {
            return Ok(Err(o));
        }
        tx.execute(
            "UPDATE study_attempts SET state = 'interrupted', ended_at_unix_ns = ?2,
                 detail = coalesce(detail, 'its process ended before the cell did')
             WHERE study_id = ?1 AND state = 'running'",
            &args![id, now_unix_ns()],
        )
        .map_err(err)?;
        tx.execute(
            "UPDATE studies SET owner_host = ?2, owner_boot_id = ?3, owner_pid = ?4,
                 owner_start_ticks = ?5 WHERE id = ?1",
            &args![id, me.host, me.boot_id, me.pid, me.start_ticks],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(Ok(()))
    }

    /// This process no longer runs the study.
    pub fn release_study(&self, id: i64) -> Result<()> {
        self.db()
            .execute(
                "UPDATE studies SET owner_host = NULL, owner_boot_id = NULL, owner_pid = NULL,
                     owner_start_ticks = NULL WHERE id = ?1",
                &args![id],
            )
            .map(|_| ())
            .map_err(|e| self.err("releasing the study", e))
    }

    /// The study's slots, in order.
    pub fn study_slots(&self, id: i64) -> Result<Vec<SlotRow>> {
        let read = |r: &Row| -> Result<SlotRow, DbError> {
            Ok(SlotRow {
                position: r.get::<i64>(0)? as usize,
                cell: r.get::<i64>(1)? as usize,
                repetition: r.get(2)?,
                label: r.get(3)?,
                kernel: r.get(4)?,
            })
        };
        self.db()
            .query(
                "SELECT position, cell, repetition, label, kernel FROM study_slots
                 WHERE study_id = ?1 ORDER BY position",
                &args![id],
            )
            .and_then(|rows| rows.iter().map(read).collect())
            .map_err(|e| self.err("reading the study's runs", e))
    }

    /// Every attempt at the study's slots, oldest first. An attempt
    /// still marked running whose runner is gone reads as interrupted.
    pub fn study_attempts(&self, study: &StudyRow) -> Result<Vec<AttemptRow>> {
        let live = study.running.is_some();
        let read = |r: &Row| -> Result<AttemptRow, DbError> {
            let mut state = AttemptState::parse(&r.get::<String>(3)?);
            if state == AttemptState::Running && !live {
                state = AttemptState::Interrupted;
            }
            Ok(AttemptRow {
                id: r.get(0)?,
                position: r.get::<i64>(1)? as usize,
                run_uuid: r.get(2)?,
                state,
                detail: r.get(4)?,
                kernel_release: r.get(5)?,
                preemption_model: r.get(6)?,
                started_at_unix_ns: r.get(7)?,
                ended_at_unix_ns: r.get(8)?,
            })
        };
        self.db()
            .query(
                "SELECT id, position, run_uuid, state, detail, kernel_release, preemption_model,
                        started_at_unix_ns, ended_at_unix_ns
                 FROM study_attempts WHERE study_id = ?1 ORDER BY id",
                &args![study.id],
            )
            .and_then(|rows| rows.iter().map(read).collect())
            .map_err(|e| self.err("reading the study's attempts", e))
    }

    /// Record that a slot starts (its run is `run_uuid`, already in the
    /// store as a running run).
    pub fn begin_attempt(
        &self,
        study_id: i64,
        position: usize,
        run_uuid: Option<&str>,
        kernel: &crate::sysinfo::kernel_match::Kernel,
    ) -> Result<i64> {
        self.db()
            .query_one(
                "INSERT INTO study_attempts (study_id, position, run_uuid, state, kernel_release,
                     preemption_model, started_at_unix_ns)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6) RETURNING id",
                &args![
                    study_id,
                    position as i64,
                    run_uuid,
                    kernel.release,
                    kernel.preemption_model.as_str(),
                    now_unix_ns()
                ],
            )
            .and_then(|r| r.get(0))
            .map_err(|e| self.err("recording the start of a cell", e))
    }

    /// Record how an attempt ended.
    pub fn end_attempt(
        &self,
        attempt: i64,
        state: AttemptState,
        detail: Option<&str>,
    ) -> Result<()> {
        self.db()
            .execute(
                "UPDATE study_attempts SET state = ?2, detail = ?3, ended_at_unix_ns = ?4
                 WHERE id = ?1",
                &args![attempt, state.name(), detail, now_unix_ns()],
            )
            .map(|_| ())
            .map_err(|e| self.err("recording the end of a cell", e))
    }

    /// Remove a study (its runs stay in the store).
    pub fn remove_study(&mut self, id: i64) -> Result<()> {
        let path = self.path().to_path_buf();
        let err = |e| StoreError::from_db(&path, "removing the study", e);
        let mut tx = self.tx("removing the study")?;
        for sql in [
            "DELETE FROM study_boots WHERE study_id = ?1",
            "DELETE FROM study_rounds WHERE study_id = ?1",
            "DELETE FROM study_attempts WHERE study_id = ?1",
            "DELETE FROM study_slots WHERE study_id = ?1",
            "DELETE FROM studies WHERE id = ?1",
        ] {
            tx.execute(sql, &args![id]).map_err(err)?;
        }
        tx.commit().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;
    use crate::sysinfo::kernel_match::Kernel;

    fn slots(n: usize) -> Vec<SlotRow> {
        (0..n)
            .map(|p| SlotRow {
                position: p,
                cell: p % 2,
                repetition: (p / 2) as u32 + 1,
                label: format!("policy={}", if p % 2 == 0 { "fifo" } else { "rr" }),
                kernel: (p == 3).then(|| "rt".into()),
            })
            .collect()
    }

    #[test]
    fn a_study_keeps_its_slots_and_attempts() {
        let t = TempStore::new("study");
        let mut s = Store::open(&t.db()).unwrap();
        let sl = slots(4);
        let id = s
            .create_study(&NewStudy {
                uuid: "u-1",
                name: "seed-000",
                file_text: "name = \"seed-000\"",
                file_path: Some("a.toml"),
                seed: u64::MAX - 1,
                slots: &sl,
            })
            .unwrap();
        assert!(
            s.create_study(&NewStudy {
                uuid: "u-2",
                name: "seed-000",
                file_text: "",
                file_path: None,
                seed: 0,
                slots: &[],
            })
            .is_err(),
            "names are unique"
        );
        let row = s.study("seed-000").unwrap().unwrap();
        assert_eq!(
            (row.id, row.seed, row.running.clone()),
            (id, u64::MAX - 1, None)
        );
        assert_eq!(s.study_slots(id).unwrap(), sl);
        assert_eq!(s.claim_study(id).unwrap(), Ok(()));
        let row = s.study("seed-000").unwrap().unwrap();
        assert_eq!(row.running, Some(Owner::this_process()));
        let k = Kernel::plain("6.18", "none");
        let a = s.begin_attempt(id, 0, Some("run-a"), &k).unwrap();
        s.end_attempt(a, AttemptState::Done, None).unwrap();
        let b = s.begin_attempt(id, 1, Some("run-b"), &k).unwrap();
        let att = s.study_attempts(&row).unwrap();
        assert_eq!(att.len(), 2);
        assert_eq!(att[0].state, AttemptState::Done);
        assert_eq!(att[1].state, AttemptState::Running);
        // The runner goes away: its running attempt reads as interrupted,
        // and the next claim marks it so for good.
        s.release_study(id).unwrap();
        let row = s.study("seed-000").unwrap().unwrap();
        assert_eq!(
            s.study_attempts(&row).unwrap()[1].state,
            AttemptState::Interrupted
        );
        assert_eq!(s.claim_study(id).unwrap(), Ok(()));
        let row = s.study("seed-000").unwrap().unwrap();
        let att = s.study_attempts(&row).unwrap();
        assert_eq!((att[1].id, att[1].state), (b, AttemptState::Interrupted));
        s.remove_study(id).unwrap();
        assert!(s.study("seed-000").unwrap().is_none());
    }
}
