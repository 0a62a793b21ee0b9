//! Scheduler knobs: real-time throttling (`sched_rt_runtime_us` out of
//! `sched_rt_period_us`), and the heavy debug options of the kernel
//! configuration that slow every path real-time work goes through. A debug
//! option built in is not always a debug option acting: some cost only
//! once a boot parameter turns them on (page poisoning, DEBUG_PAGEALLOC,
//! kmemleak) or while a tracer is selected (the wakeup and function graph
//! tracers); [`assess`] tells those apart, on its inputs.

use super::SysRoot;
use super::cmdline::BootOptions;
use super::kernel::KernelConfig;
use super::tracing::{self, Tracers};

pub const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
pub const RT_PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sched {
    /// -1: no throttling.
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// The heavy debug options built into the kernel, and which act.
    pub debug: DebugOptions,
}

/// When a debug option built into the kernel costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Whenever it is built in.
    Always,
    /// Only when the boot parameter `param` turns it on (a boolean as
    /// the kernel reads it: 1/0, y/n, on/off); `default` when not given.
    Boot {
        param: &'static str,
        default: BootDefault,
    },
    /// Only while one of `tracers` is selected in tracefs, provided the
    /// kernel patches tracing in at run time: built without the option
    /// `needs` (CONFIG_DYNAMIC_FTRACE), it costs always.
    Tracer {
        tracers: &'static [&'static str],
        needs: Option<&'static str>,
    },
}

/// Whether a boot-gated option is on when its parameter is not given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootDefault {
    Off,
    /// On when this option of the configuration is `y`.
    OnWith(&'static str),
    /// On unless this option of the configuration is `y`.
    OnUnless(&'static str),
}

/// A kernel option known to add latency to locking, scheduling, memory
/// or interrupt paths (each is meant for debugging kernels, not for
/// measuring them), and when it does.
#[derive(Clone, Copy, Debug)]
pub struct DebugOption {
    pub key: &'static str,
    pub gate: Gate,
}

const fn always(key: &'static str) -> DebugOption {
    DebugOption {
        key,
        gate: Gate::Always,
    }
}

const fn boot(key: &'static str, param: &'static str, default: BootDefault) -> DebugOption {
    DebugOption {
        key,
        gate: Gate::Boot { param, default },
    }
}

pub const HEAVY_DEBUG_OPTIONS: &[DebugOption] = &[
    always("CONFIG_LOCKDEP"),
    always("CONFIG_PROVE_LOCKING"),
    always("CONFIG_DEBUG_LOCK_ALLOC"),
    always("CONFIG_LOCK_STAT"),
    always("CONFIG_DEBUG_PREEMPT"),
    always("CONFIG_DEBUG_ATOMIC_SLEEP"),
    always("CONFIG_DEBUG_OBJECTS"),
    boot(
        "CONFIG_DEBUG_PAGEALLOC",
        "debug_pagealloc",
        BootDefault::OnWith("CONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT"),
    ),
    boot(
        "CONFIG_DEBUG_KMEMLEAK",
        "kmemleak",
        BootDefault::OnUnless("CONFIG_DEBUG_KMEMLEAK_DEFAULT_OFF"),
    ),
    always("CONFIG_DEBUG_VM"),
    always("CONFIG_KASAN"),
    always("CONFIG_KCSAN"),
    always("CONFIG_KMSAN"),
    always("CONFIG_UBSAN"),
    always("CONFIG_SLUB_DEBUG_ON"),
    boot("CONFIG_PAGE_POISONING", "page_poison", BootDefault::Off),
    // Both hook every preempt or interrupt toggle (TRACE_PREEMPT_TOGGLE,
    // TRACE_IRQFLAGS), selected or not.
    always("CONFIG_PREEMPT_TRACER"),
    always("CONFIG_IRQSOFF_TRACER"),
    DebugOption {
        key: "CONFIG_SCHED_TRACER",
        gate: Gate::Tracer {
            tracers: &["wakeup", "wakeup_rt", "wakeup_dl"],
            needs: None,
        },
    },
    DebugOption {
        key: "CONFIG_FUNCTION_GRAPH_TRACER",
        gate: Gate::Tracer {
            tracers: &["function_graph"],
            needs: Some("CONFIG_DYNAMIC_FTRACE"),
        },
    },
    always("CONFIG_DEBUG_RT_MUTEXES"),
    always("CONFIG_DEBUG_SPINLOCK"),
    always("CONFIG_DEBUG_MUTEXES"),
    always("CONFIG_RCU_TORTURE_TEST"),
];

/// Memory initialisation that costs on every allocation or free, built
/// into every kernel since 5.3: the boot parameter and the option that
/// makes it on by default.
const MEMORY_INIT: &[(&str, &str)] = &[
    ("init_on_alloc", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON"),
    ("init_on_free", "CONFIG_INIT_ON_FREE_DEFAULT_ON"),
];

/// A costly option acting now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Acting {
    /// The option (`CONFIG_PAGE_POISONING`), the parameter
    /// (`init_on_free`) or the tracer (`tracer hwlat`).
    pub what: String,
    /// What turned it on (`page_poison=1 on the kernel command line`).
    pub by: String,
    /// How to turn it off.
    pub fix: String,
}

/// The heavy debug options of a kernel, by whether they cost now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DebugOptions {
    /// Built in, costing whenever built in.
    pub always: Vec<String>,
    /// Turned on: by a boot parameter, the build's default or a tracer.
    pub acting: Vec<Acting>,
    /// Built in and idle: (option, what would turn it on).
    pub idle: Vec<(String, String)>,
    /// Built in, whether acting unknown: (option, why unknown).
    pub unknown: Vec<(String, String)>,
    /// init_on_alloc / init_on_free on by the build's default (a
    /// hardening choice of the distribution, named but not a debug option).
    pub memory_init_default: Vec<String>,
}

