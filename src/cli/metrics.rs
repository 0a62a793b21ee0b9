//! `--metrics ADDR:PORT`, `--metrics-auth FILE`, `--metrics-linger DUR`:
//! the Prometheus endpoint flags shared by `measure`, `monitor` and
//! `study`, and starting the endpoint before anything is measured (a port
//! in use or an unreadable auth file is exit 2 before the system is
//! touched).

use super::duration;
use crate::metrics::{self, Auth, MetricsServer};
use anyhow::Result;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

fn addr(s: &str) -> Result<SocketAddr, metrics::BadAddr> {
    metrics::parse_addr(s)
}

#[derive(Args, Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics on http://ADDR:PORT/metrics while
    /// measuring: per-CPU latency histograms (buckets 1us..10s, 1-2-5),
    /// wake-ups and missed periods, run and window maximum. A bare PORT
    /// listens on 127.0.0.1 only; give 0.0.0.0:PORT to be reached from
    /// other hosts (then use --metrics-auth). See docs/monitor.md.
    #[arg(long = "metrics", value_name = "ADDR:PORT", value_parser = addr)]
    pub metrics: Option<SocketAddr>,

    /// With --metrics: a file holding `bearer TOKEN` (or a bare token) or
    /// `basic USER:PASSWORD`; scrapes without it get 401. Required in
    /// spirit on a non-loopback address (a warning says the endpoint is
    /// open otherwise).
    #[arg(long = "metrics-auth", value_name = "FILE", requires = "metrics")]
    pub metrics_auth: Option<PathBuf>,

    /// With --metrics: keep serving the final values this long after the
    /// run ends (bare number: seconds; default 0), so that a scraper sees
    /// the exact last counts of a short run.
    #[arg(long = "metrics-linger", value_name = "DUR", default_value = "0", value_parser = duration, requires = "metrics")]
    pub linger_ns: u64,
}

impl MetricsArgs {
    /// Start the endpoint when asked; warn when it is open to the network.
    pub fn start(&self) -> Result<Option<MetricsServer>> {
        let Some(addr) = self.metrics else {
            return Ok(None);
        };
        let auth = match &self.metrics_auth {
            Some(p) => Some(Auth::from_file(p)?),
            None => None,
        };
        if auth.is_none() && !addr.ip().is_loopback() {
            eprintln!(
                "rtscope: warning: the metrics endpoint on {addr} is open to anyone who can reach this host: give --metrics-auth FILE (a token), or listen on 127.0.0.1"
            );
        }
        Ok(Some(MetricsServer::start(addr, auth)?))
    }

    /// After the run: keep the final values up for --metrics-linger.
    pub fn linger(&self, server: &Option<MetricsServer>) {
        if server.is_some() && self.linger_ns > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(self.linger_ns));
        }
    }
}
