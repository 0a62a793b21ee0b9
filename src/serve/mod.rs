//! `rtscope serve`: a read-only web view of the run store, so that a lab
//! browses its runs in a browser. Pages rendered on the server (the runs
//! list, each run's report, runs compared, the boards), the same data as
//! JSON under `/api/`, optional credentials, and nothing ever written to
//! the store or read from the file system on a request's say.
//!
//! Layout: `server` (the runtime, listening, signals, the layers every
//! request passes: credentials, a deadline, a panic guard), `pages` (the
//! HTML routes), `api` (the JSON routes), `auth` (the credentials check,
//! with `metrics::auth`'s file and constant-time comparison), `query`
//! (query strings and run references parsed strictly, pure), `data` (the
//! store opened read-only, and what the pages and the API read from it,
//! on blocking threads), `reply` (how a failed request is answered),
//! `host` (the `Host` header checked against the server's names), `conn`
//! (the accept loop and what bounds each connection: shedding the idle,
//! write timeouts, the memory answers hold).
//!
//! Never measures, never runs beside a measuring thread's hot path, and
//! never panics on a request: a failure is a 4xx or 500 answer.

pub mod api;
pub mod auth;
pub mod conn;
pub mod data;
pub mod host;
pub mod live;
pub mod pages;
pub mod query;
pub mod reply;
pub mod server;

use std::net::SocketAddr;
use std::path::PathBuf;
use thiserror::Error;

pub use server::run;

/// What `rtscope serve` was asked to do.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The store (an SQLite file or a `postgresql://` URL), as
    /// [`crate::store::locate`] gives it.
    pub store: PathBuf,
    /// Where to listen (port 0: a free one).
    pub listen: SocketAddr,
    /// `--auth FILE`: the credentials every request must carry.
    pub auth_file: Option<PathBuf>,
    /// `--allow-host NAME`: names a request's `Host` may carry beside
    /// the loopback ones and the address listened on ([`host`]).
    pub allow_hosts: Vec<String>,
}

/// Why the server could not start (each is exit 2).
#[derive(Debug, Error)]
pub enum ServeError {
    /// A non-loopback address without credentials.
    #[error(
        "--listen {0}: anyone who can reach this host could read every run; give --auth FILE (a line `bearer TOKEN` or `basic USER:PASSWORD`), or listen on 127.0.0.1"
    )]
    OpenWithoutAuth(SocketAddr),
    /// The credentials file cannot be read or is malformed.
    #[error("--auth {}: {why}", path.display())]
    AuthFile { path: PathBuf, why: String },
    /// The address cannot be listened on.
    #[error("--listen {addr}: cannot listen there ({source}){hint}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
        hint: &'static str,
    },
    /// The runtime (its threads) could not be started.
    #[error("could not start the server's threads: {0}")]
    Runtime(std::io::Error),
    /// The store cannot be opened for reading.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// `--listen` given something that is not an address to listen on.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error(
    "'{0}' is not ADDR:PORT (e.g. 127.0.0.1:8788, [::1]:8788, 0.0.0.0:8788, or a bare port for loopback)"
)]
pub struct BadListen(pub String);

/// The default `--listen`.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8788";

/// Parse `--listen`: `ADDR:PORT`, `[V6]:PORT`, `localhost:PORT`, or a
/// bare `PORT` (loopback).
pub fn parse_listen(s: &str) -> Result<SocketAddr, BadListen> {
    crate::metrics::parse_addr(s).map_err(|_| BadListen(s.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_parse_and_a_bare_port_is_loopback() {
        assert_eq!(parse_listen("8788").unwrap().to_string(), "127.0.0.1:8788");
        assert_eq!(parse_listen("0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(
            parse_listen(DEFAULT_LISTEN).unwrap().to_string(),
            DEFAULT_LISTEN
        );
        assert!(parse_listen("0.0.0.0:1").is_ok());
        assert!(parse_listen("[::1]:1").unwrap().ip().is_loopback());
        let e = parse_listen("here:80").unwrap_err().to_string();
        assert!(e.contains("'here:80' is not ADDR:PORT"), "{e}");
    }
}
