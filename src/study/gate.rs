//! `--fail-if` gates for CI: `[KEY=VALUE,...:]METRIC>LIMIT`, e.g.
//! `policy=fifo,timer=abs:max>200us` (the cells where policy is fifo and
//! timer is abs), `p99.99>50us` (every cell). Metrics: p99, p99.99, max,
//! avg (times: a bare number is in µs) and missed (a count). A gate fails
//! when a matching cell's merged value is above the limit; a gate that
//! matches no cell with results is an error, not a pass. Pure.

use super::results::{CellResult, Metric};
use crate::units::parse_micros_ns;
use thiserror::Error;

/// Why a gate was refused.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GateError {
    /// The text is not a gate (`why` says where it goes wrong).
    #[error(
        "--fail-if '{text}': {why} (write [KEY=VALUE,...:]METRIC>LIMIT, e.g. policy=fifo:max>200us; metrics p99, p99.99, max, avg, missed)"
    )]
    Syntax { text: String, why: String },
    /// No cell with results matches the gate: not a pass.
    #[error(
        "--fail-if '{0}' selects no cell with results: check its KEY=VALUE against `rtscope study status`"
    )]
    NoCell(String),
}

/// One `--fail-if` (in serde: its text, read again by [`Gate::parse`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Gate {
    pub text: String,
    pub selector: Vec<(String, String)>,
    pub metric: Metric,
    /// In ns for times, a count for `missed`.
    pub limit: f64,
}

/// One cell held against one gate.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub gate: String,
    pub cell: String,
    pub value: f64,
    pub failed: bool,
}

impl TryFrom<String> for Gate {
    type Error = GateError;
    fn try_from(text: String) -> Result<Gate, GateError> {
        Gate::parse(&text)
    }
}

impl From<Gate> for String {
    fn from(gate: Gate) -> String {
        gate.text
    }
}

impl Gate {
    pub fn parse(text: &str) -> Result<Gate, GateError> {
        let bad = |why: &str| GateError::Syntax {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (sel, cond) = match text.rsplit_once(':') {
            Some((s, c)) => (s, c),
            None => ("", text),
        };
        let (m, limit) = cond.split_once('>').ok_or_else(|| bad("no '>'"))?;
        let metric = Metric::parse(m.trim()).ok_or_else(|| bad("unknown metric"))?;
        let limit = limit.trim();
        let limit = if metric.is_time() {
            parse_micros_ns(limit).map_err(|e| bad(&e.to_string()))? as f64
        } else {
            limit
                .parse::<u64>()
                .map_err(|_| bad("missed takes a whole number"))? as f64
        };
        let mut selector = Vec::new();
        for part in sel.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad(&format!("'{part}' is not KEY=VALUE")))?;
            selector.push((k.trim().replace('_', "-"), v.trim().to_string()));
        }
        Ok(Gate {
            text: text.to_string(),
            selector,
            metric,
            limit,
        })
    }

    /// This gate against every cell it selects that has results.
    pub fn apply(&self, cells: &[CellResult]) -> Result<Vec<Check>, GateError> {
        let checks: Vec<Check> = cells
            .iter()
            .filter(|c| c.cell.matches(&self.selector))
            .filter_map(|c| {
                c.metric(self.metric).map(|value| Check {
                    gate: self.text.clone(),
                    cell: c.cell.label(),
                    value,
                    failed: value > self.limit,
                })
            })
            .collect();
        if checks.is_empty() {
            return Err(GateError::NoCell(self.text.clone()));
        }
        Ok(checks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::matrix::Cell;
    use crate::study::results::Merged;
    use crate::study::spec::Value;

    fn cell(policy: &str, max_ns: u64) -> CellResult {
        CellResult {
            cell: Cell {
                index: 0,
                choice: vec![("policy".into(), Value::Text(policy.into()))],
            },
            runs: vec![],
            planned: 1,
            interrupted: 0,
            waiting: None,
            failure: None,
            merged: Merged {
                samples: 10,
                max_ns: Some(max_ns),
                ..Default::default()
            },
            histogram: None,
        }
    }

    #[test]
    fn gates_select_cells_and_compare() {
        let g = Gate::parse("policy=fifo:max>200us").unwrap();
        assert_eq!(g.limit, 200_000.0);
        let cells = [cell("fifo", 250_000), cell("other", 900_000)];
        let c = g.apply(&cells).unwrap();
        assert_eq!(c.len(), 1);
        assert!(c[0].failed);
        assert_eq!(c[0].cell, "policy=fifo");
        let all = Gate::parse("max>1ms").unwrap().apply(&cells).unwrap();
        assert!(all.iter().all(|c| !c.failed));
        assert_eq!(Gate::parse("missed>0").unwrap().limit, 0.0);
        assert_eq!(
            Gate::parse("policy=rr:max>1ms").unwrap().apply(&cells),
            Err(GateError::NoCell("policy=rr:max>1ms".into()))
        );
        for bad in [
            "max",
            "max>abc",
            "jitter>1ms",
            "policy:max>1ms",
            "missed>1.5",
        ] {
            assert!(Gate::parse(bad).is_err(), "{bad}");
        }
    }
}
