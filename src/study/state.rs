//! A study as the store holds it, read back: its file (parsed again from
//! the stored text, so `resume` needs no file), its cells, and where each
//! run stands: done, waiting for another kernel, to do, or tried and cut
//! short. Reads the store only.

use super::StudyError;
use super::boots::Boots;
use super::matrix::{self, Cell};
use super::spec::{self, Spec};
use crate::store::Store;
use crate::store::boots::{BootRow, BootState, RoundRow};
use crate::store::studies::{AttemptRow, AttemptState, SlotRow, StudyRow};
use crate::sysinfo::kernel_match::Kernel;

/// Where one run of a study stands.
#[derive(Clone, Debug, PartialEq)]
pub enum SlotState {
    /// Measured to its end; its run is this one.
    Done { run_uuid: String },
    /// Being measured now by the study's runner.
    Running,
    /// To run on this kernel (perhaps tried before and cut short).
    ToDo,
    /// Needs another boot (kernel, command line) than the one running:
    /// `boot` names it, `why` says what differs.
    Waiting { boot: String, why: String },
    /// Its boot could not be had (no such kernel installed, the machine
    /// did not come up as asked): the study goes on without it.
    CannotBoot { boot: String, why: String },
}

/// One run of a study and what became of it.
#[derive(Clone, Debug)]
pub struct SlotStatus {
    pub slot: SlotRow,
    pub state: SlotState,
    /// Every try, oldest first (interrupted and failed ones included).
    pub attempts: Vec<AttemptRow>,
}

impl SlotStatus {
    /// Tries cut short (a kill, a power cut, Ctrl-C) before this one
    /// finished.
    pub fn interrupted(&self) -> usize {
        self.attempts
            .iter()
            .filter(|a| a.state == AttemptState::Interrupted)
            .count()
    }

    /// The last failure's reason, if the last try failed.
    pub fn failure(&self) -> Option<&str> {
        match self.attempts.last() {
            Some(a) if a.state == AttemptState::Failed => {
                Some(a.detail.as_deref().unwrap_or("failed"))
            }
            _ => None,
        }
    }
}

/// A stored study, read back.
pub struct Study {
    pub row: StudyRow,
    pub spec: Spec,
    pub cells: Vec<Cell>,
    /// The boot each cell needs.
    pub boots: Boots,
    /// The newest round of reboots (`--reboot`), if any, and its boots.
    pub round: Option<RoundRow>,
    pub boot_rows: Vec<BootRow>,
    pub slots: Vec<SlotStatus>,
}

impl Study {
    /// The study called `name`, or the newest one.
    pub fn load(store: &Store, name: Option<&str>, kernel: &Kernel) -> Result<Study, StudyError> {
        let row = match name {
            Some(n) => store.study(n)?.ok_or_else(|| StudyError::NoStudy {
                name: n.to_string(),
                store: store.path().display().to_string(),
            })?,
            None => store
                .studies()?
                .pop()
                .ok_or_else(|| StudyError::NoStudies {
                    store: store.path().display().to_string(),
                })?,
        };
        Study::of_row(store, row, kernel)
    }

    /// The study stored as `row`.
    pub fn of_row(store: &Store, row: StudyRow, kernel: &Kernel) -> Result<Study, StudyError> {
        let shown = format!("study '{}' (stored)", row.name);
        let spec = spec::parse(&row.file_text, &shown)?;
        let cells = matrix::cells(&spec);
        let boots = Boots::of(&spec, &cells);
        let round = store.study_round(row.id)?;
        let boot_rows = match &round {
            Some(r) => store.study_boots(row.id, Some(r.round))?,
            None => Vec::new(),
        };
        let failed: Vec<(&str, &str)> = boot_rows
            .iter()
            .filter(|b| b.state == BootState::Failed)
            .map(|b| (b.config.as_str(), b.detail.as_deref().unwrap_or("failed")))
            .collect();
        let attempts = store.study_attempts(&row)?;
        let slots = store
            .study_slots(row.id)?
            .into_iter()
            .map(|slot| {
                let mine: Vec<AttemptRow> = attempts
                    .iter()
                    .filter(|a| a.position == slot.position)
                    .cloned()
                    .collect();
                let state = state_of(&boots, slot.cell, &mine, kernel, &failed);
                SlotStatus {
                    slot,
                    state,
                    attempts: mine,
                }
            })
            .collect();
        Ok(Study {
            row,
            spec,
            cells,
            boots,
            round,
            boot_rows,
            slots,
        })
    }

    /// Runs measured to their end.
    pub fn done(&self) -> usize {
        self.count(|s| matches!(s, SlotState::Done { .. }))
    }

    /// Runs whose boot could not be had.
    pub fn cannot_boot(&self) -> usize {
        self.count(|s| matches!(s, SlotState::CannotBoot { .. }))
    }

    /// Runs waiting for another boot.
    pub fn waiting(&self) -> usize {
        self.count(|s| matches!(s, SlotState::Waiting { .. }))
    }

    /// Runs this kernel still owes.
    pub fn to_do(&self) -> usize {
        self.count(|s| matches!(s, SlotState::ToDo | SlotState::Running))
    }

    fn count(&self, f: impl Fn(&SlotState) -> bool) -> usize {
        self.slots.iter().filter(|s| f(&s.state)).count()
    }

    /// The boots the waiting runs need, each with how many and what
    /// differs from the running one.
    pub fn waiting_boots(&self) -> Vec<(String, usize, String)> {
        let mut out: Vec<(String, usize, String)> = Vec::new();
        for s in &self.slots {
            if let SlotState::Waiting { boot, why } = &s.state {
                match out.iter_mut().find(|(k, _, _)| k == boot) {
                    Some(e) => e.1 += 1,
                    None => out.push((boot.clone(), 1, why.clone())),
                }
            }
        }
        out
    }
}

fn state_of(
    boots: &Boots,
    cell: usize,
    attempts: &[AttemptRow],
    kernel: &Kernel,
    failed: &[(&str, &str)],
) -> SlotState {
    if let Some(a) = attempts.iter().find(|a| a.state == AttemptState::Done) {
        return SlotState::Done {
            run_uuid: a.run_uuid.clone().unwrap_or_default(),
        };
    }
    if attempts.iter().any(|a| a.state == AttemptState::Running) {
        return SlotState::Running;
    }
    let need = &boots.needs[cell];
    let Err(why) = boots.check(need, kernel) else {
        return SlotState::ToDo;
    };
    let boot = boots.label(need);
    match failed.iter().find(|(c, _)| *c == boot) {
        Some((_, why)) => SlotState::CannotBoot {
            boot,
            why: why.to_string(),
        },
        None => SlotState::Waiting {
            boot,
            why: why.to_string(),
        },
    }
}
