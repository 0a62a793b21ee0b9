//! Interrupts: every IRQ with its name, the CPUs it may be sent to
//! (`smp_affinity_list`), the CPU it is sent to now (`effective_affinity_list`)
//! and how often each CPU took it; the default affinity of new IRQs; and
//! whether irqbalance runs (it rewrites affinities every few seconds).

use super::SysRoot;
use super::process;
use crate::units::parse_cpu_mask;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Irq {
    pub irq: u32,
    /// Chip, hardware IRQ and handler names from `/proc/interrupts`.
    pub desc: String,
    pub affinity: Option<Vec<usize>>,
    pub effective: Option<Vec<usize>>,
    /// Interrupts taken, per CPU (index = CPU column).
    pub counts: Vec<(usize, u64)>,
}

impl Irq {
    /// The handler name (last word of the description).
    pub fn name(&self) -> &str {
        self.desc.split_whitespace().last().unwrap_or("")
    }
}

pub const DEFAULT_AFFINITY: &str = "/proc/irq/default_smp_affinity";

pub fn affinity_path(irq: u32) -> String {
    format!("/proc/irq/{irq}/smp_affinity_list")
}

/// One numbered row of `/proc/interrupts`: IRQ, `(cpu, count)` pairs, and
/// the rest of the line.
pub type InterruptRow = (u32, Vec<(usize, u64)>, String);

/// Parse `/proc/interrupts`: per numbered IRQ, its per-CPU counts and the
/// rest of the line.
pub fn parse_interrupts(text: &str) -> Vec<InterruptRow> {
    let mut lines = text.lines();
    let cpus: Vec<usize> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        let Some((head, rest)) = line.split_once(':') else {
            continue;
        };
        let Ok(irq) = head.trim().parse::<u32>() else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let mut counts = Vec::new();
        let mut i = 0;
        while i < words.len() && i < cpus.len() {
            match words[i].parse::<u64>() {
                Ok(n) => counts.push((cpus[i], n)),
                Err(_) => break,
            }
            i += 1;
        }
        out.push((irq, counts, words[i..].join(" ")));
    }
    out
}

/// Every IRQ listed in `/proc/irq`, described from `/proc/interrupts`.
pub fn irqs(root: &SysRoot) -> Vec<Irq> {
    let table = parse_interrupts(&root.read("/proc/interrupts").unwrap_or_default());
    root.list("/proc/irq")
        .iter()
        .filter_map(|n| n.parse::<u32>().ok())
        .map(|irq| {
            let row = table.iter().find(|r| r.0 == irq);
            Irq {
                irq,
                desc: row.map(|r| r.2.clone()).unwrap_or_default(),
                counts: row.map(|r| r.1.clone()).unwrap_or_default(),
                affinity: root.read_cpus(&affinity_path(irq)),
                effective: root.read_cpus(&format!("/proc/irq/{irq}/effective_affinity_list")),
            }
        })
        .collect()
}

/// CPUs new IRQs may be sent to (`/proc/irq/default_smp_affinity`).
pub fn default_affinity(root: &SysRoot) -> Option<Vec<usize>> {
    root.read(DEFAULT_AFFINITY)
        .and_then(|m| parse_cpu_mask(&m).ok())
}

/// Running irqbalance daemons.
pub fn irqbalance(root: &SysRoot) -> Vec<process::Task> {
    process::by_name(root, "irqbalance")
        .into_iter()
        .filter(|t| t.state != 'Z')
        .collect()
}

/// Process ids of running irqbalance daemons.
pub fn irqbalance_pids(root: &SysRoot) -> Vec<u32> {
    irqbalance(root).into_iter().map(|t| t.tid).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::FakeTree;

    #[test]
    fn interrupts_table() {
        let text = "           CPU0       CPU1\n  \
             24:          1          0  IO-APIC   5-edge      ACPI:Ged\n \
             36:          0      62411 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n\
             NMI:          0          0   Non-maskable interrupts\n";
        let rows = parse_interrupts(text);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].0, 36);
        assert_eq!(rows[1].1, vec![(0, 0), (1, 62411)]);
        assert!(rows[1].2.ends_with("virtio1-req.0"));
    }

    #[test]
    fn irqs_from_fake_proc() {
        let t = FakeTree::new(&[
            (
                "/proc/interrupts",
                "      CPU0  CPU1\n 9:  5  7  IO-APIC 9-fasteoi acpi\n",
            ),
            ("/proc/irq/9/smp_affinity_list", "0-1\n"),
            ("/proc/irq/9/effective_affinity_list", "1\n"),
            ("/proc/irq/default_smp_affinity", "3\n"),
        ]);
        let v = irqs(&t.root());
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].name(), "acpi");
        assert_eq!(v[0].affinity, Some(vec![0, 1]));
        assert_eq!(v[0].effective, Some(vec![1]));
        assert_eq!(default_affinity(&t.root()), Some(vec![0, 1]));
    }
}
