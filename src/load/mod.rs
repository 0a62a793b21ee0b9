//! Loads that find the worst case: `rtscope load` and `measure --load`.
//!
//! A *part* is one kind of load (`cpu`, `io`, `hackbench`,
//! `rt-interference`...): one file each, describing itself (name, help,
//! options with ranges) and registered in [`PARTS`]. A *profile* combines
//! parts, each in bursts of its own period or steady; the built-in
//! profiles are TOML files written in the same vocabulary as
//! `--load-file` ([`profile`]).
//!
//! Layout: `part` (the description type and option checking), one file
//! per part, `profile` (TOML and command-line adjustments), `schedule`
//! (bursts drawn from a seed), `plan` (request to checked plan),
//! `supervisor` (the child process that runs a plan and cleans up),
//! `session` (rtscope's side, the handle others use: start, follow, stop,
//! record) over `link` (the supervisor process and its pipes),
//! `event_log` (what happened, when) and `record` (the run record's load
//! section), `cleanup` (what both the supervisor and rtscope do to end a
//! load and remove its traces), `cgroup`, `procs`, `oom`, `achieved`
//! (what the load achieved, from /proc), `event` (supervisor to rtscope
//! messages).
//!
//! Loads never run on the measuring process: every part is a process (or
//! group of processes) started by the supervisor, SCHED_OTHER unless it is
//! real-time on purpose (`rt-interference`).

pub mod achieved;
pub mod cgroup;
pub mod cleanup;
pub mod command;
pub mod cpu;
pub mod event;
pub mod event_log;
pub mod fs;
pub mod hackbench;
pub mod io;
pub mod irq;
pub mod link;
pub mod memory;
pub mod net;
pub mod oom;
pub mod part;
pub mod plan;
pub mod procs;
pub mod profile;
pub mod record;
pub mod rt_interference;
pub mod sched;
pub mod schedule;
pub mod session;
pub mod stress_ng;
pub mod supervisor;

pub use part::Part;
pub use plan::{LoadError, LoadPlan, LoadRequest, prepare};
pub use session::{LoadSession, Verbosity};

/// Every kind of load, in `--list` order.
pub static PARTS: &[&Part] = &[
    &cpu::PART,
    &memory::PART,
    &io::PART,
    &fs::PART,
    &net::PART,
    &sched::PART,
    &irq::PART,
    &hackbench::PART,
    &rt_interference::PART,
    &stress_ng::PART,
    &command::PART,
];

pub fn find_part(name: &str) -> Option<&'static Part> {
    PARTS.iter().copied().find(|p| p.name == name)
}

pub fn part_names() -> String {
    PARTS.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_builds_with_its_defaults() {
        let ctx = part::test_ctx();
        let mut names = std::collections::BTreeSet::new();
        for p in PARTS {
            assert!(names.insert(p.name), "{} registered twice", p.name);
            assert!(!p.help.is_empty());
            for o in p.options {
                assert!(!o.help.is_empty(), "{}.{}", p.name, o.name);
            }
            let required = p.options.iter().any(|o| o.default.is_none());
            if required {
                continue;
            }
            let v = p.check(&Default::default()).unwrap();
            let argv = (p.build)(&v, &ctx).unwrap();
            assert!(!argv.is_empty(), "{}", p.name);
            if let Some(t) = p.tool {
                assert_eq!(argv[0], t.program, "{}", p.name);
            }
        }
    }

    #[test]
    fn stress_ng_parts_run_until_stopped_in_the_scratch_directory() {
        let ctx = part::test_ctx();
        for p in PARTS.iter().filter(|p| p.tool == Some(part::STRESS_NG)) {
            if p.options.iter().any(|o| o.default.is_none()) {
                continue;
            }
            let v = p.check(&Default::default()).unwrap();
            let argv = (p.build)(&v, &ctx).unwrap();
            assert!(
                argv.windows(2).any(|w| w == ["--timeout", "0"]),
                "{}",
                p.name
            );
            assert!(
                argv.windows(2)
                    .any(|w| w[0] == "--temp-path" && w[1] == ctx.scratch.display().to_string()),
                "{}",
                p.name
            );
        }
        // io writes with fsync.
        let v = io::PART.check(&Default::default()).unwrap();
        let argv = (io::PART.build)(&v, &ctx).unwrap();
        assert!(argv.windows(2).any(|w| w == ["--hdd-opts", "fsync"]));
        // net uses the per-process ports.
        let v = net::PART.check(&Default::default()).unwrap();
        let argv = (net::PART.build)(&v, &ctx).unwrap();
        assert!(argv.windows(2).any(|w| w == ["--sock-port", "21000"]));
        assert!(argv.windows(2).any(|w| w == ["--udp-port", "21001"]));
    }
}
