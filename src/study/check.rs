//! Everything a study file can be refused for, found before anything
//! runs: every option and value as `measure` would take it, then every
//! cell as a whole (`itimer` with several threads, a load that does not
//! exist, CPUs this machine lacks), each mistake named by file, line and
//! key. Touches nothing on the system.

use super::Options;
use super::matrix::{self, Cell};
use super::spec::{KERNEL_KEY, Spec, SpecError};

/// The line and key to blame for a whole cell's refusal: the first of the
/// cell's options that the message names (`--timer ...`), the matrix's
/// first, else the top of the file.
fn blame(spec: &Spec, cell: &Cell, message: &str) -> (usize, Option<String>) {
    let named = |k: &str| {
        message.contains(&format!("--{k} "))
            || message.contains(&format!("--{k}:"))
            || message.contains(&format!("--{k},"))
            || message.ends_with(&format!("--{k}"))
    };
    let keys = cell
        .choice
        .iter()
        .map(|(k, _)| k.as_str())
        .chain(spec.fixed.iter().map(|s| s.key.as_str()));
    for k in keys {
        if named(k)
            && let Some(line) = spec.line_of(k)
        {
            return (line, Some(k.to_string()));
        }
    }
    match spec.matrix.first() {
        Some(d) => (d.line, Some(d.key.clone())),
        None => (1, None),
    }
}

/// Where a key is shown in messages: `matrix.policy`, `fixed.load`.
fn shown(spec: &Spec, key: &str) -> String {
    if key == KERNEL_KEY && spec.fixed.iter().all(|s| s.key != key) {
        return key.to_string();
    }
    if spec.matrix.iter().any(|d| d.key == key) {
        format!("matrix.{key}")
    } else {
        format!("fixed.{key}")
    }
}

/// Check `spec` (read from `file`) against what `measure` accepts.
pub fn check(spec: &Spec, file: &str, options: &dyn Options) -> Result<(), SpecError> {
    let err = |line: usize, key: &str, message: String| SpecError {
        file: file.to_string(),
        line,
        key: Some(shown(spec, key)),
        message,
    };
    for s in &spec.fixed {
        if s.key == KERNEL_KEY {
            crate::sysinfo::kernel_match::check(&s.value.to_string())
                .map_err(|m| err(s.line, &s.key, m))?;
            continue;
        }
        options
            .check_key(&s.key)
            .and_then(|()| options.check(&s.key, &s.value))
            .map_err(|m| err(s.line, &s.key, m))?;
    }
    for d in &spec.matrix {
        if d.key != KERNEL_KEY {
            options
                .check_key(&d.key)
                .map_err(|m| err(d.line, &d.key, m))?;
        }
        for v in &d.values {
            if d.key == KERNEL_KEY {
                crate::sysinfo::kernel_match::check(&v.to_string())
                    .map_err(|m| err(d.line, &d.key, m))?;
                continue;
            }
            options
                .check(&d.key, v)
                .map_err(|m| err(d.line, &d.key, format!("value '{v}': {m}")))?;
        }
    }
    for cell in matrix::cells(spec) {
        let settings = cell.settings(&spec.fixed);
        if let Err(m) = options.request(&settings, spec.duration_ns, cell.label(), &[]) {
            let (line, key) = blame(spec, &cell, &m);
            return Err(SpecError {
                file: file.to_string(),
                line,
                key: key.map(|k| shown(spec, &k)),
                message: format!("cell '{}': {m}", cell.label()),
            });
        }
    }
    Ok(())
}
