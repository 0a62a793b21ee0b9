//! Finding runs by reference: a run record file (`*.json`) today; ids in
//! the store once it exists. Every command that takes `RUN…` resolves it
//! here.

use crate::record::RunRecord;
use anyhow::{Context, Result, bail};
use std::path::Path;

/// Load the run that `reference` names.
pub fn load(reference: &str) -> Result<RunRecord> {
    let path = Path::new(reference);
    if path.is_file() {
        return load_file(path);
    }
    bail!("no run '{reference}': give the path of a run record (.json)")
}

/// Read and check a run record file.
pub fn load_file(path: &Path) -> Result<RunRecord> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let rec: RunRecord = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an rtscope run record", path.display()))?;
    rec.validate()
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("{}", path.display()))?;
    Ok(rec)
}
