//! The reboots of a study in the store: its rounds (one per `--reboot`
//! a person starts: the plan as JSON text, and where the round stands)
//! and every boot a round asks for, written before the machine is
//! rebooted and marked when the next boot looks at it. Each change is one
//! statement, so a power cut leaves the last step taken. Knows nothing of
//! kernels or command lines: the plan and the target are the caller's
//! text.

use super::db::{DbError, Row};
use super::{Result, Store, now_unix_ns};
use crate::args;

/// Where a round of reboots stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundState {
    /// Boots are taken as the study needs them.
    Active,
    /// `study pause`: no boot is taken until `study resume NAME --reboot`.
    Paused,
    /// `study stop`, or the reboot limit: the round is over.
    Stopped,
    /// Every configuration was measured (or failed) and the machine is
    /// back in the boot it started from.
    Done,
}

impl RoundState {
    pub fn name(self) -> &'static str {
        match self {
            RoundState::Active => "active",
            RoundState::Paused => "paused",
            RoundState::Stopped => "stopped",
            RoundState::Done => "done",
        }
    }

    fn parse(s: &str) -> RoundState {
        match s {
            "active" => RoundState::Active,
            "paused" => RoundState::Paused,
            "done" => RoundState::Done,
            _ => RoundState::Stopped,
        }
    }
}

/// What became of a boot a round asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootState {
    /// Recorded, then arranged and rebooted into (or about to be).
    Asked,
    /// The machine came up as asked.
    Arrived,
    /// The machine came up otherwise (a power cut before the reboot, a
    /// kernel that did not boot, a command line not taken).
    Missed,
    /// The configuration cannot be booted; the study goes on without it.
    Failed,
    /// Not taken (the runner stopped before the reboot, `study pause`).
    Cancelled,
}

impl BootState {
    pub fn name(self) -> &'static str {
        match self {
            BootState::Asked => "asked",
            BootState::Arrived => "arrived",
            BootState::Missed => "missed",
            BootState::Failed => "failed",
            BootState::Cancelled => "cancelled",
        }
    }

    fn parse(s: &str) -> BootState {
        match s {
            "asked" => BootState::Asked,
            "arrived" => BootState::Arrived,
            "missed" => BootState::Missed,
            "failed" => BootState::Failed,
            _ => BootState::Cancelled,
        }
    }
}

/// One round of reboots.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundRow {
    pub round: i64,
    pub plan: String,
    pub state: RoundState,
    pub detail: Option<String>,
    pub started_at_unix_ns: u64,
}

/// One boot a round asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct BootRow {
    pub id: i64,
    pub round: i64,
    /// The boot configuration, as the study names it.
    pub config: String,
    /// What was asked (kernel, initrd, command line), as the caller wrote it.
    pub target: String,
    pub state: BootState,
    pub detail: Option<String>,
    /// The boot that asked for it.
    pub boot_id: String,
    pub asked_at_unix_ns: u64,
    pub ended_at_unix_ns: Option<u64>,
}

fn read_boot(r: &Row) -> Result<BootRow, DbError> {
    Ok(BootRow {
        id: r.get(0)?,
        round: r.get(1)?,
        config: r.get(2)?,
        target: r.get(3)?,
        state: BootState::parse(&r.get::<String>(4)?),
        detail: r.get(5)?,
        boot_id: r.get(6)?,
        asked_at_unix_ns: r.get(7)?,
        ended_at_unix_ns: r.get(8)?,
    })
}

impl Store {
    /// The study's newest round of reboots, if it has one.
    pub fn study_round(&self, study_id: i64) -> Result<Option<RoundRow>> {
        let read = |r: &Row| -> Result<RoundRow, DbError> {
            Ok(RoundRow {
                round: r.get(0)?,
                plan: r.get(1)?,
                state: RoundState::parse(&r.get::<String>(2)?),
                detail: r.get(3)?,
                started_at_unix_ns: r.get(4)?,
            })
        };
        self.db()
            .query_opt(
                "SELECT round, plan, state, detail, started_at_unix_ns FROM study_rounds
                 WHERE study_id = ?1 ORDER BY round DESC LIMIT 1",
                &args![study_id],
            )
            .and_then(|r| r.as_ref().map(read).transpose())
            .map_err(|e| self.err("reading the study's reboots", e))
    }

