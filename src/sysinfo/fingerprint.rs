//! The system fingerprint saved with every run: what the kernel and CPUs
//! were when the numbers were taken.

use super::{SysRoot, cpu, kernel};
use crate::record::Fingerprint;

/// Take the fingerprint of the system below `root`.
pub fn take(root: &SysRoot) -> Fingerprint {
    let u = kernel::uname(root);
    let cmdline = root.read("/proc/cmdline").unwrap_or_default();
    let config = kernel::config(root, &u.release);
    let p = kernel::preemption(root, &u.version, config.as_ref(), &cmdline);
    Fingerprint {
        hostname: u.nodename,
        kernel_release: u.release,
        kernel_version: u.version,
        machine: u.machine,
        preemption_model: p.model,
        preempt_dynamic_mode: p.dynamic_mode,
        preemption_evidence: p.evidence,
        cpu_model: cpu::model_name(root),
        cpus_online: cpu::online_cpus(root).map(|c| c.len() as u32).unwrap_or(0),
        cmdline,
        extra: Default::default(),
    }
}
