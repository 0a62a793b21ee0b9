//! Every system fact rtscope knows, gathered once below a [`SysRoot`].
//! `doctor` judges these and the run fingerprint records them: both read
//! this one struct, so a fact is never found two ways.

use super::board::{self, Board};
use super::cmdline::{self, BootOptions};
use super::cpufreq::{self, CpuFreq};
use super::cpuidle::{self, CpuIdle, IdleState};
use super::irq::{self, Irq};
use super::kernel::{self, KernelConfig, Preemption, Uname};
use super::limits::{self, Limits};
use super::memory::{self, Memory};
use super::raspberrypi::{self, RaspberryPi};
use super::rcu::{self, Rcu};
use super::sched::{self, Sched};
use super::timers::{self, Timers};
use super::topology::{self, Smt};
use super::tuning::{self, Tuning};
use super::watchdog::{self, Watchdogs};
use super::{SysRoot, cpu, virt};

/// Per-CPU facts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuFacts {
    pub cpu: usize,
    pub freq: Option<CpuFreq>,
    pub idle_states: Vec<IdleState>,
    /// Hardware threads of this CPU's core, itself included.
    pub siblings: Vec<usize>,
    /// Its core, package and NUMA node, where sysfs says.
    pub place: topology::Place,
}

#[derive(Clone, Debug)]
pub struct Facts {
    pub uname: Uname,
    pub config: Option<KernelConfig>,
    pub preemption: Preemption,
    pub boot: BootOptions,
    pub timers: Timers,
    pub rcu: Rcu,
    pub sched: Sched,
    pub cpu_model: String,
    /// The architecture, the device tree's model and the cores.
    pub board: Board,
    /// Firmware state and boot files, on a Raspberry Pi only.
    pub raspberry_pi: Option<RaspberryPi>,
    pub online: Vec<usize>,
    pub offline: Vec<usize>,
    /// `/sys/devices/system/cpu/isolated` (isolcpus in force).
    pub kernel_isolated: Option<Vec<usize>>,
    pub cpus: Vec<CpuFacts>,
    pub cpuidle: CpuIdle,
    pub smt: Smt,
    pub irqs: Vec<Irq>,
    pub default_irq_affinity: Option<Vec<usize>>,
    pub irqbalance_pids: Vec<u32>,
    pub memory: Memory,
    pub limits: Limits,
    pub virtualization: String,
    pub watchdogs: Watchdogs,
    pub tuning: Option<Tuning>,
    /// Value held now on /dev/cpu_dma_latency, in us (root only).
    pub cpu_dma_latency_us: Option<i64>,
}

/// Read `/dev/cpu_dma_latency` (a native-endian 32-bit value; root only).
pub fn cpu_dma_latency_us(root: &SysRoot) -> Option<i64> {
    let b = root.read_bytes("/dev/cpu_dma_latency")?;
    let arr: [u8; 4] = b.get(..4)?.try_into().ok()?;
    Some(i32::from_ne_bytes(arr) as i64)
}

impl Facts {
    pub fn gather(root: &SysRoot) -> Facts {
        let uname = kernel::uname(root);
        let config = kernel::config(root, &uname.release);
        let boot = cmdline::boot_options(root);
        let preemption = kernel::preemption(root, &uname.version, config.as_ref(), &boot.raw);
        let online = cpu::online_cpus(root).unwrap_or_default();
        let cpus: Vec<CpuFacts> = online
            .iter()
            .map(|&c| CpuFacts {
                cpu: c,
                freq: cpufreq::cpufreq(root, c),
                idle_states: cpuidle::states(root, c),
                siblings: topology::siblings(root, c),
                place: topology::place(root, c),
            })
            .collect();
        let board = board::board(root, &uname.machine);
        let raspberry_pi = board
            .is_raspberry_pi()
            .then(|| raspberrypi::raspberry_pi(root, board.model.as_deref().unwrap_or("")));
        let threads_per_core = cpus
            .iter()
            .map(|c| c.siblings.len() as u32)
            .max()
            .unwrap_or(1);
        Facts {
            timers: timers::timers(root, config.as_ref()),
            rcu: rcu::rcu(config.as_ref(), &boot, &online),
            sched: sched::sched(root, config.as_ref(), &boot),
            cpu_model: cpu::model_name(root),
            board,
            raspberry_pi,
            offline: cpu::offline_cpus(root),
            kernel_isolated: root.read_cpus("/sys/devices/system/cpu/isolated"),
            cpus,
            cpuidle: cpuidle::cpuidle(root),
            smt: topology::smt(root, threads_per_core),
            irqs: irq::irqs(root),
            default_irq_affinity: irq::default_affinity(root),
            irqbalance_pids: irq::irqbalance_pids(root),
            memory: memory::memory(root),
            limits: limits::limits(root),
            virtualization: virt::virtualization(root),
            watchdogs: watchdog::watchdogs(root),
            tuning: tuning::tuning(root),
            cpu_dma_latency_us: cpu_dma_latency_us(root),
            online,
            uname,
            config,
            preemption,
            boot,
        }
    }

    pub fn cpu(&self, cpu: usize) -> Option<&CpuFacts> {
        self.cpus.iter().find(|c| c.cpu == cpu)
    }
}
