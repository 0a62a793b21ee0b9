//! The PM QoS request on `/dev/cpu_dma_latency`: writing a 32-bit value
//! keeps CPUs out of idle states whose exit latency exceeds it, for as
//! long as the file stays open. Dropping this closes it and ends the
//! request.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

pub const DEFAULT_PATH: &str = "/dev/cpu_dma_latency";

/// An open PM QoS request.
pub struct CpuDmaLatency {
    _file: File,
}

impl CpuDmaLatency {
    /// Open `path` and request a maximum wake-up latency of `value_us`.
    pub fn hold(path: &Path, value_us: i32) -> io::Result<CpuDmaLatency> {
        let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
        file.write_all(&value_us.to_ne_bytes())?;
        Ok(CpuDmaLatency { _file: file })
    }
}
