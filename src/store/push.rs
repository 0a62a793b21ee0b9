//! Copying runs from one store to another (`rtscope push`), typically
//! from a board's local SQLite file (or the spool) to the lab's shared
//! PostgreSQL: each run whole (record, histograms, windows, outliers,
//! fingerprint, tags) in one transaction, keyed by its uuid, so pushing
//! twice copies nothing the second time.

use super::{Result, RunState, Store, StoreError};

/// What happened to one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pushed {
    /// Copied; its id in the destination.
    Copied { id: i64 },
    /// The destination already has this run (its id there), as complete
    /// as here.
    AlreadyThere { id: i64 },
    /// The destination had this run cut short (its server went away
    /// while it was measured); it now holds the whole run.
    Completed { id: i64 },
    /// Still being measured: push it once it has ended.
    Running,
}

/// Copy run `id` of `from` into `to`, unless `to` already holds its uuid.
pub fn push_one(from: &Store, to: &mut Store, id: i64) -> Result<Pushed> {
    let row = from.row(id)?.ok_or_else(|| StoreError::NoRun {
        reference: id.to_string(),
        path: from.path().to_path_buf(),
    })?;
    if row.state == RunState::Running {
        return Ok(Pushed::Running);
    }
    receive(to, &row.uuid, row.state, row.samples, || from.load(id))
}

/// Copy a run known by its uuid, state and samples (in a store here or
/// on a board) into `to`: inserted when `to` has no run of that uuid,
/// its parts rewritten when `to` holds it cut short and this copy is
/// further on, else left alone. `load` gives the whole record, and is
/// called only when it is needed; its error is returned as it is (a
/// board's failure stays the board's), the store's become `E`. A running
/// run's checkpoint may be copied this way: it is completed by a later
/// call.
pub fn receive<E: From<StoreError>>(
    to: &mut Store,
    uuid: &str,
    state: RunState,
    samples: u64,
    load: impl FnOnce() -> Result<crate::record::RunRecord, E>,
) -> Result<Pushed, E> {
    if let Some(there) = to.find_uuid(uuid)? {
        let theirs = to.row(there)?;
        let behind = theirs.is_some_and(|t| {
            t.state != RunState::Complete && (state == RunState::Complete || samples > t.samples)
        });
        if !behind {
            return Ok(Pushed::AlreadyThere { id: there });
        }
        let mut rec = load()?;
        let path = to.path().to_path_buf();
        let mut tx = to.tx("completing a run")?;
        super::runs::write_parts(&mut tx, there, &mut rec, &mut Default::default())
            .map_err(|e| e.into_store(&path))?;
        tx.commit()
            .map_err(|e| StoreError::from_db(&path, "completing a run", e))?;
        return Ok(Pushed::Completed { id: there });
    }
    let rec = load()?;
    match to.insert_all_unless_raced(std::slice::from_ref(&rec))? {
        Some(new) => Ok(Pushed::Copied { id: new[0] }),
        // Another host pushed the same run meanwhile: it is there.
        None => Ok(Pushed::AlreadyThere {
            id: to.find_uuid(uuid)?.ok_or_else(|| StoreError::NoRun {
                reference: uuid.to_string(),
                path: to.path().to_path_buf(),
            })?,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;

    #[test]
    fn a_second_push_copies_nothing() {
        let t = TempStore::new("push");
        let a = Store::open(&t.0.join("a.db")).unwrap();
        let mut b = Store::open(&t.0.join("b.db")).unwrap();
        let mut a = a;
        let rec = crate::record::synthetic(&[vec![1000, 2000]]);
        let id = a.insert(&rec).unwrap();
        let first = push_one(&a, &mut b, id).unwrap();
        let Pushed::Copied { id: there } = first else {
            panic!("{first:?}")
        };
        assert_eq!(b.load(there).unwrap(), rec);
        assert_eq!(
            push_one(&a, &mut b, id).unwrap(),
            Pushed::AlreadyThere { id: there }
        );
        assert_eq!(b.list().unwrap().len(), 1);
        // A copy cut short in the destination is completed, once.
        let mut partial = crate::record::synthetic(&[vec![1000]]);
        partial.run_uuid = crate::record::new_run_uuid();
        partial.status = crate::record::RunStatus::Interrupted;
        let cut = b.insert(&partial).unwrap();
        let mut whole = crate::record::synthetic(&[vec![1000, 2000, 3000]]);
        whole.run_uuid = partial.run_uuid.clone();
        let src = a.insert(&whole).unwrap();
        assert_eq!(
            push_one(&a, &mut b, src).unwrap(),
            Pushed::Completed { id: cut }
        );
        assert_eq!(b.load(cut).unwrap(), whole);
        assert_eq!(
            push_one(&a, &mut b, src).unwrap(),
            Pushed::AlreadyThere { id: cut }
        );
    }
}