impl DebugOptions {
    /// Something costs now (built in for good, or turned on).
    pub fn costs(&self) -> bool {
        !self.always.is_empty() || !self.acting.is_empty()
    }
}

pub fn sched(root: &SysRoot, config: Option<&KernelConfig>, boot: &BootOptions) -> Sched {
    Sched {
        rt_runtime_us: root.read_i64(RT_RUNTIME),
        rt_period_us: root.read_i64(RT_PERIOD),
        debug: assess(config, boot, &tracing::tracers(root)),
    }
}

/// Which of [`HEAVY_DEBUG_OPTIONS`] built into `config` cost now, given
/// the command line and the tracers selected; and, whatever the
/// configuration, tracers selected and memory initialisation turned on.
pub fn assess(
    config: Option<&KernelConfig>,
    boot: &BootOptions,
    tracers: &Tracers,
) -> DebugOptions {
    let mut d = DebugOptions::default();
    // Tracers some option below stands for (the rest are named alone).
    let mut claimed: Vec<&str> = Vec::new();
    let built = |o: &&DebugOption| config.is_some_and(|c| c.get(o.key) == Some("y"));
    for o in HEAVY_DEBUG_OPTIONS.iter().filter(built) {
        let c = config.expect("filtered on a config");
        match o.gate {
            Gate::Always => d.always.push(o.key.into()),
            Gate::Boot { param, default } => by_boot(&mut d, c, boot, o.key, param, default),
            Gate::Tracer {
                tracers: names,
                needs,
            } => {
                claimed.extend(names);
                by_tracer(&mut d, c, tracers, o.key, names, needs);
            }
        }
    }
    memory_init(&mut d, config, boot);
    if let Tracers::Read(selected) = tracers {
        for s in selected
            .iter()
            .filter(|s| !claimed.contains(&s.tracer.as_str()))
        {
            d.acting.push(Acting {
                what: format!("tracer {}", s.tracer),
                by: format!("current_tracer at {}", s.place),
                fix: format!("echo nop > {}", s.file),
            });
        }
    }
    d
}

