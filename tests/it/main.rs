//! Integration tests: they run the real `rtscope` binary, as root, for a
//! few seconds at a time, and assert facts (counts, ordering, formats,
//! exit codes, restore), never timings. One test binary; one module per
//! area.

mod arch;
mod browser;
mod cgroup_v2;
mod characterize;
mod compare_noise;
mod completions;
mod cpulock;
mod doctor;
mod explain;
mod import;
mod import_formats;
mod load;
mod measure;
mod measure_explain;
mod metrics;
mod monitor;
#[path = "../common/need.rs"]
mod need;
mod output;
mod package;
mod pi_hook;
mod postgres;
mod remote;
mod report;
mod serve;
mod serve_hostile;
mod serve_routes;
mod setup;
mod skip_rule;
mod sshd;
mod static_binary;
mod store;
mod study;
mod tail;
mod truth;
mod tune;
mod util;
