//! The kernel a cell needs, matched against the running kernel's
//! fingerprint: a preemption model (`rt`, `full`, `voluntary`, `none`,
//! `lazy`; `PREEMPT_RT` and `preempt_rt` mean `rt`) or a release
//! (`6.18.0-rt3`, with `*` as a wildcard: `6.18*`, `*-rt*`). Pure.

use crate::kinds::{Named, PreemptionModel};

/// The running kernel, as far as cells care.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub release: String,
    pub preemption_model: Named<PreemptionModel>,
}

impl Kernel {
    /// This machine's kernel.
    pub fn running() -> Kernel {
        let root = crate::sysinfo::SysRoot::host();
        let fp = crate::sysinfo::fingerprint::take(&root);
        Kernel {
            release: fp.kernel_release,
            preemption_model: fp.preemption_model,
        }
    }

    /// `release (model)`, e.g. `6.18.0-1-amd64 (none)`.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.release, self.preemption_model)
    }
}

/// The preemption model a requirement names, if it names one.
fn model_of(req: &str) -> Option<PreemptionModel> {
    Some(match req.to_ascii_lowercase().as_str() {
        "rt" | "preempt_rt" | "preempt-rt" => PreemptionModel::Rt,
        "full" | "preempt" => PreemptionModel::Full,
        "voluntary" | "preempt_voluntary" => PreemptionModel::Voluntary,
        "none" | "preempt_none" | "server" => PreemptionModel::None,
        "lazy" | "preempt_lazy" => PreemptionModel::Lazy,
        _ => return None,
    })
}

/// `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    if !text.ends_with(last) {
        return false;
    }
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `kernel` is one a cell requiring `req` can run on.
pub fn satisfies(kernel: &Kernel, req: &str) -> bool {
    match model_of(req) {
        Some(m) => kernel.preemption_model.is(m),
        None => glob(req, &kernel.release),
    }
}

/// Whether `req` is a requirement this module understands (every text
/// is: a release pattern; an empty one is not).
pub fn check(req: &str) -> Result<(), String> {
    if req.trim().is_empty() {
        return Err("an empty kernel requirement: name a preemption model (rt, full, voluntary, none, lazy) or a release such as \"6.18*\"".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(release: &str, model: &str) -> Kernel {
        Kernel {
            release: release.into(),
            preemption_model: model.into(),
        }
    }

    #[test]
    fn models_and_their_spellings() {
        let rt = k("6.18.0-rt3", "rt");
        let van = k("6.18.0-1-amd64", "none");
        for r in ["rt", "PREEMPT_RT", "preempt-rt"] {
            assert!(satisfies(&rt, r), "{r}");
            assert!(!satisfies(&van, r), "{r}");
        }
        assert!(satisfies(&van, "none"));
        assert!(!satisfies(&rt, "none"));
    }

    #[test]
    fn releases_with_wildcards() {
        let rt = k("6.18.0-rt3", "rt");
        assert!(satisfies(&rt, "6.18.0-rt3"));
        assert!(satisfies(&rt, "6.18*"));
        assert!(satisfies(&rt, "*-rt*"));
        assert!(satisfies(&rt, "*"));
        assert!(!satisfies(&rt, "6.1*-amd64"));
        assert!(!satisfies(&rt, "6.18"));
        assert!(!satisfies(&k("6.1", "none"), "6.1*6.1"));
        assert!(check("").is_err());
    }
}
