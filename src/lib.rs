//! rtscope: an oscilloscope for real-time Linux. Measures how late
//! periodic real-time threads wake up, the way cyclictest does, and keeps
//! every number honest: histograms that never overflow, missed periods
//! counted and recorded, results written as the run goes.
//!
//! The library holds everything; `src/main.rs` only parses, dispatches
//! and maps errors to exit codes. Code that needs `unsafe_code` (and
//! libc) lives in `sys` alone.
#![deny(unsafe_code)]

pub mod characterization;
pub mod characterize;
pub mod cli;
pub mod cpulock;
pub mod doctor;
pub mod engine;
pub mod explain;
pub mod histogram;
pub mod import;
pub mod input;
pub mod kinds;
pub mod load;
pub mod measure;
pub mod metrics;
pub mod monitor;
pub mod output;
pub mod record;
pub mod redact;
pub mod remote;
pub mod report;
pub mod rng;
pub mod runref;
pub mod serve;
pub mod stated;
pub mod store;
pub mod study;
pub mod sys;
pub mod sysinfo;
pub mod tail;
pub mod text;
pub mod trace;
pub mod tune;
pub mod ui;
pub mod units;

#[cfg(test)]
#[global_allocator]
static ALLOC: sys::alloc_audit::CountingAlloc = sys::alloc_audit::CountingAlloc;