    /// Start a new round of reboots with `plan`; its number.
    pub fn start_round(&self, study_id: i64, plan: &str) -> Result<i64> {
        let round = self
            .study_round(study_id)?
            .map(|r| r.round + 1)
            .unwrap_or(1);
        let now = now_unix_ns();
        self.db()
            .execute(
                "INSERT INTO study_rounds (study_id, round, plan, state, started_at_unix_ns,
                     updated_at_unix_ns) VALUES (?1, ?2, ?3, 'active', ?4, ?4)",
                &args![study_id, round, plan, now],
            )
            .map_err(|e| self.err("recording the study's reboots", e))?;
        Ok(round)
    }

    /// Set where a round stands.
    pub fn set_round_state(
        &self,
        study_id: i64,
        round: i64,
        state: RoundState,
        detail: Option<&str>,
    ) -> Result<()> {
        self.db()
            .execute(
                "UPDATE study_rounds SET state = ?3, detail = ?4, updated_at_unix_ns = ?5
                 WHERE study_id = ?1 AND round = ?2",
                &args![study_id, round, state.name(), detail, now_unix_ns()],
            )
            .map(|_| ())
            .map_err(|e| self.err("recording the study's reboots", e))
    }

    /// The boots of a study (of one round, or of all), oldest first.
    pub fn study_boots(&self, study_id: i64, round: Option<i64>) -> Result<Vec<BootRow>> {
        const SELECT: &str = "SELECT id, round, config, target, state, detail, boot_id,
                asked_at_unix_ns, ended_at_unix_ns FROM study_boots WHERE study_id = ?1";
        let rows = match round {
            Some(r) => self.db().query(
                &format!("{SELECT} AND round = ?2 ORDER BY id"),
                &args![study_id, r],
            ),
            None => self
                .db()
                .query(&format!("{SELECT} ORDER BY id"), &args![study_id]),
        };
        rows.and_then(|rows| rows.iter().map(read_boot).collect())
            .map_err(|e| self.err("reading the study's boots", e))
    }

    /// Record a boot asked for (before it is arranged); its id.
    pub fn ask_boot(
        &self,
        study_id: i64,
        round: i64,
        config: &str,
        target: &str,
        boot_id: &str,
    ) -> Result<i64> {
        self.db()
            .query_one(
                "INSERT INTO study_boots (study_id, round, config, target, state, boot_id,
                     asked_at_unix_ns) VALUES (?1, ?2, ?3, ?4, 'asked', ?5, ?6) RETURNING id",
                &args![study_id, round, config, target, boot_id, now_unix_ns()],
            )
            .and_then(|r| r.get(0))
            .map_err(|e| self.err("recording a boot", e))
    }

    /// Record a configuration that cannot be booted, without a reboot.
    pub fn fail_boot(
        &self,
        study_id: i64,
        round: i64,
        config: &str,
        boot_id: &str,
        why: &str,
    ) -> Result<()> {
        let id = self.ask_boot(study_id, round, config, "", boot_id)?;
        self.end_boot(id, BootState::Failed, Some(why))
    }

    /// Record what became of a boot.
    pub fn end_boot(&self, id: i64, state: BootState, detail: Option<&str>) -> Result<()> {
        self.db()
            .execute(
                "UPDATE study_boots SET state = ?2, detail = ?3, ended_at_unix_ns = ?4
                 WHERE id = ?1",
                &args![id, state.name(), detail, now_unix_ns()],
            )
            .map(|_| ())
            .map_err(|e| self.err("recording a boot", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_util::TempStore;

    #[test]
    fn rounds_and_boots_round_trip() {
        let t = TempStore::new("boots");
        let s = Store::open(&t.db()).unwrap();
        assert!(s.study_round(7).unwrap().is_none());
        assert_eq!(s.start_round(7, "{\"a\":1}").unwrap(), 1);
        let b = s.ask_boot(7, 1, "kernel rt", "{}", "boot-a").unwrap();
        s.end_boot(b, BootState::Arrived, None).unwrap();
        s.fail_boot(7, 1, "kernel 9*", "boot-b", "no such kernel")
            .unwrap();
        s.set_round_state(7, 1, RoundState::Done, Some("back home"))
            .unwrap();
        assert_eq!(s.start_round(7, "{}").unwrap(), 2);
        let r = s.study_round(7).unwrap().unwrap();
        assert_eq!((r.round, r.state), (2, RoundState::Active));
        let all = s.study_boots(7, None).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].state, BootState::Arrived);
        assert_eq!(all[1].state, BootState::Failed);
        assert_eq!(all[1].detail.as_deref(), Some("no such kernel"));
        assert!(s.study_boots(7, Some(2)).unwrap().is_empty());
        assert!(s.study_boots(8, None).unwrap().is_empty());
    }
}
