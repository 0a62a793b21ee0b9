//! The Prometheus endpoint: `--metrics ADDR:PORT` serves `/metrics` while
//! a measurement runs (measure, monitor, study).
//!
//! Layout: `text` (the exposition text of one moment, pure), `auth` (the
//! bearer token or basic credentials read from `--metrics-auth`),
//! `server` (a strict, minimal HTTP/1.x server on std::net: one
//! accepting thread of its own, a short-lived thread per connection, at
//! most 64, with deadlines), `observer` (an engine
//! [`crate::engine::Observer`] that renders the text on the control
//! thread once a second and hands it to the server).
//!
//! Never runs on a measuring thread and never makes one wait: the
//! measuring threads only write their atomics; the control thread reads
//! them and swaps a finished text into a mutex the server reads.

pub mod auth;
pub mod observer;
pub mod server;
pub mod text;

pub use auth::Auth;
pub use observer::MetricsObserver;
pub use server::{Feed, MetricsServer};

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use thiserror::Error;

/// Why the endpoint could not be set up.
#[derive(Debug, Error)]
pub enum MetricsError {
    #[error("--metrics {addr}: cannot listen there ({source}){hint}")]
    Bind {
        addr: SocketAddr,
        source: io::Error,
        hint: &'static str,
    },
    #[error("--metrics-auth {path}: {why}")]
    AuthFile { path: PathBuf, why: String },
    #[error("could not start the metrics server thread: {0}")]
    Spawn(io::Error),
}

/// `--metrics` given something that is not an address to listen on.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "'{0}' is not ADDR:PORT (e.g. 127.0.0.1:9632, [::1]:9632, 0.0.0.0:9632, or a bare port for loopback)"
)]
pub struct BadAddr(pub String);

/// Parse `--metrics`: `ADDR:PORT`, `[V6]:PORT`, `localhost:PORT`, or a
/// bare `PORT` (loopback).
pub fn parse_addr(s: &str) -> Result<SocketAddr, BadAddr> {
    let s = s.trim();
    let bad = || BadAddr(s.to_string());
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = s.strip_prefix("localhost:") {
        let port = port.parse::<u16>().map_err(|_| bad())?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse::<SocketAddr>().map_err(|_| bad())
}

/// The port Prometheus-style exporters of rtscope use by default in the
/// docs and examples (not reserved anywhere; any port works).
pub const EXAMPLE_PORT: u16 = 9632;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_addr("9632").unwrap().to_string(), "127.0.0.1:9632");
        assert_eq!(
            parse_addr("localhost:80").unwrap().to_string(),
            "127.0.0.1:80"
        );
        assert_eq!(
            parse_addr("0.0.0.0:9632").unwrap().to_string(),
            "0.0.0.0:9632"
        );
        assert_eq!(parse_addr("[::1]:9").unwrap().to_string(), "[::1]:9");
        for bad in ["", "host:", "1.2.3.4", "1.2.3.4:99999", "a:b", ":80x"] {
            assert!(parse_addr(bad).is_err(), "{bad}");
        }
    }
}
