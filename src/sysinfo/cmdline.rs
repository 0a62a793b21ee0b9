//! The kernel command line (`/proc/cmdline`) and the boot options that
//! matter for latency: CPU isolation (isolcpus, nohz_full, rcu_nocbs,
//! irqaffinity), idle and C-state limits, preemption, threaded IRQs, SMT,
//! watchdogs.

use super::SysRoot;
use crate::units::parse_cpu_list;

/// Options read from the command line, the last occurrence winning as in
/// the kernel. `None`: not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BootOptions {
    pub raw: String,
    /// `isolcpus=[flags,]CPUS` as given (flags such as nohz, domain,
    /// managed_irq).
    pub isolcpus: Option<String>,
    pub nohz_full: Option<String>,
    pub rcu_nocbs: Option<String>,
    pub irqaffinity: Option<String>,
    /// `idle=` (poll, halt, nomwait).
    pub idle: Option<String>,
    pub intel_idle_max_cstate: Option<String>,
    pub processor_max_cstate: Option<String>,
    /// `cpuidle.off=1`.
    pub cpuidle_off: Option<String>,
    pub preempt: Option<String>,
    /// `threadirqs` present.
    pub threadirqs: bool,
    /// `nosmt` present (or `nosmt=force`).
    pub nosmt: Option<String>,
    pub nowatchdog: bool,
    pub nmi_watchdog: Option<String>,
    pub skew_tick: Option<String>,
    pub transparent_hugepage: Option<String>,
}

/// The words of `cmdline` the kernel takes: everything after a lone `--`
/// goes to init, not the kernel.
pub fn kernel_words(cmdline: &str) -> impl Iterator<Item = &str> {
    cmdline.split_whitespace().take_while(|w| *w != "--")
}

/// A kernel parameter's name in `word` (before `=`), with `-` written `_`
/// (the kernel treats them alike).
pub fn param_name(word: &str) -> String {
    word.split('=').next().unwrap_or(word).replace('-', "_")
}

/// The kernel's parameters on `cmdline`, in order: each name as
/// [`param_name`] writes it and its value after `=`.
pub fn kernel_params(cmdline: &str) -> impl Iterator<Item = (String, Option<&str>)> {
    kernel_words(cmdline).map(|word| (param_name(word), word.split_once('=').map(|(_, v)| v)))
}

impl BootOptions {
    pub fn parse(cmdline: &str) -> BootOptions {
        let mut o = BootOptions {
            raw: cmdline.trim().to_string(),
            ..Default::default()
        };
        for (key, value) in kernel_params(cmdline) {
            let value = value.map(str::to_string);
            match key.as_str() {
                "isolcpus" => o.isolcpus = value,
                "nohz_full" => o.nohz_full = value,
                "rcu_nocbs" => o.rcu_nocbs = value.or(Some(String::new())),
                "irqaffinity" => o.irqaffinity = value,
                "idle" => o.idle = value,
                "intel_idle.max_cstate" => o.intel_idle_max_cstate = value,
                "processor.max_cstate" => o.processor_max_cstate = value,
                "cpuidle.off" => o.cpuidle_off = value,
                "preempt" => o.preempt = value,
                "threadirqs" => o.threadirqs = true,
                "nosmt" => o.nosmt = value.or(Some(String::new())),
                "nowatchdog" => o.nowatchdog = true,
                "nmi_watchdog" => o.nmi_watchdog = value,
                "skew_tick" => o.skew_tick = value,
                "transparent_hugepage" => o.transparent_hugepage = value,
                _ => {}
            }
        }
        o
    }

    /// The value of any kernel parameter `name` as the kernel reads it:
    /// the last occurrence before a lone `--` wins, `-` and `_` alike.
    /// `Some("")` for a flag given without `=`; `None` when not given.
    pub fn param(&self, name: &str) -> Option<&str> {
        let want = name.replace('-', "_");
        kernel_params(&self.raw)
            .filter(|(key, _)| *key == want)
            .last()
            .map(|(_, value)| value.unwrap_or(""))
    }

    /// The CPUs of `isolcpus=`, without its flags.
    pub fn isolcpus_cpus(&self) -> Option<Vec<usize>> {
        let v = self.isolcpus.as_deref()?;
        let cpus = v
            .split(',')
            .filter(|p| p.starts_with(|c: char| c.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join(",");
        parse_cpu_list(&cpus).ok()
    }

    /// CPUs of a plain CPU-list option (`nohz_full`, `rcu_nocbs`,
    /// `irqaffinity`); "all" is expanded to `online`.
    pub fn cpus_of(value: Option<&str>, online: &[usize]) -> Option<Vec<usize>> {
        let v = value?;
        if v == "all" {
            return Some(online.to_vec());
        }
        parse_cpu_list(v).ok()
    }
}

/// Read and parse `/proc/cmdline`.
pub fn boot_options(root: &SysRoot) -> BootOptions {
    BootOptions::parse(&root.read("/proc/cmdline").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isolation_and_idle_options() {
        let o = BootOptions::parse(
            "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=nohz,domain,managed_irq,2-3 \
             nohz-full=2-3 rcu_nocbs=2-3 irqaffinity=0-1 intel_idle.max_cstate=0 \
             processor.max_cstate=1 idle=poll threadirqs nosmt preempt=full -- init=x isolcpus=7",
        );
        assert_eq!(o.isolcpus_cpus(), Some(vec![2, 3]));
        assert_eq!(o.nohz_full.as_deref(), Some("2-3"));
        assert_eq!(o.rcu_nocbs.as_deref(), Some("2-3"));
        assert_eq!(o.irqaffinity.as_deref(), Some("0-1"));
        assert_eq!(o.intel_idle_max_cstate.as_deref(), Some("0"));
        assert_eq!(o.processor_max_cstate.as_deref(), Some("1"));
        assert_eq!(o.idle.as_deref(), Some("poll"));
        assert!(o.threadirqs);
        assert_eq!(o.nosmt.as_deref(), Some(""));
        assert_eq!(o.preempt.as_deref(), Some("full"));
        assert_eq!(BootOptions::cpus_of(Some("all"), &[0, 1]), Some(vec![0, 1]));
    }

    #[test]
    fn any_parameter_by_name() {
        let o = BootOptions::parse("page-poison=0 quiet page_poison=1 -- page_poison=0");
        assert_eq!(o.param("page_poison"), Some("1"), "the last one before --");
        assert_eq!(o.param("quiet"), Some(""));
        assert_eq!(o.param("init_on_free"), None);
    }

    #[test]
    fn nothing_given() {
        let o = BootOptions::parse("quiet splash");
        assert_eq!(o.isolcpus, None);
        assert_eq!(o.isolcpus_cpus(), None);
        assert!(!o.threadirqs);
    }
}