/// A boolean as the kernel's `kstrtobool` reads it: 1, y, Y, on are
/// true; 0, n, N, off false; anything else is refused (and the kernel
/// keeps its default).
pub fn kstrtobool(v: &str) -> Option<bool> {
    let b = v.as_bytes();
    match b.first()? {
        b'y' | b'Y' | b'1' => Some(true),
        b'n' | b'N' | b'0' => Some(false),
        b'o' | b'O' => match b.get(1)? {
            b'n' | b'N' => Some(true),
            b'f' | b'F' => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// An option that acts only when the boot parameter `param` (or the
/// build's default) turns it on.
fn by_boot(
    d: &mut DebugOptions,
    c: &KernelConfig,
    boot: &BootOptions,
    key: &str,
    param: &str,
    default: BootDefault,
) {
    let given = boot.param(param);
    let (on, by) = match given.and_then(kstrtobool) {
        Some(on) => (
            on,
            format!("{param}={} on the kernel command line", given.unwrap_or("")),
        ),
        None => match default {
            BootDefault::Off => (false, String::new()),
            BootDefault::OnWith(k) => (
                c.get(k) == Some("y"),
                format!("the build's default ({k}=y)"),
            ),
            BootDefault::OnUnless(k) => (
                c.get(k) != Some("y"),
                format!("the build's default ({k} not set)"),
            ),
        },
    };
    if on {
        let fix = match given {
            Some(v) => format!("remove {param}={v} from the kernel command line"),
            None => format!("boot with {param}=off"),
        };
        d.acting.push(Acting {
            what: key.into(),
            by,
            fix,
        });
    } else {
        d.idle.push((key.into(), format!("until {param}=on")));
    }
}

/// An option that costs only while one of its tracers is selected.
fn by_tracer(
    d: &mut DebugOptions,
    c: &KernelConfig,
    tracers: &Tracers,
    key: &str,
    names: &[&str],
    needs: Option<&str>,
) {
    if let Some(n) = needs
        && c.get(n) != Some("y")
    {
        d.always.push(format!("{key} (without {n})"));
        return;
    }
    let selected = match tracers {
        Tracers::Read(s) => s,
        Tracers::NotMounted => {
            let why = "tracefs is not mounted, and doctor does not mount it";
            return d.unknown.push((key.into(), why.into()));
        }
        Tracers::Unreadable(m) => {
            let why = format!("{m}/current_tracer is not readable: run doctor as root");
            return d.unknown.push((key.into(), why));
        }
    };
    let on: Vec<_> = selected
        .iter()
        .filter(|s| names.contains(&s.tracer.as_str()))
        .collect();
    if on.is_empty() {
        let until = format!("until the {} tracer is selected", names.join(" or "));
        d.idle.push((key.into(), until));
    }
    for s in on {
        d.acting.push(Acting {
            what: key.into(),
            by: format!("the tracer {} selected at {}", s.tracer, s.place),
            fix: format!("echo nop > {}", s.file),
        });
    }
}

/// init_on_alloc / init_on_free: turned on on the command line (acting),
/// or on by the build's default (named apart).
fn memory_init(d: &mut DebugOptions, config: Option<&KernelConfig>, boot: &BootOptions) {
    for &(param, key) in MEMORY_INIT {
        let given = boot.param(param);
        match given.and_then(kstrtobool) {
            Some(true) => d.acting.push(Acting {
                what: param.into(),
                by: format!("{param}={} on the kernel command line", given.unwrap_or("")),
                fix: format!(
                    "remove {param}={} from the kernel command line",
                    given.unwrap_or("")
                ),
            }),
            Some(false) => {}
            None if config.is_some_and(|c| c.get(key) == Some("y")) => {
                d.memory_init_default.push(format!("{param} ({key}=y)"))
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysinfo::tracing::Selected;

    fn config(text: &str) -> KernelConfig {
        KernelConfig::parse(text, "test")
    }

    fn top(tracer: &str) -> Tracers {
        Tracers::Read(vec![Selected {
            tracer: tracer.into(),
            place: "the top level".into(),
            file: "/sys/kernel/tracing/current_tracer".into(),
        }])
    }

    /// Debian 6.1's production kernels: page poisoning and two tracers
    /// built in, none acting.
    const DEBIAN: &str = "CONFIG_PAGE_POISONING=y\nCONFIG_SCHED_TRACER=y\n\
        CONFIG_FUNCTION_GRAPH_TRACER=y\nCONFIG_DYNAMIC_FTRACE=y\n";

    fn names(v: &[(String, String)]) -> Vec<&str> {
        v.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn built_in_and_idle_is_not_acting() {
        let d = assess(
            Some(&config(DEBIAN)),
            &BootOptions::parse("root=/dev/sda quiet"),
            &Tracers::Read(vec![]),
        );
        assert!(!d.costs(), "{d:?}");
        assert_eq!(
            names(&d.idle),
            [
                "CONFIG_PAGE_POISONING",
                "CONFIG_SCHED_TRACER",
                "CONFIG_FUNCTION_GRAPH_TRACER"
            ]
        );
        assert!(d.unknown.is_empty() && d.always.is_empty());
    }

    #[test]
    fn a_boot_parameter_turns_one_on_and_is_named() {
        let cfg = config(DEBIAN);
        let d = assess(
            Some(&cfg),
            &BootOptions::parse("quiet page_poison=1 init_on_free=on"),
            &Tracers::Read(vec![]),
        );
        assert!(d.costs());
        assert_eq!(d.acting.len(), 2, "{d:?}");
        assert_eq!(d.acting[0].what, "CONFIG_PAGE_POISONING");
        assert_eq!(d.acting[0].by, "page_poison=1 on the kernel command line");
        assert_eq!(d.acting[1].what, "init_on_free");
        assert!(d.acting[1].fix.contains("remove init_on_free=on"));
        // Turned off again later on the line: idle.
        let d = assess(
            Some(&cfg),
            &BootOptions::parse("page_poison=1 page_poison=off"),
            &Tracers::Read(vec![]),
        );
        assert!(!d.costs(), "{d:?}");
        // The build's default: DEBUG_PAGEALLOC on unless told off.
        let c = config("CONFIG_DEBUG_PAGEALLOC=y\nCONFIG_DEBUG_PAGEALLOC_ENABLE_DEFAULT=y\n");
        let d = assess(Some(&c), &BootOptions::parse(""), &Tracers::NotMounted);
        assert_eq!(d.acting[0].what, "CONFIG_DEBUG_PAGEALLOC");
        assert!(d.acting[0].by.contains("ENABLE_DEFAULT=y"), "{d:?}");
        assert_eq!(d.acting[0].fix, "boot with debug_pagealloc=off");
        let d = assess(
            Some(&c),
            &BootOptions::parse("debug_pagealloc=0"),
            &Tracers::NotMounted,
        );
        assert!(!d.costs(), "{d:?}");
        // init_on_alloc on by the build: named apart, not acting.
        let c = config("CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y\n");
        let d = assess(Some(&c), &BootOptions::parse(""), &Tracers::NotMounted);
        assert!(!d.costs());
        assert_eq!(
            d.memory_init_default,
            ["init_on_alloc (CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y)"]
        );
    }

    #[test]
    fn a_selected_tracer_turns_its_option_on() {
        let cfg = config(DEBIAN);
        let boot = BootOptions::parse("");
        let d = assess(Some(&cfg), &boot, &top("wakeup_rt"));
        assert_eq!(d.acting.len(), 1, "{d:?}");
        assert_eq!(d.acting[0].what, "CONFIG_SCHED_TRACER");
        assert_eq!(
            d.acting[0].by,
            "the tracer wakeup_rt selected at the top level"
        );
        assert_eq!(
            d.acting[0].fix,
            "echo nop > /sys/kernel/tracing/current_tracer"
        );
        // A tracer no listed option stands for is named alone.
        let d = assess(Some(&cfg), &boot, &top("hwlat"));
        assert_eq!(d.acting[0].what, "tracer hwlat");
        assert_eq!(d.acting[0].by, "current_tracer at the top level");
        assert_eq!(d.idle.len(), 3);
        // tracefs unmounted or unreadable: unknown, not idle.
        let d = assess(Some(&cfg), &boot, &Tracers::NotMounted);
        assert!(!d.costs());
        assert_eq!(
            names(&d.unknown),
            ["CONFIG_SCHED_TRACER", "CONFIG_FUNCTION_GRAPH_TRACER"]
        );
        let d = assess(
            Some(&cfg),
            &boot,
            &Tracers::Unreadable("/sys/kernel/tracing".into()),
        );
        assert!(d.unknown[0].1.contains("run doctor as root"));
        // Without DYNAMIC_FTRACE, every function call pays.
        let c = config("CONFIG_FUNCTION_GRAPH_TRACER=y\n");
        let d = assess(Some(&c), &boot, &Tracers::Read(vec![]));
        assert_eq!(
            d.always,
            ["CONFIG_FUNCTION_GRAPH_TRACER (without CONFIG_DYNAMIC_FTRACE)"]
        );
    }

    #[test]
    fn options_that_cost_whenever_built_in_still_do() {
        let c = config(
            "CONFIG_PROVE_LOCKING=y\nCONFIG_DEBUG_PREEMPT=y\nCONFIG_KASAN=y\nCONFIG_LOCKDEP=m\n",
        );
        let d = assess(
            Some(&c),
            &BootOptions::parse("page_poison=0"),
            &Tracers::Read(vec![]),
        );
        assert_eq!(
            d.always,
            [
                "CONFIG_PROVE_LOCKING",
                "CONFIG_DEBUG_PREEMPT",
                "CONFIG_KASAN"
            ]
        );
        assert!(d.costs());
    }

    #[test]
    fn booleans_as_the_kernel_reads_them() {
        for (v, b) in [
            ("1", Some(true)),
            ("on", Some(true)),
            ("Y", Some(true)),
            ("0", Some(false)),
            ("off", Some(false)),
            ("n", Some(false)),
            ("", None),
            ("o", None),
            ("2", None),
        ] {
            assert_eq!(kstrtobool(v), b, "{v}");
        }
    }
}
