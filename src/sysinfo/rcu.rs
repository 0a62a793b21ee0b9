//! RCU facts: preemptible RCU, priority boosting of readers (RCU_BOOST),
//! and callback offloading (RCU_NOCB_CPU, `rcu_nocbs=`), which keeps RCU
//! callback work off the CPUs that run real-time work.

use super::cmdline::BootOptions;
use super::kernel::KernelConfig;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rcu {
    pub preempt_rcu: Option<bool>,
    pub boost: Option<bool>,
    /// CONFIG_RCU_NOCB_CPU: offloading is possible.
    pub nocb_config: Option<bool>,
    /// CONFIG_RCU_NOCB_CPU_DEFAULT_ALL: every CPU offloaded unless told.
    pub nocb_default_all: Option<bool>,
    /// CPUs whose callbacks are offloaded, from `rcu_nocbs=` (or every
    /// online CPU with DEFAULT_ALL, or the nohz_full CPUs, which imply it).
    pub nocb_cpus: Option<Vec<usize>>,
}

pub fn rcu(config: Option<&KernelConfig>, boot: &BootOptions, online: &[usize]) -> Rcu {
    let flag = |key: &str| config.map(|c| c.enabled(key));
    let nocb_default_all = flag("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL");
    let mut nocb_cpus = match boot.rcu_nocbs.as_deref() {
        // `rcu_nocbs` without a list offloads nothing by itself but lets
        // CPUs be offloaded at run time.
        Some("") => Some(Vec::new()),
        other => BootOptions::cpus_of(other, online),
    };
    if nocb_default_all == Some(true) && nocb_cpus.is_none() {
        nocb_cpus = Some(online.to_vec());
    }
    if let Some(nohz) = BootOptions::cpus_of(boot.nohz_full.as_deref(), online) {
        let mut all = nocb_cpus.unwrap_or_default();
        all.extend(nohz);
        all.sort_unstable();
        all.dedup();
        nocb_cpus = Some(all);
    }
    Rcu {
        preempt_rcu: flag("CONFIG_PREEMPT_RCU"),
        boost: flag("CONFIG_RCU_BOOST"),
        nocb_config: flag("CONFIG_RCU_NOCB_CPU"),
        nocb_default_all,
        nocb_cpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nocbs_from_cmdline_default_all_and_nohz_full() {
        let cfg = KernelConfig::parse(
            "CONFIG_RCU_NOCB_CPU=y\n# CONFIG_RCU_BOOST is not set\n",
            "c",
        );
        let r = rcu(
            Some(&cfg),
            &BootOptions::parse("rcu_nocbs=1-2"),
            &[0, 1, 2, 3],
        );
        assert_eq!(r.nocb_cpus, Some(vec![1, 2]));
        assert_eq!(r.boost, Some(false));
        let r = rcu(
            Some(&cfg),
            &BootOptions::parse("nohz_full=3"),
            &[0, 1, 2, 3],
        );
        assert_eq!(r.nocb_cpus, Some(vec![3]));
        let all = KernelConfig::parse("CONFIG_RCU_NOCB_CPU_DEFAULT_ALL=y\n", "c");
        let r = rcu(Some(&all), &BootOptions::parse(""), &[0, 1]);
        assert_eq!(r.nocb_cpus, Some(vec![0, 1]));
        let r = rcu(None, &BootOptions::parse(""), &[0, 1]);
        assert_eq!((r.nocb_cpus, r.boost), (None, None));
    }
}
